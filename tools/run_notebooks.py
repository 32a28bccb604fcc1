"""Execute notebooks in place, top to bottom, in a fresh kernel (run by `make notebooks`).

The stored outputs are what nbval compares against, so they come only from here.
Execution timing is not recorded, so a second run leaves the files unchanged.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient


def run(path: Path) -> float:
    notebook = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    NotebookClient(
        notebook,
        timeout=600,
        kernel_name="python3",
        record_timing=False,
        resources={"metadata": {"path": str(path.parent)}},
    ).execute()
    # The kernelspec stays the generic "python3": nbval runs with --nbval-current-env.
    nbformat.write(notebook, path)
    return time.perf_counter() - start


if __name__ == "__main__":
    for name in sys.argv[1:]:
        print(f"{name}: {run(Path(name)):.1f} s", flush=True)
