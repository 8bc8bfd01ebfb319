"""Every section's results match the committed golden record: quote names and
texts exactly, raw values within each quote's declared tolerance, claims
(statement, result, scope) exactly, agreement gaps in the same decade; and the
committed numbers files are current for their inputs. A mismatch says how to
accept an intended change: `make golden`. Where the numeric pin cannot hold,
raw values and decades skip and only rounding-stable texts are compared (see
conftest).

No committed claim is empty (its condition holding for any value of what it
measures), and `make golden` shows every claim bound that moved and refuses
one moved so its claim is easier to hold, unless given a reason
(golden.bound_moves, write_golden.looser_refusal)."""

from __future__ import annotations

import json
import math

import pytest

from pagekit import numeric_env
from conftest import REPO_ROOT, rounding_stable, skip_bit_level
from pagekit.golden import (
    DECADE_SLACK,
    agreement_decades,
    bound_moves,
    claim_differences,
    condition_text,
    empty_bound,
    pinned_claim,
    relabelled,
)
from pagekit.paths import golden_dir
from pagekit.registry import page_packages
from pagekit.run_sections import all_sections, current_hash
from pagekit.write_golden import looser_refusal, relabel_refusal

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


def words_of(figure_labels: dict) -> dict:
    """A figure record's words only: each panel's title and its series' labels."""
    return {
        name: [(p["title"], [s["label"] for s in p["series"]]) for p in panels]
        for name, panels in figure_labels.items()
    }


def test_figure_labels_equal_golden(run):
    """Each figure's panel titles and legend labels are the pinned ones, over
    the pinned data (fingerprints, where the numeric pin holds)."""
    if run.reduced:
        return  # the reduced run draws no figures
    fresh, pinned = run.get().get("figure_labels", {}), run.golden.get("figure_labels", {})
    assert set(fresh) == set(run.get()["figures"]) - {n for n in run.get()["figures"] if n.endswith(".phone.svg")}
    assert words_of(fresh) == words_of(pinned), f"figure titles or labels changed; {ACCEPT}"
    skip_bit_level()
    assert fresh == pinned, f"the data under a figure's titles or labels changed; {ACCEPT}"


@pytest.mark.parametrize(
    "page, script", [("normalisation-and-stability", "loss_spike_replay"), ("normalisation-layers", "norm_placement")]
)
def test_make_golden_refuses_labels_moved_to_other_data(page, script):
    """Two legend labels swapped over unchanged data (or two panel titles
    exchanged) are refused by `make golden` without a reason; the same
    words over new data (a changed run) are not (issue 44, kind 11)."""
    path = golden_dir(page) / f"{script}.json"
    pinned = json.loads(path.read_text(encoding="utf-8"))["figure_labels"]
    name, panels = next((n, p) for n, p in pinned.items() if any(len(panel["series"]) >= 2 for panel in p))
    assert relabelled(pinned, pinned) == []
    swapped = json.loads(json.dumps(pinned))
    series = next(panel["series"] for panel in swapped[name] if len(panel["series"]) >= 2)
    series[0]["label"], series[1]["label"] = series[1]["label"], series[0]["label"]
    moves = relabelled(pinned, swapped)
    assert len(moves) == 2 and all(name in m for m in moves), moves
    assert "--accept-relabel" in relabel_refusal(path, moves, None)
    assert relabel_refusal(path, moves, "renamed on purpose") is None
    rerun = json.loads(json.dumps(swapped))
    for panel in rerun[name]:
        for s in panel["series"]:
            s["data"] = "new-run-" + s["data"]
    assert relabelled(pinned, rerun) == []
    if len(swapped[name]) >= 2:
        titles = json.loads(json.dumps(pinned))
        titles[name][0]["title"], titles[name][1]["title"] = titles[name][1]["title"], titles[name][0]["title"]
        assert len(relabelled(pinned, titles)) == 2


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


# --- claims that cannot fail, and bounds that moved ----------------------------


