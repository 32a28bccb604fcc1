"""Execute notebooks in place, top to bottom, in a fresh kernel (run by `make notebooks`).

    python -m tools.run_notebooks notebooks/*.ipynb                   execute and store the outputs
    python -m tools.run_notebooks --collapse-solutions notebooks/*.ipynb   only collapse the solutions

The stored outputs are what nbval compares against, so they come only from here.
Execution timing is not recorded, so a second run leaves the files unchanged.
Every file written here has its solution cells collapsed (input and output hidden in
JupyterLab), so that the teacher's edition shows each exercise's placeholder, not its answer.
"""

from __future__ import annotations

import json
import re
import sys
import time
import uuid
from pathlib import Path

import nbformat
from nbclient import NotebookClient

# What the notebooks read besides themselves (the images they embed, the benchmark
# results they cite): every copy of the suite keeps these beside notebooks/.
NOTEBOOK_INPUTS = ("images", "benchmarks/results")


def run(path: Path) -> float:
    """Execute the notebook at `path` in a fresh kernel and store it."""
    notebook = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    NotebookClient(
        notebook,
        timeout=600,
        record_timing=False,
        resources={"metadata": {"path": str(path.parent)}},
        kernel_name="python3",
    ).execute()
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs = _merge_streams(cell.outputs)
    path.write_text(_stored_text(notebook, path.stem))
    return time.perf_counter() - start


def _stored_text(notebook: nbformat.NotebookNode, name: str) -> str:
    """The file's text as `make notebooks` stores it."""
    collapse_solutions(notebook)
    # The kernelspec stays the generic "python3" (the tests run it as this environment's Python: tests/notebook_runs.py).
    return _stable_widget_ids(nbformat.writes(notebook), name) + "\n"


def collapse_solutions(notebook: nbformat.NotebookNode) -> None:
    """Hide the input and the output of every cell tagged `solution` (JupyterLab shows a fold to open it)."""
    for cell in notebook.cells:
        if "solution" in cell.metadata.get("tags", []):
            cell.metadata.setdefault("jupyter", {}).update(source_hidden=True, outputs_hidden=True)


def collapse_solutions_in(path: Path) -> bool:
    """Collapse the solutions of a stored notebook without executing it; True if the file changed."""
    before = path.read_text()
    after = _stored_text(nbformat.reads(before, as_version=4), path.stem)
    if after != before:
        path.write_text(after)
    return after != before


def _merge_streams(outputs: list) -> list:
    """Join consecutive prints to the same stream: how the kernel splits them depends on timing."""
    merged = []
    for output in outputs:
        previous = merged[-1] if merged else None
        if (output.output_type == "stream" and previous is not None and previous.output_type == "stream"
                and previous.name == output.name):
            previous.text += output.text
        else:
            merged.append(output)
    return merged


def _stable_widget_ids(text: str, name: str) -> str:
    """Rename widget models by the order in which the notebook reaches them, and sort them.

    The saved widget state (so the notebook shows its widgets without a kernel)
    names every model by a fresh uuid4, in an order that varies between runs.
    Walking from each displayed widget, cell by cell, through the models it
    refers to gives every model the same place, and so the same new id, on every
    run: a second `make notebooks` leaves the file unchanged.
    """
    notebook = json.loads(text)
    widgets = notebook.get("metadata", {}).get("widgets", {})
    state = widgets.get("application/vnd.jupyter.widget-state+json", {}).get("state")
    if not state:
        return text
    order: list[str] = []

    def visit(model_id: str) -> None:
        if model_id in state and model_id not in order:
            order.append(model_id)
            for key in sorted(state[model_id]["state"]):
                for reference in re.findall(r"IPY_MODEL_([0-9a-f]{32})", json.dumps(state[model_id]["state"][key])):
                    visit(reference)

    for match in re.finditer(r'"model_id": "([0-9a-f]{32})"', text):
        visit(match.group(1))
    # Models no displayed widget refers to, in an order that does not depend on their ids.
    rest = sorted((m for m in state if m not in order), key=lambda m: json.dumps(state[m], sort_keys=True))
    renamed = {old: uuid.uuid5(uuid.NAMESPACE_URL, f"posenc/{name}/{i}").hex for i, old in enumerate(order + rest)}
    for old, new in renamed.items():
        text = text.replace(old, new)
    notebook = json.loads(text)
    widget_state = notebook["metadata"]["widgets"]["application/vnd.jupyter.widget-state+json"]
    widget_state["state"] = dict(sorted(widget_state["state"].items()))
    return json.dumps(notebook, indent=1, ensure_ascii=False)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--collapse-solutions"]:
        for name in sys.argv[2:]:
            if collapse_solutions_in(Path(name)):
                print(f"{name}: solutions collapsed", flush=True)
    else:
        for name in sys.argv[1:]:
            print(f"{name}: {run(Path(name)):.1f} s", flush=True)
