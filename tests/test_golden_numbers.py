"""Every section's results match the committed golden record: quote names and
texts exactly, raw values within each quote's declared tolerance, claims
(statement, result, scope) exactly, agreement gaps in the same decade; and the
committed numbers files are current for their inputs. A mismatch says how to
accept an intended change: `make golden`. Where the numeric pin cannot hold,
raw values and decades skip and only rounding-stable texts are compared (see
conftest)."""

from __future__ import annotations

import math

from pagekit import numeric_env
from conftest import rounding_stable, skip_bit_level
from pagekit.golden import DECADE_SLACK, agreement_decades, claim_differences, pinned_claim
from pagekit.run_sections import current_hash

ACCEPT = "if the change is intended, inspect it, then `make golden` pins it"


def pinned_quotes(record: dict) -> dict:
    return {n: q for n, q in record["quotes"].items() if not q.get("measured")}


def test_same_quotes_as_golden(run):
    record, golden = run.get(), run.golden
    assert list(pinned_quotes(record)) == list(golden["quotes"]), f"quote names or their order changed; {ACCEPT}"


def test_texts_equal_golden(run):
    record, golden = run.get(), run.golden["quotes"]
    changed = [
        f"{name}: {golden[name]['text']!r} -> {q['text']!r}"
        for name, q in pinned_quotes(record).items()
        if name in golden and q["text"] != golden[name]["text"] and rounding_stable(run, name)
    ]
    assert not changed, "texts changed:\n" + "\n".join(changed) + f"\n({ACCEPT})"


def test_values_within_tolerance(run):
    skip_bit_level()
    record, golden = run.get(), run.golden["quotes"]
    off = []
    for name, q in pinned_quotes(record).items():
        if name not in golden:
            continue
        g = golden[name]
        new = q["value"] if isinstance(q["value"], list) else [q["value"]]
        old = g["value"] if isinstance(g["value"], list) else [g["value"]]
        if len(new) != len(old):
            off.append(f"{name}: {len(old)} elements -> {len(new)}")
            continue
        for i, (a, b) in enumerate(zip(new, old, strict=True)):
            if not math.isclose(a, b, rel_tol=g["rel_tol"], abs_tol=g["abs_tol"]):
                off.append(f"{name}[{i}]: {b!r} -> {a!r} (rel_tol {g['rel_tol']}, abs_tol {g['abs_tol']})")
    assert not off, "values moved beyond tolerance:\n" + "\n".join(off) + f"\n({ACCEPT})"


def test_tolerances_are_the_scripts_declared_ones(run):
    """A loose golden tolerance must be the script's declared choice, not a
    hand edit of the record."""
    record, golden = run.get(), run.golden["quotes"]
    for name, q in pinned_quotes(record).items():
        if name in golden:
            assert (golden[name]["rel_tol"], golden[name]["abs_tol"]) == (q["rel_tol"], q["abs_tol"]), name


def test_claims_hold_and_equal_golden(run):
    """Claims hold (a failed one fails the run itself, with its values), and
    are the pinned ones: statement, result, scope and the form of the
    condition (its source and the constants it reads), so a bound or an
    operator cannot move while the statement stays."""
    record = run.get()
    assert record["claims"], f"{run.name} declares no claims"
    if not run.reduced:
        assert all(c["holds"] for c in record["claims"])
    fresh = [pinned_claim(c) for c in record["claims"]]
    changed = claim_differences(run.golden["claims"], fresh)
    assert not changed, "claims changed:\n" + "\n".join(changed) + f"\n({ACCEPT})"


def test_agreements_stay_in_their_decade(run):
    """A closed-form/loop cross-check moved to a coarser dtype still passes
    its tolerance, but its gap jumps by decades."""
    fresh = agreement_decades(run.get()["claims"])
    pinned = run.golden.get("agreement_decades", {})
    moved = [
        f"{s}: gap 1e{pinned[s]} -> 1e{d}"
        for s, d in fresh.items()
        if s in pinned and abs(pinned[s] - d) > DECADE_SLACK
    ]
    assert not moved, "\n".join(moved) + f"\n({ACCEPT})"


def test_committed_numbers_are_current(run):
    """The committed numbers file was made from the inputs as they are now
    (content hash), by the page's own run, and says what a fresh run says."""
    committed = run.committed
    path = f"figures/{run.config.PAGE}/numbers/{run.name}.json"
    assert (
        committed.get("seed_offset", 0) == 0
        and committed.get("variant", "pinned") == "pinned"
        and not committed.get("reduced")
    ), f"{path} is not the page's own run: `make -B figures`"
    assert not (why := numeric_env.foreign(committed)), f"{path}: {why}"
    assert committed.get("inputs_hash") == current_hash(run.script), (
        f"{path} is stale for its inputs (a script, module, pin or the numeric environment changed): `make figures`"
    )
    if run.reduced:
        return
    fresh = run.get()
    for name, q in pinned_quotes(fresh).items():
        c = committed["quotes"].get(name)
        assert c is not None, f"{path} is stale ({name}): `make figures`"
        assert c["text"] == q["text"] or not rounding_stable(run, name), f"{path} is stale ({name}): `make figures`"
    assert [pinned_claim(c) for c in committed["claims"]] == [pinned_claim(c) for c in fresh["claims"]], (
        f"{path} is stale (claims): `make figures`"
    )
    assert committed["figures"] == fresh["figures"], f"{path} is stale (figures): `make figures`"
