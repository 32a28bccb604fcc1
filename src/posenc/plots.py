"""Figures for the suite: pure functions that take numbers and return a Figure.

They build `matplotlib.figure.Figure` objects directly instead of going through
pyplot, so a figure is never registered globally: a notebook decides when to
show it (`show`), a script when to save it (`save_png`), and a widget can redraw
the same figure many times without leaking.

Colours: the diverging map `RdBu_r` for values in [-1, 1] and the Okabe-Ito
palette for lines, both readable with the common colour-vision deficiencies.

A tensor to draw may require grad (it is detached) but must be finite: a NaN or inf
has no colour and no place on an axis, so it is a ValueError.
"""

from __future__ import annotations

import io
import math
import numbers
from collections.abc import Sequence
from pathlib import Path

import torch
import matplotlib
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure
from matplotlib.patches import Circle, FancyArrowPatch, FancyBboxPatch, Rectangle

from ._validate import _short, check_base, check_finite, check_flag, check_floating_tensor, check_size, check_str, check_table_fits
from .encoding import DEFAULT_BASE, sinusoidal_encoding, to_concatenated

__all__ = [
    "OKABE_ITO",
    "DIVERGING",
    "show",
    "png_bytes",
    "save_png",
    "PIPELINE_STEPS",
    "pipeline_diagram",
    "transformer_diagram",
    "matrices_figure",
    "denominators_figure",
    "bar_figure",
    "encoding_heatmap",
    "sine_cosine_curves",
    "interleave_diagram",
    "matrix_figure",
    "similarity_figure",
    "error_by_position",
    "lines_figure",
    "accuracy_by_length",
]

OKABE_ITO = ("#E69F00", "#56B4E9", "#009E73", "#0072B2", "#D55E00", "#CC79A7", "#F0E442", "#000000")
SINE_COLOUR, COSINE_COLOUR = "#E69F00", "#0072B2"
DIVERGING = "RdBu_r"
# For data that is never negative (a similarity of non-negative numbers): light to dark, no false midpoint at 0.
SEQUENTIAL = "viridis"
DPI = 100


# A figure's tick labels and annotations cost time per row and column: these are pictures for people.
MAX_LABELLED_SIDE = 100
MAX_DPI = 600


def _check_figure(fig: object) -> Figure:
    if not isinstance(fig, Figure):
        raise TypeError(f"fig must be a matplotlib Figure (as the functions of posenc.plots return), got {_short(fig)}")
    return fig


def _picture_matrix(name: str, value: object) -> torch.Tensor:
    """A non-empty, finite, floating 2-D tensor to draw, detached and as float32."""
    check_floating_tensor(name, value, ndim=(2,))
    if not value.numel():
        raise ValueError(f"{name} must have at least one row and one column to be drawn, got shape {tuple(value.shape)}")
    return check_finite(name, value.detach().float())


def _cell_text(value: float) -> str:
    """A value written in its cell: two decimals, "0" for an exact zero, never "-0.00"."""
    if not value:
        return "0"
    text = f"{value:.2f}"
    return "0.00" if text == "-0.00" else text


def _check_matrix_options(rows: int, columns: int, *, cmap: object, symmetric: object, row_labels: object,
                          column_labels: object, **texts: object) -> tuple[list[str] | None, list[str] | None]:
    """The options of a matrix picture, checked; returns the labels as lists."""
    for name, text in {"cmap": cmap, **texts}.items():
        check_str(name, text)
    if cmap not in matplotlib.colormaps:
        raise ValueError(f"cmap must be a matplotlib colour map name such as 'RdBu_r' or 'Blues', got {cmap!r}")
    check_flag("symmetric", symmetric)
    return _check_labels("row_labels", row_labels, rows), _check_labels("column_labels", column_labels, columns)


def _write_values(ax, values: torch.Tensor, vmin: float, vmax: float, *, symmetric: bool, fontsize: float) -> None:
    """Each value in its cell: white on the dark ends of the colour map, black elsewhere."""
    limit = max(abs(vmin), abs(vmax)) or 1.0
    whole = bool((values == values.round()).all())  # one-hot rows, counts: "1", not "1.00"
    for r in range(values.shape[0]):
        for c in range(values.shape[1]):
            value = float(values[r, c])
            strength = abs(value) / limit if symmetric else (value - vmin) / ((vmax - vmin) or 1.0)
            ax.text(c, r, f"{value:.0f}" if whole else _cell_text(value), ha="center", va="center", fontsize=fontsize,
                    color="white" if strength > 0.6 else "black")


def _check_labels(name: str, labels: object, count: int) -> list[str] | None:
    if labels is None:
        return None
    if isinstance(labels, str) or not isinstance(labels, Sequence):
        raise TypeError(f"{name} must be a list of {count} str or None, got {_short(labels)}")
    if len(labels) != count or not all(isinstance(label, str) for label in labels):
        raise ValueError(f"{name} must be a list of {count} str, one per row or column, got {_short(labels)}")
    return list(labels)


def png_bytes(fig: Figure, *, dpi: int = DPI) -> bytes:
    """The figure as PNG bytes, identical from run to run (no software or date stamp)."""
    _check_figure(fig)
    dpi = check_size("dpi", dpi, maximum=MAX_DPI)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, metadata={"Software": None})
    return buffer.getvalue()


def save_png(fig: Figure, path: str | Path, *, dpi: int = DPI) -> Path:
    """Write the figure as a PNG file; the folder must exist.

    A bad path is a ValueError naming it; a folder this process may not write to
    raises the system's PermissionError, which names the path too.
    """
    _check_figure(fig)
    if not isinstance(path, (str, Path)):
        raise TypeError(f"path must be a str or a pathlib.Path, got {_short(path)}")
    if not str(path) or "\0" in str(path):
        raise ValueError(f"path must be a file name, got {path!r}")
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"path {str(path)!r} is a folder; give a file name such as {str(path / 'figure.png')!r}")
    if not path.parent.is_dir():
        raise ValueError(f"path {str(path)!r} is in a folder that does not exist: {str(path.parent)!r}")
    path.write_bytes(png_bytes(fig, dpi=dpi))
    return path


def show(fig: Figure) -> None:
    """Display the figure in a notebook as a PNG and nothing else.

    A figure displayed the usual way also stores a text line `<Figure size ...>`
    in the notebook; showing the PNG alone keeps the outputs to what a reader sees.
    """
    from IPython.display import display

    _check_figure(fig)
    display({"image/png": png_bytes(fig)}, raw=True)


def _figure(width: float, height: float) -> Figure:
    return Figure(figsize=(width, height), layout="constrained")


# The input pipeline -------------------------------------------------------------


PIPELINE_STEPS = ("sentence", "pad", "one-hot", "X", "X + PE", "Q, K, V", "attention")


