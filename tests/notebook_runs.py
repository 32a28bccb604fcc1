"""How pytest runs the notebooks: the whole of it is in this file (the root conftest.py loads it; docs/testing.md
explains it in prose).

- nbval (its options are in pyproject.toml) runs each notebook in notebooks/ and compares every output with the
  stored one. This run uses this machine's CPU.
- Each notebook runs a second time, as its learner's edition, under the oldest CPU. When pytest collects a notebook,
  this file writes the copy into build/learners-edition/notebooks/ and hands it to nbval too. The copy has the
  solutions removed and the teacher's stored outputs. Its kernel sets variables that make torch and MKL compute as
  an old CPU would (KERNELS below). `--this-cpu-only` leaves the copies out: `make test` runs with it, and
  `make test-oldest-cpu` runs the copies alone (pytest on their folder, build/learners-edition/notebooks).
- A test marked `runs_notebook(name)` runs that notebook under this machine's CPU itself (the byte-for-byte check in
  tests/test_notebooks.py). When such a test is collected, nbval's own run of that notebook under this CPU is left
  out: equal bytes already hold every output nbval would compare.
- With pytest-xdist (`make test` runs `pytest -n <cores + 1>`), pyproject.toml's `--dist loadgroup` keeps each
  xdist_group on one worker, in order. Here, each notebook run's cells form one group, as they share one kernel.
  The longest work is handed out first (pytest_collection_modifyitems below).
"""

from __future__ import annotations

import functools
import json
import os
import sys
from collections import Counter
from pathlib import Path

import nbformat
import pytest
from nbval.plugin import IPyNbFile

from tools import student_edition
from tools.student_edition import HANDOUT_INPUTS, PROGRESS_CALL, answer_names, reads_an_answer, waits_for_a_prediction

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
LEARNERS_EDITION = ROOT / "build" / "learners-edition"
# Where Jupyter looks for kernels first (JUPYTER_PATH): each session writes KERNELS there as it starts.
JUPYTER = ROOT / "build" / "jupyter"

# The kernels the notebook runs use, by name: (the name Jupyter shows, the environment variables the kernel starts with).
KERNELS = {
    # The name the stored notebooks give. It runs this environment's Python, whatever other "python3" kernel the
    # user has installed.
    "python3": ("Python 3 (ipykernel)", {}),
    # The CPU that differs most from the machines that store the outputs (AVX-512 or AVX2). MKL and torch read these
    # variables as they load: MKL's SSE4.2 kernels, torch's kernels without vector instructions, one thread.
    "posenc-oldest-cpu": ("Python 3 (oldest CPU)",
                          {"MKL_ENABLE_INSTRUCTIONS": "SSE4_2", "ATEN_CPU_CAPABILITY": "default", "OMP_NUM_THREADS": "1"}),
}
# The kernel the learner's edition names in its metadata.
KERNEL = {"name": "posenc-oldest-cpu", "display_name": KERNELS["posenc-oldest-cpu"][0], "language": "python"}


def pytest_addoption(parser):
    parser.addoption("--this-cpu-only", action="store_true",
                     help="nbval under this machine's CPU only, not the learner's edition under the oldest CPU")


def pytest_configure(config):
    """Write the kernels and put them first on Jupyter's path (in every process: each xdist worker starts kernels)."""
    for name, (display_name, env) in KERNELS.items():
        spec = {"argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": display_name, "language": "python", "env": env}
        _write(JUPYTER / "kernels" / name / "kernel.json", json.dumps(spec, indent=1).encode())
    os.environ["JUPYTER_PATH"] = os.pathsep.join(filter(None, [str(JUPYTER), os.environ.get("JUPYTER_PATH")]))


def pytest_sessionstart(session):
    """A learner's-edition copy named on the command line is written first, so that pytest finds it on a fresh clone;
    naming their folder writes every copy (`make test-oldest-cpu`)."""
    for argument in session.config.args:
        path = (session.config.invocation_params.dir / argument.split("::")[0]).resolve()
        if path == LEARNERS_EDITION / "notebooks":
            for notebook in sorted(NOTEBOOKS.glob("*.ipynb")):
                write_copy(notebook)
        elif path.parent == LEARNERS_EDITION / "notebooks" and (NOTEBOOKS / path.name).is_file():
            write_copy(NOTEBOOKS / path.name)


