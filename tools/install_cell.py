"""The first code cell of every notebook: where posenc is missing (as on Colab), install it.

    python -m tools.install_cell     put the cell in every notebook (run by `make notebooks`)

Its address is the repository set in pyproject.toml ([project.urls] Repository), the
one place it is written. `POSENC_SOURCE` overrides it (a fork, or a local checkout as
`file:///path/to/posenc`, which is how the tests run the cell).
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
MARKER = "# If posenc is missing (as on Colab), install it"
# The cell's earlier first lines (before it was made short enough to read at 1280 px, and before it stopped saying that
# it does nothing outside Colab and Binder: it installs wherever posenc is missing); a cell that starts so is replaced too.
OLD_MARKERS = ("# Colab or Binder: install posenc", "# Where the suite's package is missing")


def repository() -> str:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]["Repository"]


def source() -> str:
    return (f"{MARKER}.\n"
            "import importlib.util\n"
            "import os\n\n"
            f"posenc_repository = \"{repository()}\"\n"
            "if importlib.util.find_spec(\"posenc\") is None:\n"
            "    posenc_source = os.environ.get(\"POSENC_SOURCE\", f\"git+{posenc_repository}\")\n"
            "    %pip install --quiet \"posenc[notebooks] @ {posenc_source}\"")


def first_code_cell(notebook: nbformat.NotebookNode) -> int:
    return next(i for i, cell in enumerate(notebook.cells) if cell.cell_type == "code")


def put_in(path: Path) -> bool:
    """Make the notebook's first code cell the install cell; True if the file changed."""
    notebook = nbformat.read(path, as_version=4)
    index = first_code_cell(notebook)
    cell = notebook.cells[index]
    if cell.source == source():
        return False
    if cell.source.startswith((MARKER, *OLD_MARKERS)):
        cell.source = source()
    else:
        new = nbformat.v4.new_code_cell(source())
        new.metadata["slideshow"] = {"slide_type": "skip"}  # setup, not something to present
        notebook.cells.insert(index, new)
    nbformat.write(notebook, path)
    return True


if __name__ == "__main__":
    for name in sys.argv[1:] or sorted(str(p) for p in (ROOT / "notebooks").glob("*.ipynb")):
        if put_in(Path(name)):
            print(f"{name}: install cell updated")
