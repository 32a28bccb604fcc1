"""The learner's edition: solutions removed, it runs top to bottom, every checker says "not attempted" (the run is
nbval's, on the copies of tests/notebook_runs.py); a handed-out notebook stands on its own (its pictures in it, no
link to another notebook's file); and the learner's own copy that `make lab` opens keeps the learner's work."""

import base64
import hashlib
import json
import re
import shutil
import tomllib
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
ALL = [p.name for p in student_edition.suite_notebooks()]
PNG = b"\x89PNG\r\n\x1a\n"


def pictures(notebook) -> list[list[str]]:
    """What each markdown cell shows as a picture: the targets of its ![alt](target) and <img src="target">."""
    return [re.findall(r"!\[[^\]]*\]\(\s*([^)\s]+)", cell.source) + re.findall(r"<img\b[^>]*\bsrc=[\"']([^\"']+)", cell.source)
            for cell in notebook.cells if cell.cell_type == "markdown"]


def assert_stands_on_its_own(path: Path, folder: Path, *, beside: Path | None = None) -> None:
    """The handed-out notebook at `path`, copied alone into the empty `folder`: nothing in it refers to ../images or to
    another notebook's file, and each picture its markdown shows is an attachment of its cell, the PNG of
    images/NAME.png. (It runs from top to bottom: nbval runs the same cells, tests/notebook_runs.py.) With `beside`,
    the folder of the other notebooks (make lab's copy), its links to them stay and lead to a file there."""
    folder.mkdir(parents=True)
    alone = Path(shutil.copy2(path, folder))
    assert "../images" not in alone.read_text(), path.name
    notebook = nbformat.read(alone, as_version=4)
    markdown = [cell for cell in notebook.cells if cell.cell_type == "markdown"]
    for cell in markdown:
        linked = re.findall(r"\]\(([^)#]*\.ipynb)", cell.source)
        if beside is None:
            assert ".ipynb" not in cell.source, (path.name, re.findall(r".{0,40}\.ipynb", cell.source))
        else:
            assert all((beside / target).is_file() for target in linked), (path.name, linked)
    for cell, shown in zip(markdown, pictures(notebook)):
        for target in shown:
            assert target.startswith("attachment:"), (path.name, target)
            name = target.removeprefix("attachment:")
            data = base64.b64decode(cell.attachments[name]["image/png"])
            assert data.startswith(PNG) and data == (ROOT / "images" / name).read_bytes(), (path.name, name)
    # Every picture of the teacher's notebook is still shown, from the cell that showed it.
    teacher = nbformat.read(ROOT / "notebooks" / path.name, as_version=4)
    by_cell = {cell.id: shown for cell, shown in zip(markdown, pictures(notebook))}
    for cell, shown in zip([c for c in teacher.cells if c.cell_type == "markdown"], pictures(teacher)):
        assert [target.replace("../images/", "attachment:") for target in shown] == by_cell[cell.id]


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
    kept = [c for c in teacher.cells if "solution" not in c.metadata.get("tags", [])]
    assert [c.id for c in handout.cells] == [c.id for c in kept]
    # The code as the teacher's; the markdown with its pictures in it and its links to other notebooks to the site
    # (test_a_handed_out_notebook_stands_on_its_own).
    assert [c.source for c in handout.cells if c.cell_type == "code"] == [c.source for c in kept if c.cell_type == "code"]
    assert all(c.get("outputs", []) == [] for c in handout.cells)
    # The copy nbval runs under the oldest CPU has these cells, with the teacher's stored outputs and the kernel
    # that sets the CPU.
    copy = for_nbval(teacher, name)
    assert [c.source for c in copy.cells] == [c.source for c in handout.cells]
    assert [c.get("attachments") for c in copy.cells] == [c.get("attachments") for c in handout.cells]
    assert copy.metadata.kernelspec == KERNEL
    stored = {c.id: c.outputs for c in teacher.cells if c.cell_type == "code"}
    # (But the progress summary, and a predict exercise's run, which waits for the prediction: test_predict_exercises.)
    assert all(c.outputs == stored[c.id] for c in copy.cells if c.cell_type == "code" and "progress(" not in c.source
               and c.outputs != [student_edition.waiting_output()])


