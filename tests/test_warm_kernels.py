"""The tests' warm kernels (tools/warm_kernels.py) stand in for cold ones: the same CPU setting, a fresh namespace,
interrupts, and no kernel left behind when the launcher is killed."""

import os
import signal
import sys
import time
from pathlib import Path

import pytest
from jupyter_client.manager import KernelManager
from nbval.kernel import CURRENT_ENV_KERNEL_NAME, NbvalKernelspecManager

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import cpu_settings  # noqa: E402
import warm_kernels  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not warm_kernels.enabled(), reason="warm kernels are Linux only")]

# What a kernel reports about itself: the vector width torch's own kernels chose, MKL's variable, the folder,
# whether anything but IPython's own names is in the namespace, and sys.path.
REPORT = """import os, sys, torch
print(torch.backends.cpu.get_cpu_capability(), os.environ.get("MKL_ENABLE_INSTRUCTIONS"), os.getcwd(),
      sorted(k for k in globals() if not k.startswith("_") and k not in ("In", "Out", "get_ipython", "exit", "quit",
                                                                         "open", "os", "sys", "torch")),
      sys.path)"""


def started(km, variables, cwd):
    km.start_kernel(cwd=str(cwd), env={**os.environ, **variables}, stderr=open(os.devnull, "w"))
    kc = km.client()
    kc.start_channels()
    kc.wait_for_ready(timeout=60)
    return kc


def run(kc, code, timeout=60):
    printed = []
    reply = kc.execute_interactive(code, timeout=timeout, output_hook=lambda msg: printed.append(
        msg["content"].get("text", "") if msg["msg_type"] == "stream" else ""))
    return reply["content"], "".join(printed)


@pytest.mark.parametrize("setting", [None, *cpu_settings.SETTINGS])
def test_a_warm_kernel_reports_what_a_cold_one_does_under_each_setting(setting, tmp_path):
    variables = cpu_settings.SETTINGS[setting] if setting else {}
    reports = {}
    for kind, km in [("cold", KernelManager(kernel_name=CURRENT_ENV_KERNEL_NAME,
                                            kernel_spec_manager=NbvalKernelspecManager())),
                     ("warm", warm_kernels.zygote(variables).kernel_manager())]:
        kc = started(km, variables, tmp_path)
        try:
            reply, reports[kind] = run(kc, REPORT)
            assert reply["status"] == "ok", reply
        finally:
            kc.stop_channels()
            km.shutdown_kernel(now=True)
    assert reports["warm"] == reports["cold"]
    if setting == "oldest_cpu":
        assert reports["warm"].startswith("DEFAULT SSE4_2 "), reports["warm"]


def test_a_warm_kernel_is_interrupted_and_goes_when_its_launcher_is_killed(tmp_path):
    km = warm_kernels.zygote().kernel_manager()
    kc = started(km, {}, tmp_path)
    try:
        reply, printed = run(kc, "import os\nprint(os.getpid())")
        pid = int(printed)
        assert pid != km.provisioner.process.pid  # the kernel is the zygote's child, not the launcher
        kc.execute("import time\ntime.sleep(60)")
        time.sleep(1)
        km.interrupt_kernel()
        reply = kc.get_shell_msg(timeout=30)["content"]
        assert reply["status"] == "error" and reply["ename"] == "KeyboardInterrupt", reply
        # Killed as jupyter_client kills a kernel when told to stop now: the child must not stay.
        os.kill(km.provisioner.process.pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(pid), "the kernel outlived its launcher"
    finally:
        kc.stop_channels()
        km.cleanup_resources()


def test_a_child_refuses_variables_the_zygote_did_not_import_with(tmp_path):
    km = warm_kernels.zygote().kernel_manager()
    with pytest.raises(RuntimeError, match="died"):
        started(km, {"ATEN_CPU_CAPABILITY": "default"}, tmp_path)
    km.cleanup_resources()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A child the zygote has not reaped yet is a zombie: gone for our purpose.
    status = Path(f"/proc/{pid}/status")
    return status.is_file() and "zombie" not in status.read_text()
