"""How the notebooks run (conftest.py): twice each, the second time as the learner's edition under the oldest CPU,
each run's cells on one xdist worker."""

import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import nbformat
import pytest
from jupyter_client.manager import start_new_kernel

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow


def test_every_notebook_runs_here_and_as_its_learners_edition():
    listing = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                              "notebooks"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    cells = Counter(re.findall(r"^(\S+)/(\S+\.ipynb)::Cell \d+$", listing, re.M))
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        notebook = nbformat.read(path, as_version=4)
        code = sum(cell.cell_type == "code" for cell in notebook.cells)
        solutions = sum("solution" in cell.metadata.get("tags", []) for cell in notebook.cells)
        assert cells["notebooks", path.name] == code > 0, path.name
        assert cells["build/learners-edition/notebooks", path.name] == code - solutions, path.name


def printed(kernel_name: str, code: str) -> str:
    km, kc = start_new_kernel(kernel_name=kernel_name)
    try:
        out = []
        reply = kc.execute_interactive(code, timeout=120, output_hook=lambda message: out.append(
            message["content"].get("text", "") if message["msg_type"] == "stream" else ""))
        assert reply["content"]["status"] == "ok", reply["content"]
        return "".join(out).strip()
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def test_the_oldest_cpu_kernel_runs_as_that_cpu_and_the_other_as_this_machine():
    # The kernels of tests/kernels/, which conftest.py puts first on Jupyter's path.
    code = ("import os, sys, torch\nprint(sys.executable, torch.backends.cpu.get_cpu_capability(),"
            " os.environ.get('MKL_ENABLE_INSTRUCTIONS'), torch.get_num_threads())")
    python, capability, instructions, threads = printed("posenc-oldest-cpu", code).split()
    assert (python, capability, instructions, threads) == (sys.executable, "DEFAULT", "SSE4_2", "1")
    python, _, instructions, _ = printed("python3", code).split()
    assert (python, instructions) == (sys.executable, "None")


GROUPED = """
import os, pytest

@pytest.mark.xdist_group("one")
@pytest.mark.parametrize("k", range(8))
def test_grouped(k):
    with open("workers.log", "a") as log:
        print(os.environ["PYTEST_XDIST_WORKER"], file=log)

@pytest.mark.parametrize("k", range(8))
def test_free(k):
    pass
"""


def test_xdist_keeps_a_group_on_one_worker(tmp_path):
    # pytest-xdist 3.8 with pytest 9.2 spread a group over workers (pytest-xdist issue #1386): the lock pins a pytest
    # where it does not.
    (tmp_path / "test_grouped.py").write_text(GROUPED)
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "xdist", "-n", "2", "--dist", "loadgroup",
                           "-p", "no:cacheprovider", "-q", "test_grouped.py"], cwd=tmp_path, capture_output=True,
                          text=True, env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})  # xdist alone
    assert done.returncode == 0, done.stdout + done.stderr
    workers = (tmp_path / "workers.log").read_text().split()
    assert len(workers) == 8 and len(set(workers)) == 1, workers
