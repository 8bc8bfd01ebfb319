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

import difflib
import hashlib
import math
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
    return out


def allowlist_row(entry: dict) -> str:
    """One allowlist entry of page.json, as `make golden` shows it."""
    what = f"phrase {entry['phrase']!r}" if "phrase" in entry else f"unit {entry['unit']!r} of {entry['quote']}"
    return f"{what} ({entry['reason']})"
