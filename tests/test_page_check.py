"""The page check: the real pages pass, and bad input is named precisely."""

from __future__ import annotations

import re
import json
import subprocess
import sys
from types import SimpleNamespace

import pytest

from pagekit import check_page
from pagekit.check_page import PageError, check_page as run_check, numbers_in
from pagekit.registry import page_config, page_packages
from conftest import page_ids


@pytest.mark.parametrize("package", page_packages(), ids=page_ids(page_packages()))
def test_real_page_matches_its_numbers(package):
    report = run_check(page_config(package))
    assert report.ok, "\n".join(report.lines())
    assert report.numbers_checked > 0


# --- a small fake page with one section and one script ----------------------

QUOTES = {
    "mean": {"value": 0.7733, "text": "0.7733", "rel_tol": 1e-9, "abs_tol": 0.0},
    "shift": {"value": -0.2, "text": "\u22120.20", "rel_tol": 1e-9, "abs_tol": 0.0},
    "share": {"value": 0.1821, "text": "18.21%", "rel_tol": 1e-9, "abs_tol": 0.0},
    "steps": {"value": 1304.0, "text": "1,304", "rel_tol": 1e-9, "abs_tol": 0.0, "unit": ["steps"]},
    "tiny": {"value": 4.2e-8, "text": "4.2 \u00d7 10\u207b\u2078", "rel_tol": 1e-9, "abs_tol": 0.0},
    "reach": {"value": 220.0, "text": "220", "rel_tol": 1e-9, "abs_tol": 0.0},
}


def pin(config, page, numbers) -> None:
    """What `make golden` does: pin which quote each prose number is."""
    try:
        binding = check_page.pinned_binding(config, page_path=page, numbers_dir=numbers)
    except PageError:
        return  # a malformed page: the test expects the error from the check itself
    (page.parent / "golden" / "page.json").write_text(json.dumps(binding))


def make_page(tmp_path, body: str, quotes=None, golden=None):
    numbers = tmp_path / "figures" / "numbers"
    numbers.mkdir(parents=True)
    (numbers / "demo.json").write_text(json.dumps({"quotes": quotes or QUOTES, "figures": []}))
    golden_dir = tmp_path / "golden"
    golden_dir.mkdir()
    if golden is not None:
        (golden_dir / "demo.json").write_text(json.dumps({"quotes": golden}))
    page = tmp_path / "page.md"
    page.write_text(body, encoding="utf-8")
    config = SimpleNamespace(
        __name__="demo_page",
        PAGE="demo",
        PAGE_FILE=str(page),
        SECTION_SCRIPTS={1: ("demo",)},
        SHARED_QUOTES=(),
        STRUCTURAL=(r"[Ss]ection (?P<n>\d)\b",),
    )
    # `make golden` pinned the page when the golden record was made.
    pinned_numbers = numbers
    if golden is not None:
        pinned_numbers = tmp_path / "pinned-numbers"
        pinned_numbers.mkdir()
        (pinned_numbers / "demo.json").write_text(json.dumps({"quotes": golden, "figures": []}))
    pin(config, page, pinned_numbers)
    return config, page, dict(page_path=page, numbers_dir=numbers, golden_dir=golden_dir)


ALL_USED = "All: 0.7733, −0.20, 18.21%, 1,304, 4.2 × 10⁻⁸ and 220 mm.\n"


def check(tmp_path, body, **kw):
    config, page, paths = make_page(tmp_path, body, **kw)
    return run_check(config, **paths)


def test_clean_page_passes_with_units_parentheses_signs_and_percentages(tmp_path):
    body = (
        "# Demo\n\n## 1. Scales\n\n"
        "Reach is 220 mm (mean 0.7733), a shift of −0.20, 18.21% of values,\n"
        "1,304 steps, a loss of 4.2 × 10⁻⁸, and $\\frac{1}{2} x^2 + 0.7733$. See section 1.\n"
    )
    report = check(tmp_path, body)
    assert report.ok, report.lines()
    assert report.numbers_checked == 7  # "section 1", the heading and 1, 2 in maths are structural


def test_unknown_number_is_named_with_line_and_nearest_quote(tmp_path):
    body = "# Demo\n\n## 1. Scales\n\n" + ALL_USED + "\nThe mean is\n0.7734 here.\n"
    report = check(tmp_path, body)
    assert not report.ok
    [line] = report.lines()
    assert line.startswith(f"{tmp_path / 'page.md'}:8: 0.7734 in section 1")
    assert "nearest printed: demo.mean = 0.7733" in line


