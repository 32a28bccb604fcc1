"""How pytest runs the notebooks and spreads the suite over cores (the tests themselves are in tests/).

- nbval (its options in pyproject.toml) executes each notebook in notebooks/ and compares every output with the stored
  one, under this machine's CPU.
- Each notebook runs once more, as its learner's edition under the oldest CPU: as a notebook is collected,
  tests/learners_edition.py writes its copy into build/learners-edition/notebooks/ (the teacher's stored outputs,
  the solutions removed), and nbval collects the copy too. The copy's metadata names the kernel
  "posenc-oldest-cpu" (tests/kernels/: its kernel.json's `env` makes torch and MKL choose the kernels an old CPU
  would). `--this-cpu-only` leaves the copies out. (`pytest notebooks/NN.ipynb` runs the first only: pytest keeps
  what lies under the paths it is given; add build/learners-edition/notebooks/NN.ipynb for the second.)
- No notebook runs twice for the same guarantee: tests/test_notebooks.py's byte-for-byte check executes two notebooks
  under this machine's setting, and equal bytes hold every output nbval would compare, so nbval's own run of those
  two under this machine's setting is left out.
- With pytest-xdist (`make test` runs `pytest -n <cores + 1>`), `--dist loadgroup` (pyproject.toml) keeps each
  xdist_group on one worker, in order: here, each notebook's cells (one kernel); in the tests, those that share a
  server or a browser. The longest work is handed out first, by the rule at the end of this file.
"""

import os
from collections import Counter
from pathlib import Path

import pytest
from nbval.plugin import IPyNbFile

from tests.learners_edition import write_copy

ROOT = Path(__file__).resolve().parent
# Where Jupyter looks for kernels first: tests/kernels/ holds "python3" (this environment's Python, whatever other
# "python3" the user has installed) and "posenc-oldest-cpu".
os.environ["JUPYTER_PATH"] = os.pathsep.join(filter(None, [str(ROOT / "tests"), os.environ.get("JUPYTER_PATH")]))
LEARNERS_EDITION = ROOT / "build" / "learners-edition"
BYTE_FOR_BYTE = "tests/test_notebooks.py::test_make_notebooks_reproduces_the_stored_file_byte_for_byte"


def pytest_addoption(parser):
    parser.addoption("--this-cpu-only", action="store_true",
                     help="nbval under this machine's CPU only, not the learner's edition under the oldest CPU")


def pytest_collect_file(file_path, parent):
    if (file_path.suffix == ".ipynb" and file_path.parent == ROOT / "notebooks"
            and parent.config.option.nbval and not parent.config.option.this_cpu_only):
        return IPyNbFile.from_parent(parent, path=write_copy(file_path, LEARNERS_EDITION))
    return None


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(config, items):
    byte_for_byte = {item.callspec.params["name"] for item in items if item.nodeid.startswith(BYTE_FOR_BYTE)}
    left_out = {item for item in items if isinstance(item.parent, IPyNbFile)
                and item.path.parent == ROOT / "notebooks" and item.path.name in byte_for_byte}
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = [item for item in items if item not in left_out]
    for item in items:
        if isinstance(item.parent, IPyNbFile):  # one notebook run is one kernel: its cells stay together, in order
            item.add_marker(pytest.mark.xdist_group(item.parent.nodeid))
    # xdist hands the work out in this order (pyproject.toml's --no-loadscope-reorder keeps it), so that no worker
    # starts a long job while the others are nearly done: the groups that drive a browser, the notebook runs with the
    # most cells, the other slow tests, the quick ones. A stable sort: each group's tests stay in their order.
    cells = Counter(item.parent.nodeid for item in items if isinstance(item.parent, IPyNbFile))

    def rank(item):
        if isinstance(item.parent, IPyNbFile):
            return 1, -cells[item.parent.nodeid]
        slow, grouped = item.get_closest_marker("slow"), item.get_closest_marker("xdist_group")
        return (0 if slow and grouped else 2 if slow else 3), 0

    items.sort(key=rank)
