"""The other CPUs under which every notebook's stored outputs must hold, and an nbval run under one of them.

torch's matmul goes through MKL, which picks its kernels by the CPU it finds, and torch's own
kernels pick a vector width; a learner's laptop may get other ones than the machine that
stored the outputs. These variables make this machine choose as another CPU would
(shared/notes/tooling.md, "Stored outputs on another CPU"). The machine's own setting is
nbval's usual run; the repository's conftest.py collects every notebook once more under each
setting here, as `notebooks/NN_name.ipynb::<setting>::Cell k`: the same strict nbval, in a
kernel started with the setting's variables.
"""

from __future__ import annotations

import os

import pytest
from jupyter_client.manager import KernelManager
from nbval.kernel import CURRENT_ENV_KERNEL_NAME, NbvalKernelspecManager, RunningKernel
from nbval.plugin import IPyNbFile

import warm_kernels  # tools/, on sys.path from conftest.py

SETTINGS: dict[str, dict[str, str]] = {
    "oldest_cpu": {"MKL_ENABLE_INSTRUCTIONS": "SSE4_2", "ATEN_CPU_CAPABILITY": "default", "OMP_NUM_THREADS": "1"},
    "common_laptop": {"MKL_ENABLE_INSTRUCTIONS": "AVX2", "ATEN_CPU_CAPABILITY": "avx2"},
}


class KernelUnder(RunningKernel):
    """nbval's kernel, started with the variables of one setting (None: this machine's own) added to this
    process's environment; forked from a warm process where it can be (tools/warm_kernels.py).

    conftest.py makes it nbval's own kernel too, for the runs under this machine's setting.
    """

    def __init__(self, kernel_name: str, *, setting: str | None = None, cwd: str | None = None,
                 startup_timeout: float = 60):
        # nbval's start_new_kernel, with `env` (the variables must be there when the kernel starts, since MKL and
        # torch read them once, at import) and the warm kernels' manager.
        variables = SETTINGS[setting] if setting else {}
        warm = warm_kernels.zygote(variables)
        km = warm.kernel_manager() if warm else KernelManager(kernel_name=kernel_name,
                                                              kernel_spec_manager=NbvalKernelspecManager())
        km.start_kernel(stderr=open(os.devnull, "w"), cwd=cwd, env={**os.environ, **variables})
        kc = km.client()
        kc.start_channels()
        try:
            kc.wait_for_ready(timeout=startup_timeout)
        except RuntimeError:
            kc.stop_channels()
            km.shutdown_kernel()
            raise
        self.km, self.kc = km, kc
        self._ensure_iopub_up()


class NotebookUnder(IPyNbFile):
    """One notebook under one setting: nbval's collector, whose kernel starts under that setting."""

    def __init__(self, *args, setting: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.setting = setting

    def setup(self):
        option = self.config.option
        # The kernel nbval itself would choose (pyproject.toml passes --nbval-current-env).
        if option.nbval_current_env:
            kernel_name = CURRENT_ENV_KERNEL_NAME
        else:
            kernel_name = option.nbval_kernel_name or self.nb.metadata.get("kernelspec", {}).get("name", "python")
        self.kernel = KernelUnder(kernel_name, setting=self.setting, cwd=str(self.path.parent),
                                  startup_timeout=option.nbval_kernel_startup_timeout)
        self.setup_sanitize_files()


class UnderOtherCPUs(pytest.File):
    """The notebook once under each setting of SETTINGS."""

    def collect(self):
        for setting in SETTINGS:
            yield NotebookUnder.from_parent(self, path=self.path, name=setting, nodeid=self.id.child(setting),
                                            setting=setting)
