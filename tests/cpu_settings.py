"""The other CPU under which every notebook's stored outputs must hold, and an nbval run under it.

torch's matmul goes through MKL, which picks its kernels by the CPU it finds, and torch's own
kernels pick a vector width; a learner's laptop may get other ones than the machine that
stored the outputs. These variables make this machine choose as another CPU would
(shared/notes/tooling.md, "Stored outputs on another CPU"). The machine's own setting is
nbval's usual run; the repository's conftest.py collects every notebook once more under the
setting here, as `notebooks/NN_name.ipynb::<setting>::Cell k`: the same strict nbval, in a
kernel started with the setting's variables (its figures are checked but not drawn: UNDRAWN_FIGURES).
Under "oldest_cpu" the kernel runs the notebook's learner's edition (LearnersEditionUnder), which is
also the check that the learner's edition runs.
Every kernel here, and nbval's own under this machine's setting, is forked from a warm process
(tools/warm_kernels.py).
"""

from __future__ import annotations

import ast
import atexit
import copy
import functools
import os
import re
import shutil
import tempfile
from pathlib import Path

import nbformat
import pytest
from jupyter_client.manager import KernelManager
from nbval.kernel import CURRENT_ENV_KERNEL_NAME, NbvalKernelspecManager, RunningKernel
from nbval.plugin import IPyNbCell, IPyNbFile

import student_edition  # tools/, on sys.path from conftest.py
import warm_kernels

# One other CPU, the one that differs most from the machines that store the outputs (AVX-512 or AVX2): MKL's SSE4.2
# kernels, torch's default (no vector) kernels, one thread. With this machine's own setting, each notebook is executed
# twice per `make test`; a third run under a setting in between (AVX2) was dropped to keep it so.
SETTINGS: dict[str, dict[str, str]] = {
    "oldest_cpu": {"MKL_ENABLE_INSTRUCTIONS": "SSE4_2", "ATEN_CPU_CAPABILITY": "default", "OMP_NUM_THREADS": "1"},
}


# nbval compares no images: image/png is in its default skip list (this suite does not pass --nbdime), so a figure's
# pixels are drawn only to be thrown away. Under the other settings they are not drawn: `posenc.plots.show` still
# checks its figure and displays a PNG, an empty one (about 9 CPU-seconds a setting). Drawing is matplotlib's own
# code, which the settings' variables do not reach, and under this machine's setting every figure is drawn.
UNDRAWN_FIGURES = """
def _posenc_undrawn_figures():
    from posenc.plots import style

    def png_bytes(fig, *, dpi=style.DPI):
        style.check_figure(fig)
        return b""

    style.png_bytes = png_bytes

_posenc_undrawn_figures()
del _posenc_undrawn_figures
"""


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
        # Warm kernels stand in for this environment's own Python only (pyproject.toml's --nbval-current-env).
        warm = warm_kernels.zygote(variables) if kernel_name == CURRENT_ENV_KERNEL_NAME else None
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
        if setting:
            reply = kc.execute_interactive(UNDRAWN_FIGURES, silent=True, store_history=False, timeout=startup_timeout)
            if reply["content"]["status"] != "ok":
                self.stop()
                raise RuntimeError(f"the kernel under {setting} could not set up its figures: {reply['content']}")


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
        self.kernel = KernelUnder(kernel_name, setting=self.setting, cwd=self.kernel_folder(),
                                  startup_timeout=option.nbval_kernel_startup_timeout)
        self.setup_sanitize_files()

    def kernel_folder(self) -> str:
        return str(self.path.parent)


# The setting under which a notebook's learner's edition runs (LearnersEditionUnder).
LEARNERS_SETTING = "oldest_cpu"
# The progress summary, whose counts differ between the two editions.
PROGRESS_CALL = re.compile(r"\bexercises\.progress\(")


class LearnersEditionUnder(NotebookUnder):
    """The learner's edition of a notebook (tools/student_edition.py: its solution cells removed) under a setting.

    Building the learner's edition means executing it; one execution serves twice. It is nbval's strict run under
    the setting for every cell the two editions share (the solution cells run under this machine's setting), and
    it is the check that the learner's edition runs from top to bottom with every checker saying "not attempted".
    It runs where a handed-out edition does: in a folder that has only what tools/student_edition.py copies beside
    the notebooks. In the cells that read a learner's answer (a name an exercise's placeholder and its solution both
    set) or show the progress summary, the feedback differs by design: it is left out of the comparison, every other
    output of those cells is compared, and a last item, `nothing_attempted`, asserts that the feedback says "not
    attempted" throughout.
    """

    def collect(self):
        teacher = nbformat.read(self.path, as_version=4)
        kept = kept_code_cells(teacher)
        names = sorted(solution_names(teacher))
        answers = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b") if names else None
        self.checker_cells = []
        for item in super().collect():  # nbval's items, one per code cell of the teacher's edition
            if item.cell_num not in kept:
                continue
            if (answers and answers.search(item.cell.source)) or PROGRESS_CALL.search(item.cell.source):
                item.compare_outputs = functools.partial(_compare_without_feedback, item)
                self.checker_cells.append(item)
            yield item
        yield NothingAttempted.from_parent(self, name="nothing_attempted")

    def kernel_folder(self) -> str:
        return str(_learners_edition_folder() / "notebooks")


