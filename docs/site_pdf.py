"""`make pdf`: each page of the built site printed to one PDF by headless Chromium.

    .venv/bin/python docs/site_pdf.py [build/site]

Serves the built site (`make docs`) on 127.0.0.1, opens every page in headless
Chromium (Debian's chromium and chromium-driver, as the browser test uses),
waits for every figure to load (the maths is typeset when the site is built), opens every
folded answer, and prints the page with the site's print stylesheet (A4,
every tab shown under its label, no navigation) to <site>/pdf/<page>.pdf,
where each page's front-matter box links it. Prints one line per PDF: its
pages and size.

The pages are served from a local server that is gone once the PDFs are
written, so no link of a PDF may point at it: a link to the page itself stays
an internal jump, a link to another page of the site points at the site's
public address when $SITE_URL gives one (https://example.org/notes), and
otherwise keeps its text and loses its target. Links off the site stay.
"""

from __future__ import annotations

import base64
import functools
import gzip
import http.server
import importlib.util
import io
import os
import re
import sys
import threading
from contextlib import contextmanager
from pathlib import Path

DOCS = Path(__file__).resolve().parent
REPO = DOCS.parent
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)
PDF_DIR = "pdf"  # docs/conf.py links <site>/pdf/<page>.pdf from each page

# Ready to print: every image loaded, every answer open.
PREPARE = """
const done = arguments[arguments.length - 1];
document.querySelectorAll('img[loading="lazy"]').forEach(img => { img.loading = 'eager'; });
document.querySelectorAll('article details').forEach(d => { d.open = true; });
const images = Promise.all(Array.from(document.images).map(img => img.complete ? null :
  new Promise(resolve => { img.onload = img.onerror = resolve; })));
images.then(() => done('ready'), e => done('error: ' + e));
"""
# Links into the local server: rewritten to the public site, or unlinked.
RELINK = """
const base = arguments[0];
for (const a of document.querySelectorAll('a[href]')) {
  const url = new URL(a.getAttribute('href'), location.href);
  if (url.origin !== location.origin) continue;  // off the site
  if (url.pathname === location.pathname && url.hash) continue;  // within the page
  if (base) a.href = base + url.pathname + url.search + url.hash;
  else a.removeAttribute('href');
}
"""
FOOTER = (
    '<div style="font-size:8px; width:100%; text-align:center; color:#555;">'
    '<span class="title"></span> · <span class="pageNumber"></span> / '
    '<span class="totalPages"></span></div>'
)


def pdf_pages(data: bytes) -> int:
    """The number of pages in a PDF (its /Type /Page objects)."""
    return len(re.findall(rb"/Type\s*/Page(?![s\w])", data))


def site_pages(site: Path) -> list[str]:
    """The pages to print: what docs/conf.py calls the site's pages."""
    spec = importlib.util.spec_from_file_location("conf", DOCS / "conf.py")
    conf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conf)
    return [page for page in conf.site_pages() if (site / f"{page}.html").is_file()]


# Text files go out gzipped to a browser that accepts it, as any host of a
# static site sends them: what a slow link costs is then what a reader pays.
COMPRESSED_SUFFIXES = (".html", ".css", ".js", ".svg", ".json", ".txt")


class SiteHandler(http.server.SimpleHTTPRequestHandler):
    """The built site, quietly, with text files gzipped."""

    def log_message(self, format, *args):
        pass

    def send_head(self):
        path = Path(self.translate_path(self.path))
        if "gzip" not in self.headers.get("Accept-Encoding", "") or path.suffix not in COMPRESSED_SUFFIXES:
            return super().send_head()
        try:
            body = gzipped(path, path.stat().st_mtime_ns)
        except (FileNotFoundError, IsADirectoryError):
            return super().send_head()  # its 404 or directory listing
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Vary", "Accept-Encoding")
        self.end_headers()
        return io.BytesIO(body)


@functools.lru_cache(maxsize=256)
def gzipped(path: Path, mtime_ns: int) -> bytes:
    """A file's bytes compressed once (keyed by its modification time)."""
    return gzip.compress(path.read_bytes(), compresslevel=6, mtime=0)


@contextmanager
def serve(site: Path):
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(SiteHandler, directory=str(site)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


@contextmanager
def chromium():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))
    driver.set_page_load_timeout(30)
    driver.set_script_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


def print_page(driver, url: str, target: Path) -> tuple[int, int]:
    """Print one page to ``target``; returns (pages, bytes)."""
    driver.get(url)
    state = driver.execute_async_script(PREPARE)
    if state != "ready":
        raise RuntimeError(f"{url}: not ready to print ({state})")
    driver.execute_script(RELINK, public_base())
    result = driver.execute_cdp_cmd(
        "Page.printToPDF",
        {
            "printBackground": True,
            "preferCSSPageSize": True,
            "displayHeaderFooter": True,
            "headerTemplate": "<div></div>",
            "footerTemplate": FOOTER,
        },
    )
    data = base64.b64decode(result["data"])
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    return pdf_pages(data), len(data)


def public_base() -> str:
    """The site's public address from $SITE_URL, without a trailing slash ("" when unset)."""
    base = os.environ.get("SITE_URL", "").strip().rstrip("/")
    if base and not re.match(r"https?://[^/\s]+", base):
        raise ValueError(f"$SITE_URL must be an http(s) address, got {base!r}")
    return base


def print_site(site: Path, driver=None) -> dict[str, tuple[int, int]]:
    """Every page of ``site`` to <site>/pdf/<page>.pdf; {page: (pages, bytes)}."""
    results = {}
    with serve(site) as base:
        if driver is None:
            with chromium() as own:
                return print_site_with(own, base, site)
        return print_site_with(driver, base, site)
    return results


def print_site_with(driver, base: str, site: Path) -> dict[str, tuple[int, int]]:
    results = {}
    for page in site_pages(site):
        target = site / PDF_DIR / f"{page}.pdf"
        results[page] = print_page(driver, f"{base}/{page}.html", target)
        pages, size = results[page]
        print(
            f"{target.relative_to(REPO) if target.is_relative_to(REPO) else target}: "
            f"{pages} pages, {size / 1e6:.2f} MB",
            flush=True,
        )
    return results


def main(argv: list[str]) -> int:
    site = Path(argv[0]) if argv else REPO / "build" / "site"
    if not (site / "index.html").is_file():
        print(f"error: no built site in {site} (make docs builds it)", file=sys.stderr)
        return 2
    for tool in (CHROMIUM, CHROMEDRIVER):
        if not Path(tool).is_file():
            print(f"error: {tool} is missing: apt-get install -y chromium chromium-driver", file=sys.stderr)
            return 2
    try:
        public_base()
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print_site(site.resolve())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
