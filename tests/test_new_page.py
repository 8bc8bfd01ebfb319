"""make new-page / make remove-page (docs/diagrams/new_page.py), in a scratch
repository: what it writes, that it refuses to overwrite, that removing
never touches a committed page, and that two scaffolded pages pass the check
in a copy of the repository."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO_ROOT
from pagekit import new_page


@pytest.fixture
def scratch_repo(tmp_path, monkeypatch):
    diagrams = tmp_path / "docs" / "diagrams"
    (tmp_path / "figures").mkdir(parents=True)
    diagrams.mkdir(parents=True)
    monkeypatch.setattr(new_page, "REPO_ROOT", tmp_path)
    monkeypatch.setattr(new_page, "DIAGRAMS_DIR", diagrams)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    return tmp_path


def test_create_writes_a_registered_package_a_section_and_its_prose(scratch_repo):
    assert new_page.main(["create", "my-page", "--title", "My page"]) == 0
    package = scratch_repo / "docs" / "diagrams" / "my_page"
    init = (package / "__init__.py").read_text(encoding="utf-8")
    assert 'PAGE = "my-page"' in init and '1: ("odd_numbers",)' in init
    section = ast.parse((package / "odd_numbers.py").read_text(encoding="utf-8"))
    calls = [
        node.func.attr
        for node in ast.walk(section)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
    ]
    assert calls.count("quote") == 1 and calls.count("claim") == 2 and calls.count("save_figure") == 1
    prose = (scratch_repo / "docs" / "my-page.md").read_text(encoding="utf-8")
    # The figure says what a keyed claim backs, in its caption and alt text (issue 44, kind 5).
    assert '% figure says "on the curve of the squares"' in prose
    assert '% backs odd_numbers:on-squares "on the curve of the squares"' in prose
    assert prose.startswith("# My page\n") and "## 1. " in prose and "(#1-a-first-result)" in prose
    assert "../figures/my-page/odd_numbers_running_sum.svg" in prose and "144" in prose
    assert new_page.main(["create", "my-page"]) == 2, "it overwrote an existing page"


def test_remove_deletes_an_uncommitted_page_and_refuses_a_committed_one(scratch_repo):
    assert new_page.main(["create", "my-page"]) == 0
    (scratch_repo / "figures" / "my-page").mkdir()
    assert new_page.main(["remove", "my-page"]) == 0
    assert not any(p.exists() for p in new_page.page_paths("my-page"))
    assert new_page.main(["create", "kept-page"]) == 0
    subprocess.run(["git", "-C", str(scratch_repo), "add", "docs"], check=True)
    assert new_page.main(["remove", "kept-page"]) == 2
    assert (scratch_repo / "docs" / "kept-page.md").exists()


def test_bad_names_are_refused(scratch_repo):
    for name in ("My_Page", "9page", "page-", "a--b"):
        assert new_page.main(["create", name]) == 2


def scaffold_copy(tmp_path: Path) -> Path:
    """The repository's pages, machinery and Makefile in tmp, on the shared .venv
    (whose make inputs are dated 1970 here, so the copy's make never reinstalls it)."""
    copy = tmp_path / "repo"
    copy.mkdir()
    for folder in ("docs", "figures"):
        shutil.copytree(REPO_ROOT / folder, copy / folder, ignore=shutil.ignore_patterns("__pycache__", "*.tmp"))
    for name in ("Makefile", "pyproject.toml", "requirements.txt", "requirements.lock"):
        shutil.copy2(REPO_ROOT / name, copy / name)
        os.utime(copy / name, (0, 0))
    (copy / ".venv").symlink_to(REPO_ROOT / ".venv")
    if (REPO_ROOT / "build" / "kernel-fingerprint").is_dir():  # this machine's answer: no second probe
        shutil.copytree(REPO_ROOT / "build" / "kernel-fingerprint", copy / "build" / "kernel-fingerprint")
    subprocess.run(["git", "init", "-q", str(copy)], check=True)
    subprocess.run(["git", "-C", str(copy), "add", "-A"], check=True)
    subprocess.run(
        [
            "git",
            "-C",
            str(copy),
            "-c",
            "user.name=test",
            "-c",
            "user.email=test@example.org",
            "commit",
            "-q",
            "-m",
            "the pages as they are",
        ],
        check=True,
    )
    return copy


def make(copy: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["make", "-s", *args],
        cwd=copy,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(copy / "docs" / "diagrams")},
    )


@pytest.mark.slow
def test_two_scaffolded_pages_pass_the_check_and_leave_no_trace(tmp_path):
    """`make new-page` ends with the page's check passing, for two pages side by
    side (both first sections are named odd_numbers), and `make remove-page`
    leaves the tree as it was."""
    copy = scaffold_copy(tmp_path)
    for slug in ("tryout", "tryout-two"):
        done = make(copy, "new-page", f"PAGE={slug}", f"TITLE=Try out {slug}")
        assert done.returncode == 0, done.stdout + done.stderr
        assert (copy / "figures" / slug / f"{slug}.ipynb").exists()
        package = copy / "docs" / "diagrams" / new_page.package_name(slug)
        laid_out = subprocess.run(
            [str(Path(sys.executable).with_name("ruff")), "format", "--no-cache", "--check", str(package)],
            capture_output=True,
            text=True,
        )
        assert laid_out.returncode == 0, laid_out.stdout  # make lint passes on the new page's code
    for slug in ("tryout", "tryout-two"):
        done = make(copy, "check", f"PAGE={slug}")
        assert done.returncode == 0, done.stdout + done.stderr
    for slug in ("tryout", "tryout-two"):
        assert make(copy, "remove-page", f"PAGE={slug}").returncode == 0
    status = subprocess.run(
        ["git", "-C", str(copy), "status", "--porcelain", "--untracked-files=all", "--", "docs", "figures"],
        capture_output=True,
        text=True,
    ).stdout
    assert status == "", status
