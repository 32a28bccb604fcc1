"""Curves and bars: columns of the table over positions, errors, accuracies, timings."""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from .._checks import check_size
from ..builder import DEFAULT_BASE, frequencies, sinusoidal_encoding
from .style import COSINE_COLOUR, LINE_STYLES, MARKERS, SCHEME_COLOURS, SINE_COLOUR, line_style, new_figure

__all__ = ["sine_cosine_curves", "pair_rotation", "error_by_position", "lines_figure", "angle_reached",
           "score_by_offset", "accuracy_by_length", "benchmark_figure"]


def sine_cosine_curves(*, d_model: int = 128, columns: Sequence[int] = (0, 1, 10, 11, 40, 41), max_sequence_length: int = 64,
                       base: float = DEFAULT_BASE, position: int | None = None) -> Figure:
    """Each chosen column of PE as a curve over positions, the integer positions marked.

    The curves are the continuous sin/cos; the dots are the values the table holds.
    """
    columns = list(columns)  # one panel each
    table = sinusoidal_encoding(max_sequence_length=max_sequence_length, d_model=d_model, base=base, dtype=torch.float64)
    angle_per_position = frequencies(d_model=d_model, base=base)
    fine = torch.linspace(0, max_sequence_length - 1, 20 * max_sequence_length, dtype=torch.float64)
    fig = new_figure(9, 1.1 + 0.95 * len(columns))
    axes = fig.subplots(len(columns), 1, sharex=True, squeeze=False)[:, 0]
    for ax, j in zip(axes, columns):
        denominator = 1 / float(angle_per_position[j // 2])
        wave = torch.sin if j % 2 == 0 else torch.cos
        colour = SINE_COLOUR if j % 2 == 0 else COSINE_COLOUR
        ax.plot(fine.numpy(), wave(fine * angle_per_position[j // 2]).numpy(), color=colour, linewidth=1.4)
        ax.plot(range(max_sequence_length), table[:, j].numpy(), "o", color=colour, markersize=2.5)
        if position is not None:
            ax.axvline(position, color="#555555", linewidth=1, linestyle="--")
            ax.plot([position], [float(table[position, j])], "o", color="black", markersize=5)
        ax.set_ylim(-1.15, 1.15)
        ax.set_yticks([-1, 0, 1])
        name = "sin" if j % 2 == 0 else "cos"
        ax.set_ylabel(f"j = {j}", rotation=0, ha="right", va="center")
        ax.text(1.0, 1.0, f"{name}(pos / {denominator:.4g}),  wavelength {2 * math.pi * denominator:.4g}",
                transform=ax.transAxes, ha="right", va="bottom", fontsize=10)
    axes[-1].set_xlabel("position pos")
    fig.suptitle(f"columns of PE, d_model = {d_model}: low columns turn fast, high columns slowly", fontsize=11)
    return fig


def error_by_position(errors: dict[str, Sequence[float]], *, title: str, positions: Sequence[float] | None = None,
                      reference_slope: float | None = None, reference_label: str | None = None,
                      like: Figure | None = None, linear_max: float | None = None,
                      level: tuple[float, str] | Sequence[tuple[float, str]] | None = None, ylabel: str | None = None,
                      first_look: int = 0) -> Figure:
    """Max abs error against position, one line per implementation, log-log; the legend beside the plot.

    Without `positions`, each entry of `errors` holds one error per position 0, 1, 2, ... (e.g. a tensor), and
    each line shows the worst error up to 8 positions a decade, from 10 on. With `positions`, each entry holds one
    error per given position, drawn as it is.

    Each line has its own colour (no two of one hue) and marker; no line is dotted or dash-dotted like the reference
    and level lines. Its markers sit at every len(errors)-th position, each line's one position later than the line
    before: where two lines lie on each other, the markers of both show. `reference_slope` draws
    `reference_slope x position` as a dotted grey line on top of the others, named `reference_label` (by default the
    slope itself). Errors of 0 are drawn at 1e-10 (a log axis has no 0).

    For a second look at some of the same lines: `like` (an earlier figure of this function) gives each line the
    colour, marker and line style of its namesake there; `linear_max` draws the errors on a linear axis from 0 to
    that value (lines above it leave the plot); `level` (value, label) draws a dashed grey horizontal line on top of
    the others (a line that lies on it still shows it), named in the legend (a list of such pairs draws one line
    each, dashed, then dash-dotted); `ylabel` replaces the axis's label (e.g. when the errors are divided by a
    level). `first_look` starts the lines at a later look (colour, marker, line style), so that a figure of other
    lines does not reuse the looks of an earlier one (0 to 7).
    """
    xlabel = "position"
    if positions is None:
        xlabel = "position p (worst error over 0 .. p)"
        length = min(len(values) for values in errors.values())
        ends = torch.logspace(1, math.log10(length), round(8 * (math.log10(length) - 1)) + 1, dtype=torch.float64)
        ends = ends.round().long().clamp(max=length).unique()
        errors = {name: torch.as_tensor(values, dtype=torch.float64)[:length].cummax(dim=0).values[ends - 1].tolist()
                  for name, values in errors.items()}
        positions = ends.tolist()
    positions = [float(p) for p in positions]
    if reference_slope is not None:
        reference_slope = float(reference_slope)
    first_look = check_size("first_look", first_look, minimum=0, maximum=len(_DISTINCT_HUES) - 1)
    fig = new_figure(9, 4.2)
    ax = fig.add_subplot()
    every = max(len(errors), 1)
    for k, (name, values) in enumerate(errors.items(), start=first_look):
        ax.loglog(positions, [max(v, 1e-10) for v in values], color=_DISTINCT_HUES[k % len(_DISTINCT_HUES)],
                  marker=MARKERS[k % len(MARKERS)], linestyle=_ERROR_STYLES[k % len(_ERROR_STYLES)], label=name,
                  markersize=6, markevery=((k - first_look) % every, every), linewidth=1.5)
    if like is not None:
        looks = {line.get_label(): line for line in like.axes[0].get_lines()}
        for line in ax.get_lines():
            if (look := looks.get(line.get_label())) is not None:
                line.set(color=look.get_color(), marker=look.get_marker(), linestyle=look.get_linestyle())
    if reference_slope is not None:
        ax.loglog(positions, [reference_slope * p for p in positions], ":", color="#555555", linewidth=1.8,
                  zorder=3, label=reference_label or f"{reference_slope:.2g} x position")
    levels = [] if level is None else [level] if isinstance(level[0], (int, float)) else list(level)
    for k, (value, label) in enumerate(levels):
        # Dashed, not dotted: the legend tells it from the dotted reference line; over the lines and their markers.
        # A second level is dash-dotted, so the legend tells the two apart too.
        ax.axhline(float(value), color="#555555", linestyle=_LEVEL_STYLES[k % len(_LEVEL_STYLES)], linewidth=1.8,
                   zorder=3, label=label)
    if linear_max is not None:
        ax.set_yscale("linear")
        ax.set_ylim(0, float(linear_max))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel or "max abs error vs float64")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    return fig


# Okabe-Ito's colours, ordered so that the first five are five hues: blue, orange, green, reddish purple, black (its
# vermilion and sky blue, near its orange and blue, come after).
_DISTINCT_HUES = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#000000", "#D55E00", "#56B4E9", "#F0E442")
# The lines' styles: no dotted one (the reference line's) and no dash-dotted one (the second level's: a line that
# reaches that level would look like part of it).
_ERROR_STYLES = ("-", "--", "-", (0, (4, 1.5, 1, 1.5, 1, 1.5)), "-")
_LEVEL_STYLES = ((0, (5, 2.5)), "-.")  # dashed, then dash-dotted


def _floats(values: Sequence[float | None]) -> list[float | None]:
    """The numbers as floats (a None, no value, stays None)."""
    return [None if v is None else float(v) for v in values]


def lines_figure(x: Sequence[float], series: dict[str, Sequence[float]], *, title: str, xlabel: str, ylabel: str,
                 colours: dict[str, str] | None = None, marks: Sequence[float] | None = None,
                 log2_x: bool = False, reference: tuple[str, float] | None = None,
                 log_y: tuple[float, float] | None = None, thin_reference: bool = False) -> Figure:
    """One line per entry of `series` against `x`, each with its own colour, marker and line style.

    `series` holds 1 to 8 lines, one number per x each. `colours` (label -> colour) sets the colour
    of some lines, e.g. a scheme's colour from `SCHEME_COLOURS`; the marker and line style still
    differ from line to line. `marks` (values of `x`) puts the markers there, e.g. at the x of a
    printed table, so that its numbers can be read off the lines; without it, about 12 markers a
    line. `log2_x` draws x on a base-2 log scale (x must then be positive), ticks at powers of two.
    `reference` (label, y) draws a thick light grey solid line across at y, behind the others, named `label` in the
    legend, e.g. an even spread of attention weights. Its look differs from every line's, the dotted one's too.
    `thin_reference` draws it thin, so that markers near it stay visible. `log_y` (bottom, top) draws y on a log scale
    between those limits.
    """
    xs = _floats(x)
    series = {label: _floats(values) for label, values in series.items()}
    colours = {} if colours is None else colours
    marked = None if marks is None else sorted({xs.index(m) for m in marks})
    fig = new_figure(9, 3.8)
    ax = fig.add_subplot()
    step = max(1, len(xs) // 12)
    for k, (label, values) in enumerate(series.items()):
        # Each line's markers start a little later, so lines that coincide still show all their markers.
        style = {**line_style(k), "color": colours.get(label, line_style(k)["color"])}
        ax.plot(xs, values, label=label, markersize=4,
                markevery=marked if marked is not None else (k * step // len(series), step), **style)
    if reference is not None:
        ax.axhline(float(reference[1]), color="#BBBBBB", linewidth=1 if thin_reference else 3.5, linestyle="-", zorder=1,
                   label=reference[0])
    if log2_x:
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))  # 16, not 16.0 or 2^4
    if log_y is not None:
        ax.set(yscale="log", ylim=log_y)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    return fig


def angle_reached(frequencies: dict[str, Sequence[float]], *, position: int) -> Figure:
    """The angle `position * w` each pair reaches, one line per entry of `frequencies` (label -> each pair's `w`).

    The y axis is logarithmic, from 1e-4 to 1e3 radian, with a thin line at 0.1 radian, under which a pair barely moves.
    """
    angles = {label: [position * float(w) for w in values] for label, values in frequencies.items()}
    pairs = range(len(next(iter(angles.values()))))
    return lines_figure(pairs, angles, title=f"The angle each pair reaches at position {position}", xlabel="pair i",
                        ylabel="radian", marks=pairs, reference=("0.1 radian", 0.1), thin_reference=True, log_y=(1e-4, 1e3))


def score_by_offset(offsets: Sequence[float], scores: dict[str, dict[str, Sequence[float]]], *, title: str,
                    titles: dict[str, str] | None = None, ylabel: str = "score",
                    marks: dict[str, Sequence[float]] | None = None, mark_labels: dict[str, str] | None = None,
                    peak: str | None = None) -> Figure:
    """One panel per position scheme, one above the other: scores against the key's offset from the query.

    `scores` maps a scheme of `SCHEME_COLOURS` ("sinusoidal", "rotary", ...; at most 4) to its lines (label -> one score per
    offset). Every line of a panel has the scheme's colour and its own line style and marker; the panels share
    both axes, so the schemes' scores compare at a glance. In a panel of several lines the first is wide and pale,
    the others narrow and dark on top of it: where two lines lie on each other (RoPE's, for any query position),
    both show. `titles` (scheme -> panel title) defaults to the scheme's name. A dotted line marks offset 0, the
    key at the query's own position. `marks` (scheme -> offsets) puts a black dot on that panel's first line at each
    offset, labelled with its score; `mark_labels` (scheme -> text) names that panel's dots in its legend.
    `peak` (a scheme) points an arrow at the highest score of that panel's first line.
    """
    xs = _floats(offsets)
    panels = {scheme: {label: _floats(values) for label, values in lines.items()} for scheme, lines in scores.items()}
    titles = {} if titles is None else titles
    fig = new_figure(9, 0.8 + 2.4 * len(panels))
    axes = fig.subplots(len(panels), 1, sharex=True, sharey=True, squeeze=False)[:, 0]
    step = max(1, len(xs) // 12)
    for ax, (scheme, lines) in zip(axes, panels.items()):
        for k, (label, values) in enumerate(lines.items()):
            # The lines of a panel differ in style and marker; their markers start a little later each, so lines
            # that lie on each other still show all their markers. The first of several is wide and pale, under
            # the others.
            wide = k == 0 and len(lines) > 1
            ax.plot(xs, values, label=label, color=SCHEME_COLOURS[scheme], linestyle=LINE_STYLES[k % len(LINE_STYLES)],
                    marker=MARKERS[k % len(MARKERS)], markersize=6 if wide else 4, linewidth=4 if wide else 1.4,
                    alpha=0.4 if wide else 1.0, markevery=(k * step // len(lines), step))
        ax.axvline(0, color="#555555", linewidth=1, linestyle=":")
        first = next(iter(lines.values()))
        for k, offset in enumerate((marks or {}).get(scheme, ())):
            value = first[xs.index(float(offset))]
            named = (mark_labels or {}).get(scheme) if k == 0 else None  # one legend entry for a panel's dots
            ax.plot([float(offset)], [value], "o", color="black", markersize=4, zorder=5, label=named or "_dot")
            ax.annotate(f"{value:.2f} at offset {offset:+g}" if offset else f"{value:.2f} at offset 0", (float(offset), value),
                        xytext=(8, 10 if offset else -14), textcoords="offset points", fontsize=8)
        if scheme == peak:
            at = max(range(len(xs)), key=lambda i: -math.inf if first[i] is None else first[i])
            ax.annotate(f"peak at offset {xs[at]:+g}", (xs[at], first[at]), xytext=(-130, -8), textcoords="offset points",
                        arrowprops={"arrowstyle": "->"}, fontsize=8)
        ax.set_ylabel(ylabel)
        ax.set_title(titles.get(scheme, scheme), fontsize=10)
        ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    axes[-1].set_xlabel("offset of the key (key position - query position)")
    fig.suptitle(title, fontsize=10)
    return fig


def accuracy_by_length(accuracies: dict[str, dict[int, float | None]], *, trained: tuple[int, int],
                       baseline: dict[int, float] | None = None, title: str = "Previous-token accuracy",
                       baseline_label: str = "order-blind guess", labels: dict[str, str] | None = None,
                       ceiling: tuple[str, dict[int, float]] | None = None) -> Figure:
    """Accuracy against input length, markers only (one per measured length), one scheme per colour; the trained
    lengths shaded.

    The lengths are on a log scale (each doubling one step), as the x label says. Nothing
    joins the markers: only the lengths drawn were measured. Each scheme's hollow markers sit
    a little to the side of the length, in the order of the legend, so where schemes score
    the same, all stay visible. A None
    accuracy (a learned table has no rows that far) is a cross in a band below the axis,
    marked "no rows": not on the scale, since the model was not wrong, it had nothing to say.
    `baseline` (length -> accuracy) is drawn as a grey bar across each length, named
    `baseline_label`. `ceiling` (label, length -> accuracy), e.g. the most a scheme can score, is drawn the same way,
    dashed and black, named `label`. `labels` (scheme -> legend label) names a scheme in the legend, e.g.
    which form of ALiBi it is; its look comes from the scheme. A scheme has the same colour
    and marker in every figure of the suite.
    """
    # Every scheme has the same lengths (as has the baseline).
    lengths = sorted(float(n) for n in next(iter(accuracies.values())))
    series = {scheme: _floats([by_length[n] for n in lengths]) for scheme, by_length in accuracies.items()}
    labels = {} if labels is None else labels
    shortest, longest = (float(n) for n in trained)
    fig = new_figure(7.5, 4)
    ax = fig.add_subplot()
    spread = 2 ** (0.11 * (len(series) - 1) / 2 + 0.06)  # just past the outermost marker of a length (a factor)
    ax.axvspan(shortest / spread, longest * spread, color="#DDDDDD", zorder=0,
               label=f"trained lengths {shortest:g}-{longest:g}")
    if baseline is not None:
        ax.hlines(_floats([baseline[n] for n in lengths]), [n / spread for n in lengths], [n * spread for n in lengths],
                  color="#777777", linewidth=2, label=baseline_label, zorder=1)
    if ceiling is not None:
        ax.hlines(_floats([ceiling[1][n] for n in lengths]), [n / spread for n in lengths], [n * spread for n in lengths],
                  color="black", linewidth=1.4, linestyles="--", label=ceiling[0], zorder=1.5)
    missing = any(v is None for values in series.values() for v in values)
    no_rows = -0.11  # where a None is drawn: in a band below 0, off the accuracy scale
    for k, (scheme, values) in enumerate(series.items()):
        # A known scheme's look comes from its place among SCHEME_COLOURS, so it is the same whichever schemes are drawn.
        style = line_style(list(SCHEME_COLOURS).index(scheme) if scheme in SCHEME_COLOURS else k)
        style["color"] = SCHEME_COLOURS.get(scheme, style["color"])
        style["linestyle"] = "none"
        shift = 2 ** (0.11 * (k - (len(series) - 1) / 2))  # beside the length, in the legend's order
        xs = [n * shift for n in lengths]
        ax.plot(xs, [math.nan if v is None else v for v in values], label=labels.get(scheme, scheme), markersize=8,
                fillstyle="none", markeredgewidth=1.6, zorder=2 + k, **style)
        for x, v in zip(xs, values):
            if v is None:
                ax.plot([x], [no_rows], marker="x", color=style["color"], markersize=8, linestyle="none")
                ax.annotate("no rows", (x, no_rows), xytext=(6, -3), textcoords="offset points", fontsize=8,
                            color=style["color"])
    ax.set_xscale("log", base=2)
    ax.set_xticks(lengths, [f"{n:g}" for n in lengths])
    ax.set_xticks([], minor=True)
    ax.set_xlim(lengths[0] / 2**0.5, lengths[-1] * 2**0.5)
    if missing:
        ax.axhspan(-0.18, -0.04, facecolor="white", edgecolor="#999999", linewidth=0.8, zorder=0.5)
        ax.text(0.01, no_rows, "no answer:", transform=ax.get_yaxis_transform(), fontsize=8, color="#555555",
                va="center")
        ax.set_ylim(-0.18, 1.05)
    else:
        ax.set_ylim(0, 1.05)
    ax.set_yticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
    ax.set_xlabel("input length in tokens (log scale: each tick doubles it)\neach length's markers sit side by side")
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
    rows = results["sizes"]
    entries = [int(r["length"]) * int(r["d_model"]) for r in rows]
    names = list(rows[0]["median_seconds"])
    times = {n: [float(r["median_seconds"][n]) * 1e3 for r in rows] for n in names}
    errors = {n: [max(float(r["max_abs_error"][n]), 1e-9) for r in rows] for n in names if n in rows[0]["max_abs_error"]}
    threads = results.get("machine", {}).get("threads", "?") if isinstance(results.get("machine"), dict) else "?"
    fig = new_figure(11, 4.4)
    time_ax, error_ax = fig.subplots(1, 2)
    for k, name in enumerate(names):
        style = {**line_style(k), "markersize": 11 - 1.5 * k, "fillstyle": "none", "markeredgewidth": 1.4, "linewidth": 1.4}
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



def pair_rotation(*, d_model: int = 6, pair: int = 0, max_sequence_length: int = 10, start: int | None = None,
                  shift: int | None = None, base: float = DEFAULT_BASE) -> Figure:
    """One (sin, cos) pair of PE as a point on the unit circle, one dot per position, sine across and cosine up.

    Position 0 sits at the top, (0, 1); each position rotates the point clockwise by the pair's angle per position.
    With `start` and `shift`, an arrow from the origin marks position `start` and an arc shows the rotation to
    position `start + shift`.
    """
    d_model = check_size("d_model", d_model, minimum=2)
    pair = check_size("pair", pair, minimum=0, maximum=d_model // 2 - 1)
    max_sequence_length = check_size("max_sequence_length", max_sequence_length)
    if (start is None) != (shift is None):
        raise TypeError(f"start and shift go together: give both or neither, got start={start!r}, shift={shift!r}")
    if start is not None:
        start = check_size("start", start, minimum=0)
        shift = check_size("shift", shift)
    angle_per_position = float(frequencies(d_model=d_model, base=base)[pair])
    angles = torch.arange(max_sequence_length, dtype=torch.float64) * angle_per_position
    fig = new_figure(4.4, 4.4)
    ax = fig.add_subplot()
    circle = torch.linspace(0, 2 * math.pi, 200, dtype=torch.float64)
    ax.plot(torch.sin(circle).numpy(), torch.cos(circle).numpy(), color="#BBBBBB", linewidth=1)
    ax.axhline(0, color="#DDDDDD", linewidth=0.8, zorder=0)
    ax.axvline(0, color="#DDDDDD", linewidth=0.8, zorder=0)
    # Faint chords join the positions in order, 0 -> 1 -> 2 ...: equal chords show equal steps.
    ax.plot(torch.sin(angles).numpy(), torch.cos(angles).numpy(), "-", color=COSINE_COLOUR, alpha=0.25, linewidth=0.8)
    ax.plot(torch.sin(angles).numpy(), torch.cos(angles).numpy(), "o", color=COSINE_COLOUR, markersize=5)
    for pos, angle in enumerate(angles.tolist()):
        ax.text(1.17 * math.sin(angle), 1.17 * math.cos(angle), str(pos), ha="center", va="center", fontsize=9)
    if start is not None and shift is not None:
        first, last = start * angle_per_position, (start + shift) * angle_per_position
        for angle in (first, last):
            ax.annotate("", xy=(math.sin(angle), math.cos(angle)), xytext=(0, 0),
                        arrowprops={"arrowstyle": "-|>", "color": SINE_COLOUR, "linewidth": 1.4})
        arc = torch.linspace(first, last, 100, dtype=torch.float64)
        ax.plot((0.4 * torch.sin(arc)).numpy(), (0.4 * torch.cos(arc)).numpy(), color=SINE_COLOUR, linewidth=1.4)
        ax.annotate("", xy=(0.4 * math.sin(last), 0.4 * math.cos(last)),
                    xytext=(0.4 * float(torch.sin(arc[-8])), 0.4 * float(torch.cos(arc[-8]))),
                    arrowprops={"arrowstyle": "-|>", "color": SINE_COLOUR, "linewidth": 1.4})
        middle = (first + last) / 2
        ax.text(0.58 * math.sin(middle), 0.58 * math.cos(middle), f"{shift * angle_per_position:.3g} rad,\nclockwise",
                ha="center", va="center", fontsize=9, color="#333333",
                bbox={"facecolor": "white", "edgecolor": "none", "pad": 1})
    ax.set_aspect("equal")
    ax.set_xlim(-1.35, 1.35)
    ax.set_ylim(-1.35, 1.35)
    ax.set_xticks([-1, 0, 1])
    ax.set_yticks([-1, 0, 1])
    ax.set_xlabel(f"sin, column {2 * pair}")
    ax.set_ylabel(f"cos, column {2 * pair + 1}")
    ax.set_title(f"pair {pair} over positions 0 to {max_sequence_length - 1}:\n"
                 f"each step rotates it {angle_per_position:.3g} rad clockwise", fontsize=10)
    return fig
