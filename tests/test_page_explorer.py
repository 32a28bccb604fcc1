"""The encoding explorer live on the site page of notebook 08, without a kernel, checked in headless Chromium.

The page is built by tools/build_site.py (notebook 08 only) and passed through tools/web/explorer/embed.py's
`live_explorers`, as the site build does. One page load in one browser serves every browser check: the page's table
equals posenc.builder.sinusoidal_encoding's, its caption equals the Python explorer's, a key press on a slider is on
screen within one frame, the explorer fits a 1280 x 720 screen, and the other explorer on the page (the pipeline
explorer, kernel-bound) is its saved picture with a one-line note and no control. benchmarks/bench_page_explorer.py
measures the key press to repaint time with more presses and views.
"""

import base64
import contextlib
import functools
import html
import http.server
import json
import re
import statistics
import threading
from pathlib import Path

import numpy as np
import pytest

import lab_browser
from explorer_page import build_page, press_and_time
from tools.web.explorer import embed

ROOT = Path(__file__).resolve().parent.parent

ON_PAGE = pytest.mark.xdist_group("page_explorer")
# One frame at 60 Hz is 16.7 ms; the issue asks for a median of at most 16 ms. benchmarks/results/page_explorer.json
# has medians of 6-14 ms (7 ms for this case; the repaint itself 2-8 ms) on 2 cores at a load average of 7.
FRAME_MS = 16


def widget_page(notebook: str, output_cell: int) -> str:
    """A minimal exported page: one widget view (of the output of cell `output_cell`) and the notebook's widget state."""
    stored = json.loads((ROOT / "notebooks" / f"{notebook}.ipynb").read_text())
    state = stored["metadata"]["widgets"]["application/vnd.jupyter.widget-state+json"]
    view = stored["cells"][output_cell]["outputs"][0]["data"]["application/vnd.jupyter.widget-view+json"]
    return ('<html><head><script type="application/vnd.jupyter.widget-state+json">' + json.dumps(state) +
            '</script></head><body><div class="jp-OutputArea-output">'
            '<script type="application/vnd.jupyter.widget-view+json">\n' + json.dumps(view) +
            "\n</script></div></body></html>")


def explorer_cell(notebook: str, name: str) -> int:
    cells = json.loads((ROOT / "notebooks" / f"{notebook}.ipynb").read_text())["cells"]
    return next(k for k, c in enumerate(cells) if c["cell_type"] == "code" and f"{name}(" in "".join(c["source"]))


def test_embed_uses_the_package_views_colours_and_colour_maps():
    from posenc import plots
    from posenc.explorers.encoding_explorer import VIEWS

    assert embed.VIEWS == VIEWS
    assert embed.COLOURS == {"sin": plots.SINE_COLOUR, "cos": plots.COSINE_COLOUR, "profile": plots.OKABE_ITO[3]}
    assert embed.COLORMAPS == {"diverging": plots.DIVERGING, "sequential": plots.SEQUENTIAL}


@pytest.mark.parametrize(("notebook", "explorer"), [("08_explore", "PipelineExplorer"),
                                                    ("13_position_schemes", "SchemeExplorer")])
def test_a_kernel_bound_explorer_becomes_its_picture_and_a_note_with_no_control(notebook, explorer):
    page = widget_page(notebook, explorer_cell(notebook, explorer))
    made = embed.live_explorers(page, notebook)
    assert "widget-view+json" not in made and "posenc-live-explorer" not in made
    figure = re.search(r'<figure class="posenc-saved-explorer">.*</figure>', made, re.S).group(0)
    assert re.search(r'<img src="data:image/png;base64,[A-Za-z0-9+/=]{1000,}" alt="[^"]{20,}">', figure)
    assert f'<a href="{notebook}.ipynb">run the notebook</a> to move this explorer' in figure
    assert not re.search(r"<(input|button|select|textarea)\b", figure)
    assert embed.live_explorers(made, notebook) == made  # the site build may call it on its own output


