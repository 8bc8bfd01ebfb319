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
    "largest_gap": {**Q, "value": 0.9, "text": "0.900"},
    "warmup_steps": {**Q, "value": 50.0, "text": "50", "unit": ["steps"]},
    "ms_layer": {**Q, "value": 94.2, "text": "94.2", "unit": ["ms"]},
    "fraction_steps": {**Q, "value": 100.0, "text": "100"},  # its name says steps, but it declares no unit
    "spread": {**Q, "value": 0.25, "text": "0.250"},
    "final": {**Q, "value": [2.4, 1.9, 2.2], "text": ["2.400", "1.900", "2.200"]},
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
    '\n% figure says "pre-norm ends below post-norm"\n'
    ":::{figure} ../figures/demo/demo_curves.svg\n:alt: Loss curves; pre-norm ends below post-norm\n\n"
    "The two runs: pre-norm ends below post-norm.\n:::\n"
)


def check(
    tmp_path,
    body,
    *,
    claims=CLAIMS,
    held=True,
    allow="",
    caption_phrases=None,
    derived=False,
    listed=None,
    pin_allowlist=True,
):
    """Check a one-section page whose script registers QUOTES and ``claims``;
    the robustness report says every claim held everywhere (``held``), or,
    unless ``listed``, does not list them (a ``derived`` section, computed
    from the report, is not in it). The golden record pins the allowlist
    unless ``pin_allowlist`` is false (an entry added after `make golden`)."""
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
    pinned = check_page.pinned_binding(
        config, page_path=page, numbers_dir=numbers, allowlist_path=allowlist if pin_allowlist else tmp_path / "none"
    )
    (golden / "page.json").write_text(json.dumps(pinned))
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


@pytest.mark.parametrize(
    "sentence, word",
    [
        ("Here post-norm ended far above pre-norm.", "direction word 'above'"),  # no number in the sentence
        ("Pre-norm ends at 2.150; after that, warmup helped post-norm.", "direction word 'helped'"),  # a clause away
        ("The learning rate is not to blame.", "negation 'not'"),
        ("Post-norm ends at 3.330, and the warmup did not change that.", "negation 'not'"),
    ],
)
def test_a_word_away_from_any_number_still_needs_evidence(tmp_path, sentence, word):
    [line] = check(tmp_path, sentence + "\n")
    assert f":5: a {word} in section 1" in line and "no claim backs the phrase" in line


@pytest.mark.parametrize(
    "text, flagged",
    [
        ("the error times that weight's input", []),  # a product
        ("the next page times nn.RMSNorm", []),  # a verb
        ("a thousand times smaller", ["times", "smaller"]),
        ("thousands of times the usual size", ["times"]),
        ("we compute the gradients twice", []),
        ("twice as far per step", ["twice"]),
        ("the intercept no longer mixes", []),
        ("a longer step", ["longer"]),
        ("as we measure it below.", []),
        ("the table above sets it", []),
        ("the replay (below) assumes", []),
        ("the stream ends above the line", ["above"]),
        ("the scores below 3 are", ["below"]),
    ],
)
def test_spellings_that_compare_nothing_are_not_direction_words(text, flagged):
    assert [m.group() for m in wording.direction_words(text)] == flagged


def test_two_runs_named_in_one_sentence_each_read_their_own_number(tmp_path):
    assert check(tmp_path, "Pre-norm ends at 2.150 and post-norm at 3.330.\n") == []
    assert check(tmp_path, "It ends at 2.150 with pre-norm and 3.330 with post-norm.\n") == []
    lines = check(tmp_path, "Post-norm ends at 2.150 and pre-norm at 3.330.\n")
    assert any("2.150 in section 1 is demo.low" in l and "its clause reads it under post-norm" in l for l in lines)
    assert any("3.330 in section 1 is demo.high" in l and "its clause reads it under pre-norm" in l for l in lines)
    # a list after one name is not read under it
    assert check(tmp_path, "Pre-norm ends at 2.150, against 3.330 for post-norm.\n") == []


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


@pytest.mark.parametrize(
    "table, message",
    [
        (
            '[[pending]]\npage = "demo"\nsections = [1]\nreason = "a test"\n',
            "only \\[\\[allow\\]\\] entries belong here",
        ),
        ('[[unit]]\npage = "demo"\nquote = "demo.spread"\nunit = "steps"\nreason = "a test"\n', "declare the unit"),
    ],
)
def test_the_allowlist_holds_phrases_only_no_section_or_unit_passes(tmp_path, table, message):
    """No table may excuse a whole section or a unit: a unit is declared on
    its quote, and every word of a section with scripts is checked."""
    with pytest.raises(check_page.PageError, match=message):
        check(tmp_path, "At 0.01 post-norm does better.\n", allow=table)


