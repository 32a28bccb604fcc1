"""The stored outputs hold on other CPUs: nbval over every notebook under other kernel choices.

torch's matmul goes through MKL, which picks its kernels by the CPU it finds, and torch's
own kernels pick a vector width; a learner's laptop may get other ones than the machine
that stored the outputs. These variables make this machine choose as another CPU would
(`../shared/notes/tooling.md`). The default setting is the main nbval run of `make test`.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow

SETTINGS = {
    "oldest_cpu": {"MKL_ENABLE_INSTRUCTIONS": "SSE4_2", "ATEN_CPU_CAPABILITY": "default", "OMP_NUM_THREADS": "1"},
    "common_laptop": {"MKL_ENABLE_INSTRUCTIONS": "AVX2", "ATEN_CPU_CAPABILITY": "avx2"},
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Start every setting at once (each is mostly one single-threaded kernel), then collect them."""
    started = {}
    for name, variables in SETTINGS.items():
        log = tmp_path_factory.mktemp(name) / "nbval.log"
        command = [sys.executable, "-m", "pytest", "notebooks", "-q", "-p", "no:cacheprovider"]
        started[name] = (subprocess.Popen(command, cwd=ROOT, env={**os.environ, **variables}, stdout=log.open("w"),
                                          stderr=subprocess.STDOUT), log)
    results = {}
    for name, (process, log) in started.items():
        process.wait(timeout=600)
        results[name] = (process.returncode, log.read_text())
    return results


@pytest.mark.parametrize("setting", sorted(SETTINGS))
def test_nbval_passes_under(runs, setting):
    returncode, log = runs[setting]
    assert returncode == 0, f"{SETTINGS[setting]}:\n{log[-6000:]}"
    assert " passed" in log and "failed" not in log and "skipped" not in log
