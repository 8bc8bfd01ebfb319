"""The citation check: the real pages pass, and each kind of broken citation
or entry fails with the file and line named."""

from __future__ import annotations

from pathlib import Path

import pytest

from pagekit import check_citations
from pagekit.check_citations import check, citations_and_mentions, github_slug, opted_in_pages, read_bibliography
from conftest import REPO_ROOT


def test_real_pages_cite_only_supported_entries():
    pages = opted_in_pages()
    assert REPO_ROOT / "docs" / "normalisation-and-stability.md" in pages
    assert check(pages) == []
    assert check_citations.main([]) == 0


def test_every_real_entry_has_a_sourced_passage():
    entries = read_bibliography()
    assert len(entries) >= 10
    for entry in entries.values():
        assert entry.passages, entry.name
        assert all(p.startswith("— abstract") or p.startswith("— text") for p in entry.passages)


def test_both_pages_are_checked_and_every_mention_is_a_citation():
    """The second page opted in: each of its author-year mentions is a
    citation link, and it cites entries of its own."""
    page2 = REPO_ROOT / "docs" / "normalisation-layers.md"
    assert page2 in opted_in_pages()
    citations, mentions = citations_and_mentions(page2)
    assert mentions == []
    assert len({c.target for c in citations}) >= 15


def test_slug_matches_github_and_myst():
    assert github_slug("Ba, Kiros and Hinton, 2016") == "ba-kiros-and-hinton-2016"
    assert github_slug("Xiong and colleagues, 2020") == "xiong-and-colleagues-2020"


# --- a small fake bibliography and page ---------------------------------------

ENTRY = """## {name}

Someone (2016). A paper. <https://example.org/paper>

**Cited for** ([the page](../page.md), section [1](../page.md#1-one)): what it says.

% key phrases: "found" = "passage"

> "A passage."
>
> — abstract, <https://example.org/abstract>
"""


def write(tmp_path: Path, page_text: str, entries: list[str], listed: bool = True) -> tuple[Path, Path]:
    page = tmp_path / "page.md"
    page.write_text(page_text, encoding="utf-8")
    refs = tmp_path / "references"
    refs.mkdir()
    bib = refs / "bibliography.md"
    header = "---\norphan: true\n---\n\n# Bibliography\n\n"
    if listed:
        header += "**Pages checked against this bibliography:** [the page](../page.md).\n\n"
    bib.write_text(header + "\n".join(entries), encoding="utf-8")
    return page, bib


def findings(tmp_path, page_text, entries):
    page, bib = write(tmp_path, page_text, entries)
    assert opted_in_pages(bib) == [page.resolve()]
    return check([page], bib)


def test_a_good_page_passes(tmp_path):
    text = "As [Ba and Roe (2016)](references/bibliography.md#ba-and-roe-2016) found.\n"
    assert findings(tmp_path, text, [ENTRY.format(name="Ba and Roe, 2016")]) == []


def test_a_citation_with_no_entry_fails(tmp_path):
    text = (
        "[Ba and Roe, 2016](references/bibliography.md#ba-and-roe-2016) found it, and\n"
        "[Doe, 2020](references/bibliography.md#doe-2020).\n"
    )
    found = findings(tmp_path, text, [ENTRY.format(name="Ba and Roe, 2016")])
    assert len(found) == 1 and "page.md:2" in found[0] and "#doe-2020" in found[0]


def test_an_entry_nothing_cites_fails(tmp_path):
    text = "[Ba and Roe, 2016](references/bibliography.md#ba-and-roe-2016) found it.\n"
    found = findings(tmp_path, text, [ENTRY.format(name="Ba and Roe, 2016"), ENTRY.format(name="Doe, 2020")])
    assert len(found) == 1 and "'Doe, 2020' is cited by no page" in found[0]
    assert "bibliography.md:" in found[0]


def test_an_entry_with_no_passage_fails(tmp_path):
    text = "[Doe, 2020](references/bibliography.md#doe-2020).\n"
    bare = ENTRY.format(name="Doe, 2020").split("> ")[0]
    found = findings(tmp_path, text, [bare])
    assert any("no supporting passage" in f for f in found), found


def test_a_passage_without_its_source_fails(tmp_path):
    text = "[Doe, 2020](references/bibliography.md#doe-2020).\n"
    unsourced = ENTRY.format(name="Doe, 2020").replace("> — abstract, <https://example.org/abstract>\n", "")
    found = findings(tmp_path, text, [unsourced])
    assert any("do not say where they were found" in f for f in found), found


