"""Grade a folder of submitted notebooks, on this machine, without Docker: `make grade SUBMISSIONS=folder`.

    python -m tools.grade collected/                 build/assignments/NN/grades.csv
    python -m tools.grade collected/ --notebook 03 --csv scores.csv --jobs 2

What `otter grade` does in Docker containers, done with `otter run` (otter's grading without containers, in this
environment), one submission per core at once, each in a kernel of its own: a cell that raises does not stop otter
(it runs every cell and scores what the tests then find), and a submission with a cell that runs past the time
limit, that kills its kernel or that is no notebook of this assignment scores 0 with the reason in its row, while
the others are graded. The assignment is
the one the submissions' metadata names (`make assignment` writes it into the notebook), or --notebook.

One CSV, a row per submission, in `otter grade`'s columns (file, exercise_1, ..., total_points_earned,
percent_correct, grading_status), without its first row of points possible. Beside it, reports/ keeps for each
submission otter's output with what each test said (NAME.txt) and the notebook as it ran, errors included (NAME.ipynb).
A cell that raised is named in NAME.txt, under every exercise that lost points to it (otter itself only reports what
the tests then found, such as "Not attempted yet" for an answer never bound), and on the line printed per submission:
an error in an exercise's own cells (its answer cell, its checker cell) counts for that exercise, and one in a cell of
no exercise for every later exercise that lost points.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

import nbformat

from tools.assignment import BUILD, autograder_zip

# otter is imported where it is used: it takes about 2 s (pandas, nbconvert), which the tests that only collect this
# module (and `--help`) need not pay.
if TYPE_CHECKING:
    from otter.test_files import GradingResults

# Seconds a cell may run: long enough for the cells that train models (14, 16: a few minutes); a submission stuck in a
# loop is stopped.
TIMEOUT = 900
# One submission per core at once, each grading process kept for the next submission (benchmarks/bench_grading.py
# measures a class of 60).
JOBS = max(1, os.cpu_count() or 1)


def assignment_number(submissions: list[Path]) -> str:
    """NN of the assignment the submissions' metadata names ("posenc-NN"), if they name one and the same."""
    names = set()
    for path in submissions:
        try:
            names.add(nbformat.read(path, as_version=4).metadata.get("otter", {}).get("assignment_name"))
        except Exception:  # an unreadable submission is graded (and scored 0) below, not here
            continue
    names.discard(None)
    if len(names) != 1:
        raise SystemExit(f"the submissions name {sorted(names) or 'no'} assignment(s): say which with --notebook NN")
    return names.pop().removeprefix("posenc-")


def _warm_worker(timeout: float) -> None:
    """A grading process's start: otter imported once (about 6 CPU-seconds: pandas, nbconvert, jsonschema), and a cell
    that runs longer than `timeout` stopped (nbconvert's ExecutePreprocessor, which otter runs the notebook with, has
    no time limit of its own)."""
    import nbconvert.preprocessors
    import otter.run  # noqa: F401
    from traitlets import Integer

    seconds = int(timeout)  # (a class body does not see the function's `timeout` beside its own)

    class TimedExecutePreprocessor(nbconvert.preprocessors.ExecutePreprocessor):
        timeout = Integer(seconds, allow_none=True).tag(config=True)

    # otter imports ExecutePreprocessor from there each time it runs a notebook.
    nbconvert.preprocessors.ExecutePreprocessor = TimedExecutePreprocessor


def _grade_in_worker(submission: Path, autograder: Path, report: Path) -> bytes:
    """Grade `submission` with otter's own `otter run` (otter.run.main) in this worker, its output written to
    `report`; the results, pickled with dill as otter pickles them."""
    import dill
    import otter.run
    from otter.test_files import GradingResults

    with tempfile.TemporaryDirectory() as folder, report.open("w") as log, \
            contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
        try:
            results = otter.run.main(str(submission.resolve()), autograder=str(autograder.resolve()),
                                     output_dir=folder, no_logo=True)
        except Exception as error:  # no notebook of this assignment, a kernel that died, a cell past the time limit
            print(f"{type(error).__name__}: {error}")
            results = GradingResults.without_results(error)
    return dill.dumps(results)


def grade_one(results: GradingResults, submission: Path, report: Path) -> GradingResults:
    """`results` of grading `submission` as the report beside the CSV keeps them: what each test said and the errors
    that cost points (report), the notebook as it ran (report with .ipynb)."""
    errors: dict[str, list[str]] = {}
    if results.catastrophic_error is None:
        with report.open("a") as log:
            log.write(f"\n{results.summary()}\n")
            if results.notebook is not None:
                nbformat.write(results.notebook, report.with_suffix(".ipynb"))
                errors = errors_by_exercise(results.notebook, results)
                if errors:
                    log.write(f"\n{errors_report(errors)}\n")
    else:
        results = type(results).without_results(RuntimeError(_last_line(report)))
    results.file = submission.name
    results.errors = errors  # for the line printed per submission
    return results


