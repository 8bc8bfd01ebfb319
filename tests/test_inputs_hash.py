"""Staleness by meaning (pagekit/inputs.py): a section's inputs hash follows
the syntax tree of the code that decides its numbers, so a comment, a
docstring or a formatter's pass reruns nothing, while a changed constant
reruns exactly the sections that use it."""

from __future__ import annotations

import re
import shutil

import pytest

from pagekit import inputs
from pagekit.paths import DIAGRAMS_DIR, PACKAGE_DIR, REPO_ROOT
from pagekit.registry import page_packages, section_scripts


def test_layout_and_comments_do_not_change_a_modules_content(tmp_path):
    module = tmp_path / "m.py"
    module.write_text('"""Doc."""\nRATE = 0.1\n\n\ndef f(x):\n    """Doc."""\n    return x * RATE\n')
    before = inputs.code_content(module)
    module.write_text(
        '"""Another doc."""\n# why the rate\nRATE = 0.1  # a comment\n\n\ndef f(\n    x,\n):\n'
        '    """Other words."""\n    return (x\n            * RATE)\n'
    )
    assert inputs.code_content(module) == before
    module.write_text('"""Doc."""\nRATE = 0.2\n\n\ndef f(x):\n    """Doc."""\n    return x * RATE\n')
    assert inputs.code_content(module) != before


def test_page_registry_edits_leave_sections_current_but_code_does_not(tmp_path):
    """The registry in a page's __init__ (which script serves which section,
    the checker's patterns) decides no number; any other code there does."""
    init = tmp_path / "__init__.py"
    init.write_text('"""Doc."""\nPAGE = "p"\nSECTION_SCRIPTS = {1: ("a",)}\n', encoding="utf-8")
    before = inputs.code_content(init, leave_out=inputs.REGISTRY_NAMES)
    init.write_text(
        '"""Other doc."""\n# a comment\nPAGE = "p"\nSECTION_SCRIPTS = {1: ("a",), 2: ("b",)}\nSTRUCTURAL = (r"x",)\n',
        encoding="utf-8",
    )
    assert inputs.code_content(init, leave_out=inputs.REGISTRY_NAMES) == before
    init.write_text('"""Doc."""\nPAGE = "p"\nSECTION_SCRIPTS = {1: ("a",)}\nSCALE = 2.0\n', encoding="utf-8")
    assert inputs.code_content(init, leave_out=inputs.REGISTRY_NAMES) != before


def test_only_the_modules_that_decide_results_are_every_sections_inputs():
    shared = {
        p.name
        for p in inputs.section_inputs("normalisation_and_stability", "norm_worked_vector")
        if p.parent == PACKAGE_DIR
    }
    assert shared == set(inputs.RESULT_MODULES)
    assert not shared & {"run_sections.py", "check_page.py", "wording.py", "inputs.py", "paths.py", "atomic.py"}


@pytest.fixture()
def tree_copy(tmp_path, monkeypatch):
    """A copy of docs/diagrams and its data, with inputs pointed at it."""
    copy = tmp_path / "docs" / "diagrams"
    shutil.copytree(DIAGRAMS_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO_ROOT / "requirements.lock", tmp_path / "requirements.lock")
    shutil.copytree(
        REPO_ROOT / "figures",
        tmp_path / "figures",  # data a section declares (across_seeds)
        ignore=shutil.ignore_patterns("*.svg", "*.ipynb"),
    )
    monkeypatch.setattr(inputs, "DIAGRAMS_DIR", copy)
    monkeypatch.setattr(inputs, "PACKAGE_DIR", copy / "pagekit")
    monkeypatch.setattr(inputs, "REPO_ROOT", tmp_path)
    monkeypatch.setattr(inputs, "LOCK", tmp_path / "requirements.lock")
    return copy


def every_hash() -> dict[tuple[str, str], str]:
    return {
        (package, name): inputs.inputs_hash(package, name)
        for package in page_packages()
        for name in section_scripts(package)
    }


def test_a_comment_in_every_module_reruns_no_section(tree_copy):
    before = every_hash()
    for module in tree_copy.rglob("*.py"):
        module.write_text(module.read_text(encoding="utf-8") + "\n# a comment that decides nothing\n", encoding="utf-8")
    assert every_hash() == before


def test_a_changed_constant_reruns_exactly_the_sections_that_import_it(tree_copy):
    before = every_hash()
    mlp = tree_copy / "normalisation_layers" / "mlp.py"
    source = mlp.read_text(encoding="utf-8")
    seeds = "DATA_SEED, BATCH_SEED, MODEL_SEED, SHIFT_SEED = 0, 0, 0, 1\n"
    assert source.count(seeds) == 1
    mlp.write_text(source.replace(seeds, seeds.replace("0, 0, 0, 1", "0, 0, 0, 2")), encoding="utf-8")
    after = every_hash()
    changed = {key for key in before if before[key] != after[key]}
    users = {(p, n) for p, n in before if p == "normalisation_layers" and mlp in inputs.section_inputs(p, n)}
    assert changed == users and ("normalisation_layers", "batch_norm_learning_rate") in changed
    assert not any(p == "normalisation_and_stability" for p, _ in changed)


def test_a_changed_result_module_reruns_every_section(tree_copy):
    before = every_hash()
    numformat = tree_copy / "pagekit" / "numformat.py"
    numformat.write_text(numformat.read_text(encoding="utf-8") + "\nEXTRA = 1\n", encoding="utf-8")
    after = every_hash()
    assert all(before[key] != after[key] for key in before)


def test_rewording_a_backed_phrase_reruns_no_section(tree_copy):
    """A claim's phrases live in the page (`% backs` lines), not its script:
    rewording the prose and its backs line changes no section's inputs."""
    before = every_hash()
    docs = tree_copy.parent
    for page in REPO_ROOT.glob("docs/*.md"):
        text = page.read_text(encoding="utf-8")
        backs = re.search(r'^% backs \w+:[\w-]+ "([^"]+)"', text, re.M)
        if backs:
            text = text.replace(backs.group(1), backs.group(1).upper())
        (docs / page.name).write_text(text, encoding="utf-8")
    assert any("% backs" in p.read_text(encoding="utf-8") for p in docs.glob("*.md"))
    assert every_hash() == before


def test_the_digest_cache_follows_content_and_survives_a_broken_file(tmp_path, monkeypatch):
    """content_digest (kept in build/ between runs) is code_content's sha256:
    an edit changes it at once, a comment does not, and a corrupt or foreign
    cache file is ignored and rewritten."""
    import hashlib

    cache = tmp_path / "code-digests.json"
    monkeypatch.setattr(inputs, "DIGEST_CACHE", cache)
    monkeypatch.setattr(inputs, "_CACHE", {})
    module = tmp_path / "module.py"
    module.write_text("RATE = 0.1\n", encoding="utf-8")
    first = inputs.content_digest(module)
    assert first == hashlib.sha256(inputs.code_content(module)).digest()
    module.write_text("RATE = 0.3\n", encoding="utf-8")  # same size, same second: still seen
    assert inputs.content_digest(module) != first
    module.write_text("RATE = 0.1  # a comment\n", encoding="utf-8")
    assert inputs.content_digest(module) == first
    assert cache.is_file()
    for broken in ("not json", '{"key": "another version", "entries": {}}'):
        cache.write_text(broken, encoding="utf-8")
        monkeypatch.setattr(inputs, "_CACHE", {})
        assert inputs.content_digest(module) == first
