"""The shared section machinery refuses bad quotes and failed claims."""

from __future__ import annotations

import json
import math
import types

import numpy as np
import pytest

from conftest import PIN_HOLDS
from pagekit.section import ClaimsFailed, QuoteError, Section, run_section


def make(tmp_path, **kw) -> Section:
    return Section(page="demo", name="demo", out_dir=tmp_path, echo=False, **kw)


def test_quote_prints_name_and_text(tmp_path, capsys):
    s = Section(page="demo", name="demo", out_dir=tmp_path)
    assert s.quote("steps", 1304, ",d") == "1,304"
    assert s.quote("row", [0.5, -1.25], ".2f") == ["0.50", "\u22121.25"]
    assert s.quote("tiny", 4.77e-6, ".2x") == "4.77 \u00d7 10\u207b\u2076"
    assert s.quote("floor", 2.0**-149, "pow2") == "2\u207b\u00b9\u2074\u2079"
    assert capsys.readouterr().out == (
        "steps  1,304\nrow[0]  0.50\nrow[1]  \u22121.25\n"
        "tiny  4.77 \u00d7 10\u207b\u2076\nfloor  2\u207b\u00b9\u2074\u2079\n"
    )


@pytest.mark.parametrize(
    "value, message",
    [
        (math.nan, "is NaN"),
        (math.inf, "is infinite"),
        ([1.0, math.nan], "is NaN"),
        (np.ones((2, 2)), "scalar or a 1-D vector"),
    ],
)
def test_bad_values_are_errors(tmp_path, value, message):
    with pytest.raises(QuoteError, match=message):
        make(tmp_path).quote("x", value, ".2f")


def test_duplicate_and_badly_named_quotes_are_errors(tmp_path):
    s = make(tmp_path)
    s.quote("x", 1.0, ".2f")
    with pytest.raises(QuoteError, match="registered twice"):
        s.quote("x", 2.0, ".2f")
    with pytest.raises(QuoteError, match="must match"):
        s.quote("Bad Name", 2.0, ".2f")
    with pytest.raises(QuoteError, match="needs a whole number"):
        s.quote("count", 2.5, ",d")


def test_allowed_infinity_is_kept(tmp_path):
    assert make(tmp_path).quote("held", [1e5, math.inf], ".0f", allow_inf=True) == [
        "100,000",
        "inf",
    ]  # grouped: house style


def test_text_lookup_names_missing_quotes(tmp_path):
    s = make(tmp_path)
    with pytest.raises(QuoteError, match="no quote named 'nope'"):
        s.text("nope")


def test_seed_offset_shifts_every_seed(tmp_path):
    a = make(tmp_path).rng(5).normal()
    b = make(tmp_path, seed_offset=1).rng(4).normal()
    assert a == b


def test_agree_records_the_gap(tmp_path):
    s = make(tmp_path)
    assert s.agree("loop and closed form", [1.0, 2.0], [1.0, 2.0 + 1e-9], atol=1e-6)
    assert not s.agree("loop and closed form", [1.0], [1.1], atol=1e-6)
    assert s.claims[-1].statement == "loop and closed form agree within atol 1e-06"
    assert s.claims[-1].detail == "largest gap 0.1"


def failing_compute(section):
    section.quote("x", 1.0, ".2f")
    section.claim("one is one", 1 == 1)
    section.claim("post-norm collapses at lr 0.01", False)


def failing_draw(section, results):
    raise AssertionError("draw must not run after a failed claim")


# A stand-in section module of the real page whose second claim fails.
FailingSection = types.ModuleType("normalisation_and_stability.failing")
FailingSection.compute, FailingSection.draw = failing_compute, failing_draw


def test_failed_claim_fails_the_section_with_its_words(tmp_path):
    with pytest.raises(ClaimsFailed, match=r"failing: claim failed: post-norm collapses at lr 0.01 \[seed offset 0"):
        run_section(FailingSection, out_dir=tmp_path)
    assert not (tmp_path / "numbers").exists(), "a failed section must not write its numbers"


def test_numbers_file_is_written_whole(tmp_path):
    s = make(tmp_path)
    s.quote("x", 0.25, ".2f")
    path = s.write_numbers()
    record = json.loads(path.read_text())
    assert record["quotes"]["x"] == {"value": 0.25, "text": "0.25", "rel_tol": 1e-9, "abs_tol": 0.0}
    assert record["environment"]["variant"] == "pinned"
    # The pinned kernels only where the pin can hold (elsewhere the library picks).
    assert record["environment"]["openblas_core"] == "Haswell" or not PIN_HOLDS
    assert [p.name for p in path.parent.iterdir()] == ["demo.json"], "no temp file left behind"


def page_run_compute(section):
    section.quote("x", 1.0, ".2f")
    section.claim("holds at every seed", True)
    section.claim("pre-norm is ahead at lr 0.001", section.seed_offset == 0, every_seed=False)


