"""Grading a class: 60 generated submissions of notebook 03, graded as `make grade` grades them.

Run with `.venv/bin/python benchmarks/bench_grading.py` (about ten minutes on 2 cores; `--class-size 8` for a quick
look). It builds notebook 03's assignment (tools/assignment.py), writes the class from the student notebook, five
kinds of submission in turn, and grades the folder with tools/grade.py on every core. Then the first four again, one
at a time, in the same process: the peer, so that the speed-up of grading in parallel is a ratio measured on the
same machine at the same time.

Kinds of submission, and what each must score (each exercise is worth 2 points):
- right: every solution; full points.
- wrong: a wrong value for every exercise; 0.
- untouched: the placeholders as handed out; 0.
- raising: the first exercise's cell raises; 0 for it, and the rest full (otter runs every cell), with the error
  named under the first exercise in the report.
- half: the first exercise right, the rest untouched.

Writes benchmarks/results/grading.json: the class size, seconds in all and per submission, the jobs, the peer's
seconds and the ratio, the machine's speed that day (the reference workload of make_test_time.py, before and after),
and every submission's score by kind, checked. No timestamps, no paths. Fails if the class takes more than 10 minutes.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
from make_test_time import reference_seconds  # noqa: E402

from tools import assignment, grade  # noqa: E402

OUTPUT = ROOT / "benchmarks" / "results" / "grading.json"
NOTEBOOK = "03"
KINDS = ("right", "wrong", "untouched", "raising", "half")
LIMIT_SECONDS = 600  # the ten minutes for a class of 60


def answers(kind: str, exercises, solutions: dict[str, str]) -> dict[str, str]:
    """What each exercise cell holds after its placeholder, for a submission of `kind`."""
    first = exercises[0].answer
    if kind == "right":
        return solutions
    if kind == "wrong":
        return {e.answer: f"{e.answer} = 'not this'" for e in exercises}
    if kind == "untouched":
        return {e.answer: "" for e in exercises}
    if kind == "raising":
        return {**solutions, first: "raise RuntimeError('a bug in the submission')"}
    return {e.answer: solutions[e.answer] if e.answer == first else "" for e in exercises}  # half


def expected_points(kind: str, exercises) -> list[float]:
    full = [float(assignment.POINTS)] * len(exercises)
    if kind == "right":
        return full
    if kind in ("wrong", "untouched"):
        return [0.0] * len(exercises)
    if kind == "raising":
        return [0.0, *full[1:]]
    return [full[0], *[0.0] * (len(exercises) - 1)]  # half


def submission(student: nbformat.NotebookNode, filled: dict[str, str]) -> nbformat.NotebookNode:
    notebook = nbformat.from_dict(nbformat.reads(nbformat.writes(student), as_version=4))
    for cell in notebook.cells:
        if "exercise" in cell.metadata.get("tags", []):
            extra = filled[assignment._answer_name(cell.source)]
            if extra:
                cell.source += "\n" + extra
    return notebook


def scores(csv_path: Path) -> dict[str, list[float]]:
    with csv_path.open() as f:
        rows = list(csv.DictReader(f))
    return {row["file"]: [float(value) for key, value in row.items() if key.startswith("exercise_")] for row in rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--class-size", type=int, default=60)
    parser.add_argument("--no-write", action="store_true", help="print the result, do not write grading.json")
    args = parser.parse_args()
    source = assignment.notebook_path(NOTEBOOK)
    teacher = nbformat.read(source, as_version=4)
    exercises = assignment.find_exercises(teacher, source.name)
    solutions = {e.answer: teacher.cells[e.solution].source for e in exercises}

    with tempfile.TemporaryDirectory(prefix="posenc-grading-") as folder:
        folder = Path(folder)
        built = assignment.build(NOTEBOOK, folder / "assignment", run_tests=False)
        [handout] = (built / "student").glob("*.ipynb")
        student = nbformat.read(handout, as_version=4)
        collected = folder / "collected"
        collected.mkdir()
        kinds = {}
        for k in range(args.class_size):
            kind = KINDS[k % len(KINDS)]
            name = f"student_{k:02d}_{kind}.ipynb"
            kinds[name] = kind
            nbformat.write(submission(student, answers(kind, exercises, solutions)), collected / name)

        before = reference_seconds()
        start = time.perf_counter()
        graded = grade.grade(collected, built, folder / "grades.csv", jobs=grade.JOBS)
        seconds = time.perf_counter() - start
        got = scores(graded)
        wrong = {name: (got.get(name), expected_points(kind, exercises)) for name, kind in kinds.items()
                 if got.get(name) != expected_points(kind, exercises)}
        raising = next(name for name, kind in kinds.items() if kind == "raising")
        report = (graded.parent / "reports" / raising.replace(".ipynb", ".txt")).read_text()
        named = f"{exercises[0].name}: RuntimeError: a bug in the submission" in report

        # The peer: the first four, one at a time.
        peer_folder = folder / "peer"
        peer_folder.mkdir()
        for name in sorted(kinds)[:4]:
            (peer_folder / name).write_bytes((collected / name).read_bytes())
        start = time.perf_counter()
        grade.grade(peer_folder, built, folder / "peer.csv", jobs=1)
        peer_seconds = time.perf_counter() - start
        parallel = folder / "parallel"
        parallel.mkdir()
        for name in sorted(kinds)[:4]:
            (parallel / name).write_bytes((collected / name).read_bytes())
        start = time.perf_counter()
        grade.grade(parallel, built, folder / "parallel.csv", jobs=grade.JOBS)
        parallel_seconds = time.perf_counter() - start
        after = reference_seconds()

    result = {
        "machine": {"python": platform.python_version(), "processor": platform.machine(), "cpus": os.cpu_count()},
        "notebook": NOTEBOOK, "class_size": args.class_size, "jobs": grade.JOBS,
        "seconds": round(seconds, 1), "seconds_per_submission": round(seconds / args.class_size, 2),
        "within_limit": seconds <= LIMIT_SECONDS * args.class_size / 60, "limit_seconds_for_60": LIMIT_SECONDS,
        "four_submissions": {"one_at_a_time_seconds": round(peer_seconds, 1),
                             "on_every_core_seconds": round(parallel_seconds, 1),
                             "speed_up": round(peer_seconds / parallel_seconds, 2)},
        "reference_seconds_before": round(before, 3), "reference_seconds_after": round(after, 3),
        "scores_as_expected": not wrong, "raising_error_named_in_report": named,
        "points_by_kind": {kind: expected_points(kind, exercises) for kind in KINDS},
    }
    print(json.dumps(result, indent=1))
    if wrong:
        raise SystemExit(f"scores not as expected: {wrong}")
    if not named:
        raise SystemExit("the raising submission's report does not name its error under the first exercise")
    if not args.no_write:
        OUTPUT.write_text(json.dumps(result, indent=2) + "\n")
    if not result["within_limit"]:
        raise SystemExit(f"{args.class_size} submissions took {seconds:.0f} s: more than the limit")


if __name__ == "__main__":
    main()
