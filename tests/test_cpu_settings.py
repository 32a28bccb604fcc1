"""The stored outputs hold on other CPUs: every notebook is collected under each setting of cpu_settings.py.

The runs themselves are nbval's, collected by the repository's conftest.py beside the usual ones
(`notebooks/NN_name.ipynb::<setting>::Cell k`; under the oldest CPU, the learner's edition of a notebook with
solutions); these tests check that they are there and that their kernels do start as another CPU would.
"""

import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import nbformat
import pytest
from nbval.kernel import CURRENT_ENV_KERNEL_NAME
from nbval.plugin import IPyNbFile

import student_edition
from cpu_settings import LEARNERS_SETTING, SETTINGS, KernelUnder

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow


def test_every_notebook_is_collected_under_every_setting():
    listing = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                              "notebooks"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    cells, checked = Counter(), set()
    for notebook, setting in re.findall(r"^notebooks/(\S+\.ipynb)::(?:(\w+)::)?Cell \d+$", listing, re.M):
        cells[notebook, setting or "this machine"] += 1
    for notebook, setting in re.findall(r"^notebooks/(\S+\.ipynb)::(\w+)::nothing_attempted$", listing, re.M):
        checked.add((notebook, setting))
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        name, notebook = path.name, nbformat.read(path, as_version=4)
        every_cell = sum(cell.cell_type == "code" for cell in notebook.cells)
        assert cells[name, "this machine"] == every_cell > 0, name
        expected = dict.fromkeys(SETTINGS, every_cell)
        if student_edition.has_solutions(notebook):
            # Under LEARNERS_SETTING the learner's edition runs: every cell but the solutions, then the checkers' check.
            learners = f"{LEARNERS_SETTING}_learners_edition"
            expected[learners] = expected.pop(LEARNERS_SETTING) - sum(
                "solution" in cell.metadata.get("tags", []) for cell in notebook.cells)
            assert (name, learners) in checked, name
        assert {setting: cells[name, setting] for setting in expected} == expected, name


@pytest.mark.parametrize("setting,capability", [("oldest_cpu", "DEFAULT")])
def test_a_kernel_under_a_setting_runs_as_that_cpu(setting, capability):
    kernel = KernelUnder(CURRENT_ENV_KERNEL_NAME, setting=setting)
    try:
        printed = []
        code = ("import os, torch\nprint(torch.backends.cpu.get_cpu_capability(),"
                " os.environ['MKL_ENABLE_INSTRUCTIONS'], torch.get_num_threads())")
        reply = kernel.kc.execute_interactive(code, timeout=120, output_hook=lambda message: printed.append(
            message["content"].get("text", "") if message["msg_type"] == "stream" else ""))
        assert reply["content"]["status"] == "ok", reply["content"]
        found, instructions, threads = "".join(printed).split()
        assert (found, instructions) == (capability, SETTINGS[setting]["MKL_ENABLE_INSTRUCTIONS"])
        assert threads == SETTINGS[setting].get("OMP_NUM_THREADS", threads)
    finally:
        kernel.stop()


def displayed(kernel, code):
    """The kernel's reply to `code`, and the data of each display it sent."""
    shown = []
    reply = kernel.kc.execute_interactive(code, timeout=120, output_hook=lambda message: shown.append(
        message["content"]["data"]) if message["msg_type"] == "display_data" else None)
    return reply, shown


def test_under_another_setting_a_figure_is_checked_but_not_drawn_since_nbval_compares_no_pixels(request):
    # nbval's own default (this suite passes no --nbdime): a PNG is not compared, so drawing one is not checked.
    notebook = IPyNbFile.from_parent(request.session, path=ROOT / "notebooks" / "03_pe_formula.ipynb")
    assert "image/png" in notebook.skip_compare
    code = ("from matplotlib.figure import Figure\nfrom posenc import plots\n"
            "figure = Figure()\nfigure.add_subplot().plot([0, 1])\nplots.show(figure)")
    for setting, drawn in ((None, True), ("oldest_cpu", False)):
        kernel = KernelUnder(CURRENT_ENV_KERNEL_NAME, setting=setting)
        try:
            reply, shown = displayed(kernel, code)
            assert reply["content"]["status"] == "ok", reply["content"]
            assert [set(data) for data in shown] == [{"image/png"}], shown
            assert shown[0]["image/png"].startswith("iVBORw0KGgo") if drawn else shown[0]["image/png"] == "", setting
            # The figure is still checked: what is not a figure is refused as everywhere.
            reply = kernel.kc.execute_interactive("plots.show('a figure')", timeout=60)
            assert (reply["content"]["status"], reply["content"].get("ename")) == ("error", "TypeError"), setting
        finally:
            kernel.stop()
