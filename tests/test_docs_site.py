"""The built documentation site, rendered in a real headless browser.

Builds the site with mkdocs, serves it on loopback and opens pages in Debian's Chromium through
its ChromeDriver (selenium pointed at /usr/bin/chromedriver: driver managers that download a
browser do not work offline). Fails on a code block wider than its column (it would scroll or
cut comments off) and on a link that leads nowhere. CI installs both packages (`.ci/run`);
elsewhere the test skips, saying what to install. ``TOOLBRIDGE_DOCS_SITE=DIR`` opens a site
already built there instead (scripts/test builds it once, strictly, for the docs check).
"""

from __future__ import annotations

import functools
import html.parser
import http.server
import os
import shutil
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag, urljoin, urlsplit

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = os.environ.get("TOOLBRIDGE_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("TOOLBRIDGE_CHROMEDRIVER", "/usr/bin/chromedriver")
PAGES = ["quickstart/", "reference/", "", "testing/", "runtime/"]
"""Pages rendered in the browser: the quick start and the API reference first."""
WINDOW = (1366, 900)
"""A common laptop screen: code blocks must fit the content column there."""


def _browser_missing() -> str | None:
    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not Path(path).exists():
            return f"{path} not found (apt-get install {package})"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[dev]')"
    return None


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The built site served on a free loopback port; yields its base URL."""
    missing = _browser_missing()
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"the docs site test needs a browser in CI: {missing}")
        pytest.skip(f"no headless browser: {missing}")
    built = os.environ.get("TOOLBRIDGE_DOCS_SITE")
    out = Path(built) if built else tmp_path_factory.mktemp("site")
    if not built:
        subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q", "-d", str(out)],
                       cwd=ROOT, check=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    elif not (out / "index.html").is_file():
        pytest.fail(f"TOOLBRIDGE_DOCS_SITE={built} holds no built site (no index.html)")
    handler = functools.partial(_QuietHandler, directory=str(out))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01},
                              daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        if not built:
            shutil.rmtree(out, ignore_errors=True)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def browser(site: str) -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
                 f"--window-size={WINDOW[0]},{WINDOW[1]}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_window_size(*WINDOW)
    try:
        yield driver
    finally:
        driver.quit()


OVERFLOWING_CODE = """
return Array.from(document.querySelectorAll('.md-content pre > code')).filter(
    c => c.scrollWidth > c.clientWidth + 1).map(c => ({
        width: c.clientWidth, needed: c.scrollWidth,
        line: c.textContent.split('\\n').reduce((a, b) => b.length > a.length ? b : a, '')}));
"""


@pytest.mark.parametrize("page", PAGES)
def test_code_blocks_fit_their_column(browser: Any, site: str, page: str) -> None:
    browser.get(site + page)
    assert browser.find_elements("css selector", ".md-content"), f"{page}: no content rendered"
    wide = browser.execute_script(OVERFLOWING_CODE)
    assert not wide, f"{page or 'home'}: code blocks overflow their column at {WINDOW}: {wide}"


class _Links(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "a" and values.get("href"):
            self.hrefs.append(str(values["href"]))
        if values.get("id"):
            self.ids.add(str(values["id"]))


@functools.cache
def _fetch(url: str) -> tuple[int, _Links]:
    parser = _Links()
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            status = response.status
            if "html" in response.headers.get("Content-Type", ""):
                parser.feed(response.read().decode("utf-8", "replace"))
    except urllib.error.HTTPError as exc:
        status = exc.code
    return status, parser


def test_links_lead_somewhere(browser: Any, site: str) -> None:
    """Every link on every page reaches a page that exists, and an anchor on it; no link to a
    placeholder host."""
    origin = urlsplit(site).netloc
    pages = [site + p for p in PAGES]
    browser.get(site)
    nav = [a.get_attribute("href") for a in browser.find_elements("css selector", "nav a[href]")]
    pages += [h for h in nav if h and urlsplit(h).netloc == origin]
    broken: list[str] = []
    for page in dict.fromkeys(urldefrag(p)[0] for p in pages):
        status, links = _fetch(page)
        if status != 200:
            broken.append(f"{page}: HTTP {status}")
            continue
        for href in links.hrefs:
            target = urljoin(page, href)
            parts = urlsplit(target)
            if parts.scheme not in ("http", "https"):
                continue
            if "example.invalid" in parts.netloc or parts.netloc.endswith(".example"):
                broken.append(f"{page}: placeholder link {href}")
                continue
            if parts.netloc != origin:
                continue  # outside links are not fetched (no network); placeholders are caught
            address, fragment = urldefrag(target)
            there, anchors = _fetch(address)
            if there != 200:
                broken.append(f"{page}: {href} -> HTTP {there}")
            elif fragment and fragment not in anchors.ids:
                broken.append(f"{page}: {href} -> no #{fragment} there")
    assert not broken, "broken links:\n" + "\n".join(broken)
