"""The record guards have teeth: on each page, edits of the kinds that used to
pass `make test`, each made to a temporary copy, and each caught by the guard
meant for it, with the file, the claim, quote or figure, and what is wrong:

- a claim weakened while its words keep the old bound: an inline literal
  (the static test of tests/test_claim_conditions.py) and a changed operator
  or bound (the condition pinned in the golden record);
- a committed full-run value edited by hand (a heavy section's on the second
  page), with and without the prose edited to match;
- a number drawn in a committed SVG edited;
- a golden value edited;
- a cell of the across-seeds table edited;
- a claim's bound moved so the claim is easier to hold (refused by `make
  golden` without a reason) or where it cannot fail (an empty claim).

(The other mutation cases, of words and numbers in the prose, are in
tests/test_mutations.py.)"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pagekit import check_page
from conftest import REPO_ROOT
from pagekit.paths import golden_dir
from pagekit.golden import bound_moves, claim_differences, pinned_claim
from pagekit.write_golden import looser_refusal
from test_golden_numbers import empty_claims
from pagekit.registry import page_config
from test_claim_conditions import weak_claims
from test_committed_records import across_seeds_mismatches, figure_strays, record_mismatches

pytestmark = pytest.mark.slow
PAGE_1, PAGE_2 = "normalisation_and_stability", "normalisation_layers"

RUN = """
import json
from pagekit import cli
module = cli.section_module({package!r}, {section!r})
section = cli.run_section(module, out_dir=__import__("pathlib").Path({out!r}), figures=False,
                                  write=False, raise_on_failed_claims=False)
print(json.dumps(section.record()))
"""


def mutate_script(tmp_path: Path, package: str, section: str, edits: list[tuple[str, str]]) -> Path:
    """A copy of docs/diagrams with ``edits`` (old, new) made to one script."""
    copy = tmp_path / "diagrams"
    shutil.copytree(REPO_ROOT / "docs" / "diagrams", copy, ignore=shutil.ignore_patterns("__pycache__", "corpus"))
    if (REPO_ROOT / "docs" / "diagrams" / package / "corpus").exists():
        (copy / package / "corpus").symlink_to(REPO_ROOT / "docs" / "diagrams" / package / "corpus")
    script = copy / package / f"{section}.py"
    source = script.read_text(encoding="utf-8")
    for old, new in edits:
        assert source.count(old) == 1, f"the mutation's target {old!r} is not once in {section}.py"
        source = source.replace(old, new)
    script.write_text(source, encoding="utf-8")
    return script


def rerun(script: Path, tmp_path: Path) -> dict:
    """The numbers record of a mutated script's run (figures not drawn)."""
    package, section = script.parent.name, script.stem
    code = RUN.format(package=package, section=section, out=str(tmp_path / "out"))
    # The copy's packages (its pagekit and page package) come first on the path.
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(script.parent.parent)},
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def golden(package: str, section: str) -> dict:
    return json.loads((golden_dir(page_config(package).PAGE) / f"{section}.json").read_text(encoding="utf-8"))


def committed(package: str, section: str) -> dict:
    path = REPO_ROOT / "figures" / page_config(package).PAGE / "numbers" / f"{section}.json"
    return json.loads(path.read_text(encoding="utf-8"))


def condition_changes(package: str, section: str, record: dict) -> list[str]:
    return [
        c
        for c in claim_differences(golden(package, section)["claims"], [pinned_claim(c) for c in record["claims"]])
        if ": condition " in c
    ]


# --- claims weakened while their words keep the old bound ---------------------


def test_page_1_weakened_claims_are_caught(tmp_path):
    """An inline literal (static test, with file and line) and an operator
    (golden condition) in unit_mismatch; the statements stay the same."""
    script = mutate_script(
        tmp_path,
        PAGE_1,
        "unit_mismatch",
        [
            ('steps["raw"] > STEP_RATIO_FLOOR * steps["std"]', 'steps["raw"] > 1e5 * steps["std"]'),
            ("curv_std < STD_CURVATURE_CEILING\n", "curv_std <= STD_CURVATURE_CEILING\n"),
        ],
    )
    static = weak_claims(script)
    assert len(static) == 1 and "unit_mismatch.py:" in static[0], static
    assert "100000.0 is written inline in the condition `steps['raw'] > 100000.0 * steps['std']`" in static[0]
    changed = condition_changes(PAGE_1, "unit_mismatch", rerun(script, tmp_path))
    assert any("raw needs over 1,000,000 times more steps" in c and "100000.0 * steps" in c for c in changed), changed
    assert any(
        "the standardised curvature ratio is below 2" in c
        and "'curv_std < STD_CURVATURE_CEILING'" in c
        and "'curv_std <= STD_CURVATURE_CEILING'" in c
        for c in changed
    ), changed