def test_the_site_hook_makes_the_encoding_explorer_live_with_its_script_from_the_static_folder():
    import nbformat

    notebook = nbformat.read(ROOT / "notebooks" / "08_explore.ipynb", as_version=4)
    page = widget_page("08_explore", explorer_cell("08_explore", "EncodingExplorer"))
    made = embed.embed_explorers(page, notebook, "../_static")  # as tools/build_site.py calls it
    settings = json.loads(html.unescape(re.search(r'data-posenc-explorer="([^"]+)"', made).group(1)))
    assert {k: settings[k] for k in ("d_model", "max_sequence_length", "base", "position", "dimension", "view")} == {
        "d_model": 128, "max_sequence_length": 64, "base": 10000.0, "position": 10, "dimension": 100, "view": "curves"}
    assert made.count('src="../_static/explorer/explorer.js"') == 1 and "widget-view+json" not in made
    assert embed.embed_explorers(made, notebook, "../_static") == made
    assert "run the notebook</a>" not in embed.embed_explorers(page, notebook, "../_static")  # no name: no link
    inline = embed.live_explorers(page, "08_explore")  # no static folder: script and style in the page
    assert 'id="posenc-explorer-script">' in inline and "_static" not in inline


def test_a_page_without_widgets_is_left_alone_and_bad_arguments_are_named():
    page = "<html><body><p>no widgets</p></body></html>"
    assert embed.live_explorers(page, "00_start_here") == page
    with pytest.raises(TypeError, match="page"):
        embed.live_explorers(b"<html>", "08_explore")
    with pytest.raises(ValueError, match="notebook_name"):
        embed.live_explorers(page, "")
    with pytest.raises(ValueError, match="static"):
        embed.embed_explorers(page, None, "")


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    """The page of notebook 08, made live, open at 1280 x 720 in headless Chromium (one load for every check)."""
    out = tmp_path_factory.mktemp("page_explorer")
    build_page(out / "site")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(out / "site")))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with lab_browser.chromium(out) as browser:
            tab = browser.new_page()
            tab.set_viewport_size({"width": 1280, "height": 720})
            errors = []
            tab.on("pageerror", lambda error: errors.append(str(error)))
            outside = []
            base = f"http://127.0.0.1:{server.server_address[1]}"
            tab.route("**/*", lambda route: route.continue_() if route.request.url.startswith(base)
                      else (outside.append(route.request.url), route.abort()))
            tab.goto(f"{base}/notebooks/08_explore.html", wait_until="load")
            tab.wait_for_function("window.posencExplorer !== undefined")
            yield tab
            assert errors == [] and outside == [], (errors, outside)
    finally:
        with contextlib.suppress(Exception):
            server.shutdown()


@ON_PAGE
@pytest.mark.slow
def test_the_live_explorer_starts_from_the_saved_settings_and_fits_the_screen(page):
    # Cell 6 of the notebook moved the explorer to curves, dimension 100, before it was saved.
    assert page.evaluate("window.posencExplorer.state()") == {
        "d_model": 128, "max_sequence_length": 64, "base": 10000, "position": 10, "dimension": 100, "view": "curves",
        "compare_layouts": False}
    assert page.locator(".posenc-live-explorer input[type=range]").count() == 5
    assert page.locator(".widget-slider, .jupyter-widgets.widget-container").count() == 0  # no dead widget left
    page.evaluate("document.querySelector('.posenc-live-explorer').scrollIntoView({block: 'start'})")
    fits = page.evaluate("""() => {
        const root = document.querySelector('.posenc-live-explorer').getBoundingClientRect();
        const views = Array.from(document.querySelectorAll('.posenc-x-views label')).map(l => l.getBoundingClientRect().top);
        const parts = Array.from(document.querySelectorAll('.posenc-live-explorer input, .posenc-live-explorer canvas'))
            .map(n => n.getBoundingClientRect());
        return {height: root.height, inside: parts.every(r => r.right <= window.innerWidth && r.bottom <= window.innerHeight),
                oneRow: new Set(views).size === 1};
    }""")
    assert fits["inside"] and fits["oneRow"] and fits["height"] < 720, fits
    # The kernel-bound pipeline explorer: its saved picture, the note, and nothing to press.
    saved = page.locator(".posenc-saved-explorer")
    assert saved.count() == 1 and saved.locator("input, button, select, textarea").count() == 0
    assert "run the notebook to move this explorer" in saved.inner_text()


