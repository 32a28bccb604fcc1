"""The pinned environment: the two locks, environment.yml, what is installed, `make lab` and `make teach`."""

import importlib.metadata
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
import tomllib
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tools.sync_environment import DEV_LOCK, LEARNER_LOCK, environment_yml, locked_requirements

ROOT = Path(__file__).resolve().parent.parent
# What a learner never needs: the tests, the linter, the browser driver, the installer, the benchmarks' peers, the
# teacher's grading.
TEST_AND_DEV_TOOLS = {"pytest", "pytest-xdist", "nbval", "hypothesis", "ruff", "playwright", "uv",
                      "positional-encodings", "rotary-embedding-torch", "coverage", "otter-grader"}


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(lock) -> dict[str, str]:
    return {canonical(line.split("==")[0]): line.split("==")[1] for line in locked_requirements(lock)}


def requirement_name(requirement: str) -> str:
    return canonical(re.match(r"[A-Za-z0-9_.\-]+", requirement).group(0))


def exact_pins(requirements: list[str]) -> dict[str, str]:
    found = (re.fullmatch(r"([A-Za-z0-9_.\-]+)==([A-Za-z0-9_.+\-]+)", r.split("#")[0].strip()) for r in requirements)
    return {canonical(m.group(1)): m.group(2) for m in found if m}


PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


@pytest.mark.parametrize("lock", [LEARNER_LOCK, DEV_LOCK], ids=["learner", "dev"])
def test_each_lock_pins_every_package_exactly(lock):
    requirements = locked_requirements(lock)
    assert len(requirements) > 10
    for line in requirements:
        assert re.fullmatch(r"[A-Za-z0-9_.\-]+==[A-Za-z0-9_.+\-]+", line), line
    assert not [line for line in requirements if line.startswith(("nvidia-", "triton=="))], "a CUDA build was resolved"


def test_torch_is_in_the_learners_lock_without_the_cpu_label():
    # No "+cpu" label: macOS and Windows wheels have none. The CPU build is chosen by the index (see Makefile).
    assert "torch==2.13.0" in locked_requirements(LEARNER_LOCK)
    assert "torch" not in pins(DEV_LOCK)


def test_a_learners_lock_has_no_test_or_development_tools_and_the_dev_lock_has_them_all():
    learner, dev = pins(LEARNER_LOCK), pins(DEV_LOCK)
    assert TEST_AND_DEV_TOOLS.isdisjoint(learner), sorted(TEST_AND_DEV_TOOLS & learner.keys())
    assert TEST_AND_DEV_TOOLS <= dev.keys(), sorted(TEST_AND_DEV_TOOLS - dev.keys())


def test_the_dev_lock_lists_only_what_it_adds_to_the_learners():
    # `make test` installs both: a package in both would be installed twice, perhaps at two versions.
    assert pins(LEARNER_LOCK).keys().isdisjoint(pins(DEV_LOCK)), sorted(pins(LEARNER_LOCK).keys() & pins(DEV_LOCK).keys())


def test_the_locks_hold_what_pyproject_and_the_requirements_ask_for():
    # The package's dependencies and what its notebooks import (the install cell's `posenc[notebooks]`) are in a
    # learner's lock; the `dev` extra is in the union; every exact pin asked for is the locked version.
    learner, dev = pins(LEARNER_LOCK), pins(DEV_LOCK)
    extras = PROJECT["optional-dependencies"]
    for requirement in PROJECT["dependencies"] + extras["notebooks"]:
        assert requirement_name(requirement) in learner, requirement
    for requirement in extras["dev"]:
        assert requirement_name(requirement) in learner.keys() | dev.keys(), requirement
    learner_in = (ROOT / "requirements.in").read_text().splitlines()
    dev_in = (ROOT / "requirements-dev.in").read_text().splitlines()
    assert ".[notebooks]" in learner_in and "-c requirements.lock" in dev_in
    asked = exact_pins(PROJECT["dependencies"] + extras["notebooks"] + extras["dev"] + learner_in + dev_in)
    assert asked["otter-grader"] == "7.0.0"  # the grading tools' one pin outside the `dev` extra
    assert asked and {name: {**learner, **dev}.get(name) for name in asked} == asked


