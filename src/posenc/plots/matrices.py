"""Matrices as pictures: the encoding table, any small matrix, several on one scale, and the similarity of rows."""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from matplotlib import colormaps, patheffects
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import ConnectionPatch, Patch, Rectangle
from matplotlib.ticker import MaxNLocator
from matplotlib.transforms import offset_copy

from .._checks import check_floating_tensor
from ..builder import DEFAULT_BASE, sinusoidal_encoding
from ..encoding import to_concatenated
from .style import (
    DIVERGING,
    OKABE_ITO,
    artist,
    new_figure,
)

__all__ = ["encoding_heatmap", "matrix_figure", "one_hot_figure", "matrices_figure", "lookup_figure",
           "similarity_figure", "update_similarity"]


def _matrix(name: str, value: torch.Tensor) -> torch.Tensor:
    """A 2-D floating tensor to draw, detached and as float32 (the one slip a learner's own tensor makes: its shape)."""
    return check_floating_tensor(name, value, ndim=(2,)).detach().float()


def _runs(indices: Sequence[int]) -> list[tuple[int, int]]:
    """Each run of adjacent indices as (first, count): rows 0 to 3 get one frame, not four."""
    runs: list[tuple[int, int]] = []
    for i in sorted(set(int(i) for i in indices)):
        if runs and runs[-1][0] + runs[-1][1] == i:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1)
        else:
            runs.append((i, 1))
    return runs


def _cell_text(value: float) -> str:
    """A value written in its cell: two decimals, "0" for an exact zero, never "-0.00"."""
    if not value:
        return "0"
    text = f"{value:.2f}"
    return "0.00" if text == "-0.00" else text


def _write_values(ax, values: torch.Tensor, vmin: float, vmax: float, *, symmetric: bool, fontsize: float,
                  hidden: torch.Tensor | None = None, blank_below: float = 0.0) -> None:
    """Each value in its cell: white on the dark ends of the colour map, black elsewhere; none in a hidden cell, nor
    in a cell whose size is below `blank_below`."""
    limit = max(abs(vmin), abs(vmax)) or 1.0
    whole = bool((values == values.round()).all())  # one-hot rows, counts: "1", not "1.00"
    for r in range(values.shape[0]):
        for c in range(values.shape[1]):
            if hidden is not None and bool(hidden[r, c]):
                continue
            value = float(values[r, c])
            if abs(value) < blank_below:
                continue
            strength = abs(value) / limit if symmetric else (value - vmin) / ((vmax - vmin) or 1.0)
            ax.text(c, r, f"{value:.0f}" if whole else _cell_text(value), ha="center", va="center", fontsize=fontsize,
                    color="white" if strength > 0.6 else "black")


# Masked cells: grey and hatched, so that a weight the mask set to 0 is not read as a weight that rounds to 0.00.
HIDDEN_COLOUR, HIDDEN_HATCH = "#C8C8C8", "////"


def _draw_hidden(ax, hidden: torch.Tensor, hatch: str = HIDDEN_HATCH) -> None:
    for r, c in hidden.nonzero().tolist():
        ax.add_patch(Rectangle((c - 0.5, r - 0.5), 1, 1, facecolor=HIDDEN_COLOUR, hatch=hatch,
                               edgecolor="white", linewidth=0))


def _hidden_legend(bar, label: str = "masked", hatch: str = HIDDEN_HATCH, under=None) -> None:
    """The key to the grey hatched cells: under the colour bar they are not part of, or right `under` a panel."""
    key = {"handles": [Patch(facecolor=HIDDEN_COLOUR, hatch=hatch, edgecolor="white", label=label)], "fontsize": 8,
           "frameon": False, "handlelength": 1.5, "loc": "upper center"}
    if under is None:
        return bar.ax.legend(**key, bbox_to_anchor=(0.5, -0.04))
    fig = under.get_figure()
    fig.draw_without_rendering()  # below the panel's tick labels and axis label, measured in points:
    below = offset_copy(under.transAxes, fig=fig, y=(under.get_tightbbox().y0 - under.bbox.y0) * 72 / fig.dpi - 2, units="points")
    under.legend(**key, bbox_to_anchor=(0.5, 0), borderaxespad=0, bbox_transform=below)


