"""A claim's words come from the same constants as its test: a threshold
cannot be weakened while the statement the page relies on stays the same.
Read from the scripts' code: a module constant (UPPER_CASE) used in a
claim's condition must also appear in its statement (an f-string), or the
claim must be made with claim_bound."""

from __future__ import annotations

import ast

import pytest

from conftest import SECTION_IDS, SECTIONS
from pagekit.run_sections import inputs_of


def unworded_thresholds(path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    constants = {
        t.id
        for node in tree.body
        if isinstance(node, ast.Assign)
        for t in node.targets
        if isinstance(t, ast.Name) and t.id.isupper()
    }
    found = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "claim"
            and len(node.args) >= 2
        ):
            statement, condition = node.args[0], node.args[1]
            used = {n.id for n in ast.walk(condition) if isinstance(n, ast.Name) and n.id in constants}
            worded = {n.id for n in ast.walk(statement) if isinstance(n, ast.Name)}
            found += [f"{path.name}:{node.lineno}: {name}" for name in sorted(used - worded)]
    return found


@pytest.mark.parametrize("script", SECTIONS, ids=SECTION_IDS)
def test_claim_thresholds_are_in_their_words(script):
    modules = [p for p in inputs_of(script) if p.suffix == ".py" and p.parent.name == script.package]
    found = [f for p in modules for f in unworded_thresholds(p)]
    assert not found, "claims test a constant their statement does not name:\n" + "\n".join(found)


def test_the_reader_finds_a_bare_threshold(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text(
        "LIMIT = 0.5\n\ndef compute(section):\n    section.claim('gap above half', gap > LIMIT)\n"
        "    section.claim(f'gap above {LIMIT}', gap > LIMIT)\n"
    )
    assert unworded_thresholds(probe) == ["probe.py:4: LIMIT"]
