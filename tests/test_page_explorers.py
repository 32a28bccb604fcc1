"""The explorers (anywidgets): their settings in Python, their numbers and pictures in the page.

The browser checks open the site's pages of notebooks 08 (encoding and pipeline explorers) and 13 (the scheme
explorer), as tools/build_site.py builds them (no kernel, the saved explorers rendered by the vendored widget renderer
and anywidget's own front-end file), in headless Chromium: the numbers the page computes equal posenc's, a key press
on a control repaints and the description follows, a typed sentence is tokenised within the vocabulary the explorer
was given, and each explorer fits a phone's width.
benchmarks/bench_explorer_latency.py measures the key press to repaint time over more presses and every control.
"""

import contextlib
import functools
import http.server
import threading
from pathlib import Path

import numpy as np
import pytest
import torch

from posenc import attention, schemes, tokens
from posenc.builder import sinusoidal_encoding
from posenc.embedding import embedding_matrix
from posenc.encoding import wavelengths
from posenc.explorers import EncodingExplorer, PipelineExplorer
from posenc.explorers._front_end import still_picture
from posenc.explorers.encoding_explorer import STILL_HINT, VIEWS

ROOT = Path(__file__).resolve().parent.parent



# --- Python: the settings --------------------------------------------------------------------------------------------

def test_settings_are_checked_where_they_are_set():
    explorer = EncodingExplorer(d_model=16, max_sequence_length=20, position=30, dimension=99)
    assert (explorer.position, explorer.dimension) == (19, 15)  # past the end: moved to the last row and column
    explorer.d_model = 9
    assert explorer.dimension == 8
    for name, value, error in [("d_model", 0, ValueError), ("d_model", 257, ValueError), ("d_model", 2.5, TypeError),
                               ("position", 20, ValueError), ("base", 1.0, ValueError), ("view", "table", ValueError)]:
        with pytest.raises(error, match=name):
            setattr(explorer, name, value)
    with pytest.raises(ValueError, match="view"):
        EncodingExplorer(view="table")
    with pytest.raises(TypeError, match="compare_layouts"):
        EncodingExplorer(compare_layouts="yes")


def test_where_widgets_cannot_render_a_still_picture_and_one_line():
    explorer = EncodingExplorer(d_model=8, max_sequence_length=8)
    data, _ = explorer._repr_mimebundle_()
    assert data["text/plain"] == f"{explorer.readout()}\n{STILL_HINT}" and "JupyterLab" in STILL_HINT
    assert data["image/png"].startswith(b"\x89PNG") and "application/vnd.jupyter.widget-view+json" in data


def test_08s_still_pictures_leave_the_widget_line_to_the_notebooks_first_cell():
    # 08 says once, in its first cell, what a still picture means; 13's scheme explorer still draws the line.
    explorer = EncodingExplorer(d_model=8, max_sequence_length=8)
    assert explorer.picture() == still_picture(explorer.figure(), explorer.readout(), hint=False)
    assert explorer.picture() != still_picture(explorer.figure(), explorer.readout())