def test_stale_number_names_old_and_new_and_fix_applies_it(tmp_path):
    golden = dict(QUOTES, mean={**QUOTES["mean"], "value": 0.7, "text": "0.7000"})
    body = "# Demo\n\n## 1. Scales\n\n" + ALL_USED.replace("0.7733", "0.7000")
    config, page, paths = make_page(tmp_path, body, golden=golden)
    report = run_check(config, **paths)
    [finding] = [f for f in report.findings if f.line is not None]
    assert finding.line == 5
    assert "stale number 0.7000 in section 1: demo.mean was 0.7000, now 0.7733" in finding.message
    assert check_page.apply_fixes(page, report.findings) == 1
    assert "0.7733" in page.read_text()
    assert run_check(config, **paths).ok


def test_numbers_in_code_and_link_targets_are_skipped(tmp_path):
    body = (
        "# Demo\n\n## 1. Scales\n\n"
        + ALL_USED
        + "Run `lr = 0.5` or see [the data](https://example.org/v2/999.html).\n\n"
        "```python\nprint(12345)\n```\n"
        "![a plot](figures/fig_77.svg)\n"
    )
    # The image's only finding is the caption rule's (it declares no `% figure says`), none about a number.
    lines = check(tmp_path, body).lines()
    assert [line for line in lines if "declares nothing its caption and alt text must both say" not in line] == []


def test_unused_quote_is_reported(tmp_path):
    body = "# Demo\n\n## 1. Scales\n\n" + ALL_USED.replace(" and 220 mm", "")
    report = check(tmp_path, body)
    [line] = report.lines()
    assert "demo.reach (220) is used nowhere" in line


def test_unclosed_code_fence_is_an_error_with_its_line(tmp_path):
    body = "# Demo\n\n## 1. Scales\n\n" + ALL_USED + "\n```python\nx = 1\n"
    with pytest.raises(PageError, match=r"page.md:7: code fence '```' opened here is never closed"):
        check(tmp_path, body)


def test_missing_numbers_file_says_run_make_figures(tmp_path):
    config, page, paths = make_page(tmp_path, "# Demo\n\n## 1. Scales\n\n" + ALL_USED)
    (paths["numbers_dir"] / "demo.json").unlink()
    with pytest.raises(PageError, match=r"demo.json: the numbers of demo is missing: run `make figures` first"):
        run_check(config, **paths)


def test_malformed_numbers_file_is_named(tmp_path):
    config, page, paths = make_page(tmp_path, "# Demo\n\n## 1. Scales\n\n" + ALL_USED)
    (paths["numbers_dir"] / "demo.json").write_text("{not json")
    with pytest.raises(PageError, match=r"demo.json:1: the numbers of demo is not valid JSON"):
        run_check(config, **paths)


@pytest.mark.parametrize(
    "heading, message",
    [
        ("## Scales", "must be a numbered section"),
        ("## 2. Other", "section 2 has no entry in SECTION_SCRIPTS"),
    ],
)
def test_malformed_sections_are_errors(tmp_path, heading, message):
    with pytest.raises(PageError, match=message):
        check(tmp_path, f"# Demo\n\n{heading}\n\nText.\n")


def test_duplicate_section_is_an_error(tmp_path):
    with pytest.raises(PageError, match=r"page.md:7: section 1 appears twice \(first at line 3\)"):
        check(tmp_path, "# Demo\n\n## 1. A\n\n" + ALL_USED + "\n## 1. B\n")