def pipeline_diagram(*, max_sequence_length: int | None = None, vocab_size: int | None = None, d_model: int | None = None,
                     highlight: Sequence[str] = ()) -> Figure:
    """Boxes and arrows: sentence -> padded tokens -> one-hot -> X -> X + PE -> Q, K, V -> attention, with shapes.

    The sizes default to the running example's (`tokens.EXAMPLE_*` and its vocabulary:
    10 tokens, vocab_size 11, d_model 6). `highlight` names the steps a notebook is
    about (from PIPELINE_STEPS); the others are drawn faded.
    """
    from . import tokens

    L = check_size("max_sequence_length", tokens.EXAMPLE_MAX_SEQUENCE_LENGTH if max_sequence_length is None else max_sequence_length)
    V = check_size("vocab_size", tokens.example_vocabulary().vocab_size if vocab_size is None else vocab_size)
    d = check_size("d_model", tokens.EXAMPLE_D_MODEL if d_model is None else d_model)
    if (isinstance(highlight, str) or not isinstance(highlight, Sequence)
            or not all(isinstance(step, str) and step in PIPELINE_STEPS for step in highlight)):
        raise ValueError(f"highlight must be a list of steps from {PIPELINE_STEPS}, got {_short(highlight)}")
    fig = _figure(12.6, 3.1)
    ax = fig.add_subplot()
    ax.set_xlim(0, 12.6)
    ax.set_ylim(0, 3.1)
    ax.axis("off")
    boxes = {
        "sentence": ("sentence", f'"{tokens.EXAMPLE_SENTENCE}"', f"{len(tokens.tokenize(tokens.EXAMPLE_SENTENCE))} words"),
        "pad": ("pad", "my name is john\n<PAD> ... <PAD>", f"{L} tokens"),
        "one-hot": ("one-hot", "one row per token,\na single 1", f"({L}, {V})"),
        "X": ("X = one_hot @ W_E", f"W_E: ({V}, {d})\nlearned", f"({L}, {d})"),
        "X + PE": ("X + PE", "add the sinusoidal\nposition table", f"({L}, {d})"),
        "Q, K, V": ("Q, K, V", "X' @ W_Q, W_K, W_V", f"3 x ({L}, {d})"),
        "attention": ("attention", "softmax(Q Kᵀ / √d_k)\n@ V", f"({L}, {d})"),
    }
    colours = ["#FFFFFF", "#F2F2F2", "#E8F1FA", "#E8F1FA", "#FCEBD2", "#E3F3EC", "#E3F3EC"]
    width, gap = 1.55, 0.26
    for k, step in enumerate(PIPELINE_STEPS):
        title, body, shape = boxes[step]
        on = not highlight or step in highlight
        x = 0.08 + k * (width + gap)
        ax.add_patch(FancyBboxPatch((x, 0.6), width, 1.95, boxstyle="round,pad=0.02,rounding_size=0.12",
                                    facecolor=colours[k], edgecolor="#D55E00" if highlight and on else "#444444",
                                    linewidth=2.6 if highlight and on else 1.1, alpha=1.0 if on else 0.35))
        ink = "#222222" if on else "#AAAAAA"
        ax.text(x + width / 2, 2.27, title, ha="center", va="center", fontsize=9.5, fontweight="bold", color=ink)
        ax.text(x + width / 2, 1.5, body, ha="center", va="center", fontsize=8, color=ink)
        ax.text(x + width / 2, 0.85, shape, ha="center", va="center", fontsize=9.5, family="monospace",
                color="#0072B2" if on else "#AAAAAA")
        if k:
            ax.add_patch(FancyArrowPatch((x - gap + 0.02, 1.55), (x - 0.02, 1.55), arrowstyle="-|>", mutation_scale=13,
                                         color="#444444"))
    caption = f"max_sequence_length = {L},  vocab_size = {V},  d_model = {d}"
    if highlight:
        caption += "        this notebook: " + ", ".join(step for step in PIPELINE_STEPS if step in highlight)
    ax.text(6.3, 0.22, caption, ha="center", va="center", fontsize=9, color="#555555")
    return fig


def transformer_diagram() -> Figure:
    """The encoder and decoder stacks of "Attention Is All You Need" (its figure 1), the input side marked.

    The input side, what this suite builds: token embeddings (scaled by sqrt(d_model)),
    plus the positional encoding, then dropout (sections 3.4 and 5.4 of the paper).
    """
    fig = _figure(8.5, 7.2)
    ax = fig.add_subplot()
    ax.set_xlim(0, 10)
    ax.set_ylim(0, 9.1)
    ax.axis("off")

    def box(x, y, text, colour, width=3.0, height=0.5):
        ax.add_patch(FancyBboxPatch((x - width / 2, y - height / 2), width, height, boxstyle="round,pad=0.02,rounding_size=0.08",
                                    facecolor=colour, edgecolor="#444444", linewidth=1))
        ax.text(x, y, text, ha="center", va="center", fontsize=8.5)

    def arrow(x0, y0, x1, y1):
        ax.add_patch(FancyArrowPatch((x0, y0), (x1, y1), arrowstyle="-|>", mutation_scale=10, color="#444444"))

    # The input side of both stacks, shaded.
    for x in (2.6, 7.4):
        ax.add_patch(FancyBboxPatch((x - 2.0, 0.85), 4.0, 2.1, boxstyle="round,pad=0.02,rounding_size=0.1",
                                    facecolor="#FCEBD2", edgecolor="#D55E00", linewidth=2.2))
    ax.text(5.0, 0.45, "shaded: the input side,\nwhat this suite builds", ha="center", va="center", fontsize=8.5,
            color="#D55E00", fontweight="bold")
    stacks = {
        2.6: ("encoder", "inputs", "input embedding x sqrt(d_model)",
              [("multi-head attention", "#FFE8A8"), ("add & norm", "#F2F2F2"), ("feed forward", "#D6EAF8"),
               ("add & norm", "#F2F2F2")]),
        7.4: ("decoder", "outputs (shifted right)", "output embedding x sqrt(d_model)",
              [("masked multi-head attention", "#FFE8A8"), ("add & norm", "#F2F2F2"),
               ("multi-head attention\n(keys, values from the encoder)", "#FFE8A8"), ("add & norm", "#F2F2F2"),
               ("feed forward", "#D6EAF8"), ("add & norm", "#F2F2F2")]),
    }
    tops = {}
    for x, (name, source, embedding_text, layers) in stacks.items():
        ax.text(x, 0.45, source, ha="center", va="center", fontsize=9, style="italic")
        box(x, 1.25, embedding_text, "#E8F1FA", width=3.4)
        arrow(x, 0.6, x, 1.0)
        ax.add_patch(Circle((x, 1.95), 0.17, facecolor="white", edgecolor="#444444"))
        ax.text(x, 1.95, "+", ha="center", va="center", fontsize=11)
        ax.text(x - 0.35, 1.95, "positional\nencoding", ha="right", va="center", fontsize=8)
        arrow(x, 1.5, x, 1.78)
        box(x, 2.6, "dropout", "#FFFFFF", width=1.6, height=0.4)
        arrow(x, 2.12, x, 2.4)
        y0 = 3.25
        height = 0.62 * len(layers) + 0.3
        ax.add_patch(FancyBboxPatch((x - 1.85, y0), 3.7, height, boxstyle="round,pad=0.02,rounding_size=0.12",
                                    facecolor="#FAFAFA", edgecolor="#777777", linewidth=1))
        # Outside each stack, away from the arrow between them.
        ax.text(x + (-1.95 if x < 5 else 1.95), y0 + height / 2, "N x", ha="right" if x < 5 else "left", va="center",
                fontsize=10)
        arrow(x, 2.8, x, y0 + 0.2)
        for k, (text, colour) in enumerate(layers):
            box(x, y0 + 0.45 + 0.62 * k, text, colour, width=3.2, height=0.5 if "\n" not in text else 0.56)
        tops[name] = y0 + height
        ax.text(x, 0.05, name, ha="center", va="bottom", fontsize=10, fontweight="bold")
    arrow(2.6 + 1.85, tops["encoder"] - 0.3, 7.4 - 1.6, 3.25 + 0.45 + 0.62 * 2)
    box(7.4, tops["decoder"] + 0.45, "linear", "#E3F3EC", width=2.0, height=0.4)
    box(7.4, tops["decoder"] + 1.05, "softmax", "#E3F3EC", width=2.0, height=0.4)
    arrow(7.4, tops["decoder"], 7.4, tops["decoder"] + 0.25)
    arrow(7.4, tops["decoder"] + 0.65, 7.4, tops["decoder"] + 0.85)
    ax.text(7.4, tops["decoder"] + 1.55, "output probabilities", ha="center", va="center", fontsize=9, style="italic")
    ax.set_title('The Transformer of "Attention Is All You Need" (after its figure 1)', fontsize=11)
    return fig