def test_a_figure_must_say_its_declared_caption_phrases(tmp_path):
    phrases = {"demo_curves.svg": ["pre-norm ends below post-norm"]}
    assert check(tmp_path, "Both runs." + FIGURE, caption_phrases=phrases) == []
    opposite = FIGURE.replace("Loss curves; pre-norm ends below", "Loss curves; pre-norm ends above")
    lines = check(tmp_path, "Both runs." + opposite, caption_phrases=phrases)
    assert any(
        "the alt text of demo_curves.svg no longer say 'pre-norm ends below post-norm'" in line for line in lines
    ), lines
    unbacked = {"demo_curves.svg": ["The two runs"]}
    assert any(
        "is backed by no claim" in line for line in check(tmp_path, "Both runs." + FIGURE, caption_phrases=unbacked)
    )


def test_caption_and_alt_text_must_both_say_the_declared_phrase(tmp_path):
    """A `% figure says` phrase missing from the caption, or from the alt
    text, is named with the place it is missing from: one of the two can no
    longer say the opposite of the other (issue 44, kind 5)."""
    caption_flipped = FIGURE.replace("The two runs: pre-norm ends below", "The two runs: pre-norm ends above")
    lines = check(tmp_path, "Both runs." + caption_flipped)
    assert any("the caption of demo_curves.svg no longer say 'pre-norm ends below post-norm'" in l for l in lines), (
        lines
    )
    both = caption_flipped.replace("Loss curves; pre-norm ends below", "Loss curves; pre-norm ends above")
    lines = check(tmp_path, "Both runs." + both)
    assert any("the caption and the alt text of demo_curves.svg no longer say" in l for l in lines), lines


def test_every_figure_declares_what_caption_and_alt_text_say(tmp_path):
    undeclared = FIGURE.replace('% figure says "pre-norm ends below post-norm"\n', "")
    lines = check(tmp_path, "Both runs." + undeclared)
    assert any("figure demo_curves.svg declares nothing its caption and alt text must both say" in l for l in lines)
    unbacked = FIGURE.replace('says "pre-norm ends below post-norm"', 'says "The two runs"')
    assert any("'The two runs'" in l and "is backed by no claim" in l for l in check(tmp_path, "Both runs." + unbacked))


@pytest.mark.parametrize(
    "body, message",
    [
        ('Both runs.\n\n% figure says "pre-norm ends below post-norm"\n', "with no {figure} after it"),
        (
            '% figure says "pre-norm ends below post-norm"\n\nA paragraph between.\n' + FIGURE.split("\n", 2)[2],
            "stands just above the {figure} it describes",
        ),
        ("% figure says pre-norm ends below\n" + FIGURE.split("\n", 2)[2], "a figure-says line reads"),
    ],
)
def test_a_figure_says_line_stands_just_above_its_figure(tmp_path, body, message):
    with pytest.raises(check_page.PageError, match=message.replace("{", r"\{").replace("}", r"\}")):
        check(tmp_path, body)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("not at every seed", ["one_run"]),
        # "neither always" is no scope; "neither" is a negation
        ("neither always wins", ["negation"]),
        # causal words, by their inflections, and the noun that looks like one (issue 44, kind 4)
        ("it diverged because the changes multiply", ["cause"]),
        ("the probe showed that the surface is smoother", ["cause"]),
        ("the figure shows the loss", []),
        ("it gives the same result in both batches", []),
        ("which led to a spike", ["cause"]),
        ("with every seed shifted by one", []),
        ("held at every seed and under every kernel", ["general", "general"]),
    ],
)
def test_the_vocabulary_reads_negation_and_method(text, expected):
    assert [o.kind for o in wording.find_occurrences(text)] == expected


# --- issue 44: direction verbs and superlatives, scope words, units, the allowlist ---


@pytest.mark.parametrize(
    "form, lemma",
    [
        ("rose", "rise"),
        ("risen", "rise"),
        ("fell", "fall"),
        ("grown", "grow"),
        ("grew", "grow"),
        ("raises", "raise"),
        ("lowered", "lower"),
        ("helps", "help"),
        ("hurts", "hurt"),
        ("improves", "improve"),
        ("higher", "high"),
        ("highest", "high"),
        ("biggest", "big"),
        ("fastest", "fast"),
        ("slowest", "slow"),
        ("best", "good"),
        ("worst", "bad"),
    ],
)
def test_the_direction_vocabulary_is_built_from_inflections(form, lemma):
    assert wording.VOCABULARY[form].lemma == lemma
    assert [o.word for o in wording.find_occurrences(f"it {form} 2")] == [form]


