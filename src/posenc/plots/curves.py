"""Curves and bars: columns of the table over positions, denominators, errors, accuracies, timings."""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from matplotlib.colors import is_color_like
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter, MaxNLocator

from .._validate import check_base, check_flag, check_size, check_str, check_table_fits, is_real, is_sequence, short
from ..builder import DEFAULT_BASE, frequencies, sinusoidal_encoding
from .style import COSINE_COLOUR, LINE_STYLES, MARKERS, OKABE_ITO, SCHEME_COLOURS, SINE_COLOUR, line_style, new_figure

__all__ = ["sine_cosine_curves", "denominators_figure", "bar_figure", "error_by_position", "lines_figure",
           "score_by_offset", "accuracy_by_length", "benchmark_figure"]


def sine_cosine_curves(*, d_model: int = 128, columns: Sequence[int] = (0, 1, 10, 11, 40, 41), max_sequence_length: int = 64,
                       base: float = DEFAULT_BASE, position: int | None = None) -> Figure:
    """Each chosen column of PE as a curve over positions, the integer positions marked.

    The curves are the continuous sin/cos; the dots are the values the table holds.
    """
    d_model = check_size("d_model", d_model)
    # The curves are drawn at 20 points per position.
    max_sequence_length = check_size("max_sequence_length", max_sequence_length, maximum=100_000)
    check_table_fits((max_sequence_length, d_model), torch.float64, name="table to draw")
    if not is_sequence(columns):
        raise TypeError(f"columns must be a list of column numbers, got {short(columns)}")
    columns = list(columns)
    if not 1 <= len(columns) <= 12:
        raise ValueError(f"columns must name 1 to 12 columns (one panel each), got {len(columns)}")
    for j in columns:
        if not is_real(j, whole=True) or not 0 <= j < d_model:
            raise ValueError(f"columns must be ints in [0, d_model={d_model}), got {short(j)}")
    if position is not None:
        position = check_size("position", position, minimum=0, maximum=max_sequence_length - 1)
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
                transform=ax.transAxes, ha="right", va="bottom", fontsize=8.5)
    axes[-1].set_xlabel("position pos")
    fig.suptitle(f"columns of PE, d_model = {d_model}: low columns turn fast, high columns slowly", fontsize=11)
    return fig


def denominators_figure(*, d_model: int = 6, base: float = DEFAULT_BASE) -> Figure:
    """The denominators base^(2i/d_model) against 2i, on a log axis: a straight line.

    A straight line on a log axis is an exponential, which is why much code computes the
    reciprocal of each denominator in log space, exp(2i x (-ln(base) / d_model)), and
    multiplies the position by it. Both forms are drawn: the power form, and one over the
    log-space form. The ticks sit at the values 2i takes (0, 2, 4, ...).
    """
    d_model = check_size("d_model", d_model, maximum=4096)
    base = check_base(base)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)
    fig = new_figure(7, 3.6)
    ax = fig.add_subplot()
    between = torch.linspace(0, float(two_i[-1]), 200, dtype=torch.float64)
    ax.semilogy(between.numpy(), torch.pow(base, between / d_model).numpy(), "-", color="#BBBBBB", linewidth=1,
                label="the same formula between the columns")
    ax.semilogy(two_i.numpy(), torch.pow(base, two_i / d_model).numpy(), "o", color=OKABE_ITO[3], markersize=9,
                label="power form: base ** (2i / d_model)")
    ax.semilogy(two_i.numpy(), (1 / torch.exp(two_i * (-math.log(base) / d_model))).numpy(), "x", color=OKABE_ITO[4],
                markersize=9, mew=2, label="1 / log-space form: 1 / exp(2i x (-ln(base) / d_model))")
    # 2i takes only even values: a tick at each of them (at most 12), never at 0.5.
    ax.xaxis.set_major_locator(MaxNLocator(integer=True, steps=[2, 4, 10]) if len(two_i) > 12
                               else FixedLocator(two_i.tolist()))
    ax.set_xlabel("2i (the even column index)")
    ax.set_ylabel("denominator (log scale)")
    ax.set_title(f"the denominators for d_model = {d_model}: one straight line on a log axis", fontsize=10)
    ax.legend(fontsize=8)
    return fig