def empty_claims(path: str, record: dict) -> list[str]:
    """Each claim of a numbers record whose condition holds for any value of
    what it measures, with the file, the section and the claim."""
    return [
        f"{path}: section {record['section']}: claim {c['statement']!r} cannot fail: its condition "
        f"{condition_text(c)} holds for any value of what it measures ({why})"
        for c in record["claims"]
        if (why := empty_bound(c))
    ]


def test_no_committed_claim_is_empty():
    """A claim whose bound was moved where it cannot fail (`x <= inf`, `x >
    -inf`, `abs(x) >= 0`, a condition of constants alone) states nothing,
    however its words read: every committed numbers file is read."""
    found, claims = [], 0
    for script in all_sections(page_packages()):
        path = script.numbers_path
        record = json.loads(path.read_text(encoding="utf-8"))
        claims += len(record["claims"])
        found += empty_claims(str(path.relative_to(REPO_ROOT)), record)
    assert claims > 100, f"only {claims} claims read: the committed numbers files are not all there"
    assert not found, "claims that cannot fail:\n" + "\n".join(found)


def claim(condition: str, constants: dict | None = None, statement: str = "s", detail: str = "") -> dict:
    return {
        "statement": statement,
        "holds": True,
        "condition": condition,
        "constants": constants or {},
        "detail": detail,
    }


def test_an_empty_claim_is_found_in_each_form_and_a_real_bound_is_not():
    inf = math.inf
    empty = {
        "gap <= TOL": {"TOL": inf},
        "gap > FLOOR": {"FLOOR": -inf},
        "x < math.inf": {},
        "bool(np.all(x > -np.inf))": {},
        "x <= float('inf')": {},
        "abs(a - b) >= TOL": {"TOL": 0.0},
        "abs(a - b) > -TOL": {"TOL": 0.05},
        "np.linalg.norm(v) > FLOOR": {"FLOOR": -1},
        "bool(np.all((q > LOW) & (q < HIGH)))": {"LOW": -inf, "HIGH": inf},
        "x > 0 or ALWAYS": {"ALWAYS": True},
        "HALF_BYTES == 2": {"HALF_BYTES": 2},
    }
    for condition, constants in empty.items():
        assert empty_bound(claim(condition, constants)), condition
    real = {
        "gap <= TOL": {"TOL": 0.02},
        "abs(a - b) < TOL": {"TOL": 0.05},
        "abs(a - b) > TOL": {"TOL": 0.0},
        "bool(np.all((q > LOW) & (q < HIGH)))": {"LOW": 1.6, "HIGH": inf},
        "all((lo <= x for x in xs)) and y < TOP": {"TOP": inf},
        "x == 0.0": {},
        "gap >= TOL": {"TOL": 0.0},
    }
    for condition, constants in real.items():
        assert empty_bound(claim(condition, constants)) is None, condition
    # The words say the measured quantity is an absolute value: `>= 0` is empty.
    words = "|pre-norm with warmup - pre-norm without warmup| final validation loss >= 0"
    assert "|pre-norm with warmup - pre-norm without warmup|" in empty_bound(
        claim("tie >= PRE_TIE", {"PRE_TIE": 0.0}, words, "measured 0.0017")
    )
    found = empty_claims("figures/p/numbers/s.json", {"section": "s", "claims": [claim("gap <= TOL", {"TOL": inf})]})
    assert found == [
        "figures/p/numbers/s.json: section s: claim 's' cannot fail: its condition 'gap <= TOL' with TOL = inf "
        "holds for any value of what it measures (gap <= inf: no finite value is above inf)"
    ]