def _colour_extend(values: torch.Tensor, low: float, high: float) -> str:
    """Which ends of a clipped colour bar get an arrow: the ends some value lies beyond."""
    below, above = bool((values < low).any()), bool((values > high).any())
    return {(True, True): "both", (True, False): "min", (False, True): "max"}.get((below, above), "neither")


def _colour_scale(values: torch.Tensor, value_range: tuple[float, float] | None, *,
                  symmetric: bool) -> tuple[float, float, bool]:
    """(vmin, vmax, symmetric) of a picture's colour scale: `value_range` when given, else from the values.

    A fixed range makes pictures comparable (attention weights always on 0 to 1); a value outside
    it takes the colour of its end, so a caller that clips says so (`clip`: the colour bar's label
    says it, and the bar gets an arrow at that end).
    """
    if value_range is None:
        limit = float(values.abs().max()) or 1.0
        low, high = (-limit, limit) if symmetric else (float(values.min()), float(values.max()))
        return low, high if high > low else low + 1.0, symmetric
    low, high = float(value_range[0]), float(value_range[1])
    return low, high, symmetric and low == -high


# The encoding table --------------------------------------------------------------


def encoding_heatmap(table: torch.Tensor | None = None, *, max_sequence_length: int = 64, d_model: int = 128,
                     base: float = DEFAULT_BASE, title: str | None = None, annotate: bool | None = None,
                     compare_layouts: bool = False, column_ticks: Sequence[int] | None = None) -> Figure:
    """The table as an image: rows are positions, columns are the vector's entries.

    Pass a `table` to draw it, or the sizes to draw the sinusoidal table. Small
    tables (at most 12 x 12) get their values written in the cells. With
    `compare_layouts=True` the same table in the concatenated layout (all sines, then
    all cosines: `encoding.to_concatenated`) is drawn beside it, on one colour scale.
    `column_ticks` puts the column ticks of a table too large to annotate where the text
    needs them (say 0, 32, 64, 96, 127 for "columns 64 to 127"), in each panel; in the concatenated one a tick is
    named by the sine or cosine it shows ("sin 32", "cos 0").
    """
    if table is None:
        table = sinusoidal_encoding(max_sequence_length=max_sequence_length, d_model=d_model, base=base)
    table = _matrix("table", table)
    rows, columns = table.shape
    annotate = rows * columns <= 144 if annotate is None else annotate
    if column_ticks is not None:  # for a table too large to annotate: an annotated one has a tick per column
        column_ticks = sorted({int(j) for j in column_ticks})
    width = min(10, 3 + 0.55 * columns) if annotate else 8
    height = min(6.5, 1.2 + 0.42 * rows) if annotate else 5
    fig = new_figure(min(14, 2 * width - 1.5) if compare_layouts else width, height - 0.6 if compare_layouts else height)
    # Column labels "j / sin" or "j / cos": in the concatenated panel each column keeps the label of the column it came from.
    labels = [f"{j}\n{'sin' if j % 2 == 0 else 'cos'}" for j in range(columns)]
    panels = [(table, labels, "column j",
               title or f"positional encoding, {rows} positions x d_model = {columns}")]
    if compare_layouts:
        sines = (columns + 1) // 2
        panels = [(table, labels, "column j", title or "interleaved: sin, cos, sin, cos, ..."),
                  (to_concatenated(table), labels[0::2] + labels[1::2],
                   # With named ticks ("sin 32", "cos 0"), the numbers are pairs, not the left panel's columns.
                   f"{'pair i' if column_ticks is not None and not annotate else 'column'}: sines 0 to {sines - 1}, then cosines",
                   "concatenated, same denominators: all sines, then all cosines")]
    axes = fig.subplots(1, len(panels), sharey=True, squeeze=False)[0]
    for k, (ax, (values, column_labels, xlabel, panel_title)) in enumerate(zip(axes, panels)):
        image = ax.imshow(values.numpy(), cmap=DIVERGING, vmin=-1, vmax=1, aspect="auto", interpolation="nearest")
        ax.set_xlabel(xlabel)
        ax.set_title(panel_title, fontsize=10 if compare_layouts else None)
        if annotate:
            for r in range(rows):
                for c in range(columns):
                    value = float(values[r, c])
                    ax.text(c, r, f"{value:.2f}", ha="center", va="center", fontsize=8,
                            color="white" if abs(value) > 0.6 else "black")
            ax.set_xticks(range(columns), column_labels)
            ax.set_yticks(range(rows))
        else:
            # Rows and columns are whole numbers: no tick at 2.5. Columns the text names get their own ticks.
            if column_ticks is None:
                ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            elif k == 0:
                ax.set_xticks(column_ticks)
            else:  # the concatenated panel: a tick names the sine or cosine it shows, not a column of the table on the left
                ax.set_xticks(column_ticks, [f"sin {j}" if j < sines else f"cos {j - sines}" for j in column_ticks])
            ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    axes[0].set_ylabel("position pos")
    if compare_layouts and columns > 1:
        axes[1].axvline((columns + 1) // 2 - 0.5, color="black", linewidth=1)  # where the sines end
    fig.colorbar(image, ax=list(axes), shrink=0.9, label="value" if compare_layouts else "PE(pos, j)")
    return fig


def matrix_figure(matrix: torch.Tensor, *, title: str, xlabel: str = "column", ylabel: str = "row",
                  row_labels: Sequence[str] | None = None, column_labels: Sequence[str] | None = None,
                  cmap: str = DIVERGING, symmetric: bool = True, colorbar_label: str = "value",
                  value_range: tuple[float, float] | None = None, hidden: torch.Tensor | None = None,
                  numbers: bool = True, colorbar: bool = True, blank_below: float = 0.0) -> Figure:
    """Any small matrix (one-hot rows, X, scores) as an annotated image, one tick per row and column.

    A matrix of whole numbers (one-hot rows) gets a colour bar with whole-number ticks. `numbers=False` leaves the
    values out of the cells, for a 0/1 matrix whose colours say it all, and draws thin cell borders instead.
    `value_range=(low, high)` fixes the colour scale (attention weights: `(0, 1)`); by
    default it spans the values, symmetric about 0 when `symmetric`. `hidden`, a bool
    matrix of the same shape (or one that broadcasts to it, such as a row of key columns), draws the cells a mask hides
    grey and hatched, without a number. `colorbar=False` leaves the bar out, for two colours the title names.
    `blank_below` leaves out the numbers smaller than it in size (0.005: the weights that print as 0.00), so that the
    few large ones stand out; the colours still show them.
    """
    values = _matrix("matrix", matrix)
    rows, columns = values.shape
    if hidden is not None:  # a row of masked columns, or a column of masked rows, stretches to the matrix
        hidden = torch.broadcast_to(hidden.detach().cpu(), (rows, columns))
    vmin, vmax, symmetric = _colour_scale(values, value_range, symmetric=symmetric)
    fig = new_figure(min(11, 2.5 + 0.6 * columns), min(7, 1.3 + 0.42 * rows))
    ax = fig.add_subplot()
    image = ax.imshow(values.numpy(), cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto", interpolation="nearest")
    bar = fig.colorbar(image, ax=ax, shrink=0.9, label=colorbar_label) if colorbar or hidden is not None else None
    if bar is not None and bool((values == values.round()).all()) and vmax - vmin <= 10:
        bar.set_ticks(range(math.ceil(vmin), math.floor(vmax) + 1))
    if numbers and rows * columns <= 200:
        _write_values(ax, values, vmin, vmax, symmetric=symmetric, fontsize=7.5, hidden=hidden, blank_below=blank_below)
    if hidden is not None and bool(hidden.any()):
        _draw_hidden(ax, hidden)
        _hidden_legend(bar)
    ax.set_xticks(range(columns), column_labels if column_labels is not None else range(columns),
                  rotation=90 if column_labels is not None else 0)
    ax.set_yticks(range(rows), row_labels if row_labels is not None else range(rows))
    if not numbers:  # thin borders, so that equal neighbouring cells (a column of 1s) can still be counted
        ax.set_xticks([c - 0.5 for c in range(1, columns)], minor=True)
        ax.set_yticks([r - 0.5 for r in range(1, rows)], minor=True)
        ax.grid(which="minor", color="0.7", linewidth=0.6)
        ax.tick_params(which="minor", length=0)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    return fig


def one_hot_figure(one_hot: torch.Tensor, *, row_labels: Sequence[str], vocabulary: Sequence[str]) -> Figure:
    """A one-hot matrix in black (1) and white (0), its shape in the title: one row per token (`row_labels`), one
    column per vocabulary entry, labelled with its id and token (`vocabulary`, the tokens in id order)."""
    values = _matrix("one_hot", one_hot)
    if len(row_labels) != values.shape[0] or len(vocabulary) != values.shape[1]:
        raise ValueError(f"give one label per row and one token per column, {values.shape[0]} and {values.shape[1]}; "
                         f"got {len(row_labels)} and {len(vocabulary)}")
    return matrix_figure(values, title=f"one-hot matrix, shape {tuple(values.shape)}: black = 1, white = 0",
                         symmetric=False, value_range=(0, 1), cmap=ListedColormap(["white", "black"]), colorbar=False,
                         xlabel="vocabulary entry: id and token", ylabel="token", row_labels=row_labels,
                         column_labels=[f"{token_id} {token}" for token_id, token in enumerate(vocabulary)], numbers=False)


def matrices_figure(matrices: dict[str, torch.Tensor], *, row_labels: Sequence[str] | None = None,
                    column_labels: Sequence[str] | None = None, cmap: str = DIVERGING, symmetric: bool = True,
                    colorbar_label: str = "value", xlabel: str = "column", ylabel: str = "row",
                    value_range: tuple[float, float] | None = None, clip: bool = False,
                    hidden: dict[str, torch.Tensor] | None = None, hidden_label: str = "masked",
                    hidden_hatch: str = HIDDEN_HATCH, outline_rows: Sequence[int] | dict[str, Sequence[int]] = (),
                    outline_columns: Sequence[int] | dict[str, Sequence[int]] = (), outline_colour: str = "black",
                    labels: dict[str, Sequence[str]] | None = None, hidden_key_under_panel: bool = False,
                    categories: dict[int, str] | None = None) -> Figure:
    """Small matrices side by side on ONE colour scale, so equal colours mean equal numbers across panels.

    `matrices` maps each panel's title to its matrix (1 to 4 panels, one shape; small: each value is written in its
    cell when there is room). `value_range=(low, high)` fixes the scale (attention weights: `(0, 1)`); by default it
    spans the values. With `clip=True` (and a `value_range`) a value beyond it takes the colour of its end (the colour
    bar gets an arrow there, and its label should say so): one outlier no longer pales every other cell.
    `hidden` maps a panel's title to a bool matrix (or one that broadcasts to the panel's shape), True where a mask
    hides the cell: drawn grey and hatched, without a number; `hidden_label` names them in the key. `hidden_hatch=""`
    draws them plain grey, for cells that are not used rather than masked (the hatch then means "masked" alone).
    `outline_rows` and `outline_columns` draw a frame (black, or `outline_colour`) round those rows and columns in every
    panel (one frame round each run of adjacent ones), to point the eye at them; each may also map a panel's title to
    its own rows or columns. `labels` maps each panel's title to its own labels, for its rows and columns alike (square
    maps, such as one sentence's attention weights in two word orders): each panel gets its own row ticks, and short
    labels stay level under the columns.
    Matrices of whole numbers (masks as 0 and 1) get whole-number ticks on the colour bar.
    `hidden_key_under_panel=True` puts the key to hidden cells under the last panel with some. `categories` names each
    value of whole-number matrices (a mask's 1 and 0): the bar then has one named swatch per value, the cells no numbers.
    """
    panels = {title: _matrix(f"matrices[{title!r}]", m) for title, m in matrices.items()}
    rows, columns = next(iter(panels.values())).shape
    hidden = {title: torch.broadcast_to(mask.detach().cpu(), (rows, columns)) for title, mask in (hidden or {}).items()}
    everything = torch.stack(list(panels.values()))
    vmin, vmax, symmetric = _colour_scale(everything, value_range, symmetric=symmetric)
    if categories:  # one colour per named value, each taken from the map where the value sits on the scale
        cmap = ListedColormap([colormaps[cmap]((v - vmin) / ((vmax - vmin) or 1.0)) for v in sorted(categories)])
        vmin, vmax = min(categories) - 0.5, max(categories) + 0.5
    fig = new_figure(min(14, 1.6 + len(panels) * (0.9 + 0.42 * columns)), min(7, 1.6 + 0.36 * rows))
    axes = fig.subplots(1, len(panels), sharey=labels is None, squeeze=False)[0]
    if labels is not None and set(labels) != set(panels):
        raise ValueError(f"labels must name the same panels as matrices, {sorted(panels)}, got {sorted(labels)}")
    for ax, (title, values) in zip(axes, panels.items()):
        image = ax.imshow(values.numpy(), cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto", interpolation="nearest")
        if rows * columns <= 120 and not categories:
            _write_values(ax, values, vmin, vmax, symmetric=symmetric, fontsize=7, hidden=hidden.get(title))
        if title in hidden:
            _draw_hidden(ax, hidden[title], hidden_hatch)
        for first, count in _runs(outline_rows.get(title, ()) if isinstance(outline_rows, dict) else outline_rows):
            ax.add_patch(Rectangle((-0.5, first - 0.5), columns, count, fill=False, edgecolor=outline_colour, linewidth=2))
        for first, count in _runs(outline_columns.get(title, ()) if isinstance(outline_columns, dict) else outline_columns):
            ax.add_patch(Rectangle((first - 0.5, -0.5), count, rows, fill=False, edgecolor=outline_colour, linewidth=2))
        ax.set_xticks(range(columns), column_labels if column_labels is not None else range(columns),
                      rotation=90 if column_labels is not None else 0, fontsize=8)
        if labels is not None:  # this panel's own word order, on both axes
            own = list(labels[title])
            ax.set_xticks(range(columns), own, rotation=0 if max(map(len, own)) <= 5 else 90, fontsize=8)
            ax.set_yticks(range(rows), own, fontsize=8)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel(xlabel)
    if labels is None:
        axes[0].set_yticks(range(rows), row_labels if row_labels is not None else range(rows), fontsize=8)
    axes[0].set_ylabel(ylabel)
    extend = _colour_extend(everything, vmin, vmax) if clip else "neither"
    bar = fig.colorbar(image, ax=list(axes), shrink=0.9, label=colorbar_label, extend=extend)
    if categories:
        bar.set_ticks(sorted(categories), labels=[categories[v] for v in sorted(categories)])
    elif bool((everything == everything.round()).all()) and vmax - vmin <= 10:
        bar.set_ticks(range(math.ceil(vmin), math.floor(vmax) + 1))
    masked = [ax for ax, title in zip(axes, panels) if title in hidden and bool(hidden[title].any())]
    if masked:
        _hidden_legend(bar, hidden_label, hidden_hatch, under=masked[-1] if hidden_key_under_panel else None)
    return fig


# Line colours outside the blue-red heat map's (black, green, purple, orange, grey), each with a white edge, so that a
# line stays plain where it leaves a dark cell.
_LOOKUP_COLOURS = (OKABE_ITO[7], OKABE_ITO[2], OKABE_ITO[5], OKABE_ITO[0], "#777777", OKABE_ITO[6])


def lookup_figure(table: torch.Tensor, rows: torch.Tensor, *, table_labels: Sequence[str], row_labels: Sequence[str],
                  table_title: str = "W_E", rows_title: str = "X") -> Figure:
    """A table and a matrix of its width side by side, on one colour scale, with a line from each row of `rows` to the
    row of `table` equal to it (no line when none is). Each table row the lines meet has its own colour, so an
    embedding lookup shows as rows copied from the table. `table_labels` and `row_labels` name the rows."""
    values, picked = _matrix("table", table), _matrix("rows", rows)
    if picked.shape[1] != values.shape[1]:
        raise ValueError(f"rows must have the table's {values.shape[1]} columns, got {picked.shape[1]}")
    if len(table_labels) != values.shape[0] or len(row_labels) != picked.shape[0]:
        raise ValueError(f"give one label per row, {values.shape[0]} for the table and {picked.shape[0]} for rows; "
                         f"got {len(table_labels)} and {len(row_labels)}")
    vmin, vmax, symmetric = _colour_scale(torch.cat([values, picked]), None, symmetric=True)
    columns = values.shape[1]
    fig = new_figure(min(14, 3.4 + 0.9 * columns), min(7, 1.3 + 0.3 * max(values.shape[0], picked.shape[0])))
    left, right = fig.subplots(1, 2, gridspec_kw={"wspace": 0.35})
    for ax, matrix, title, labels in ((left, values, table_title, table_labels), (right, picked, rows_title, row_labels)):
        image = ax.imshow(matrix.numpy(), cmap=DIVERGING, vmin=vmin, vmax=vmax, aspect="auto", interpolation="nearest")
        _write_values(ax, matrix, vmin, vmax, symmetric=symmetric, fontsize=7)
        ax.set_yticks(range(matrix.shape[0]), labels, fontsize=8)
        ax.set_xticks(range(columns))
        ax.set_xlabel("column")
        ax.set_title(title, fontsize=10)
    right.yaxis.tick_right()  # its labels away from the lines
    fig.colorbar(image, ax=[left, right], shrink=0.6, label="value", location="bottom", aspect=50)
    met = []
    for k, row in enumerate(picked):
        equal = [i for i in range(values.shape[0]) if torch.equal(values[i], row)]
        if not equal:
            continue
        met += [equal[0]] if equal[0] not in met else []
        fig.add_artist(ConnectionPatch(xyA=(columns - 0.5, equal[0]), coordsA=left.transData, xyB=(-0.5, k),
                                       coordsB=right.transData, color=_LOOKUP_COLOURS[met.index(equal[0]) % len(_LOOKUP_COLOURS)],
                                       linewidth=1.2, path_effects=[patheffects.withStroke(linewidth=3, foreground="white")]))
    return fig


def similarity_figure(table: torch.Tensor, *, position: int) -> Figure:
    """PE[p] . PE[q] for every pair of positions (colour bar underneath), and row `position` against the offset q - p."""
    table = _matrix("table", table)
    fig = new_figure(11, 4.6)
    left, right = fig.subplots(1, 2, width_ratios=[1, 1.3])
    image = left.imshow((table @ table.T).numpy(), cmap=DIVERGING, aspect="equal", interpolation="nearest")
    image.set_gid("matrix")
    left.axhline(0, color="black", linewidth=1.2).set_gid("row")
    left.set_xlabel("position q")
    left.set_ylabel("position p")
    left.set_title("every pair of positions", fontsize=10)
    # The colour bar lies under the matrix, its label under it: a bar beside the matrix put its label right next to
    # the profile's axis, where it read as the profile's.
    fig.colorbar(image, ax=left, orientation="horizontal", location="bottom", shrink=0.8, pad=0.02,
                 label="PE[p] . PE[q]")
    right.plot([], [], "o-", color=OKABE_ITO[3], markersize=2.5, linewidth=1)[0].set_gid("profile")
    right.axvline(0, color="#555555", linewidth=1, linestyle="--")
    right.set_xlabel("offset q - p")
    right.set_ylabel("PE[p] . PE[q]")
    right.set_title("", fontsize=10).set_gid("profile_title")
    # Positions and offsets are whole numbers: no tick at 2.5.
    for axis in (left.xaxis, left.yaxis, right.xaxis):
        axis.set_major_locator(MaxNLocator(integer=True))
    update_similarity(fig, table, position=position)
    return fig


def update_similarity(fig: Figure, table: torch.Tensor, *, position: int) -> list:
    """Redraw a figure made by `similarity_figure` for `table` (its size may change), following row `position`.

    Returns the artists it changed, for an explorer that redraws only those.
    """
    table = _matrix("table", table)
    length = table.shape[0]
    image, row, profile, title = (artist(fig, gid) for gid in ("matrix", "row", "profile", "profile_title"))
    similarity = table @ table.T
    limit = float(similarity.abs().max()) or 1.0
    image.set_data(similarity.numpy())
    # One scale for every base, diverging around 0 from -max to +max (as the live explorer draws it): at base 10,000
    # every entry is red, at a small base blue appears, and the two pictures can be compared by their colours.
    image.set_cmap(DIVERGING)
    image.set_clim(-limit, limit)
    image.set_extent((-0.5, length - 0.5, length - 0.5, -0.5))
    image.axes.set_xlim(-0.5, length - 0.5)
    image.axes.set_ylim(length - 0.5, -0.5)
    row.set_ydata([position, position])
    offsets = torch.arange(length) - position
    profile.set_data(offsets.numpy(), similarity[position].numpy())
    # Fitted to the offsets this row has (from -position to length - 1 - position), not to every possible one.
    profile.axes.set_xlim(float(offsets[0]) - 0.5, float(offsets[-1]) + 0.5)
    # From 0 (or the row's lowest value, if below 0) to the peak: the bumps fill the panel, and whether the row comes
    # near 0 still shows. The colours keep the symmetric scale.
    profile.axes.set_ylim(min(0.0, float(similarity[position].min())) - 0.05 * limit, limit * 1.05)
    title.set_text(f"row p = {position} of the matrix, against the offset q - p")
    return [image, row, profile, title]