def test_the_still_picture_follows_the_view_and_says_the_pages_readout():
    # A reader without widgets sees the view the explorer is set to, and the sentence the page writes under it.
    explorer = EncodingExplorer(d_model=128, max_sequence_length=64, position=10)
    pictures = set()
    for view in VIEWS:
        explorer.view = view
        pictures.add(explorer.picture())
    explorer.view, explorer.compare_layouts = "heatmap", True
    pictures.add(explorer.picture())
    assert len(pictures) == len(VIEWS) + 1
    explorer.view = "similarity"
    assert explorer.readout().endswith("smallest at position 63 (29.47).")
    explorer.base = 10
    assert explorer.readout().endswith("row 10 is largest at itself (64.00) and smallest at position 27 (-14.53).")
    table = sinusoidal_encoding(max_sequence_length=64, d_model=128, base=10, dtype=torch.float64)
    assert torch.allclose(explorer.similarity(), table @ table.T, atol=1e-9)
    odd = EncodingExplorer(d_model=33, max_sequence_length=40, view="similarity")
    table = sinusoidal_encoding(max_sequence_length=40, d_model=33, dtype=torch.float64)
    assert torch.allclose(odd.similarity(), table @ table.T, atol=1e-6)  # the last sine column, from the float32 table
    explorer = EncodingExplorer(d_model=128, max_sequence_length=100, view="wavelengths")
    assert "; 40 of 128 columns make a full turn within positions 0 to 99;" in explorer.readout()
    # A full turn must fit in the table's 99 steps: at base 19.95, columns 120 and 121 (99.x positions) do not.
    explorer.base = 10**1.3
    assert "; 118 of 128 columns make a full turn within positions 0 to 99;" in explorer.readout()
    layouts = EncodingExplorer(d_model=128, dimension=100, compare_layouts=True)
    assert "column 100 (column 50 on the right) marked" in layouts.readout()
    assert "column 101 (column 114 on the right) marked" in EncodingExplorer(dimension=101, compare_layouts=True).readout()
    explorer = EncodingExplorer(d_model=128, view="curves", dimension=100)
    assert explorer.readout() == ("Column 100 and its cos partner over 64 positions: column 100 (sin) turns once every "
                                  "8,379 positions; at position 10 it is 0.007.")


# --- The site's page of the explorers' notebook: the saved explorer, live without a kernel -----------------------------

def site_page(out: Path, stem: str = "08_explore") -> Path:
    """The site's page of notebook `stem` as tools/build_site.py builds it (its vendored require.js and html-manager,
    anywidget's front end from its wheel), into out/notebooks/ (assets into out/_static)."""
    from tools import build_site

    every = build_site.notebooks
    build_site.notebooks = lambda: [ROOT / "notebooks" / f"{stem}.ipynb"]
    try:
        build_site.build_site(out)
    finally:
        build_site.notebooks = every
    return out / "notebooks" / f"{stem}.html"


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@contextlib.contextmanager
def served(folder: Path):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


EXPLORERS_08 = ("document.querySelector('.posenc-encoding-explorer canvas') !== null"
                " && document.querySelector('.posenc-pipeline-explorer canvas') !== null")


def open_page(browser, base: str, path: str, *, width=1280, height=720, ready: str = EXPLORERS_08):
    """The page at `path` once `ready` holds, every request outside `base` refused and recorded, its errors recorded."""
    tab = browser.new_page()
    tab.set_viewport_size({"width": width, "height": height})
    tab.errors, tab.outside = [], []
    tab.on("pageerror", lambda error: tab.errors.append(str(error)))
    tab.route("**/*", lambda route: route.continue_() if route.request.url.startswith(base)
              else (tab.outside.append(route.request.url), route.abort()))
    tab.goto(f"{base}/{path}", wait_until="load")
    tab.wait_for_function(ready, timeout=90_000)
    return tab


EXPLORER = "document.querySelector('.posenc-encoding-explorer')"


@pytest.fixture(scope="module")
def site(built):
    """The teacher's site, served, and one Chromium: tests/conftest.py's `built`, which tests/test_site.py uses too.
    The browser tests here are in its xdist group ("site"), so the site is built and Chromium started once for both
    (each time cost more than all the checks here)."""
    return built.browser, built.base


@pytest.fixture(scope="module")
def page(site):
    tab = open_page(*site, "notebooks/08_explore.html")
    yield tab
    assert tab.errors == [] and tab.outside == [], (tab.errors, tab.outside)


def set_slider(page, name: str, value: float) -> None:
    page.evaluate("""([name, value]) => {
        const input = document.querySelector(`.posenc-encoding-explorer input[name=${name}]`);
        input.value = value;
        input.dispatchEvent(new Event('input', {bubbles: true}));
    }""", [name, value])


SETTINGS = [  # (max_sequence_length, d_model, log10 base): the start, an odd d_model, the sliders' far corners
    (64, 128, 4), (33, 15, 1), (256, 256, 6), (1, 1, 0.3), (200, 255, 4.05)]


