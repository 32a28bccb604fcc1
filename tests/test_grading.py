"""A graded week, end to end: `make assignment` turns a notebook's exercises into an otter assignment, two made-up
submissions are graded as `make grade` grades them, and the CSV holds exactly the scores they earn
(tools/assignment.py, tools/grade.py). Also, without a kernel: every notebook's exercises can become an assignment,
and what the hidden tests compare (tools/answer_match.py)."""

import csv

import nbformat
import numpy as np
import pytest
import torch

from tests.test_student_edition import assert_stands_on_its_own
from tools import assignment, grade, student_edition
from tools.answer_match import differs

# Three exercises, and the suite's quickest notebook to run (about 3 s of CPU in its kernel): each submission is one
# run, plus otter's own start in the grader and in the kernel (about 5 s more).
NOTEBOOK = "04"


def _submission(student, answers):
    """The student notebook with each exercise cell's placeholder followed by `answers[name]`."""
    notebook = nbformat.from_dict(nbformat.reads(nbformat.writes(student), as_version=4))
    for cell in notebook.cells:
        if "exercise" in cell.metadata.get("tags", []):
            cell.source += "\n" + answers[assignment._answer_name(cell.source)]
    return notebook


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:Traits should be given as instances:DeprecationWarning")  # otter 7.0.0's own
def test_a_week_graded_from_assignment_to_csv(tmp_path):
    source = assignment.notebook_path(NOTEBOOK)
    teacher = nbformat.read(source, as_version=4)
    exercises = assignment.find_exercises(teacher, source.name)
    # Not graded with its own solutions here (`make assignment` does that): "right" below is that grading.
    folder = assignment.build(NOTEBOOK, tmp_path / "assignment", run_tests=False)

    # The notebook handed out is the learner's edition: the placeholders kept, the solutions gone, nothing of otter's.
    # It stands on its own: its pictures in it, no link to another notebook's file (nbval runs these cells).
    [handout] = (folder / "student").glob("*.ipynb")
    student = nbformat.read(handout, as_version=4)
    edition = student_edition.handout(teacher, source.name)
    assert [c.source for c in student.cells] == [c.source for c in edition.cells]
    assert [c.get("attachments") for c in student.cells] == [c.get("attachments") for c in edition.cells]
    assert_stands_on_its_own(handout, tmp_path / "alone")
    assert student.metadata.otter["assignment_name"] == f"posenc-{NOTEBOOK}"
    # No stored output: nothing shows before the student runs it, and Run All shows what the learner's edition does
    # (a predict exercise's run waits for the prediction: test_predict_exercises).
    assert all(c.get("outputs", []) == [] for c in student.cells)

    solutions = {e.answer: teacher.cells[e.solution].source for e in exercises}
    first, second = exercises[0], exercises[1]
    made_up = {
        "right": solutions,
        # The first exercise wrong (a string where the checker expects something else, whatever the exercise); the
        # second's cell raises before it binds the answer, and otter runs on, so the third still counts.
        "flawed": {**solutions, first.answer: f"{first.answer} = 'a wrong answer'",
                   second.answer: "raise RuntimeError('a bug in the submission')"},
    }
    submissions = tmp_path / "collected"
    submissions.mkdir()
    for name, answers in made_up.items():
        nbformat.write(_submission(student, answers), submissions / f"{name}.ipynb")

    scores = grade.grade(submissions, folder, tmp_path / "grades.csv", jobs=2)

    with scores.open() as f:
        rows = list(csv.reader(f))
    names = [e.name for e in exercises]
    full = 2 * len(exercises)

    def row(file, zero=()):
        points = [0.0 if e in zero else 2.0 for e in exercises]
        return [file, *map(str, points), str(sum(points)), str(round(sum(points) / full, 4)), "Completed"]

    assert rows == [
        ["file", *names, "total_points_earned", "percent_correct", "grading_status"],
        row("flawed.ipynb", zero=(first, second)),
        row("right.ipynb"),
    ]
    # Beside the CSV, what each test said and the notebook as it ran: the teacher sees the error where it happened.
    reports = scores.parent / "reports"
    report = (reports / "flawed.txt").read_text()
    assert "Not attempted yet" in report.split(f"{second.name} results")[1]
    # otter's tests only see the answer never bound ("Not attempted yet"): the report names the error under the
    # exercise it cost, and only there (the first exercise's answer is wrong, not an error).
    errors = report.split("Errors: cells that raised")[1]
    assert f"{second.name}: RuntimeError: a bug in the submission (its answer cell, cell " in errors
    assert f"{first.name}:" not in errors
    assert "Errors: cells that raised" not in (reports / "right.txt").read_text()
    ran = nbformat.read(reports / "flawed.ipynb", as_version=4)
    assert [o.evalue for c in ran.cells for o in c.get("outputs", []) if o.output_type == "error"] == [
        "a bug in the submission"]


NOTEBOOKS_WITH_EXERCISES = [path for path in student_edition.suite_notebooks()
                            if student_edition.has_solutions(nbformat.read(path, as_version=4))]


@pytest.mark.parametrize("path", NOTEBOOKS_WITH_EXERCISES, ids=lambda path: path.name)
def test_every_notebook_with_exercises_can_become_an_assignment(path):
    teacher = nbformat.read(path, as_version=4)
    exercises = assignment.find_exercises(teacher, path.name)
    master = assignment.master_notebook(teacher, exercises, "posenc-test")
    # One otter question per exercise, each with its two tests, which are Python otter can read.
    questions = [c for c in master.cells if c.cell_type == "raw" and c.source.startswith("# BEGIN QUESTION")]
    assert len(questions) == len(exercises) == sum("solution" in c.metadata.get("tags", []) for c in teacher.cells)
    for exercise in exercises:
        compile(assignment.public_test(exercise), "public", "exec")
        compile(assignment.hidden_test(exercise, teacher.cells[exercise.solution].source), "hidden", "exec")


