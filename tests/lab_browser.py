"""A real JupyterLab in headless Chromium, for the browser tests and the latency benchmark.

    with running_lab(tmp_dir) as lab, chromium() as browser:
        page = open_notebook(browser, lab, "08_explore.ipynb")
        run_all(page)

The server runs on a temporary copy of notebooks/ and images/ (autosave writes to
what it serves), on 127.0.0.1 with a generated token, with its settings, workspaces
and runtime files in that temporary folder too. The browser is the one
tests/find_browser.py finds (Playwright's own Chromium, or one on the PATH), driven by Playwright.
Every wait is on a condition, never a fixed sleep.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from find_browser import HINT
from find_browser import find as find_browser
from tools.run_notebooks import NOTEBOOK_INPUTS

ROOT = Path(__file__).resolve().parent.parent
# An output that JupyterLab rendered as a live widget (not as the text fallback).
WIDGET_OUTPUT = ".jp-OutputArea-output:has(> .jupyter-widgets)"
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-dev-shm-usage"]


@dataclass
class Lab:
    url: str
    token: str
    root: Path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _answers(server: subprocess.Popen, url: str, token: str, deadline: float, gave_up=lambda: False) -> bool:
    """Wait until the server answers (True), or exits or `gave_up()` (False); past the deadline, False too."""
    while server.poll() is None and not gave_up() and time.monotonic() < deadline:
        with contextlib.suppress(OSError, urllib.error.URLError):
            with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=5) as response:
                if response.status == 200:
                    return True
        time.sleep(0.2)
    return False


@contextlib.contextmanager
def running_lab(workdir: Path, *, timeout: float = 90):
    """Start JupyterLab on a copy of the suite in `workdir`; stop it on exit."""
    root = workdir / "suite"
    for folder in ("notebooks", *NOTEBOOK_INPUTS):
        shutil.copytree(ROOT / folder, root / folder, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    # No settings of our own here: the suite's JupyterLab defaults (no news pop-up) must come from
    # what `make` installs, tools/jupyterlab/posenc.json, as they do for a learner.
    (workdir / "lab-settings").mkdir()
    token = secrets.token_hex(16)
    env = {**os.environ, "JUPYTERLAB_SETTINGS_DIR": str(workdir / "lab-settings"),
           "JUPYTERLAB_WORKSPACES_DIR": str(workdir / "workspaces"), "JUPYTER_RUNTIME_DIR": str(workdir / "runtime")}
    log = open(workdir / "jupyterlab.log", "wb")
    deadline = time.monotonic() + timeout
    server = None
    try:
        # A port found free can be taken by another test worker before the server binds it: then try another.
        for _ in range(5):
            port = _free_port()
            command = [str(Path(sys.executable).parent / "jupyter"), "lab", "--no-browser", "--ip=127.0.0.1",
                       f"--port={port}", "--ServerApp.port_retries=0", f"--ServerApp.root_dir={root}",
                       f"--IdentityProvider.token={token}", "--LabApp.expose_app_in_browser=True"]
            if os.geteuid() == 0:
                command.append("--allow-root")
            server = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
            url = f"http://127.0.0.1:{port}"

            def port_taken(port=port) -> bool:
                return f"port {port} is not available" in (workdir / "jupyterlab.log").read_text()

            if _answers(server, url, token, deadline, port_taken):
                break
            if not port_taken():
                raise RuntimeError(f"JupyterLab did not start; its log:\n{(workdir / 'jupyterlab.log').read_text()[-3000:]}")
            _stop(server)  # it has said why it gives up, but may still be shutting down: the next try must not wait on it
        else:
            raise RuntimeError("JupyterLab found no free port in 5 tries")
        yield Lab(url=url, token=token, root=root)
    finally:
        if server is not None:
            _stop(server)
        log.close()


def _stop(server: subprocess.Popen) -> None:
    if server.poll() is None:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)


@contextlib.contextmanager
def chromium(workdir: Path):
    """Headless Chromium under Playwright, with a new empty profile."""
    from playwright.sync_api import sync_playwright

    executable = find_browser()
    if executable is None:
        raise RuntimeError(HINT)
    with sync_playwright() as playwright:
        try:
            browser = playwright.chromium.launch_persistent_context(
                str(workdir / "chromium-profile"), executable_path=str(executable), headless=True,
                args=CHROMIUM_FLAGS, viewport={"width": 1400, "height": 1000})
        except Exception as error:
            raise RuntimeError(f"Chromium could not start ({executable}): {error}") from error
        try:
            yield browser
        finally:
            browser.close()


def notifications_and_dialogs(page) -> list[str]:
    """The text of every pop-up notification (toast) and dialog showing now."""
    return page.evaluate("""() => Array.from(document.querySelectorAll('.Toastify__toast, .jp-Dialog'))
        .map(n => n.innerText.trim())""")


NOTEBOOK_READY_JS = """name => {
    const app = window.jupyterapp;
    const panel = app && app.shell.currentWidget;
    return panel && panel.context && panel.context.path.endsWith(name) && panel.content.widgets.length > 0
        && panel.sessionContext.session && panel.sessionContext.session.kernel
        && panel.sessionContext.session.kernel.connectionStatus === 'connected';
}"""


def open_notebook(browser, lab: Lab, name: str, *, timeout_ms: int = 90_000):
    """Open notebooks/<name> in JupyterLab; return the page once the notebook and its kernel are ready."""
    page = browser.new_page()
    page.goto(f"{lab.url}/lab/tree/notebooks/{name}?token={lab.token}")
    page.wait_for_function(NOTEBOOK_READY_JS, arg=name, timeout=timeout_ms)
    return page


# One JupyterLab page per browser, reused by `opened_notebook`: starting JupyterLab in a page is the
# slowest part of opening a notebook, and a learner opens one notebook after another in the same lab.
_pages: dict[int, object] = {}


@contextlib.contextmanager
def opened_notebook(browser, lab: Lab, name: str, *, fresh: bool = False, timeout_ms: int = 90_000):
    """The notebook open in JupyterLab with its kernel ready; on leaving, it is closed and its kernel shut down.

    Notebooks share one JupyterLab page; `fresh=True` opens a page of its own instead, as a
    learner who has just started the lab sees it, and closes it on leaving.
    """
    page = _pages.get(id(browser))
    if fresh or page is None or page.is_closed():
        page = open_notebook(browser, lab, name, timeout_ms=timeout_ms)
        if not fresh:
            _pages[id(browser)] = page
    else:
        page.evaluate("async path => { await window.jupyterapp.commands.execute('docmanager:open',"
                      " {path, factory: 'Notebook'}); }", f"notebooks/{name}")
        page.wait_for_function(NOTEBOOK_READY_JS, arg=name, timeout=timeout_ms)
    try:
        yield page
    finally:
        if fresh:
            page.close()
        else:
            try:
                # Closed without the "save changes?" dialog, its kernel shut down: the next notebook starts clean.
                page.evaluate("""async () => {
                    const panel = window.jupyterapp.shell.currentWidget;
                    await panel.sessionContext.shutdown();
                    panel.dispose();
                }""")
            except Exception:
                page.close()  # a page in a bad state is not reused
                _pages.pop(id(browser), None)


def run_all(page, *, timeout_ms: int = 120_000) -> None:
    """Run every cell and wait until each code cell has run and the kernel is idle."""
    page.evaluate("""async () => {
        const panel = window.jupyterapp.shell.currentWidget;
        await panel.sessionContext.ready;
        panel.content.model.sharedModel.transact(() => {
            for (const cell of panel.content.model.cells) {
                if (cell.type === 'code') { cell.executionCount = null; }
            }
        });
        await window.jupyterapp.commands.execute('notebook:run-all-cells');
    }""")
    page.wait_for_function(
        """() => {
            const panel = window.jupyterapp.shell.currentWidget;
            const cells = Array.from(panel.content.model.cells);
            const ran = cells.every(
                c => c.type !== 'code' || c.sharedModel.getSource().trim() === '' || c.executionCount !== null);
            const busy = Array.from(document.querySelectorAll('.jp-InputArea-prompt'))
                .some(p => p.textContent.includes('*'));
            return ran && !busy && panel.sessionContext.session.kernel.status === 'idle';
        }""", timeout=timeout_ms)


def error_outputs(page) -> list[str]:
    """`ename: evalue` of every error output in the open notebook."""
    return page.evaluate("""() => {
        const panel = window.jupyterapp.shell.currentWidget;
        const errors = [];
        for (const cell of panel.content.model.cells) {
            if (cell.type !== 'code') continue;
            for (const output of cell.outputs.toJSON()) {
                if (output.output_type === 'error') errors.push(`${output.ename}: ${output.evalue}`);
            }
        }
        return errors;
    }""")


def widget_outputs(page) -> dict[str, int]:
    """How many outputs hold a widget, and how many of them JupyterLab rendered as a live widget."""
    from posenc.explorers import NO_FRONT_END_HINT

    return page.evaluate("""([selector, hint]) => {
        const panel = window.jupyterapp.shell.currentWidget;
        let expected = 0;
        for (const cell of panel.content.model.cells) {
            if (cell.type !== 'code') continue;
            for (const output of cell.outputs.toJSON()) {
                if (output.data && output.data['application/vnd.jupyter.widget-view+json']) expected += 1;
            }
        }
        const rendered = panel.node.querySelectorAll(selector).length;
        const asText = Array.from(panel.node.querySelectorAll('.jp-OutputArea-output'))
            .filter(n => n.textContent.includes(hint)).length;
        return {expected, rendered, as_text: asText};
    }""", [WIDGET_OUTPUT, NO_FRONT_END_HINT])


def solution_folds(page) -> list[dict[str, bool]]:
    """For each cell tagged `solution` in the open notebook: is its input folded, its output folded, and is the
    exercise's placeholder, the code cell just before it, shown?"""
    return page.evaluate("""() => {
        const cells = window.jupyterapp.shell.currentWidget.content.widgets;
        const tags = cell => cell.model.getMetadata('tags') || [];
        const folds = [];
        cells.forEach((cell, k) => {
            if (!tags(cell).includes('solution')) return;
            let before = k - 1;
            while (before >= 0 && cells[before].model.type !== 'code') before -= 1;
            const placeholder = before >= 0 ? cells[before] : null;
            const shown = !!placeholder && tags(placeholder).includes('exercise') && !placeholder.inputHidden;
            folds.push({input_hidden: cell.inputHidden, output_hidden: cell.outputHidden, placeholder_shown: shown});
        });
        return folds;
    }""")