def test_every_moved_bound_is_shown_with_its_direction():
    """A constant, a number in the condition and an operator, each moved
    both ways; a claim_bound's statement moves with its bound and is still
    matched; a constant whose effect the form does not say is shown for
    review."""
    old = [
        claim("gap <= RMS_MATCH", {"RMS_MATCH": 0.03}, "|a - b| <= 0.03"),
        claim("ratio >= MOVES_FACTOR", {"MOVES_FACTOR": 100}, "moves at least 100 times"),
        claim("0 < rise < SHARE * total", {"SHARE": 0.1}, "under 10% of the rise"),
        claim("abs(final[CLIPPED] - final[SKIPPED]) < TOL", {"TOL": 0.001, "CLIPPED": 1, "SKIPPED": 2}, "within"),
        claim("x < y", {}, "x below y"),
        claim("y < 2.5", {}, "y under 2.5"),
    ]

    def moved(edit) -> list[str]:
        new = json.loads(json.dumps(old))
        edit(new)
        return [m.line() for m in bound_moves(old, new)]

    def constant(i, name, value, statement=None):
        def edit(new):
            new[i]["constants"][name] = value
            new[i]["statement"] = statement or new[i]["statement"]

        return edit

    assert moved(lambda new: None) == []
    assert moved(constant(0, "RMS_MATCH", 0.3, "|a - b| <= 0.3")) == [
        "claim bound moved: '|a - b| <= 0.3': RMS_MATCH 0.03 -> 0.3, LOOSER: the claim is now easier to hold"
    ]
    assert moved(constant(0, "RMS_MATCH", 0.02, "|a - b| <= 0.02")) == [
        "claim bound moved: '|a - b| <= 0.02': RMS_MATCH 0.03 -> 0.02, tighter"
    ]
    assert "MOVES_FACTOR 100 -> 10, LOOSER" in moved(constant(1, "MOVES_FACTOR", 10))[0]
    assert "SHARE 0.1 -> 0.5, LOOSER" in moved(constant(2, "SHARE", 0.5))[0]
    assert "SHARE 0.1 -> 0.05, tighter" in moved(constant(2, "SHARE", 0.05))[0]
    assert "TOL 0.001 -> 0.1, LOOSER" in moved(constant(3, "TOL", 0.1))[0]
    assert "CLIPPED 1 -> 0, direction not decided" in moved(constant(3, "CLIPPED", 0))[0]
    assert moved(lambda new: new[4].update(condition="x <= y")) == [
        "claim bound moved: 'x below y': an operator '<' -> '<=', LOOSER: the claim is now easier to hold"
    ]
    assert (
        "the number in the condition 0 -> 0.5, tighter"
        in moved(lambda new: new[2].update(condition="0.5 < rise < SHARE * total"))[0]
    )
    assert moved(lambda new: new[5].update(condition="y < 3.5", statement="y under 3.5")) == [
        "claim bound moved: 'y under 3.5': the number in the condition 2.5 -> 3.5, LOOSER: the claim is now easier "
        "to hold"
    ]


def test_make_golden_refuses_a_looser_bound_unless_given_a_reason():
    path = golden_dir("normalisation-layers") / "norm_placement.json"
    old = [claim("gap <= RMS_MATCH", {"RMS_MATCH": 0.03}, "|a - b| <= 0.03")]
    tighter = bound_moves(old, [claim("gap <= RMS_MATCH", {"RMS_MATCH": 0.02}, "|a - b| <= 0.02")])
    looser = bound_moves(old, [claim("gap <= RMS_MATCH", {"RMS_MATCH": 0.5}, "|a - b| <= 0.5", "measured 0.0153")])
    assert looser_refusal(path, tighter, None) is None
    refusal = looser_refusal(path, looser, None)
    assert refusal.startswith("figures/normalisation-layers/golden/norm_placement.json not re-pinned: 1 claim bound")
    assert (
        "'|a - b| <= 0.5': RMS_MATCH 0.03 -> 0.5, LOOSER: the claim is now easier to hold (measured 0.0153)" in refusal
    )
    assert "--accept-looser-bounds" in refusal
    assert looser_refusal(path, looser, "the tolerance was below the seeds' spread") is None