def test_a_verb_of_change_is_checked_against_both_ends(tmp_path):
    assert check(tmp_path, "The loss rises from 2.150 to 3.330 at 0.01.\n") == []
    [line] = check(tmp_path, "The loss falls from 2.150 to 3.330 at 0.01.\n")
    assert ":5: a direction word 'falls' in section 1: the quotes say the opposite: from 2.150 to 3.330 goes up" in line
    [line] = check(tmp_path, "The loss rose to 3.330 and fell back to 2.150, then grew to 3.330 again.\n")
    assert "a direction word 'grew'" not in line and "'fell'" not in line  # each from where the last change ended
    assert "a direction word 'rose'" in line and "no claim backs the phrase" in line  # no start quoted


def test_a_superlative_is_checked_against_what_its_quote_is(tmp_path):
    assert check(tmp_path, "The largest gap is 0.900.\n") == []
    [line] = check(tmp_path, "The smallest gap is 0.900.\n")
    assert "a direction word 'smallest' in section 1: the quotes say the opposite: 0.900 is demo.largest_gap" in line
    assert check(tmp_path, "The lowest final loss is 1.900.\n") == []  # the smallest of its vector
    [line] = check(tmp_path, "The best final loss is 1.900.\n")  # better or worse: the values cannot say
    assert "a direction word 'best'" in line and "no claim backs the phrase" in line


def test_scope_words_beyond_every_seed_are_read(tmp_path):
    for text in (
        "At each seed",
        "across seeds",
        "consistently",
        "reliably",
        "regardless of the seed",
        "in all three seeds",
        "across all three seeds",
    ):
        found = wording.find_occurrences(f"{text} pre-norm trains")
        assert [(o.kind, o.word) for o in found] == [("general", text)], text
    [line] = check(tmp_path, "Consistently, pre-norm ends below post-norm, at 2.150 against 3.330.\n")
    assert ":5: a scope word 'Consistently' in section 1" in line and "every-seed claim" in line
    claims = [{**CLAIMS[0], "backs": ["Regardless of the seed pre-norm ends below post-norm"]}]
    body = "Regardless of the seed pre-norm ends below post-norm, at 2.150 against 3.330.\n"
    assert check(tmp_path, body, claims=claims) == []
    [line] = check(tmp_path, body, claims=[{**claims[0], "every_seed": False}])
    assert "a scope word 'Regardless of the seed'" in line and "(every_seed=False)" in line


def test_a_link_to_a_section_is_its_name_not_a_claim(tmp_path):
    assert check(tmp_path, "[Across three seeds](#2-across-three-seeds) gives 2.150.\n") == []
    [line] = check(tmp_path, "[Across three seeds](https://example.org) gives 2.150.\n")
    assert "a scope word 'Across three seeds'" in line


def test_a_unit_word_after_a_quote_that_declares_none_fails(tmp_path):
    [line] = check(tmp_path, "The spread is 0.250 steps.\n")
    assert ":5: 0.250 in section 1 is followed by the unit 'steps', but it is demo.spread, and declares no unit" in line
    assert check(tmp_path, "Warmup lasts 50 steps and takes 94.2 ms.\n") == []  # both declare their units
    # a name is no declaration: only unit= is (issue 44, kind 9)
    [line] = check(tmp_path, "The weight is read after 100 steps.\n")
    assert (
        "100 in section 1 is followed by the unit 'steps', but it is demo.fraction_steps, and declares no unit" in line
    )
    for unit in ("s", "min", "%", "seconds"):
        lines = check(tmp_path, f"The layer takes 94.2 {unit}.\n")
        assert any(
            f"94.2 in section 1 is followed by the unit {unit!r}, but it is demo.ms_layer" in l for l in lines
        ), unit
    lines = check(tmp_path, "The spread is 0.250 epochs.\n")
    assert any("0.250 in section 1 is followed by the unit 'epochs'" in line for line in lines), lines


def test_the_allowlist_cannot_cover_a_word_its_quotes_contradict(tmp_path):
    entry = '[[allow]]\npage = "demo"\nphrase = "The loss falls from"\nreason = "a test"\n'
    [line] = check(tmp_path, "The loss falls from 2.150 to 3.330 at 0.01.\n", allow=entry)
    assert "the quotes say the opposite: from 2.150 to 3.330 goes up" in line
    assert "the allowlist entry 'The loss falls from' cannot cover a word its quotes contradict" in line
    entry = '[[allow]]\npage = "demo"\nphrase = "Pre-norm ends at 2.150, higher"\nreason = "a test"\n'
    [line] = check(tmp_path, "Pre-norm ends at 2.150, higher than post-norm's 3.330.\n", allow=entry)
    assert "2.150 is smaller than 3.330" in line and "cannot cover a word its quotes contradict" in line


