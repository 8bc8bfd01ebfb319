"""The golden record: what `make golden` pins and the tests compare against.

Per section, tests/golden/<page>/<section>.json holds
- "quotes": every quote but the measured ones (timings), raw value, text and
  tolerances;
- "claims": each claim's statement, result, scope and backed phrases, and
  the form of its condition (its source text and the module constants it
  reads, with their values: see record.condition_form), so a bound or
  an operator cannot change while the words stay;
- "agreement_decades": per closed-form/loop agreement, the decade of its
  largest gap, so a cross-check quietly moved to a coarser dtype is caught;
- "figures": the sha256 of each committed SVG, so a figure-only change is
  caught even after `make figures` rewrote the committed file;
- "reduced" (heavy sections only): the same for the reduced configuration
  the tests run.
The top level is the page's own full run, from the committed numbers file,
for heavy sections too; tests/test_committed_records.py compares the two.
Per page, figures/<page>/golden/page.json pins which quote each prose number is,
in order (see check_page.check_binding), and lists every entry of the wording
allowlist for the page (check_page.check_pinned_allowlist), so a new entry is
a reviewed change that `make golden` shows.
"""

from __future__ import annotations

import ast
import difflib
import hashlib
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path

DECADE_SLACK = 3  # decades an agreement gap may move (last-bit noise) before it counts


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def agreement_decades(claims: list[dict]) -> dict[str, int]:
    decades = {}
    for c in claims:
        detail = c.get("detail", "")
        if detail.startswith("largest gap "):
            gap = float(detail.removeprefix("largest gap "))
            decades[c["statement"]] = math.floor(math.log10(max(gap, 1e-18)))
    return decades


def pinned_claim(claim: dict) -> dict:
    """What the record keeps of one claim (defaults for a record made before
    a key existed, so the difference shows as a change to re-pin)."""
    return {
        "statement": claim["statement"],
        "holds": claim["holds"],
        "every_seed": claim.get("every_seed", True),
        "key": claim.get("key"),
        "condition": claim.get("condition"),
        "constants": claim.get("constants", {}),
        **({"sweep": claim["sweep"]} if claim.get("sweep") else {}),
    }


def pinned_part(record: dict) -> dict:
    """What the golden record keeps of one run's numbers record."""
    return {
        "quotes": {
            n: {k: q[k] for k in ("value", "text", "rel_tol", "abs_tol")}
            for n, q in record["quotes"].items()
            if not q.get("measured")
        },
        "claims": [pinned_claim(c) for c in record["claims"]],
        "agreement_decades": agreement_decades(record["claims"]),
        "figure_labels": record.get("figure_labels", {}),
    }


def condition_text(claim: dict) -> str:
    """A claim's condition with the constants it reads, for a message."""
    constants = ", ".join(f"{k} = {v!r}" for k, v in claim.get("constants", {}).items())
    return f"{claim.get('condition')!r}" + (f" with {constants}" if constants else "")


def claim_differences(old: list[dict], new: list[dict]) -> list[str]:
    """Per claim, matched by statement: what changed, old and new."""
    out = []
    old_by, new_by = {c["statement"]: c for c in old}, {c["statement"]: c for c in new}
    for c in new:
        was = old_by.get(c["statement"])
        if was is None:
            out.append(
                f"claim now: {c['statement']!r} (holds {c['holds']}, every seed {c['every_seed']}, "
                f"condition {condition_text(c)})"
            )
            continue
        for key in ("holds", "every_seed"):
            if was.get(key, True) != c[key]:
                out.append(f"claim {c['statement']!r}: {key} {was.get(key, True)} -> {c[key]}")
        if was.get("key") != c["key"]:
            out.append(f"claim {c['statement']!r}: key {was.get('key')!r} -> {c['key']!r}")
        if (was.get("condition"), was.get("constants", {})) != (c["condition"], c["constants"]):
            out.append(f"claim {c['statement']!r}: condition {condition_text(was)} -> {condition_text(c)}")
        if was.get("sweep") != c.get("sweep"):
            out.append(f"claim {c['statement']!r}: sweep points {was.get('sweep')} -> {c.get('sweep')}")
    for c in old:
        if c["statement"] not in new_by:
            out.append(f"claim was: {c['statement']!r} (condition {condition_text(c)})")
    if not out and [pinned_claim(c) for c in old] != [pinned_claim(c) for c in new]:
        out.append("claims reordered, or a repeated statement changed")
    return out


