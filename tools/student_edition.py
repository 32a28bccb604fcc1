"""The learner's edition of the notebooks: the same notebooks with the solution cells removed.

    python -m tools.student_edition          build/student/: executed, a copy to hand out (`make student`)
    python -m tools.student_edition --lab    learner/: a learner's own copy, to work in (`make lab` opens it)

Cells tagged `solution` are dropped; the `exercise` placeholders before them stay, so every
checker reports "not attempted yet" and the notebook still runs from top to bottom.

A handed-out notebook stands on its own (`handout`): it may be opened alone, in Colab, in VS Code
or from an e-mail. Each picture its markdown shows (../images/NAME.png in the teacher's notebook)
is in the notebook, as a cell attachment (`attachment:NAME.png`). Each link to another notebook
points at that notebook's page on the suite's published site, the students' site
(pyproject.toml's [project.urls] Site); with no Site there, the link becomes text that says the
notebook is a separate one. The teacher's notebooks keep their relative links. An edition is a
folder with notebooks/ beside a copy of benchmarks/results/, which notebooks 16 and 17 read (on
their own, they fetch it from the repository).

The copy to hand out is written anew each time and executed: its outputs come from a real run,
like the teacher's edition. The learner's own copy is not executed (the learner runs it) and keeps
the learner's work: a notebook changed since this script wrote it is never overwritten. Only when the
suite's version of such a notebook has changed since the learner's copy was written does the script
say so, in one line for all of them, with how to get the suite's version. Unchanged notebooks are
brought up to date.
"""

from __future__ import annotations

import argparse
import ast
import base64
import copy
import hashlib
import json
import re
import shutil
import sys
import tomllib
from pathlib import Path

import nbformat

from tools.run_notebooks import run

ROOT = Path(__file__).resolve().parent.parent
# What this script wrote into a learner's copy, by name: the content hash of what it wrote (a notebook whose hash
# differs now has been changed by the learner) and of the suite's version it came from. (An older manifest held the
# one hash: what was written was the suite's version.)
MANIFEST = ".posenc-edition.json"
# What a handed-out notebook reads beside itself. (Its pictures are in it: `handout`.)
HANDOUT_INPUTS = ("benchmarks/results",)


def suite_notebooks() -> list[Path]:
    return sorted((ROOT / "notebooks").glob("*.ipynb"))


def has_solutions(notebook: nbformat.NotebookNode) -> bool:
    return any("solution" in cell.metadata.get("tags", []) for cell in notebook.cells)