def test_a_notebook_without_the_structure_is_refused_with_the_reason():
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("### Exercise 1 (transfer): x"),
                                               nbformat.v4.new_code_cell("my_x = None", metadata={"tags": ["exercise"]}),
                                               nbformat.v4.new_code_cell("my_x = 1", metadata={"tags": ["solution"]})])
    with pytest.raises(assignment.NotebookStructureError, match="exercise 1: no later cell calls `exercises.check_"):
        assignment.find_exercises(notebook, "99_made_up.ipynb")


@pytest.mark.parametrize(("answer", "expected"), [
    (torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0 + 1e-7])),  # float rounding
    (np.array([1.0, 2.0]), torch.tensor([1.0, 2.0])),
    (torch.tensor(0.25), 0.25),  # a 0-d tensor is a number
    (0.25, torch.tensor(0.25)),
    (34.0, 34),
    ([10, 10], (10, 10)),
    ({"a": 1, "b": [True]}, {"b": [True], "a": 1}),
    ("b", "b"),
    (print, len),  # a function is the checker's to judge
])
def test_the_hidden_test_takes_the_same_value_in_another_form(answer, expected):
    assert differs(answer, expected) is None


@pytest.mark.parametrize(("answer", "expected", "says"), [
    (None, torch.zeros(2), "not attempted"),
    (torch.tensor([1.0, 2.001]), torch.tensor([1.0, 2.0]), "off by up to 0.001"),
    (torch.zeros(2, 3), torch.zeros(3, 2), "shape (2, 3), not (3, 2)"),
    (torch.zeros(2, dtype=torch.int64), torch.zeros(2), "integer entries"),
    (1, True, "not True"),  # a prediction of True or False is not a number
    ((64, 4, 16), (64, 4, 16, 8), "not a sequence of 4"),
    ({"a": 1}, {"a": 2}, "['a']: 1.0, not 2.0"),
])
def test_the_hidden_test_says_what_differs(answer, expected, says):
    assert says in differs(answer, expected)


@pytest.mark.parametrize(("answer", "solution"), [
    ("0.2154", "my_value = 0.21544"),         # a prediction the checker accepts within its tolerance
    ("'yarn, llama3'", "my_value = ['yarn', 'llama3']"),  # another form the checker reads
])
def test_the_hidden_test_leaves_what_is_not_computed_to_the_checker(answer, solution):
    from tools.answer_match import assert_matches_solution

    env = {"my_value": eval(answer)}
    assert_matches_solution(env, "my_value", solution)  # no AssertionError


def test_the_hidden_test_asks_a_computed_answer_for_the_solutions_value():
    from tools.answer_match import assert_matches_solution

    with pytest.raises(AssertionError, match="off by"):
        assert_matches_solution({"x": torch.tensor([1.0, 2.01]), "torch": torch}, "x", "x = torch.tensor([1.0, 2.0])")


def test_a_cell_that_raised_is_named_under_each_exercise_it_cost_points():
    from types import SimpleNamespace

    def cell(source, tests=(), tags=(), error=None):
        outputs = [nbformat.v4.new_output("error", ename=error[0], evalue=error[1], traceback=[])] if error else []
        metadata = {"otter": {"tests": list(tests)}, "tags": list(tags)} if tests else {}
        return nbformat.v4.new_code_cell(source, metadata=metadata, outputs=outputs)

    notebook = nbformat.v4.new_notebook(cells=[
        cell("my_a = None\nmy_a = undefined", ["exercise_1"], ["otter_answer_cell"], ("NameError", "name 'undefined'")),
        cell("exercises.check_a(my_a)", ["exercise_1"]),
        cell("setup()", error=("RuntimeError", "setup failed")),  # a cell of no exercise: every later one
        cell("my_b = None", ["exercise_2"], ["otter_answer_cell"]),
        cell("exercises.check_b(my_b)", ["exercise_2"], error=("TypeError", "bad")),
        cell("my_c = 3", ["exercise_3"], ["otter_answer_cell"]),  # full points: nothing to say
    ])
    scores = {"exercise_1": 0, "exercise_2": 1, "exercise_3": 2}
    results = SimpleNamespace(results={name: SimpleNamespace(score=score, possible=2) for name, score in scores.items()})
    assert grade.errors_by_exercise(notebook, results) == {
        "exercise_1": ["NameError: name 'undefined' (its answer cell, cell 1)"],
        "exercise_2": ["RuntimeError: setup failed (cell 3, before this exercise)", "TypeError: bad (its checker cell, cell 5)"],
    }


def test_make_grade_grades_one_submission_per_core_at_once():
    import os

    assert grade.JOBS == max(1, os.cpu_count() or 1)


def test_a_grading_process_stops_a_cell_at_the_time_limit(monkeypatch):
    import nbconvert.preprocessors

    monkeypatch.setattr(nbconvert.preprocessors, "ExecutePreprocessor", nbconvert.preprocessors.ExecutePreprocessor)
    assert nbconvert.preprocessors.ExecutePreprocessor().timeout is None  # nbconvert's own: no limit
    grade._warm_worker(7)
    assert nbconvert.preprocessors.ExecutePreprocessor().timeout == 7
