"""Where things are: the repository and its folders, found from this file
(the package is installed in place, `pip install -e .`)."""

from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
DIAGRAMS_DIR = PACKAGE_DIR.parent  # the page packages live beside this one
REPO_ROOT = DIAGRAMS_DIR.parents[1]
FIGURES_DIR = REPO_ROOT / "figures"
BUILD_DIR = REPO_ROOT / "build"
# Where a page's notebook writes its runs' numbers and figures, beside itself.
NOTEBOOK_RUNS = "notebook-runs"
# Each figure <name>.svg has a phone rendering beside it, <name>.phone.svg
# (style.phone_layout); the site serves it below PHONE_BREAKPOINT_PX (CSS px),
# where the page rendering's smallest text would read under 11 px.
PHONE_SUFFIX = ".phone.svg"
PHONE_BREAKPOINT_PX = 660
# Runs that are not the page's own (another seed offset or numeric variant).
OTHER_RUNS_DIR = BUILD_DIR / "runs"


def golden_dir(page: str) -> Path:
    """What `make golden` pins for a page: figures/<page>/golden/."""
    return FIGURES_DIR / page / "golden"
