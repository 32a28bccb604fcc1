"""Write the learner's edition of the notebooks: solutions removed, then executed (run by `make student`).

Cells tagged `solution` are dropped; the `exercise` placeholders before them stay,
so every checker reports "not attempted yet" and the notebook still runs from top
to bottom. The edition goes to build/student/ (notebooks/ beside images/ and
benchmarks/results/, so the links and files the notebooks read resolve) and its outputs come from a real run, like the
teacher's edition.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import nbformat

from run_notebooks import NOTEBOOK_INPUTS, run

ROOT = Path(__file__).resolve().parent.parent


def student_notebook(source: Path, target: Path) -> bool:
    """Write the learner's version of `source`; False if it is the teacher's unchanged (no solution cells)."""
    notebook = nbformat.read(source, as_version=4)
    kept = [c for c in notebook.cells if "solution" not in c.metadata.get("tags", [])]
    if len(kept) == len(notebook.cells):
        shutil.copy2(source, target)  # the same notebook: its stored outputs are already those of a full run
        return False
    notebook.cells = kept
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    notebook.metadata.pop("widgets", None)
    nbformat.write(notebook, target)
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "student")
    args = parser.parse_args()
    shutil.rmtree(args.out, ignore_errors=True)
    (args.out / "notebooks").mkdir(parents=True)
    for folder in NOTEBOOK_INPUTS:
        shutil.copytree(ROOT / folder, args.out / folder)
    for source in sorted((ROOT / "notebooks").glob("*.ipynb")):
        target = args.out / "notebooks" / source.name
        if student_notebook(source, target):
            print(f"{target}: {run(target):.1f} s", flush=True)
        else:
            print(f"{target}: no solutions, copied as it is", flush=True)


if __name__ == "__main__":
    main()