def errors_by_exercise(notebook: nbformat.NotebookNode, results: GradingResults) -> dict[str, list[str]]:
    """For each exercise that lost points, the errors that may have cost them: "NameError: ... (its answer cell)".

    A cell belongs to an exercise when otter's metadata lists the exercise's tests (the answer cell and the checker
    cell, as tools/assignment.py writes them); an error in a cell of no exercise counts for every exercise after it.
    """
    errors: dict[str, list[str]] = {}
    earlier: list[str] = []  # errors in cells of no exercise so far
    for number, cell in enumerate(notebook.cells, start=1):
        raised = [f"{o.get('ename', 'Error')}: {o.get('evalue', '')}" for o in cell.get("outputs", [])
                  if o.get("output_type") == "error"]
        tests = cell.metadata.get("otter", {}).get("tests", [])
        if not tests:
            earlier += [f"{error} (cell {number}, before this exercise)" for error in raised]
            continue
        which = "answer cell" if "otter_answer_cell" in cell.metadata.get("tags", []) else "checker cell"
        for name in tests:
            if name not in errors:
                errors[name] = list(earlier)
            errors[name] += [f"{error} (its {which}, cell {number})" for error in raised]
    lost = {name for name, test in results.results.items() if test.score < test.possible}
    return {name: found for name, found in errors.items() if found and name in lost}


def errors_report(errors: dict[str, list[str]]) -> str:
    """The errors section of a submission's report: each exercise that lost points to a cell that raised."""
    lines = ["Errors: cells that raised, under each exercise that lost points (its score above may say only",
             "what the tests then found, such as 'Not attempted yet'):"]
    for name, found in errors.items():
        lines += [f"    {name}: {error}" for error in found]
    return "\n".join(lines)


def _last_line(report: Path) -> str:
    """The last line otter printed (the error that stopped it), for the CSV's grading_status."""
    lines = [line.strip() for line in report.read_text(errors="replace").splitlines() if line.strip()]
    return lines[-1] if lines else "otter run failed without a message"


def submissions_in(folder: Path) -> list[Path]:
    submissions = sorted(folder.glob("*.ipynb"))
    if not submissions:
        raise SystemExit(f"no .ipynb in {folder}")
    return submissions


def grade(folder: Path, assignment: Path, csv: Path | None = None, timeout: float = TIMEOUT, jobs: int = 1) -> Path:
    """Grade every notebook in `folder` with the zip in `assignment` (make assignment's folder) into one CSV."""
    from otter.grade.utils import POINTS_POSSIBLE_LABEL, SCORES_DICT_FILE_KEY, merge_scores_to_df

    submissions = submissions_in(folder)
    autograder = autograder_zip(assignment)
    csv = csv or assignment / "grades.csv"
    reports = csv.parent / "reports"
    reports.mkdir(parents=True, exist_ok=True)

    def graded(submission: Path, pickled: bytes) -> GradingResults:
        import dill

        result = grade_one(dill.loads(pickled), submission, reports / f"{submission.stem}.txt")
        errors = "".join(f"; {name}: {', '.join(found)}" for name, found in getattr(result, "errors", {}).items())
        print(f"{submission.name}: " + (f"0, not graded: {result.catastrophic_error}" if result.catastrophic_error
                                         else f"{result.total:g} / {result.possible:g}{errors}"), flush=True)
        return result

    # One grading process per job, each importing otter once: a submission costs its notebook's run and otter's
    # tests, not otter's start. The notebook runs in a kernel of its own, so nothing of one submission stays for
    # the next.
    with ProcessPoolExecutor(max_workers=jobs, initializer=_warm_worker, initargs=(timeout,)) as pool:
        futures = [pool.submit(_grade_in_worker, submission, autograder, reports / f"{submission.stem}.txt")
                   for submission in submissions]
        scores = merge_scores_to_df([graded(submission, future.result())
                                     for submission, future in zip(submissions, futures)])
    scores[scores[SCORES_DICT_FILE_KEY] != POINTS_POSSIBLE_LABEL].to_csv(csv, index=False)
    return csv


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("submissions", type=Path, help="a folder of submitted notebooks (.ipynb)")
    parser.add_argument("--notebook", help="the assignment's notebook number (default: the one the submissions name)")
    parser.add_argument("--csv", type=Path, help="where to write the scores (default build/assignments/NN/grades.csv)")
    parser.add_argument("--timeout", type=float, default=TIMEOUT, help=f"seconds a cell may run (default {TIMEOUT})")
    parser.add_argument("--jobs", type=int, default=JOBS, help=f"submissions graded at once (default {JOBS})")
    args = parser.parse_args(argv)
    number = args.notebook or assignment_number(submissions_in(args.submissions))
    csv = grade(args.submissions, BUILD / f"{int(number):02d}", args.csv, args.timeout, args.jobs)
    print(f"scores: {csv}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