def test_environment_yml_mirrors_the_lock():
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    expected = environment_yml(locked_requirements(), python)
    assert (ROOT / "environment.yml").read_text() == expected, "run `make lock` to regenerate environment.yml"


def test_installed_versions_are_the_locked_ones():
    # This environment is a developer's (`make check`, `make test`): both locks.
    for line in locked_requirements(LEARNER_LOCK) + locked_requirements(DEV_LOCK):
        name, version = line.split("==")
        installed = importlib.metadata.version(name)
        # torch==2.13.0 admits the CPU build 2.13.0+cpu, which is what is installed here.
        assert installed == version or (name == "torch" and installed == f"{version}+cpu"), name


def test_no_cuda_packages_are_installed():
    names = [dist.metadata["Name"].lower() for dist in importlib.metadata.distributions()]
    cuda = [n for n in names if n.startswith(("nvidia-", "triton", "cuda"))]
    assert cuda == []


STUB = """#!/bin/sh
echo "$(basename "$0") $*" >> "{log}"
# pip --target DIR puts a package's commands in DIR/bin (here: uv, for a learner's setup).
previous=
for arg in "$@"; do
    if [ "$previous" = "--target" ]; then mkdir -p "$arg/bin" && cp "$(dirname "$0")/uv" "$arg/bin/uv"; fi
    previous=$arg
done
{body}
"""


def _stubbed_checkout(tmp_path: Path, uv_reaches_pypi: bool = True) -> Path:
    """The Makefile and the locks, with stand-ins for the venv's pip, uv and python that only write down how they
    were called (uv fails, if asked, as it does where PyPI cannot be reached)."""
    for name in ("Makefile", "requirements.lock", "requirements-dev.lock", "pyproject.toml"):
        (tmp_path / name).write_text((ROOT / name).read_text())
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "jupyterlab").symlink_to(ROOT / "tools" / "jupyterlab")
    bin_ = tmp_path / ".venv" / "bin"
    bin_.mkdir(parents=True)
    for name, body in [("pip", ""), ("python", ""), ("uv", "" if uv_reaches_pypi else "exit 2")]:
        (bin_ / name).write_text(STUB.format(log=tmp_path / "calls.log", body=body))
        (bin_ / name).chmod(0o755)
    return tmp_path


def _make(checkout: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["make", "--no-print-directory", *args], cwd=checkout, capture_output=True, text=True,
                          timeout=60, env={**os.environ, "PYTHON": sys.executable})


@pytest.mark.parametrize("uv_reaches_pypi", [True, False])
def test_make_installs_each_lock_with_uv_and_torch_with_pip_or_all_with_pip_when_uv_fails(tmp_path, uv_reaches_pypi):
    # The Makefile's install recipes, run for real on stand-ins: first a learner's environment (`make lab`), then
    # what the tests add (`make check`, `make test`).
    checkout = _stubbed_checkout(tmp_path, uv_reaches_pypi)
    done = _make(checkout, ".venv/.installed")
    assert done.returncode == 0, done.stdout + done.stderr
    calls = (tmp_path / "calls.log").read_text().splitlines()
    learner = locked_requirements(LEARNER_LOCK)
    uv_pin = next(line for line in locked_requirements(DEV_LOCK) if line.startswith("uv=="))
    without_torch = (tmp_path / ".venv" / "requirements-without-torch.txt").read_text().splitlines()
    assert [line for line in without_torch if line and not line.startswith("#")] == \
        [line for line in learner if not line.startswith("torch==")]
    # uv goes into a folder of its own, removed afterwards: a learner's environment does not get it.
    expected = [f"pip install --quiet --no-compile --target .venv/setup-uv {uv_pin}",
                "uv pip install --quiet --python .venv/bin/python --no-deps -r .venv/requirements-without-torch.txt"]
    if not uv_reaches_pypi:
        expected.append("pip install --quiet --no-compile -r .venv/requirements-without-torch.txt")
        assert "pip installs it instead" in done.stdout
    assert calls[:len(expected)] == expected
    torch, editable = calls[len(expected):]
    assert torch.startswith("pip install --quiet --no-compile torch==2.13.0")
    assert editable == "pip install --quiet --no-deps --no-build-isolation -e ."
    assert (tmp_path / ".venv" / ".installed").is_file()
    assert not (tmp_path / ".venv" / "setup-uv").exists()

    done = _make(checkout, ".venv/.installed-dev")
    assert done.returncode == 0, done.stdout + done.stderr
    dev_calls = (tmp_path / "calls.log").read_text().splitlines()[len(calls):]
    expected = [f"pip install --quiet --no-compile {uv_pin}",
                "uv pip install --quiet --python .venv/bin/python --no-deps -r requirements-dev.lock"]
    if not uv_reaches_pypi:
        expected.append("pip install --quiet --no-compile -r requirements-dev.lock")
    assert dev_calls == expected
    assert (tmp_path / ".venv" / ".installed-dev").is_file()


