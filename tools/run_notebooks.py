"""Execute notebooks in place, top to bottom, in a fresh kernel (run by `make notebooks`).

    python -m tools.run_notebooks notebooks/*.ipynb                   execute and store the outputs
    python -m tools.run_notebooks 03 05                               the same for notebooks/03_*.ipynb and 05_*
    python -m tools.run_notebooks --collapse-solutions notebooks/*.ipynb   only collapse the solutions

The stored outputs are what nbval compares against, so they come only from here.
Execution timing is not recorded, so a second run leaves the files unchanged.
Each widget is saved as the cell that shows it left it, not as later cells changed it (`_ShownWidgets`): the site's
pages and slides draw that state under that cell's code.
Every file written here has its solution cells collapsed (input and output hidden in
JupyterLab), so that the teacher's edition shows each exercise's placeholder, not its answer.

A teacher's edition (a notebook with solution cells) is stored only if every exercise's checker, run after its
solution, says correct ("✔ ..."): a solution that an edit elsewhere made wrong, or a cell that raises, stops that
notebook, nothing is written for it, and the run ends with a non-zero status naming the notebook and the exercise.
The other notebooks named are still run.
"""

from __future__ import annotations

import copy
import json
import re
import sys
import time
import uuid
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

# What the notebooks read besides themselves (the images they embed, the benchmark
# results they cite): every copy of the suite keeps these beside notebooks/.
NOTEBOOK_INPUTS = ("images", "benchmarks/results")
# How a checker's verdict (posenc.exercises.Feedback) shows in an output: its symbol, a space, its message.
VERDICT_SYMBOLS = ("✔", "✘", "…")
CORRECT_SYMBOL = "✔"


class WrongSolution(RuntimeError):
    """A teacher's edition whose solutions do not all check as correct: it is not stored."""


def run(path: Path) -> float:
    """Execute the notebook at `path` in a fresh kernel and store it.

    Raises WrongSolution (and writes nothing) if a solution's checker does not say correct, and nbclient's
    CellExecutionError (writing nothing) if a cell raises.
    """
    notebook = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    client = NotebookClient(
        notebook,
        timeout=600,
        record_timing=False,
        resources={"metadata": {"path": str(path.parent)}},
        kernel_name="python3",
    )
    shown = _ShownWidgets(client)
    client.on_cell_executed = shown.cell_executed
    client.execute()
    shown.store(notebook)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs = _merge_streams(cell.outputs)
    wrong = wrong_solutions(notebook, path.name)
    if wrong:
        raise WrongSolution(f"{path}: not stored, the solution does not check as correct in "
                            + "; ".join(wrong))
    path.write_text(_stored_text(notebook, path.stem))
    return time.perf_counter() - start


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


class _ShownWidgets:
    """Each widget's state as the cell that shows it left it, saved in place of its state at the end of the run.

    nbclient saves every widget's last state. A later cell that changes a widget (`explorer.dimension = 100`) would
    then change the picture under an earlier cell that shows it, whose code says otherwise, wherever the saved state is
    drawn (the site's pages and slides, a notebook opened without a kernel). The page shows a widget as its own cell
    made it.
    """

    def __init__(self, client: NotebookClient) -> None:
        self.client = client
        self.states: dict[str, tuple[dict, dict]] = {}  # model id -> (its state, its binary buffers by path)

    def cell_executed(self, cell: nbformat.NotebookNode, **_) -> None:
        for output in cell.get("outputs", []):
            model = output.get("data", {}).get(WIDGET_VIEW, {}).get("model_id")
            if model and model not in self.states and model in self.client.widget_state:
                self.states[model] = (copy.deepcopy(self.client.widget_state[model]),
                                      copy.deepcopy(self.client.widget_buffers.get(model, {})))

    def store(self, notebook: nbformat.NotebookNode) -> None:
        saved = notebook.get("metadata", {}).get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {})
        for model, (state, buffers) in self.states.items():
            if model in saved.get("state", {}):
                saved["state"][model]["state"] = state
                saved["state"][model].pop("buffers", None)
                if buffers:
                    saved["state"][model]["buffers"] = list(buffers.values())


def verdicts(cell: nbformat.NotebookNode) -> list[str]:
    """What a checker cell said: each shown result or printed line that is a verdict ("✔ ...", "✘ ...", "… ..."),
    and each error it raised ("NameError: ..."), in order."""
    texts, errors = [], []
    for output in cell.get("outputs", []):
        if output.output_type in ("execute_result", "display_data"):
            texts.append(output.get("data", {}).get("text/plain", ""))
        elif output.output_type == "stream":
            texts += output.text.splitlines()
        elif output.output_type == "error":
            errors.append(f"{output.ename}: {output.evalue}")
    return [text for text in texts if any(text.startswith(f"{symbol} ") for symbol in VERDICT_SYMBOLS)] + errors


def wrong_solutions(notebook: nbformat.NotebookNode, name: str) -> list[str]:
    """Each exercise of an executed teacher's edition whose checker did not say correct: its heading and the verdict.

    The exercises are found as `make assignment` finds them (tools/assignment.py: the `### Exercise k` heading,
    the cell tagged `exercise`, the one tagged `solution`, the checker cell that reads the answer). A notebook
    without solution cells (a learner's edition, or one without exercises) has nothing to check.
    """
    if not any("solution" in cell.metadata.get("tags", []) for cell in notebook.cells):
        return []
    from tools.assignment import NotebookStructureError, find_exercises  # tools.assignment imports this module's users

    try:
        exercises = find_exercises(notebook, name)
    except NotebookStructureError as error:
        return [f"the exercises' structure: {error}"]
    wrong = []
    for exercise in exercises:
        heading = notebook.cells[exercise.heading].source.strip().splitlines()[0].lstrip("#").strip()
        said = verdicts(notebook.cells[exercise.checker])
        if not said:
            wrong.append(f"{heading!r}: its checker cell (cell {exercise.checker}) shows no verdict")
        elif not all(text.startswith(CORRECT_SYMBOL) for text in said):
            shown = next(text for text in said if not text.startswith(CORRECT_SYMBOL))
            wrong.append(f"{heading!r}: its checker says {shown.splitlines()[0]!r}")
    return wrong


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


def notebook_paths(names: list[str]) -> list[Path]:
    """Paths as given, and a number (`3`, `03`) as notebooks/NN_*.ipynb (`make notebooks NOTEBOOK="03 05"`)."""
    paths = []
    for name in names:
        if name.isdigit():
            matches = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob(f"{int(name):02d}_*.ipynb"))
            if len(matches) != 1:
                raise SystemExit(f"no single notebook numbered {name} in notebooks/ ({len(matches)} found)")
            paths.append(matches[0])
        else:
            paths.append(Path(name))
    return paths


def main(names: list[str]) -> int:
    """Run and store each notebook; the ones that fail are named at the end, and the status is then 1."""
    failed = []
    for path in notebook_paths(names):
        try:
            print(f"{path}: {run(path):.1f} s", flush=True)
        except WrongSolution as error:
            print(error, file=sys.stderr, flush=True)
            failed.append(path)
        except CellExecutionError as error:
            print(f"{path}: not stored, a cell raised:\n{error}", file=sys.stderr, flush=True)
            failed.append(path)
    if failed:
        print(f"make notebooks: {len(failed)} notebook(s) not stored: {', '.join(str(p) for p in failed)}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--collapse-solutions"]:
        for name in sys.argv[2:]:
            if collapse_solutions_in(Path(name)):
                print(f"{name}: solutions collapsed", flush=True)
    else:
        sys.exit(main(sys.argv[1:]))
