"""The progress lines `experiment.compare` shows while it trains: one line per model."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .experiment import Result


class ProgressLines:
    """One line per model: its step and loss while it trains, then what training took.

    In a Jupyter kernel the lines are one display, replaced in place at every update, so
    a learner watches them move and the saved notebook keeps only the finished lines.
    Anywhere else only the finished lines are printed, one per model.
    """

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.handle = None
        try:
            from IPython import get_ipython
            from IPython.display import display
        except ImportError:
            return
        shell = get_ipython()
        if shell is not None and getattr(shell, "kernel", None) is not None:
            self.handle = display({"text/plain": "training ..."}, raw=True, display_id=True)

    def step(self, scheme: str, step: int, steps: int, loss: float) -> None:
        if not self.lines or not self.lines[-1].startswith(f"{scheme:<11} step"):  # a new model: a new line
            self.lines.append("")
        self.lines[-1] = f"{scheme:<11} step {step:>4}/{steps}  loss {loss:.3f}"
        self._show()

    def done(self, result: Result) -> None:
        line = (f"{result.scheme:<11} trained in {result.seconds:.1f} s: {len(result.losses)} steps, "
                f"last loss {result.losses[-1]:.3f}")
        if self.lines and self.lines[-1].startswith(f"{result.scheme:<11} step"):
            self.lines[-1] = line
        else:
            self.lines.append(line)
        if self.handle is None:
            print(line)
        self._show()

    def _show(self) -> None:
        if self.handle is not None:
            self.handle.update({"text/plain": "\n".join(self.lines)}, raw=True)
