"""The offline classroom outputs: `make site` and `make slides`, checked in headless Chromium.

Every page of the site and every slide deck must load with no failed request and no
request leaving this machine; the widgets render at their saved state, MathJax and
reveal.js come from the local copies; every solution waits behind a closed toggle.
The site and the slides are built and served apart (two xdist groups, each with its own
Chromium), so that two workers can check them at once. Screenshots go to test-artifacts/site/.
"""

import contextlib
import functools
import http.server
import json
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


ON_SITE, ON_SLIDES = pytest.mark.xdist_group("site"), pytest.mark.xdist_group("slides")


def solutions(name: str) -> int:
    cells = json.loads((ROOT / "notebooks" / f"{name}.ipynb").read_text())["cells"]
    return sum("solution" in c["metadata"].get("tags", []) for c in cells)


@contextlib.contextmanager
def built_and_served(out: Path, what: str):
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


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    with built_and_served(tmp_path_factory.mktemp("site"), "site") as served:
        yield served


@pytest.fixture(scope="module")
def slides(tmp_path_factory):
    with built_and_served(tmp_path_factory.mktemp("slides"), "slides") as served:
        yield served


@contextlib.contextmanager
def offline_page(site, path):
    """Open a page with every request leaving 127.0.0.1 aborted; on leaving, assert none failed or left."""
    browser, base, _ = site
    page = browser.new_page()
    failed, outside = [], []
    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith(base)
               else (outside.append(route.request.url), route.abort()))
    page.on("requestfailed", lambda request: failed.append(f"{request.url} ({request.failure})"))
    page.on("response", lambda response: failed.append(f"{response.url} ({response.status})")
            if response.status >= 400 else None)
    try:
        page.goto(f"{base}/{path}", wait_until="networkidle")
        yield page
        assert failed == [], failed
        assert outside == [], f"requests leaving the machine: {outside}"
    finally:
        page.close()


@ON_SITE
def test_index_links_every_notebook_and_deck_and_axe_finds_nothing_serious(site):
    with offline_page(site, "index.html") as page:
        links = page.eval_on_selector_all("a", "nodes => nodes.map(n => n.getAttribute('href'))")
        assert [f"notebooks/{n}.html" for n in NOTEBOOKS] == [link for link in links if link.startswith("notebooks/")]
        assert [f"slides/{n}.slides.html" for n in NOTEBOOKS] == [link for link in links if link.startswith("slides/")]
        page.screenshot(path=ARTIFACTS / "index.png", full_page=True)
        assert _audit(page, "index.html") == []


SOLUTION_TOGGLES = """() => Array.from(document.querySelectorAll('.celltag_solution')).map(cell => {
    const toggle = cell.closest('details.posenc-solution');
    return toggle && {open: toggle.open, summary: toggle.querySelector(':scope > summary').textContent.trim(),
                      code_shown: cell.querySelector('.jp-InputArea').checkVisibility()};
})"""
CLOSED = {"open": False, "summary": "Show the solution", "code_shown": False}


@ON_SITE
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_every_page_loads_offline_leads_on_hides_its_solutions_and_passes_axe(site, name):
    # One visit per page for all of its checks: each page load costs the browser more than the checks.
    import tomllib

    owner_repo = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]["Repository"].removeprefix(
        "https://github.com/")
    _, _, out = site
    k = NOTEBOOKS.index(name)
    with offline_page(site, f"notebooks/{name}.html") as page:
        page.screenshot(path=ARTIFACTS / f"{name}.png", full_page=True)
        broken = page.eval_on_selector_all(
            "img", "imgs => imgs.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src)")
        assert broken == []
        # Every solution waits behind a closed toggle.
        assert page.evaluate(SOLUTION_TOGGLES) == [CLOSED] * solutions(name)
        # The page leads on: previous, next, every notebook, its .ipynb, its slides, Binder and Colab.
        links = page.eval_on_selector_all("nav.posenc-nav a", "nodes => nodes.map(n => n.getAttribute('href'))")
        if k:
            assert f"{NOTEBOOKS[k - 1]}.html" in links
        if k + 1 < len(NOTEBOOKS):
            assert f"{NOTEBOOKS[k + 1]}.html" in links
        assert all(f"{other}.html" in links for other in NOTEBOOKS), "the contents list every notebook"
        assert f"{name}.ipynb" in links and (out / "notebooks" / f"{name}.ipynb").is_file()
        assert f"../slides/{name}.slides.html" in links
        assert f"https://mybinder.org/v2/gh/{owner_repo}/HEAD?urlpath=lab/tree/notebooks/{name}.ipynb" in links
        assert f"https://colab.research.google.com/github/{owner_repo}/blob/main/notebooks/{name}.ipynb" in links
        assert " min." in page.locator("nav.posenc-nav .posenc-time").inner_text()
        assert "Goal" in page.locator(".jp-RenderedMarkdown").first.inner_text()
        if page.locator(".jupyter-widgets").count():  # widgets render after load; their pictures get alt text then
            page.wait_for_selector(".widget-image[alt]")
        assert _audit(page, f"notebooks/{name}.html") == []