@pytest.mark.slow
@pytest.mark.xdist_group("site")
def test_the_page_starts_from_the_saved_settings_and_describes_them(page):
    state = page.evaluate(f"{EXPLORER}.posenc.state()")
    # As its cell's code sets it.
    assert state == {"d_model": 128, "max_sequence_length": 64, "base": 10000, "position": 10, "dimension": 20,
                     "view": "heatmap", "compare_layouts": False}
    page.locator(".posenc-encoding-explorer").first.locator("input[value=heatmap]").check()
    set_slider(page, "dimension", 4)
    live = page.locator(".posenc-encoding-explorer").first.locator("[aria-live=polite]")
    # Column 4 (pair 2) turns once every 2 pi 10000^(4/128) positions.
    assert f"column 4 (sin) turns once every {float(wavelengths(d_model=128)[4]):.4g} positions" in live.inner_text()
    # Every control has a visible label and is reached by the keyboard (inputs: focusable by default).
    labels = page.evaluate("""() => Array.from(document.querySelector('.posenc-encoding-explorer').querySelectorAll('input'))
        .map(i => [i.type, i.closest('label') ? i.closest('label').innerText.trim().split('\\n')[0] : ''])""")
    assert len(labels) == 5 + 4 + 1 and all(text for _, text in labels), labels


@pytest.mark.slow
@pytest.mark.xdist_group("site")
def test_the_page_numbers_equal_the_package(page):
    for length, d_model, exponent in SETTINGS:
        set_slider(page, "max_sequence_length", length)
        set_slider(page, "d_model", d_model)
        set_slider(page, "base", exponent)
        state = page.evaluate(f"{EXPLORER}.posenc.state()")
        got = np.array(page.evaluate(f"{EXPLORER}.posenc.table()"), dtype=np.float64).reshape(length, d_model)
        expected = sinusoidal_encoding(max_sequence_length=length, d_model=d_model, base=state["base"]).numpy()
        assert np.array_equal(got, expected.astype(np.float64)), (length, d_model, state["base"])
        np.testing.assert_allclose(page.evaluate(f"{EXPLORER}.posenc.wavelengths()"),
                                   wavelengths(d_model=d_model, base=state["base"]).numpy(), rtol=1e-15)
    # The similarity view: PE[p] . PE[q], as table @ table.T, and the description names its smallest entry.
    set_slider(page, "max_sequence_length", 40)
    set_slider(page, "d_model", 33)
    set_slider(page, "base", 1)
    set_slider(page, "position", 7)
    page.locator(".posenc-encoding-explorer").first.locator("input[value=similarity]").check()
    table = sinusoidal_encoding(max_sequence_length=40, d_model=33, base=10.0).double()
    similarity = np.array(page.evaluate(f"{EXPLORER}.posenc.similarity()")).reshape(40, 40)
    np.testing.assert_allclose(similarity, (table @ table.T).numpy(), atol=1e-5)
    least = int(torch.argmin(table[7] @ table.T))
    assert f"smallest at position {least} (" in page.evaluate(f"{EXPLORER}.posenc.description()")
    # An odd d_model's last column is a sine with no cos partner, and the curves view's description says so.
    set_slider(page, "dimension", 32)
    page.locator(".posenc-encoding-explorer").first.locator("input[value=curves]").check()
    assert page.evaluate(f"{EXPLORER}.posenc.description()").startswith("Column 32, with no cos partner, over 40")
    # Wavelengths: how many columns make a full turn within the table, as the notebook's exercise counts them.
    for setting, value in [("max_sequence_length", 64), ("d_model", 128), ("base", 4)]:
        set_slider(page, setting, value)
    page.locator(".posenc-encoding-explorer").first.locator("input[value=wavelengths]").check()
    within = int((wavelengths(d_model=128) <= 63).sum())
    description = page.evaluate(f"{EXPLORER}.posenc.description()")
    assert f"{within} of 128 columns make a full turn within positions 0 to 63" in description
    # The still picture's readout (where widgets cannot render) is the page's description, in every view.
    set_slider(page, "dimension", 101)
    for view in VIEWS:
        page.locator(".posenc-encoding-explorer").first.locator(f"input[value={view}]").check()
        still = EncodingExplorer(**page.evaluate(f"{EXPLORER}.posenc.state()"))
        assert still.readout() == page.evaluate(f"{EXPLORER}.posenc.description()"), view


