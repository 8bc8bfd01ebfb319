"""Each of the site's Sphinx extensions (docs/_ext/) on a tiny source tree of
its own: a scratch repository whose docs/ holds a copy of the extensions, a
conf.py that loads only the one under test, and a page or two that exercise
it. The whole site's build and browser tests are in test_site.py."""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"

CONF = """
import importlib.util, sys
from pathlib import Path
DOCS = Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location(
    "site_ext", DOCS / "_ext" / "__init__.py", submodule_search_locations=[str(DOCS / "_ext")])
sys.modules["site_ext"] = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sys.modules["site_ext"])
project = "tiny"
extensions = ["myst_parser", {extensions}]
exclude_patterns = ["_ext"]
myst_enable_extensions = ["colon_fence", "dollarmath"]
myst_heading_anchors = 3
myst_heading_slug_func = "github"
numfig = True
{extra}
"""


def build(tmp_path: Path, extensions: list[str], pages: dict[str, str], extra: str = "") -> tuple[int, str, Path]:
    """Build a tiny site; returns (exit status, stderr, output folder)."""
    docs = tmp_path / "repo" / "docs"
    docs.mkdir(parents=True)
    shutil.copytree(DOCS / "_ext", docs / "_ext", ignore=shutil.ignore_patterns("__pycache__"))
    names = ", ".join(repr(f"site_ext.{name}") for name in extensions)
    (docs / "conf.py").write_text(CONF.format(extensions=names, extra=extra), encoding="utf-8")
    for name, text in pages.items():
        (docs / name).parent.mkdir(parents=True, exist_ok=True)
        (docs / name).write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-E", "-q", "-b", "html", str(docs), str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.returncode, done.stderr, out


def html(out: Path, page: str) -> str:
    return (out / f"{page}.html").read_text(encoding="utf-8")


def test_typography_keeps_numbers_and_titles_whole_and_links_sections(tmp_path):
    page = (
        "# Tiny\n\n## 1. One\n\nAs section 2 shows, 4.77 × 10⁻⁶ and 0.8 ± 0.1 stay whole.\n\n"
        "## 2. QK-norm\n\n| run | loss |\n| --- | --- |\n| a | 1.5 |\n| b | 2.25 |\n"
    )
    # (section links are made on the site's pages, which the index is not)
    status, stderr, out = build(tmp_path, ["typography"], {"index.md": "# Index\n", "tiny.md": page})
    assert status == 0, stderr
    text = html(out, "tiny")
    assert "4.77\u00a0×\u00a010⁻⁶" in text and "0.8\u00a0±\u00a00.1" in text
    assert "QK\u2011norm" in text
    assert 'href="#2-qk-norm"' in text and ">section 2</a>" in text
    body = text.split("<tbody>")[1].split("</tbody>")[0]
    assert body.count('class="num') == 2, body  # the loss column, not the run column


def test_figures_carry_their_size_and_load_lazily_after_the_first(tmp_path):
    svg = '<svg xmlns="http://www.w3.org/2000/svg" width="72pt" height="36pt" viewBox="0 0 72 36"></svg>\n'
    figure = ":::{{figure}} {name}\n:name: fig-{stem}\n:alt: A box\n\nA box.\n:::\n\n"
    page = "# Tiny\n\n" + figure.format(name="a.svg", stem="a") + figure.format(name="b.svg", stem="b")
    docs_files = {"index.md": page, "a.svg": svg, "b.svg": svg}
    status, stderr, out = build(tmp_path, ["figures"], docs_files)
    assert status == 0, stderr
    images = [tag for tag in html(out, "index").split("<img")[1:]]
    assert len(images) == 2
    assert all('width="96" height="48"' in tag for tag in images)  # 72 pt = 96 px
    assert 'loading="lazy"' not in images[0] and 'loading="lazy"' in images[1]


