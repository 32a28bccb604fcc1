"""Kernels forked from a warm process, so that the tests' many notebook runs do not each pay a kernel's start.

The tests run each notebook in a fresh kernel several times (nbval under three CPU settings, the learner's
edition, the byte-for-byte check). A kernel started the usual way (`python -m ipykernel_launcher`) spends
seconds of CPU before its first cell, most of them importing torch, matplotlib and ipykernel; over the
suite's runs that was a third of `make test` on this project's 2-core machines.

Here a *zygote* process imports those once and then forks one child per kernel. Each child is a new process
that starts IPython's kernel exactly as `ipykernel_launcher` does (a fresh, empty namespace; its own
connection file, working folder and environment); only the imports are done already. Nothing but imports
has run in the zygote: no torch thread pool, no random numbers drawn, no figure. The zygote is started with
a CPU setting's variables (tests/cpu_settings.py) before torch and MKL read them, and a child refuses to
start under other values of the variables read at import, so a child runs under its setting as a cold
kernel would.

jupyter_client starts a kernel by running its kernelspec's command; here that command is this file's
`launch` mode: a small process that asks the zygote for a child, hands it its stdin, stdout and stderr,
passes signals on (an interrupt is SIGINT) and exits when the child does. When the launcher is killed
(jupyter_client kills a kernel with SIGKILL when told to stop now), the child sees their connection close
and exits too.

Linux only (fork after importing torch is not something to rely on elsewhere); `POSENC_COLD_KERNELS=1`
turns it off, and every kernel starts the usual way.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys

# What costs a kernel of this suite most before its first cell: torch (most of the time), IPython's kernel itself,
# matplotlib's Figure (every picture of posenc.plots), torch._dynamo, which torch's optimizers import on their
# first step (a second of CPU in every notebook that trains a model), and ipykernel's debugger, which every kernel
# imports as it starts (debugpy: about 0.3 s). Only modules that do nothing at import that
# depends on running inside IPython: ipywidgets, for one, registers its comm targets at import only there.
# What a preloaded module does at import happens once, in the zygote: its warnings go to the zygote's stderr, and
# a submodule preloaded here is an attribute of its package even where a notebook did not import it.
PRELOAD = ("torch", "torch._dynamo", "matplotlib.figure", "ipykernel.kernelapp", "ipykernel.debugger")
# Variables read once, at import (torch, MKL, OpenMP, numpy, matplotlib, debugpy, Python's own): a child must have the
# zygote's values.
READ_AT_IMPORT = ("ATEN_", "MKL_", "OMP_", "KMP_", "OPENBLAS_", "NPY_", "TORCH", "PYTORCH_", "MPL", "PYTHON",
                  "LANG", "LC_", "HOME", "XDG_", "PYDEVD_", "GEVENT_", "DEBUGPY", "DISPLAY")
HEADER = 8  # bytes of the request's length


def enabled() -> bool:
    return sys.platform == "linux" and os.environ.get("POSENC_COLD_KERNELS") != "1"


def _read_at_import(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k.startswith(READ_AT_IMPORT)}


class Zygote:
    """A process that has done a kernel's imports under this environment plus `variables`, and forks a kernel on
    request."""

    KERNEL_NAME = "posenc-warm"

    def __init__(self, variables: dict[str, str] | None = None):
        import subprocess
        import tempfile

        # The variables its kernels run under, added to this process's environment (a kernel is started with them
        # whatever environment it is given: a child refuses other values of what was read at import).
        self.variables = dict(variables or {})
        self._folder = tempfile.TemporaryDirectory(prefix="posenc-zygote-")
        self.socket_path = os.path.join(self._folder.name, "zygote")
        self.process = subprocess.Popen([sys.executable, __file__, "serve", self.socket_path, str(os.getpid())],
                                        env={**os.environ, **self.variables}, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.PIPE)
        ready = self.process.stdout.readline()
        if ready != b"ready\n":
            self.close()
            raise RuntimeError(f"the warm kernel process did not start (it said {ready!r}); "
                               "POSENC_COLD_KERNELS=1 starts every kernel the usual way")

    def kernel_manager(self):
        """A jupyter_client KernelManager whose kernel is a child of this zygote."""
        from jupyter_client.manager import KernelManager

        return _with_variables(KernelManager, self)(kernel_name=self.KERNEL_NAME,
                                                    kernel_spec_manager=_SpecManager(zygote=self))

    def notebook_client_options(self) -> dict:
        """NotebookClient's options (nbclient) for kernels that are children of this zygote."""
        from jupyter_client.manager import AsyncKernelManager

        base = _with_variables(AsyncKernelManager, self)

        class WarmKernelManager(base):
            def __init__(self, **kwargs):
                super().__init__(kernel_spec_manager=_SpecManager(zygote=self.zygote), **kwargs)

        return {"kernel_manager_class": WarmKernelManager, "kernel_name": self.KERNEL_NAME}

    def kernel_spec_dict(self) -> dict:
        return {"argv": [sys.executable, __file__, "launch", self.socket_path, "-f", "{connection_file}"],
                "display_name": "Python 3 (posenc, warm)", "language": "python", "interrupt_mode": "signal",
                "metadata": {"debugger": False}}

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)
        self.process.stdout.close()
        self._folder.cleanup()


