"""`make new-page` / `make remove-page`: scaffold a page, or remove one again.

    python docs/diagrams/new_page.py create my-page [--title "My page"]
    python docs/diagrams/new_page.py remove my-page

``create`` writes the three files a page starts from: its page package
``docs/diagrams/<package>/__init__.py`` (which registers it: page_registry
finds every package with one), a first section script with one quote, one
claim and one figure, and the page's prose ``docs/<slug>.md``, which quotes
the number and shows the figure. `make new-page` then runs the section,
pins its golden record, writes its robustness report and checks the page,
so `make check` and `make test` pass as generated (CONTRIBUTING.md).

``remove`` deletes everything ``create`` and those steps made: the package,
the prose and figures/<slug>/ (its golden record included). It refuses a page any
of whose files git tracks, so it cannot delete a page that was committed.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

from pagekit.paths import DIAGRAMS_DIR, REPO_ROOT

SLUG = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$")
FIRST_SECTION = "odd_numbers"
EXIT_BAD_INPUT = 2

INIT = '''"""The page "{title}": which script serves which section.

Scaffolded by `make new-page`; CONTRIBUTING.md says how to grow it.
"""

PAGE = "{slug}"
PAGE_FILE = "docs/{slug}.md"

# Numbered page section -> the section scripts whose quotes it may use.
SECTION_SCRIPTS = {{
    1: ("{section}",),
}}

# Quotes any section may use besides its own: "<script>.<quote>".
SHARED_QUOTES: tuple[str, ...] = ()

# Structural numbers that are not results, as regular expressions matched
# against the prose around a number (the number itself is group "n").
STRUCTURAL = (r"[Ss]ections? (?P<n>[1-9])\\b",)
'''

SECTION = '''"""Section 1, "A first result": the first odd numbers added by a loop and in
closed form (the sum of the first n odd numbers is n squared), with a figure
of the running sum.

Scaffolded by `make new-page`: replace it with the section's own experiment
(CONTRIBUTING.md).
"""

from __future__ import annotations

from pagekit.section import PALETTE, main, new_figure  # first: it pins the numeric environment

import numpy as np

TERMS = 12  # how many odd numbers are added


def compute(section):
    total = 0
    for k in range(TERMS):  # the real loop
        total += 2 * k + 1
    # The number the prose quotes, registered with the exact text it uses.
    section.quote("odd_sum", total, ",d")
    # The statement the prose relies on, checked against the closed form.
    section.claim(f"the first {{TERMS}} odd numbers add up to {{TERMS}} squared", total == TERMS * TERMS)
    running = np.cumsum(2 * np.arange(TERMS) + 1)
    # A claim a phrase of the page can rest on (its key names it in a `% backs` line).
    counts = np.arange(1, TERMS + 1)
    section.claim(
        "every running sum equals the square of its count", bool(np.array_equal(running, counts**2)), key="on-squares"
    )
    return {{"running": running}}


def draw(section, results):
    # The saver calls this twice: for the page, and inside its phone layout,
    # where new_figure draws the same figure at a phone's width.
    def running_sum_figure():
        fig = new_figure(6.0, 3.0, margins=(0.75, 0.6, 0.2, 0.4))
        ax = fig.add_subplot()
        counts = np.arange(1, TERMS + 1)
        ax.plot(counts, counts**2, color=PALETTE["orange"], linewidth=1.5, label="closed form (n squared)")
        ax.plot(counts, results["running"], "o", color=PALETTE["blue"], markersize=4, label="the loop's running sum")
        ax.set_xlabel("odd numbers added")
        ax.set_ylabel("sum")
        ax.legend(loc="upper left", frameon=False)
        # Every number drawn comes from a registered quote (section.text).
        ax.set_title(f"The running sum ends at {{section.text('odd_sum')}}, a perfect square", loc="left")
        return fig

    section.save_figure(running_sum_figure, "running_sum")


if __name__ == "__main__":
    main(__name__)
'''

PAGE = """# {title}

```{{page-facts}}
:level: Replace with who the page is for
:subjects: replace with what the page covers
Replace with what a reader should know first, each linked to where it is taught: what a [gradient](https://en.wikipedia.org/wiki/Gradient) is, say.
```

