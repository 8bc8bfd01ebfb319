"""Which pages exist and which section scripts serve them.

A page is a package under docs/diagrams/ beside pagekit (a folder with an __init__.py that
names the page and maps its numbered sections to scripts); its section
scripts are the modules of that folder its SECTION_SCRIPTS names (other
modules are the page's shared code: models, training loops). This is the
one place pages are registered: the runner, the checker, the tests, the
robustness report and the site all ask here. Imports nothing heavy, so the
page check stays fast.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from pagekit.paths import DIAGRAMS_DIR, PACKAGE_DIR, REPO_ROOT


class PageNameError(ValueError):
    """A name that is not a registered page."""


def rel_path(path) -> str:
    """A path as messages show it: relative to the repository when inside it."""
    try:
        return str(Path(path).resolve().relative_to(REPO_ROOT))
    except ValueError:
        return str(path)


def page_packages() -> list[str]:
    """The page packages, by folder name: every package beside pagekit that
    maps sections to scripts (installed without the repository, pagekit's
    neighbours are every installed package)."""
    return sorted(
        p.parent.name
        for p in DIAGRAMS_DIR.glob("*/__init__.py")
        if p.parent != PACKAGE_DIR and "SECTION_SCRIPTS" in p.read_text(encoding="utf-8", errors="replace")
    )


def page_config(package: str):
    """The page package's __init__: PAGE, PAGE_FILE, SECTION_SCRIPTS, ...
    Only registered page packages are imported (never an arbitrary module)."""
    if package not in page_packages():
        raise PageNameError(
            f"no page package named {package!r} under docs/diagrams (pages: {', '.join(page_packages()) or 'none'})"
        )
    return importlib.import_module(package)


def package_for_page(name: str) -> str:
    """The package of a page given by slug ("normalisation-layers") or package name."""
    for package in page_packages():
        if name in (package, page_config(package).PAGE):
            return package
    slugs = ", ".join(page_config(p).PAGE for p in page_packages())
    raise PageNameError(f"no page named {name!r} (pages: {slugs})")


def section_scripts(package: str) -> list[str]:
    """The section scripts of a page package, by module name: the scripts
    its SECTION_SCRIPTS names, in file-name order."""
    config = page_config(package)
    named = {s for scripts in config.SECTION_SCRIPTS.values() for s in scripts}
    named.update(getattr(config, "EXTRA_SCRIPTS", ()))
    return sorted(named)


def claim_scripts(config, section: int) -> tuple[str, ...]:
    """The scripts whose claims may back the words of a page section: its
    own (SECTION_SCRIPTS), or, for a section that restates other sections'
    results without running anything (the opening cards),
    SUMMARY_SCRIPTS[section]; and, for a section that restates another
    section's result by pointing to it ("across three seeds gives the
    value"), that section's script (RESTATED_SCRIPTS[section]). The notebook
    and the number check go by SECTION_SCRIPTS alone."""
    own = tuple(config.SECTION_SCRIPTS.get(section, ())) or tuple(
        getattr(config, "SUMMARY_SCRIPTS", {}).get(section, ())
    )
    return own + tuple(s for s in getattr(config, "RESTATED_SCRIPTS", {}).get(section, ()) if s not in own)


def sections_in_page_order(config) -> list[tuple[int, str]]:
    """(page section number, script) for every section script of a page (its
    registry, the page package's __init__), at the section that first uses it."""
    seen, order = set(), []
    for number, scripts in sorted(config.SECTION_SCRIPTS.items()):
        for script in scripts:
            if script not in seen:
                seen.add(script)
                order.append((number, script))
    return order