def kernel_run(page, code: str) -> str:
    """Run `code` in the open notebook's kernel, outside any cell; return what it printed (and any error)."""
    return page.evaluate("""async (code) => {
        const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
        const future = kernel.requestExecute({code, store_history: false});
        let out = '';
        future.onIOPub = msg => {
            if (msg.header.msg_type === 'stream') out += msg.content.text;
            if (msg.header.msg_type === 'error') out += `${msg.content.ename}: ${msg.content.evalue}`;
        };
        await future.done;
        return out;
    }""", code)


# Errors in a widget's callback happen while the kernel handles a comm message, not a cell: ipywidgets
# hands them to IPython's showtraceback (JupyterLab puts them in its log console), and a debounced
# redraw that fails in the event loop is logged by asyncio. This collects both, so a test sees every one.
COLLECT_KERNEL_ERRORS = """
import logging as _logging, sys as _sys, traceback as _traceback
_posenc_errors = []
class _Collect(_logging.Handler):
    def emit(self, record):
        _posenc_errors.append(self.format(record))
_logging.getLogger().addHandler(_Collect(level=_logging.ERROR))
_posenc_showtraceback = get_ipython().showtraceback
def _recording_showtraceback(*args, **kwargs):
    _posenc_errors.append("".join(_traceback.format_exception(*_sys.exc_info())))
    return _posenc_showtraceback(*args, **kwargs)
get_ipython().showtraceback = _recording_showtraceback
"""


def tracebacks_in_outputs(page) -> list[str]:
    """Every output area (cell or widget) whose visible text holds a traceback or an error line."""
    return page.evaluate("""() => Array.from(document.querySelectorAll('.jp-OutputArea-output'))
        .map(n => n.innerText).filter(t => /Traceback|Error:.*\\n.*line \\d+/.test(t))""")
