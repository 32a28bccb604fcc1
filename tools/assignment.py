"""A graded assignment from one notebook, with otter-grader: `make assignment NOTEBOOK=03`.

    python -m tools.assignment 03    build/assignments/03/: student/ to hand out, autograder/ with the zip that grades

The exercises are found by the notebook's structure, never by name or count: a markdown heading `### Exercise k
(...): ...`, the code cell tagged `exercise` after it that binds the answer (`name = None  # ...`), the cell tagged
`solution` after that, and the first later cell whose `exercises.check_...(...)` call reads the answer (usually
the next one; in a notebook that trains once for several predictions, after the training). From them this writes
an otter master notebook (master/, in otter's own format: raw BEGIN/END cells) and runs `otter assign`, which writes

- student/: the notebook to hand out, cell for cell the learner's edition (tools/student_edition.py: each
  placeholder kept, each solution removed, its pictures in it, its links to other notebooks to the site (or text);
  a test holds them equal), each exercise an otter question `exercise_k`;
- autograder/: the notebook with its solutions and the autograder zip, which otter grades the solutions with before
  it is kept (an assignment whose tests fail its own solutions is not handed out).

Each exercise is worth 2 points, one per test. The public test is the exercise's checker cell: its call, which must
say correct, as the learner saw it. The hidden test asks also for the solution's value itself (tools/answer_match.py,
in the zip). Grading runs both right after the checker cell (otter's `tests` cell metadata), where the learner's
notebook has the variables the call reads, whatever later cells do with them. (otter also checks right after the
answer cell, where a call may read a variable not computed yet; the later check is the one that counts, so the
checker cell is locked against deletion.)
"""

from __future__ import annotations

import argparse
import ast
import builtins
import copy
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat
import yaml

from tools.student_edition import ROOT, copy_inputs, make_standalone, suite_notebooks

BUILD = ROOT / "build" / "assignments"
HEADING = re.compile(r"^###\s+Exercise\s+(\d+)\b", re.MULTILINE)
POINTS = 2  # one for the public test, one for the hidden test
# Shipped in the zip: the hidden tests import it in the grading kernel (its folder is the kernel's).
ANSWER_MATCH = ROOT / "tools" / "answer_match.py"


class NotebookStructureError(ValueError):
    """The notebook's exercises do not have the structure the assignment is derived from."""


@dataclass(frozen=True)
class Exercise:
    number: int
    heading: int  # cell indices in the notebook
    placeholder: int
    solution: int
    checker: int
    answer: str  # the name the placeholder binds
    call: str  # the checker call's source, as the notebook has it
    reads: tuple[str, ...]  # the names the call reads (the public test's parameters)

    @property
    def name(self) -> str:
        return f"exercise_{self.number}"


def notebook_path(number: str) -> Path:
    """notebooks/NN_*.ipynb for NN (`3` or `03`)."""
    matches = [path for path in suite_notebooks() if path.name.split("_")[0] == f"{int(number):02d}"]
    if len(matches) != 1:
        raise SystemExit(f"no single notebook numbered {number} in notebooks/ ({len(matches)} found)")
    return matches[0]


def _tags(cell: nbformat.NotebookNode) -> list[str]:
    return cell.metadata.get("tags", [])


def _parse(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except SyntaxError:  # IPython syntax (%pip, !ls): no checker call is written that way
        return None


def _answer_name(source: str) -> str | None:
    tree = _parse(source)
    first = tree.body[0] if tree and tree.body else None
    if isinstance(first, ast.Assign) and len(first.targets) == 1 and isinstance(first.targets[0], ast.Name):
        return first.targets[0].id
    return None


def _checker_call(source: str, answer: str) -> ast.Call | None:
    """The `exercises.check_...(...)` call in `source` that reads `answer`, if there is one."""
    tree = _parse(source)
    for node in ast.walk(tree) if tree else ():
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr.startswith("check_")
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "exercises"
                and any(isinstance(n, ast.Name) and n.id == answer for n in ast.walk(node))):
            return node
    return None