def test_every_allowlist_entry_is_pinned_in_the_golden_record(tmp_path):
    entry = '[[allow]]\npage = "demo"\nphrase = "post-norm does better"\nreason = "a test"\n'
    assert check(tmp_path, "At 0.01 post-norm does better.\n", allow=entry) == []
    [line] = check(tmp_path, "At 0.01 post-norm does better.\n", allow=entry, pin_allowlist=False)
    assert "allow.toml: the entry phrase 'post-norm does better' (a test) is not in the golden record" in line
    assert "`make golden` pins it" in line
    pinned = json.loads((tmp_path / "golden" / "page.json").read_text())
    assert pinned["allowlist"] == []
    from pagekit.golden import binding_differences

    config = SimpleNamespace(
        PAGE="demo",
        PAGE_FILE=str(tmp_path / "page.md"),
        SECTION_SCRIPTS={1: ("demo",)},
        SHARED_QUOTES=(),
        STRUCTURAL=(),
    )
    now = check_page.pinned_binding(
        config,
        page_path=tmp_path / "page.md",
        numbers_dir=tmp_path / "figures" / "numbers",
        allowlist_path=tmp_path / "allow.toml",
    )
    assert binding_differences(pinned, now) == ["allowlist entry added: phrase 'post-norm does better' (a test)"]


# --- range words need a sweep claim (issue 39) --------------------------------


def test_a_range_word_needs_a_sweep_claim_that_held_at_every_point(tmp_path):
    """'at larger rates' backed by a claim measured at one rate fails, naming
    the claim and what is missing; the same words backed by a sweep claim that
    held at every point pass; one failing point fails, naming it."""
    words = "Pre-norm ends below post-norm at larger rates.\n"
    one_point = [{**CLAIMS[0], "backs": ["Pre-norm ends below post-norm at larger rates"]}]
    [line] = check(tmp_path, words, claims=one_point)
    assert "a range word 'at larger rates' in section 1" in line
    assert "is tested at one point: a range needs a sweep claim (section.sweep_claim)" in line
    sweep = {"over": "learning rate", "points": {"0.01": True, "0.03": True, "0.1": True}}
    swept = [{**one_point[0], "sweep": sweep}]
    assert check(tmp_path, words, claims=swept) == []
    failing = [{**one_point[0], "sweep": {**sweep, "points": {**sweep["points"], "0.1": False}}}]
    [line] = check(tmp_path, words, claims=failing)
    assert "fails at learning rate 0.1" in line


def test_a_range_word_without_any_claim_fails_unless_the_allowlist_gives_a_reason(tmp_path):
    """A range word no claim backs fails; a sentence that must use one
    without a run behind it (a paper's finding) takes an allowlist entry,
    which the golden record pins like every other."""
    words = "Pre-norm trains across its whole window.\n"
    [line] = check(tmp_path, words)
    assert "a range word 'across its whole window' in section 1: no phrase around it is backed by a sweep claim" in line
    allow = '[[allow]]\npage = "demo"\nphrase = "across its whole window"\nreason = "a paper\'s finding"\n'
    assert check(tmp_path, words, allow=allow) == []


@pytest.mark.parametrize(
    "text, expected",
    [
        ("it trained at rates up to 1", ["at rates up to"]),
        ("at larger rates the gap closes", ["at larger rates"]),
        ("across batch norm's window", ["across batch norm's window"]),
        ("ahead at both rates", ["at both rates"]),
        ("at every learning rate, the loss fell", ["at every learning rate"]),
        ("at all eight rates", ["at all eight rates"]),
        ("at any rate, the loss fell", []),  # the idiom, not a range
        ("at learning rates 0.1 and 0.3 for 400 steps", []),  # the set-up, not a result
        ("at every learning rate of 0.001, 0.01 and 0.1", []),  # an enumeration of the method's settings
        ("the accuracy at each learning rate", []),  # walks through the points shown
        ("lower at each larger rate", ["at each larger rate"]),
        ("whatever the size of the weights", []),
        ("for each batch size m in 2, 4 and 8", []),
        ("at a rate where the plain network diverges", []),
    ],
)
def test_the_range_vocabulary(text, expected):
    assert [m.group() for m in wording.RANGE.finditer(text)] == expected
