"""The learner's edition: solutions removed, every checker says "not attempted", and nbval passes on it."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

import background

ROOT = Path(__file__).resolve().parent.parent


def with_exercises(edition: Path) -> list[Path]:
    """The notebooks whose learner's edition differs from the teacher's (solutions removed)."""
    teacher = {p.name for p in (ROOT / "notebooks").glob("*.ipynb")
               if any("solution" in c["metadata"].get("tags", []) for c in json.loads(p.read_text())["cells"])}
    assert len(teacher) >= 6
    return sorted(p for p in (edition / "notebooks").glob("*.ipynb") if p.name in teacher)


@background.job("student_edition")
def build_and_check(edition: Path) -> tuple[Path, subprocess.CompletedProcess]:
    """`make student`'s script into `edition`, then nbval on the notebooks that differ from the teacher's."""
    build = subprocess.run([sys.executable, str(ROOT / "tools" / "student_edition.py"), "--out", str(edition)],
                           capture_output=True, text=True)
    assert build.returncode == 0, f"make student failed:\n{build.stdout[-2000:]}\n{build.stderr[-3000:]}"
    # The other notebooks are the teacher's edition unchanged, which the main nbval run checks.
    nbval = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=", "--nbval", "--nbval-current-env",
         "--nbval-sanitize-with", str(ROOT / "tests" / "nbval_sanitize.cfg"), *map(str, with_exercises(edition))],
        capture_output=True, text=True, cwd=edition)
    return edition, nbval


def outputs(path):
    for cell in json.loads(path.read_text())["cells"]:
        for output in cell.get("outputs", []):
            yield "".join(output.get("text", "")) + "".join(output.get("data", {}).get("text/plain", ""))


@pytest.mark.background("student_edition")
def test_solutions_are_removed_and_checkers_report_not_attempted():
    edition, _ = background.result("student_edition")
    for path in with_exercises(edition):
        notebook = json.loads(path.read_text())
        assert not [c for c in notebook["cells"] if "solution" in c["metadata"].get("tags", [])]
        texts = list(outputs(path))
        feedback = [text for text in texts if ("attempted" in text or "Correct" in text) and not text.startswith("Your progress")]
        assert feedback and all(text.startswith(("…", "Not attempted")) for text in feedback), (path.name, feedback)
        # The progress summary at the end lists every exercise as not attempted.
        summary = texts[-1]
        assert summary.startswith("Your progress") and ", 0 done, 0 wrong, " in summary, (path.name, summary)
        assert summary.splitlines()[0].endswith(f"{len(feedback)} not attempted"), (path.name, summary)


@pytest.mark.background("student_edition")
def test_the_learner_edition_passes_nbval():
    _, nbval = background.result("student_edition")
    assert nbval.returncode == 0, nbval.stdout[-3000:]
    assert " passed" in nbval.stdout
