"""The documentation site: it builds without a warning, and the page works in a browser.

The site is built into a temporary directory exactly as `make docs` builds it
(Sphinx, MyST, furo, warnings as errors), served over HTTP on 127.0.0.1, and
opened in headless Chromium through selenium. On the page:

- every <img> loaded (naturalWidth > 0), and each figure spans the text width;
- the browser console has no errors (SEVERE entries), so no failed request;
- the maths was typeset by MathJax, with no TeX error;
- every internal link (`#anchor`, or a page or file of the site) resolves to an
  element id or a file that exists.

A full-page screenshot is saved to build/test-artifacts/<page>.png to look at.

Needs Debian's chromium and chromium-driver. Without them the browser test is
skipped, except under CI=true, where it fails: CI must install them.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
PAGE = "normalisation-and-stability"
ARTIFACTS = REPO / "build" / "test-artifacts"

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
]
WINDOW_WIDTH = 1400  # wide enough for furo to show the "on this page" sidebar


def sphinx_build(srcdir: Path, outdir: Path) -> subprocess.CompletedProcess:
    """Run the `make docs` build: `python -m sphinx -E -W --keep-going -b html SRC OUT`."""
    cmd = [sys.executable, "-m", "sphinx", "-E", "-W", "--keep-going", "-q", "-b", "html",
           str(srcdir), str(outdir)]
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    if not (DOCS / f"{PAGE}.md").is_file():
        pytest.fail(f"docs/{PAGE}.md is missing: the site has no page to build")
    outdir = tmp_path_factory.mktemp("site")
    result = sphinx_build(DOCS, outdir)
    assert result.returncode == 0, (
        "the site build failed (warnings are errors):\n" + result.stderr + result.stdout)
    return outdir


def test_site_builds_with_every_page_and_figure(site):
    page = site / f"{PAGE}.html"
    assert page.is_file(), f"{PAGE}.html was not built"
    assert (site / "index.html").is_file(), "the home page was not built"
    source = (DOCS / f"{PAGE}.md").read_text(encoding="utf-8")
    for svg in sorted((REPO / "figures" / PAGE).glob("*.svg")):
        embedded = f"../figures/{PAGE}/{svg.name}" in source
        copied = (site / "_images" / svg.name).is_file()
        if embedded:
            assert copied, f"{svg.name} is embedded in the page but was not copied into the site"
    # Nothing outside the pages became a document.
    assert not list(site.glob("diagrams/**/*.html")), "docs/diagrams leaked into the site"


def test_broken_figure_path_or_anchor_fails_the_build(tmp_path):
    """The guard the site relies on: a bad figure path or a bad #anchor is an error."""
    src = tmp_path / "docs"
    src.mkdir()
    shutil.copy(DOCS / "conf.py", src / "conf.py")
    shutil.copytree(DOCS / "_static", src / "_static")
    (src / "index.md").write_text(
        "# Home\n\n[Missing section](#9-no-such-section)\n\n"
        f"![A figure that does not exist](../figures/{PAGE}/no_such_figure.svg)\n",
        encoding="utf-8")
    result = sphinx_build(src, tmp_path / "out")
    assert result.returncode != 0, "a broken figure path and a broken anchor built cleanly"
    assert "no_such_figure.svg" in result.stderr, result.stderr
    assert "9-no-such-section" in result.stderr, result.stderr


# --- the browser --------------------------------------------------------------------