def test_a_figure_with_a_phone_rendering_is_served_through_picture(tmp_path):
    """A figure whose SVG has a <stem>.phone.svg beside it gets a <picture>
    whose source picks the phone rendering below the breakpoint, with that
    rendering's own size; the rendering is copied into the site beside the
    figure. A figure without one keeps its plain <img>."""
    svg = '<svg xmlns="http://www.w3.org/2000/svg" width="{w}pt" height="{h}pt" viewBox="0 0 {w} {h}"></svg>\n'
    figure = ":::{{figure}} {name}\n:name: fig-{stem}\n:alt: A box\n\nA box.\n:::\n\n"
    page = "# Tiny\n\n" + figure.format(name="a.svg", stem="a") + figure.format(name="b.svg", stem="b")
    docs_files = {
        "index.md": page,
        "a.svg": svg.format(w=72, h=36),
        "a.phone.svg": svg.format(w=36, h=54),
        "b.svg": svg.format(w=72, h=36),
    }
    status, stderr, out = build(tmp_path, ["figures"], docs_files)
    assert status == 0, stderr
    text = html(out, "index")
    pictures = re.findall(r"<picture>.*?</picture>", text, re.S)
    assert len(pictures) == 1 and 'srcset="_images/a.phone.svg"' in pictures[0], text
    assert '<source media="(max-width: 660px)"' in pictures[0] and 'width="48" height="72"' in pictures[0]
    assert (out / "_images" / "a.phone.svg").read_text() == docs_files["a.phone.svg"]
    assert "b.svg" in text and "b.phone.svg" not in text


def test_a_listing_is_captioned_with_its_file_and_lines_and_the_file_is_served(tmp_path):
    code = "def first():\n    return 1\n\n\ndef second():\n    return 2\n"
    page = "# Tiny\n\n```{literalinclude} code/example.py\n:pyobject: second\n```\n"
    status, stderr, out = build(tmp_path, ["code_listings"], {"index.md": page, "code/example.py": code})
    assert status == 0, stderr
    text = html(out, "index")
    assert "_code/docs/code/example.py" in text and "second, lines 5–6" in text
    assert (out / "_code" / "docs" / "code" / "example.py").read_text(encoding="utf-8") == code


def test_the_front_matter_box_gives_the_reading_time_and_refuses_numbers(tmp_path):
    box = "```{page-facts}\n:level: Beginner\nWhat a gradient is.\n```\n"
    status, stderr, out = build(tmp_path / "good", ["page_facts"], {"index.md": "# Tiny\n\n" + box + "\nSome words.\n"})
    assert status == 0, stderr
    text = html(out, "index")
    assert "Reading" in text and "about 5 min" in text and "Beginner" in text
    assert "pdf/index.pdf" in text  # the page's PDF, which `make docs` prints
    status, stderr, out = build(
        tmp_path / "no-pdf", ["page_facts"], {"index.md": "# Tiny\n\n" + box}, "site_pdfs = False"
    )
    assert status == 0, stderr
    assert "pdf/" not in html(out, "index")  # built without PDFs: no link to one
    numbered = box.replace("What a gradient is.", "What 3 gradients are.")
    status, stderr, _ = build(tmp_path / "bad", ["page_facts"], {"index.md": "# Tiny\n\n" + numbered})
    assert "holds no numbers" in stderr


def test_a_file_from_outside_the_repository_fails_the_build(tmp_path):
    outside = tmp_path / "secret.txt"
    outside.write_text("OUTSIDE\n", encoding="utf-8")
    page = "# Tiny\n\n```{literalinclude} ../../secret.txt\n```\n"  # from repo/docs/ to tmp_path
    status, stderr, out = build(tmp_path, ["repository_only"], {"index.md": page})
    assert status != 0 and "outside the repository" in stderr, stderr
    assert "OUTSIDE" not in html(out, "index")


def test_the_maths_is_typeset_when_the_site_is_built(tmp_path):
    """The site's maths settings (docs/conf.py) on a tiny page: the HTML holds
    KaTeX's output, no TeX source outside its MathML annotation, no script."""
    extra = (
        'extensions.insert(1, "sphinxcontrib.katex")\nkatex_prerender = True\nkatex_css_path = "katex/katex.min.css"'
    )
    status, stderr, out = build(
        tmp_path, ["katex_node"], {"index.md": "# Tiny\n\nInline $x^2$ and\n\n$$\\frac{a}{b}$$\n"}, extra
    )
    assert status == 0, stderr
    page = html(out, "index")
    assert page.count('class="katex"') == 2 and "katex-display" in page
    shown = re.sub(r"<annotation.*?</annotation>", "", page, flags=re.S)
    assert "x^2" not in shown and "\\frac" not in shown and "katex.min.js" not in page