def bar_figure(values: dict[str, float], *, title: str, ylabel: str, log: bool = False,
               groups: Sequence[str] | None = None) -> Figure:
    """One labelled bar per entry of `values`, its value written on top; `log=True` for values of very different sizes.

    `groups` names the kind of each bar, one name per entry: the bars of a group share a
    colour and the legend says which is which. Without it every bar has its own colour.
    """
    if not isinstance(values, dict) or not 1 <= len(values) <= 12:
        raise TypeError(f"values must be a dict of 1 to 12 labels -> numbers, got {short(values)}")
    for label, value in values.items():
        check_str("values' labels", label)
        if not is_real(value) or not math.isfinite(value):
            raise ValueError(f"values must be finite numbers, got {label!r}: {short(value)}")
    check_str("title", title)
    check_str("ylabel", ylabel)
    if check_flag("log", log) and any(v <= 0 for v in values.values()):
        raise ValueError(f"values must all be > 0 on a log axis (log=True), got {values}")
    if groups is not None:
        if not is_sequence(groups) or not all(isinstance(group, str) for group in groups):
            raise TypeError(f"groups must be a list of str, one per bar, or None, got {short(groups)}")
        if len(groups) != len(values):
            raise ValueError(f"groups must name one group per bar ({len(values)}), got {len(groups)}: {short(groups)}")
    fig = new_figure(min(12, 2 + 1.7 * len(values)), 3.8)
    ax = fig.add_subplot()
    if groups is None:
        colours = [OKABE_ITO[k % len(OKABE_ITO)] for k in range(len(values))]
    else:
        names = list(dict.fromkeys(groups))  # in order of first appearance
        colours = [OKABE_ITO[names.index(group) % len(OKABE_ITO)] for group in groups]
    bars = ax.bar(list(values), [float(v) for v in values.values()], color=colours, log=log)
    ax.bar_label(bars, fmt="%.1f", fontsize=8)
    if groups is not None:
        first = {group: bar for bar, group in reversed(list(zip(bars, groups, strict=True)))}
        ax.legend([first[name] for name in names], names, fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.tick_params(axis="x", labelsize=8)
    ax.margins(y=0.15)
    return fig


def error_by_position(positions: Sequence[float], errors: dict[str, Sequence[float]], *, title: str,
                      reference_slope: float | None = None) -> Figure:
    """Max abs error against position, one line per implementation, log-log.

    Errors of 0 are drawn at 1e-10 (a log axis has no 0).
    """
    positions = _positive_numbers("positions", positions)
    if not isinstance(errors, dict) or not errors:
        raise TypeError(f"errors must be a non-empty dict of name -> list of errors, got {short(errors)}")
    for name, values in errors.items():
        check_str("errors' names", name)
        if len(_positive_numbers(f"errors[{name!r}]", values, zero=True)) != len(positions):
            raise ValueError(f"errors[{name!r}] must hold one error per position ({len(positions)}), got {len(values)}")
    check_str("title", title)
    if reference_slope is not None:
        reference_slope = _positive_numbers("reference_slope", [reference_slope])[0]
    fig = new_figure(8, 4.2)
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


def _series(name: str, series: object, count: int, *, missing: bool = False) -> dict[str, list[float | None]]:
    """A dict of 1 to 8 labels -> `count` finite numbers each (None allowed with missing=True)."""
    if not isinstance(series, dict) or not 1 <= len(series) <= len(MARKERS):
        raise TypeError(f"{name} must be a dict of 1 to {len(MARKERS)} labels -> lists of numbers, got {short(series)}")
    checked = {}
    for label, values in series.items():
        check_str(f"{name}' labels", label)
        if not is_sequence(values) or len(values) != count:
            raise ValueError(f"{name}[{label!r}] must hold {count} numbers (one per x), got {short(values)}")
        for value in values:
            if value is None and missing:
                continue
            if not is_real(value) or not math.isfinite(value):
                raise ValueError(f"{name}[{label!r}] must hold finite numbers{' or None' if missing else ''}, got {short(value)}")
        checked[label] = [None if v is None else float(v) for v in values]
    return checked


def lines_figure(x: Sequence[float], series: dict[str, Sequence[float]], *, title: str, xlabel: str, ylabel: str,
                 colours: dict[str, str] | None = None, marks: Sequence[float] | None = None,
                 log2_x: bool = False) -> Figure:
    """One line per entry of `series` against `x`, each with its own colour, marker and line style.

    `colours` (label -> colour) sets the colour of some lines, e.g. a scheme's colour from
    `SCHEME_COLOURS`; the marker and line style still differ from line to line. `marks` (values
    of `x`) puts the markers there, e.g. at the x of a printed table, so that its numbers can be
    read off the lines; without it, about 12 markers a line. `log2_x` draws x on a base-2 log
    scale (x must then be positive), ticks at powers of two.
    """
    if not is_sequence(x) or not 1 <= len(x) <= 10_000:
        raise TypeError(f"x must be a list of 1 to 10000 numbers, got {short(x)}")
    xs = _series("x", {"x": x}, len(x))["x"]
    series = _series("series", series, len(xs))
    for name, value in (("title", title), ("xlabel", xlabel), ("ylabel", ylabel)):
        check_str(name, value)
    colours = {} if colours is None else colours
    if not isinstance(colours, dict) or not all(label in series and isinstance(colour, str) and is_color_like(colour)
                                                for label, colour in colours.items()):
        raise ValueError(f"colours must be a dict of labels of series -> matplotlib colours such as '#0072B2', "
                         f"got {short(colours)}")
    log2_x = check_flag("log2_x", log2_x)
    if log2_x and min(xs) <= 0:
        raise ValueError(f"x must hold positive numbers for log2_x=True, got {short(min(xs))}")
    marked = None
    if marks is not None:
        if not is_sequence(marks) or not 1 <= len(marks) <= len(xs) or not all(is_real(m) for m in marks):
            raise TypeError(f"marks must be a list of 1 to len(x) = {len(xs)} values of x, got {short(marks)}")
        missing = [m for m in marks if m not in xs]
        if missing:
            raise ValueError(f"marks must be values of x, got {short(missing[0])}, which x does not hold")
        marked = sorted({xs.index(m) for m in marks})
    fig = new_figure(9, 3.8)
    ax = fig.add_subplot()
    step = max(1, len(xs) // 12)
    for k, (label, values) in enumerate(series.items()):
        # Each line's markers start a little later, so lines that coincide still show all their markers.
        style = {**line_style(k), "color": colours.get(label, line_style(k)["color"])}
        ax.plot(xs, values, label=label, markersize=4,
                markevery=marked if marked is not None else (k * step // len(series), step), **style)
    if log2_x:
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))  # 16, not 16.0 or 2^4
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    return fig


# A panel per scheme; more would not be readable one above the other.
MAX_SCORE_PANELS = 4


def score_by_offset(offsets: Sequence[float], scores: dict[str, dict[str, Sequence[float]]], *, title: str,
                    titles: dict[str, str] | None = None, ylabel: str = "score") -> Figure:
    """One panel per position scheme, one above the other: scores against the key's offset from the query.

    `scores` maps a scheme of `SCHEME_COLOURS` ("sinusoidal", "rotary", ...) to its lines (label -> one score per
    offset). Every line of a panel has the scheme's colour and its own line style and marker; the panels share
    both axes, so the schemes' scores compare at a glance. `titles` (scheme -> panel title) defaults to the
    scheme's name. A dotted line marks offset 0, the key at the query's own position.
    """
    if not is_sequence(offsets) or not 1 <= len(offsets) <= 10_000:
        raise TypeError(f"offsets must be a list of 1 to 10000 numbers, got {short(offsets)}")
    xs = _series("offsets", {"offsets": offsets}, len(offsets))["offsets"]
    if not isinstance(scores, dict) or not 1 <= len(scores) <= MAX_SCORE_PANELS:
        raise TypeError(f"scores must be a dict of 1 to {MAX_SCORE_PANELS} schemes -> dicts of lines, got {short(scores)}")
    panels = {}
    for scheme, lines in scores.items():
        if scheme not in SCHEME_COLOURS:
            raise ValueError(f"scores' keys must be schemes of SCHEME_COLOURS {tuple(SCHEME_COLOURS)}, got {short(scheme)}")
        panels[scheme] = _series(f"scores[{scheme!r}]", lines, len(xs))
    titles = {} if titles is None else titles
    if not isinstance(titles, dict) or not all(scheme in panels and isinstance(text, str) for scheme, text in titles.items()):
        raise ValueError(f"titles must be a dict of schemes of scores -> str, got {short(titles)}")
    for name, value in (("title", title), ("ylabel", ylabel)):
        check_str(name, value)
    fig = new_figure(9, 0.8 + 2.4 * len(panels))
    axes = fig.subplots(len(panels), 1, sharex=True, sharey=True, squeeze=False)[:, 0]
    step = max(1, len(xs) // 12)
    for ax, (scheme, lines) in zip(axes, panels.items()):
        for k, (label, values) in enumerate(lines.items()):
            # The lines of a panel differ in style and marker; their markers start a little later each, so lines
            # that lie on each other still show all their markers.
            ax.plot(xs, values, label=label, color=SCHEME_COLOURS[scheme], linestyle=LINE_STYLES[k % len(LINE_STYLES)],
                    marker=MARKERS[k % len(MARKERS)], markersize=4, linewidth=1.4,
                    markevery=(k * step // len(lines), step))
        ax.axvline(0, color="#555555", linewidth=1, linestyle=":")
        ax.set_ylabel(ylabel)
        ax.set_title(titles.get(scheme, scheme), fontsize=10)
        ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    axes[-1].set_xlabel("offset of the key (key position - query position)")
    fig.suptitle(title, fontsize=10)
    return fig


def accuracy_by_length(accuracies: dict[str, dict[int, float | None]], *, trained: tuple[int, int],
                       baseline: dict[int, float] | None = None, title: str = "Previous-token accuracy",
                       baseline_label: str = "order-blind guess") -> Figure:
    """Accuracy against input length, one line per scheme in its colour (`SCHEME_COLOURS`); the trained lengths shaded.

    The lengths are on a log scale (each doubling one step), as the x label says. The
    markers are hollow and each scheme's a size smaller than the one before, so where two
    schemes score the same, both stay visible, one inside the other. A None accuracy (a
    learned table has no rows that far) is a cross in a band below the axis, marked "no
    rows": not on the scale, since the model was not wrong, it had nothing to say.
    `baseline` (length -> accuracy) is drawn as a grey dashed line named `baseline_label`.
    A scheme has the same colour, marker and line style in every figure of the suite.
    """
    if not isinstance(accuracies, dict) or not accuracies:
        raise TypeError(f"accuracies must be a dict of scheme -> {{length: accuracy}}, got {short(accuracies)}")
    lengths = None
    for scheme, by_length in accuracies.items():
        if not isinstance(by_length, dict) or not by_length:
            raise TypeError(f"accuracies[{scheme!r}] must be a dict of length -> accuracy, got {short(by_length)}")
        if lengths is None:
            lengths = sorted(_positive_numbers("accuracies' lengths", list(by_length)))
        elif sorted(by_length) != lengths:
            raise ValueError(f"accuracies must give every scheme the same lengths, {scheme!r} has {sorted(by_length)}")
    series = _series("accuracies", {s: [v[n] for n in lengths] for s, v in accuracies.items()}, len(lengths), missing=True)
    if not isinstance(trained, tuple) or len(trained) != 2:
        raise TypeError(f"trained must be a tuple (shortest, longest) of trained lengths, got {short(trained)}")
    shortest, longest = _positive_numbers("trained", list(trained))
    if baseline is not None:
        if not isinstance(baseline, dict) or sorted(baseline) != lengths:
            raise ValueError(f"baseline must be a dict with the same lengths as accuracies ({lengths}), got {short(baseline)}")
        baseline_values = _series("baseline", {"b": [baseline[n] for n in lengths]}, len(lengths))["b"]
    check_str("title", title)
    check_str("baseline_label", baseline_label)
    fig = new_figure(7.5, 4)
    ax = fig.add_subplot()
    ax.axvspan(shortest, longest, color="#DDDDDD", zorder=0, label=f"trained lengths {shortest:g}-{longest:g}")
    missing = any(v is None for values in series.values() for v in values)
    no_rows = -0.11  # where a None is drawn: in a band below 0, off the accuracy scale
    for k, (scheme, values) in enumerate(series.items()):
        # A known scheme's look comes from its place among SCHEME_COLOURS, so it is the same whichever schemes are drawn.
        style = line_style(list(SCHEME_COLOURS).index(scheme) if scheme in SCHEME_COLOURS else k)
        style["color"] = SCHEME_COLOURS.get(scheme, style["color"])
        size = max(11 - 1.5 * k, 4)  # later schemes smaller: equal values stay visible, one marker inside another
        ax.plot(lengths, [math.nan if v is None else v for v in values], label=scheme, markersize=size,
                fillstyle="none", markeredgewidth=1.6, linewidth=1.4, **style)
        for n, v in zip(lengths, values):
            if v is None:
                ax.plot([n], [no_rows], marker="x", color=style["color"], markersize=8, linestyle="none")
                ax.annotate("no rows", (n, no_rows), xytext=(6, -3), textcoords="offset points", fontsize=8,
                            color=style["color"])
    if baseline is not None:
        ax.plot(lengths, baseline_values, color="#777777", linestyle=(0, (4, 2)), linewidth=1.5, label=baseline_label)
    ax.set_xscale("log", base=2)
    ax.set_xticks(lengths, [f"{n:g}" for n in lengths])
    ax.set_xticks([], minor=True)
    if missing:
        ax.axhspan(-0.18, -0.04, facecolor="white", edgecolor="#999999", linewidth=0.8, zorder=0.5)
        ax.text(0.01, no_rows, "no answer:", transform=ax.get_yaxis_transform(), fontsize=8, color="#555555",
                va="center")
        ax.set_ylim(-0.18, 1.05)
    else:
        ax.set_ylim(0, 1.05)
    ax.set_yticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
    ax.set_xlabel("input length in tokens (log scale)")
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
        raise TypeError(f"results must be the benchmark's report (a dict with a non-empty 'sizes' list), got {short(results)}")
    rows = results["sizes"]
    try:
        entries = [int(r["length"]) * int(r["d_model"]) for r in rows]
        names = list(rows[0]["median_seconds"])
        times = {n: [float(r["median_seconds"][n]) * 1e3 for r in rows] for n in names}
        errors = {n: [max(float(r["max_abs_error"][n]), 1e-9) for r in rows] for n in names if n in rows[0]["max_abs_error"]}
    except (KeyError, TypeError, ValueError) as error:
        raise ValueError(f"results must hold length, d_model, median_seconds and max_abs_error for every size: {error}") from None
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


def _positive_numbers(name: str, values: object, *, zero: bool = False) -> list[float]:
    """A non-empty list of finite real numbers > 0 (>= 0 with zero=True), for a log axis."""
    if not is_sequence(values) or not values:
        raise TypeError(f"{name} must be a non-empty list of numbers, got {short(values)}")
    for value in values:
        if not is_real(value):
            raise TypeError(f"{name} must hold real numbers, got {short(value)} among them")
        if not math.isfinite(value) or value < 0 or (value == 0 and not zero):
            raise ValueError(f"{name} must hold finite numbers {'>= 0' if zero else '> 0'} (a log axis), got {value!r}")
    return [float(v) for v in values]