def differences(old: dict, new: dict) -> list[str]:
    """Changes that matter between two pinned parts, each with its old and
    new value: names, texts, values beyond tolerance, claims and their
    conditions, agreement decades. Last-bit noise is not one."""
    out = []
    old_q, new_q = old.get("quotes", {}), new.get("quotes", {})
    for name in [n for n in new_q if n not in old_q]:
        out.append(f"quote added: {name} = {new_q[name]['text']!r}")
    for name in [n for n in old_q if n not in new_q]:
        out.append(f"quote removed: {name} (was {old_q[name]['text']!r})")
    if [n for n in old_q if n in new_q] != [n for n in new_q if n in old_q]:
        out.append("quote order changed")
    for name in [n for n in new_q if n in old_q]:
        a, b = old_q[name], new_q[name]
        if a["text"] != b["text"]:
            out.append(f"quote {name}: text {a['text']!r} -> {b['text']!r}")
            continue
        if (a["rel_tol"], a["abs_tol"]) != (b["rel_tol"], b["abs_tol"]):
            out.append(
                f"quote {name}: tolerance rel {a['rel_tol']:g}, abs {a['abs_tol']:g} -> "
                f"rel {b['rel_tol']:g}, abs {b['abs_tol']:g}"
            )
        va = a["value"] if isinstance(a["value"], list) else [a["value"]]
        vb = b["value"] if isinstance(b["value"], list) else [b["value"]]
        if len(va) != len(vb) or not all(
            math.isclose(x, y, rel_tol=b["rel_tol"], abs_tol=b["abs_tol"]) for x, y in zip(va, vb, strict=True)
        ):
            out.append(
                f"quote {name}: value {a['value']!r} -> {b['value']!r} (beyond rel_tol {b['rel_tol']:g}, "
                f"abs_tol {b['abs_tol']:g}; text {b['text']!r})"
            )
    out += claim_differences(old.get("claims", []), new.get("claims", []))
    for statement, decade in new.get("agreement_decades", {}).items():
        was = old.get("agreement_decades", {}).get(statement)
        if was is not None and abs(was - decade) > DECADE_SLACK:
            out.append(f"agreement {statement!r}: gap 1e{was} -> 1e{decade}")
    return out


def binding_differences(old: dict, new: dict) -> list[str]:
    """The prose numbers whose bound quotes changed, were added or went
    (page.json), each as "section S: 'token' is <quotes>"."""

    def row(entry: dict) -> str:
        return f"section {entry['section']}: {entry['token']!r} is {', '.join(entry['quotes']) or 'no quote'}"

    was, now = [row(e) for e in old.get("numbers", [])], [row(e) for e in new.get("numbers", [])]
    out = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=was, b=now, autojunk=False).get_opcodes():
        if tag != "equal":
            out += [f"prose number was: {r}" for r in was[i1:i2]] + [f"prose number now: {r}" for r in now[j1:j2]]
    # Every allowlist entry of the page is pinned with it, so a new one shows here.
    old_entries, new_entries = old.get("allowlist", []), new.get("allowlist", [])
    out += [f"allowlist entry added: {allowlist_row(e)}" for e in new_entries if e not in old_entries]
    out += [f"allowlist entry removed: {allowlist_row(e)}" for e in old_entries if e not in new_entries]
    # The bibliography's passages the page's citations rest on, by hash: a trimmed one shows here.
    old_passages, new_passages = old.get("passages", {}), new.get("passages", {})
    out += [
        f"bibliography passages and statements of {slug}: {len(old_passages.get(slug, []))} pinned -> "
        f"{len(digests)}, changed"
        for slug, digests in new_passages.items()
        if old_passages.get(slug) != digests
    ]
    out += [f"bibliography entry no longer cited: {slug}" for slug in old_passages if slug not in new_passages]
    return out


