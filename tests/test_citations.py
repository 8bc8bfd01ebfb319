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

**Cited for** (the page, section 1): what it says.

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
        "[Ba and Roe, 2016](references/bibliography.md#ba-and-roe-2016) and\n"
        "[Doe, 2020](references/bibliography.md#doe-2020).\n"
    )
    found = findings(tmp_path, text, [ENTRY.format(name="Ba and Roe, 2016")])
    assert len(found) == 1 and "page.md:2" in found[0] and "#doe-2020" in found[0]


def test_an_entry_nothing_cites_fails(tmp_path):
    text = "[Ba and Roe, 2016](references/bibliography.md#ba-and-roe-2016).\n"
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
    text = (
        "[Ba and Roe, 2016](references/bibliography.md#ba-and-roe-2016), while\nDoe and colleagues (2020) disagree.\n"
    )
    found = findings(tmp_path, text, [ENTRY.format(name="Ba and Roe, 2016")])
    assert len(found) == 1 and "page.md:2" in found[0] and "colleagues (2020)" in found[0]


def test_a_citation_whose_text_is_not_the_entry_fails(tmp_path):
    text = "[Ba, 2016](references/bibliography.md#ba-and-roe-2016).\n"
    found = findings(tmp_path, text, [ENTRY.format(name="Ba and Roe, 2016")])
    assert len(found) == 1 and "not the entry's name" in found[0]


def test_a_bibliography_that_lists_no_page_is_bad_input(tmp_path):
    page, bib = write(tmp_path, "text\n", [ENTRY.format(name="Doe, 2020")], listed=False)
    with pytest.raises(ValueError, match="Pages checked"):
        opted_in_pages(bib)