# Arm one measurement: focus `control` (a CSS selector) inside the explorer `root`, and resolve window.__latency with the
# time from the next key press to the first frame after the explorer says it repainted (its "posenc:painted" event).
ARM_JS = """([root, control]) => {
    root = document.querySelector(root);
    const input = root.querySelector(control);
    input.focus();
    window.__latency = new Promise(resolve => {
        let start = null;
        input.addEventListener('keydown', () => { start = performance.now(); }, {once: true, capture: true});
        const painted = event => {
            if (start === null) return;
            root.removeEventListener('posenc:painted', painted);
            const paint = event.detail.ms;
            requestAnimationFrame(() => resolve({total: performance.now() - start, paint}));
        };
        root.addEventListener('posenc:painted', painted);
    });
}"""


@pytest.mark.slow
@pytest.mark.xdist_group("site")
def test_a_key_press_repaints(page):
    # How fast is a benchmark's question (benchmarks/bench_explorer_latency.py, with the same probe): a test on a
    # shared machine asserts only that the press repaints, what it drew and said.
    page.locator(".posenc-encoding-explorer").first.locator("input[value=heatmap]").check()
    for setting, value in [("max_sequence_length", 64), ("d_model", 128), ("base", 4)]:
        set_slider(page, setting, value)
    before = page.evaluate(f"{EXPLORER}.posenc.description()")
    picture = page.evaluate(f"{EXPLORER}.querySelector('canvas').toDataURL()")
    page.evaluate(ARM_JS, [".posenc-encoding-explorer", "input[name=d_model]"])
    page.keyboard.press("ArrowRight")
    assert page.evaluate("window.__latency")["paint"] >= 0  # the explorer said it repainted
    assert page.evaluate(f"{EXPLORER}.posenc.state().d_model") == 129
    assert page.evaluate(f"{EXPLORER}.posenc.description()") != before
    assert page.evaluate(f"{EXPLORER}.querySelector('canvas').toDataURL()") != picture


@pytest.mark.slow
@pytest.mark.xdist_group("site")
@pytest.mark.parametrize("view", VIEWS)
def test_every_view_fits_a_phone_and_a_laptop(page, view):
    page.locator(".posenc-encoding-explorer").first.locator(f"input[value={view}]").check()
    for width, height in [(390, 844), (1280, 720)]:
        page.set_viewport_size({"width": width, "height": height})
        page.evaluate(f"{EXPLORER}.posenc.draw()")
        fits = page.evaluate("""() => {
            const root = document.querySelector('.posenc-encoding-explorer');
            const parts = Array.from(root.querySelectorAll('input, canvas, label, p')).map(n => n.getBoundingClientRect());
            return {right: Math.max(...parts.map(r => r.right)), scroll: document.documentElement.scrollWidth};
        }""")
        assert fits["right"] <= width and fits["scroll"] <= width, (view, width, fits)
    page.set_viewport_size({"width": 1280, "height": 720})


# --- The pipeline explorer -------------------------------------------------------------------------------------------

def test_the_pipeline_explorer_holds_only_the_vocabulary_and_w_e():
    explorer = PipelineExplorer(sentence="My name is John", max_sequence_length=10, d_model=6)
    size = explorer.vocabulary.vocab_size
    assert explorer._vocabulary == list(explorer.vocabulary.tokens)
    tables = np.frombuffer(explorer._W_E, dtype="<f4")
    assert tables.size == size * 64 * 65 // 2  # W_E for d_model = 1 ... 64
    start = size * 6 * 5 // 2
    assert np.array_equal(tables[start:start + size * 6], embedding_matrix(vocab_size=size, d_model=6, seed=0).numpy().ravel())
    for name, value, error in [("sentence", 42, TypeError), ("d_model", 65, ValueError), ("max_sequence_length", 0, ValueError)]:
        with pytest.raises(error, match=name):
            setattr(explorer, name, value)
    data, _ = explorer._repr_mimebundle_()
    assert data["text/plain"] == STILL_HINT and data["image/png"].startswith(b"\x89PNG")


PIPELINE = "document.querySelector('.posenc-pipeline-explorer')"


def type_sentence(page, sentence: str) -> None:
    page.locator(".posenc-pipeline-explorer input[name=sentence]").fill(sentence)