def test_an_unlinked_author_year_mention_fails(tmp_path):
    text = "[Ba and Roe, 2016](references/bibliography.md#ba-and-roe-2016) found it, while\nDoe and colleagues (2020) disagree.\n"
    found = findings(tmp_path, text, [ENTRY.format(name="Ba and Roe, 2016")])
    assert len(found) == 1 and "page.md:2" in found[0] and "colleagues (2020)" in found[0]


def test_a_citation_whose_text_is_not_the_entry_fails(tmp_path):
    text = "[Ba, 2016](references/bibliography.md#ba-and-roe-2016) found it.\n"
    found = findings(tmp_path, text, [ENTRY.format(name="Ba and Roe, 2016")])
    assert len(found) == 1 and "not the entry's name" in found[0]


def test_a_bibliography_that_lists_no_page_is_bad_input(tmp_path):
    page, bib = write(tmp_path, "text\n", [ENTRY.format(name="Doe, 2020")], listed=False)
    with pytest.raises(ValueError, match="Pages checked"):
        opted_in_pages(bib)


# --- citations bound to what the entry is cited for (issue 44, kind 10) ----------


def test_a_year_beside_a_citation_must_be_its_entrys(tmp_path):
    entry = [ENTRY.format(name="Ba and Roe, 2016")]
    texts = {
        "good": "In 2016 [Ba and Roe (2016)](references/bibliography.md#ba-and-roe-2016) found it.\n",
        "before": "In 2017 [Ba and Roe (2016)](references/bibliography.md#ba-and-roe-2016) found it.\n",
        "after": "As [Ba and Roe, 2016](references/bibliography.md#ba-and-roe-2016) found in 2017.\n",
    }
    for name, text in texts.items():
        (tmp_path / name).mkdir()
        found = findings(tmp_path / name, text, entry)
        if name == "good":
            assert found == []
        else:
            assert len(found) == 1 and "the year 2017 beside the citation" in found[0] and "2016" in found[0], found


def test_a_number_cited_for_must_be_in_the_passage_under_it(tmp_path):
    text = "As [Doe, 2020](references/bibliography.md#doe-2020) found.\n"
    said = ENTRY.format(name="Doe, 2020").replace("what it says.", "it trained 14 times faster.")
    (tmp_path / "a").mkdir()
    unsupported = findings(tmp_path / "a", text, [said])
    assert len(unsupported) == 1 and "is cited for 14, which no passage" in unsupported[0], unsupported
    supported = said.replace('"A passage."', '"It trained 14 times faster."').replace('= "passage"', '= "trained"')
    (tmp_path / "b").mkdir()
    assert findings(tmp_path / "b", text, [supported]) == []


def test_a_passage_changed_since_golden_is_a_finding(tmp_path):
    """The page's golden record pins each cited entry's passages by hash:
    a passage trimmed of the sentence a page relies on fails `make check`
    until `make golden` re-pins it (and shows it in its diff)."""
    import json

    from pagekit.check_page import check_pinned_passages

    text = "As [Doe, 2020](references/bibliography.md#doe-2020) found.\n"
    page, bib = write(tmp_path, text, [ENTRY.format(name="Doe, 2020")])
    pinned = check_citations.cited_passages(page, bib)
    assert list(pinned) == ["doe-2020"] and len(pinned["doe-2020"]) == 2  # its passage, its statement
    golden = tmp_path / "page.json"
    golden.write_text(json.dumps({"passages": pinned}))
    assert check_pinned_passages(golden, check_citations.cited_passages(page, bib)) == []
    bib.write_text(bib.read_text().replace('"A passage."', '"A passage, trimmed."'))
    found = check_pinned_passages(golden, check_citations.cited_passages(page, bib))
    assert (
        len(found) == 1
        and "#doe-2020, or what it is cited for" in found[0].message
        and "make golden" in found[0].message
    )


# --- citing sentences bound to what the entry is cited for (issue 44, kind 10) ----