def _browser_missing_reason() -> str | None:
    missing = [str(p) for p in (CHROMIUM, CHROMEDRIVER) if not os.access(p, os.X_OK)]
    if not missing:
        return None
    return ("headless Chromium is needed for the site's browser test, but "
            + " and ".join(missing) + " is missing: "
            "apt-get install -y chromium chromium-driver")


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 (the base class's name)
        pass


@pytest.fixture(scope="module")
def server(site):
    handler = functools.partial(_QuietHandler, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    reason = _browser_missing_reason()
    if reason:
        if os.environ.get("CI") == "true":
            pytest.fail(reason + " (CI=true: CI must install them)")
        pytest.skip(reason)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")
    options.add_argument(f"--window-size={WINDOW_WIDTH},900")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # An explicit driver path: selenium does not try to download one.
    driver = webdriver.Chrome(options=options, service=Service(executable_path=str(CHROMEDRIVER)))
    driver.set_page_load_timeout(20)
    driver.set_script_timeout(20)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def page(browser, server):
    """The page, loaded, its maths typeset, its console log read once."""
    browser.get(f"{server}/{PAGE}.html")
    math_state = browser.execute_async_script(
        """
        const done = arguments[arguments.length - 1];
        const hasMath = document.querySelector('.math') !== null;
        if (!hasMath) { done('no maths'); return; }
        const start = Date.now();
        (function wait() {
          const mj = window.MathJax;
          if (mj && mj.startup && mj.startup.promise) {
            mj.startup.promise.then(() => done('typeset'), e => done('error: ' + e));
          } else if (Date.now() - start > 15000) {
            done('MathJax never started');
          } else {
            setTimeout(wait, 50);
          }
        })();
        """)
    browser.math_state = math_state
    browser.console = browser.get_log("browser")
    return browser


def test_page_loads_every_image_at_page_width(page):
    images = page.execute_script(
        """
        const article = document.querySelector('article');
        const width = article.getBoundingClientRect().width
          - parseFloat(getComputedStyle(article).paddingLeft)
          - parseFloat(getComputedStyle(article).paddingRight);
        return Array.from(document.images).map(img => ({
          src: img.getAttribute('src'), complete: img.complete,
          natural: img.naturalWidth, shown: img.getBoundingClientRect().width,
          figure: img.closest('article') !== null && /\\.svg$/.test(img.getAttribute('src')),
          text: width,
        }));
        """)
    figures = [im for im in images if im["figure"]]
    source = (DOCS / f"{PAGE}.md").read_text(encoding="utf-8")
    embedded = re.findall(rf"!\[[^\]]*\]\(\.\./figures/{re.escape(PAGE)}/", source)
    assert len(figures) == len(embedded), (
        f"the page embeds {len(embedded)} figures but the browser shows {len(figures)}")
    broken = [im["src"] for im in images if not (im["complete"] and im["natural"] > 0)]
    assert not broken, f"images that did not load: {broken}"
    narrow = [f'{im["src"]} ({im["shown"]:.0f}px of {im["text"]:.0f}px)'
              for im in figures if abs(im["shown"] - im["text"]) > 2]
    assert not narrow, f"figures narrower than the page's text: {narrow}"


def test_page_has_no_console_errors(page):
    errors = [f'{e["level"]}: {e["message"]}' for e in page.console if e["level"] == "SEVERE"]
    assert not errors, "browser console errors:\n" + "\n".join(errors)


def test_page_maths_is_typeset(page):
    # The page writes λ_max and λ_min as maths, so MathJax must have run.
    assert page.math_state == "typeset", page.math_state
    state = page.execute_script(
        """
        return {
          spans: document.querySelectorAll('span.math, div.math').length,
          raw: Array.from(document.querySelectorAll('span.math, div.math'))
                 .filter(el => !el.querySelector('mjx-container')).map(el => el.textContent),
          errors: Array.from(document.querySelectorAll('mjx-merror'))
                 .map(el => el.getAttribute('data-mjx-error') || el.textContent),
        };
        """)
    assert not state["raw"], f"maths left as raw TeX: {state['raw']}"
    assert not state["errors"], f"TeX errors on the page: {state['errors']}"


class _Ids(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("id", "name") and value:
                self.ids.add(value)


@functools.lru_cache(maxsize=None)
def _ids_in(path: Path) -> frozenset[str]:
    parser = _Ids()
    parser.feed(path.read_text(encoding="utf-8"))
    return frozenset(parser.ids)


def test_page_internal_links_resolve(page, server, site):
    links = page.execute_script(
        """
        return Array.from(document.querySelectorAll('a[href]')).map(a => ({
          raw: a.getAttribute('href'), url: a.href, text: a.textContent.trim().slice(0, 60),
          target: a.hash.length > 1 && a.pathname === location.pathname
                  ? document.getElementById(decodeURIComponent(a.hash.slice(1))) !== null
                  : null,
        }));
        """)
    assert links, "the page has no links at all"
    broken = []
    checked = 0
    for link in links:
        parts = urlsplit(link["url"])
        if f"{parts.scheme}://{parts.netloc}" != server:
            continue  # an external link: not this test's business
        checked += 1
        path = unquote(parts.path).lstrip("/")
        target = site / path
        if target.is_dir():
            target = target / "index.html"
        if not target.is_file():
            broken.append(f'{link["raw"]!r} ("{link["text"]}"): no file {path}')
            continue
        fragment = unquote(parts.fragment)
        if not fragment:
            continue
        if link["target"] is not None:  # a link within this page: ask the browser
            found = link["target"]
        elif target.suffix == ".html":
            found = fragment in _ids_in(target)
        else:
            found = True
        if not found:
            broken.append(f'{link["raw"]!r} ("{link["text"]}"): no element id {fragment!r}')
    assert checked, "no internal links were found"
    assert not broken, "internal links that lead nowhere:\n" + "\n".join(broken)


def test_page_contents_list_links_every_numbered_section(page):
    """Each numbered `## N. Title` section is linked from the page's text (its contents list)."""
    unlinked = page.execute_script(
        """
        const linked = new Set(Array.from(document.querySelectorAll('article a[href^="#"]'))
          .filter(a => !a.classList.contains('headerlink'))
          .map(a => decodeURIComponent(a.getAttribute('href').slice(1))));
        return Array.from(document.querySelectorAll('article section > h2'))
          .filter(h => /^\\d/.test(h.textContent.trim()))
          .filter(h => {
            const section = h.parentElement;
            const ids = [section.id].concat(
              Array.from(section.querySelectorAll(':scope > span[id]')).map(s => s.id));
            return !ids.some(id => linked.has(id));
          })
          .map(h => h.textContent.trim());
        """)
    assert not unlinked, f"numbered sections that no link on the page leads to: {unlinked}"


def test_full_page_screenshot(page):
    """Saves build/test-artifacts/<page>.png: the whole page, top to bottom."""
    height = page.execute_script(
        "return Math.max(document.body.scrollHeight, document.documentElement.scrollHeight);")
    page.set_window_size(WINDOW_WIDTH, height)
    time.sleep(0.2)  # let the layout settle at the new size
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    target = ARTIFACTS / f"{PAGE}.png"
    assert page.save_screenshot(str(target)), "the screenshot could not be written"
    assert target.stat().st_size > 10_000, f"{target} is suspiciously small"
