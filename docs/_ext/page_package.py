"""The page's code as a package file the site serves beside each notebook.

A page's notebook installs the project's package (``pagekit``, the page
packages beside it) from the clone it sits in, or else from the package
file the reader downloaded with it (pagekit/notebooks.py, the install
cell). The site builds that file from the checkout it builds the pages from
(``pip wheel``, no dependencies, under build/package/), so the code and the
pages are of one commit, and the role ``{package-file}`text``` links it as a
download (on GitHub, where a clone is at hand, the role shows as text).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.errors import ExtensionError

from pagekit.paths import REPO_ROOT as PROJECT  # where the package's code is (a test builds a copy of docs/)
from site_ext.pages import REPO


def build_package(app) -> None:
    """pagekit-<version>-py3-none-any.whl, made afresh under build/package/
    in a folder of this build's own (named after its output folder), from a
    copy of the project's files, so two builds at once share nothing and the
    tree gets no build files. (Inside the repository: the site serves only
    the repository's files, repository_only.py.)"""
    out = REPO / "build" / "package" / hashlib.sha256(str(Path(app.outdir).resolve()).encode()).hexdigest()[:12]
    shutil.rmtree(out, ignore_errors=True)
    with tempfile.TemporaryDirectory(prefix="page-package-") as tmp:
        source = Path(tmp) / "source"
        ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc")
        shutil.copytree(PROJECT / "docs" / "diagrams", source / "docs" / "diagrams", ignore=ignore)
        for name in ("pyproject.toml", "README.md"):
            shutil.copy2(PROJECT / name, source / name)
        command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out)]
        done = subprocess.run([*command, str(source)], capture_output=True, text=True)
    wheels = sorted(out.glob("pagekit-*.whl"))
    if done.returncode != 0 or len(wheels) != 1:
        raise ExtensionError(f"could not build the pages' package file ({' '.join(command)}):\n{done.stderr[-2000:]}")
    app.config.page_package_file = str(wheels[0])


def package_file_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    """{package-file}`words`: a download link to the package file, the file's
    name in code after the words."""
    env = inliner.document.settings.env
    wheel = Path(env.config.page_package_file)
    target = "/" + os.path.relpath(wheel, env.srcdir)  # "/...": relative to the source folder
    node = addnodes.download_reference(rawtext, "", reftarget=target, refdoc=env.docname, refexplicit=True)
    node += nodes.inline(text, f"{text} (")
    node += nodes.literal(wheel.name, wheel.name)
    node += nodes.inline(")", ")")
    return [node], []


def setup(app):
    app.add_config_value("page_package_file", "", "env")
    app.connect("builder-inited", build_package)
    app.add_role("package-file", package_file_role)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
