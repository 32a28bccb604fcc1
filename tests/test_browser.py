"""The suite in a real JupyterLab, in headless Chromium: what a learner actually sees.

Screenshots go to test-artifacts/browser/ (not committed), so a failure can be looked at.
"""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import lab_browser  # noqa: E402

pytestmark = pytest.mark.slow
NOTEBOOKS = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
ARTIFACTS = ROOT / "test-artifacts" / "browser"


@pytest.fixture(scope="module")
def browser_and_lab(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("lab")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with lab_browser.running_lab(workdir) as lab, lab_browser.chromium(workdir) as browser:
        yield browser, lab


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_run_all_shows_no_error_and_live_widgets(browser_and_lab, name):
    browser, lab = browser_and_lab
    page = lab_browser.open_notebook(browser, lab, name)
    try:
        lab_browser.run_all(page)
        page.screenshot(path=ARTIFACTS / f"{Path(name).stem}.png", full_page=True)
        assert lab_browser.error_outputs(page) == []
        widgets = lab_browser.widget_outputs(page)
        assert widgets["as_text"] == 0, "a widget was shown as text: the widget front end is missing"
        assert widgets["rendered"] == widgets["expected"]
    finally:
        page.close()


def test_explorers_respond_to_the_keyboard_and_show_errors(browser_and_lab):
    browser, lab = browser_and_lab
    page = lab_browser.open_notebook(browser, lab, "06_explore.ipynb")
    try:
        lab_browser.run_all(page)
        # The encoding explorer (output 0): move `dimension` and `d_model` with the arrow keys.
        for label in ("dimension", "d_model"):
            control = lab_browser.slider(page, 0, label)
            readout = control.locator(".widget-readout")
            before_value, before_picture = readout.inner_text(), lab_browser.explorer_image_digest(page, 0)
            control.locator(".noUi-handle").focus()
            page.keyboard.press("ArrowRight")
            page.wait_for_function(
                "([node, old]) => node.textContent.trim() !== old", arg=[readout.element_handle(), before_value.strip()])
            assert int(readout.inner_text()) == int(before_value) + 1
            lab_browser.wait_for_new_picture(page, 0, before_picture)
        page.screenshot(path=ARTIFACTS / "explorer_after_keys.png", full_page=True)

        # The pipeline explorer (output 1): a sentence longer than max_sequence_length.
        pipeline = page.locator(lab_browser.WIDGET_OUTPUT).nth(1)
        pipeline.locator(".widget-text input").fill("one two three four five six seven eight nine ten eleven twelve")
        message = pipeline.get_by_text("more than max_sequence_length=10")
        message.wait_for()
        assert "12 tokens" in message.inner_text()
        pipeline.screenshot(path=ARTIFACTS / "pipeline_error.png")
        assert lab_browser.error_outputs(page) == []  # shown in the widget, not raised into the notebook
    finally:
        page.close()