_zygotes: dict[tuple, Zygote] = {}


def zygote(variables: dict[str, str] | None = None) -> Zygote | None:
    """This process's zygote for this environment plus `variables` (started on first use, ended at exit);
    None where warm kernels are off (then start a kernel the usual way)."""
    if not enabled():
        return None
    key = tuple(sorted((variables or {}).items()))
    if key in _zygotes and _zygotes[key].process.poll() is not None:  # it ended: start another
        _zygotes.pop(key).close()
    if key not in _zygotes:
        if not _zygotes:
            import atexit

            atexit.register(_close_all)
        _zygotes[key] = Zygote(dict(key))
    return _zygotes[key]


def notebook_client_options(variables: dict[str, str] | None = None) -> dict:
    """What to give nbclient's NotebookClient (tools/run_notebooks.py's `run`) for a warm kernel; {} when off."""
    warm = zygote(variables)
    return warm.notebook_client_options() if warm else {}


def _close_all() -> None:
    for warm in _zygotes.values():
        warm.close()
    _zygotes.clear()


def _with_variables(manager_class, zygote: Zygote):
    """`manager_class` (a jupyter_client KernelManager class) whose kernels get the zygote's variables."""

    class WithVariables(manager_class):
        # Where jupyter_client 8 (the lock's) builds a kernel's command and environment, for both kinds of manager.
        async def _async_pre_start_kernel(self, **kwargs):
            kwargs["env"] = {**kwargs.get("env", os.environ), **zygote.variables}
            return await super()._async_pre_start_kernel(**kwargs)

    WithVariables.zygote = zygote
    return WithVariables


def _spec_manager_class():
    from ipykernel.kernelspec import RESOURCES
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel
    from traitlets import Any

    class SpecManager(KernelSpecManager):
        zygote = Any()

        def get_kernel_spec(self, kernel_name):
            if kernel_name != Zygote.KERNEL_NAME:
                raise NoSuchKernel(kernel_name)
            return self.kernel_spec_class(resource_dir=RESOURCES, **self.zygote.kernel_spec_dict())

    return SpecManager


def _SpecManager(**kwargs):  # noqa: N802 (a class, built on first use: jupyter_client is not imported before)
    return _spec_manager_class()(**kwargs)


# The zygote -------------------------------------------------------------------------------------------------

def serve(socket_path: str, parent_pid: int) -> None:
    zygote_env = _read_at_import(dict(os.environ))
    # As ipykernel does at start (kernelapp.init_gui_pylab), before matplotlib reads it.
    os.environ.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    # Not this folder on sys.path: the children's sys.path is ipykernel_launcher's.
    if sys.path and sys.path[0] == os.path.dirname(os.path.abspath(__file__)):
        sys.path.pop(0)
    _end_with_parent(parent_pid, signal.SIGTERM)
    import importlib

    for name in PRELOAD:
        importlib.import_module(name)
    # fork copies only the calling thread: no Python thread may be running here. (torch starts a native thread at
    # import and keeps its pools fork-safe itself: its DataLoader forks its workers after `import torch` too.)
    import threading

    if threading.active_count() != 1:
        raise RuntimeError(f"an import started a thread ({threading.enumerate()}); a fork would not be safe")
    # The children are reaped by the system; each child restores the default at once.
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(socket_path)
    listener.listen(16)
    print("ready", flush=True)
    while True:
        connection, _ = listener.accept()
        try:
            request, fds = _receive(connection)
        except (OSError, ValueError) as error:  # a launcher that left half-way: this one request is lost
            print(f"posenc warm kernels: a request failed: {error!r}", file=sys.stderr, flush=True)
            connection.close()
            continue
        if os.fork() == 0:
            listener.close()
            _become_kernel(connection, request, fds, zygote_env, os.getppid())  # ends the process
        for fd in fds:
            os.close(fd)
        connection.close()


