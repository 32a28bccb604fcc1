"""The offline classroom outputs: `make site` and `make slides`, checked in headless Chromium.

Every page of the site and every slide deck must load with no failed request and no
request leaving this machine; the widgets render at their saved state, MathJax and
reveal.js come from the local copies. Screenshots go to test-artifacts/site/.
"""

import contextlib
import functools
import http.server
import subprocess
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import lab_browser  # noqa: E402

pytestmark = pytest.mark.slow
ARTIFACTS = ROOT / "test-artifacts" / "site"
NOTEBOOKS = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    for what in ("slides", "site"):
        subprocess.run([sys.executable, str(ROOT / "tools" / "build_site.py"), what, "--out", str(out)], check=True)
    handler = functools.partial(QuietHandler, directory=str(out))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    try:
        with lab_browser.chromium(out) as browser:
            yield browser, f"http://127.0.0.1:{server.server_address[1]}", out
    finally:
        server.shutdown()


@contextlib.contextmanager
def offline_page(site, path):
    """Open a page with every request leaving 127.0.0.1 aborted; on leaving, assert none failed or left."""
    browser, base, _ = site
    page = browser.new_page()
    failed, outside = [], []
    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith(base)
               else (outside.append(route.request.url), route.abort()))
    page.on("requestfailed", lambda request: failed.append(f"{request.url} ({request.failure})"))
    page.on("response", lambda response: failed.append(f"{response.url} ({response.status})") if response.status >= 400 else None)
    try:
        page.goto(f"{base}/{path}", wait_until="networkidle")
        yield page
        assert failed == [], failed
        assert outside == [], f"requests leaving the machine: {outside}"
    finally:
        page.close()


def test_index_links_every_notebook_and_deck(site):
    with offline_page(site, "index.html") as page:
        links = page.eval_on_selector_all("a", "nodes => nodes.map(n => n.getAttribute('href'))")
        assert [f"notebooks/{n}.html" for n in NOTEBOOKS] == [link for link in links if link.startswith("notebooks/")]
        assert [f"slides/{n}.slides.html" for n in NOTEBOOKS] == [link for link in links if link.startswith("slides/")]
        page.screenshot(path=ARTIFACTS / "index.png", full_page=True)


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_every_page_loads_offline(site, name):
    with offline_page(site, f"notebooks/{name}.html") as page:
        page.screenshot(path=ARTIFACTS / f"{name}.png", full_page=True)
        broken = page.eval_on_selector_all("img", "imgs => imgs.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src)")
        assert broken == []


def test_widgets_render_at_their_saved_state(site):
    with offline_page(site, "notebooks/07_explore.html") as page:
        page.locator(".widget-slider").first.wait_for()
        labels = page.locator(".widget-slider .widget-label").all_inner_texts()
        assert {"d_model", "max_sequence_length", "base", "position", "dimension"} <= set(labels)
        pictures = page.locator(".jupyter-widgets img")
        assert pictures.count() == 2
        assert all(page.evaluate("img => img.naturalWidth > 0", img.element_handle()) for img in pictures.all())
        page.screenshot(path=ARTIFACTS / "07_explore_widgets.png", full_page=True)


def test_mathjax_renders_the_formula_offline(site):
    with offline_page(site, "notebooks/03_pe_formula.html") as page:
        page.wait_for_selector(".MathJax_CHTML, mjx-container", timeout=30_000)


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_every_slide_deck_loads_offline(site, name):
    with offline_page(site, f"slides/{name}.slides.html") as page:
        page.wait_for_selector(".reveal.ready", timeout=30_000)  # reveal.js marks the deck ready once initialised
        assert page.locator(".reveal .slides > section").count() >= 2
        page.screenshot(path=ARTIFACTS / f"{name}.slides.png")