def test_page_2_weakened_claims_are_caught(tmp_path):
    """layer_norm_batch: "exactly 0" tested as at most 1 (0 and 1 are allowed
    inline, so only the golden condition can see it) and claim_bound's bound
    written inline (its statement, "> 0.5", does not change at all)."""
    script = mutate_script(
        tmp_path,
        PAGE_2,
        "layer_norm_batch",
        [
            ("ln_change == 0.0,", "ln_change <= 1.0,"),
            ('bn_change, ">", BN_CHANGE_FLOOR,', 'bn_change, ">", 0.5,'),
        ],
    )
    static = weak_claims(script)
    assert len(static) == 1 and "claim_bound's bound `0.5` is not a named module constant" in static[0], static
    changed = condition_changes(PAGE_2, "layer_norm_batch", rerun(script, tmp_path))
    assert any("exactly 0" in c and "'ln_change <= 1.0'" in c for c in changed), changed
    assert any("'bn_change > BN_CHANGE_FLOOR' with BN_CHANGE_FLOOR = 0.5 -> 'bn_change > 0.5'" in c for c in changed), (
        changed
    )


# --- committed full-run values and golden values edited by hand ---------------


def edited_quote(record: dict, name: str, value: float, text: str) -> dict:
    record = json.loads(json.dumps(record))
    record["quotes"][name]["value"], record["quotes"][name]["text"] = value, text
    return record


@pytest.mark.parametrize(
    "package, section, quote, value, text",
    [
        (PAGE_1, "mixed_precision", "f32_master_end", 0.9610, "0.9610"),
        (PAGE_2, "norm_placement", "final_post_low", 2.5, "2.500"),  # heavy: the tests rerun only its reduced run
    ],
    ids=["page-1", "page-2-heavy"],
)
def test_a_committed_value_edited_by_hand_is_caught(package, section, quote, value, text, tmp_path):
    """The committed numbers edited (value and text) fail against the golden
    record; so does the same edit with the page's prose edited to match,
    which the page check cannot see (the prose and the numbers agree)."""
    original = committed(package, section)
    assert quote in original["quotes"], f"{section} has no quote {quote}"
    record = edited_quote(original, quote, value, text)
    found = record_mismatches(record, golden(package, section))
    assert found == [f"quote {quote}: text {golden(package, section)['quotes'][quote]['text']!r} -> {text!r}"], found
    # The prose edited to match: every sentence that quoted the old text now
    # quotes the new one, so prose and numbers agree; the golden record
    # still holds the run's own value.
    config = page_config(package)
    shutil.copytree(
        REPO_ROOT / "figures" / config.PAGE, tmp_path / config.PAGE, ignore=shutil.ignore_patterns("*.ipynb")
    )
    numbers = tmp_path / config.PAGE / "numbers"
    (numbers / f"{section}.json").write_text(json.dumps(record), encoding="utf-8")
    old_text = original["quotes"][quote]["text"]
    page = (REPO_ROOT / config.PAGE_FILE).read_text(encoding="utf-8")
    assert old_text in page, f"the page does not quote {old_text!r}"
    (tmp_path / "page.md").write_text(page.replace(old_text, text), encoding="utf-8")
    prose = check_page.check_page(config, page_path=tmp_path / "page.md", numbers_dir=numbers).lines()
    found = record_mismatches(
        json.loads((numbers / f"{section}.json").read_text(encoding="utf-8")), golden(package, section)
    )
    assert any(f"quote {quote}: text" in c for c in found), (found, prose)


@pytest.mark.parametrize(
    "package, section, quote",
    [
        (PAGE_1, "unit_mismatch", "steps_raw"),
        (PAGE_2, "qk_norm", "largest_plain"),  # heavy
    ],
    ids=["page-1", "page-2-heavy"],
)
def test_a_golden_value_edited_is_caught(package, section, quote):
    """A golden value moved beyond its tolerance (text kept) no longer
    matches the committed numbers it was pinned from."""
    record = golden(package, section)
    pinned = record["quotes"][quote]
    if isinstance(pinned["value"], list):
        pinned["value"][0] *= 1.01
    else:
        pinned["value"] *= 1.01
    found = record_mismatches(committed(package, section), record)
    assert len(found) == 1 and found[0].startswith(f"quote {quote}: value ") and "beyond rel_tol" in found[0], found


# --- a number drawn in a committed SVG edited -------------------------------


@pytest.mark.parametrize(
    "package, section, figure, old, new",
    [
        (
            PAGE_1,
            "loss_spike_replay",
            "loss_spike_replay_loss_curve.svg",
            "peak 1.9550 at step 1,437",
            "peak 1.9650 at step 1,437",
        ),
        (
            PAGE_2,
            "norm_placement",
            "norm_placement_curves.svg",
            "post-norm, no warmup: 3.330",
            "post-norm, no warmup: 3.340",
        ),  # heavy
    ],
    ids=["page-1", "page-2-heavy"],
)
def test_an_svgs_drawn_number_edited_is_caught(package, section, figure, old, new, tmp_path):
    """A drawn number edited in a copy of the section's committed figures is
    no longer a quote of its committed numbers (the unedited ones pass)."""
    record = committed(package, section)
    figures = REPO_ROOT / "figures" / page_config(package).PAGE
    for name in record["figures"]:
        shutil.copy(figures / name, tmp_path / name)
    svg = (tmp_path / figure).read_text(encoding="utf-8")
    assert f"<!-- {old} -->" in svg, f"{figure} does not draw {old!r}"
    (tmp_path / figure).write_text(svg.replace(f"<!-- {old} -->", f"<!-- {new} -->", 1), encoding="utf-8")
    assert figure_strays(figures, record) == []
    found = figure_strays(tmp_path, record)
    assert len(found) == 1 and found[0].startswith(f"{figure}: ") and repr(new) in found[0], found