@functools.cache
def _learners_edition_folder() -> Path:
    """A folder as a handed-out edition has it (tools/student_edition.py: what the notebooks read, copied)."""
    folder = Path(tempfile.mkdtemp(prefix="posenc-learners-edition-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    (folder / "notebooks").mkdir()
    student_edition.copy_inputs(folder)
    return folder


# What a checker or the progress summary says: the outputs that differ between the two editions by design.
FEEDBACK = ("✔", "✘", "…", "Not attempted", "Your progress")


def without_feedback(outputs: list) -> list:
    """The outputs but a checker's feedback and the progress summary."""
    return [output for output in outputs if not any(text.startswith(FEEDBACK) for text in _texts([output]))]


def _compare_without_feedback(item, test, ref, skip_compare=None) -> bool:
    """nbval's comparison of a cell's outputs with the feedback left out on both sides."""
    return IPyNbCell.compare_outputs(item, without_feedback(test), without_feedback(ref), skip_compare)


class NothingAttempted(pytest.Item):
    """In the learner's edition, every checker says "not attempted" and the summary counts them all."""

    def runtest(self):
        nothing_attempted([item.test_outputs for item in self.parent.checker_cells])

    def reportinfo(self):
        return self.path, None, f"{self.parent.name}::{self.name}"


def nothing_attempted(outputs_of_checker_cells: list[list | None]) -> None:
    """Assert that each checker cell's feedback says "not attempted" and the summary (the last) counts them all."""
    if any(outputs is None for outputs in outputs_of_checker_cells):
        raise AssertionError("a cell that calls a checker did not run (see the failures above)")
    texts = [text for outputs in outputs_of_checker_cells for text in _texts(outputs)]
    feedback = [text for text in texts if not text.startswith("Your progress")]
    assert feedback and all(text.startswith(("…", "Not attempted")) for text in feedback), feedback
    summary = texts[-1] if texts else ""
    assert summary.startswith("Your progress"), f"the last checker cell shows the progress summary, got {summary!r}"
    first_line = summary.splitlines()[0]
    assert ", 0 done, 0 wrong, " in first_line and first_line.endswith(f"{len(feedback)} not attempted"), summary


def solution_names(notebook) -> set[str]:
    """The learner's answers: the names an exercise's placeholder sets (`my_table = None`) and its solution sets again."""
    def assigned(tag):
        nodes = [node for cell in notebook.cells if tag in cell.metadata.get("tags", [])
                 for node in ast.walk(ast.parse(cell.source))]
        return ({node.id for node in nodes if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
                | {node.name for node in nodes if isinstance(node, (ast.FunctionDef, ast.ClassDef))})

    return assigned("exercise") & assigned("solution")


def kept_code_cells(notebook) -> set[int]:
    """The code cells (numbered as nbval numbers them) that the learner's edition keeps, by its own function."""
    numbered = copy.deepcopy(notebook)
    code = [cell for cell in numbered.cells if cell.cell_type == "code"]
    for k, cell in enumerate(code):
        cell.metadata["posenc_code_cell"] = k
    return {cell.metadata["posenc_code_cell"] for cell in student_edition.learner_version(numbered).cells
            if cell.cell_type == "code"}


def _texts(outputs) -> list[str]:
    return [output.get("data", {}).get("text/plain", "") for output in outputs if output.get("output_type") in
            ("execute_result", "display_data") and output.get("data", {}).get("text/plain")]


class UnderOtherCPUs(pytest.File):
    """The notebook once under each setting of SETTINGS: under LEARNERS_SETTING, its learner's edition if it has
    solutions to remove."""

    def collect(self):
        with_solutions = student_edition.has_solutions(nbformat.read(self.path, as_version=4))
        for setting in SETTINGS:
            learners = setting == LEARNERS_SETTING and with_solutions
            kind, name = (LearnersEditionUnder, f"{setting}_learners_edition") if learners else (NotebookUnder, setting)
            yield kind.from_parent(self, path=self.path, name=name, nodeid=self.id.child(name), setting=setting)