@pytest.mark.parametrize("name", ALL)
def test_a_handed_out_notebook_stands_on_its_own(tmp_path, name):
    # What `make student` writes (before it executes a notebook with solutions; the run changes only outputs).
    path = tmp_path / "student" / name
    path.parent.mkdir()
    student_edition.student_notebook(ROOT / "notebooks" / name, path)
    assert_stands_on_its_own(path, tmp_path / "alone")


def test_the_pictures_of_the_teachers_notebooks_stay_in_images():
    # The teacher's notebooks, the site and the slides read images/ (tests/test_notebooks.py checks the links).
    teacher = [target for path in student_edition.suite_notebooks()
               for shown in pictures(nbformat.read(path, as_version=4)) for target in shown]
    assert teacher and all(target.startswith("../images/") for target in teacher)


def test_links_to_other_notebooks_point_at_the_site_or_say_it_is_a_separate_notebook(monkeypatch):
    source = ("Next: [02 The W_E projection](02_embedding.ipynb). Padding ([06](06_batches_and_masks.ipynb)), "
              "[its exercises](03_pe_formula.ipynb#exercises) and [this part](03_pe_formula.ipynb#part) of 03.")
    assert student_edition.without_notebook_links(source, None, own="03_pe_formula") == (
        "Next: 02 The W_E projection (a separate notebook). Padding (separate notebook 06), "
        "[its exercises](#exercises) and [this part](#part) of 03.")
    assert student_edition.without_notebook_links(source, "https://example.org/posenc", own="05_x") == (
        "Next: [02 The W_E projection](https://example.org/posenc/notebooks/02_embedding.html). Padding "
        "([06](https://example.org/posenc/notebooks/06_batches_and_masks.html)), "
        "[its exercises](https://example.org/posenc/notebooks/03_pe_formula.html#exercises) and "
        "[this part](https://example.org/posenc/notebooks/03_pe_formula.html#part) of 03.")
    # The site is the one pyproject.toml names, if it names one; each handed-out notebook links to its pages.
    assert student_edition.site_url() == (tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]
                                          .get("Site", "").rstrip("/") or None)
    monkeypatch.setattr(student_edition, "site_url", lambda: "https://example.org/posenc")
    start = student_edition.handout(nbformat.read(ROOT / "notebooks" / "00_start_here.ipynb", as_version=4),
                                    "00_start_here.ipynb")
    pages = re.findall(r"\]\(https://example\.org/posenc/notebooks/(\w+)\.html\)", "\n".join(c.source for c in start.cells))
    assert sorted(set(pages)) == [p.stem for p in student_edition.suite_notebooks() if p.stem != "00_start_here"]


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
        assert_stands_on_its_own(tmp_path / "notebooks" / name, tmp_path / "alone" / name, beside=tmp_path / "notebooks")
    # The files the notebooks read (their pictures are in them), and nothing for git.
    assert (tmp_path / "benchmarks" / "results").is_dir() and not (tmp_path / "images").exists()
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
    assert nbformat.read(outdated, as_version=4) == student_edition.handout(
        nbformat.read(ROOT / "notebooks" / outdated.name, as_version=4), outdated.name, links=True)
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


def test_the_learners_edition_keeps_the_check_cells():
    # A cell tagged `check` checks a step against the package: only the pages and the slides leave it out
    # (tools/build_site.py). The learner's notebooks keep it, and nbval runs it in their edition too.
    kept = 0
    for path in student_edition.suite_notebooks():
        teacher = nbformat.read(path, as_version=4)
        checks = [cell.id for cell in teacher.cells if "check" in cell.metadata.get("tags", [])]
        for edition in (student_edition.handout(teacher, path.name), for_nbval(teacher, path.name)):
            assert [cell.id for cell in edition.cells if "check" in cell.metadata.get("tags", [])] == checks, path.name
        kept += len(checks)
    assert kept >= 5  # the suite keeps a few short check cells (9 now); the test must see some to mean anything