def find_exercises(notebook: nbformat.NotebookNode, name: str) -> list[Exercise]:
    """Every exercise of `notebook` (its file name is `name`, for the errors), in order."""
    cells = notebook.cells
    headings = [(i, int(match.group(1))) for i, cell in enumerate(cells)
                if cell.cell_type == "markdown" and (match := HEADING.search(cell.source))]
    if not headings:
        raise NotebookStructureError(f"{name}: no '### Exercise k' heading, so nothing to grade")
    exercises = []
    for (heading, number), (next_heading, _) in zip(headings, [*headings[1:], (len(cells), None)]):
        where = f"{name}, exercise {number}"
        placeholder = next((i for i in range(heading + 1, next_heading) if "exercise" in _tags(cells[i])), None)
        if placeholder is None or cells[placeholder].cell_type != "code":
            raise NotebookStructureError(f"{where}: no code cell tagged 'exercise' under its heading")
        answer = _answer_name(cells[placeholder].source)
        if answer is None:
            raise NotebookStructureError(f"{where}: the exercise cell does not start with `name = None`")
        solution = placeholder + 1
        if solution >= next_heading or "solution" not in _tags(cells[solution]):
            raise NotebookStructureError(f"{where}: the exercise cell is not followed by a cell tagged 'solution'")
        checker, call = next(((i, c) for i in range(solution + 1, len(cells)) if cells[i].cell_type == "code"
                              and (c := _checker_call(cells[i].source, answer))), (None, None))
        if call is None:
            raise NotebookStructureError(f"{where}: no later cell calls `exercises.check_...` on {answer}")
        source = cells[checker].source
        reads = dict.fromkeys(n.id for n in ast.walk(call) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
                              and n.id not in vars(builtins) and n.id != "env")  # otter passes `env` itself
        # Continuation lines as if the call started at column 0 (the tests put it after "feedback = ").
        first, *rest = ast.get_source_segment(source, call).split("\n")
        text = "\n".join([first, *(line[call.col_offset:] if line[:call.col_offset].isspace() else line for line in rest)])
        exercises.append(Exercise(number, heading, placeholder, solution, checker, answer, text, tuple(reads)))
    numbers = [exercise.number for exercise in exercises]
    if len(set(numbers)) != len(numbers):
        raise NotebookStructureError(f"{name}: exercise numbers repeat ({numbers})")
    return exercises


