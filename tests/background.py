"""Slow checks that mostly wait on other processes, started when the session starts and run beside the rest.

On this project's 2-core machines the unit tests, nbval and the browser tests keep about one
core busy. The README's setup in a fresh venv, the learner's edition and the nbval runs under
other CPU settings are processes of their own: a test marked `@pytest.mark.background("name")`
has its job (registered here with `@job("name")`) started by conftest.py as soon as the tests
are collected, and then waits for the job's result, which re-raises the job's failure. The jobs
run one at a time, in the order their tests were collected, so together they take one core.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

JOBS: dict[str, Callable[[Path], object]] = {}
_futures: dict[str, Future] = {}
_folders: list[Path] = []
_executor: ThreadPoolExecutor | None = None
# The slowest job takes about two minutes; waiting in line behind the others, a little more.
TIMEOUT = 1200


def job(name: str) -> Callable:
    """Register `function(folder) -> result` as the job `name`; `folder` is an empty temporary folder of its own."""
    def register(function: Callable[[Path], object]) -> Callable[[Path], object]:
        JOBS[name] = function
        return function
    return register


def start(names: list[str]) -> None:
    """Queue the jobs `names`, in that order, on one background thread."""
    global _executor
    if _executor is None:
        _executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="posenc-background")
    for name in names:
        if name not in _futures:
            folder = Path(tempfile.mkdtemp(prefix=f"posenc-{name}-"))
            _folders.append(folder)
            _futures[name] = _executor.submit(JOBS[name], folder)


def result(name: str) -> object:
    """The job's result, once it has finished; its exception (an assertion, a timeout) if it failed."""
    start([name])  # a job no collected test asked for (a test called directly) starts now
    return _futures[name].result(timeout=TIMEOUT)


def stop() -> None:
    """Drop the jobs not started yet, wait for the running one, remove the folders."""
    if _executor is not None:
        _executor.shutdown(wait=True, cancel_futures=True)
    for folder in _folders:
        shutil.rmtree(folder, ignore_errors=True)