@pytest.mark.slow
@pytest.mark.xdist_group("site")
@pytest.mark.parametrize("sentence", ["My name is John", "What is his name?", "my name is my name", "",
                                      "John's friend, Grant!", "שלום John", "WHAT IS YOUR NAME ?"])
def test_the_pipeline_page_tokenises_and_computes_as_the_package(page, sentence):
    reference = PipelineExplorer(sentence=sentence, max_sequence_length=10, d_model=6)
    set_pipeline = "s => { const i = document.querySelector(`.posenc-pipeline-explorer input[name=${s[0]}]`); " \
                   "i.value = s[1]; i.dispatchEvent(new Event('input', {bubbles: true})); }"
    page.evaluate(set_pipeline, ["max_sequence_length", 10])
    page.evaluate(set_pipeline, ["d_model", 6])
    type_sentence(page, sentence)
    padded = tokens.pad(tokens.tokenize(sentence), max_sequence_length=10)
    assert page.evaluate(f"{PIPELINE}.posenc.tokens()") == padded
    assert page.evaluate(f"{PIPELINE}.posenc.ids()") == reference.vocabulary.ids(padded)
    expected = reference.matrices()
    for name, key in [("X", "X"), ("PE", "PE"), ("sum", "X + PE")]:
        got = np.array(page.evaluate(f"{PIPELINE}.posenc.{name}()"), dtype=np.float32).reshape(10, 6)
        assert np.array_equal(got, expected[key].numpy()), (sentence, name)
    unknown = sorted({t for t in tokens.tokenize(sentence) if t not in reference.vocabulary.tokens})
    message = page.evaluate(f"{PIPELINE}.posenc.message()")
    assert all(word in message for word in unknown) and ("<UNK>" in message) == bool(unknown), message


@pytest.mark.slow
@pytest.mark.xdist_group("site")
def test_a_sentence_too_long_shows_the_packages_error_and_keeps_the_picture(page):
    type_sentence(page, "My name is John")
    picture = page.evaluate(f"{PIPELINE}.querySelector('canvas').toDataURL()")
    # Two tokens more than the explorer's max_sequence_length (the running example's, or what a test before set).
    length = int(page.locator(".posenc-pipeline-explorer input[name=max_sequence_length]").input_value())
    too_long = " ".join(f"word{k}" for k in range(1, length + 3))
    type_sentence(page, too_long)
    with pytest.raises(ValueError) as error:
        tokens.pad(tokens.tokenize(too_long), max_sequence_length=length)
    assert f"ValueError: {error.value}" in page.evaluate(f"{PIPELINE}.posenc.message()")
    assert page.evaluate(f"{PIPELINE}.querySelector('canvas').toDataURL()") == picture
    page.locator(".posenc-pipeline-explorer input[name=max_sequence_length]").focus()
    for _ in range(2):
        page.keyboard.press("ArrowRight")
    assert page.evaluate(f"{PIPELINE}.posenc.tokens()")[-1] == f"word{length + 2}"
    assert page.evaluate(f"{PIPELINE}.querySelector('canvas').toDataURL()") != picture


@pytest.mark.slow
@pytest.mark.xdist_group("site")
def test_the_pipeline_explorer_fits_a_phone(page):
    type_sentence(page, "What is your name?")
    for width, height in [(390, 844), (1280, 720)]:
        page.set_viewport_size({"width": width, "height": height})
        page.evaluate(f"{PIPELINE}.posenc.draw()")
        right = page.evaluate(f"""() => Math.max(...Array.from({PIPELINE}.querySelectorAll('input, canvas, label, p'))
            .map(n => n.getBoundingClientRect().right))""")
        assert right <= width and page.evaluate("document.documentElement.scrollWidth") <= width, (width, right)


# --- The scheme explorer, on notebook 13's page ------------------------------------------------------------------------

SCHEME = "document.querySelector('.posenc-scheme-explorer')"


@pytest.fixture(scope="module")
def scheme_page(site):
    tab = open_page(*site, "notebooks/13_position_schemes.html",
                    ready="document.querySelector('.posenc-scheme-explorer canvas') !== null")
    yield tab
    assert tab.errors == [] and tab.outside == [], (tab.errors, tab.outside)


