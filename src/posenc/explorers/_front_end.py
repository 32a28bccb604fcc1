"""What the explorers share on the Python side: their ES module (the shared explorer_common.js followed by the
explorer's own file), the still picture with the one line shown where widgets cannot render, and the base slider's
range."""

from __future__ import annotations

import functools
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


def still_picture(fig: Figure) -> bytes:
    """The PNG shown where widgets cannot render: `fig`, with the line `NO_FRONT_END_HINT` in room of its own below it
    (not over the figure's own labels)."""
    room = 0.34 / fig.get_figheight()  # two lines of small text
    fig.get_layout_engine().set(rect=(0, room, 1, 1 - room))
    fig.text(0.01, 0.01, textwrap.fill(NO_FRONT_END_HINT, 130), fontsize=8, ha="left", va="bottom")
    return plots.png_bytes(fig)