@ON_SITE
def test_the_toggle_shows_the_solution_on_the_site(site):
    with offline_page(site, "notebooks/03_pe_formula.html") as page:
        toggle = page.locator("details.posenc-solution").first
        code = toggle.locator(".jp-InputArea")
        assert not code.is_visible()
        toggle.locator("summary").click()
        code.wait_for(state="visible")
        toggle.screenshot(path=ARTIFACTS / "solution_open.png")


@ON_SITE
def test_widgets_render_at_their_saved_state(site):
    with offline_page(site, "notebooks/08_explore.html") as page:
        page.locator(".widget-slider").first.wait_for()
        labels = page.locator(".widget-slider .widget-label").all_inner_texts()
        assert {"d_model", "max_sequence_length", "base", "position", "dimension"} <= set(labels)
        pictures = page.locator(".jupyter-widgets img")
        assert pictures.count() == 2
        assert all(page.evaluate("img => img.naturalWidth > 0", img.element_handle()) for img in pictures.all())
        page.screenshot(path=ARTIFACTS / "08_explore_widgets.png", full_page=True)


@ON_SITE
def test_mathjax_renders_the_formula_offline(site):
    with offline_page(site, "notebooks/03_pe_formula.html") as page:
        page.wait_for_selector(".MathJax_CHTML, mjx-container", timeout=30_000)


@ON_SLIDES
def test_the_toggle_shows_the_solution_on_its_slide(slides):
    with offline_page(slides, "slides/03_pe_formula.slides.html") as page:
        page.wait_for_selector(".reveal.ready", timeout=30_000)
        # Go to the slide that holds the first solution (reveal.js comes through require.js: see the axe test).
        page.evaluate("""() => {
            const defined = requirejs.s.contexts._.defined;
            const Reveal = defined[Object.keys(defined).find(key => /reveal\\.js\\/dist\\/reveal(\\.js)?$/.test(key))];
            Reveal.configure({transition: 'none'});
            const slide = document.querySelector('details.posenc-solution').closest('section');
            const {h, v} = Reveal.getIndices(slide);
            Reveal.slide(h, v);
        }""")
        toggle = page.locator("details.posenc-solution").first
        toggle.locator("summary").wait_for(state="visible")
        code = toggle.locator(".jp-InputArea")
        assert not code.is_visible()
        toggle.locator("summary").click()
        code.wait_for(state="visible")
        page.screenshot(path=ARTIFACTS / "solution_open.slides.png")


AXE = ROOT / "tools" / "web" / "node_modules" / "axe-core" / "axe.min.js"
SERIOUS = """async (root) => (await axe.run(root || document, {resultTypes: ['violations']})).violations
    .filter(v => v.impact === 'serious' || v.impact === 'critical')
    .map(v => `${v.id} (${v.impact}): ${v.nodes.map(n => n.html.slice(0, 80)).join(' | ')}`)"""


def _audit(page, path):
    page.add_script_tag(content=AXE.read_text())
    found = page.evaluate(SERIOUS)
    ARTIFACTS.joinpath("axe").mkdir(exist_ok=True)
    report = "\n".join(found) or "no serious or critical findings"
    ARTIFACTS.joinpath("axe", path.replace("/", "_") + ".txt").write_text(report)
    return found


@ON_SLIDES
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_every_deck_loads_offline_hides_its_solutions_and_passes_axe_on_every_slide(slides, name):
    with offline_page(slides, f"slides/{name}.slides.html") as page:
        page.wait_for_selector(".reveal.ready", timeout=30_000)  # reveal.js marks the deck ready once initialised
        assert page.locator(".reveal .slides > section").count() >= 2
        page.screenshot(path=ARTIFACTS / f"{name}.slides.png")
        toggles = page.evaluate(SOLUTION_TOGGLES)
        # Every slide but the current one is hidden, so no code shows there whether its toggle is open or not.
        assert [{**toggle, "code_shown": False} for toggle in toggles] == [CLOSED] * solutions(name)
        assert page.locator("details.posenc-solution[open]").count() == 0
        page.add_script_tag(content=AXE.read_text())
        # axe skips what is hidden, and reveal.js hides every slide but the current one: visit each.
        found = page.evaluate(r"""async (serious) => {
            const audit = eval(serious);
            // The deck loads reveal.js through require.js, so it is no global: take it from require's registry.
            const defined = requirejs.s.contexts._.defined;
            const Reveal = defined[Object.keys(defined).find(key => /reveal\.js\/dist\/reveal(\.js)?$/.test(key))];
            Reveal.configure({transition: 'none', backgroundTransition: 'none'});
            const found = [];
            for (const slide of Reveal.getSlides()) {
                const {h, v} = Reveal.getIndices(slide);
                Reveal.slide(h, v);
                await new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
                for (const finding of await audit(slide)) found.push(`slide ${h}.${v || 0}: ${finding}`);
            }
            return [Reveal.getSlides().length, found];
        }""", SERIOUS)
        count, findings = found
        assert count >= 2 and findings == []


def test_the_readme_badge_points_at_the_one_repository():
    import tomllib

    repository = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]["Repository"]
    badge = f"https://mybinder.org/v2/gh/{repository.removeprefix('https://github.com/')}/HEAD"
    assert badge in (ROOT / "README.md").read_text()
