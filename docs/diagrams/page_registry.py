"""Which pages exist and which section scripts serve them.

A page is a package under docs/diagrams/ (a folder with an __init__.py that
names the page and maps its numbered sections to scripts); its section
scripts are the other modules of that folder. Imports nothing heavy, so the
page check stays fast.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

DIAGRAMS_DIR = Path(__file__).resolve().parent


def page_packages() -> list[str]:
    """The page packages, by folder name."""
    return sorted(p.parent.name for p in DIAGRAMS_DIR.glob("*/__init__.py"))


def page_config(package: str):
    """The page package's __init__: PAGE, PAGE_FILE, SECTION_SCRIPTS, ..."""
    if str(DIAGRAMS_DIR) not in sys.path:
        sys.path.insert(0, str(DIAGRAMS_DIR))
    return importlib.import_module(package)


def section_scripts(package: str) -> list[str]:
    """The section scripts of a page package, by module name."""
    return sorted(p.stem for p in (DIAGRAMS_DIR / package).glob("*.py") if p.stem != "__init__")
