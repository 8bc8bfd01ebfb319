"""The front-matter box a page opens with, ```{page-facts}```: its level,
reading time, hands-on time, what to know first, its PDF and its robustness
summary."""

from __future__ import annotations

import json
import re
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

from site_ext.pages import FIGURES, WORDS_PER_MINUTE, duration, hands_on, reading_minutes, robustness_link

PDF_DIR = "pdf"  # `make pdf` prints each page to build/site/pdf/<page>.pdf


def _hands_on_text(page: str) -> str:
    record = hands_on(page)
    if record is None:
        return "not measured yet (`make bench` measures it)"
    return (
        f"about {duration(record['cpu_seconds'])} of CPU time to rerun every experiment "
        f"(measured by `make bench` on a {record['cores']}-core {record['machine']}; "
        f"{duration(record['wall_seconds'])} of wall time there)"
    )


def _notebook_text(page: str) -> str:
    """The notebook's size and how long it took, from
    figures/<page>/notebook-timings.json (`make notebook-times`)."""
    notebook = FIGURES / page / f"{page}.ipynb"
    if not notebook.is_file():
        return "none yet (`make notebooks` builds it)"
    size = f"{notebook.stat().st_size / 1000:,.0f} kB"
    path = FIGURES / page / "notebook-timings.json"
    timings = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    whole = timings.get("whole_notebook_wall", {})
    if not {"quick", "page"} <= set(whole):
        return f"{size}; its run times are not measured yet (`make notebook-times`)"
    return (
        f"{size}, run top to bottom in about {duration(whole['quick'])} in its quick setting and "
        f"{duration(whole['page'])} in the page's own (measured on a {timings.get('cores', '?')}-core "
        f"{timings.get('machine', 'machine')}, installing excluded)"
    )


class PageFacts(SphinxDirective):
    """```{page-facts}```: the short box a page opens with. The page gives its
    level (:level:), its subjects for the index (:subjects:), the page it
    builds on (:after:) and, as the block's body, what the reader should know
    (Markdown, with links to where each thing is taught). The site adds the
    reading time (computed from the page's words and figures), the hands-on
    time (measured by `make bench`), the printed edition and the robustness
    report. The box holds no number of the page's own: numbers belong in the
    prose, where `make check` checks them, so a digit in the body is an error."""

    has_content = True
    option_spec = {
        "level": directives.unchanged_required,
        "subjects": directives.unchanged,
        "after": directives.unchanged,
    }

    def run(self):
        page = self.env.docname
        body = "\n".join([*self.content, *self.options.values()])
        # A number, not a digit inside a name (float32 is a name).
        if re.search(r"(?<![\w.])\d", re.sub(r"\]\([^)]*\)", "]", body)):
            raise self.error(
                "a {page-facts} box holds no numbers (write them in the prose, where make check checks them)"
            )
        minutes, words, figures = reading_minutes(page)
        box = nodes.container(classes=["page-facts"])
        box["ids"].append("page-facts")
        items = nodes.definition_list()

        def item(term: str, *content: nodes.Node) -> None:
            entry = nodes.definition_list_item()
            entry += nodes.term(term, term)
            definition = nodes.definition()
            definition += content
            entry += definition
            items.append(entry)

        item("Level", nodes.paragraph(text=self.options["level"]))
        item(
            "Reading",
            nodes.paragraph(
                text=f"about {minutes} min ({words:,} words at {WORDS_PER_MINUTE} a minute, and {figures} figures)"
            ),
        )
        hands = nodes.paragraph()
        self.state.nested_parse(self.content.__class__([_hands_on_text(page)]), self.content_offset, hands)
        item("Hands-on", *hands.children)
        item("Its notebook", nodes.paragraph(text=_notebook_text(page)))
        known = nodes.container()
        self.state.nested_parse(self.content, self.content_offset, known)
        item("You should know", *known.children)
        extra = nodes.paragraph()
        if self.state.document.settings.env.config.site_pdfs:  # `make docs` prints them (docs/site_pdf.py)
            up = "../" * page.count("/")
            pdf = nodes.reference("", "", refuri=f"{up}{PDF_DIR}/{Path(page).name}.pdf", internal=False)
            pdf += nodes.Text("the page as a PDF")
            extra += pdf
            extra += nodes.Text("; how its results hold at other seeds: ")
        else:
            extra += nodes.Text("How its results hold at other seeds: ")
        extra += robustness_link(page, page, "the robustness summary")
        item("Also", extra)
        box += items
        return [box]


def setup(app):
    # Whether the site is published with its PDFs (`make docs` prints them when
    # Chromium is there, and builds with site_pdfs=0, no PDF links, when not).
    app.add_config_value("site_pdfs", True, "html")
    app.add_directive("page-facts", PageFacts)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