@pytest.mark.parametrize("target", ["lab", "teach", "notebooks", "student", "images", "check", "fuzz", "test"])
def test_make_lab_installs_a_learners_lock_only_and_the_tests_install_both(tmp_path, target):
    # What each target would run (make -n) on a fresh checkout: the dev lock only for the tests and tools.
    checkout = _stubbed_checkout(tmp_path)
    (checkout / "tools" / "web").mkdir()
    for name in ("package.json", "package-lock.json"):
        (checkout / "tools" / "web" / name).write_text("{}")
    done = _make(checkout, "-n", target)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "-r .venv/requirements-without-torch.txt" in done.stdout
    installs_dev = "-r requirements-dev.lock" in done.stdout
    assert installs_dev == (target in {"check", "fuzz", "test"}), done.stdout


def test_ci_runs_make_test_then_the_oldest_cpu_then_the_setup_without_make_then_the_teachers_change():
    script = (ROOT / ".ci" / "run").read_text()
    commands = [line for line in script.splitlines()
                if line.strip() and not line.startswith("#") and not line.startswith(("set ", "cd "))]
    assert commands == ["make test", "make test-oldest-cpu", "make test-setup", "make test-teacher"]


def test_readme_starts_with_the_two_commands():
    first_screen = (ROOT / "README.md").read_text().splitlines()[:30]
    text = "\n".join(first_screen)
    assert "make lab" in text and "make test" in text


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def _solution_cells(url: str) -> int:
    with urllib.request.urlopen(url, timeout=30) as response:
        cells = json.loads(response.read())["content"]["cells"]
    return sum("solution" in cell["metadata"].get("tags", []) for cell in cells)


@pytest.mark.slow
@pytest.mark.parametrize("target", ["lab", "teach"])
def test_make_lab_and_make_teach_serve_on_localhost_and_require_the_token(tmp_path, target):
    port, token = _free_port(), secrets.token_hex(16)
    extra = f"--no-browser --port={port} --IdentityProvider.token={token} --ServerApp.port_retries=0"
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(tmp_path)}
    # `make lab` writes the learner's copy; here into this test's folder, not the repository's learner/.
    server = subprocess.Popen(
        ["make", "-s", target, f"LAB_EXTRA={extra}", f"LEARNER={tmp_path / 'learner'}"], cwd=ROOT, env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 90
        while True:
            try:
                if _status(f"{base}/api/status?token={token}") == 200:
                    break
            except OSError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"JupyterLab did not start: {server.stderr.read().decode()[-2000:]}")
            time.sleep(0.25)
        assert _status(f"{base}/api/status") == 403
        assert _status(f"{base}/api/contents/notebooks?token=wrong") == 403
        assert _status(f"{base}/api/contents/notebooks?token={token}") == 200
        # Bound to loopback only: the machine's other addresses do not answer.
        with socket.socket() as s:
            s.settimeout(2)
            other = socket.gethostbyname(socket.gethostname())
            if not other.startswith("127."):
                assert s.connect_ex((other, port)) != 0
        # What opens: the learner's own copy, solutions removed, or the teacher's edition with them.
        solutions = _solution_cells(f"{base}/api/contents/notebooks/03_pe_formula.ipynb?token={token}")
        assert (solutions == 0) if target == "lab" else (solutions >= 2), solutions
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)


