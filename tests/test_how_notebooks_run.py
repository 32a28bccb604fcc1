"""How the notebooks run (tests/notebook_runs.py): twice each, the second time as the learner's edition under the oldest CPU
(`make test` runs the first, `make test-oldest-cpu` the second).

(Each run's cells stay on one xdist worker, in one kernel: were a run split over workers, its later cells would run
without the earlier ones and fail in nbval itself.)"""

import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import nbformat
import pytest
from jupyter_client.manager import start_new_kernel

from tests.notebook_runs import LEARNERS_EDITION_ONLY

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow


def collected_cells(*arguments: str) -> Counter:
    listing = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                              *arguments], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return Counter(re.findall(r"^(\S+)/(\S+\.ipynb)::Cell \d+$", listing, re.M))


def test_every_notebook_runs_here_and_as_its_learners_edition():
    cells = collected_cells("notebooks")
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        notebook = nbformat.read(path, as_version=4)
        code = sum(cell.cell_type == "code" for cell in notebook.cells)
        solutions = sum("solution" in cell.metadata.get("tags", []) for cell in notebook.cells)
        # (The teacher's edition of the notebooks that train runs only when named: tests/notebook_runs.py.)
        assert cells["notebooks", path.name] == (0 if path.name in LEARNERS_EDITION_ONLY else code), path.name
        assert cells["build/learners-edition/notebooks", path.name] == code - solutions > 0, path.name


def test_make_test_runs_each_notebook_as_stored_and_make_test_oldest_cpu_each_learners_edition():
    # make test: every code cell of every notebook, the ones that train too, and no copy.
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^test: .*\n(?:\t.*\n)*\t.*pytest -n \$\(WORKERS\) --this-cpu-only ", makefile, re.M)
    assert re.search(r"^test-oldest-cpu: .*\n\t.*pytest -n \$\(WORKERS\) build/learners-edition/notebooks ", makefile, re.M)
    here = collected_cells("--this-cpu-only", "notebooks")
    # make test-oldest-cpu: naming the copies' folder writes every copy first (as on a fresh clone), then runs them alone.
    oldest = collected_cells("build/learners-edition/notebooks")
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        notebook = nbformat.read(path, as_version=4)
        code = sum(cell.cell_type == "code" for cell in notebook.cells)
        solutions = sum("solution" in cell.metadata.get("tags", []) for cell in notebook.cells)
        assert here["notebooks", path.name] == code and here["build/learners-edition/notebooks", path.name] == 0
        assert oldest["build/learners-edition/notebooks", path.name] == code - solutions and oldest["notebooks", path.name] == 0
    assert set(here) | set(oldest) == {(folder, path.name) for path in (ROOT / "notebooks").glob("*.ipynb")
                                      for folder in ("notebooks", "build/learners-edition/notebooks")}


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
    # The kernels tests/notebook_runs.py writes and puts first on Jupyter's path.
    code = ("import os, sys, torch\nprint(sys.executable, torch.backends.cpu.get_cpu_capability(),"
            " os.environ.get('MKL_ENABLE_INSTRUCTIONS'), torch.get_num_threads())")
    python, capability, instructions, threads = printed("posenc-oldest-cpu", code).split()
    assert (python, capability, instructions, threads) == (sys.executable, "DEFAULT", "SSE4_2", "1")
    python, _, instructions, _ = printed("python3", code).split()
    assert (python, instructions) == (sys.executable, "None")