TWO_ENTRIES = """## Ba and Roe, 2016

Ba, A. and Roe, B. (2016). Warmup. <https://example.org/a>

**Cited for** ([the page](../page.md), section [1](../page.md#1-one)): warmup avoids it.

% key phrases: "warmup" = "warm-up"

> "The warm-up stage avoids this problem."
>
> — abstract, <https://example.org/a>

## Doe, 2020

Doe, C. (2020). Amplification. <https://example.org/b>

**Cited for** ([the page](../page.md), sections [1](../page.md#1-one) and [2](../page.md#2-two)): amplification.

% key phrases: "amplifies" = "amplification effect"

> "We identify an amplification effect."
>
> — abstract, <https://example.org/b>
"""
PAGE = """## 1. One

Warmup avoids it, as [Ba and Roe (2016)](references/bibliography.md#ba-and-roe-2016) found.
Post-norm amplifies small changes ([Doe, 2020](references/bibliography.md#doe-2020)).

## 2. Two

Post-norm amplifies them ([Doe, 2020](references/bibliography.md#doe-2020)).
"""


def test_citing_sentences_that_say_their_entrys_key_phrases_pass(tmp_path):
    assert findings(tmp_path, PAGE, [TWO_ENTRIES]) == []


def test_a_finding_credited_to_another_cited_paper_is_caught(tmp_path):
    """The warmup finding credited to Doe, who is still cited elsewhere: the
    sentence says none of Doe's key phrases."""
    wrong = PAGE.replace(
        "as [Ba and Roe (2016)](references/bibliography.md#ba-and-roe-2016) found",
        "as [Doe (2020)](references/bibliography.md#doe-2020) found",
    ).replace(
        "amplifies small changes",
        "amplifies small changes, as [Ba and Roe, 2016](references/bibliography.md#ba-and-roe-2016) warned,",
    )
    found = findings(tmp_path, wrong, [TWO_ENTRIES])
    assert any(
        "page.md:3: the sentence citing 'Doe, 2020' says none of the key phrases" in f and "'amplifies'" in f
        for f in found
    ), found


def test_a_citation_in_a_section_no_statement_names_is_caught(tmp_path):
    moved = PAGE + "\nWarmup again ([Ba and Roe, 2016](references/bibliography.md#ba-and-roe-2016)).\n"
    found = findings(tmp_path, moved, [TWO_ENTRIES])
    assert len(found) == 1 and "page.md:10: 'Ba and Roe, 2016' is cited in section 2" in found[0], found


def test_a_key_phrase_its_passage_does_not_say_is_caught(tmp_path):
    trimmed = TWO_ENTRIES.replace("The warm-up stage avoids this problem.", "This problem is avoided.")
    found = findings(tmp_path, PAGE, [trimmed])
    assert len(found) == 1 and "the key phrase 'warmup' stands for 'warm-up', which no passage" in found[0], found


def test_a_statement_without_key_phrases_is_caught(tmp_path):
    bare = TWO_ENTRIES.replace('% key phrases: "amplifies" = "amplification effect"\n', "")
    found = findings(tmp_path, PAGE, [bare])
    assert any("'Doe, 2020': the statement lists no key phrases" in f for f in found), found


@pytest.mark.parametrize(
    "page_name, old, new, expected",
    [
        (
            "normalisation-and-stability.md",
            "[Xiong and colleagues (2020)](references/bibliography.md#xiong-and-colleagues-2020) found for",
            "[Liu and colleagues (2020)](references/bibliography.md#liu-and-colleagues-2020) found for",
            "the sentence citing 'Liu and colleagues, 2020' says none of the key phrases",
        ),
        (
            "normalisation-layers.md",
            "[Xiong and colleagues (2020)](references/bibliography.md#xiong-and-colleagues-2020)\nfound that",
            "[Liu and colleagues (2020)](references/bibliography.md#liu-and-colleagues-2020)\nfound that",
            "the sentence citing 'Liu and colleagues, 2020' says none of the key phrases",
        ),
    ],
)
def test_a_real_pages_finding_credited_to_the_wrong_paper_is_caught(tmp_path, page_name, old, new, expected):
    """A finding moved to another paper the page still cites (issue 44, kind
    10), on each page: the citation check names the line and the phrases the
    sentence lacks."""
    source = (REPO_ROOT / "docs" / page_name).read_text(encoding="utf-8")
    assert source.count(old) == 1
    line = source[: source.index(old)].count("\n") + 1
    page = tmp_path / page_name
    page.write_text(source.replace(old, new), encoding="utf-8")
    found = check([page], check_citations.BIBLIOGRAPHY)
    assert any(f"{page_name}:{line}: {expected}" in f for f in found), found