def _raw(source: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_raw_cell(source)


def _call_lines(exercise: Exercise) -> str:
    """`feedback = <the call>` in a test function, the call's continuation lines aligned under it."""
    prefix = "    feedback = "
    return prefix + exercise.call.replace("\n", "\n" + " " * len(prefix))


def public_test(exercise: Exercise) -> str:
    return (f"def test_{exercise.name}({', '.join(exercise.reads)}):\n"
            f'    """The checker cell\'s verdict, as the learner saw it."""\n'
            f"{_call_lines(exercise)}\n"
            f"    assert feedback.correct, str(feedback)\n")


def hidden_test(exercise: Exercise, solution: str) -> str:
    return ("# HIDDEN\n"
            f"def test_{exercise.name}_exact({', '.join(('env', *exercise.reads))}):\n"
            f'    """The checker\'s verdict, and the answer is the solution\'s value (tools/answer_match.py)."""\n'
            f"    from {ANSWER_MATCH.stem} import assert_matches_solution\n\n"
            f"{_call_lines(exercise)}\n"
            f"    assert feedback.correct, str(feedback)\n"
            f"    assert_matches_solution(env, {exercise.answer!r}, {solution!r})\n")


def assignment_config(name: str) -> str:
    config = {
        "name": name,  # written into the student notebook: otter refuses a submission of another assignment
        # No otter cells in the learner's notebook: its checker cells are the checks, and submissions are collected
        # as notebooks.
        "init_cell": False, "check_all_cell": False, "export_cell": False,
        "generate": True,  # the autograder zip
        "autograder_files": [ANSWER_MATCH.name],
        "tests": {"files": False, "ok_format": False},  # exception-based tests: a failing checker says why
    }
    return "# ASSIGNMENT CONFIG\n" + yaml.safe_dump(config, sort_keys=False)


def master_notebook(teacher: nbformat.NotebookNode, exercises: list[Exercise], name: str) -> nbformat.NotebookNode:
    """`teacher` in otter's master format: each exercise a question, its placeholder and solution one answer cell."""
    master = copy.deepcopy(teacher)
    master.metadata.pop("widgets", None)  # the saved widget state belongs to the outputs removed below
    for exercise in exercises:  # one cell may check several answers
        checker = master.cells[exercise.checker]
        checker.metadata.setdefault("otter", {}).setdefault("tests", []).append(exercise.name)
        checker.metadata.update(editable=False, deletable=False)  # JupyterLab keeps it as it is
    by_cell = {getattr(e, part): (part, e) for e in exercises for part in ("heading", "placeholder", "solution")}
    cells = [_raw(assignment_config(name))]
    for i, cell in enumerate(master.cells):
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
        part, exercise = by_cell.get(i, (None, None))
        if part == "heading":
            question = {"name": exercise.name, "points": POINTS, "check_cell": False}
            cells += [_raw("# BEGIN QUESTION\n" + yaml.safe_dump(question, sort_keys=False)), cell]
        elif part == "placeholder":
            # One answer cell: the student version keeps the placeholder, otter drops the solution block.
            solution = master.cells[exercise.solution].source
            cell.source = f"{cell.source}\n# BEGIN SOLUTION NO PROMPT\n{solution}\n# END SOLUTION"
            tests = [nbformat.v4.new_code_cell(public_test(exercise)),
                     nbformat.v4.new_code_cell(hidden_test(exercise, solution))]
            cells += [_raw("# BEGIN SOLUTION"), cell, _raw("# END SOLUTION"),
                      _raw("# BEGIN TESTS"), *tests, _raw("# END TESTS"), _raw("# END QUESTION")]
        elif part != "solution":  # a solution is in its answer cell, above
            cells.append(cell)
    master.cells = cells
    return master


def build(number: str, out: Path | None = None, *, run_tests: bool = True) -> Path:
    """Write notebook `number`'s assignment into `out` (build/assignments/NN/); return that folder."""
    from otter.assign import main as otter_assign  # otter is a tool of the teacher's (requirements-dev.lock)

    source = notebook_path(number)
    out = out or BUILD / source.name[:2]
    teacher = nbformat.read(source, as_version=4)
    master_dir = out / "master"
    shutil.rmtree(master_dir, ignore_errors=True)
    master_dir.mkdir(parents=True)
    master = master_dir / source.name
    notebook = master_notebook(teacher, find_exercises(teacher, source.name), f"posenc-{source.name[:2]}")
    make_standalone(notebook, source.name)  # its pictures in it, its links to other notebooks to the site
    nbformat.write(notebook, master)
    shutil.copy2(ANSWER_MATCH, master_dir)
    copy_inputs(out)  # benchmarks/results/ beside student/ and autograder/, as beside notebooks/
    otter_assign(str(master), str(out), no_pdfs=True, no_run_tests=not run_tests)
    return out


def autograder_zip(folder: Path) -> Path:
    """The autograder zip `otter assign` wrote into folder/autograder/ (its name has a time stamp)."""
    zips = sorted((folder / "autograder").glob("*-autograder_*.zip"))
    if not zips:
        raise SystemExit(f"no autograder zip in {folder / 'autograder'}: run `make assignment NOTEBOOK=NN` first")
    return zips[-1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebook", help="the notebook's number, e.g. 03")
    parser.add_argument("--out", type=Path, help="the assignment's folder (default build/assignments/NN/)")
    parser.add_argument("--no-run-tests", action="store_true",
                        help="do not grade the solutions with the new zip (faster; the zip is not checked)")
    args = parser.parse_args(argv)
    try:
        out = build(args.notebook, args.out, run_tests=not args.no_run_tests)
    except NotebookStructureError as error:
        print(f"make assignment: {error}", file=sys.stderr)
        return 1
    student = next((out / "student").glob("*.ipynb"))
    print(f"{student}: hand this out (its pictures are in it)")
    print(f"{autograder_zip(out)}: `make grade SUBMISSIONS=folder` grades with it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
