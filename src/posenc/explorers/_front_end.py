"""What the explorers share on the Python side: their ES module (the shared explorer_common.js followed by the
explorer's own file), the still picture with the one line shown where widgets cannot render, and the base slider's
range."""

from __future__ import annotations

import functools
import math
import textwrap
from pathlib import Path

from matplotlib.figure import Figure

from .. import plots
from .._checks import real

HERE = Path(__file__).resolve().parent
# The one line beside the still picture, as every explorer says it (and tests/lab_browser.py looks for it).
NO_FRONT_END_HINT = (
    "If you see this line instead of sliders, this front end cannot show widgets. Open the notebook in "
    "JupyterLab (`make lab` in a copy of the repository), VS Code or Colab, and run the cell again."
)
BASE_RANGE = (10**0.3, 10**6)  # the base sliders' ends (their steps are powers of 10)


def module(name: str) -> str:
    """The ES module of the explorer whose own front end is the file `name` beside this one."""
    return (HERE / "explorer_common.js").read_text(encoding="utf-8") + "\n" + (HERE / name).read_text(encoding="utf-8")


# A base the explorers' base slider can show (the slider would move any other value to an end without a word).
check_slider_base = functools.partial(real(*BASE_RANGE), "base")


def readable(value: float) -> str:
    """A number as the explorers' pages write it (explorer_common.js `readable`): 4 significant digits, thousands
    separated, never an exponent (10,000, 6.283, -14.53)."""
    if not math.isfinite(value) or value == 0:
        return "0" if value == 0 else str(value)
    rounded = float(f"{value:.4g}")
    return f"{rounded:,.{max(0, 3 - math.floor(math.log10(abs(rounded))))}f}"


def still_picture(fig: Figure, readout: str = "", *, hint: bool = True) -> bytes:
    """The PNG shown where widgets cannot render: `fig`, with the `readout` (the sentence the page writes under its
    picture) and, with `hint`, the line `NO_FRONT_END_HINT` in room of their own below it (not over the figure's own
    labels). The encoding and pipeline explorers draw no hint: the notebook that explores with them says it once, in its
    first cell, for all its pictures."""
    readout = textwrap.fill(readout, int(11.5 * fig.get_figwidth()))  # about as many characters as fit its width
    lines = readout.count("\n") + 1 if readout else 0
    below = 0.34 if hint else 0.08  # two lines of small text, or a margin
    room = (below + 0.2 * lines) / fig.get_figheight()  # and the readout's lines
    fig.get_layout_engine().set(rect=(0, room, 1, 1 - room))
    if hint:
        fig.text(0.01, 0.01, textwrap.fill(NO_FRONT_END_HINT, 130), fontsize=8, ha="left", va="bottom")
    if readout:
        fig.text(0.01, below / fig.get_figheight(), readout, fontsize=9.5, ha="left", va="bottom")
    return plots.png_bytes(fig)
