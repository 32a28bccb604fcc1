"""Grade a folder of submitted notebooks, on this machine, without Docker: `make grade SUBMISSIONS=folder`.

    python -m tools.grade collected/                 build/assignments/NN/grades.csv
    python -m tools.grade collected/ --notebook 03 --csv scores.csv --jobs 2

What `otter grade` does in Docker containers, done with `otter run` (otter's grading without containers, in this
environment) in a process of its own per submission, with a time limit: a cell that raises does not stop otter (it
runs every cell and scores what the tests then find), and a submission that hangs, kills its kernel or is no
notebook of this assignment scores 0 with the reason in its row, while the others are graded. The assignment is
the one the submissions' metadata names (`make assignment` writes it into the notebook), or --notebook.

One CSV, a row per submission, in `otter grade`'s columns (file, exercise_1, ..., total_points_earned,
percent_correct, grading_status), without its first row of points possible. Beside it, reports/ keeps for each
submission otter's output with what each test said (NAME.txt) and the notebook as it ran, errors included (NAME.ipynb).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

import nbformat
import psutil

from tools.assignment import BUILD, autograder_zip

# otter is imported where it is used: it takes about 2 s (pandas, nbconvert), which the tests that only collect this
# module (and `--help`) need not pay.
if TYPE_CHECKING:
    from otter.test_files import GradingResults

# Long enough for the notebooks that train models (14, 16: a few minutes); a submission stuck in a loop is stopped.
TIMEOUT = 900
# A submission's kernel keeps about one core busy (and torch's matrix products may take a second): half the cores.
JOBS = max(1, (os.cpu_count() or 2) // 2)


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


def grade_one(submission: Path, autograder: Path, report: Path, timeout: float = TIMEOUT) -> GradingResults:
    """Grade `submission` with `otter run` in a process of its own, its output written to `report`."""
    import dill
    from otter.test_files import GradingResults

    with tempfile.TemporaryDirectory() as folder, report.open("w") as log:
        # otter run writes results.pkl into its working folder (-p), results.json into -o.
        command = [sys.executable, "-m", "otter", "run", "--no-logo", "--pickle-results", "-a", str(autograder.resolve()),
                   "-o", folder, str(submission.resolve())]
        process = subprocess.Popen(command, cwd=folder, stdout=log, stderr=subprocess.STDOUT)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            # The kernel otter started, then otter, by their ids (jupyter_client starts a kernel in a session of its
            # own, so killing otter's process group would miss it).
            for kernel in _children(process.pid):
                with contextlib.suppress(psutil.NoSuchProcess):
                    kernel.kill()
            process.kill()
            process.wait()
            results = GradingResults.without_results(TimeoutError(f"stopped after {timeout:.0f} s"))
        else:
            pickled = Path(folder) / "results.pkl"
            if process.returncode == 0 and pickled.is_file():
                with pickled.open("rb") as f:
                    results = dill.load(f)
                # What each test said, and the notebook as it ran (each cell's output, errors included).
                log.write(f"\n{results.summary()}\n")
                if results.notebook is not None:
                    nbformat.write(results.notebook, report.with_suffix(".ipynb"))
            else:
                results = GradingResults.without_results(RuntimeError(_last_line(report)))
    results.file = submission.name
    return results


def _children(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:  # otter ended just as its time ran out
        return []


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

    def graded(submission: Path) -> GradingResults:
        result = grade_one(submission, autograder, reports / f"{submission.stem}.txt", timeout)
        print(f"{submission.name}: " + (f"0, not graded: {result.catastrophic_error}" if result.catastrophic_error
                                         else f"{result.total:g} / {result.possible:g}"), flush=True)
        return result

    # Threads only wait: each submission is graded in a process of its own.
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        scores = merge_scores_to_df(list(pool.map(graded, submissions)))
    scores[scores[SCORES_DICT_FILE_KEY] != POINTS_POSSIBLE_LABEL].to_csv(csv, index=False)
    return csv


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("submissions", type=Path, help="a folder of submitted notebooks (.ipynb)")
    parser.add_argument("--notebook", help="the assignment's notebook number (default: the one the submissions name)")
    parser.add_argument("--csv", type=Path, help="where to write the scores (default build/assignments/NN/grades.csv)")
    parser.add_argument("--timeout", type=float, default=TIMEOUT, help=f"seconds per submission (default {TIMEOUT})")
    parser.add_argument("--jobs", type=int, default=JOBS, help=f"submissions graded at once (default {JOBS})")
    args = parser.parse_args(argv)
    number = args.notebook or assignment_number(submissions_in(args.submissions))
    csv = grade(args.submissions, BUILD / f"{int(number):02d}", args.csv, args.timeout, args.jobs)
    print(f"scores: {csv}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
