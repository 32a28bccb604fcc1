"""The setup without make (docs/developing.md), run line by line exactly as it is written, in a fresh venv.

The copy of the repository is made from the files git tracks (what a clone has). The
lines are the guide's own; what the test needs beyond them (a port and token it knows,
no browser window, running as root in CI) goes into a Jupyter config folder of its own.
Then a kernel is opened for a notebook through the server those lines started, and
asked where it runs and whether it has posenc.

The lines install a learner's environment, requirements.lock, and nothing else: no test or development tool
(requirements-dev.lock is for `make check` and `make test`).

It is the longest test: pip unpacks a learner's lock (1.2 GB, torch most of it) into the fresh venv,
about 150 s of one core on this project's 2-core machines, a quarter of what `make test` may spend.
So it is a target of its own, `make test-setup` (which sets POSENC_README_SETUP=1), and CI runs it after
`make test` on every submission (.ci/run). Without it, `make test`
still checks the same lock (.venv is installed from it; test_environment.py holds every version to
it), the package's JupyterLab defaults (test_browser.py: no pop-up) and the install cell's text;
what only this test proves is that the guide's own lines, as written, do all of that.
"""

import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from lab_browser import _free_port
from tools import install_cell
from tools.sync_environment import DEV_LOCK, LEARNER_LOCK, locked_requirements

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    not os.environ.get("POSENC_README_SETUP"),
    reason="the setup without make in a fresh venv is `make test-setup` (POSENC_README_SETUP=1), which CI runs")]


GUIDE = ROOT / "docs" / "developing.md"


def setup_lines() -> list[str]:
    text = GUIDE.read_text()
    block = re.search(r"<!-- setup: linux and macos -->\n```bash\n(.*?)```", text, re.S)
    assert block, "docs/developing.md's Linux and macOS setup block is missing"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_the_setup_lines_set_up_a_working_suite(tmp_path):
    lines = setup_lines()
    assert lines[-1].startswith(".venv/bin/jupyter lab "), "the last line opens JupyterLab"
    *_, root_flag, start_file = lines[-1].split()
    assert start_file == "learner/notebooks/00_start_here.ipynb", "a learner starts in their own copy"
    # The server's root is the learner's folder, as `make lab` serves it (its notebooks hold their pictures; without
    # it, Jupyter serves only the opened notebook's own folder).
    assert root_flag == "--ServerApp.root_dir=learner", root_flag
    start_page = start_file.removeprefix("learner/")
    clone = tmp_path / "posenc"
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout.decode()
    tracked = tracked.split("\0")
    for name in filter(None, tracked):
        if (ROOT / name).is_file():
            (clone / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, clone / name)

    port, token = _free_port(), secrets.token_hex(16)
    config = tmp_path / "jupyter-config"
    config.mkdir()
    (config / "jupyter_server_config.json").write_text(json.dumps({"ServerApp": {
        "port": port, "port_retries": 0, "ip": "127.0.0.1", "open_browser": False, "allow_root": True},
        "IdentityProvider": {"token": token}}))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHONPATH", "JUPYTER"))}
    env.update(JUPYTER_CONFIG_DIR=str(config), JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
               JUPYTERLAB_SETTINGS_DIR=str(tmp_path / "lab-user-settings"), BROWSER="true",
               PATH=os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if ".venv" not in p),
               # Not compiling every installed module to bytecode (torch has thousands) saves half a minute
               # of CPU; Python compiles what the kernel imports when it imports it, and keeps the bytecode
               # for the next process (as on a learner's machine, where PYTHONDONTWRITEBYTECODE is not set).
               PIP_NO_COMPILE="1")
    env.pop("PYTHONDONTWRITEBYTECODE", None)

    for k, line in enumerate(lines[:-1]):
        result = subprocess.run(line, shell=True, cwd=clone, env=env, capture_output=True, text=True, timeout=900)
        assert result.returncode == 0, f"`{line}` failed:\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}"
        if k == 1:
            # Everything but posenc is installed, as on Colab: each notebook's first cell must install it.
            _the_install_cell_installs_posenc(clone, env, tmp_path)
    _installed_is_a_learners_lock(clone / ".venv" / "bin" / "python")

    log = (tmp_path / "lab.log").open("w")
    server = subprocess.Popen(lines[-1], shell=True, cwd=clone, env=env, stdout=log, stderr=subprocess.STDOUT,
                              start_new_session=True)
    try:
        url = f"http://127.0.0.1:{port}"
        _wait_for(lambda: _get(f"{url}/api/status?token={token}"), server, tmp_path / "lab.log")
        # JupyterLab's defaults from `pip install .` (no news pop-up) are in effect.
        notification = _get(f"{url}/lab/api/settings/@jupyterlab/apputils-extension:notification?token={token}")
        # (Package overrides change the schema's defaults; the user's own settings stay empty.)
        assert json.loads(notification)["schema"]["properties"]["fetchNews"]["default"] == "false"

        session = _post(f"{url}/api/sessions?token={token}", {
            "path": start_page, "type": "notebook", "kernel": {"name": "python3"}})
        connection = tmp_path / "runtime" / f"kernel-{session['kernel']['id']}.json"
        _wait_for(connection.is_file, server, tmp_path / "lab.log")
        printed = _run_in_kernel(
            connection, "import sys, posenc, torch\nprint(sys.prefix, posenc.__version__, torch.__version__)")
        prefix, version, torch_version = printed.split()
        assert Path(prefix).resolve() == (clone / ".venv").resolve()
        assert version == "0.1.0" and torch_version.startswith("2.13.0")
        # The notebook it opened is the learner's copy: no solutions.
        with_exercises = start_page.replace("00_start_here", "03_pe_formula")
        opened = json.loads(_get(f"{url}/api/contents/{with_exercises}?token={token}"))
        assert opened["content"]["cells"] and not [
            c for c in opened["content"]["cells"] if "solution" in c["metadata"].get("tags", [])]
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
        log.close()


