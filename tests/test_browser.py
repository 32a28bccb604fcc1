"""The suite in a real JupyterLab, in headless Chromium: what a learner actually sees.

Only the notebooks where the browser adds something are run here: those that show widgets (the
explorers), and the start page. Every notebook's outputs are checked by nbval without a browser.
One JupyterLab and one Chromium serve every test (one xdist group, so on one worker); the tests of one
notebook share its Run All and run in the order written, as a learner would use it.
Screenshots go to test-artifacts/browser/ (not committed), so a failure can be looked at.
"""

import json
import time
from pathlib import Path

import numpy as np
import pytest

import lab_browser
from posenc import example

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("jupyterlab")]
ARTIFACTS = ROOT / "test-artifacts" / "browser"


def shows_widgets(path: Path) -> bool:
    """A widget in the stored outputs, or code that makes one (a notebook whose outputs are not stored yet)."""
    text = path.read_text()
    code = "\n".join("".join(c["source"]) for c in json.loads(text)["cells"] if c["cell_type"] == "code")
    return "application/vnd.jupyter.widget-view+json" in text or any(
        word in code for word in ("widgets.", "explorers.", "Explorer(", "ipywidgets"))


RUN_ALL = ["00_start_here.ipynb"] + sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb") if shows_widgets(p))
# Notebooks with tests of their own below, which begin with the same checks after their Run All (the start page
# is run in test_the_start_page_opens_without_a_pop_up_and_runs).
EXPLORED = ["08_explore.ipynb", "13_position_schemes.ipynb"]