def pytest_collect_file(file_path, parent):
    """Beside nbval's own run of a notebook, its learner's edition under the oldest CPU."""
    if (file_path.suffix == ".ipynb" and file_path.parent == NOTEBOOKS
            and parent.config.option.nbval and not parent.config.option.this_cpu_only):
        return IPyNbFile.from_parent(parent, path=write_copy(file_path))
    return None


# The notebooks that train models (minutes of CPU a run): their learner's edition's run stands for the teacher's. Their
# trained numbers are CPU-dependent and not compared (nbval-ignore-output; cells assert them with margins), and what the
# teacher's run adds, the solutions and their checkers' verdicts, make notebooks checks as it stores them
# (tools/run_notebooks.py). Named alone, or with --this-cpu-only, the teacher's notebook runs as any other.
LEARNERS_EDITION_ONLY = {"14_does_position_matter.ipynb", "16_stretching_context.ipynb"}


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(config, items):
    run_elsewhere = {mark.args[0] for item in items for mark in item.iter_markers("runs_notebook")}
    run_elsewhere |= LEARNERS_EDITION_ONLY & {item.path.name for item in items if isinstance(item.parent, IPyNbFile)
                                             and item.path.parent == LEARNERS_EDITION / "notebooks"}
    left_out = [item for item in items if isinstance(item.parent, IPyNbFile)
                and item.path.parent == NOTEBOOKS and item.path.name in run_elsewhere]
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


# The learner's edition as nbval runs it -------------------------------------------------------------------------------
#
# One run serves two checks. It checks that the stored outputs hold on another CPU: nbval compares every cell the two
# editions share. It also checks that the learner's edition (tools/student_edition.py: the solutions removed) runs from
# top to bottom with every exercise "not attempted". It runs the handout's own cells (student_edition.handout: the
# pictures in the notebook, no link to another notebook's file), in a folder that holds only what a handed-out edition
# has beside the notebooks (benchmarks/results/).
#
# A cell that reads a learner's answer (a name that an exercise's placeholder and its solution both set) gives other
# feedback in the learner's edition, by design. Its outputs are not compared here; the run under this CPU compares
# them. Except the run of a "predict, then run" exercise (`if exercises.predicted(answer):`, no checker): untouched,
# it must say that it waits for the prediction, and nothing else. The progress summary is compared with what it must
# say in the learner's edition: every exercise of the teacher's summary, not attempted. A solution left in would show
# there as done.


def write_copy(notebook: Path, folder: Path = LEARNERS_EDITION) -> Path:
    """Write the copy of `notebook` that nbval runs under the oldest CPU into folder/notebooks; return its path."""
    _write_inputs(folder)
    copy = folder / "notebooks" / notebook.name
    _write(copy, nbformat.writes(for_nbval(nbformat.read(notebook, as_version=4), notebook.name)).encode())
    return copy


def for_nbval(teacher: nbformat.NotebookNode, name: str = "") -> nbformat.NotebookNode:
    """The learner's edition of `teacher` (its file name is `name`) with the teacher's stored outputs, as nbval must
    find it when run."""
    edition = student_edition.handout(teacher, name)
    edition.metadata["kernelspec"] = dict(KERNEL)
    stored = {cell.id: cell for cell in teacher.cells}
    answers = answer_names(teacher)
    for cell in edition.cells:
        if cell.cell_type != "code":
            continue
        cell.outputs, cell.execution_count = stored[cell.id].outputs, stored[cell.id].execution_count
        if PROGRESS_CALL.search(cell.source):
            cell.outputs = [student_edition.nothing_attempted(output) for output in cell.outputs]
        elif reads_an_answer(cell.source, answers) and waits_for_a_prediction(cell.source):
            cell.outputs = [student_edition.waiting_output()]
            tags = cell.metadata.get("tags", [])
            if "nbval-ignore-output" in tags:  # what the teacher's run shows may depend on the CPU; the wait does not
                tags.remove("nbval-ignore-output")
        elif reads_an_answer(cell.source, answers):
            cell.metadata.setdefault("tags", []).append("nbval-ignore-output")
    return edition


@functools.cache
def _write_inputs(folder: Path) -> None:
    for name in HANDOUT_INPUTS:
        for path in (ROOT / name).rglob("*"):
            if path.is_file():
                _write(folder / path.relative_to(ROOT), path.read_bytes())


def _write(path: Path, data: bytes) -> None:
    """Write `data` unless it is there already, the whole file at once: each xdist worker writes the same files as it
    starts and collects, and another pytest run may be reading them."""
    if not path.is_file() or path.read_bytes() != data:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{os.getpid()}")
        temporary.write_bytes(data)
        temporary.replace(path)
