"""The learner's edition: solutions removed, it runs top to bottom, every checker says "not attempted";
and the learner's own copy that `make lab` opens keeps the learner's work."""

import hashlib
import json
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import student_edition  # noqa: E402
import warm_kernels  # noqa: E402
from run_notebooks import run  # noqa: E402

WITH_SOLUTIONS = [p.name for p in student_edition.suite_notebooks()
                  if student_edition.has_solutions(nbformat.read(p, as_version=4))]


def outputs(path):
    for cell in json.loads(path.read_text())["cells"]:
        for output in cell.get("outputs", []):
            yield "".join(output.get("text", "")) + "".join(output.get("data", {}).get("text/plain", ""))


def test_most_notebooks_have_solutions_to_remove():
    assert len(WITH_SOLUTIONS) >= 6


@pytest.mark.slow
@pytest.mark.parametrize("name", WITH_SOLUTIONS)
def test_the_handout_runs_and_every_checker_reports_not_attempted(tmp_path, name):
    # What `make student` does to one notebook: remove the solutions, then execute it. That run is the check:
    # an error in any cell fails it (nbclient raises), and its outputs are read below.
    (tmp_path / "notebooks").mkdir()
    student_edition.copy_inputs(tmp_path)
    path = tmp_path / "notebooks" / name
    assert student_edition.student_notebook(ROOT / "notebooks" / name, path)
    run(path, warm_kernels.notebook_client_options())
    notebook = json.loads(path.read_text())
    assert not [c for c in notebook["cells"] if "solution" in c["metadata"].get("tags", [])]
    texts = list(outputs(path))
    feedback = [text for text in texts
                if ("attempted" in text or "Correct" in text) and not text.startswith("Your progress")]
    assert feedback and all(text.startswith(("…", "Not attempted")) for text in feedback), feedback
    # The progress summary at the end lists every exercise as not attempted.
    summary = texts[-1]
    assert summary.startswith("Your progress") and ", 0 done, 0 wrong, " in summary, summary
    assert summary.splitlines()[0].endswith(f"{len(feedback)} not attempted"), summary


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_learners_own_copy_has_no_solutions_and_no_outputs(tmp_path):
    assert student_edition.build_for_lab(tmp_path) == []
    names = sorted(p.name for p in (tmp_path / "notebooks").glob("*.ipynb"))
    assert names == [p.name for p in student_edition.suite_notebooks()]
    for name in names:
        cells = json.loads((tmp_path / "notebooks" / name).read_text())["cells"]
        assert not [c for c in cells if "solution" in c["metadata"].get("tags", [])], name
        assert all(c.get("outputs", []) == [] for c in cells), name
    # The links and files the notebooks read, and nothing for git.
    assert (tmp_path / "images" / "pipeline.png").is_file() and (tmp_path / "benchmarks" / "results").is_dir()
    assert (tmp_path / ".gitignore").read_text().splitlines()[-1] == "*"


def test_make_lab_again_keeps_the_learners_work_and_updates_the_rest(tmp_path):
    student_edition.build_for_lab(tmp_path)
    folder = tmp_path / "notebooks"
    edited, outdated, gone, worked_in = (folder / WITH_SOLUTIONS[0], folder / WITH_SOLUTIONS[1],
                                         folder / "07_old_name.ipynb", folder / "06_old_name.ipynb")
    # The learner changes one notebook (here: answers an exercise) ...
    notebook = nbformat.read(edited, as_version=4)
    notebook.cells[-1].source += "\n# my notes"
    nbformat.write(notebook, edited)
    mine = edited.read_bytes()
    # ... another is still as an older `make lab` wrote it, and two have names the suite no longer uses,
    # one of them worked in.
    manifest = json.loads((tmp_path / student_edition.MANIFEST).read_text())
    for path in (outdated, gone):
        path.write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}\n')
        manifest[path.name] = _digest(path)
    worked_in.write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}\n')
    (tmp_path / student_edition.MANIFEST).write_text(json.dumps(manifest))

    notes = student_edition.build_for_lab(tmp_path)

    assert edited.read_bytes() == mine
    assert [n for n in notes if n.startswith(str(edited))] and "rename it and run `make lab` again" in notes[0]
    assert nbformat.read(outdated, as_version=4) == student_edition.learner_version(
        nbformat.read(ROOT / "notebooks" / outdated.name, as_version=4))
    assert not gone.exists()
    assert worked_in.exists() and [n for n in notes if n.startswith(str(worked_in))]
    # And a third run has nothing new to say about the notebook brought up to date.
    assert not [n for n in student_edition.build_for_lab(tmp_path) if str(outdated) in n]