def learner_version(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The notebook without its solution cells and without outputs (a copy; `notebook` is left as it is)."""
    learner = nbformat.from_dict(json.loads(json.dumps(notebook)))
    learner.cells = [cell for cell in learner.cells if "solution" not in cell.metadata.get("tags", [])]
    for cell in learner.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    learner.metadata.pop("widgets", None)  # the saved widget state belongs to the outputs just removed
    return learner


# A picture in the teacher's markdown, ../images/NAME.png, and a link to another notebook, [text](NN_name.ipynb#part).
PICTURE = re.compile(r"\.\./images/([\w.-]+\.png)")
NOTEBOOK_LINK = re.compile(r"\[([^\]]+)\]\(([\w.-]+)\.ipynb(#[^)\s]*)?\)")


def site_url() -> str | None:
    """Where the students' site (build/site-students/) is published: pyproject.toml's [project.urls] Site, if set."""
    urls = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"].get("urls", {})
    return urls.get("Site", "").rstrip("/") or None


def with_pictures(cell: nbformat.NotebookNode) -> None:
    """Put each picture the markdown `cell` shows from ../images/ into the cell, as an attachment it shows instead."""
    names = dict.fromkeys(PICTURE.findall(cell.source))
    if not names:
        return
    attachments = cell.setdefault("attachments", {})
    for name in names:
        attachments[name] = {"image/png": base64.b64encode((ROOT / "images" / name).read_bytes()).decode("ascii")}
    cell.source = PICTURE.sub(r"attachment:\1", cell.source)


def without_notebook_links(source: str, site: str | None, own: str = "") -> str:
    """`source` with each link to another notebook pointing at its page on the site at `site` or, with no site, made
    text that says the notebook is a separate one. A link to the notebook itself (`own`, its name without .ipynb)
    stays in it."""
    def replace(match: re.Match) -> str:
        text, stem, part = match.group(1), match.group(2), match.group(3) or ""
        if stem == own:
            return f"[{text}]({part})" if part else text
        if site:
            return f"[{text}]({site}/notebooks/{stem}.html{part})"
        return f"separate notebook {text}" if text.isdigit() else f"{text} (a separate notebook)"

    return NOTEBOOK_LINK.sub(replace, source)


def handout(notebook: nbformat.NotebookNode, name: str = "", *, links: bool = False) -> nbformat.NotebookNode:
    """The learner's edition of `notebook` (its file name is `name`) as it is handed out: `learner_version`, with its
    pictures in it and no link to another notebook's file (a copy; `notebook` is left as it is). With `links`, its
    links to the other notebooks stay, for a copy that has them all beside it (`make lab`'s)."""
    learner = learner_version(notebook)
    make_standalone(learner, name, links=links)
    return learner


def make_standalone(notebook: nbformat.NotebookNode, name: str = "", *, links: bool = False) -> None:
    """Put the pictures of `notebook`'s markdown in it, and (unless `links`) point its links to other notebooks at the
    site (in place; the cells stay the same cells)."""
    site = site_url()
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            with_pictures(cell)
            if not links:
                cell.source = without_notebook_links(cell.source, site, own=Path(name).stem)


PROGRESS_CALL = re.compile(r"\bexercises\.progress\(")
# A line of the summary: "  ✔ done           the denominators (d_model=8, base=100.0)" (posenc.exercises.progress).
PROGRESS_LINE = re.compile(r"^  \S (done|wrong|not attempted) +(.*)$")


def answer_names(notebook) -> set[str]:
    """The learner's answers: the names an exercise's placeholder sets (`my_table = None`) and its solution sets again."""
    def assigned(tag):
        nodes = [node for cell in notebook.cells if tag in cell.metadata.get("tags", [])
                 for node in ast.walk(ast.parse(cell.source))]
        return ({node.id for node in nodes if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
                | {node.name for node in nodes if isinstance(node, (ast.FunctionDef, ast.ClassDef))})

    return assigned("exercise") & assigned("solution")


def reads_an_answer(source: str, answers: set[str]) -> bool:
    return any(re.search(rf"\b{re.escape(name)}\b", source) for name in answers)


PREDICTED_CALL = re.compile(r"\bexercises\.predicted\(")
CHECKER_CALL = re.compile(r"\bexercises\.check_")


def waits_for_a_prediction(source: str) -> bool:
    """A predict exercise's run: it shows its result under `if exercises.predicted(...)`, and judges nothing itself."""
    return bool(PREDICTED_CALL.search(source)) and not CHECKER_CALL.search(source)


def waiting_output() -> nbformat.NotebookNode:
    """What such a run shows while the learner's prediction is still None (posenc.exercises.predicted)."""
    from posenc.exercises.predictions import WAITING_FOR_A_PREDICTION

    return nbformat.v4.new_output("stream", name="stdout", text=WAITING_FOR_A_PREDICTION + "\n")


def nothing_attempted(output: dict) -> dict:
    """The progress summary as the learner's edition shows it: the same exercises, none attempted."""
    text = output.get("data", {}).get("text/plain", "")
    if not text.startswith("Your progress:"):
        return output
    names = [match.group(2) for match in map(PROGRESS_LINE.match, text.splitlines()[1:]) if match]
    lines = [f"Your progress: {len(names)} exercises, 0 done, 0 wrong, {len(names)} not attempted",
             *(f"  … not attempted  {name}" for name in names)]
    return nbformat.from_dict({**output, "data": {**output["data"], "text/plain": "\n".join(lines)}})


def learner_with_outputs(teacher: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The learner's edition of `teacher` as the students' site shows it: the teacher's stored outputs and saved widget
    state for the cells both share, except a cell that reads a learner's answer (a checker: its output would be the
    teacher's "Correct", and may tell the answer), which is shown without output, and a predict exercise's run, which
    shows what a learner's own run shows before the prediction: that it waits for it; the progress summary says what
    a learner's own run says before any attempt."""
    edition = learner_version(teacher)
    if "widgets" in teacher.metadata:
        edition.metadata["widgets"] = copy.deepcopy(teacher.metadata["widgets"])
    stored = {cell.id: cell for cell in teacher.cells}
    answers = answer_names(teacher)
    for cell in edition.cells:
        if cell.cell_type != "code":
            continue
        outputs = copy.deepcopy(stored[cell.id].outputs)
        if PROGRESS_CALL.search(cell.source):
            outputs = [nothing_attempted(output) for output in outputs]
        elif reads_an_answer(cell.source, answers) and waits_for_a_prediction(cell.source):
            outputs = [waiting_output()]
        elif reads_an_answer(cell.source, answers):
            outputs = []
        cell.outputs, cell.execution_count = outputs, stored[cell.id].execution_count
    return edition


def copy_inputs(out: Path) -> None:
    for folder in HANDOUT_INPUTS:
        shutil.copytree(ROOT / folder, out / folder, dirs_exist_ok=True)


def student_notebook(source: Path, target: Path) -> bool:
    """Write the handout version of `source`; False if its cells are the teacher's (no solution cells), with their
    stored outputs, so that it need not run."""
    notebook = nbformat.read(source, as_version=4)
    if not has_solutions(notebook):
        # The same cells: their stored outputs are already those of a full run. Only the markdown changes.
        make_standalone(notebook, source.name)
        nbformat.write(notebook, target)
        return False
    nbformat.write(handout(notebook, source.name), target)
    return True


def build_handout(out: Path) -> None:
    """`make student`: the whole edition anew, each notebook with solutions executed."""
    shutil.rmtree(out, ignore_errors=True)
    (out / "notebooks").mkdir(parents=True)
    copy_inputs(out)
    for source in suite_notebooks():
        target = out / "notebooks" / source.name
        if student_notebook(source, target):
            print(f"{target}: {run(target):.1f} s", flush=True)
        else:
            print(f"{target}: no solutions, its stored outputs kept", flush=True)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def build_for_lab(out: Path) -> list[str]:
    """`make lab`: bring the learner's copy in `out` up to date, keeping their work; return what to tell them
    (nothing, unless the suite changed a notebook the learner kept, or dropped one they worked in)."""
    folder = out / "notebooks"
    folder.mkdir(parents=True, exist_ok=True)
    # Nothing in the learner's copy belongs in the repository.
    (out / ".gitignore").write_text("# A learner's own copy (tools/student_edition.py), not part of the suite.\n*\n")
    copy_inputs(out)
    manifest_path = out / MANIFEST
    manifest = json.loads(manifest_path.read_text()) if manifest_path.is_file() else {}
    written = {name: entry if isinstance(entry, dict) else {"written": entry, "suite": entry}
               for name, entry in manifest.items()}
    kept, notes = [], []

    def untouched(path: Path) -> bool:
        return path.is_file() and written.get(path.name, {}).get("written") == _digest(path.read_bytes())

    for source in suite_notebooks():
        target = folder / source.name
        # All the notebooks are in this copy: their links to each other stay.
        data = nbformat.writes(handout(nbformat.read(source, as_version=4), source.name, links=True)).encode() + b"\n"
        suite = _digest(data)
        if target.exists() and not untouched(target) and target.read_bytes() != data:
            # The learner's work stays; it is worth a word only if the suite has something new for it.
            if written.get(source.name, {}).get("suite") != suite:
                kept.append(target.name)
            continue
        if not target.exists() or target.read_bytes() != data:
            target.write_bytes(data)
        written[source.name] = {"written": suite, "suite": suite}
    if kept:
        notes.append(f"Kept your changed {', '.join(kept)} in {folder}; the suite has a newer version of "
                     f"{'each' if len(kept) > 1 else 'it'}: rename yours and run `make lab` again to get it.")
    # A notebook the suite no longer has (renamed or removed) goes, unless the learner has worked in it.
    names = {source.name for source in suite_notebooks()}
    for path in sorted(folder.glob("*.ipynb")):
        if path.name not in names:
            if untouched(path):
                path.unlink()
                written.pop(path.name)
            else:
                notes.append(f"{path} is no longer part of the suite; your copy was kept.")
    manifest_path.write_text(json.dumps(dict(sorted(written.items())), indent=1) + "\n")
    return notes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lab", action="store_true", help="a learner's own copy: not executed, their work kept")
    parser.add_argument("--out", type=Path, help="the edition's folder (learner/ with --lab, else build/student/)")
    args = parser.parse_args(argv)
    if args.lab:
        for note in build_for_lab(args.out or ROOT / "learner"):
            print(note, file=sys.stderr)
    else:
        build_handout(args.out or ROOT / "build" / "student")
    return 0


if __name__ == "__main__":
    sys.exit(main())
