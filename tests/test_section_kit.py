"""The shared section machinery refuses bad quotes and failed claims."""

from __future__ import annotations

import json
import math
import types

import numpy as np
import pytest

from section_kit import ClaimsFailed, QuoteError, Section, run_section


def make(tmp_path, **kw) -> Section:
    return Section(page="demo", name="demo", out_dir=tmp_path, echo=False, **kw)


def test_quote_prints_name_and_text(tmp_path, capsys):
    s = Section(page="demo", name="demo", out_dir=tmp_path)
    assert s.quote("steps", 1304, ",d") == "1,304"
    assert s.quote("row", [0.5, -1.25], ".2f") == ["0.50", "-1.25"]
    assert capsys.readouterr().out == "steps  1,304\nrow[0]  0.50\nrow[1]  -1.25\n"


@pytest.mark.parametrize("value, message", [
    (math.nan, "is NaN"),
    (math.inf, "is infinite"),
    ([1.0, math.nan], "is NaN"),
    (np.ones((2, 2)), "scalar or a 1-D vector"),
])
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
    assert make(tmp_path).quote("held", [1e5, math.inf], ".0f", allow_inf=True) == ["100000", "inf"]


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
    with pytest.raises(ClaimsFailed, match="failing: claim failed: post-norm collapses at lr 0.01"):
        run_section(FailingSection, out_dir=tmp_path)
    assert not (tmp_path / "numbers").exists(), "a failed section must not write its numbers"


def test_numbers_file_is_written_whole(tmp_path):
    s = make(tmp_path)
    s.quote("x", 0.25, ".2f")
    path = s.write_numbers()
    assert json.loads(path.read_text())["quotes"]["x"] == {
        "value": 0.25, "text": "0.25", "rel_tol": 1e-9, "abs_tol": 0.0}
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
        "statement": "pre-norm is ahead at lr 0.001", "holds": False, "detail": "", "every_seed": False}

    def fails_on_page_run(section):
        page_run_compute(section)
        section.claim("the page's own ordering", False, every_seed=False)

    module.compute = fails_on_page_run
    with pytest.raises(ClaimsFailed, match="the page's own ordering"):
        run_section(module, out_dir=tmp_path, figures=False, write=False)


def test_interrupted_write_keeps_the_old_file(tmp_path):
    from section_kit import atomic_write

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
