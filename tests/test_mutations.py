"""The guards have teeth: a small fixed set of mutations of the scripts and
of the prose, each made on a temporary copy, and each must be caught by the
guard meant for it (golden claims, golden figure hashes, agreement decades,
the pinned prose binding, backed phrases). A guard that lets its mutation
through fails this test."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pagekit import check_page
from conftest import REPO_ROOT
from pagekit.paths import golden_dir
from pagekit.golden import differences, pinned_part, sha256
from pagekit.registry import page_config

PACKAGE = "normalisation_and_stability"
CONFIG = page_config(PACKAGE)
PAGE_FILE = REPO_ROOT / CONFIG.PAGE_FILE
pytestmark = pytest.mark.slow


# --- script mutations: rerun the mutated section on a copy, compare with golden ---

# Each mutation: (section, text replaced, its replacement, text appended).
SCRIPT_MUTATIONS = {
    "weakened threshold": ("unit_mismatch", "STEP_RATIO_FLOOR = 1e6", "STEP_RATIO_FLOOR = 1e5", ""),
    "figure only": (
        "norm_worked_vector",
        "",
        "",
        "\n_draw = draw\n\n\ndef draw(section, results):\n"
        "    import matplotlib\n    matplotlib.rcParams['text.color'] = '#555555'\n"
        "    _draw(section, results)\n",
    ),
    "cross-check dtype": ("norm_worked_vector", "dtype=torch.float32", "dtype=torch.float64", ""),
}

# One interpreter runs every mutation: it imports the machinery, numpy and
# torch once (from the first copy; every copy's machinery is the repository's,
# unchanged), then forks a child per mutation, which imports the page's
# package from that mutation's own copy. (A fresh interpreter each cost about
# two CPU-seconds of imports.)
RUN_ALL = """
import json, os, sys
import importlib.util
runs = json.loads(sys.argv[1])
from pagekit import cli, torch_loader  # from the first copy (PYTHONPATH): every copy's pagekit is the repository's
torch_loader.import_torch()
import matplotlib.pyplot
for run in runs:
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            for name in [m for m in sys.modules if m == {package!r} or m.startswith({package!r} + ".")]:
                del sys.modules[name]
            # The page package from this mutation's copy: its modules are found in its own folder.
            folder = os.path.join(run["diagrams"], {package!r})
            spec = importlib.util.spec_from_file_location({package!r}, os.path.join(folder, "__init__.py"),
                                                          submodule_search_locations=[folder])
            sys.modules[{package!r}] = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(sys.modules[{package!r}])
            module = cli.section_module({package!r}, run["section"])
            assert module.__file__.startswith(run["diagrams"]), module.__file__
            section = cli.run_section(module, out_dir=__import__("pathlib").Path(run["out"]),
                                              raise_on_failed_claims=False)
            with open(run["record"], "w", encoding="utf-8") as f:
                json.dump(section.record(), f)
            status = 0
        except BaseException:
            import traceback
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(status)
    _, status = os.waitpid(pid, 0)
    if status:
        sys.exit(f"the mutation of {{run['section']}} in {{run['diagrams']}} failed (status {{status}})")