# The encoding table --------------------------------------------------------------


def encoding_heatmap(table: torch.Tensor | None = None, *, max_sequence_length: int = 64, d_model: int = 128,
                     base: float = DEFAULT_BASE, title: str | None = None, annotate: bool | None = None) -> Figure:
    """The table as an image: rows are positions, columns are dimensions.

    Pass a `table` to draw it, or the sizes to draw the sinusoidal table. Small
    tables (at most 12 x 12) get their values written in the cells.
    """
    if table is None:
        table = sinusoidal_encoding(max_sequence_length=max_sequence_length, d_model=d_model, base=base)
    table = _picture_matrix("table", table)
    check_str("title", title, optional=True)
    rows, columns = table.shape
    annotate = rows * columns <= 144 if annotate is None else check_flag("annotate", annotate)
    if annotate and rows * columns > 400:
        raise ValueError(f"annotate=True writes every value in its cell; a ({rows}, {columns}) table has too many "
                         "(at most 400 cells): pass annotate=False")
    fig = _figure(min(10, 3 + 0.55 * columns) if annotate else 8, min(6.5, 1.2 + 0.42 * rows) if annotate else 5)
    ax = fig.add_subplot()
    image = ax.imshow(table.numpy(), cmap=DIVERGING, vmin=-1, vmax=1, aspect="auto", interpolation="nearest")
    ax.set_xlabel("dimension (column) j")
    ax.set_ylabel("position pos")
    ax.set_title(title or f"positional encoding, {rows} positions x d_model = {columns}")
    fig.colorbar(image, ax=ax, shrink=0.9, label="PE(pos, j)")
    if annotate:
        for r in range(rows):
            for c in range(columns):
                value = float(table[r, c])
                ax.text(c, r, f"{value:.2f}", ha="center", va="center", fontsize=8, color="white" if abs(value) > 0.6 else "black")
        ax.set_xticks(range(columns), [f"{j}\n{'sin' if j % 2 == 0 else 'cos'}" for j in range(columns)])
        ax.set_yticks(range(rows))
    return fig


