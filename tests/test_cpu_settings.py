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

import background

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow

SETTINGS = {
    "oldest_cpu": {"MKL_ENABLE_INSTRUCTIONS": "SSE4_2", "ATEN_CPU_CAPABILITY": "default", "OMP_NUM_THREADS": "1"},
    "common_laptop": {"MKL_ENABLE_INSTRUCTIONS": "AVX2", "ATEN_CPU_CAPABILITY": "avx2"},
}


@background.job("cpu_settings")
def run_nbval_under_each_setting(folder: Path) -> dict[str, tuple[int, str]]:
    """nbval over every notebook under each setting, one after the other (each is mostly one single-threaded kernel)."""
    results = {}
    for name, variables in SETTINGS.items():
        log = folder / f"{name}.log"
        command = [sys.executable, "-m", "pytest", "notebooks", "-q", "-p", "no:cacheprovider"]
        with log.open("w") as out:
            process = subprocess.run(command, cwd=ROOT, env={**os.environ, **variables}, stdout=out,
                                     stderr=subprocess.STDOUT, timeout=600)
        results[name] = (process.returncode, log.read_text())
    return results


@pytest.mark.background("cpu_settings")
@pytest.mark.parametrize("setting", sorted(SETTINGS))
def test_nbval_passes_under(setting):
    returncode, log = background.result("cpu_settings")[setting]
    assert returncode == 0, f"{SETTINGS[setting]}:\n{log[-6000:]}"
    assert " passed" in log and "failed" not in log and "skipped" not in log
