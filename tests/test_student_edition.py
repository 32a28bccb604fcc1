"""The learner's edition: solutions removed, it runs top to bottom, every checker says "not attempted" (the run is
nbval's, on the copies of tests/notebook_runs.py); and the learner's own copy that `make lab` opens keeps the
learner's work."""

import hashlib
import json
from pathlib import Path

import nbformat
import pytest

from posenc.exercises.feedback import Progress
from tests.notebook_runs import KERNEL, for_nbval
from tools import student_edition
from tools.student_edition import answer_names, nothing_attempted

ROOT = Path(__file__).resolve().parent.parent

WITH_SOLUTIONS = [p.name for p in student_edition.suite_notebooks()
                  if student_edition.has_solutions(nbformat.read(p, as_version=4))]


def test_most_notebooks_have_solutions_to_remove():
    assert len(WITH_SOLUTIONS) >= 6


@pytest.mark.parametrize("name", WITH_SOLUTIONS)
def test_the_handout_keeps_every_cell_but_the_solutions(tmp_path, name):
    # What `make student` writes before it executes it; nbval executes the same cells under the oldest CPU
    # (tests/notebook_runs.py), which is the check that the learner's edition runs.
    path = tmp_path / name
    assert student_edition.student_notebook(ROOT / "notebooks" / name, path)
    teacher = nbformat.read(ROOT / "notebooks" / name, as_version=4)
    handout = nbformat.read(path, as_version=4)
    assert [c.source for c in handout.cells] == [c.source for c in teacher.cells
                                                 if "solution" not in c.metadata.get("tags", [])]
    assert all(c.get("outputs", []) == [] for c in handout.cells)
    # The copy nbval runs under the oldest CPU has these cells, with the teacher's stored outputs and the kernel
    # that sets the CPU.
    copy = for_nbval(teacher)
    assert [c.source for c in copy.cells] == [c.source for c in handout.cells]
    assert copy.metadata.kernelspec == KERNEL
    stored = {c.id: c.outputs for c in teacher.cells if c.cell_type == "code"}
    # (But the progress summary, and a predict exercise's run, which waits for the prediction: test_predict_exercises.)
    assert all(c.outputs == stored[c.id] for c in copy.cells if c.cell_type == "code" and "progress(" not in c.source
               and c.outputs != [student_edition.waiting_output()])


def _summary(text):
    return {"output_type": "execute_result", "execution_count": 9, "metadata": {}, "data": {"text/plain": text}}


def test_the_learners_progress_summary_lists_the_same_exercises_none_attempted():
    teacher = str(Progress((("the denominators (d_model=8, base=100.0)", "done"), ("the table", "wrong"))))
    learner = str(Progress((("the denominators (d_model=8, base=100.0)", "not attempted"),
                            ("the table", "not attempted"))))
    assert nothing_attempted(_summary(teacher)) == _summary(learner)
    # What is not the summary is left as it is.
    assert nothing_attempted(_summary("tensor([1, 2])")) == _summary("tensor([1, 2])")


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
    # ... another is still as an older `make lab` wrote it (an older manifest: one hash per name), and two have
    # names the suite no longer uses, one of them worked in.
    manifest = json.loads((tmp_path / student_edition.MANIFEST).read_text())
    for path in (outdated, gone):
        path.write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}\n')
        manifest[path.name] = _digest(path)
    worked_in.write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}\n')
    (tmp_path / student_edition.MANIFEST).write_text(json.dumps(manifest))

    notes = student_edition.build_for_lab(tmp_path)

    # The learner's work is kept, and not mentioned: the suite has nothing new for it.
    assert edited.read_bytes() == mine and not [n for n in notes if edited.name in n]
    assert nbformat.read(outdated, as_version=4) == student_edition.learner_version(
        nbformat.read(ROOT / "notebooks" / outdated.name, as_version=4))
    assert not gone.exists()
    assert notes == [f"{worked_in} is no longer part of the suite; your copy was kept."]
    # A third run has nothing to say at all.
    assert student_edition.build_for_lab(tmp_path) == [notes[0]]


def test_make_lab_says_in_one_line_which_kept_notebooks_the_suite_has_changed(tmp_path):
    student_edition.build_for_lab(tmp_path)
    folder = tmp_path / "notebooks"
    first, second = folder / WITH_SOLUTIONS[0], folder / WITH_SOLUTIONS[1]
    for path in (first, second):
        notebook = nbformat.read(path, as_version=4)
        notebook.cells[-1].source += "\n# my notes"
        nbformat.write(notebook, path)
    assert student_edition.build_for_lab(tmp_path) == []  # changed by the learner, the suite the same: quiet
    # The suite's version of both changes (as if a new commit had changed them since the copy was written).
    manifest = json.loads((tmp_path / student_edition.MANIFEST).read_text())
    for path in (first, second):
        manifest[path.name]["suite"] = "an older version"
    (tmp_path / student_edition.MANIFEST).write_text(json.dumps(manifest))
    mine = first.read_bytes()

    notes = student_edition.build_for_lab(tmp_path)

    assert first.read_bytes() == mine
    assert len(notes) == 1 and f"{first.name}, {second.name}" in notes[0] and "newer version of each" in notes[0]
    assert "rename yours and run `make lab` again" in notes[0]


def test_the_cells_that_read_an_answer_are_left_uncompared_in_the_learners_edition():
    # An answer is a name an exercise and its solution both set; the feedback on it differs by design.
    new = nbformat.v4
    notebook = new.new_notebook(cells=[
        new.new_code_cell("my_pad = None\nmy_table = None", metadata={"tags": ["exercise"]}),
        new.new_code_cell("def my_pad(words):\n    return words\nj = 1\nmy_table = j", metadata={"tags": ["solution"]}),
        new.new_code_cell("exercises.check_pad_function(my_pad)"),
        new.new_code_cell("print(j)")])
    assert answer_names(notebook) == {"my_pad", "my_table"}
    copy = for_nbval(notebook)
    assert [c.metadata.get("tags", []) for c in copy.cells] == [["exercise", "nbval-ignore-output"], ["nbval-ignore-output"], []]
