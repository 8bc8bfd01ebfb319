"""The structure every page keeps, checked from its Markdown by `make check`
(one line per problem, with file and line), so a missing piece is named
there rather than by a browser test:

- the title, then the front-matter box, ```{page-facts}``` with a :level:;
- a "Run it yourself" link to the page's notebook above section 1, and a
  link to it in every section where one of the page's experiments first runs;
  a link that names a section of the notebook ("this experiment, section 4
  of the page's notebook") names the one it sits in, which the notebook
  holds (its headings are "## Section N. <the page's heading>");
- a link to every numbered section (the contents list), by the anchor the
  site and GitHub give it.

Light (re and the registry): the check stays fast.
"""

from __future__ import annotations

import re

from pagekit.registry import sections_in_page_order

SECTION_HEADING = re.compile(r"^## (\d+)\. (.+)$")


def heading_anchor(title: str) -> str:
    """The anchor GitHub and the site (MyST's "github" slugs) give a heading."""
    return re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")


def notebook_link(page: str) -> str:
    return f"](../figures/{page}/{page}.ipynb)"


def notebook_link_texts(page: str, body: str) -> list[str]:
    """The text of every link to the page's notebook in ``body``."""
    return re.findall(r"\[([^\]]*)" + re.escape(notebook_link(page)), body)


def named_notebook_section(link_text: str) -> int | None:
    """The notebook section a link's text names ("..., section 4 of the page's notebook")."""
    found = re.search(r"\bsection (\d+)\b", link_text, re.I)
    return int(found.group(1)) if found else None


def problems(config, text: str) -> list[tuple[int | None, str]]:
    """(line, message) for every rule the page's Markdown ``text`` breaks."""
    lines = text.splitlines()
    found: list[tuple[int | None, str]] = []
    title = next((k for k, line in enumerate(lines) if line.startswith("# ")), None)
    if title is None:
        return [(1, "the page has no title (a first line '# Title')")]
    after = next((k for k in range(title + 1, len(lines)) if lines[k].strip()), None)
    if after is None or not lines[after].startswith("```{page-facts}"):
        found.append(
            (
                (after if after is not None else title) + 1,
                "the page must open with its front-matter box right after the title: "
                "```{page-facts}``` with :level:, :subjects: and what a reader should know first",
            )
        )
    else:
        end = next((k for k in range(after + 1, len(lines)) if lines[k].startswith("```")), len(lines))
        if not any(line.startswith(":level:") for line in lines[after + 1 : end]):
            found.append((after + 1, "the front-matter box has no :level:"))

    headings = {
        int(m.group(1)): (k + 1, m.group(2)) for k, line in enumerate(lines) if (m := SECTION_HEADING.match(line))
    }
    link = notebook_link(config.PAGE)
    first = min((line for line, _ in headings.values()), default=len(lines) + 1)
    intro = "\n".join(lines[: first - 1])
    if "Run it yourself" not in intro or link not in intro:
        found.append(
            (
                first if headings else None,
                f"no 'Run it yourself' link to the page's notebook ({link[2:-1]}) above section 1",
            )
        )
    bodies = {}
    starts = sorted((line, number) for number, (line, _) in headings.items())
    for (start, number), (end, _) in zip(starts, [*starts[1:], (len(lines) + 1, None)], strict=True):
        bodies[number] = "\n".join(lines[start : end - 1])
    experiments = {number for number, _script in sections_in_page_order(config)}
    for number in sorted(experiments):
        if number in bodies and link not in bodies[number]:
            found.append(
                (headings[number][0], f"section {number} runs an experiment but does not link the page's notebook")
            )
    # The notebook holds a section for each experiment and each section with
    # the page's own ```python code (pagekit/notebooks.py), under the page's number.
    in_notebook = experiments | {n for n, body in bodies.items() if re.search(r"^```python\n", body, re.M)}
    for number, body in sorted(bodies.items()):
        for text_of_link in notebook_link_texts(config.PAGE, body):
            named = named_notebook_section(text_of_link)
            if named is None:
                continue
            line = headings[number][0] + body[: body.index(text_of_link)].count("\n") + 1
            if named != number:
                found.append(
                    (
                        line,
                        f"section {number}'s notebook link names section {named} of the notebook "
                        f"({text_of_link!r}): this section's experiment is in section {number}",
                    )
                )
            elif named not in in_notebook:
                found.append(
                    (line, f"section {number}'s notebook link names section {named}, which the notebook does not have")
                )

    for number, (line, heading) in sorted(headings.items()):
        if f"(#{heading_anchor(f'{number}. {heading}')})" not in text:
            found.append((line, f"section {number} is not linked from the page (add it to the contents list)"))
    return found
