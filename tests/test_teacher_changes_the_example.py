"""A teacher changes the running example, regenerates the walkthrough, and every test but the original's guards passes.

In a copy of the repository (the files git tracks, as a clone has them), `src/posenc/example.py` gets another sentence,
`d_model` and `max_sequence_length`. `make notebooks` re-executes 00-08 (docs/adapting.md). Then the whole test suite
runs in the copy, nbval included, except the tests marked `original_example`: those pin a number of the original
example and say so in their docstring, so a teacher who changes it knows they may go. What must hold again:
tests/test_prose_numbers.py (no sentence of the prose gives an old number) and tests/test_images.py (each picture of
00-07 is what its cell draws from the new values), and nbval on 08's explorer, which starts from the example.

It re-executes nine notebooks and runs the suite a second time, about 5 minutes of this project's 2-core machines,
so it is a target of its own, `make test-teacher` (POSENC_TEACHER_TEST=1), which CI runs after `make test`.
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    not os.environ.get("POSENC_TEACHER_TEST"),
    reason="the teacher's change of the running example is `make test-teacher` (POSENC_TEACHER_TEST=1), which CI runs")]

# Another sentence (seven tokens, two words the corpus did not have), a wider d_model and a longer table.
CHANGES = {"SENTENCE": '"The cat sat on my warm mat"', "D_MODEL": "8", "MAX_SEQUENCE_LENGTH": "12"}
COPY = ROOT / "build" / "teacher-example"
TOOL_CONFIGS = ("tools/jupyterlab/posenc.json", "tools/jupyterlab/jupyter_server_config.json",
                "tools/jupyterlab/ipython_kernel_config.json",
                "tools/web/package.json", "tools/web/package-lock.json")  # what the Makefile's install stamps depend on
# The walkthrough and its explorers: the notebooks that read the running example (docs/adapting.md).
WALKTHROUGH = sorted(path.name for path in (ROOT / "notebooks").glob("0[0-8]_*.ipynb"))


def copy_of_the_repository(target: Path) -> Path:
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout.decode()
    for name in filter(None, tracked.split("\0")):
        if (ROOT / name).is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, target / name)
    # What `make test` installed beside the files, shared rather than installed again: the environment (its make
    # stamps are then newer than every file they depend on, so no make in the copy installs into it) and the site's
    # JavaScript. The copy imports its own package: PYTHONPATH comes before the environment's editable install.
    (target / ".venv").symlink_to(Path(sys.executable).parent.parent)
    for name in ("requirements.lock", "requirements-dev.lock", "pyproject.toml", *TOOL_CONFIGS):
        os.utime(target / name, (0, 0))
    if (ROOT / "tools" / "web" / "node_modules").is_dir():
        (target / "tools" / "web" / "node_modules").symlink_to(ROOT / "tools" / "web" / "node_modules")
    return target


def change_the_example(clone: Path) -> None:
    path = clone / "src" / "posenc" / "example.py"
    text = path.read_text()
    for name, value in CHANGES.items():
        text, count = re.subn(rf"^{name} = .*$", f"{name} = {value}", text, flags=re.M)
        assert count == 1, f"example.py has no line `{name} = ...`"
    path.write_text(text)


def test_a_teacher_changes_the_running_example_and_the_walkthrough_follows():
    # In build/ (not a pytest temporary folder, which the copy's own pytest run would rotate away), kept for a look.
    shutil.rmtree(COPY, ignore_errors=True)
    clone = copy_of_the_repository(COPY)
    change_the_example(clone)
    # Jupyter's paths and pytest's settings are the copy's own.
    env = {key: value for key, value in os.environ.items() if not key.startswith(("JUPYTER", "PYTEST", "POSENC"))}
    env["PYTHONPATH"] = str(clone / "src")
    notebooks = " ".join(f"notebooks/{name}" for name in WALKTHROUGH)
    made = subprocess.run(["make", "notebooks", f"NOTEBOOK={notebooks}"], cwd=clone, env=env,
                          capture_output=True, text=True)
    assert made.returncode == 0, made.stdout[-3000:] + made.stderr[-3000:]
    assert "The cat sat on my warm mat" in (clone / "notebooks" / "01_padding_and_one_hot.ipynb").read_text()

    workers = str((os.cpu_count() or 1) + 1)
    tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", workers, "-p", "no:cacheprovider",
                            "-m", "not original_example"], cwd=clone, env=env, capture_output=True, text=True)
    assert tests.returncode == 0, "tests that fail after the change:\n" + tests.stdout[-6000:]
    # The stale-prose check and the pictures ran among them, on the new example.
    assert re.search(r"\d+ passed", tests.stdout), tests.stdout[-2000:]
