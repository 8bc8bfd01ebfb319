"""The site serves its own maths: MathJax's startup, core, TeX input and
CommonHTML output components, its fonts and the TeX extensions it loads on
demand, about 1.3 MB, copied at the end of the build from the pinned
sphinx-mathjax-offline package (which holds all of MathJax, 24 MB, most of
it never used by a page; a source of files here, not a Sphinx extension).
No CDN is reachable on these machines or in CI. conf.py sets mathjax_path
and mathjax3_config to match what is copied."""

from __future__ import annotations

import shutil
from importlib import metadata
from pathlib import Path

from site_ext.pages import SiteError

MATHJAX_PACKAGE = "sphinx-mathjax-offline"  # pinned in requirements.txt
# What the site ships of MathJax (about 1.3 MB of its 24 MB): the components
# above, the fonts the output draws with, and the TeX extensions its
# autoloader fetches on demand.
MATHJAX_FILES = (
    "startup.js",
    "core.js",
    "input/tex.js",
    "output/chtml.js",
    "output/chtml/fonts/tex.js",
    "a11y/assistive-mml.js",
) + tuple(
    f"input/tex/extensions/{name}.js"
    for name in (
        # The TeX packages MathJax's autoloader fetches when a formula uses one of
        # their macros (\boldsymbol, \cancel, \color, \coloneqq, ...); not
        # physics, bussproofs or mhchem, which no page of this kind needs.
        "action",
        "amscd",
        "bbox",
        "boldsymbol",
        "braket",
        "cancel",
        "cases",
        "centernot",
        "color",
        "colortbl",
        "empheq",
        "enclose",
        "extpfeil",
        "gensymb",
        "html",
        "mathtools",
        "unicode",
        "upgreek",
        "verb",
    )
)
MATHJAX_DIRS = ("output/chtml/fonts/woff-v2",)


def _mathjax_source() -> Path:
    try:
        dist = metadata.distribution(MATHJAX_PACKAGE)
    except metadata.PackageNotFoundError as exc:
        raise SiteError(
            f"{MATHJAX_PACKAGE} is not installed: the site's maths comes from it (pip install -r requirements.txt)"
        ) from exc
    root = Path(dist.locate_file("sphinx-mathjax-offline/static/mathjax"))
    if not (root / MATHJAX_FILES[0]).is_file():
        raise SiteError(f"{MATHJAX_PACKAGE} has no {MATHJAX_FILES[0]} under {root}")
    return root


def _copy_mathjax(app, exc) -> None:
    if exc is not None or app.builder.format != "html":
        return
    source = _mathjax_source()
    target = Path(app.outdir) / "_static" / "mathjax"
    if target.exists():
        shutil.rmtree(target)
    for name in MATHJAX_FILES:
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source / name, target / name)
    for folder in MATHJAX_DIRS:
        shutil.copytree(source / folder, target / folder)


def setup(app):
    app.connect("build-finished", _copy_mathjax)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
