"""Every registered quote matches the committed golden record: raw values
within the quote's tolerance, text forms exactly; and every claim holds."""

from __future__ import annotations

import json
import math

from conftest import GOLDEN_DIR, REPO_ROOT


def golden_quotes(run) -> dict:
    path = GOLDEN_DIR / run.config.PAGE / f"{run.name}.json"
    assert path.exists(), f"{path.relative_to(REPO_ROOT)} is missing: run `make golden` after inspecting the numbers"
    return json.loads(path.read_text(encoding="utf-8"))["quotes"]


def test_same_quotes_as_golden(run):
    section = run.get()
    golden = golden_quotes(run)
    assert list(section.quotes) == list(golden), "quote names or their order changed; `make golden` if intended"


def test_texts_equal_golden(run):
    section = run.get()
    golden = golden_quotes(run)
    changed = [
        f"{name}: {golden[name]['text']!r} -> {q.text!r}"
        for name, q in section.quotes.items()
        if name in golden and q.text != golden[name]["text"]
    ]
    assert not changed, "texts changed:\n" + "\n".join(changed)


def test_values_within_tolerance(run):
    section = run.get()
    golden = golden_quotes(run)
    off = []
    for name, q in section.quotes.items():
        if name not in golden:
            continue
        g = golden[name]
        new = q.value if isinstance(q.value, list) else [q.value]
        old = g["value"] if isinstance(g["value"], list) else [g["value"]]
        if len(new) != len(old):
            off.append(f"{name}: {len(old)} elements -> {len(new)}")
            continue
        for i, (a, b) in enumerate(zip(new, old)):
            if not math.isclose(a, b, rel_tol=g["rel_tol"], abs_tol=g["abs_tol"]):
                off.append(f"{name}[{i}]: {b!r} -> {a!r} (rel_tol {g['rel_tol']}, abs_tol {g['abs_tol']})")
    assert not off, "values moved beyond tolerance:\n" + "\n".join(off)


def test_tolerances_are_tight_unless_declared(run):
    """A loose golden tolerance must be the script's declared choice, not a
    hand edit of the record."""
    section = run.get()
    golden = golden_quotes(run)
    for name, q in section.quotes.items():
        if name in golden:
            assert (golden[name]["rel_tol"], golden[name]["abs_tol"]) == (q.rel_tol, q.abs_tol), name


def test_claims_hold(run):
    section = run.get()
    assert section.claims, f"{run.name} declares no claims"
    assert not section.failed_claims()


def test_committed_numbers_file_is_current(run):
    """`make figures` output is committed: the numbers file says what a fresh
    run says (texts, claims and figures exactly; values within tolerance, so
    last-bit differences between machines do not count as stale)."""
    section = run.get()
    path = run.committed_dir / "numbers" / f"{run.name}.json"
    assert path.exists(), f"{path.relative_to(REPO_ROOT)} is missing: run `make figures`"
    committed = json.loads(path.read_text(encoding="utf-8"))
    fresh = section.record()
    stale = f"{path.name} is stale: run `make figures`"
    assert list(committed["quotes"]) == list(fresh["quotes"]), stale
    for name, q in fresh["quotes"].items():
        c = committed["quotes"][name]
        assert c["text"] == q["text"], f"{stale} ({name})"
        new = q["value"] if isinstance(q["value"], list) else [q["value"]]
        old = c["value"] if isinstance(c["value"], list) else [c["value"]]
        assert all(math.isclose(a, b, rel_tol=q["rel_tol"], abs_tol=q["abs_tol"]) for a, b in zip(new, old)), \
            f"{stale} ({name})"
    assert [(c["statement"], c["holds"]) for c in committed["claims"]] == \
        [(c["statement"], c["holds"]) for c in fresh["claims"]], stale
    assert committed["figures"] == fresh["figures"], stale
