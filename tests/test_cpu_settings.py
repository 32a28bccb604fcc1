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


@pytest.mark.parametrize("setting,capability", [("oldest_cpu", "DEFAULT"), ("common_laptop", "AVX2")])
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
