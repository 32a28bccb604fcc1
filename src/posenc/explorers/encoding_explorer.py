"""EncodingExplorer: the sinusoidal table and four ways of looking at it, drawn by the browser.

    views: heatmap (optionally with the concatenated layout beside it), curves (a column and
    its sin/cos partner over positions), wavelengths, similarity (PE[p] . PE[q])

An `anywidget` widget: Python holds the settings (traitlets, synced with the page); the front end,
encoding_explorer.js beside this file (after explorer_common.js), computes the table, the wavelengths and the
similarity itself and draws them on a canvas in the same event as the key press. The same module runs in JupyterLab, VS Code,
Colab and on a static page (a saved notebook keeps the module and the settings), so the explorer moves
without a kernel. Where widgets cannot render, the output is a still picture of the current view, the
page's readout under it, and one line saying how to make it move.
"""

from __future__ import annotations

import math

import anywidget
import torch
import traitlets
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from .. import plots
from .._checks import check_flag, check_size, one_of
from ..builder import DEFAULT_BASE, frequencies, sinusoidal_encoding
from ._front_end import NO_FRONT_END_HINT, check_slider_base, module, readable, still_picture

__all__ = ["VIEWS", "MAX_ENTRIES", "STILL_HINT", "EncodingExplorer"]

VIEWS = ("heatmap", "curves", "wavelengths", "similarity")
# The front end computes the table directly (one float64 angle per entry), as the package does up to 2^16 entries.
MAX_ENTRIES = 1 << 16
MARK_TICK = 0.06  # a mark's tick at each edge, as a share of the side (explorer_common.js TICK)
SLIDER_MAX = 256  # the size sliders' end: 256 x 256 is 2^16 entries
# The one line beside the still picture, as every explorer says it (and tests/lab_browser.py looks for it).
STILL_HINT = NO_FRONT_END_HINT