def sine_cosine_curves(*, d_model: int = 128, columns: Sequence[int] = (0, 1, 10, 11, 40, 41), max_sequence_length: int = 64,
                       base: float = DEFAULT_BASE, position: int | None = None) -> Figure:
    """Each chosen column of PE as a curve over positions, the integer positions marked.

    The curves are the continuous sin/cos; the dots are the values the table holds.
    """
    d_model = check_size("d_model", d_model)
    # The curves are drawn at 20 points per position.
    max_sequence_length = check_size("max_sequence_length", max_sequence_length, maximum=100_000)
    check_table_fits((max_sequence_length, d_model), torch.float64, name="table to draw")
    if isinstance(columns, str) or not isinstance(columns, Sequence):
        raise TypeError(f"columns must be a list of column numbers, got {_short(columns)}")
    columns = list(columns)
    if not 1 <= len(columns) <= 12:
        raise ValueError(f"columns must name 1 to 12 columns (one panel each), got {len(columns)}")
    for j in columns:
        if isinstance(j, bool) or not isinstance(j, numbers.Integral) or not 0 <= j < d_model:
            raise ValueError(f"columns must be ints in [0, d_model={d_model}), got {_short(j)}")
    if position is not None:
        position = check_size("position", position, minimum=0, maximum=max_sequence_length - 1)
    table = sinusoidal_encoding(max_sequence_length=max_sequence_length, d_model=d_model, base=base, dtype=torch.float64)
    fine = torch.linspace(0, max_sequence_length - 1, 20 * max_sequence_length, dtype=torch.float64)
    fig = _figure(9, 1.1 + 0.95 * len(columns))
    axes = fig.subplots(len(columns), 1, sharex=True, squeeze=False)[:, 0]
    for ax, j in zip(axes, columns):
        denominator = base ** (2 * (j // 2) / d_model)
        wave = torch.sin if j % 2 == 0 else torch.cos
        colour = SINE_COLOUR if j % 2 == 0 else COSINE_COLOUR
        ax.plot(fine.numpy(), wave(fine / denominator).numpy(), color=colour, linewidth=1.4)
        ax.plot(range(max_sequence_length), table[:, j].numpy(), "o", color=colour, markersize=2.5)
        if position is not None:
            ax.axvline(position, color="#555555", linewidth=1, linestyle="--")
            ax.plot([position], [float(table[position, j])], "o", color="black", markersize=5)
        ax.set_ylim(-1.15, 1.15)
        ax.set_yticks([-1, 0, 1])
        name = "sin" if j % 2 == 0 else "cos"
        ax.set_ylabel(f"j = {j}", rotation=0, ha="right", va="center")
        ax.text(1.0, 1.0, f"{name}(pos / {denominator:.4g}),  wavelength {2 * math.pi * denominator:.4g}",
                transform=ax.transAxes, ha="right", va="bottom", fontsize=8.5)
    axes[-1].set_xlabel("position pos")
    fig.suptitle(f"columns of PE, d_model = {d_model}: low columns turn fast, high columns slowly", fontsize=11)
    return fig


def interleave_diagram(*, d_model: int = 6, rows: int = 3) -> Figure:
    """How stack(dim=2) + flatten turns even_PE and odd_PE into sin, cos, sin, cos, ... columns.

    One labelled square per entry, so the sizes are small: d_model up to 24, rows up to 12.
    """
    d_model = check_size("d_model", d_model, maximum=24)
    rows = check_size("rows", rows, maximum=12)
    n_sin, n_cos = (d_model + 1) // 2, d_model // 2
    fig = _figure(11, 1.4 + 0.5 * rows)
    ax = fig.add_subplot()
    ax.axis("off")
    ax.set_aspect("equal")

    def cell(x, y, label, colour):
        ax.add_patch(Rectangle((x, y), 1, 1, facecolor=colour, edgecolor="white", linewidth=1.5))
        ax.text(x + 0.5, y + 0.5, label, ha="center", va="center", fontsize=7.5, color="white" if colour == COSINE_COLOUR else "black")

    def block(x0, layout, caption):
        for r in range(rows):
            for c, (label, colour) in enumerate(layout):
                cell(x0 + c, rows - 1 - r, label.format(r=r), colour)
        ax.text(x0 + len(layout) / 2, rows + 0.35, caption, ha="center", va="bottom", fontsize=9)
        return x0 + len(layout)

    sines = [(f"s{k}" "\npos {r}", SINE_COLOUR) for k in range(n_sin)]
    cosines = [(f"c{k}" "\npos {r}", COSINE_COLOUR) for k in range(n_cos)]
    x = block(0, sines, f"even_PE ({rows}, {n_sin})\nsin columns")
    x = block(x + 0.6, cosines, f"odd_PE ({rows}, {n_cos})\ncos columns")
    ax.annotate("", xy=(x + 1.6, rows / 2), xytext=(x + 0.3, rows / 2), arrowprops=dict(arrowstyle="-|>", color="#444444"))
    ax.text(x + 0.95, rows / 2 + 0.25, "stack\ndim=2", ha="center", va="bottom", fontsize=8)
    # The stacked tensor: each position holds n pairs (sin_k, cos_k).
    pairs = []
    for k in range(n_sin):
        pairs.append((f"s{k}" "\npos {r}", SINE_COLOUR))
        pairs.append((f"c{k}" "\npos {r}", COSINE_COLOUR) if k < n_cos else ("pad", "#DDDDDD"))
    x0 = x + 1.9
    for k in range(n_sin):
        ax.add_patch(Rectangle((x0 + 2 * k + 0.15 * k - 0.05, -0.08), 2.1, rows + 0.16, fill=False, edgecolor="#777777", linewidth=0.8, linestyle=":"))
        for r in range(rows):
            for half in range(2):
                label, colour = pairs[2 * k + half]
                cell(x0 + 2 * k + 0.15 * k + half, rows - 1 - r, label.format(r=r), colour)
    x = x0 + 2.15 * n_sin
    ax.text((x0 + x) / 2, rows + 0.35, f"stacked ({rows}, {n_sin}, 2)\n{n_sin} (sin, cos) pairs", ha="center", va="bottom", fontsize=9)
    ax.annotate("", xy=(x + 1.4, rows / 2), xytext=(x + 0.2, rows / 2), arrowprops=dict(arrowstyle="-|>", color="#444444"))
    ax.text(x + 0.8, rows / 2 + 0.25, "flatten\n1..2", ha="center", va="bottom", fontsize=8)
    caption = f"PE ({rows}, {d_model})\nsin, cos, sin, cos, ..."
    if d_model % 2:
        caption = f"PE ({rows}, {d_model})\nlast 'pad' column cut off"
    block(x + 1.7, pairs[:d_model], caption)
    ax.set_xlim(-0.2, x + 1.9 + d_model)
    ax.set_ylim(-0.3, rows + 1.4)
    return fig


def matrix_figure(matrix: torch.Tensor, *, title: str, xlabel: str = "column", ylabel: str = "row",
                  row_labels: Sequence[str] | None = None, column_labels: Sequence[str] | None = None,
                  cmap: str = DIVERGING, symmetric: bool = True, colorbar_label: str = "value") -> Figure:
    """Any small matrix (one-hot rows, X, scores) as an annotated image, at most 100 x 100 (one tick per row and column).

    A matrix of whole numbers (one-hot rows) gets a colour bar with whole-number ticks.
    """
    values = _picture_matrix("matrix", matrix)
    rows, columns = values.shape
    if max(rows, columns) > MAX_LABELLED_SIDE:
        raise ValueError(f"matrix must be at most {MAX_LABELLED_SIDE} x {MAX_LABELLED_SIDE} (a tick per row and column), "
                         f"got shape {tuple(values.shape)}; draw a large table with encoding_heatmap")
    row_labels, column_labels = _check_matrix_options(rows, columns, cmap=cmap, symmetric=symmetric,
                                                      row_labels=row_labels, column_labels=column_labels,
                                                      title=title, xlabel=xlabel, ylabel=ylabel,
                                                      colorbar_label=colorbar_label)
    limit = float(values.abs().max()) or 1.0
    fig = _figure(min(11, 2.5 + 0.6 * columns), min(7, 1.3 + 0.42 * rows))
    ax = fig.add_subplot()
    vmin, vmax = (-limit, limit) if symmetric else (float(values.min()), float(values.max()))
    image = ax.imshow(values.numpy(), cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto", interpolation="nearest")
    bar = fig.colorbar(image, ax=ax, shrink=0.9, label=colorbar_label)
    if bool((values == values.round()).all()) and vmax - vmin <= 10:
        bar.set_ticks(range(math.ceil(vmin), math.floor(vmax) + 1))
    if rows * columns <= 200:
        _write_values(ax, values, vmin, vmax, symmetric=symmetric, fontsize=7.5)
    ax.set_xticks(range(columns), column_labels if column_labels is not None else range(columns),
                  rotation=90 if column_labels is not None else 0)
    ax.set_yticks(range(rows), row_labels if row_labels is not None else range(rows))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    return fig


def matrices_figure(matrices: dict[str, torch.Tensor], *, row_labels: Sequence[str] | None = None,
                    column_labels: Sequence[str] | None = None, cmap: str = DIVERGING, symmetric: bool = True,
                    colorbar_label: str = "value", xlabel: str = "column", ylabel: str = "row") -> Figure:
    """Small matrices side by side on ONE colour scale, so equal colours mean equal numbers across panels.

    `matrices` maps each panel's title to its matrix; all must have one shape (at most
    30 x 30, each value written in its cell when there is room).
    """
    if not isinstance(matrices, dict) or not 1 <= len(matrices) <= 4:
        raise TypeError(f"matrices must be a dict of 1 to 4 titles -> matrices, got {_short(matrices)}")
    panels = {check_str("matrices' titles", title): _picture_matrix(f"matrices[{title!r}]", m) for title, m in matrices.items()}
    shapes = {tuple(m.shape) for m in panels.values()}
    if len(shapes) != 1:
        raise ValueError(f"matrices must all have one shape, got {sorted(shapes)}")
    rows, columns = shapes.pop()
    if max(rows, columns) > 30:
        raise ValueError(f"matrices must be at most 30 x 30 to be compared cell by cell, got ({rows}, {columns})")
    row_labels, column_labels = _check_matrix_options(rows, columns, cmap=cmap, symmetric=symmetric,
                                                      row_labels=row_labels, column_labels=column_labels,
                                                      colorbar_label=colorbar_label, xlabel=xlabel, ylabel=ylabel)
    everything = torch.stack(list(panels.values()))
    limit = float(everything.abs().max()) or 1.0
    vmin, vmax = (-limit, limit) if symmetric else (float(everything.min()), float(everything.max()) or 1.0)
    fig = _figure(min(14, 1.6 + len(panels) * (0.9 + 0.42 * columns)), min(7, 1.6 + 0.36 * rows))
    axes = fig.subplots(1, len(panels), sharey=True, squeeze=False)[0]
    for ax, (title, values) in zip(axes, panels.items()):
        image = ax.imshow(values.numpy(), cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto", interpolation="nearest")
        if rows * columns <= 120:
            _write_values(ax, values, vmin, vmax, symmetric=symmetric, fontsize=7)
        ax.set_xticks(range(columns), column_labels if column_labels is not None else range(columns),
                      rotation=90 if column_labels is not None else 0, fontsize=8)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel(xlabel)
    axes[0].set_yticks(range(rows), row_labels if row_labels is not None else range(rows), fontsize=8)
    axes[0].set_ylabel(ylabel)
    fig.colorbar(image, ax=list(axes), shrink=0.9, label=colorbar_label)
    return fig


def denominators_figure(*, d_model: int = 6, base: float = DEFAULT_BASE) -> Figure:
    """The denominators base^(2i/d_model) against 2i, on a log axis: a straight line.

    A straight line on a log axis is an exponential, which is why most code writes the
    same numbers as exp(2i * ln(base) / d_model) (or its reciprocal, exp(-2i ln(base) / d_model)).
    """
    d_model = check_size("d_model", d_model, maximum=4096)
    base = check_base(base)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)
    fig = _figure(7, 3.6)
    ax = fig.add_subplot()
    between = torch.linspace(0, float(two_i[-1]), 200, dtype=torch.float64)
    ax.semilogy(between.numpy(), torch.pow(base, between / d_model).numpy(), "-", color="#BBBBBB", linewidth=1,
                label="the same formula between the columns")
    ax.semilogy(two_i.numpy(), torch.pow(base, two_i / d_model).numpy(), "o", color=OKABE_ITO[3], markersize=9,
                label="power form: base ** (2i / d_model)")
    ax.semilogy(two_i.numpy(), torch.exp(two_i * math.log(base) / d_model).numpy(), "x", color=OKABE_ITO[4], markersize=9,
                mew=2, label="log-space form: exp(2i ln(base) / d_model)")
    ax.set_xlabel("2i (the even column index)")
    ax.set_ylabel("denominator (log scale)")
    ax.set_title(f"the denominators for d_model = {d_model}: one straight line on a log axis", fontsize=10)
    ax.legend(fontsize=8)
    return fig


def bar_figure(values: dict[str, float], *, title: str, ylabel: str, log: bool = False) -> Figure:
    """One labelled bar per entry of `values`, its value written on top; `log=True` for values of very different sizes."""
    if not isinstance(values, dict) or not 1 <= len(values) <= 12:
        raise TypeError(f"values must be a dict of 1 to 12 labels -> numbers, got {_short(values)}")
    for label, value in values.items():
        check_str("values' labels", label)
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
            raise ValueError(f"values must be finite numbers, got {label!r}: {_short(value)}")
    check_str("title", title)
    check_str("ylabel", ylabel)
    if check_flag("log", log) and any(v <= 0 for v in values.values()):
        raise ValueError(f"values must all be > 0 on a log axis (log=True), got {values}")
    fig = _figure(min(12, 2 + 1.7 * len(values)), 3.8)
    ax = fig.add_subplot()
    colours = [OKABE_ITO[k % len(OKABE_ITO)] for k in range(len(values))]
    bars = ax.bar(list(values), [float(v) for v in values.values()], color=colours, log=log)
    ax.bar_label(bars, fmt="%.1f", fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.tick_params(axis="x", labelsize=8)
    ax.margins(y=0.15)
    return fig


# Figures the explorers redraw in place ----------------------------------------------
#
# Each artist an explorer updates carries a gid, so `artist(fig, gid)` finds it
# without depending on the order in which the figure was built.


def artist(fig: Figure, gid: str):
    """The artist of `fig` tagged with `gid` (raises KeyError naming it if there is none)."""
    for found in fig.findobj(lambda a: a.get_gid() == gid):
        return found
    raise KeyError(f"figure has no artist with gid {gid!r}")


def _marked_heatmap(ax, table: torch.Tensor, title: str, prefix: str = ""):
    image = ax.imshow(table.numpy(), cmap=DIVERGING, vmin=-1, vmax=1, aspect="auto", interpolation="nearest")
    image.set_gid(prefix + "table")
    ax.axhline(0, color="black", linewidth=1.2).set_gid(prefix + "position")
    ax.axvline(0, color="black", linewidth=1.2, linestyle="--").set_gid(prefix + "dimension")
    ax.set_xlabel("dimension (column) j")
    ax.set_ylabel("position pos")
    ax.set_title(title, fontsize=10).set_gid(prefix + "title")
    return image


def explorer_heatmap(table: torch.Tensor, *, compare_layouts: bool = False) -> Figure:
    """The table with a line at one position and one dimension; optionally beside its concatenated layout."""
    check_floating_tensor("table", table, ndim=(2,))
    fig = _figure(11 if compare_layouts else 8, 4.6)
    if compare_layouts:
        left, right = fig.subplots(1, 2, sharey=True)
        image = _marked_heatmap(left, table, "interleaved: sin, cos, sin, cos, ...")
        _marked_heatmap(right, to_concatenated(table), "concatenated: all sin, then all cos", prefix="concatenated_")
    else:
        image = _marked_heatmap(fig.add_subplot(), table, "")
    fig.colorbar(image, ax=fig.axes, shrink=0.9, label="PE(pos, j)")
    return fig


def explorer_curves(max_sequence_length: int) -> Figure:
    """Two panels, the chosen column and its sin/cos partner over positions (data set by the explorer)."""
    fig = _figure(8, 4.6)
    axes = fig.subplots(2, 1, sharex=True)
    for k, ax in enumerate(axes):
        ax.plot([], [], linewidth=1.4)[0].set_gid(f"curve{k}")
        ax.plot([], [], "o", markersize=3)[0].set_gid(f"dots{k}")
        ax.plot([], [], "o", color="black", markersize=6)[0].set_gid(f"marker{k}")
        ax.axvline(0, color="#555555", linewidth=1, linestyle="--").set_gid(f"position{k}")
        ax.set_ylim(-1.15, 1.15)
        ax.set_xlim(-0.5, max_sequence_length - 0.5)
        ax.set_ylabel("PE(pos, j)")
        ax.set_title("", fontsize=10).set_gid(f"title{k}")
    axes[1].set_xlabel("position pos")
    return fig


def explorer_wavelengths() -> Figure:
    """The wavelength of every column on a log scale (data set by the explorer)."""
    fig = _figure(8, 4.6)
    ax = fig.add_subplot()
    ax.semilogy([], [], "o", color=SINE_COLOUR, markersize=3, label="sin columns (even j)")[0].set_gid("sin")
    ax.semilogy([], [], "o", color=COSINE_COLOUR, markersize=3, label="cos columns (odd j)")[0].set_gid("cos")
    ax.semilogy([], [], "o", color="black", markersize=8, fillstyle="none", label="chosen dimension")[0].set_gid("marker")
    ax.axhline(1, color="#555555", linewidth=1, linestyle=":", label="max_sequence_length").set_gid("length")
    ax.set_xlabel("dimension (column) j")
    ax.set_ylabel("wavelength (positions)")
    ax.set_title("", fontsize=10).set_gid("title")
    ax.legend(fontsize=8, loc="upper left")
    return fig


def explorer_similarity(table: torch.Tensor) -> Figure:
    """PE[p] . PE[q] as a matrix, and for one p as a function of q - p (data set by the explorer)."""
    check_floating_tensor("table", table, ndim=(2,))
    fig = _figure(11, 4.6)
    left, right = fig.subplots(1, 2, width_ratios=[1, 1.3])
    similarity = table @ table.T
    image = left.imshow(similarity.numpy(), cmap=DIVERGING, aspect="equal", interpolation="nearest")
    image.set_gid("matrix")
    left.axhline(0, color="white", linewidth=1.2).set_gid("row")
    left.set_xlabel("position q")
    left.set_ylabel("position p")
    left.set_title("PE[p] . PE[q]", fontsize=10)
    fig.colorbar(image, ax=left, shrink=0.85, label="PE[p] . PE[q]")
    right.plot([], [], "o-", color=OKABE_ITO[3], markersize=2.5, linewidth=1)[0].set_gid("profile")
    right.axvline(0, color="#555555", linewidth=1, linestyle="--")
    right.set_xlabel("offset q - p")
    right.set_ylabel("PE[p] . PE[q]")
    right.set_title("", fontsize=10).set_gid("profile_title")
    return fig


# The scheme explorer's views (data set by widgets.SchemeExplorer) ------------------------


def explorer_rotary() -> Figure:
    """One word's score with itself against the key's offset: RoPE and the added sinusoid, at the query's
    position and, faint, at position 0."""
    fig = _figure(9, 4.2)
    ax = fig.add_subplot()
    for k, (gid, label) in enumerate([("rotary", "RoPE"), ("sinusoidal", "added sinusoid")]):
        style = _style(2 * k)
        ax.plot([], [], color=style["color"], linewidth=4, alpha=0.25, label=f"{label}, query at 0")[0].set_gid(gid + "_at_0")
        ax.plot([], [], linewidth=1.6, label=f"{label}, query at p", markersize=4, **style)[0].set_gid(gid)
    ax.axvline(0, color="#555555", linewidth=1, linestyle=":")
    ax.set_xlabel("offset of the key (key position - query position)")
    ax.set_ylabel("score")
    ax.set_title("", fontsize=10).set_gid("title")
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5)).set_gid("legend")
    return fig


def explorer_alibi() -> Figure:
    """ALiBi's bias for one head as a matrix, and every head's bias along the last query row."""
    fig = _figure(11, 4.4)
    left, right = fig.subplots(1, 2, width_ratios=[1, 1.2])
    cmap = matplotlib.colormaps["viridis"].with_extremes(bad="#D9D9D9")  # -inf (a masked key) in grey
    image = left.imshow([[0.0]], cmap=cmap, aspect="equal", interpolation="nearest")
    image.set_gid("bias")
    left.set_xlabel("key position j")
    left.set_ylabel("query position i")
    left.set_title("", fontsize=10).set_gid("bias_title")
    fig.colorbar(image, ax=left, shrink=0.85, label="bias added to the score")
    right.add_collection(LineCollection([], colors="#BBBBBB", linewidths=1)).set_gid("heads")
    right.plot([], [], "o-", color=OKABE_ITO[4], markersize=3, linewidth=1.6)[0].set_gid("head")
    right.set_xlabel("key position j")
    right.set_ylabel("bias")
    right.set_title("", fontsize=10).set_gid("row_title")
    return fig


def explorer_learned(before: torch.Tensor, after: torch.Tensor) -> Figure:
    """A learned table before and after training, and how alike one row is to every row (data set by the explorer)."""
    tables = {"before training": _picture_matrix("before", before), "after training": _picture_matrix("after", after)}
    if before.shape != after.shape:
        raise ValueError(f"before and after must have the same shape, got {tuple(before.shape)} and {tuple(after.shape)}")
    fig = _figure(12, 4.2)
    axes = fig.subplots(1, 3, width_ratios=[1, 1, 1.3])
    for ax, (name, table) in zip(axes, tables.items()):
        limit = float(table.abs().max()) or 1.0
        image = ax.imshow(table.numpy(), cmap=DIVERGING, vmin=-limit, vmax=limit, aspect="auto", interpolation="nearest")
        ax.axhline(0, color="black", linewidth=1.2).set_gid(f"{name}_position")
        ax.set_xlabel("dimension")
        ax.set_ylabel("position")
        ax.set_title(f"the table {name}", fontsize=10)
        fig.colorbar(image, ax=ax, shrink=0.85, label="value")
    right = axes[2]
    for k, name in enumerate(tables):
        right.plot([], [], linewidth=1.6, markersize=4, label=name, **_style(3 * k))[0].set_gid(f"{name}_similarity")
    right.set_xlim(-0.5, before.shape[0] - 0.5)
    right.set_ylim(-1.05, 1.05)
    right.set_xlabel("position q")
    right.set_ylabel("cosine similarity of rows p and q")
    right.set_title("", fontsize=10).set_gid("similarity_title")
    right.legend(fontsize=8, loc="lower left")
    return fig


def update_similarity(fig: Figure, table: torch.Tensor, position: int) -> None:
    """Fill a figure made by `explorer_similarity` for `table`, following row `position`."""
    length = table.shape[0]
    similarity = table @ table.T
    limit = float(similarity.abs().max()) or 1.0
    image = artist(fig, "matrix")
    image.set_data(similarity.numpy())
    # Never negative (the usual case): a sequential map from 0. Negative values too (a small base): diverging around 0.
    non_negative = float(similarity.min()) >= 0
    image.set_cmap(SEQUENTIAL if non_negative else DIVERGING)
    image.set_clim(0 if non_negative else -limit, limit)
    artist(fig, "row").set_color("white" if non_negative else "black")
    image.set_extent((-0.5, length - 0.5, length - 0.5, -0.5))
    image.axes.set_xlim(-0.5, length - 0.5)
    image.axes.set_ylim(length - 0.5, -0.5)
    artist(fig, "row").set_ydata([position, position])
    profile = artist(fig, "profile")
    offsets = torch.arange(length) - position
    profile.set_data(offsets.numpy(), similarity[position].numpy())
    # Fitted to the offsets this row has (from -position to length - 1 - position), not to every possible one.
    profile.axes.set_xlim(float(offsets[0]) - 0.5, float(offsets[-1]) + 0.5)
    profile.axes.set_ylim((-0.05 if non_negative else -1.05) * limit, limit * 1.05)
    artist(fig, "profile_title").set_text(f"row p = {position}: highest at q = p, falling off with |q - p|")


def similarity_figure(table: torch.Tensor, *, position: int) -> Figure:
    """PE[p] . PE[q] for every pair of positions, and row `position` against the offset q - p."""
    table = _picture_matrix("table", table)
    check_table_fits((table.shape[0], table.shape[0]), torch.float32, name="similarity matrix",
                     arguments="table (fewer rows)")
    position = check_size("position", position, minimum=0, maximum=table.shape[0] - 1)
    fig = explorer_similarity(table)
    update_similarity(fig, table, position)
    return fig


def error_by_position(positions: Sequence[float], errors: dict[str, Sequence[float]], *, title: str,
                      reference_slope: float | None = None) -> Figure:
    """Max abs error against position, one line per implementation, log-log.

    Errors of 0 are drawn at 1e-10 (a log axis has no 0).
    """
    positions = _positive_numbers("positions", positions)
    if not isinstance(errors, dict) or not errors:
        raise TypeError(f"errors must be a non-empty dict of name -> list of errors, got {_short(errors)}")
    for name, values in errors.items():
        check_str("errors' names", name)
        if len(_positive_numbers(f"errors[{name!r}]", values, zero=True)) != len(positions):
            raise ValueError(f"errors[{name!r}] must hold one error per position ({len(positions)}), got {len(values)}")
    check_str("title", title)
    if reference_slope is not None:
        reference_slope = _positive_numbers("reference_slope", [reference_slope])[0]
    fig = _figure(8, 4.2)
    ax = fig.add_subplot()
    for colour, (name, values) in zip(OKABE_ITO, errors.items()):
        ax.loglog(positions, [max(v, 1e-10) for v in values], "o-", color=colour, label=name, markersize=4)
    if reference_slope is not None:
        ax.loglog(positions, [reference_slope * p for p in positions], ":", color="#555555",
                  label=f"{reference_slope:.2g} x position")
    ax.set_xlabel("position (upper end of the range)")
    ax.set_ylabel("max abs error vs float64")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    return fig


LINE_STYLES = ("-", "--", "-.", ":")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def _series(name: str, series: object, count: int, *, missing: bool = False) -> dict[str, list[float | None]]:
    """A dict of 1 to 8 labels -> `count` finite numbers each (None allowed with missing=True)."""
    if not isinstance(series, dict) or not 1 <= len(series) <= len(MARKERS):
        raise TypeError(f"{name} must be a dict of 1 to {len(MARKERS)} labels -> lists of numbers, got {_short(series)}")
    checked = {}
    for label, values in series.items():
        check_str(f"{name}' labels", label)
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) or len(values) != count:
            raise ValueError(f"{name}[{label!r}] must hold {count} numbers (one per x), got {_short(values)}")
        for value in values:
            if value is None and missing:
                continue
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
                raise ValueError(f"{name}[{label!r}] must hold finite numbers{' or None' if missing else ''}, got {_short(value)}")
        checked[label] = [None if v is None else float(v) for v in values]
    return checked


def _style(k: int) -> dict:
    """Line k's look: colour, marker and line style all differ, so no two lines are told apart by colour alone."""
    return {"color": OKABE_ITO[[3, 0, 2, 4, 5, 1, 7, 6][k % 8]], "marker": MARKERS[k % len(MARKERS)],
            "linestyle": LINE_STYLES[k % len(LINE_STYLES)]}


def lines_figure(x: Sequence[float], series: dict[str, Sequence[float]], *, title: str, xlabel: str, ylabel: str) -> Figure:
    """One line per entry of `series` against `x`, each with its own colour, marker and line style."""
    if isinstance(x, (str, bytes)) or not isinstance(x, Sequence) or not 1 <= len(x) <= 10_000:
        raise TypeError(f"x must be a list of 1 to 10000 numbers, got {_short(x)}")
    xs = _series("x", {"x": x}, len(x))["x"]
    series = _series("series", series, len(xs))
    for name, value in (("title", title), ("xlabel", xlabel), ("ylabel", ylabel)):
        check_str(name, value)
    fig = _figure(9, 3.8)
    ax = fig.add_subplot()
    step = max(1, len(xs) // 12)
    for k, (label, values) in enumerate(series.items()):
        # Each line's markers start a little later, so lines that coincide still show all their markers.
        ax.plot(xs, values, label=label, markersize=4, markevery=(k * step // len(series), step), **_style(k))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    return fig


def accuracy_by_length(accuracies: dict[str, dict[int, float | None]], *, trained: tuple[int, int],
                       baseline: dict[int, float] | None = None, title: str = "Previous-token accuracy") -> Figure:
    """Accuracy against input length, one line per scheme; the trained lengths shaded.

    A None accuracy (a learned table has no rows that far) is drawn as a cross on the
    floor with "no rows", not as 0: the model was not wrong, it had nothing to say.
    `baseline` (length -> accuracy) is drawn as a grey dashed line.
    """
    if not isinstance(accuracies, dict) or not accuracies:
        raise TypeError(f"accuracies must be a dict of scheme -> {{length: accuracy}}, got {_short(accuracies)}")
    lengths = None
    for scheme, by_length in accuracies.items():
        if not isinstance(by_length, dict) or not by_length:
            raise TypeError(f"accuracies[{scheme!r}] must be a dict of length -> accuracy, got {_short(by_length)}")
        if lengths is None:
            lengths = sorted(_positive_numbers("accuracies' lengths", list(by_length)))
        elif sorted(by_length) != lengths:
            raise ValueError(f"accuracies must give every scheme the same lengths, {scheme!r} has {sorted(by_length)}")
    series = _series("accuracies", {s: [v[n] for n in lengths] for s, v in accuracies.items()}, len(lengths), missing=True)
    if not isinstance(trained, tuple) or len(trained) != 2:
        raise TypeError(f"trained must be a tuple (shortest, longest) of trained lengths, got {_short(trained)}")
    shortest, longest = _positive_numbers("trained", list(trained))
    if baseline is not None:
        if not isinstance(baseline, dict) or sorted(baseline) != lengths:
            raise ValueError(f"baseline must be a dict with the same lengths as accuracies ({lengths}), got {_short(baseline)}")
        baseline_values = _series("baseline", {"b": [baseline[n] for n in lengths]}, len(lengths))["b"]
    check_str("title", title)
    fig = _figure(7.5, 4)
    ax = fig.add_subplot()
    ax.axvspan(shortest, longest, color="#DDDDDD", zorder=0, label=f"trained lengths {shortest:g}-{longest:g}")
    for k, (scheme, values) in enumerate(series.items()):
        style = _style(k)
        ax.plot(lengths, [math.nan if v is None else v for v in values], label=scheme, markersize=6, **style)
        for n, v in zip(lengths, values):
            if v is None:
                ax.plot([n], [0.02], marker="x", color=style["color"], markersize=9, linestyle="none")
                ax.annotate("no rows", (n, 0.02), xytext=(6, 4), textcoords="offset points", fontsize=8, color=style["color"])
    if baseline is not None:
        ax.plot(lengths, baseline_values, color="#777777", linestyle=(0, (4, 2)), linewidth=1.5, label="order-blind guess")
    ax.set_xscale("log", base=2)
    ax.set_xticks(lengths, [f"{n:g}" for n in lengths])
    ax.set_xticks([], minor=True)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("input length (tokens)")
    ax.set_ylabel("accuracy (share of positions)")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    return fig


def benchmark_figure(results: dict) -> Figure:
    """Time and precision of the encoding builders against table size, from `benchmarks/results/encoding.json`.

    Each series has its own colour, marker and line style, and hollow markers of
    decreasing size: where two builders take the same time (stack + flatten and slice
    assignment often do), both markers stay visible, one inside the other.
    """
    if not isinstance(results, dict) or not isinstance(results.get("sizes"), list) or not results["sizes"]:
        raise TypeError(f"results must be the benchmark's report (a dict with a non-empty 'sizes' list), got {_short(results)}")
    rows = results["sizes"]
    try:
        entries = [int(r["length"]) * int(r["d_model"]) for r in rows]
        names = list(rows[0]["median_seconds"])
        times = {n: [float(r["median_seconds"][n]) * 1e3 for r in rows] for n in names}
        errors = {n: [max(float(r["max_abs_error"][n]), 1e-9) for r in rows] for n in names if n in rows[0]["max_abs_error"]}
    except (KeyError, TypeError, ValueError) as error:
        raise ValueError(f"results must hold length, d_model, median_seconds and max_abs_error for every size: {error}") from None
    threads = results.get("machine", {}).get("threads", "?") if isinstance(results.get("machine"), dict) else "?"
    fig = _figure(11, 4.4)
    time_ax, error_ax = fig.subplots(1, 2)
    for k, name in enumerate(names):
        style = {**_style(k), "markersize": 11 - 1.5 * k, "fillstyle": "none", "markeredgewidth": 1.4, "linewidth": 1.4}
        time_ax.loglog(entries, times[name], label=name + (" (allocate + fill)" if name == "floor" else ""), **style)
        if name in errors:
            error_ax.loglog(entries, errors[name], label=name, **style)
    time_ax.set(xlabel="table entries (max_sequence_length x d_model)", ylabel="median time (ms)")
    time_ax.set_title("time to build the table (lower is better)", fontsize=10)
    error_ax.axhline(2e-7, color="#555555", linewidth=1, linestyle=":")
    error_ax.text(entries[0], 2.6e-7, "target 2e-7", fontsize=8, color="#555555")
    error_ax.set(xlabel="table entries (max_sequence_length x d_model)", ylabel="max abs error vs float64")
    error_ax.set_title("precision (lower is better)", fontsize=10)
    time_ax.legend(fontsize=8)
    fig.suptitle(f"sinusoidal encoding builders, float32, {threads} threads, CPU", fontsize=11)
    return fig


def _positive_numbers(name: str, values: object, *, zero: bool = False) -> list[float]:
    """A non-empty list of finite real numbers > 0 (>= 0 with zero=True), for a log axis."""
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) or not values:
        raise TypeError(f"{name} must be a non-empty list of numbers, got {_short(values)}")
    for value in values:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"{name} must hold real numbers, got {_short(value)} among them")
        if not math.isfinite(value) or value < 0 or (value == 0 and not zero):
            raise ValueError(f"{name} must hold finite numbers {'>= 0' if zero else '> 0'} (a log axis), got {value!r}")
    return [float(v) for v in values]


def pipeline_panels(padded_tokens: Sequence[str], one_hot_rows: torch.Tensor, X: torch.Tensor, PE: torch.Tensor, *,
                    vocabulary_tokens: Sequence[str] | None = None) -> Figure:
    """one-hot | X | PE | X + PE side by side, one row per token, shapes in the titles."""
    fig = _figure(12, 4.6)
    axes = fig.subplots(1, 4, sharey=True, width_ratios=[1.3, 1, 1, 1])
    panels = [("one_hot", one_hot_rows, "Greys", (0, 1)), ("X", X, DIVERGING, None), ("PE", PE, DIVERGING, (-1, 1)),
              ("X_plus_PE", X + PE, DIVERGING, None)]
    for ax, (name, matrix, cmap, limits) in zip(axes, panels):
        image = ax.imshow(matrix.numpy(), cmap=cmap, aspect="auto", interpolation="nearest")
        image.set_gid(name)
        ax.set_title("", fontsize=10).set_gid(name + "_title")
        ax.set_xlabel("column")
        bar = fig.colorbar(image, ax=ax, shrink=0.8, location="bottom", pad=0.02, aspect=15,
                           label="0 or 1" if name == "one_hot" else "value (X, PE, X + PE: one scale)")
        bar.ax.tick_params(labelsize=7)
        bar.ax.xaxis.label.set_fontsize(8)
        if name == "one_hot":
            bar.set_ticks([0, 1])
    axes[0].set_ylabel("token")
    if vocabulary_tokens is not None:
        axes[0].set_xticks(range(len(vocabulary_tokens)), vocabulary_tokens, rotation=90, fontsize=8)
        axes[0].set_xlabel("vocabulary entry")
    update_pipeline_panels(fig, padded_tokens, one_hot_rows, X, PE)
    return fig


def update_pipeline_panels(fig: Figure, padded_tokens: Sequence[str], one_hot_rows: torch.Tensor, X: torch.Tensor,
                           PE: torch.Tensor) -> None:
    """Put new matrices into a figure made by `pipeline_panels` (sizes may change).

    X, PE and X + PE share one colour scale, so equal colours mean equal numbers across the three panels.
    """
    x_limit = float(max(X.abs().max(), PE.abs().max(), (X + PE).abs().max(), 1.0))
    panels = [("one_hot", one_hot_rows, (0, 1), "one-hot"), ("X", X, (-x_limit, x_limit), "X = one_hot @ W_E"),
              ("PE", PE, (-x_limit, x_limit), "PE"), ("X_plus_PE", X + PE, (-x_limit, x_limit), "X + PE")]
    for name, matrix, limits, label in panels:
        rows, columns = matrix.shape
        image = artist(fig, name)
        image.set_data(matrix.detach().float().numpy())
        image.set_clim(*limits)
        image.set_extent((-0.5, columns - 0.5, rows - 0.5, -0.5))
        image.axes.set_xlim(-0.5, columns - 0.5)
        image.axes.set_ylim(rows - 0.5, -0.5)
        artist(fig, name + "_title").set_text(f"{label}\n{tuple(matrix.shape)}")
    first = artist(fig, "one_hot").axes
    first.set_yticks(range(len(padded_tokens)), [shorten(t) for t in padded_tokens],
                     fontsize=8 if len(padded_tokens) <= 24 else 5)


def shorten(label: str, width: int = 12) -> str:
    """A label cut to `width` characters with an ellipsis: a 5,000-letter word must not push the axes off the figure."""
    return label if len(label) <= width else label[: width - 1] + "…"