SETTINGS = [  # (max_sequence_length, d_model, base): the saved start, an odd d_model, the sliders' far corners
    (64, 128, 10_000.0), (33, 15, 10.0), (256, 256, 1e6), (1, 1, 10 ** 0.3), (200, 255, 10 ** 4.05)]


def floats(text: str, state: dict) -> np.ndarray:
    """The page's float32 table from its bytes (base64), shaped (max_sequence_length, d_model)."""
    return np.frombuffer(base64.b64decode(text), dtype="<f4").reshape(state["max_sequence_length"], state["d_model"])


@ON_PAGE
@pytest.mark.slow
def test_the_page_table_equals_the_package_to_float32_precision(page):
    from posenc.builder import sinusoidal_encoding

    for length, d_model, base in SETTINGS:
        state = page.evaluate("s => window.posencExplorer.set(s)",
                              {"max_sequence_length": length, "d_model": d_model, "base": base, "view": "heatmap"})
        got = floats(page.evaluate("window.posencExplorer.tableBytes()"), page.evaluate("window.posencExplorer.state()"))
        expected = sinusoidal_encoding(max_sequence_length=state["max_sequence_length"], d_model=state["d_model"],
                                       base=state["base"]).numpy()
        assert got.shape == (length, d_model)
        # Every table the sliders reach is computed as the package computes it: the same float32 numbers.
        assert np.array_equal(got, expected), (length, d_model, base, float(np.abs(got - expected).max()))
    # Past 2^16 entries (an explorer started larger than the sliders' 256) the package rotates small tables in float32;
    # the page does the same (tools/web/explorer/explorer.js says how far it can follow torch's rounding on every CPU):
    # at most one unit in the last place of float32 apart, even and odd d_model, a last block of rows cut short.
    for length, d_model, base in [(400, 300, 1e6), (300, 255, 10_000.0)]:
        got = floats(page.evaluate("a => window.posencExplorer.encodingBytes(...a)", [length, d_model, base]),
                     {"max_sequence_length": length, "d_model": d_model})
        expected = sinusoidal_encoding(max_sequence_length=length, d_model=d_model, base=base).numpy()
        assert (np.abs(got - expected) <= np.spacing(np.abs(expected))).all(), (length, d_model, base)


@ON_PAGE
@pytest.mark.slow
def test_the_caption_and_similarity_are_the_python_explorers(page):
    from posenc.builder import sinusoidal_encoding
    from posenc.explorers import EncodingExplorer

    settings = {"max_sequence_length": 40, "d_model": 33, "base": 10.0, "position": 7, "dimension": 32, "view": "curves"}
    page.evaluate("s => window.posencExplorer.set(s)", settings)
    reference = EncodingExplorer(**settings, debounce=0)
    assert page.evaluate("window.posencExplorer.caption()") == reference.message.value
    page.evaluate("window.posencExplorer.set({view: 'similarity'})")
    similarity = np.array(page.evaluate("window.posencExplorer.similarity()")).reshape(40, 40)
    table = sinusoidal_encoding(max_sequence_length=40, d_model=33, base=10.0)
    np.testing.assert_allclose(similarity, (table.double() @ table.double().T).numpy(), atol=1e-5)


@ON_PAGE
@pytest.mark.slow
def test_a_key_press_on_a_slider_is_on_screen_within_one_frame(page):
    page.evaluate("window.posencExplorer.set({max_sequence_length: 64, d_model: 128, base: 10000, view: 'heatmap'})")
    samples = press_and_time(page, "d_model", 16)  # a new table each press: the most work a heatmap key press does
    totals = [sample["total"] for sample in samples]
    assert statistics.median(totals) <= FRAME_MS, totals
    assert page.evaluate("window.posencExplorer.state().d_model") == 128  # right, left, ...: back where it started
