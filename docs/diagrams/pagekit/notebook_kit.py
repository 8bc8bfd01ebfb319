"""Running one page section inside the page's notebook (docs/diagrams/notebooks.py builds it).

``experiment(package, section, setting)`` imports the section script afresh
(so an edited cell takes effect when rerun), runs it through
``cli.run_section`` exactly as `make figures` does, in the "quick"
setting (the tests' reduced configuration of a heavy section) or the "page"
setting (the page's own configuration), and then shows:

- a table of every number it printed beside the page's (and, in the quick
  setting of a heavy section, beside the pinned quick run of the tests),
  with "=" where the texts agree;
- how long it took (wall and CPU seconds, the CPU of worker processes too);
- the figures it drew.

Its outputs go under ``runs/<setting>/`` beside this code, never over the
page's committed figures. The reference numbers come from
``notebook_reference.json``, which the notebook writes from the repository's
committed numbers and golden record.
"""

from __future__ import annotations

import json
import resource
import sys
import time

from pagekit import atomic, cli, record
from pagekit.paths import REPO_ROOT as CODE_ROOT  # in the notebook: its copy of the repository

REFERENCE_PATH = CODE_ROOT / "notebook_reference.json"
SETTINGS = ("quick", "page")
MEASURED = "measured here"  # a timing: differs by machine, compared by no one


def cpu_seconds() -> float:
    """CPU time of this process and of its finished children (pool workers)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def fresh_module(package: str, section: str):
    """The section script imported anew, with the page's other modules (its
    helpers) too, so a cell edited and rerun is the code that runs. The
    shared machinery stays loaded: it pinned the numeric environment."""
    for name in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
        del sys.modules[name]
    return cli.section_module(package, section)


def comparison_rows(section: record.Section, reference: dict, setting: str) -> list[tuple[str, ...]]:
    """(quote, this run, expected, the page's, mark) for every printed number."""
    page = reference["page"]
    expected = reference["quick"] if setting == "quick" and section.heavy else page
    rows = []
    for quote in section.quotes.values():
        for name, _, text in quote.items():
            if quote.measured:
                rows.append((name, text, MEASURED, page.get(name, ""), ""))
            else:
                want = expected.get(name, "(not on the page)")
                rows.append((name, text, want, page.get(name, ""), "=" if text == want else "≠"))
    return rows


def markdown_table(rows: list[tuple[str, ...]], quick_heavy: bool) -> str:
    expected = "pinned quick run" if quick_heavy else "the page"
    lines = [
        f"| quote | this run | {expected} | " + ("the page (full run) |" if quick_heavy else "|"),
        "|---|---|---|" + ("---|" if quick_heavy else "") + "---|",
    ]
    for name, text, want, page, mark in rows:
        cells = [name, text, want] + ([page] if quick_heavy else []) + [mark]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def experiment(package: str, section: str, setting: str) -> record.Section:
    """Run one section in ``setting`` ("quick" or "page"), show its numbers
    beside the page's, its time and its figures; returns its Section."""
    if setting not in SETTINGS:
        raise ValueError(f"SETTING must be one of {', '.join(SETTINGS)}, not {setting!r}")
    from IPython.display import SVG, Markdown, display

    module = fresh_module(package, section)
    reference = json.loads(REFERENCE_PATH.read_text(encoding="utf-8"))[section]
    out_dir = CODE_ROOT / "runs" / setting / reference["page_slug"]
    wall, cpu = time.perf_counter(), cpu_seconds()
    result = cli.run_section(module, reduced=setting == "quick", out_dir=out_dir, echo=False)
    wall, cpu = time.perf_counter() - wall, cpu_seconds() - cpu
    quick_heavy = setting == "quick" and result.heavy
    rows = comparison_rows(result, reference, setting)
    same = sum(1 for row in rows if row[4] == "=")
    compared = sum(1 for row in rows if row[4])
    against = "the tests' pinned quick run" if quick_heavy else "the page"
    print(
        f"{section} ({setting} setting): {wall:.1f} s wall, {cpu:.1f} s CPU; "
        f"{same} of {compared} numbers equal {against}'s"
    )
    if setting == "quick" and not result.heavy:
        print("(this section has no reduced configuration: the quick setting is the page's own)")
    display(Markdown(markdown_table(rows, quick_heavy)))
    for figure in result.figures:
        display(SVG(filename=str(out_dir / figure)))
    timings_path = out_dir / "notebook_timings.json"
    timings = json.loads(timings_path.read_text(encoding="utf-8")) if timings_path.exists() else {}
    timings[section] = {"wall": round(wall, 2), "cpu": round(cpu, 2), "equal": same, "compared": compared}
    atomic.write_json_atomically(timings_path, timings)
    return result
