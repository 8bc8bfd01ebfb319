"""Claims cannot be weakened quietly. Read from the scripts' code (AST), for
every claim of every page:

- no number is written inline in a claim's condition: each comes from a named
  module-level constant (``gap >= FAR_ABOVE``), and every constant the
  condition reads is formatted into the statement's words
  (``f"... at least {FAR_ABOVE:g} above"``), so the words cannot keep an old
  bound while the test moves;
- a ``claim_bound``'s bound is such a constant (the API writes it into the
  statement itself), its measured side holds no inline number either.

0 and 1 are allowed (an exact zero count, "1 − x", "equals 1": identities,
not chosen bounds), and so are indices and slices (``rates[2]``) and format
specs. The form of each condition (its source and the constants' values) is
also pinned in the golden record (record.condition_form), so changing a
constant's value, an operator or an allowed 0 or 1 fails `make test` too,
until `make golden` re-pins it and shows the old and new condition.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from pagekit.registry import page_packages
from pagekit.paths import DIAGRAMS_DIR
from pagekit.record import CONSTANT_NAME

ALLOWED_NUMBERS = (0, 1)
SCRIPTS = sorted(
    p for package in page_packages() for p in (DIAGRAMS_DIR / package).glob("*.py") if p.name != "__init__.py"
)


def module_constants(tree: ast.Module) -> set[str]:
    """UPPER_CASE names the module defines or imports at its top level."""
    names = set()
    for node in tree.body:
        targets = []
        if isinstance(node, ast.Assign):
            targets = [n for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            targets = [node.target]
        elif isinstance(node, ast.ImportFrom):
            names |= {a.asname or a.name for a in node.names}
        names |= {t.id for t in targets}
    return {n for n in names if CONSTANT_NAME.match(n)}


def inline_numbers(node: ast.AST) -> list[str]:
    """Numbers written in an expression, outside indices, slices and format
    specs: numeric literals other than 0 and 1, and strings that are numbers."""
    found = []

    def walk(n: ast.AST) -> None:
        if isinstance(n, ast.Subscript):  # rates[2], history[50:]: positions, not bounds
            walk(n.value)
            return
        if isinstance(n, ast.FormattedValue):  # f"{x:.4f}": the spec is how, not what
            walk(n.value)
            return
        if isinstance(n, ast.Constant):
            value = n.value
            if (
                isinstance(value, (int, float, complex))
                and not isinstance(value, bool)
                and value not in ALLOWED_NUMBERS
            ):
                found.append(repr(value))
            elif isinstance(value, str) and is_number(value) and number_value(value) not in ALLOWED_NUMBERS:
                found.append(repr(value))
        for child in ast.iter_child_nodes(n):
            walk(child)

    walk(node)
    return found


def number_value(text: str) -> float:
    return float(text.replace(",", "").rstrip("%").replace("\u2212", "-"))


def is_number(text: str) -> bool:
    try:
        number_value(text)
    except ValueError:
        return False
    return True


def constants_read(node: ast.AST, constants: set[str]) -> list[str]:
    """Module constants an expression reads, outside index positions
    (``v[REACH]`` names an element, not a bound)."""
    found = []

    def walk(n: ast.AST) -> None:
        if isinstance(n, ast.Subscript):
            walk(n.value)
            return
        if isinstance(n, ast.Name) and n.id in constants:
            found.append(n.id)
        for child in ast.iter_child_nodes(n):
            walk(child)

    walk(node)
    return list(dict.fromkeys(found))


def argument(call: ast.Call, index: int, keyword: str) -> ast.expr | None:
    if len(call.args) > index:
        return call.args[index]
    return next((k.value for k in call.keywords if k.arg == keyword), None)


def weak_claims(path: Path) -> list[str]:
    """Each claim of a script whose condition breaks the rules above, as
    "file:line: what is wrong"."""
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    constants = module_constants(tree)
    where = path.relative_to(DIAGRAMS_DIR.parent.parent) if path.is_relative_to(DIAGRAMS_DIR.parent.parent) else path
    problems = []
    for call in ast.walk(tree):
        if not (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr in ("claim", "claim_bound")
        ):
            continue
        at = f"{where}:{call.lineno}"
        if call.func.attr == "claim":
            statement, condition = argument(call, 0, "statement"), argument(call, 1, "holds")
            if condition is None:
                continue
            for number in inline_numbers(condition):
                problems.append(
                    f"{at}: {number} is written inline in the condition "
                    f"`{ast.unparse(condition)}`: name it as a module constant and format it into the statement"
                )
            worded = {n.id for n in ast.walk(statement) if isinstance(n, ast.Name)} if statement is not None else set()
            for name in constants_read(condition, constants):
                if name not in worded:
                    problems.append(f"{at}: the condition reads {name}, which the statement's words do not format")
        else:
            measured, bound = argument(call, 1, "measured"), argument(call, 3, "bound")
            if bound is not None and not (isinstance(bound, ast.Name) and bound.id in constants):
                problems.append(f"{at}: claim_bound's bound `{ast.unparse(bound)}` is not a named module constant")
            for number in inline_numbers(measured) if measured is not None else []:
                problems.append(
                    f"{at}: {number} is written inline in claim_bound's measured side "
                    f"`{ast.unparse(measured)}`: name it as a module constant"
                )
    return problems


@pytest.mark.parametrize("path", SCRIPTS, ids=[f"{p.parent.name}/{p.stem}" for p in SCRIPTS])
def test_claim_conditions_use_named_constants_their_words_state(path):
    problems = weak_claims(path)
    assert not problems, "claims whose condition could be weakened while their words stay:\n" + "\n".join(problems)


def test_every_page_has_claims_to_read():
    """The reader finds the claims (a renamed API would make the test vacuous)."""
    counted = sum(
        1
        for p in SCRIPTS
        for n in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("claim", "claim_bound")
    )
    assert counted > 100 and {p.parent.name for p in SCRIPTS} == set(page_packages())


def test_the_reader_finds_each_kind_of_weakening(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text(
        "FAR_ABOVE = 0.3\nCOUNT = 5\n\n"
        "def compute(section, gap, v):\n"
        "    section.claim(f'gap at least {FAR_ABOVE:g}', gap >= FAR_ABOVE)\n"  # fine
        "    section.claim('gap at least 0.3', gap >= 0.3)\n"  # inline literal
        "    section.claim('gap far above', gap >= FAR_ABOVE)\n"  # constant not in the words
        "    section.claim(f'{COUNT} exact', v[2] == 0 and f'{gap:.4f}' != '0.3000')\n"  # numeric string
        "    section.claim_bound('gap', gap, '>=', 0.3)\n"  # literal bound
        "    section.claim_bound('gap', 2 * gap, '>=', FAR_ABOVE)\n",  # literal in the measured side
        encoding="utf-8",
    )
    problems = [p.removeprefix(f"{probe}:") for p in weak_claims(probe)]
    assert problems == [
        "6: 0.3 is written inline in the condition `gap >= 0.3`: name it as a module constant and format it into "
        "the statement",
        "7: the condition reads FAR_ABOVE, which the statement's words do not format",
        "8: '0.3000' is written inline in the condition `v[2] == 0 and f'{gap:.4f}' != '0.3000'`: name it as a "
        "module constant and format it into the statement",
        "9: claim_bound's bound `0.3` is not a named module constant",
        "10: 2 is written inline in claim_bound's measured side `2 * gap`: name it as a module constant",
    ]