def allowlist_row(entry: dict) -> str:
    """One allowlist entry of page.json, as `make golden` shows it."""
    what = f"phrase {entry['phrase']!r}" if "phrase" in entry else f"unit {entry['unit']!r} of {entry['quote']}"
    return f"{what} ({entry['reason']})"


# --- claim bounds: moved, loosened, or empty --------------------------------
#
# A claim's bound is a number its condition compares a measured quantity with:
# a module constant the condition reads (the record keeps its value) or a
# number written in the condition. `make golden` shows every bound that moved
# between the pinned claim and the new one, and refuses one that moved so the
# claim is easier to hold (away from its measured value) unless told so
# (write_golden --accept-looser-bounds REASON); a test refuses a claim whose
# condition holds for any value of what it measures (empty_bound).

# Calls whose truth (or value) rises with their one argument's.
TRUTH_CALLS = frozenset({"bool", "all", "any", "np.all", "np.any", "numpy.all", "numpy.any"})
RISING_CALLS = frozenset(
    {
        "float",
        "int",
        "np.float64",
        "np.sqrt",
        "math.sqrt",
        "np.log",
        "math.log",
        "np.log10",
        "math.log10",
        "np.exp",
        "math.exp",
    }
)
# Calls whose value is never negative: a quantity the record shows this way
# cannot go below 0, so a bound below 0 (or `>= 0`) excludes nothing.
NON_NEGATIVE_CALLS = frozenset(
    {"abs", "np.abs", "numpy.abs", "np.fabs", "len", "np.linalg.norm", "math.sqrt", "np.sqrt", "math.hypot"}
)
INFINITIES = {"math.inf": math.inf, "np.inf": math.inf, "numpy.inf": math.inf, "inf": math.inf}
RISING_OPS = {ast.Lt: 1, ast.LtE: 1, ast.Gt: -1, ast.GtE: -1}  # the right side's effect on the comparison
COMPARE = {
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
}


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _callee(node: ast.AST) -> str:
    return ast.unparse(node.func) if isinstance(node, ast.Call) else ""


def _parse(condition: str | None) -> ast.expr | None:
    if not condition:
        return None
    try:
        return ast.parse(condition, mode="eval").body
    except SyntaxError:
        return None


def _contains(node: ast.AST, target: ast.AST) -> bool:
    return any(n is target for n in ast.walk(node))


def evaluate(node: ast.AST, constants: dict):
    """The value of an expression of numbers, the claim's constants and
    infinities alone (arithmetic, abs, float('inf')); None when it reads
    anything else (a measured quantity)."""
    if isinstance(node, ast.Constant) and _is_number(node.value):
        return node.value
    if isinstance(node, (ast.Name, ast.Attribute)):
        name = ast.unparse(node)
        if name in constants and (_is_number(constants[name]) or isinstance(constants[name], bool)):
            return constants[name]
        return INFINITIES.get(name)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd, ast.Not)):
        value = evaluate(node.operand, constants)
        if value is None:
            return None
        return -value if isinstance(node.op, ast.USub) else (not value if isinstance(node.op, ast.Not) else value)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)):
        a, b = evaluate(node.left, constants), evaluate(node.right, constants)
        if a is None or b is None:
            return None
        try:
            if isinstance(node.op, ast.Div):
                return a / b
            if isinstance(node.op, ast.Pow):
                return float(a) ** b
            return {ast.Add: a + b, ast.Sub: a - b, ast.Mult: a * b}[type(node.op)]
        except (ZeroDivisionError, OverflowError, ValueError):
            return None
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        if _callee(node) == "float" and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            try:
                return float(node.args[0].value)
            except ValueError:
                return None
        if _callee(node) in ("abs", "float"):
            value = evaluate(node.args[0], constants)
            return None if value is None else (abs(value) if _callee(node) == "abs" else float(value))
    if isinstance(node, ast.Compare):
        values = [evaluate(n, constants) for n in (node.left, *node.comparators)]
        if None in values or any(type(op) not in COMPARE for op in node.ops):
            return None
        return all(COMPARE[type(op)](a, b) for op, a, b in zip(node.ops, values, values[1:], strict=False))
    return None


