"""The notebooks as nbval checks them under the oldest CPU: each notebook's learner's edition with the stored outputs.

One execution serves two guarantees. It is the check that the stored outputs hold on another CPU (nbval compares
every cell the two editions share), and the check that the learner's edition (tools/student_edition.py: the
solutions removed) runs from top to bottom with every exercise "not attempted". It runs where a handed-out edition
does: in a folder with only what a handed-out edition has beside the notebooks (images/, benchmarks/results/).

A cell that reads a learner's answer (a name an exercise's placeholder and its solution both set) gives other
feedback in the learner's edition by design: its outputs are not compared here (they are under this machine's
setting). The progress summary is compared, against what it must say in the learner's edition: every exercise of
the teacher's summary, not attempted. A solution left in would show there as done.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import nbformat

from tools import student_edition
from tools.run_notebooks import NOTEBOOK_INPUTS
from tools.student_edition import PROGRESS_CALL, answer_names, nothing_attempted, reads_an_answer

ROOT = Path(__file__).resolve().parent.parent

# Jupyter's kernel of that name is tests/kernels/posenc-oldest-cpu/kernel.json. Its `env`, read by MKL and torch as they
# load, makes this machine compute as the CPU that differs most from the machines that store the outputs (AVX-512 or
# AVX2): MKL's SSE4.2 kernels (MKL_ENABLE_INSTRUCTIONS), torch's kernels without vector instructions
# (ATEN_CPU_CAPABILITY=default), one thread (OMP_NUM_THREADS).
KERNEL = {"name": "posenc-oldest-cpu", "display_name": "Python 3 (oldest CPU)", "language": "python"}


def write_copy(notebook: Path, folder: Path) -> Path:
    """Write the copy of `notebook` that nbval runs under the oldest CPU into folder/notebooks, beside what the
    notebooks read; return its path."""
    _write_inputs(folder)
    copy = folder / "notebooks" / notebook.name
    _write(copy, nbformat.writes(for_nbval(nbformat.read(notebook, as_version=4))).encode())
    return copy


@functools.cache
def _write_inputs(folder: Path) -> None:
    for name in NOTEBOOK_INPUTS:
        for path in (ROOT / name).rglob("*"):
            if path.is_file():
                _write(folder / path.relative_to(ROOT), path.read_bytes())


def _write(path: Path, data: bytes) -> None:
    """Write `data` unless it is there already, the whole file at once: each xdist worker writes the same copies
    as it collects, and another pytest run may be reading them."""
    if not path.is_file() or path.read_bytes() != data:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{os.getpid()}")
        temporary.write_bytes(data)
        temporary.replace(path)


def for_nbval(teacher: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The learner's edition of `teacher` with the teacher's stored outputs, as nbval must find it when run."""
    edition = student_edition.learner_version(teacher)
    edition.metadata["kernelspec"] = dict(KERNEL)
    stored = {cell.id: cell for cell in teacher.cells}
    answers = answer_names(teacher)
    for cell in edition.cells:
        if cell.cell_type != "code":
            continue
        cell.outputs, cell.execution_count = stored[cell.id].outputs, stored[cell.id].execution_count
        if PROGRESS_CALL.search(cell.source):
            cell.outputs = [nothing_attempted(output) for output in cell.outputs]
        elif reads_an_answer(cell.source, answers):
            cell.metadata.setdefault("tags", []).append("nbval-ignore-output")
    return edition
