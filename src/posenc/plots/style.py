"""What every figure shares: colours, line looks, a new figure, and showing or saving one.

The figures are `matplotlib.figure.Figure` objects built directly, not through
pyplot, so a figure is never registered globally: a notebook decides when to show
it (`show`), a script when to save it (`save_png`), and an explorer can redraw the
same figure many times without leaking.

Colours: the diverging map `RdBu_r` for values in [-1, 1] and the Okabe-Ito palette
for lines, both readable with the common colour-vision deficiencies. Each position
scheme has one colour across the whole suite (`SCHEME_COLOURS`).

A tensor to draw may require grad (it is detached). The figures trust their callers, the
notebooks and the explorers, which pass them their own values.
"""

from __future__ import annotations

import io
from pathlib import Path

from matplotlib.figure import Figure

__all__ = ["OKABE_ITO", "SINE_COLOUR", "COSINE_COLOUR", "SCHEME_COLOURS", "DIVERGING", "SEQUENTIAL", "DPI",
           "LINE_STYLES", "MARKERS", "new_figure", "line_style", "artist", "shorten",
           "png_bytes", "save_png", "show"]

OKABE_ITO = ("#E69F00", "#56B4E9", "#009E73", "#0072B2", "#D55E00", "#CC79A7", "#F0E442", "#000000")
SINE_COLOUR, COSINE_COLOUR = "#E69F00", "#0072B2"
# One colour per position scheme, the same in every figure and explorer view. The five position schemes take five of
# Okabe-Ito's colours; the context-stretching rules for RoPE take its sky blue and reddish purple, and (Okabe-Ito's
# last hue, yellow, is faint on white) wine and olive from the colour-blind-safe "muted" scheme of Paul Tol's
# technical note "Colour Schemes" (SRON/EPS/TN/09-002).
SCHEME_COLOURS = {
    "none": "#000000",
    "learned": "#E69F00",
    "sinusoidal": "#009E73",
    "rotary": "#0072B2",
    "alibi": "#D55E00",
    "pi": "#56B4E9",
    "ntk": "#CC79A7",
    "yarn": "#882255",
    "llama3": "#999933",
}
DIVERGING = "RdBu_r"
# For data that is never negative (a similarity of non-negative numbers): light to dark, no false midpoint at 0.
SEQUENTIAL = "viridis"
DPI = 100
LINE_STYLES = ("-", "--", "-.", ":")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def new_figure(width: float, height: float) -> Figure:
    """An empty figure of `width` x `height` inches whose axes are placed by matplotlib's constrained layout."""
    return Figure(figsize=(width, height), layout="constrained")


def line_style(k: int) -> dict:
    """Line k's look: colour, marker and line style all differ, so no two lines are told apart by colour alone."""
    return {"color": OKABE_ITO[[3, 0, 2, 4, 5, 1, 7, 6][k % 8]], "marker": MARKERS[k % len(MARKERS)],
            "linestyle": LINE_STYLES[k % len(LINE_STYLES)]}


def artist(fig: Figure, gid: str):
    """The artist of `fig` tagged with `gid`.

    An explorer tags each artist it updates with a gid, so that it finds it without
    depending on the order in which the figure was built.
    """
    for found in fig.findobj(lambda a: a.get_gid() == gid):
        return found
    raise ValueError(f"gid {gid!r} tags no artist of this figure")


def shorten(label: str, width: int = 12) -> str:
    """A label cut to `width` characters with an ellipsis: a 5,000-letter word must not push the axes off the figure."""
    return label if len(label) <= width else label[: width - 1] + "…"


def png_bytes(fig: Figure, *, dpi: int = DPI) -> bytes:
    """The figure as PNG bytes, identical from run to run (no software or date stamp)."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, metadata={"Software": None})
    return buffer.getvalue()


def save_png(fig: Figure, path: str | Path, *, dpi: int = DPI) -> Path:
    """Write the figure as a PNG file; the folder must exist."""
    path = Path(path)
    path.write_bytes(png_bytes(fig, dpi=dpi))
    return path


def show(fig: Figure) -> None:
    """Display the figure in a notebook as a PNG and nothing else.

    A figure displayed the usual way also stores a text line `<Figure size ...>`
    in the notebook; showing the PNG alone keeps the outputs to what a reader sees.
    """
    from IPython.display import display

    display({"image/png": png_bytes(fig)}, raw=True)