def test_command_line_exit_codes(tmp_path):
    """Exit 1 for mismatches, 2 for bad input, with the message on the terminal."""
    draft = tmp_path / "draft.md"
    draft.write_text("## 2. Layer normalisation and RMS normalisation\n\nA mean of 0.7734.\n")
    done = subprocess.run(
        [sys.executable, "-m", "pagekit.check_page", "normalisation_and_stability", "--section-draft", "2", str(draft)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1
    assert "draft.md:3: 0.7734 in section 2" in done.stdout
    assert "nearest printed: norm_worked_vector.ln_mean = 0.7733" in done.stdout
    draft.write_text("## 2. Layer normalisation\n\n```\nunclosed\n")
    done = subprocess.run(
        [sys.executable, "-m", "pagekit.check_page", "normalisation_and_stability", "--section-draft", "2", str(draft)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    assert "never closed" in done.stderr


@pytest.mark.parametrize(
    "text, expected",
    [
        ("a spread of 0.1555.", ["0.1555"]),
        ("−0.59 and -1.8244", ["−0.59", "-1.8244"]),
        ("65,504 and 1,000,000 steps", ["65,504", "1,000,000"]),
        ("3.403e+38, 6e-08 and 2^-24", ["3.403e+38", "6e-08", "2^-24"]),
        ("(18.21%) of 400,000", ["18.21%", "400,000"]),
        ("float16, bfloat16, x_3, v1.2", []),
        ("0.08–0.62 m", ["0.08", "0.62"]),
    ],
)
def test_number_extraction(text, expected):
    assert [m.group() for m in numbers_in(text)] == expected


def test_non_numeric_quote_drawn_in_a_figure_counts_as_used(tmp_path):
    quotes = dict(QUOTES, held={"value": float("inf"), "text": "inf", "rel_tol": 1e-9, "abs_tol": 0.0})
    config, page, paths = make_page(tmp_path, "# Demo\n\n## 1. Scales\n\n" + ALL_USED, quotes=quotes)
    record = json.loads((paths["numbers_dir"] / "demo.json").read_text())
    assert [f.message for f in run_check(config, **paths).findings] == [
        "demo.held (inf) is used nowhere: not in the prose of section 1 or its figures; quote it or stop registering it"
    ]
    (tmp_path / "figures" / "held.svg").write_text("<svg><!-- float16 holds inf --></svg>")
    record["figures"] = ["held.svg"]
    (paths["numbers_dir"] / "demo.json").write_text(json.dumps(record))
    assert run_check(config, **paths).ok


# --- broken pages and bad input (each one clear line, the right exit code) ---

BODY = "# Demo\n\n## 1. Scales\n\n" + ALL_USED


@pytest.mark.parametrize(
    "body, message",
    [
        ("", "section(s) 1 missing"),
        ("# Demo\n\nIntro only.\n", "section(s) 1 missing"),
        ("# Demo\n\n## 1. Scales\n\n", "section 1 has no prose"),
        ("# Demo\n\n```\n## 1. Scales\n\n" + ALL_USED + "```\n", "a section heading inside the code fence"),
        (BODY + "\n    Indented 0.7733 and 9.99.\n", "an indented code block"),
        (BODY + "\n```{dropdown} Answer\n0.7733\n```\n", "write {dropdown} with a colon fence"),
    ],
)
def test_broken_structure_is_refused(tmp_path, body, message):
    with pytest.raises(PageError, match=re.escape(message)):
        check(tmp_path, body)


def test_numbers_in_maths_and_figure_captions_are_checked(tmp_path):
    body = BODY + "\n$x = 0.7734$\n\n:::{figure} fig.svg\n:name: fig-a\n:alt: a 9.99 plot\n\nCaption 1.5.\n:::\n"
    lines = check(tmp_path, body).lines()
    assert any("0.7734 in section 1 (in maths)" in l for l in lines)
    assert any(":11: 9.99 in section 1" in l for l in lines)
    assert any(":13: 1.5 in section 1" in l for l in lines)


def test_number_style_is_enforced(tmp_path):
    quotes = dict(
        QUOTES,
        big={"value": 20250628, "text": "20250628", "rel_tol": 1e-9, "abs_tol": 0.0},
        neg={"value": -1.77, "text": "-1.77", "rel_tol": 1e-9, "abs_tol": 0.0},
    )
    lines = check(tmp_path, BODY + "Also 20250628 steps and -1.77.\n", quotes=quotes).lines()
    assert any("write thousands separators: 20,250,628" in l for l in lines)
    assert any("write the minus sign: −1.77" in l for l in lines)


def test_swapped_numbers_and_a_dropped_sign_break_the_pinned_binding(tmp_path):
    config, page, paths = make_page(tmp_path, BODY)
    page.write_text(BODY.replace("0.7733, −0.20", "−0.20, 0.7733"))
    assert any("is not the number pinned at this place" in l for l in run_check(config, **paths).lines())
    quotes = dict(QUOTES, unsigned={"value": 0.2, "text": "0.20", "rel_tol": 1e-9, "abs_tol": 0.0})
    config, page, paths = make_page(tmp_path / "b", BODY + "Its size is 0.20.\n", quotes=quotes)
    page.write_text((BODY + "Its size is 0.20.\n").replace("−0.20", "0.20"))
    assert any("is not the number pinned at this place" in l for l in run_check(config, **paths).lines())


BACKS = '\n% backs demo:collapse "Post-norm collapsed"\n'


def test_a_reversed_direction_word_fails_its_backing_claim(tmp_path):
    config, page, paths = make_page(tmp_path, BODY + "Post-norm collapsed at 0.7733.\n" + BACKS)
    record = json.loads((paths["numbers_dir"] / "demo.json").read_text())
    record["claims"] = [{"statement": "post-norm collapses", "holds": True, "key": "collapse"}]
    (paths["numbers_dir"] / "demo.json").write_text(json.dumps(record))
    assert run_check(config, **paths).ok
    page.write_text(BODY + "Post-norm survived at 0.7733.\n" + BACKS)
    assert any("no longer says 'Post-norm collapsed'" in l for l in run_check(config, **paths).lines())


def test_a_backs_line_must_name_a_claim_of_its_section(tmp_path):
    config, page, paths = make_page(tmp_path, BODY + "Post-norm collapsed at 0.7733.\n" + BACKS)
    record = json.loads((paths["numbers_dir"] / "demo.json").read_text())
    record["claims"] = [{"statement": "post-norm collapses", "holds": True, "key": "collapses"}]
    (paths["numbers_dir"] / "demo.json").write_text(json.dumps(record))
    assert any(
        "demo has no claim with key 'collapse' (did you mean 'collapses'?)" in l
        for l in run_check(config, **paths).lines()
    )
    page.write_text(BODY + "Post-norm collapsed at 0.7733.\n" + BACKS.replace("demo:", "other:"))
    assert any("other is not a script of section 1" in l for l in run_check(config, **paths).lines())
    page.write_text(BODY + "Post-norm collapsed at 0.7733.\n\n% backs demo:collapses Post-norm collapsed\n")
    with pytest.raises(check_page.PageError, match="a backs line reads"):
        run_check(config, **paths)
    # A phrase quoting maths needs its backslashes doubled; a single one is named, not a crash.
    page.write_text(BODY + 'Post-norm collapsed at 0.7733.\n\n% backs demo:collapses "$\\hat{x}$ collapsed"\n')
    with pytest.raises(check_page.PageError, match=r"page.md:\d+: a backs line's phrase is not a valid quoted string"):
        run_check(config, **paths)


def test_a_backs_line_is_not_prose(tmp_path):
    """Its phrases and numbers are not read as the page's prose (MyST does not render it)."""
    config, page, paths = make_page(tmp_path, BODY + '\n% backs demo:collapse "it fell at 12.5"\n')
    assert not any("12.5" in l for l in run_check(config, **paths).lines())


@pytest.mark.parametrize(
    "record, message",
    [
        ([], "not a numbers record"),
        ({}, "not a numbers record"),
        ({"quotes": {"a": [1, 2]}}, 'quote \'a\' has no "value" and "text"'),
        ({"quotes": {"a": {"value": 1, "text": None}}}, '"text" must be a string'),
        ({"quotes": QUOTES, "seed_offset": 1}, "made at seed offset 1, not by the page's own run"),
        ({"quotes": QUOTES, "variant": "openblas-prescott"}, "numeric variant openblas-prescott"),
    ],
)
def test_bad_numbers_files_are_one_line_errors(tmp_path, record, message):
    config, page, paths = make_page(tmp_path, BODY)
    (paths["numbers_dir"] / "demo.json").write_text(json.dumps(record))
    with pytest.raises(PageError, match=re.escape(message)):
        run_check(config, **paths)


def test_non_utf8_page_names_line_and_byte(tmp_path):
    config, page, paths = make_page(tmp_path, BODY)
    page.write_bytes(BODY.encode() + b"caf\xe9\n")
    with pytest.raises(PageError, match=r"page.md:6: byte 4 of the line is not UTF-8"):
        run_check(config, **paths)


def test_fix_keeps_line_endings_and_writes_only_when_needed(tmp_path):
    golden = dict(QUOTES, mean={**QUOTES["mean"], "value": 0.7, "text": "0.7000"})
    body = ("# Demo\n\n## 1. Scales\n\nSee `a\nb` then\n" + ALL_USED.replace("0.7733", "0.7000")).replace("\n", "\r\n")
    config, page, paths = make_page(tmp_path, body, golden=golden)
    page.write_bytes(body.encode())
    report = run_check(config, **paths)
    [finding] = [f for f in report.findings if f.fix]
    assert finding.line == 7, "the line after a code span that spans two lines"
    assert check_page.apply_fixes(page, report.findings) == 1
    assert page.read_bytes() == body.replace("0.7000", "0.7733").encode(), "CRLF kept"
    before = page.stat().st_mtime_ns
    assert check_page.apply_fixes(page, run_check(config, **paths).findings) == 0
    assert page.stat().st_mtime_ns == before, "nothing to fix: the page is not rewritten"


@pytest.mark.parametrize(
    "args, code, message",
    [
        (["os"], 2, "error: no page named 'os'"),
        (["normalisation-and-stability", "--section-draft", "x", "y"], 2, "must be a section number"),
    ],
)
def test_command_line_bad_input(args, code, message):
    done = subprocess.run([sys.executable, "-m", "pagekit.check_page", *args], capture_output=True, text=True)
    assert done.returncode == code and message in done.stderr, done.stderr