def test_page_run_claim_must_hold_at_offset_zero_only(tmp_path):
    module = types.ModuleType("normalisation_and_stability.page_run")
    module.compute, module.draw = page_run_compute, lambda section, results: None
    shifted = run_section(module, seed_offset=1, out_dir=tmp_path, figures=False, write=False)
    assert not shifted.failed_claims()
    assert shifted.record()["claims"][1] == {
        "statement": "pre-norm is ahead at lr 0.001",
        "holds": False,
        "detail": "",
        "every_seed": False,
        "condition": "section.seed_offset == 0",
        "constants": {},
    }
    elsewhere = Section(page="normalisation-and-stability", name="demo", seed_offset=1).figure_dir
    assert elsewhere.parts[-4:] == ("build", "runs", "pinned-seed1", "normalisation-and-stability"), (
        "a run at another seed offset never writes into figures/"
    )

    def fails_on_page_run(section):
        page_run_compute(section)
        section.claim("the page's own ordering", False, every_seed=False)

    module.compute = fails_on_page_run
    with pytest.raises(ClaimsFailed, match="the page's own ordering"):
        run_section(module, out_dir=tmp_path, figures=False, write=False)


def test_interrupted_write_keeps_the_old_file(tmp_path):
    from pagekit.section import atomic_write

    path = tmp_path / "numbers.json"
    path.write_text("old")
    with pytest.raises(KeyboardInterrupt):
        with atomic_write(path) as out:
            out.write("half")
            raise KeyboardInterrupt
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["numbers.json"]
    with atomic_write(path) as out:
        out.write("new")
    assert path.read_text() == "new"
    assert path.stat().st_mode & 0o044, "readable by others, as any file the umask allows"


def test_claim_bound_words_come_from_the_threshold(tmp_path):
    s = make(tmp_path)
    assert not s.claim_bound("post-norm loss over var(y)", 0.95, ">=", 0.99, fmt=".2f")
    claim = s.claims[-1]
    assert (claim.statement, claim.detail) == ("post-norm loss over var(y) >= 0.99", "measured 0.95")


def test_failed_claim_names_run_and_measured_values(tmp_path):
    s = make(tmp_path, seed_offset=0)
    s.claim_bound("gap", 0.2, ">", 0.5)
    assert s.failed_claims() == ["gap > 0.5 [seed offset 0, variant pinned; measured 0.2]"]


def test_nice_limits_round_outward_to_two_digits():
    from pagekit.section import nice_limits

    assert nice_limits([0.0123456, 0.987654]) == (-0.04, 1.04)
    low, high = nice_limits([1.234e-7, 0.5], log=True)
    assert low <= 1.234e-7 and high >= 0.5 and f"{low:.2g}" == f"{low}" or len(f"{low:.2e}") > 0


def test_matplotlibrc_in_the_working_directory_changes_nothing(tmp_path):
    import subprocess
    import sys

    (tmp_path / "matplotlibrc").write_text("lines.linewidth: 9\nfont.size: 30\n")
    code = (
        "import pagekit.section, matplotlib; "
        "print(matplotlib.rcParams['lines.linewidth'], matplotlib.rcParams['font.size'])"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "MATPLOTLIBRC": str(tmp_path / "matplotlibrc")},
    )
    assert done.stdout.split() == ["1.8", "11.0"], done.stderr


def test_measurements_are_kept_for_the_same_inputs(tmp_path, monkeypatch):
    """`make -B figures` reruns a timing section without changing a byte: the
    committed measurements of the same inputs are reused unless REMEASURE."""
    from pagekit import cli

    s = Section(page="demo", name="timing", inputs_hash="abc")
    monkeypatch.setattr(Section, "numbers_path", property(lambda self: tmp_path / "timing.json"))
    (tmp_path / "timing.json").write_text(
        json.dumps(
            {
                "inputs_hash": "abc",
                "measured_on": {"cpu": "X"},
                "quotes": {"ms": {"value": 1.5, "text": "1.5", "measured": True}},
            }
        )
    )
    cli.keep_measurements(s)
    assert s.quote("ms", 9.9, ".1f", measured=True) == "1.5"
    monkeypatch.setenv("REMEASURE", "1")
    fresh = Section(page="demo", name="timing", inputs_hash="abc")
    cli.keep_measurements(fresh)
    assert fresh.quote("ms", 9.9, ".1f", measured=True) == "9.9"


def test_a_setting_left_out_of_a_list_skips_its_statements_and_says_so():
    """index_of finds a setting's place for the claims about it; a list a
    reader changed that lacks it gives None and a note, not an exception."""
    s = Section(page="demo", name="demo")
    rates = (0.001, 0.01, 0.1)
    assert s.index_of(rates, 0.01, "RATES") == 1
    assert s.untested == []
    assert s.index_of(rates, 0.03, "RATES") is None
    assert s.untested == ["RATES has no 0.03: the page's statements about it were not tested"]