def set_scheme(page, **settings) -> None:
    """Move the scheme explorer's controls as a learner would (view first), each with its own input event."""
    page.evaluate("""settings => {
        const root = document.querySelector('.posenc-scheme-explorer');
        for (const [name, value] of Object.entries(settings)) {
            if (name === 'view') { root.querySelector(`input[value=${value}]`).click(); continue; }
            const input = root.querySelector(`input[name=${name}]`);
            if (input.type === 'checkbox') { if (input.checked !== value) input.click(); continue; }
            input.value = value;
            input.dispatchEvent(new Event('input', {bubbles: true}));
        }
    }""", settings)


@pytest.mark.slow
@pytest.mark.xdist_group("site")
def test_the_scheme_page_starts_from_the_saved_settings_and_labels_its_controls(scheme_page):
    # Notebook 13's call: SchemeExplorer(view="learned", position=4, trained=training.train("learned")).
    assert scheme_page.evaluate(f"{SCHEME}.posenc.state()") == {
        "view": "learned", "base": 10000, "query_position": 100, "num_heads": 8, "head": 0, "max_sequence_length": 16,
        "causal": True, "position": 4}
    labels = scheme_page.evaluate("""() => Array.from(document.querySelectorAll('.posenc-scheme-explorer input'))
        .map(i => i.closest('label') ? i.closest('label').innerText.trim().split('\\n')[0] : '')""")
    assert len(labels) == 3 + 2 + 4 + 1 and all(labels), labels
    assert scheme_page.locator(".posenc-scheme-explorer [aria-live=polite]").count() == 1


@pytest.mark.slow
@pytest.mark.xdist_group("site")
def test_the_scheme_page_numbers_equal_the_package(scheme_page):
    word = torch.randn(64, generator=torch.Generator().manual_seed(1))
    weights = attention.projection_weights(d_model=64, seed=0)
    # rotary: RoPE's and the sinusoid's scores at p and at 0, for positions near 0 and at the slider's end, and bases
    # across the base slider (log10 0.3 ... 6).
    for p, exponent in [(0, 4), (3, 4), (100, 0.3), (1000, 6), (537, 2.5)]:
        set_scheme(scheme_page, view="rotary", query_position=p, base=exponent)
        base = scheme_page.evaluate(f"{SCHEME}.posenc.state().base")
        got = scheme_page.evaluate(f"{SCHEME}.posenc.scores()")
        assert got["offsets"] == list(range(-min(p, 60), 61)) and got["at0"]["offsets"] == list(range(61))
        for scheme in schemes.SCORE_SCHEMES:
            for query, shown in ((p, got), (0, got["at0"])):
                expected = schemes.same_word_scores(word, weights, scheme=scheme, query_position=query,
                                                    offsets=shown["offsets"], base=base)
                np.testing.assert_allclose(shown[scheme], expected.numpy(), rtol=0, atol=1e-9, err_msg=f"{scheme} {p}")
    # alibi: every number of heads (powers of two and not), causal and not, at the slider's ends and between, against
    # the package's float64 bias (each number of heads at one of the three lengths, in turn).
    set_scheme(scheme_page, view="alibi")
    shapes = [(2, True), (16, False), (64, True)]
    for num_heads in range(1, 17):
        length, causal = shapes[num_heads % 3]
        set_scheme(scheme_page, num_heads=num_heads, max_sequence_length=length, causal=causal)
        slopes = schemes.alibi_slopes(num_heads=num_heads, dtype=torch.float64).numpy()
        np.testing.assert_allclose(scheme_page.evaluate(f"{SCHEME}.posenc.slopes()"), slopes, rtol=1e-15)
        bias = np.array(scheme_page.evaluate(f"{SCHEME}.posenc.bias()")).reshape(num_heads, length, length)
        expected = schemes.alibi_bias(num_heads=num_heads, max_sequence_length=length, causal=causal,
                                      dtype=torch.float64).numpy()
        np.testing.assert_allclose(bias, expected, rtol=1e-15, err_msg=f"{num_heads} heads, {length}, {causal}")
    # learned: the tables the page holds (the notebook's trained model), and each row's cosine similarity to every row.
    tables = scheme_page.evaluate(f"{SCHEME}.posenc.tables()")
    assert (tables["rows"], tables["d"]) == (16, 32)
    set_scheme(scheme_page, view="learned")
    for p in (0, 7, 15):
        set_scheme(scheme_page, position=p)
        got = scheme_page.evaluate(f"{SCHEME}.posenc.similarity()")
        for when in ("before", "after"):
            table = torch.tensor(tables[when], dtype=torch.float32).reshape(16, 32)
            expected = torch.nn.functional.cosine_similarity(table[p : p + 1], table, dim=-1)
            np.testing.assert_allclose(got[when], expected.numpy(), atol=1e-6)