def _the_install_cell_installs_posenc(clone: Path, env: dict, tmp_path: Path) -> None:
    from jupyter_client import write_connection_file

    python = clone / ".venv" / "bin" / "python"
    already = subprocess.run([python, "-c", "import posenc"], capture_output=True, env=env).returncode == 0
    assert not already, "posenc is there already"
    connection, _ = write_connection_file(str(tmp_path / "install-kernel.json"))
    log_path = tmp_path / "install-kernel.log"
    log = log_path.open("w")
    kernel = subprocess.Popen([python, "-m", "ipykernel_launcher", "-f", connection], cwd=clone / "notebooks",
                              env={**env, "POSENC_SOURCE": clone.as_uri()}, stdout=log, stderr=subprocess.STDOUT)
    try:
        notebook = json.loads((clone / "notebooks" / "01_padding_and_one_hot.ipynb").read_text())
        first = "".join(next(c["source"] for c in notebook["cells"] if c["cell_type"] == "code"))
        assert first == install_cell.source()
        try:
            _run_in_kernel(Path(connection), first)
            where = _run_in_kernel(Path(connection), "import posenc\nprint(posenc.__file__)")
        except RuntimeError as error:
            raise AssertionError(f"the kernel failed ({error}); its log:\n{log_path.read_text()[-3000:]}") from error
        assert where.startswith(str(clone / ".venv")), where
    finally:
        kernel.kill()
        kernel.wait(timeout=30)
        log.close()


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _installed_is_a_learners_lock(python: Path) -> None:
    listing = subprocess.run([python, "-c", "import importlib.metadata as m\nfor d in m.distributions(): "
                              "print(d.metadata['Name'], d.version)"], capture_output=True, text=True, check=True)
    installed = dict(line.split() for line in listing.stdout.splitlines())
    installed = {_canonical(name): version.removesuffix("+cpu") for name, version in installed.items()
                 if _canonical(name) not in ("pip", "posenc")}
    learner = dict(line.split("==") for line in locked_requirements(LEARNER_LOCK))
    assert installed == {_canonical(name): version for name, version in learner.items()}
    dev_only = {_canonical(line.split("==")[0]) for line in locked_requirements(DEV_LOCK)}
    assert not dev_only & installed.keys()


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.read().decode()


def _post(url: str, body: dict) -> dict:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


def _wait_for(condition, server, log: Path, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            if condition():
                return
        except OSError:
            pass
        if server.poll() is not None or time.monotonic() > deadline:
            raise AssertionError(f"JupyterLab did not come up:\n{log.read_text()[-3000:]}")
        time.sleep(0.3)


def _run_in_kernel(connection: Path, code: str) -> str:
    from jupyter_client import BlockingKernelClient

    client = BlockingKernelClient(connection_file=str(connection))
    client.load_connection_file()
    # A kernel that misses a heartbeat for a second counts as dead; on a machine busy with the other tests, it may.
    client.hb_channel.time_to_dead = 30.0
    client.start_channels()
    try:
        client.wait_for_ready(timeout=60)
        printed = []
        reply = client.execute_interactive(code, timeout=60, output_hook=lambda msg: printed.append(
            msg["content"].get("text", "") if msg["msg_type"] == "stream" else ""))
        assert reply["content"]["status"] == "ok", reply["content"]
        return "".join(printed).strip()
    finally:
        client.stop_channels()