# --- a cell of the across-seeds table edited ----------------------------------


def test_an_across_seeds_seed_zero_cell_edited_is_caught():
    from pagekit.section import section_module

    rows = section_module(PAGE_2, "across_seeds").ROWS
    table = committed(PAGE_2, "across_seeds")
    records = {name: committed(PAGE_2, name) for name in {row[2] for row in rows}}
    assert across_seeds_mismatches(table, records, rows) == []
    key = rows[0][0]
    cell = table["quotes"][f"{key}_seeds"]
    cell["text"][0] = cell["text"][1] if cell["text"][1] != cell["text"][0] else cell["text"][0] + "1"
    found = across_seeds_mismatches(table, records, rows)
    assert len(found) == 1 and found[0].startswith(f"{key}_seeds[0]: "), found


# --- a claim's bound loosened, or moved where it cannot fail ---------------------


def numbers_name(package: str, section: str) -> str:
    return f"figures/{page_config(package).PAGE}/numbers/{section}.json"


def test_page_1_a_loosened_bound_is_refused_and_an_emptied_claim_is_caught(tmp_path):
    """batch_dependence: the route-gap floor halved (the claim's words say
    "more than 0.25" now, and nothing quotes them), and "within 0.05" rewritten
    as a lower bound below 0 on an absolute value (the words unchanged)."""
    section = "batch_dependence"
    script = mutate_script(
        tmp_path,
        PAGE_1,
        section,
        [
            ("ROUTE_GAP_THRESHOLD = 0.5\n", "ROUTE_GAP_THRESHOLD = 0.25\n"),
            (
                "abs(means[-1] - population_output) < POPULATION_TOL,",
                "abs(means[-1] - population_output) > -POPULATION_TOL,",
            ),
        ],
    )
    record = rerun(script, tmp_path)
    empty = empty_claims(numbers_name(PAGE_1, section), record)
    assert empty == [
        f"{numbers_name(PAGE_1, section)}: section {section}: claim 'at the largest batch size the mean output is "
        "within 0.05 of the population value' cannot fail: its condition 'abs(means[-1] - population_output) > "
        "-POPULATION_TOL' with POPULATION_TOL = 0.05 holds for any value of what it measures "
        "(abs(means[-1] - population_output) > -0.05: abs(...) is never below 0)"
    ], empty
    path = golden_dir(page_config(PAGE_1).PAGE) / f"{section}.json"
    moves = bound_moves(golden(PAGE_1, section)["claims"], record["claims"])
    refusal = looser_refusal(path, moves, None)
    assert refusal is not None, [m.line() for m in moves]
    assert refusal.startswith(f"figures/normalisation-and-stability/golden/{section}.json not re-pinned"), refusal
    assert (
        "'the two prediction-time routes disagree by more than 0.25': ROUTE_GAP_THRESHOLD 0.5 -> 0.25, "
        "LOOSER: the claim is now easier to hold" in refusal
    ), refusal
    assert looser_refusal(path, moves, "the routes' gap is smaller at other seeds") is None


def test_page_2_a_bound_moved_where_it_cannot_fail_is_refused_and_caught(tmp_path):
    """layer_norm_batch: batch norm's change floor set to minus infinity; the
    claim_bound writes "> -inf" into its own words, which the page does not
    quote, so only these checks see it."""
    section = "layer_norm_batch"
    script = mutate_script(tmp_path, PAGE_2, section, [("BN_CHANGE_FLOOR = 0.5 ", 'BN_CHANGE_FLOOR = float("-inf") ')])
    record = rerun(script, tmp_path)
    empty = empty_claims(numbers_name(PAGE_2, section), record)
    assert len(empty) == 1 and empty[0].startswith(
        f"{numbers_name(PAGE_2, section)}: section {section}: claim \"batch norm's largest change of example 0's "
        "output > -inf\" cannot fail: its condition 'bn_change > BN_CHANGE_FLOOR' with BN_CHANGE_FLOOR = -inf"
    ), empty
    assert "(bn_change > -inf: no finite value is below -inf)" in empty[0], empty
    path = golden_dir(page_config(PAGE_2).PAGE) / f"{section}.json"
    refusal = looser_refusal(path, bound_moves(golden(PAGE_2, section)["claims"], record["claims"]), None)
    assert refusal is not None and f"golden/{section}.json not re-pinned" in refusal
    assert "BN_CHANGE_FLOOR 0.5 -> -inf, LOOSER: the claim is now easier to hold (measured 2.03226)" in refusal, refusal