def _end_with_parent(parent_pid: int, signum: int) -> None:
    """Have `signum` sent to this process when its parent ends (a killed test worker leaves no zygote, a killed
    zygote no kernel); end at once if the parent has ended already."""
    import ctypes

    PR_SET_PDEATHSIG = 1  # noqa: N806 (prctl.h)
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signum) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) was refused")
    if os.getppid() != parent_pid:
        os._exit(1)


def _receive(connection: socket.socket) -> tuple[dict, list[int]]:
    data, fds, _, _ = socket.recv_fds(connection, 1 << 16, 3)
    while len(data) < HEADER or len(data) < HEADER + int.from_bytes(data[:HEADER], "big"):
        more = connection.recv(1 << 16)
        if not more:
            raise ConnectionError("the launcher left before its request was complete")
        data += more
    return json.loads(data[HEADER:]), fds


def _become_kernel(connection: socket.socket, request: dict, fds: list[int], zygote_env: dict,
                   zygote_pid: int) -> None:
    """Run in the forked child: become the kernel the launcher asked for, then end the process."""
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        _end_with_parent(zygote_pid, signal.SIGKILL)
        # A session of its own, as jupyter_client gives a cold kernel: the launcher's signals reach the kernel and
        # what it started, a terminal's Ctrl-C does not.
        os.setsid()
        for target, fd in enumerate(fds):  # the launcher's stdin, stdout, stderr
            os.dup2(fd, target)
            os.close(fd)
        env = request["env"]
        differ = sorted(set(_read_at_import(env).items()) ^ set(zygote_env.items()))
        if differ:
            raise RuntimeError(f"these variables differ from the zygote's, which read them at import: {differ}; "
                               "start a zygote with them")
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(env)
        connection.sendall(f"{os.getpid()}\n".encode())
        _start_thread(_exit_when_closed, connection)
        from ipykernel import kernelapp

        sys.argv = [request["launcher"], *request["argv"]]
        kernelapp.launch_new_instance(argv=request["argv"])
    except SystemExit:
        raise
    except BaseException:
        import traceback

        print("posenc warm kernel failed:", file=sys.stderr)
        traceback.print_exc()
        sys.stderr.flush()
        os._exit(1)
    # The end of a process, as a cold kernel's: exit functions, then the interpreter's own flushing of files.
    sys.exit(0)


def _start_thread(target, *args) -> None:
    import threading

    threading.Thread(target=target, args=args, daemon=True).start()


def _exit_when_closed(connection: socket.socket) -> None:
    """In the kernel: end when the launcher is gone (its end of the connection closes)."""
    while connection.recv(1 << 10):
        pass
    os._exit(1)


# The launcher: the kernelspec's command ---------------------------------------------------------------------

def launch(socket_path: str, argv: list[str]) -> int:
    import ipykernel_launcher  # only its path, for the child's sys.argv[0]: a light module (no imports of its own)

    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    connection.connect(socket_path)
    body = json.dumps({"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ),
                       "launcher": ipykernel_launcher.__file__}).encode()
    socket.send_fds(connection, [len(body).to_bytes(HEADER, "big") + body], [0, 1, 2])
    reply = b""
    while not reply.endswith(b"\n"):
        more = connection.recv(64)
        if not more:
            return 1  # the child failed before it started (it says why on stderr)
        reply += more
    pid = int(reply)
    # jupyter_client's kernel is this process: the kernel goes with it (see _exit_when_closed), and it goes with
    # its own parent, the test worker.
    _end_with_parent(os.getppid(), signal.SIGKILL)

    def pass_on(signum, frame):
        try:
            os.killpg(pid, signum)  # the kernel leads its own process group (os.setsid)
        except ProcessLookupError:
            pass

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(signum, pass_on)
    while connection.recv(1 << 10):  # until the child's end closes: it has exited
        pass
    return 0


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(sys.argv[2], int(sys.argv[3]))
    elif sys.argv[1] == "launch":
        sys.exit(launch(sys.argv[2], sys.argv[3:]))
    else:
        raise SystemExit(f"usage: {sys.argv[0]} serve SOCKET PARENT_PID | launch SOCKET -f CONNECTION_FILE")