@pytest.fixture(scope="module")
def browser_and_lab(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("lab")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with lab_browser.running_lab(workdir) as lab, lab_browser.chromium(workdir) as browser:
        yield browser, lab


def solutions(name: str) -> int:
    return sum("solution" in c["metadata"].get("tags", [])
               for c in json.loads((ROOT / "notebooks" / name).read_text())["cells"])


def run_all(page) -> tuple[list, list]:
    """Run All; return the solutions' folds before and after (lab_browser.solution_folds)."""
    before = lab_browser.solution_folds(page)
    lab_browser.run_all(page)
    return before, lab_browser.solution_folds(page)


def check_after_run_all(page, name: str, folds: tuple[list, list]) -> None:
    """No error, every widget live, and each solution folded under its placeholder in the teacher's edition."""
    page.screenshot(path=ARTIFACTS / f"{Path(name).stem}.png", full_page=True)
    assert lab_browser.error_outputs(page) == []
    widgets = lab_browser.widget_outputs(page)
    assert widgets["as_text"] == 0, "a widget was shown as text: the widget front end is missing"
    assert widgets["rendered"] == widgets["expected"]
    folded = {"input_hidden": True, "output_hidden": True, "placeholder_shown": True}
    # Running a cell shows its output (JupyterLab's CodeCell.execute sets outputHidden to false); the input stays
    # folded.
    assert folds == ([folded] * solutions(name), [{**folded, "output_hidden": False}] * solutions(name))


def test_the_browser_runs_the_notebooks_with_widgets_and_the_start_page():
    # Each notebook that shows widgets has its class below (Run All, then its explorers moved): a new one needs its own.
    others = sorted(set(RUN_ALL) - set(EXPLORED) - {"00_start_here.ipynb"})
    assert set(RUN_ALL) == {"00_start_here.ipynb", *EXPLORED}, f"give {others} a browser test"


@pytest.fixture(scope="class")
def page(browser_and_lab, request):
    """The class's notebook, open in JupyterLab after one Run All, for all of the class's tests."""
    browser, lab = browser_and_lab
    with lab_browser.opened_notebook(browser, lab, request.cls.notebook) as page:
        request.cls.folds = run_all(page)
        yield page


class TestExplore:
    notebook = "08_explore.ipynb"

    def test_run_all_shows_no_error_and_live_widgets(self, page):
        check_after_run_all(page, self.notebook, self.folds)

    def test_explorers_respond_to_the_keyboard_and_show_errors(self, page):
        # The encoding explorer draws in the page: an arrow key on `dimension` and `d_model` moves the control, the
        # readout and the picture at once, reaches the kernel, and leaves JupyterLab's active cell where it was.
        explorer = page.locator(".posenc-encoding-explorer").first
        explorer.scroll_into_view_if_needed()
        active = "window.jupyterapp.shell.currentWidget.content.activeCellIndex"
        for label in ("dimension", "d_model"):
            control = explorer.locator(f"input[name={label}]")
            picture = explorer.locator("canvas").evaluate("c => c.toDataURL()")
            control.focus()  # JupyterLab makes the explorer's cell the active one
            before, cell = int(control.input_value()), page.evaluate(active)
            page.keyboard.press("ArrowRight")
            assert int(control.input_value()) == before + 1 and page.evaluate(active) == cell
            assert explorer.locator("canvas").evaluate("c => c.toDataURL()") != picture
            _wait_for_kernel(page, f"print(explorer.{label})", str(before + 1))
        # And back: Python sets the view, the page follows.
        lab_browser.kernel_run(page, "explorer.view = 'wavelengths'")
        explorer.locator("input[value=wavelengths]:checked").wait_for()
        page.screenshot(path=ARTIFACTS / "explorer_after_keys.png", full_page=True)

        # The pipeline explorer: a sentence longer than max_sequence_length, answered in the page.
        pipeline = page.locator(".posenc-pipeline-explorer").first
        too_long = example.MAX_SEQUENCE_LENGTH + 2  # the explorer starts from the running example
        pipeline.locator("input[name=sentence]").fill(" ".join(["word"] * too_long))
        message = pipeline.locator(".posenc-message").get_by_text(f"more than max_sequence_length={example.MAX_SEQUENCE_LENGTH}")
        message.wait_for()
        assert f"has {too_long} tokens" in message.inner_text()
        pipeline.screenshot(path=ARTIFACTS / "pipeline_error.png")
        assert lab_browser.error_outputs(page) == []  # shown in the widget, not raised into the notebook

    def test_explorers_take_hostile_input_without_a_traceback(self, page):
        lab_browser.kernel_run(page, lab_browser.COLLECT_KERNEL_ERRORS)

        # Every slider of both explorers to both of its ends, from the keyboard (the sizes last: at their
        # smallest, position and dimension would have nowhere to move); the kernel accepts every value.
        for root, labels in ((".posenc-encoding-explorer", ["position", "dimension", "base", "d_model",
                                                            "max_sequence_length"]),
                             (".posenc-pipeline-explorer", ["max_sequence_length", "d_model"])):
            for label in labels:
                control = page.locator(root).first.locator(f"input[name={label}]")
                ends = []
                for key in ("Home", "End"):
                    control.focus()
                    page.keyboard.press(key)
                    ends.append(control.input_value())
                assert ends[0] != ends[1], f"{label}: End and Home gave the same value {ends}"
        _settle(page)
        assert lab_browser.kernel_run(page, "print(explorer.d_model, pipeline.d_model)").split() == ["256", "64"]

        # Sentences a learner might type, each answered in the explorer's own lines.
        pipeline = page.locator(".posenc-pipeline-explorer").first
        box = pipeline.locator("input[name=sentence]")
        for sentence, shown in [("", "The sentence is empty"), ("word " * 1000, "has 1000 tokens, more than"),
                                ("x" * 5000, "x" * 100), ("I ❤️ 🐍 code", "read as <UNK>"),
                                ("שלום עולם", "שלום"), ("مرحبا بالعالم", "مرحبا")]:
            box.fill(sentence)
            pipeline.get_by_text(shown).first.wait_for()
        pipeline.screenshot(path=ARTIFACTS / "pipeline_hostile.png")
        _settle(page)

        assert lab_browser.error_outputs(page) == []
        assert lab_browser.tracebacks_in_outputs(page) == []
        assert lab_browser.kernel_run(page, "print(len(_posenc_errors), *_posenc_errors)").strip() == "0"


def _settle(page) -> None:
    # ipywidgets holds back state updates while one is in flight; two round trips through the kernel,
    # each outlasting the explorers' debounce, let every update arrive and be drawn.
    for _ in range(2):
        lab_browser.kernel_run(page, "import asyncio; await asyncio.sleep(0.2)")


def _wait_for_kernel(page, code: str, text: str, timeout: float = 60) -> None:
    """Wait until what `code` prints in the kernel holds `text`."""
    deadline = time.monotonic() + timeout
    while text not in (printed := lab_browser.kernel_run(page, code)):
        assert time.monotonic() < deadline, f"`{code}` still prints {printed!r}, not {text!r}"
        time.sleep(0.2)


class TestPositionSchemes:
    notebook = "13_position_schemes.ipynb"

    def test_run_all_shows_no_error_and_live_widgets(self, page):
        check_after_run_all(page, self.notebook, self.folds)

    def test_scheme_explorer_shows_each_scheme_and_redraws_from_the_keyboard(self, page):
        # The scheme explorer draws in the page: an arrow key on a control moves it, the picture and the description at
        # once and reaches the kernel; each view shows its own controls, and a view set in the kernel is shown.
        lab_browser.kernel_run(page, lab_browser.COLLECT_KERNEL_ERRORS)
        explorer = page.locator(".posenc-scheme-explorer").first
        explorer.scroll_into_view_if_needed()
        scores = "document.querySelector('.posenc-scheme-explorer').posenc.scores()"
        for view, label, said in (("rotary", "query_position", "query at position {}"), ("alibi", "head", "head {} of 8"),
                                  ("learned", "position", "how alike row {} is")):
            explorer.locator(f"input[value={view}]").check()
            control, before = explorer.locator(f"input[name={label}]"), page.evaluate(scores)
            picture = explorer.locator("canvas").evaluate("c => c.toDataURL()")
            control.focus()
            value = int(control.input_value())
            page.keyboard.press("ArrowRight")
            assert int(control.input_value()) == value + 1
            assert said.format(value + 1) in explorer.locator("[aria-live=polite]").inner_text()
            assert explorer.locator("canvas").evaluate("c => c.toDataURL()") != picture
            _wait_for_kernel(page, f"print(explorer.{label})", str(value + 1))
            explorer.screenshot(path=ARTIFACTS / f"scheme_explorer_{view}.png")
            if view == "rotary":  # moving the query leaves RoPE's curve where it was and moves the added sinusoid's
                after = page.evaluate(scores)
                np.testing.assert_allclose(after["rotary"], before["rotary"], atol=1e-9)
                assert np.abs(np.subtract(after["sinusoidal"], before["sinusoidal"])).max() > 0.1
        assert explorer.locator("input[name=query_position]").is_hidden()
        lab_browser.kernel_run(page, "explorer.view = 'rotary'")
        explorer.locator("input[value=rotary]:checked").wait_for()
        explorer.locator("input[name=query_position]").wait_for(state="visible")

        assert lab_browser.error_outputs(page) == []
        assert lab_browser.kernel_run(page, "print(len(_posenc_errors), *_posenc_errors)").strip() == "0"


def test_the_start_page_opens_without_a_pop_up_and_runs(browser_and_lab):
    # Without the suite's JupyterLab defaults (tools/jupyterlab/posenc.json, installed by make and by
    # `pip install .`), JupyterLab asks about news in a pop-up a few seconds after it opens.
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    browser, lab = browser_and_lab
    name = "00_start_here.ipynb"
    # A page of its own, as a learner who has just started the lab sees it.
    with lab_browser.opened_notebook(browser, lab, name, fresh=True) as page:
        opened = time.monotonic()
        page.wait_for_load_state("networkidle")
        check_after_run_all(page, name, run_all(page))
        # Watch for the pop-up until 8 s have passed since the page opened (Run All took part of them).
        left_ms = max(1.0, 8_000 - 1_000 * (time.monotonic() - opened))
        with pytest.raises(PlaywrightTimeout):
            page.wait_for_selector(".Toastify__toast, .jp-Dialog", timeout=left_ms)
        assert lab_browser.notifications_and_dialogs(page) == []
        page.screenshot(path=ARTIFACTS / "start_page.png")


def test_the_lab_starts_on_another_port_when_its_first_is_taken(tmp_path, monkeypatch):
    # Another worker may bind the port _free_port found before JupyterLab does: the server must start on a new one.
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        ports = iter([busy])
        free = lab_browser._free_port
        monkeypatch.setattr(lab_browser, "_free_port", lambda: next(ports, None) or free())
        with lab_browser.running_lab(tmp_path) as lab:
            assert not lab.url.endswith(f":{busy}")
    assert f"port {busy} is not available" in (tmp_path / "jupyterlab.log").read_text()
