"""The golden record: what `make golden` pins and the tests compare against.

Per section, tests/golden/<page>/<section>.json holds
- "quotes": every quote but the measured ones (timings), raw value, text and
  tolerances;
- "claims": each claim's statement, result and scope (a threshold cannot
  change while its words stay: the words come from the same constant);
- "agreement_decades": per closed-form/loop agreement, the decade of its
  largest gap, so a cross-check quietly moved to a coarser dtype is caught;
- "figures": the sha256 of each committed SVG, so a figure-only change is
  caught even after `make figures` rewrote the committed file;
- "reduced" (heavy sections only): the same for the reduced configuration
  the tests run.
Per page, tests/golden/<page>/page.json pins which quote each prose number is,
in order (see check_page.check_binding).
"""

from __future__ import annotations

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


def pinned_part(record: dict) -> dict:
    """What the golden record keeps of one run's numbers record."""
    return {
        "quotes": {n: {k: q[k] for k in ("value", "text", "rel_tol", "abs_tol")}
                   for n, q in record["quotes"].items() if not q.get("measured")},
        "claims": [{"statement": c["statement"], "holds": c["holds"], "every_seed": c.get("every_seed", True)}
                   for c in record["claims"]],
        "agreement_decades": agreement_decades(record["claims"]),
    }


def differences(old: dict, new: dict) -> list[str]:
    """Changes that matter between two pinned parts: names, texts, values
    beyond tolerance, claims, agreement decades. Last-bit noise is not one."""
    out = []
    old_q, new_q = old.get("quotes", {}), new.get("quotes", {})
    for name in new_q.keys() - old_q.keys():
        out.append(f"new quote {name}")
    for name in old_q.keys() - new_q.keys():
        out.append(f"quote {name} removed")
    if [n for n in old_q if n in new_q] != [n for n in new_q if n in old_q]:
        out.append("quote order changed")
    for name in new_q.keys() & old_q.keys():
        a, b = old_q[name], new_q[name]
        if a["text"] != b["text"]:
            out.append(f"{name}: text {a['text']!r} -> {b['text']!r}")
            continue
        if (a["rel_tol"], a["abs_tol"]) != (b["rel_tol"], b["abs_tol"]):
            out.append(f"{name}: tolerance changed")
        va = a["value"] if isinstance(a["value"], list) else [a["value"]]
        vb = b["value"] if isinstance(b["value"], list) else [b["value"]]
        if len(va) != len(vb) or not all(
                math.isclose(x, y, rel_tol=b["rel_tol"], abs_tol=b["abs_tol"]) for x, y in zip(va, vb, strict=True)):
            out.append(f"{name}: value {a['value']!r} -> {b['value']!r} (beyond rel_tol {b['rel_tol']:g})")
    old_c = [(c["statement"], c["holds"], c["every_seed"]) for c in old.get("claims", [])]
    new_c = [(c["statement"], c["holds"], c["every_seed"]) for c in new.get("claims", [])]
    for c in new_c:
        if c not in old_c:
            out.append(f"claim now: {c[0]!r} (holds {c[1]}, every seed {c[2]})")
    for c in old_c:
        if c not in new_c:
            out.append(f"claim was: {c[0]!r}")
    for statement, decade in new.get("agreement_decades", {}).items():
        was = old.get("agreement_decades", {}).get(statement)
        if was is not None and abs(was - decade) > DECADE_SLACK:
            out.append(f"agreement {statement!r}: gap 1e{was} -> 1e{decade}")
    return out
