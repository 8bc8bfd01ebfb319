"""The page-structure rules `make check` applies (pagekit/page_rules.py): the
front-matter box, the notebook links and the contents list, each a one-line
message with its line; and the real pages keep them."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from conftest import REPO_ROOT, page_ids
from pagekit import page_rules
from pagekit.registry import page_config, page_packages

CONFIG = SimpleNamespace(PAGE="tiny", SECTION_SCRIPTS={1: ("first",), 2: (), 3: ("first", "second")})
LINK = "[the notebook](../figures/tiny/tiny.ipynb)"
GOOD = f"""# Tiny

```{{page-facts}}
:level: Beginner
:subjects: one thing
What to know.
```

**Run it yourself.** {LINK}

1. [One](#1-one)
2. [Two and more](#2-two-and-more)
3. [Three](#3-three)

## 1. One

{LINK}

## 2. Two and more

Prose.

## 3. Three

{LINK}
"""


def messages(text: str) -> list[str]:
    return [f"{line}: {message}" for line, message in page_rules.problems(CONFIG, text)]


def test_a_page_that_keeps_the_rules_has_no_problem():
    assert messages(GOOD) == []


def test_a_missing_front_matter_box_is_named_with_its_line():
    text = GOOD.replace("```{page-facts}\n:level: Beginner\n:subjects: one thing\nWhat to know.\n```\n\n", "")
    assert messages(text) == [
        "3: the page must open with its front-matter box right after the title: "
        "```{page-facts}``` with :level:, :subjects: and what a reader should know first"
    ]
    assert messages(GOOD.replace(":level: Beginner\n", "")) == ["3: the front-matter box has no :level:"]


def test_missing_notebook_links_are_named():
    text = GOOD.replace(f"**Run it yourself.** {LINK}", "No link.")
    assert messages(text) == [
        "15: no 'Run it yourself' link to the page's notebook (../figures/tiny/tiny.ipynb) above section 1"
    ]
    found = messages(GOOD.replace(f"## 3. Three\n\n{LINK}", "## 3. Three\n\nNo link."))
    assert found == ["23: section 3 runs an experiment but does not link the page's notebook"]


def test_a_notebook_link_naming_another_section_is_named():
    """A link that says where in the notebook the experiment is must say the
    section it sits in (site review round 3, L8); one that names no section
    is left to the page (a scaffolded page's link names none)."""
    own = "[this experiment, section 3 of the page's notebook](../figures/tiny/tiny.ipynb)"
    assert messages(GOOD.replace(f"## 3. Three\n\n{LINK}", f"## 3. Three\n\n{own}")) == []
    other = own.replace("section 3", "section 1")
    assert messages(GOOD.replace(f"## 3. Three\n\n{LINK}", f"## 3. Three\n\n{other}")) == [
        "25: section 3's notebook link names section 1 of the notebook "
        "(\"this experiment, section 1 of the page's notebook\"): this section's experiment is in section 3"
    ]
    # Section 2 runs no experiment and has no code of the page's: the notebook has no section 2.
    absent = own.replace("section 3", "section 2")
    assert messages(GOOD.replace("## 2. Two and more\n\nProse.", f"## 2. Two and more\n\n{absent}")) == [
        "21: section 2's notebook link names section 2, which the notebook does not have"
    ]
    code = f"## 2. Two and more\n\n{absent}\n\n```python\nprint(1)\n```"
    assert messages(GOOD.replace("## 2. Two and more\n\nProse.", code)) == []


def test_a_section_missing_from_the_contents_is_named():
    assert messages(GOOD.replace("2. [Two and more](#2-two-and-more)\n", "")) == [
        "18: section 2 is not linked from the page (add it to the contents list)"
    ]


@pytest.mark.parametrize("package", page_packages(), ids=page_ids(page_packages()))
def test_the_pages_keep_the_rules(package):
    config = page_config(package)
    assert page_rules.problems(config, (REPO_ROOT / config.PAGE_FILE).read_text(encoding="utf-8")) == []