def test_live_slides_come_from_the_static_decks_not_rise():
    # jupyterlab-rise showed no widgets (its shared modules clash with the widget manager) and saved the notebook it
    # opened: teachers present from `make slides`, whose explorers are live. Nothing installs or advertises RISE.
    for name in ["requirements.in", "requirements.lock", "requirements-dev.lock", "environment.yml", "README.md",
                 "docs/teaching.md", "docs/developing.md", "docs/testing.md"]:
        path = ROOT / name
        if path.exists():
            assert "jupyterlab-rise" not in path.read_text().lower() and "RISE" not in path.read_text(), name


def test_environment_yml_installs_cpu_torch_and_the_package():
    text = (ROOT / "environment.yml").read_text()
    assert "torch==2.13.0\n" in text and "--extra-index-url https://download.pytorch.org/whl/cpu" in text
    assert text.rstrip().endswith("      - .")
    assert "nvidia" not in text


def test_the_readme_route_without_make_asks_pytorchs_index_for_torch_alone():
    # Where download.pytorch.org cannot be reached, pip retries an extra index five times for every package of a
    # lock (18 warnings in 25 s, then it gives up): the setup without make (docs/developing.md) offers that index
    # only for one torch install, as the fix for a large download, never as a default step beside the lock. The
    # README, which sends readers there, offers it nowhere else.
    for name in ["README.md", "docs/developing.md"]:
        assert "--extra-index-url" not in (ROOT / name).read_text(), name
    text = (ROOT / "docs" / "developing.md").read_text()
    torch_lines = [line for line in text.splitlines() if "download.pytorch.org" in line]
    assert torch_lines and all("torch==2.13.0 --index-url" in line for line in torch_lines)
    readme_torch_lines = [line for line in (ROOT / "README.md").read_text().splitlines()
                          if "download.pytorch.org" in line]
    assert all("torch==2.13.0 --index-url" in line for line in readme_torch_lines)


def test_binder_writes_the_learners_copy_that_the_readme_badge_opens(tmp_path):
    # repo2docker runs postBuild after environment.yml; it must write the same copy as `make lab`, where the badge looks.
    post_build = ROOT / "postBuild"
    assert os.access(post_build, os.X_OK), "repo2docker runs postBuild only if it is executable"
    command = "-m tools.student_edition --lab --out learner"
    assert command in post_build.read_text()
    assert "-m tools.student_edition --lab --out $(LEARNER)" in (ROOT / "Makefile").read_text()
    assert re.search(r"^LEARNER \?= learner$", (ROOT / "Makefile").read_text(), re.M)
    assert "HEAD?urlpath=lab/tree/learner/notebooks/00_start_here.ipynb" in (ROOT / "README.md").read_text()
    # Run it for real, from a folder of its own: tools/ finds the suite's notebooks through its own path.
    (tmp_path / "tools").symlink_to(ROOT / "tools")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    subprocess.run(["bash", str(post_build)], cwd=tmp_path, env=env, check=True, capture_output=True, timeout=300)
    start = json.loads((tmp_path / "learner" / "notebooks" / "00_start_here.ipynb").read_text())
    assert start["cells"]
    for path in (tmp_path / "learner" / "notebooks").glob("*.ipynb"):
        cells = json.loads(path.read_text())["cells"]
        assert not [c for c in cells if "solution" in c["metadata"].get("tags", [])], path.name