def _sign(node: ast.AST, constants: dict) -> int:
    """The sign of a factor: its value's where the constants decide it,
    else taken as positive (the factors of the pages' bounds are sizes: a
    loss, a norm, a count)."""
    value = evaluate(node, constants)
    if value is None:
        return 1
    return (value > 0) - (value < 0)


def _rises(node: ast.AST, target: ast.AST, constants: dict) -> int | None:
    """+1 when the expression's value rises with ``target``'s, -1 when it
    falls, None when that cannot be read from its form."""
    if node is target:
        return 1
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _rises(node.operand, target, constants)
        return None if inner is None else (-inner if isinstance(node.op, ast.USub) else inner)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
        left = _contains(node.left, target)
        if left and _contains(node.right, target):
            return None
        child, other = (node.left, node.right) if left else (node.right, node.left)
        inner = _rises(child, target, constants)
        if inner is None:
            return None
        if isinstance(node.op, ast.Add):
            return inner
        if isinstance(node.op, ast.Sub):
            return inner if left else -inner
        sign = _sign(other, constants)
        if isinstance(node.op, ast.Mult):
            return inner * sign if sign else None
        return (inner * sign if left else -inner * sign) if sign else None
    if isinstance(node, ast.Call) and _callee(node) in RISING_CALLS and len(node.args) == 1:
        return _rises(node.args[0], target, constants)
    return None


def _combine(signs: list[int | None]) -> int | None:
    return signs[0] if signs and None not in signs and len(set(signs)) == 1 else None


def truth_rises(node: ast.AST, target: ast.AST, constants: dict) -> int | None:
    """+1 when raising ``target`` (a number or constant in the condition)
    makes the condition easier to hold, -1 when harder, None when its form
    does not say (an equality, an argument of a function of the script's)."""
    if isinstance(node, (ast.BoolOp, ast.BinOp)) and (
        isinstance(node, ast.BoolOp) or isinstance(node.op, (ast.BitAnd, ast.BitOr))
    ):
        children = node.values if isinstance(node, ast.BoolOp) else [node.left, node.right]
        return _combine([truth_rises(c, target, constants) for c in children if _contains(c, target)])
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.Invert)):
        inner = truth_rises(node.operand, target, constants)
        return None if inner is None else -inner
    if isinstance(node, ast.Call) and _callee(node) in TRUTH_CALLS and len(node.args) == 1:
        return truth_rises(node.args[0], target, constants)
    if isinstance(node, ast.GeneratorExp):
        return truth_rises(node.elt, target, constants) if _contains(node.elt, target) else None
    if isinstance(node, ast.Compare):
        operands = [node.left, *node.comparators]
        signs = []
        for i, operand in enumerate(operands):
            if not _contains(operand, target):
                continue
            value = _rises(operand, target, constants)
            sides = ([(node.ops[i - 1], True)] if i > 0 else []) + ([(node.ops[i], False)] if i < len(node.ops) else [])
            for op, on_right in sides:
                effect = RISING_OPS.get(type(op))
                signs.append(None if value is None or effect is None else value * (effect if on_right else -effect))
        return _combine(signs)
    return None