"""


@pytest.fixture(scope="module")
def mutated(tmp_path_factory) -> dict[str, tuple[dict, Path]]:
    """{mutation: (the mutated section's record, its figures folder)}, each
    made on its own copy of docs/diagrams."""
    runs = []
    for k, (section, old, new, append) in enumerate(SCRIPT_MUTATIONS.values()):
        root = tmp_path_factory.mktemp(f"mutation{k}")
        copy = root / "diagrams"
        shutil.copytree(REPO_ROOT / "docs" / "diagrams", copy, ignore=shutil.ignore_patterns("__pycache__"))
        script = copy / PACKAGE / f"{section}.py"
        source = script.read_text(encoding="utf-8")
        if old:
            assert source.count(old) == 1, f"the mutation's target {old!r} is not once in {section}.py"
            source = source.replace(old, new)
        script.write_text(source + append, encoding="utf-8")
        runs.append(
            {"diagrams": str(copy), "section": section, "out": str(root / "out"), "record": str(root / "record.json")}
        )
    done = subprocess.run(
        [sys.executable, "-c", RUN_ALL.format(package=PACKAGE), json.dumps(runs)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": runs[0]["diagrams"]},
    )
    assert done.returncode == 0, done.stderr
    return {
        name: (json.loads(Path(run["record"]).read_text(encoding="utf-8")), Path(run["out"]))
        for name, run in zip(SCRIPT_MUTATIONS, runs, strict=True)
    }


def golden(section: str) -> dict:
    return json.loads((golden_dir(CONFIG.PAGE) / f"{section}.json").read_text(encoding="utf-8"))


def test_a_weakened_threshold_changes_the_claims_words(mutated):
    record, _ = mutated["weakened threshold"]
    changes = differences(golden("unit_mismatch"), pinned_part(record))
    assert any(c.startswith("claim now:") for c in changes), "a weakened threshold passed the golden claims"


def test_a_figure_only_change_is_caught_by_the_pinned_hashes(mutated):
    record, out = mutated["figure only"]
    pinned = golden("norm_worked_vector")["figures"]
    assert not differences(golden("norm_worked_vector"), pinned_part(record)), "numbers must be unchanged"
    assert any(sha256(out / name) != pinned[name] for name in record["figures"]), (
        "a figure-only change passed the figure hashes"
    )


def test_a_cross_check_moved_to_another_dtype_is_caught(mutated):
    record, _ = mutated["cross-check dtype"]
    changes = differences(golden("norm_worked_vector"), pinned_part(record))
    assert any(c.startswith("agreement") for c in changes), "a cross-check in another dtype passed"


# --- prose mutations: check a mutated copy of the page against the real numbers ---


def check_mutated(tmp_path: Path, mutate) -> list[str]:
    source = PAGE_FILE.read_text(encoding="utf-8")
    mutated = mutate(source)
    assert mutated != source, "the mutation changed nothing"
    page = tmp_path / "page.md"
    page.write_text(mutated, encoding="utf-8")
    return check_page.check_page(CONFIG, page_path=page).lines()


def backed_phrases() -> list[str]:
    """The phrases the page's `% backs` lines tie to claims."""
    return [p for backing in check_page.parse_page(PAGE_FILE).backing for p in backing.phrases]


def test_the_real_page_passes_before_mutation(tmp_path):
    assert check_mutated(tmp_path, lambda s: s + "\n") == []


def test_two_numbers_swapped_in_a_sentence_are_caught(tmp_path):
    def swap(source: str) -> str:
        lines = source.splitlines(keepends=True)
        start = next(i for i, l in enumerate(lines) if l.startswith("## 1."))
        for i in range(start, len(lines)):
            found = [m for m in check_page.numbers_in(lines[i]) if m.group() not in ("1",)]
            if len(found) >= 2 and found[0].group() != found[1].group():
                a, b = found[0], found[1]
                lines[i] = (
                    lines[i][: a.start()] + b.group() + lines[i][a.end() : b.start()] + a.group() + lines[i][b.end() :]
                )
                return "".join(lines)
        raise AssertionError("no line with two numbers")

    assert any("not the number pinned at this place" in l for l in check_mutated(tmp_path, swap))


def test_a_dropped_sign_is_caught(tmp_path):
    def drop(source: str) -> str:
        match = re.search(r"(?<=[ (])\u2212(?=\d)", source.split("## 1.", 1)[1])
        at = source.index("## 1.") + 5 + match.start()
        return source[:at] + source[at + 1 :]

    assert check_mutated(tmp_path, drop), "a dropped minus sign passed the check"


def test_a_reversed_direction_word_is_caught(tmp_path):
    phrase = next(p for p in backed_phrases() if p in PAGE_FILE.read_text(encoding="utf-8"))
    lines = check_mutated(tmp_path, lambda s: s.replace(phrase, "not " + phrase[::-1], 1))
    assert any("no longer says" in l for l in lines)


def test_one_format_name_replaced_by_another_is_caught(tmp_path):
    phrase = next((p for p in backed_phrases() if re.search(r"\b(b?float16|float32)\b", p)), None)
    assert phrase is not None, "no claim backs a phrase naming a number format"
    swapped = re.sub(
        r"\bfloat16\b|\bbfloat16\b|\bfloat32\b",
        lambda m: {"float16": "bfloat16", "bfloat16": "float16", "float32": "float16"}[m.group()],
        phrase,
        count=1,
    )

    def swap_in_prose(source: str) -> str:
        """The first occurrence in the prose: not in a `% backs` or `% figure says` comment line."""
        at = next(
            m.start()
            for m in re.finditer(re.escape(phrase), source)
            if not source[source.rfind("\n", 0, m.start()) + 1 : m.start()].lstrip().startswith("%")
        )
        return source[:at] + swapped + source[at + len(phrase) :]

    lines = check_mutated(tmp_path, swap_in_prose)
    # caught as a backed phrase gone ("no longer says") or as a figure's declared phrase gone ("no longer say")
    assert any("no longer say" in l for l in lines), "\n".join(lines)


# --- the words around the numbers: each kind of edit of issue 29, on each page ---

WORD_MUTATIONS = {
    "normalisation_and_stability": [
        (
            "a ratio's direction word flipped",
            "1,304 times bigger",
            "1,304 times smaller",
            "is followed by the unit 'times smaller', but it is unit_mismatch.mean_ratio, in 'times bigger'",
        ),
        (
            "a comparison flipped",
            "The measured 1.24 is a little less than 1.29",
            "The measured 1.24 is a little more than 1.29",
            "the quotes say the opposite: 1.24 is smaller than 1.29",
        ),
        (
            "one run restated as every seed",
            "Warmup rescued post-norm on this run, not at every seed.",
            "Warmup rescued post-norm at every seed.",
            "a scope word 'at every seed' in section 4",
        ),
        (
            "one run restated as every seed, in the summary",
            "Several results hold for the page's own run only:",
            "Several results hold at every seed:",
            "a scope word 'at every seed' in section 9",
        ),
        (
            "a number attributed to the wrong run",
            "still 0.0258 above the skipped run",
            "still 0.0258 above the clipped run",
            "is loss_spike_replay.final_excess, a number of the 'skipped' run, but its sentence names only clipped",
        ),
        (
            "a unit changed",
            "With raw inputs it takes 20,250,628 steps",
            "With raw inputs it takes 20,250,628 seconds",
            "20,250,628 in section 1 is followed by the unit 'seconds'",
        ),
        (
            "a verb of change reversed (issue 44, kind 1)",
            "The curvature ratio falls from 10,343,849",
            "The curvature ratio rises from 10,343,849",
            "a direction word 'rises' in section 1: the quotes say the opposite: from 10,343,849 to 1.12 goes down",
        ),
        (
            "a superlative reversed (issue 44, kind 1)",
            "the largest is 7.37 × 10⁻³",
            "the smallest is 7.37 × 10⁻³",
            "a direction word 'smallest' in section 5: the quotes say the opposite: 7.37 × 10⁻³ is "
            "mixed_precision.grad_max, by its name max",
        ),
        (
            "a one-run result restated across seeds (issue 44, kind 3)",
            "On this run the highest value in that window",
            "Across seeds the highest value in that window",
            "a scope word 'Across seeds' in section 6",
        ),
        (
            "a unit added after a quote that declares none (issue 44, kind 9)",
            "was 0.0724.",
            "was 0.0724 ms.",
            "0.0724 in section 6 is followed by the unit 'ms', but it is loss_spike_replay.",
        ),
        (
            "a speed-up the page never measured, claimed in the code section, which runs no script of its own "
            "(issue 44, kind 8)",
            "so it behaves the same on both.",
            "so it behaves the same on both, and trains faster than in float32.",
            "a direction word 'faster' in section 8",
        ),
        (
            "a comparison in a sentence with no number, its run swapped (issue 44, kinds 2 and 7)",
            "Here the pre-norm block made the stream bigger.",
            "Here the post-norm block made the stream bigger.",
            "a direction word 'bigger' in section 4: no claim backs the phrase around it",
        ),
        (
            "two runs' names swapped in a sentence that names both (issue 44, kind 7)",
            "post-norm below 1 × 10⁻⁴ and pre-norm",
            "pre-norm below 1 × 10⁻⁴ and post-norm",
            "1 × 10⁻⁴ in section 4 is residual_placement.score_post[1], a number of the 'post-norm' run, "
            "but its clause reads it under pre-norm",
        ),
        (
            "a negation added far from any number (issue 44, kind 4)",
            "It comes back down only as the height weight",
            "It does not come back down until the height weight",
            "a negation 'not' in section 1: no claim backs the phrase around it",
        ),
        (
            "a comparison a clause away from its number (issue 44, kind 2)",
            "all, and the run ends at 1.6018",
            "all, and the run ends lower than the clipped one, at 1.6018",
            "a direction word 'lower' in section 6",
        ),
        (
            "a run's numbers credited to the other placement, in a sentence (issue 44, kind 7)",
            "post-norm's first block carries between 0.80 and 2.56",
            "pre-norm's first block carries between 0.80 and 2.56",
            "a number of the 'post-norm' run, but its sentence names only pre-norm",
        ),
        (
            "a table's row label moved onto another run's numbers (issue 44, kind 6)",
            "| pre-norm, first ÷ last |",
            "| post-norm, first ÷ last |",
            "1.15 in the table of section 4 (row 'post-norm, first ÷ last', column '4') is "
            "residual_placement.grad_ratio_pre[0], a number of 4, pre-norm, but its labels name 4, post-norm",
        ),
        (
            "a cause added to a result (issue 44, kind 4)",
            "It happens during training.",
            "It happens because the rate is too large for post-norm.",
            "a causal word 'because' in section 4: no claim backs the phrase around it",
        ),
        (
            "a negation added beside a number (issue 44, kind 4)",
            "stream after its last (pre-norm's, 3.31 times)",
            "stream after its last (pre-norm's, not 3.31 times)",
            "a negation 'not' in section 4: no claim backs the phrase around it",
        ),
        (
            "a caption stating the opposite",
            "the clipped and skipped runs end below the run in which nothing was done.",
            "the clipped and skipped runs end above the run in which nothing was done.",
            "the caption of loss_spike_replay_three_variants.svg no longer say",
        ),
    ],
    "normalisation_layers": [
        ("a direction word flipped", "1.18 above them", "1.18 below them", "a direction word 'below' in section 7"),
        (
            "one run restated as every seed",
            "So in this run QK-norm made the larger rates cost less",
            "So at every seed QK-norm made the larger rates cost less",
            "a scope word 'at every seed' in section 9",
        ),
        (
            "one run restated as every seed, in the recap",
            "At the smallest rate the two runs tied",
            "At the smallest rate the run without QK-norm was ahead at every seed",
            "a scope word 'at every seed' in section 12",
        ),
        (
            "a number attributed to the wrong run",
            "Post-norm without warmup ends at 3.330, 1.18 above them:",
            "Post-norm with warmup ends at 3.330, 1.18 above them:",
            "a number of the 'post-norm without warmup' run, but its sentence names only post-norm with warmup",
        ),
        (
            "a unit changed",
            "2.150 nats per character with",
            "2.150 bits per character with",
            "2.150 in section 7 is followed by the unit 'bits per character'",
        ),
        (
            "an appraising verb reversed (issue 44, kind 1)",
            "Warmup helps",
            "Warmup hurts",
            "a direction word 'hurts' in section 7: the quotes say the opposite: 0.61 is "
            "norm_placement.warmup_gain_post, by its name gain",
        ),
        (
            "a superlative reversed (issue 44, kind 1)",
            "the largest logits, 10.5, 17.6",
            "the smallest logits, 10.5, 17.6",
            "a direction word 'smallest' in section 9: the quotes say the opposite: 10.5 is qk_norm.largest_qk[0], "
            "by its name largest",
        ),
        (
            "a general scope added (issue 44, kind 3)",
            "accuracies of 0.826 at 0.3 and 0.813 at 1.",
            "accuracies of 0.826 at 0.3 and 0.813 at 1 regardless of the seed.",
            "a scope word 'regardless of the seed' in section 3",
        ),
        (
            "milliseconds written as seconds (issue 44, kind 9)",
            "| hand-written layer norm | 94.2 ms |",
            "| hand-written layer norm | 94.2 s |",
            "94.2 in section 8 is followed by the unit 's', but it is rms_norm_speed.ms_hand_layer, in 'ms'",
        ),
        (
            "an opening card's one-run result restated for every seed (issue 44, kind 8)",
            "diverged at 0.3, 1 and 3; with batch norm the same network did not diverge",
            "diverged at 0.3, 1 and 3 at every seed; with batch norm the same network did not diverge",
            "a scope word 'at every seed' in section 1",
        ),
        (
            "a comparison against the figure's lines in a caption (issue 44, kind 2)",
            "still trains. Crosses mark diverged runs",
            "still trains, and batch norm's line stays above the plain one. Crosses mark diverged runs",
            "a direction word 'above' in section 3 (in a figure caption)",
        ),
        (
            "a run's numbers credited to the other run, in a sentence (issue 44, kind 7)",
            "Without QK-norm the largest logit grows with the learning rate: 42.0",
            "With QK-norm the largest logit grows with the learning rate: 42.0",
            "42.0 in section 9 is qk_norm.largest_plain[0]",
        ),
        (
            "a table's row label moved onto another layer's timing (issue 44, kind 6)",
            "| hand-written layer norm |",
            "| hand-written RMS norm |",
            "94.2 in the table of section 8 (row 'hand-written RMS norm', column 'CPU time per pass') is "
            "rms_norm_speed.ms_hand_layer, a number of hand-written layer norm, but its labels name hand-written rms norm",
        ),
        (
            "a cause added to a result (issue 44, kind 4)",
            "At 3 the network did not diverge but learned nothing",
            "At 3 the network did not diverge because it learned nothing",
            "a causal word 'because' in section 3: no claim backs the phrase around it",
        ),
        (
            "a negation added beside a number (issue 44, kind 4)",
            "accuracy, 0.125, is within 2 standard errors of chance",
            "accuracy, 0.125, is not within 2 standard errors of chance",
            "a negation 'not' in section 3: no claim backs the phrase around it",
        ),
        (
            "a comparison with the figure's lines, in prose with no number, reversed (issue 44, kind 2)",
            "the other wanders above the blue pre-norm lines",
            "the other wanders below the blue pre-norm lines",
            "a direction word 'below' in section 7: no claim backs the phrase around it",
        ),
        (
            "two runs' names swapped in a sentence that names both (issue 44, kind 7)",
            "post-norm ends at 2.186 and\npre-norm at 2.194",
            "pre-norm ends at 2.186 and\npost-norm at 2.194",
            "2.186 in section 7 is norm_placement.final_post_low, a number of the 'post-norm' run, "
            "but its clause reads it under pre-norm",
        ),
        (
            "a negation added to a sentence's result, far from its numbers (issue 44, kind 4)",
            "while both pre-norm runs kept improving",
            "while both pre-norm runs did not keep improving",
            "a negation 'not' in section 7: no claim backs the phrase around it",
        ),
        (
            "a caption stating the opposite",
            "At 0.01 both pre-norm runs end below both post-norm runs;",
            "At 0.01 both pre-norm runs end above both post-norm runs;",
            "the caption of norm_placement_curves.svg no longer say",
        ),
    ],
}


def in_backs_line(source: str, at: int) -> bool:
    """Whether position ``at`` is on a `% backs` line (a MyST comment, not prose)."""
    start = source.rfind("\n", 0, at) + 1
    return source[start:at].lstrip().startswith("% backs")


def prose_target(source: str, old: str) -> tuple[int, int]:
    """The one place (offset, line) of ``old`` in the page's prose, outside `% backs` lines."""
    found = [at for at in (m.start() for m in re.finditer(re.escape(old), source)) if not in_backs_line(source, at)]
    assert len(found) == 1, f"the mutation's target {old!r} is not once in the page's prose"
    return found[0], source.count("\n", 0, found[0]) + 1


@pytest.mark.parametrize(
    "package, kind, old, new, expected",
    [(package, *mutation) for package, mutations in WORD_MUTATIONS.items() for mutation in mutations],
    ids=[f"{package}: {m[0]}" for package, mutations in WORD_MUTATIONS.items() for m in mutations],
)
def test_an_edit_of_the_words_is_caught_with_file_line_and_missing_evidence(
    tmp_path, package, kind, old, new, expected
):
    config = page_config(package)
    source = (REPO_ROOT / config.PAGE_FILE).read_text(encoding="utf-8")
    # An author's slip is in the prose; the page's `% backs` lines keep their words.
    at, line = prose_target(source, old)
    # A caption's finding names the caption's first line: the paragraph's.
    paragraph_start = source.rfind("\n\n", 0, at)
    first = source.count("\n", 0, paragraph_start + 2) + 1
    page = tmp_path / "page.md"
    page.write_text(source[:at] + new + source[at + len(old) :], encoding="utf-8")
    lines = check_page.check_page(config, page_path=page).lines()
    caught = [entry for entry in lines if expected in entry]
    assert caught, f"{kind} passed the check:\n" + "\n".join(lines)
    assert any(entry.startswith((f"{page}:{line}:", f"{page}:{first}:")) for entry in caught), (
        f"{kind} was caught, but not at {page.name}:{line}:\n" + "\n".join(caught)
    )


# --- the allowlist cannot contradict, and every entry is pinned (issue 44, kind 13) ---

ALLOWLIST_MUTATIONS = {
    "normalisation_and_stability": (
        "The curvature ratio falls from 10,343,849",
        "The curvature ratio rises from 10,343,849",
        "The curvature ratio rises from",
        "a direction word 'rises' in section 1: the quotes say the opposite: from 10,343,849 to 1.12 goes down",
    ),
    "normalisation_layers": (
        "Warmup helps",
        "Warmup hurts",
        "Warmup hurts",
        "a direction word 'hurts' in section 7: the quotes say the opposite: 0.61 is norm_placement.warmup_gain_post",
    ),
}


@pytest.mark.parametrize("package", list(ALLOWLIST_MUTATIONS))
def test_an_allowlist_entry_cannot_silence_a_contradiction_and_shows_in_the_golden_diff(tmp_path, package):
    """The slip of a careless author: reverse a direction word, then allowlist
    it. The entry is refused where its own quotes say the opposite, and, as
    every new entry, fails the check until `make golden` pins it, whose diff
    shows it."""
    from pagekit import wording
    from pagekit.golden import binding_differences

    old, new, phrase, expected = ALLOWLIST_MUTATIONS[package]
    config = page_config(package)
    source = (REPO_ROOT / config.PAGE_FILE).read_text(encoding="utf-8")
    at, line = prose_target(source, old)
    page = tmp_path / "page.md"
    page.write_text(source[:at] + new + source[at + len(old) :], encoding="utf-8")
    allowlist = tmp_path / "wording_allowlist.toml"
    allowlist.write_text(
        wording.ALLOWLIST.read_text(encoding="utf-8")
        + f'\n[[allow]]\npage = "{config.PAGE}"\nphrase = "{phrase}"\nreason = "the author says so"\n',
        encoding="utf-8",
    )
    lines = check_page.check_page(config, page_path=page, allowlist_path=allowlist).lines()
    refused = [entry for entry in lines if expected in entry]
    assert refused, "an allowlisted contradiction passed:\n" + "\n".join(lines)
    assert refused[0].startswith(f"{page}:{line}:"), refused[0]
    assert f"the allowlist entry {phrase!r} cannot cover a word its quotes contradict" in refused[0]
    unpinned = f"wording_allowlist.toml: the entry phrase {phrase!r} (the author says so) is not in the golden record"
    assert any(unpinned in entry for entry in lines), "\n".join(lines)
    pinned = json.loads((golden_dir(config.PAGE) / "page.json").read_text(encoding="utf-8"))
    now = check_page.pinned_binding(config, page_path=page, allowlist_path=allowlist)
    assert f"allowlist entry added: phrase {phrase!r} (the author says so)" in binding_differences(pinned, now)


# --- a sentence widened from its tested point to a range (issue 39) ---

# (package, the backed phrase as the page has it, the same phrase widened to a
# range, the claim's key): the author widens the words, in the prose and in
# the `% backs` line alike, and keeps the claim, which tested one point.
WIDENED = {
    "normalisation_layers": (
        "At 1 noise on every activation scored far below batch norm",
        "At larger rates noise on every activation scored far below batch norm",
        "costs-at-1",
    ),
}


@pytest.mark.parametrize("package", list(WIDENED))
def test_an_explanation_widened_from_its_point_to_a_range_is_caught(tmp_path, package):
    """Section 4's cost of the noise was measured at lr 1; written as "at larger
    rates" it claims a range the single-point claim never tested. The check
    names the word, the claim and the missing evidence (a sweep claim)."""
    old, new, key = WIDENED[package]
    config = page_config(package)
    source = (REPO_ROOT / config.PAGE_FILE).read_text(encoding="utf-8")
    at, line = prose_target(source, old)
    assert f'% backs covariate_shift:{key} "{old}"' in source, "the phrase is not backed by the claim this test widens"
    mutated = source.replace(old, new)
    page = tmp_path / "page.md"
    page.write_text(mutated, encoding="utf-8")
    lines = check_page.check_page(config, page_path=page).lines()
    caught = [entry for entry in lines if "a range word 'At larger rates'" in entry]
    assert caught, "a widened explanation passed the check:\n" + "\n".join(lines)
    assert caught[0].startswith(f"{page}:{line}:"), caught[0]
    assert "is tested at one point: a range needs a sweep claim (section.sweep_claim)" in caught[0], caught[0]
    assert "at lr 1 the" in caught[0], "the finding names the single-point claim behind the words"


# --- tables bound to runs and settings (issue 44, kind 6) ---


def test_two_columns_swapped_in_a_tables_header_are_caught_under_any_golden_record(tmp_path):
    """A careless author swaps two learning rates in the header of section 9's
    table and re-pins the golden record, which pins numbers by place. The
    table rule reads each cell under its column and row, and its quote
    declares which rate it is: the first body row names the wrong rate."""
    config = page_config("normalisation_layers")
    source = (REPO_ROOT / config.PAGE_FILE).read_text(encoding="utf-8")
    old, new = "| Learning rate | 0.01 | 0.03 | 0.1 |", "| Learning rate | 0.03 | 0.01 | 0.1 |"
    at, line = prose_target(source, old)
    page = tmp_path / "page.md"
    page.write_text(source[:at] + new + source[at + len(old) :], encoding="utf-8")
    lines = check_page.check_page(config, page_path=page).lines()
    expected = (
        f"{page}:{line + 2}: 42.0 in the table of section 9 (row 'Largest logit, no QK-norm', column '0.03') is "
        "qk_norm.largest_plain[0], a number of 0.01, largest logit, no qk-norm, without qk-norm, but its labels name "
        "0.03, largest logit, no qk-norm"
    )
    assert expected in lines, "\n".join(lines)