A page scaffolded by `make new-page`: replace this paragraph and the section
below with the page's own text. Each numbered section quotes the numbers its
script prints, and `make check` compares the prose with the script's output,
so a number is written here only as the script prints it. CONTRIBUTING.md
says how to add a section, a figure or a claim, and what the checks ask of
the words around a number; `make test PAGE=<slug>` runs this page's tests
and `make preview` draws its figures to look at.

**Run it yourself.** [The page's notebook](../figures/{slug}/{slug}.ipynb) reruns the experiment below.

Contents

1. [A first result](#1-a-first-result)

## 1. A first result

Adding the first dozen odd numbers gives 144, which is a dozen squared.

*Run it yourself:* [this experiment, section 1 of the page's notebook](../figures/{slug}/{slug}.ipynb).

% figure says "on the curve of the squares"
:::{{figure}} ../figures/{slug}/{section}_running_sum.svg
:name: fig-{slug}-running-sum
:alt: The running sum of the odd numbers against how many were added, on the curve of the squares

The running sum of the odd numbers lies on the curve of the squares.
:::

% backs {section}:on-squares "on the curve of the squares"
"""


def package_name(slug: str) -> str:
    return slug.replace("-", "_")


def page_paths(slug: str) -> list[Path]:
    """Everything a scaffolded page owns, once made and run."""
    return [DIAGRAMS_DIR / package_name(slug), REPO_ROOT / "docs" / f"{slug}.md", REPO_ROOT / "figures" / slug]


def rel(path: Path) -> str:
    return str(path.relative_to(REPO_ROOT))


def create(slug: str, title: str) -> int:
    existing = [rel(p) for p in page_paths(slug) if p.exists()]
    if existing:
        print(f"error: page {slug!r} exists already: {', '.join(existing)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    package_dir = DIAGRAMS_DIR / package_name(slug)
    package_dir.mkdir()
    fields = {"slug": slug, "title": title, "section": FIRST_SECTION}
    files = {
        package_dir / "__init__.py": INIT,
        package_dir / f"{FIRST_SECTION}.py": SECTION,
        REPO_ROOT / "docs" / f"{slug}.md": PAGE,
    }
    for path, template in files.items():
        path.write_text(template.format(**fields), encoding="utf-8")
        print(f"wrote {rel(path)}")
    return 0


def tracked(paths: list[Path]) -> list[str] | None:
    """The paths (or files under them) git tracks; None when git cannot say
    (no git, or not a git checkout): then nothing is removed."""
    try:
        done = subprocess.run(
            ["git", "ls-files", "--", *map(rel, paths)],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except OSError:
        return None
    return done.stdout.split() if done.returncode == 0 else None


def remove(slug: str) -> int:
    paths = [p for p in page_paths(slug) if p.exists()]
    if not paths:
        print(f"error: there is no page {slug!r} to remove", file=sys.stderr)
        return EXIT_BAD_INPUT
    committed = tracked(paths)
    if committed is None:
        print("error: git cannot say which of the page's files are committed; remove them by hand", file=sys.stderr)
        return EXIT_BAD_INPUT
    if committed:
        print(
            f"error: git tracks files of page {slug!r} ({', '.join(committed[:3])}, ...): "
            "remove a committed page with `git rm`, not with this",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT
    for path in paths:
        shutil.rmtree(path) if path.is_dir() else path.unlink()
        print(f"removed {rel(path)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("action", choices=("create", "remove"))
    parser.add_argument("slug", help="the page's name in URLs and files, e.g. my-page")
    parser.add_argument("--title", help="the page's title (default: from the slug)")
    args = parser.parse_args(argv)
    if not SLUG.match(args.slug):
        print(
            f"error: {args.slug!r} is not a page name: lower-case words joined by hyphens, e.g. my-page",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT
    if args.action == "create":
        return create(args.slug, args.title or args.slug.replace("-", " ").capitalize())
    return remove(args.slug)


if __name__ == "__main__":
    sys.exit(main())