def _numbers(tree: ast.AST) -> list[ast.Constant]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Constant) and _is_number(n.value)]


def _skeleton(tree: ast.AST, ops: bool = True) -> str:
    """A condition's form with its numbers (and, ops=False, its comparison
    operators) left out: two conditions of one form differ only there."""
    copy = ast.parse(ast.unparse(tree), mode="eval")
    for node in ast.walk(copy):
        if isinstance(node, ast.Constant) and _is_number(node.value):
            node.value = 0
        if not ops and isinstance(node, ast.Compare):
            node.ops = [ast.Eq() for _ in node.ops]
    return ast.unparse(copy)


@dataclass(frozen=True)
class BoundMove:
    """One bound of a claim that moved between the pinned record and a new one."""

    statement: str
    what: str  # "RMS_MATCH", "the number 0.5 in the condition", "an operator"
    old: object
    new: object
    looser: bool | None  # True: easier to hold; None: its form does not say
    detail: str = ""  # what the new run measured

    def line(self) -> str:
        verdict = {
            True: "LOOSER: the claim is now easier to hold",
            False: "tighter",
            None: "direction not decided by its form: review it",
        }[self.looser]
        measured = f" ({self.detail})" if self.detail else ""
        return f"claim bound moved: {self.statement!r}: {self.what} {self.old!r} -> {self.new!r}, {verdict}{measured}"


def matched_claims(old: list[dict], new: list[dict]) -> list[tuple[dict, dict]]:
    """Each new claim with its pinned one: the same statement, or else (a
    bound written into the words moves them) the first unmatched one of the
    same key and condition form, numbers and operators aside."""
    pairs, free = [], list(old)
    rest = []
    for c in new:
        was = next((o for o in free if o["statement"] == c["statement"]), None)
        if was is None:
            rest.append(c)
        else:
            free.remove(was)
            pairs.append((was, c))
    for c in rest:
        tree = _parse(c.get("condition"))
        if tree is None:
            continue
        form = (c.get("key"), _skeleton(tree, ops=False), sorted(c.get("constants", {})))
        for o in free:
            o_tree = _parse(o.get("condition"))
            if (
                o_tree is not None
                and (o.get("key"), _skeleton(o_tree, ops=False), sorted(o.get("constants", {}))) == form
            ):
                free.remove(o)
                pairs.append((o, c))
                break
    return pairs


def bound_moves(old: list[dict], new: list[dict]) -> list[BoundMove]:
    """Every bound of a claim that moved from the pinned claims ``old`` to
    ``new``: a numeric constant's value, a number in the condition, a
    comparison made strict or not; each with whether the move makes the claim
    easier to hold (truth_rises)."""
    moves = []
    for was, now in matched_claims(old, new):
        a, b = _parse(was.get("condition")), _parse(now.get("condition"))
        if a is None or b is None or _skeleton(a, ops=False) != _skeleton(b, ops=False):
            continue
        constants, statement, detail = now.get("constants", {}), now["statement"], now.get("detail", "")
        for name, value in constants.items():
            before = was.get("constants", {}).get(name)
            if not (_is_number(value) and _is_number(before)) or value == before:
                continue
            rises = _combine(
                [truth_rises(b, n, constants) for n in ast.walk(b) if isinstance(n, ast.Name) and n.id == name]
            )
            looser = None if rises is None else (rises > 0) == (value > before)
            moves.append(BoundMove(statement, name, before, value, looser, detail))
        for x, y in zip(_numbers(a), _numbers(b), strict=True):
            if x.value != y.value:
                rises = truth_rises(b, y, constants)
                looser = None if rises is None else (rises > 0) == (y.value > x.value)
                moves.append(BoundMove(statement, "the number in the condition", x.value, y.value, looser, detail))
        compares = zip(
            [n for n in ast.walk(a) if isinstance(n, ast.Compare)],
            [n for n in ast.walk(b) if isinstance(n, ast.Compare)],
            strict=True,
        )
        for x, y in compares:
            for op_a, op_b in zip(x.ops, y.ops, strict=True):
                if type(op_a) is type(op_b):
                    continue
                strictness = {(ast.Lt, ast.LtE), (ast.Gt, ast.GtE)}
                pair = (type(op_a), type(op_b))
                looser = True if pair in strictness else False if pair[::-1] in strictness else None
                if looser is not None and _negated(b, y):
                    looser = not looser
                moves.append(
                    BoundMove(statement, "an operator", OPERATOR[type(op_a)], OPERATOR[type(op_b)], looser, detail)
                )
    return moves