def test_the_sites_script_loads_async_from_the_head_with_its_checksum(tmp_path):
    """early_script puts site.js in every page's <head>, async, versioned by
    its content, relative to the page (L10: at the end of <body> its controls
    waited for the whole page)."""
    script = "/* the site's script */\n"
    pages = {"index.md": "# Tiny\n", "sub/page.md": "# Deeper\n", "_static/site.js": script}
    extra = 'html_static_path = ["_static"]'
    status, stderr, out = build(tmp_path, ["early_script"], pages, extra)
    assert status == 0, stderr
    version = hashlib.sha256(script.encode()).hexdigest()[:8]
    for page, prefix in (("index", ""), ("sub/page", "../")):
        text = html(out, page)
        head, _, body = text.partition("</head>")
        tag = f'<script async src="{prefix}_static/site.js?v={version}"></script>'
        assert tag in head, f"{page}: no {tag} in the head"
        assert "site.js" not in body, f"{page}: site.js loaded again in the body"


@pytest.mark.parametrize("with_report", [False, True])
def test_the_index_and_the_robustness_page_are_generated(tmp_path, with_report):
    pages = {
        "index.md": "# Site\n\n```{page-index}\n```\n",
        "robustness/index.md": "# Robustness\n\n```{robustness-reports}\n```\n",
        "tiny.md": "# A tiny page\n\nIt says one thing.\n",
    }
    if with_report:
        report = tmp_path / "repo" / "figures" / "tiny" / "robustness-report.md"
        report.parent.mkdir(parents=True)
        report.write_text("# Report\n\n## section\n\n| claim | seed 0 |\n| --- | --- |\n| x | held |\n")
    status, stderr, out = build(tmp_path, ["generated_pages"], pages)
    assert status == 0, stderr
    assert "A tiny page" in html(out, "index") and "It says one thing" in html(out, "index")
    robustness = html(out, "robustness/index")
    if with_report:
        assert "The full tables" in robustness and "held" in robustness
    else:
        assert "No robustness report has been generated for this page yet" in robustness


def heading_levels(page_html: str) -> list[int]:
    """The levels of the headings in a page's body (Sphinx's default theme's
    role="main"; its sidebar's headings come after it), in order."""
    body = page_html[page_html.find('role="main"') :]
    body = body[: body.find('class="sphinxsidebar"')]
    return [int(level) for level in re.findall(r"<h([1-6])\b", body)]


def test_the_robustness_page_skips_no_heading_level(tmp_path):
    """A report's sections sit one level under the page's section for it (the
    report's own title gives way to that section): h1, h2, h3, h4, never h2
    straight to h4 (site review round 3, L9)."""
    pages = {
        "index.md": "# Site\n\n```{page-index}\n```\n",
        "robustness/index.md": "# Robustness\n\n```{robustness-reports}\n```\n",
        "tiny.md": "# A tiny page\n\nIt says one thing.\n",
    }
    report = tmp_path / "repo" / "figures" / "tiny" / "robustness-report.md"
    report.parent.mkdir(parents=True)
    report.write_text(
        "# Report\n\n## section\n\n| claim | seed 0 |\n| --- | --- |\n| x | held |\n\n### detail\n\nMore.\n"
    )
    status, stderr, out = build(tmp_path, ["generated_pages"], pages)
    assert status == 0, stderr
    levels = heading_levels(html(out, "robustness/index"))
    skips = [(a, b) for a, b in zip(levels, levels[1:], strict=False) if b > a + 1]
    assert levels[:4] == [1, 2, 3, 4] and not skips, f"heading levels {levels}: skips {skips}"


KATEX_ORPHAN = """
import importlib.util, os, sys
from pathlib import Path
spec = importlib.util.spec_from_file_location("katex_node", Path(sys.argv[1]))
katex_node = importlib.util.module_from_spec(spec)
spec.loader.exec_module(katex_node)
katex_node.setup(None)
import sphinxcontrib.katex as katex
server = katex.KaTeXServer.start()
print(server.process.pid, flush=True)
os._exit(0)  # as a build killed outright: no atexit, no stop
"""


def test_katex_s_server_ends_with_the_process_that_started_it(tmp_path):
    """A build that ends without stopping KaTeX's Node.js server (killed, or
    its exit handlers skipped) does not leave the server running and holding
    its output open (docs/_ext/katex_node.py)."""
    done = subprocess.run(
        [sys.executable, "-c", KATEX_ORPHAN, str(DOCS / "_ext" / "katex_node.py")],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    pid = int(done.stdout.split()[0])
    deadline = time.monotonic() + 5
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    alive = Path(f"/proc/{pid}").exists() and "Z" not in Path(f"/proc/{pid}/stat").read_text().split()[2]
    assert not alive, f"KaTeX's server (pid {pid}) outlived the process that started it"
