"""The wording check (docs/diagrams/wording.py), on a small fake page: each
rule passes the evidence it asks for and names file, line, word and the
missing evidence when it is not there."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from pagekit import check_page
from pagekit import wording

Q = {"value": 0.0, "rel_tol": 1e-9, "abs_tol": 0.0}
QUOTES = {
    "low": {**Q, "value": 2.15, "text": "2.150", "unit": ["nats per character"], "run": ["pre-norm"]},
    "high": {**Q, "value": 3.33, "text": "3.330", "unit": ["nats per character"], "run": ["post-norm"]},
    "ratio": {**Q, "value": 1304.0, "text": "1,304", "unit": ["times bigger"]},
    "bound": {**Q, "value": 3e-7, "text": "1 × 10⁻⁶"},  # a loss printed as the power of ten above it
    "rate": {**Q, "value": 0.01, "text": "0.01"},
}
CLAIMS = [
    {
        "statement": "pre-norm ends below post-norm",
        "holds": True,
        "every_seed": True,
        "backs": ["pre-norm ends below post-norm"],
    },
    {
        "statement": "on the page's run pre-norm leads",
        "holds": True,
        "every_seed": False,
        "backs": ["on this run pre-norm leads"],
    },
]
HEAD = "# Demo\n\n## 1. Runs\n\n"


def keyed(i: int, claim: dict) -> dict:
    """The claim as its script records it: a key, no phrases (they are the page's)."""
    return {**{k: v for k, v in claim.items() if k != "backs"}, "key": f"claim-{i}"}


def backs_lines(claims: list[dict]) -> str:
    """The page's `% backs` lines for the phrases the test's claims back."""
    lines = [
        f"% backs demo:claim-{i} " + " ".join(json.dumps(p) for p in c["backs"])
        for i, c in enumerate(claims)
        if c.get("backs")
    ]
    return "\n" + "\n".join(lines) + "\n" if lines else ""


FIGURE = (
    "\n:::{figure} ../figures/demo/demo_curves.svg\n:alt: Loss curves; pre-norm ends below post-norm\n\n"
    "The two runs.\n:::\n"
)


def check(tmp_path, body, *, claims=CLAIMS, held=True, allow="", caption_phrases=None, derived=False, listed=None):
    """Check a one-section page whose script registers QUOTES and ``claims``;
    the robustness report says every claim held everywhere (``held``), or,
    unless ``listed``, does not list them (a ``derived`` section, computed
    from the report, is not in it)."""
    numbers = tmp_path / "figures" / "numbers"
    numbers.mkdir(parents=True, exist_ok=True)
    body += backs_lines(claims)
    record = {"quotes": QUOTES, "claims": [keyed(i, c) for i, c in enumerate(claims)], "figures": []}
    if caption_phrases:
        record["caption_phrases"] = caption_phrases
    (numbers / "demo.json").write_text(json.dumps(record))
    report = {
        "sections": {
            "demo": {
                "claims": [
                    {
                        "statement": c["statement"],
                        "every_seed": c["every_seed"],
                        "holds": {"seed 0": True, "seed 1": held, "torch-default": True},
                    }
                    for c in claims
                ]
            }
        }
    }
    if not (listed if listed is not None else not derived):
        report = {"sections": {}}
    (numbers.parent / "robustness.json").write_text(json.dumps(report))
    allowlist = tmp_path / "allow.toml"
    allowlist.write_text(allow)
    page = tmp_path / "page.md"
    page.write_text(HEAD + body, encoding="utf-8")
    config = SimpleNamespace(
        __name__="demo_page",
        PAGE="demo",
        PAGE_FILE=str(page),
        SECTION_SCRIPTS={1: ("demo",)},
        SHARED_QUOTES=(),
        STRUCTURAL=(),
        DERIVED_SECTIONS=("demo",) if derived else (),
    )
    golden = tmp_path / "golden"
    golden.mkdir(exist_ok=True)
    (golden / "page.json").write_text(
        json.dumps(check_page.pinned_binding(config, page_path=page, numbers_dir=numbers))
    )
    lines = check_page.check_page(
        config, page_path=page, numbers_dir=numbers, golden_dir=golden, allowlist_path=allowlist
    ).lines()
    # The page check's other rules (each backed phrase present, each quote used) are tested elsewhere.
    return [line for line in lines if "is used nowhere" not in line and " no longer says " not in line]


def test_backed_verified_and_declared_words_pass(tmp_path):
    body = (
        "Both start alike, and pre-norm ends below post-norm. Pre-norm ends at 2.150, lower than post-norm's 3.330.\n"
        "The reach numbers are 1,304 times bigger. The loss ends below 1 × 10⁻⁶ at 0.01.\n"
        "And on this run pre-norm leads.\n"
    )
    assert check(tmp_path, body) == []


def test_a_flipped_direction_word_is_named_with_its_line(tmp_path):
    lines = check(tmp_path, "Pre-norm ends at 2.150, higher than post-norm's 3.330.\n")
    [line] = lines
    assert line.startswith(f"{tmp_path / 'page.md'}:5: a direction word 'higher' in section 1")
    assert "the quotes say the opposite: 2.150 is smaller than 3.330" in line


def test_a_direction_word_without_evidence_fails(tmp_path):
    [line] = check(tmp_path, "At 0.01 post-norm does better.\n")
    assert ":5: a direction word 'better' in section 1" in line and "no claim backs the phrase" in line


def test_a_bound_stated_the_wrong_way_fails(tmp_path):
    [line] = check(tmp_path, "The loss ends above 1 × 10⁻⁶ at 0.01.\n")
    assert "a direction word 'above'" in line


def test_a_ratio_restated_the_other_way_fails_on_its_unit(tmp_path):
    lines = check(tmp_path, "The reach numbers are 1,304 times smaller.\n")
    assert any(
        "1,304 in section 1 is followed by the unit 'times smaller', but it is demo.ratio, in 'times bigger'" in line
        for line in lines
    ), lines


def test_a_changed_unit_fails(tmp_path):
    [line] = check(tmp_path, "Pre-norm ends at 2.150 bits per character.\n")
    assert ":5: 2.150 in section 1 is followed by the unit 'bits per character'" in line
    assert "in 'nats per character'" in line


def test_a_number_attributed_to_the_wrong_run_fails(tmp_path):
    [line] = check(tmp_path, "Post-norm ends at 2.150.\n")
    assert (
        ":5: 2.150 in section 1 is demo.low, a number of the 'pre-norm' run, but its sentence names only "
        "post-norm" in line
    )
    assert check(tmp_path, "Pre-norm ends at 2.150 and post-norm at 3.330.\n") == []


def test_scope_words_need_an_every_seed_claim_that_held_everywhere(tmp_path):
    general = "At every seed pre-norm ends below post-norm, at 2.150 against 3.330.\n"
    claims = [{**CLAIMS[0], "backs": ["At every seed pre-norm ends below post-norm"]}]
    assert check(tmp_path, general, claims=claims) == []
    [line] = check(tmp_path, general, claims=claims, held=False)
    assert "a scope word 'At every seed'" in line and "did not hold in every run of the robustness report" in line
    one_run = [{**claims[0], "every_seed": False}]
    [line] = check(tmp_path, general, claims=one_run)
    assert "is about the page's run only (every_seed=False)" in line


def test_a_derived_sections_holding_claim_backs_scope_words(tmp_path):
    """A section computed from the robustness report (across seeds) is not
    in the report; its claim is the report's verdict, so it backs a scope
    word while it holds, and not once it fails."""
    general = "At every seed pre-norm ends below post-norm, at 2.150 against 3.330.\n"
    claims = [{**CLAIMS[0], "backs": ["At every seed pre-norm ends below post-norm"]}]
    assert check(tmp_path, general, claims=claims, derived=True) == []
    [line] = check(tmp_path, general, claims=[{**claims[0], "holds": False}], derived=True)
    assert "a scope word 'At every seed'" in line
    [line] = check(tmp_path, general, claims=claims, listed=False)  # not derived: the report must list it
    assert "is not in the robustness report" in line


def test_one_run_words_need_a_claim(tmp_path):
    [line] = check(tmp_path, "On this run post-norm stalls.\n")
    assert "a one-run word 'On this run'" in line and "no phrase around it is backed by a claim" in line


def test_the_allowlist_covers_a_phrase_and_an_unused_entry_fails(tmp_path):
    entry = '[[allow]]\npage = "demo"\nphrase = "post-norm does better"\nreason = "a test"\n'
    assert check(tmp_path, "At 0.01 post-norm does better.\n", allow=entry) == []
    [line] = check(tmp_path, "Nothing to allow.\n", allow=entry)
    assert "allow.toml: the entry 'post-norm does better' (demo) covers no word the check would flag" in line


def test_a_pending_section_is_counted_not_failed(tmp_path):
    pending = '[[pending]]\npage = "demo"\nsections = [1]\nreason = "a test"\n'
    assert check(tmp_path, "At 0.01 post-norm does better.\n", allow=pending) == []


def test_a_figure_must_say_its_declared_caption_phrases(tmp_path):
    phrases = {"demo_curves.svg": ["pre-norm ends below post-norm"]}
    assert check(tmp_path, "Both runs." + FIGURE, caption_phrases=phrases) == []
    opposite = FIGURE.replace("ends below", "ends above")
    lines = check(tmp_path, "Both runs." + opposite, caption_phrases=phrases)
    assert any(
        "the caption and alt text of demo_curves.svg no longer say 'pre-norm ends below post-norm'" in line
        for line in lines
    ), lines
    unbacked = {"demo_curves.svg": ["The two runs"]}
    assert any(
        "is backed by no claim" in line for line in check(tmp_path, "Both runs." + FIGURE, caption_phrases=unbacked)
    )


@pytest.mark.parametrize(
    "text, expected",
    [
        ("not at every seed", ["one_run"]),
        ("neither always wins", []),
        ("with every seed shifted by one", []),
        ("held at every seed and under every kernel", ["general", "general"]),
    ],
)
def test_the_vocabulary_reads_negation_and_method(text, expected):
    assert [o.kind for o in wording.find_occurrences(text)] == expected