OPERATOR = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}


def _negated(root: ast.AST, node: ast.AST) -> bool:
    """Whether ``node`` stands under an odd number of `not`s in ``root``."""
    flips = 0
    for n in ast.walk(root):
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, (ast.Not, ast.Invert)) and _contains(n.operand, node):
            flips += 1
    return flips % 2 == 1


# --- empty bounds ---------------------------------------------------------------


def _value_range(node: ast.AST, claim: dict) -> tuple[float, float, str]:
    """(lowest, highest, why) a measured side can take, as its form or the
    claim's words say: an absolute value, a length, a norm or a square root is
    never below 0; anything else may be any number (but see
    _claim_bound_subject_range)."""
    if isinstance(node, ast.Call) and _callee(node) in NON_NEGATIVE_CALLS:
        return 0.0, math.inf, f"{_callee(node)}(...) is never below 0"
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        exponent = evaluate(node.right, claim.get("constants", {}))
        if _is_number(exponent) and exponent % 2 == 0:
            return 0.0, math.inf, "an even power is never below 0"
    return -math.inf, math.inf, ""


def _claim_bound_subject_range(claim: dict) -> tuple[float, float, str] | None:
    """A claim_bound whose words write its subject |...|: the record says
    the measured quantity is never below 0."""
    statement = claim.get("statement", "")
    if claim.get("detail", "").startswith("measured ") and re.match(r"^\|[^|]+\|", statement):
        return 0.0, math.inf, f"the statement writes the quantity as |{statement.split('|')[1]}|, never below 0"
    return None


def _pair_always(left: ast.AST, op: ast.cmpop, right: ast.AST, claim: dict, is_bound_form: bool) -> str | None:
    """Why ``left op right`` holds whatever the measured side is, or None."""
    constants = claim.get("constants", {})
    a, b = evaluate(left, constants), evaluate(right, constants)
    if type(op) not in COMPARE:
        return None
    if a is not None and b is not None:
        return (
            f"{ast.unparse(left)} {OPERATOR[type(op)]} {ast.unparse(right)} compares numbers only, no measured quantity"
            if COMPARE[type(op)](a, b)
            else None
        )
    if a is None and b is None:
        return None
    measured, bound, on_left = (left, b, True) if b is not None else (right, a, False)
    if not _is_number(bound):
        return None
    low, high, why = _value_range(measured, claim)
    if is_bound_form and not why and (subject := _claim_bound_subject_range(claim)):
        low, high, why = subject
    kind = (
        type(op)
        if on_left
        else {ast.Lt: ast.Gt, ast.LtE: ast.GtE, ast.Gt: ast.Lt, ast.GtE: ast.LtE}.get(type(op), type(op))
    )
    text = f"{ast.unparse(measured)} {OPERATOR[kind]} {bound!r}"
    if kind in (ast.Lt, ast.LtE) and (bound == math.inf or bound >= sys.float_info.max):
        return f"{text}: no finite value is above {bound!r}"
    if kind in (ast.Gt, ast.GtE) and (bound == -math.inf or bound <= -sys.float_info.max):
        return f"{text}: no finite value is below {bound!r}"
    if kind is ast.Lt and high < bound or kind is ast.LtE and high <= bound:
        return f"{text}: {why}, never above {high!r}"
    if kind is ast.Gt and low > bound or kind is ast.GtE and low >= bound:
        return f"{text}: {why}"
    return None


