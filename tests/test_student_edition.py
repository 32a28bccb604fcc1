"""The learner's edition: solutions removed, every checker says "not attempted", and nbval passes on it."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def edition(tmp_path_factory):
    out = tmp_path_factory.mktemp("student")
    subprocess.run([sys.executable, str(ROOT / "tools" / "student_edition.py"), "--out", str(out)], check=True,
                   capture_output=True)
    return out


def WITH_EXERCISES(edition):  # noqa: N802 - the notebooks whose learner's edition differs (solutions removed)
    teacher = {p.name for p in (ROOT / "notebooks").glob("*.ipynb")
               if any("solution" in c["metadata"].get("tags", []) for c in json.loads(p.read_text())["cells"])}
    assert len(teacher) >= 6
    return sorted(p for p in (edition / "notebooks").glob("*.ipynb") if p.name in teacher)


def outputs(path):
    for cell in json.loads(path.read_text())["cells"]:
        for output in cell.get("outputs", []):
            yield "".join(output.get("text", "")) + "".join(output.get("data", {}).get("text/plain", ""))


def test_solutions_are_removed_and_checkers_report_not_attempted(edition):
    for path in WITH_EXERCISES(edition):
        notebook = json.loads(path.read_text())
        assert not [c for c in notebook["cells"] if "solution" in c["metadata"].get("tags", [])]
        feedback = [text for text in outputs(path) if "attempted" in text or "Correct" in text]
        assert feedback and all(text.startswith(("…", "Not attempted")) for text in feedback), (path.name, feedback)


def test_the_learner_edition_passes_nbval(edition):
    # The other notebooks are the teacher's edition unchanged, which the main nbval run checks.
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=", "--nbval", "--nbval-current-env",
         "--nbval-sanitize-with", str(ROOT / "tests" / "nbval_sanitize.cfg"), *map(str, WITH_EXERCISES(edition))],
        capture_output=True, text=True, cwd=edition)
    assert result.returncode == 0, result.stdout[-3000:]
    assert " passed" in result.stdout