# (control, key, view, what the description says after the press); the settings start at the notebook's.
SCHEME_KEYS = [("input[name=query_position]", "ArrowRight", "rotary", "query at position 101"),
               ("input[name=base]", "ArrowRight", "rotary", "base 11,220"),
               ("input[name=num_heads]", "ArrowRight", "alibi", "head 3 of 9: slope 0.0625 = 2^-4"),
               ("input[name=head]", "ArrowRight", "alibi", "head 4 of 9: slope 0.03125 = 2^-5"),
               ("input[name=max_sequence_length]", "ArrowRight", "alibi", "17 positions"),
               ("input[name=causal]", "Space", "alibi", "not causal"),
               ("input[name=position]", "ArrowRight", "learned", "how alike row 6 is to every row"),
               ("input[type=radio]:checked", "ArrowRight", "learned", "Scores of one word")]


@pytest.mark.slow
@pytest.mark.xdist_group("site")
def test_a_key_press_on_each_scheme_control_repaints_and_the_description_follows(scheme_page):
    # How fast is the benchmark's question (benchmarks/bench_explorer_latency.py): here, that the press repaints.
    set_scheme(scheme_page, view="rotary", query_position=100, base=4, num_heads=8, head=3, max_sequence_length=16,
               causal=True, position=5)
    for control, key, view, said in SCHEME_KEYS:
        set_scheme(scheme_page, view=view)
        before = scheme_page.evaluate(f"{SCHEME}.posenc.description()")
        picture = scheme_page.evaluate(f"{SCHEME}.querySelector('canvas').toDataURL()")
        scheme_page.evaluate(ARM_JS, [".posenc-scheme-explorer", control])
        scheme_page.keyboard.press(key)
        assert scheme_page.evaluate("window.__latency")["paint"] >= 0, control  # the explorer said it repainted
        description = scheme_page.evaluate(f"{SCHEME}.posenc.description()")
        assert said in description and description != before, (control, description)
        assert scheme_page.evaluate(f"{SCHEME}.querySelector('canvas').toDataURL()") != picture, control
    # The slopes the descriptions name are the package's (9 heads: 1/2 ... 1/256, then 2^-0.5).
    assert schemes.alibi_slopes(num_heads=9, dtype=torch.float64)[3:5].tolist() == [0.0625, 0.03125]


@pytest.mark.slow
@pytest.mark.xdist_group("site")
@pytest.mark.parametrize("view", ["rotary", "alibi", "learned"])
def test_every_scheme_view_fits_a_phone_and_a_laptop(scheme_page, view):
    set_scheme(scheme_page, view=view, num_heads=16, head=15, max_sequence_length=64)
    for width, height in [(390, 844), (1280, 720)]:
        scheme_page.set_viewport_size({"width": width, "height": height})
        scheme_page.evaluate(f"{SCHEME}.posenc.draw()")
        fits = scheme_page.evaluate(f"""() => {{
            const parts = Array.from({SCHEME}.querySelectorAll('input, canvas, label, p'))
                .filter(n => n.offsetParent !== null).map(n => n.getBoundingClientRect());
            return {{right: Math.max(...parts.map(r => r.right)), scroll: document.documentElement.scrollWidth}};
        }}""")
        assert fits["right"] <= width and fits["scroll"] <= width, (view, width, fits)
    scheme_page.set_viewport_size({"width": 1280, "height": 720})