def _always(node: ast.AST, claim: dict, is_bound_form: bool) -> str | None:
    """Why the condition ``node`` holds for any value of what it measures, or None."""
    if isinstance(node, ast.Constant):
        return "it is the constant True" if node.value is True else None
    if isinstance(node, (ast.Name, ast.Attribute)) and claim.get("constants", {}).get(ast.unparse(node)) is True:
        return f"{ast.unparse(node)} is the constant True"
    if isinstance(node, ast.BoolOp):
        reasons = [_always(v, claim, is_bound_form) for v in node.values]
        if isinstance(node.op, ast.Or):
            return next((r for r in reasons if r), None)
        return "; ".join(reasons) if all(reasons) else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitAnd, ast.BitOr)):
        reasons = [_always(v, claim, is_bound_form) for v in (node.left, node.right)]
        if isinstance(node.op, ast.BitOr):
            return next((r for r in reasons if r), None)
        return "; ".join(reasons) if all(reasons) else None
    if isinstance(node, ast.Call) and _callee(node) in TRUTH_CALLS and len(node.args) == 1:
        return _always(node.args[0], claim, is_bound_form)
    if isinstance(node, ast.GeneratorExp):
        return _always(node.elt, claim, is_bound_form)
    if isinstance(node, ast.Compare):
        operands = [node.left, *node.comparators]
        reasons = [
            _pair_always(x, op, y, claim, is_bound_form)
            for x, op, y in zip(operands, node.ops, operands[1:], strict=False)
        ]
        return "; ".join(reasons) if all(reasons) else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        value = evaluate(node.operand, claim.get("constants", {}))
        return "it negates a constant False" if value is False else None
    return None


def empty_bound(claim: dict) -> str | None:
    """Why a claim's condition holds for any value of the quantity it
    measures (an empty claim: `x <= inf`, `x > -inf`, `abs(x) >= 0`, a
    condition of constants alone), or None. Read from the condition's form
    and the constants' values the record keeps."""
    tree = _parse(claim.get("condition"))
    if tree is None:
        return None
    is_bound_form = isinstance(tree, ast.Compare) and len(tree.ops) == 1
    return _always(tree, claim, is_bound_form)


def relabelled(old: dict[str, list[dict]], new: dict[str, list[dict]]) -> list[str]:
    """The words that moved to other, unchanged data between two records of
    a section's figures (figure name -> figure_labels.figure_labels): a
    title now over a panel whose data had another of the figure's titles, a
    label now on a series whose data had another of its labels. Data that
    changed (a new run) may take any words; data drawn twice (two series
    that coincide) is not judged, its words being interchangeable."""

    def unique(pairs):  # data fingerprint -> words, for data drawn once
        seen: dict[str, list[str]] = {}
        for data, words in pairs:
            seen.setdefault(data, []).append(words)
        return {data: words[0] for data, words in seen.items() if len(words) == 1}

    moves = []
    for name, panels in new.items():
        before = old.get(name)
        if not before:
            continue
        titles = unique((p["data"], p["title"]) for p in before)
        labels = unique((s["data"], s["label"]) for p in before for s in p["series"])
        now_titles = unique((p["data"], p["title"]) for p in panels)
        now_labels = unique((s["data"], s["label"]) for p in panels for s in p["series"])
        for data, title in now_titles.items():
            was = titles.get(data)
            if was is not None and was != title and title in titles.values():
                moves.append(f"{name}: the panel titled {was!r} is now titled {title!r}")
        for data, label in now_labels.items():
            was = labels.get(data)
            if was is not None and was != label and label in labels.values():
                moves.append(f"{name}: the series labelled {was!r} is now labelled {label!r}")
    return moves