class EncodingExplorer(anywidget.AnyWidget):
    """Sliders for the sinusoidal table and four ways of looking at it, computed and drawn in the browser.

    >>> explorer = EncodingExplorer(d_model=16, max_sequence_length=20)
    >>> explorer.d_model = 15          # the picture in the page follows
    >>> explorer.view = "curves"
    """

    _esm = module("encoding_explorer.js")
    # Any, each checked by its validator below: a wrong type is a TypeError naming the setting, as everywhere in posenc.
    d_model = traitlets.Any(128).tag(sync=True)
    max_sequence_length = traitlets.Any(64).tag(sync=True)
    base = traitlets.Any(DEFAULT_BASE).tag(sync=True)
    position = traitlets.Any(10).tag(sync=True)
    dimension = traitlets.Any(0).tag(sync=True)
    view = traitlets.Any("heatmap").tag(sync=True)
    compare_layouts = traitlets.Any(False).tag(sync=True)

    def __init__(self, *, d_model: int = 128, max_sequence_length: int = 64, base: float = DEFAULT_BASE,
                 position: int = 10, dimension: int = 0, view: str = "heatmap", compare_layouts: bool = False) -> None:
        # A position or dimension past the table's end is moved to its last row or column; the validators below
        # check every setting once all are set (the sizes first).
        super().__init__(d_model=d_model, max_sequence_length=max_sequence_length, base=base,
                         position=min(position, max_sequence_length - 1), dimension=min(dimension, d_model - 1),
                         view=view, compare_layouts=compare_layouts)

    def set_state(self, sync_data) -> None:
        # The page sends each slider in its own message, so a position or column chosen on a larger table can
        # arrive just after a smaller size (keys pressed fast): it is moved to the last row or column, as _fit does
        # for a size set here, not refused. A value set from Python is still checked strictly below.
        sync_data = dict(sync_data)
        for name, size in (("position", "max_sequence_length"), ("dimension", "d_model")):
            end = sync_data.get(size, getattr(self, size))
            if type(sync_data.get(name)) is int and type(end) is int and sync_data[name] >= end >= 1:
                sync_data[name] = end - 1
        super().set_state(sync_data)

    # Every setting checked where it is set, in the constructor or later (explorer.view = ...): a clear error.
    @traitlets.validate("d_model", "max_sequence_length")
    def _size(self, proposal):
        return check_size(proposal["trait"].name, proposal["value"], maximum=SLIDER_MAX)

    @traitlets.validate("position", "dimension")
    def _index(self, proposal):
        name = proposal["trait"].name
        end = (self.max_sequence_length if name == "position" else self.d_model) - 1
        return check_size(name, proposal["value"], minimum=0, maximum=end)

    @traitlets.validate("base")
    def _base(self, proposal):
        return check_slider_base(proposal["value"])

    @traitlets.validate("compare_layouts")
    def _flag(self, proposal):
        return check_flag("compare_layouts", proposal["value"])

    @traitlets.validate("view")
    def _view(self, proposal):
        return one_of(VIEWS)("view", proposal["value"])

    @traitlets.observe("d_model", "max_sequence_length")
    def _fit(self, change) -> None:
        # A smaller table moves the chosen position and dimension to its last row and column.
        self.position = min(self.position, self.max_sequence_length - 1)
        self.dimension = min(self.dimension, self.d_model - 1)

    # Where widgets cannot render: a still picture of the current view, and the page's readout ----------------

    def wavelengths(self) -> torch.Tensor:
        """Each column's wavelength in positions (float64), as the page computes it."""
        return (2 * math.pi / frequencies(d_model=self.d_model, base=self.base)).repeat_interleave(2)[: self.d_model]

    def similarity(self) -> torch.Tensor:
        """PE[p] . PE[q] for every pair of positions (float64), as the page computes it: a sum of cosines per offset,
        plus an odd d_model's last sine column, which has no cos partner."""
        L, d = self.max_sequence_length, self.d_model
        pairs = frequencies(d_model=d, base=self.base)[: d // 2]
        by_offset = torch.cos(torch.arange(L, dtype=torch.float64)[:, None] * pairs).sum(dim=1)
        offsets = (torch.arange(L)[:, None] - torch.arange(L)).abs()
        result = by_offset[offsets]
        if d % 2:
            last = sinusoidal_encoding(max_sequence_length=L, d_model=d, base=self.base)[:, -1].double()
            result = result + last[:, None] * last
        return result

    def readout(self) -> str:
        """The sentence the page writes under its picture (encoding_explorer.js `describe`), at the current settings."""
        p, j, L, d = self.position, self.dimension, self.max_sequence_length, self.d_model
        kind = "cos" if j % 2 else "sin"
        lengths = self.wavelengths()
        repeats = f"column {j} ({kind}) turns once every {readable(float(lengths[j]))} positions"
        if self.view == "heatmap":
            right = f" (column {(d + 1) // 2 + j // 2 if j % 2 else j // 2} on the right)" if self.compare_layouts else ""
            return (f"Heatmap of the table, {L} positions by {d} columns, base {readable(self.base)}; "
                    f"position {p} and column {j}{right} marked; {repeats}.")
        if self.view == "curves":
            value = float(sinusoidal_encoding(max_sequence_length=L, d_model=d, base=self.base)[p, j])
            partner = ", with no cos partner," if d % 2 and j == d - 1 else f" and its {'sin' if j % 2 else 'cos'} partner"
            return f"Column {j}{partner} over {L} positions: {repeats}; at position {p} it is {value:.3f}."
        if self.view == "wavelengths":
            within = int((lengths <= L - 1).sum())  # a full turn within positions 0 to L - 1
            return (f"Wavelengths from {readable(float(lengths[0]))} to {readable(float(lengths[-1]))} positions "
                    f"(base {readable(self.base)}); {within} of {d} columns make a full turn within positions 0 to "
                    f"{L - 1}; {repeats}.")
        row = self.similarity()[p]
        least = int(row.argmin())  # the first of equal smallest values, as the page's loop
        return (f"PE[p] . PE[q] for every pair of {L} positions; row {p} is largest at itself "
                f"({readable(float(row[p]))}) and smallest at position {least} ({readable(float(row[least]))}).")

    def figure(self) -> Figure:
        """The current view as a still matplotlib figure (the page draws the live one)."""
        p, j, L, d = self.position, self.dimension, self.max_sequence_length, self.d_model
        if self.view == "heatmap":
            table = sinusoidal_encoding(max_sequence_length=L, d_model=d, base=self.base)
            title = None if self.compare_layouts else f"PE: {L} positions x d_model = {d}, base = {readable(self.base)}"
            fig = plots.encoding_heatmap(table, title=title, compare_layouts=self.compare_layouts, annotate=False)
            if self.compare_layouts:  # the page's title and colour bar, as in the heatmap alone
                fig.axes[1].set_title("concatenated: sines, then cosines", fontsize=10)
                fig.axes[-1].set_ylabel("PE(pos, j)")
            sines = (d + 1) // 2
            columns = [j, sines + j // 2 if j % 2 else j // 2] if self.compare_layouts else [j]
            for ax, column in zip(fig.axes, columns):  # the chosen row and column, marked as the page marks them:
                # black ticks on a white band at the edges, seen on stripes, leaving the row and column in view
                for line, at in ((ax.axhline, p), (ax.axvline, column)):
                    for start, end in ((0, MARK_TICK), (1 - MARK_TICK, 1)):
                        line(at, start, end, color="white", linewidth=3.5)
                        line(at, start, end, color="black", linewidth=1.5)
            return fig
        if self.view == "curves":
            pair = j - j % 2
            columns = [c for c in (pair, pair + 1) if c < d]
            fig = plots.sine_cosine_curves(d_model=d, columns=columns, max_sequence_length=L, base=self.base, position=p)
            fig.suptitle(f"column{'s' if len(columns) > 1 else ''} {' and '.join(map(str, columns))} of PE, d_model = {d}, "
                         f"base = {readable(self.base)}", fontsize=11)  # the pair shown, not a fast/slow contrast
            return fig
        if self.view == "wavelengths":
            return _wavelengths_figure(self.wavelengths(), length=L, dimension=j, base=self.base)
        table = sinusoidal_encoding(max_sequence_length=L, d_model=d, base=self.base, dtype=torch.float64)
        fig = plots.similarity_figure(table, position=p)
        fig.suptitle(f"PE[p] . PE[q], d_model = {d}, base = {readable(self.base)}", fontsize=11)
        return fig

    def picture(self) -> bytes:
        """The still picture (PNG): the current view and its readout (the notebook that explores with it says the line
        `STILL_HINT` once)."""
        return still_picture(self.figure(), self.readout(), hint=False)

    def _repr_mimebundle_(self, **kwargs):
        bundle = super()._repr_mimebundle_(**kwargs)
        data, metadata = bundle if isinstance(bundle, tuple) else (bundle, {})
        data["text/plain"] = f"{self.readout()}\n{STILL_HINT}"
        data["image/png"] = self.picture()
        return data, metadata


def _wavelengths_figure(lengths: torch.Tensor, *, length: int, dimension: int, base: float) -> Figure:
    """The wavelengths view: each column's wavelength as a dot (sines orange, cosines blue) on a log axis, a dashed
    line at the last position, `length` - 1 (a dot on or below it turns once within the table), the chosen column
    circled."""
    fig = plots.new_figure(8, 4)
    ax = fig.add_subplot()
    columns = torch.arange(len(lengths))
    for parity, colour, name in ((0, plots.SINE_COLOUR, "sin columns"), (1, plots.COSINE_COLOUR, "cos columns")):
        ax.plot(columns[parity::2].numpy(), lengths[parity::2].numpy(), "o", color=colour, markersize=3, label=name)
    ax.axhline(max(length - 1, 1), color="#555555", linestyle="--", linewidth=1, label=f"last position, {length - 1}")
    ax.plot([dimension], [float(lengths[dimension])], "o", markersize=10, markerfacecolor="none", color="black")
    ax.set_yscale("log")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("column j")
    ax.set_ylabel("wavelength (positions)")
    ax.set_title(f"circled: column {dimension}, {readable(float(lengths[dimension]))} positions; base {readable(base)}",
                 fontsize=10)
    ax.legend(fontsize=8, loc="upper left")
    return fig
