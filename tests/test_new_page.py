"""make new-page / make remove-page (docs/diagrams/new_page.py), in a scratch
repository: what it writes, that it refuses to overwrite, and that removing
never touches a committed page. (The scaffolded page passing `make check` and
`make test` in the real tree is shown by running them; see CONTRIBUTING.md.)"""

from __future__ import annotations

import ast
import subprocess

import pytest

from pagekit import new_page


@pytest.fixture
def scratch_repo(tmp_path, monkeypatch):
    diagrams = tmp_path / "docs" / "diagrams"
    (tmp_path / "figures").mkdir(parents=True)
    (tmp_path / "tests" / "golden").mkdir(parents=True)
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
    calls = [node.func.attr for node in ast.walk(section)
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)]
    assert calls.count("quote") == 1 and calls.count("claim") == 1 and calls.count("save_figure") == 1
    prose = (scratch_repo / "docs" / "my-page.md").read_text(encoding="utf-8")
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
