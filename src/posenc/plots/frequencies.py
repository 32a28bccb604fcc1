"""Figures for stretching the context: wavelengths per base, the ratio of each rule's frequencies to plain RoPE's,
a loss curve, accuracies over seeds.

Each function takes numbers (the notebook computes them with `posenc.rope_scaling.rope_frequencies`)
and returns a Figure. A rule's line has its colour from `SCHEME_COLOURS` ("pi", "ntk", "yarn",
"llama3"); plain RoPE is "rotary".
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from .style import SCHEME_COLOURS, line_style, new_figure

__all__ = ["wavelengths_by_base", "frequency_ratios", "loss_curve", "accuracy_over_seeds"]

# How the legends name the rules: the names the prose uses, not the code's.
RULE_NAMES = {"rotary": "plain RoPE", "pi": "PI", "ntk": "NTK-aware", "yarn": "YaRN (code's ramp)", "llama3": "Llama 3.1's rule",
              "yarn_paper": "YaRN (paper's ramp)"}
# The short names a figure's ticks may use for the rules, each with the key of its colour.
RULE_KEYS = {"plain": "rotary", "PI": "pi", "NTK-aware": "ntk", "YaRN": "yarn", "Llama 3.1": "llama3"}
# In the ratio figure, no rule is dotted like the reference lines at 1 and 1/factor, which lie under the rules. PI, flat
# at 1/factor, is a broad pale band, so that the rules that reach 1/factor too show their lines over it; YaRN's dashes
# lie over Llama 3.1's line where both keep pairs. The paper's ramp for YaRN is dotted but thick, and its markers set it
# apart from the thin grey reference lines. It takes indigo, from the same "muted" scheme as YaRN's wine, so that the
# two ramps differ in colour as well as in dashes.
RATIO_LINES = {"pi": {"linestyle": "-", "linewidth": 5, "alpha": 0.45}, "ntk": {"linestyle": "-."},
               "yarn": {"linestyle": "--", "zorder": 3}, "llama3": {"linestyle": "-"},
               "yarn_paper": {"linestyle": ":", "linewidth": 2, "color": "#332288", "zorder": 3}}

def _numbers(values: Sequence[float]) -> list[float]:
    """The numbers (a list, or a tensor) as a list of floats."""
    return [float(v) for v in (values.tolist() if hasattr(values, "tolist") else values)]


def _labelled(series: dict[str, Sequence[float]]) -> dict[str, list[float]]:
    return {label: _numbers(values) for label, values in series.items()}


def _style(label: str, k: int) -> dict:
    """A rule's look: its scheme colour if it has one, otherwise the k-th line style."""
    style = line_style(list(SCHEME_COLOURS).index(label) if label in SCHEME_COLOURS else k)
    style["color"] = SCHEME_COLOURS.get(label, style["color"])
    return style


def wavelengths_by_base(wavelengths: dict[str, Sequence[float]], *, context_length: int,
                        title: str = "Wavelength of each pair", context_label: str | None = None) -> Figure:
    """The wavelength (positions per full turn) of each pair, one line per base, on a log scale.

    `wavelengths` maps a label (e.g. "base 10,000") to one wavelength per pair. A dotted line
    marks `context_length`: pairs below it turn at least once within that many positions. Its legend says
    `context_label` (by default, the length in positions).
    """
    series = _labelled(wavelengths)
    fig = new_figure(8, 4)
    ax = fig.add_subplot()
    for k, (label, values) in enumerate(series.items()):
        ax.plot(range(len(values)), values, label=label, markersize=3, markevery=max(1, len(values) // 16),
                **line_style(k))
    ax.axhline(context_length, color="#555555", linestyle=":", linewidth=1.5,
               label=context_label or f"{context_length:,} positions")
    ax.set_yscale("log")
    ax.set_xlabel("pair i (fast pairs on the left, slow on the right)")
    ax.set_ylabel("wavelength (positions per turn)")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="upper left")
    return fig


def frequency_ratios(plain: Sequence[float], scaled: dict[str, Sequence[float]], *, factor: float,
                     title: str = "What each rule does to each pair") -> Figure:
    """Each rule's frequency over plain RoPE's, pair by pair: 1 keeps the pair, 1 / factor interpolates it.

    `plain` and each entry of `scaled` hold one frequency per pair (angle per position).
    The ratio is on a log scale, as the axis says: a ratio that falls exponentially with the pair
    (NTK-aware's) is a straight line there, and a ramp linear in the ratio itself (YaRN's) a curve. The rules are drawn in
    the order given, each in its `RATIO_LINES` style.
    """
    theta = _numbers(plain)
    rules = _labelled(scaled)
    fig = new_figure(8, 3.8)
    ax = fig.add_subplot()
    for k, (rule, values) in enumerate(rules.items()):
        style = _style(rule, k) | RATIO_LINES.get(rule, {})
        label = RULE_NAMES.get(rule, rule)
        if rule == "pi":  # its band hides under every rule that reaches 1 / factor: the legend says so
            label += f" (pale band, under\nthe others at 1/{factor:g})"
        ax.plot(range(len(theta)), [v / t for v, t in zip(values, theta)], label=label, markersize=3,
                markevery=(k, max(1, len(theta) // 12)), **style)
    ax.axhline(1, color="#555555", linestyle=":", linewidth=1, zorder=1)
    ax.axhline(1 / factor, color="#555555", linestyle=":", linewidth=1, zorder=1)
    ax.set_yscale("log", base=2)
    ticks = [1 / factor] + [2.0**-k for k in range(math.ceil(math.log2(factor)) - 1, 0, -1)] + [1]
    ax.set_yticks(ticks, [f"1/{factor:g}: divided by {factor:g}"] + [f"1/{2**k:g}" for k in range(len(ticks) - 2, 0, -1)]
                  + ["1: kept"])
    ax.set_yticks([], minor=True)
    ax.set_xlabel("pair i (fast pairs on the left, slow on the right)")
    ax.set_ylabel("rule's frequency / plain RoPE's (log scale)")
    ax.set_title(title, fontsize=10)
    # Every rule at the one factor, Llama 3.1's too (its own is 8): the legend says so.
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5), title=f"every rule at s = {factor:g}",
              title_fontsize=8)
    return fig


def loss_curve(losses: dict[str, Sequence[float]], *, title: str = "Training loss", window: int = 20) -> Figure:
    """Each run's loss per step (faint) and its moving average over `window` steps, on a log scale."""
    runs = _labelled(losses)
    fig = new_figure(8, 3.4)
    ax = fig.add_subplot()
    for k, (label, values) in enumerate(runs.items()):
        colour = line_style(k)["color"]
        ax.plot(range(1, len(values) + 1), values, color=colour, alpha=0.3, linewidth=0.8)
        width = min(window, len(values))
        averages = [sum(values[max(0, j - width + 1): j + 1]) / (j + 1 - max(0, j - width + 1)) for j in range(len(values))]
        ax.plot(range(1, len(values) + 1), averages, color=colour, linewidth=2, label=f"{label} (mean of {width} steps)")
    ax.set_yscale("log")
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy loss")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    return fig


def _seeds(seeds: Sequence[int]) -> str:
    """"seed 4", "seeds 2 and 5", "seeds 2, 4 and 5"."""
    listed = ", ".join(map(str, seeds[:-1])) + (" and " if len(seeds) > 1 else "") + str(seeds[-1])
    return f"seed{'s' if len(seeds) > 1 else ''} {listed}"


def _clear_spot(x: float, value: float, *, median: float, marks, placed, step: float) -> float:
    """Where a seed's number goes: under its mark or over it, wherever it is clearer of the other marks within a step
    or so, the numbers already written and the median bar (under when both are as clear). A number beside another
    seed's mark reads as that seed's."""
    def crowding(y: float) -> float:
        marked = sum(abs(y - v) < 0.04 for u, v in marks if abs(u - x) < 1.2 * step and (u, v) != (x, value))
        written = sum(abs(y - v) < 0.04 for u, v in placed if abs(u - x) < 1.2 * step)  # "0 1" would read as 01
        # Worst beside another mark, then beside another number, then on the median bar.
        return 2 * marked + 1.5 * written + (abs(y - median) < 0.025) + 9 * (y > 1.0)  # 1.0: the top of the axes

    return min([value - 0.045, value + 0.045], key=crowding)


def accuracy_over_seeds(panels: dict[str, dict[str, Sequence[float]]], *,
                        title: str = "Accuracy of each rule, one mark per seed", seeds: Sequence[int] | None = None,
                        learned: Sequence[int] | None = None, others_are: str = "did not learn the task",
                        references: Mapping[str, Mapping[str, float]] | None = None,
                        shaded: Sequence[str] = (), shaded_are: str = "shaded",
                        tags: Mapping[str, str] | None = None, name_learned: bool = False,
                        ylabel: str = "accuracy (marks: seeds; bar: median)") -> Figure:
    """One panel per entry of `panels` (e.g. an input length): each rule's accuracy per seed as dots, their median a bar.

    `panels` maps a panel's title to {rule: one accuracy (0 to 1) per seed}; every rule of
    every panel holds the same number of seeds, in the same order, and the k-th dot of each
    rule sits at the same small offset, so one seed can be followed across rules. `seeds`
    names them (default 0, 1, ...): each dot carries its seed's number. `learned` lists the
    seeds (by name) that learned the task: theirs are the rule's filled markers and the median
    is theirs alone; the others are open grey circles, described in the legend by `others_are`. By default every seed
    counts as learned. `references` maps a line's description to {panel title: value}: each is drawn across the
    panels it names, dashed, dotted, ..., and named in the legend below the panels. The rules named in `shaded` (one
    kind of head, say) stand on a pale band, named in the legend by `shaded_are`. `tags` maps a reference line's
    description to a short text (its value, say) written over the line's right end, for a line that marks may hide.
    `ylabel` names the accuracy. With `name_learned`, the legend also names the seeds of the coloured marks.
    """
    accuracies = {name: _labelled(rules) for name, rules in panels.items()}
    count = len(next(iter(next(iter(accuracies.values())).values())))
    names = list(range(count)) if seeds is None else [int(seed) for seed in seeds]
    chosen = set(names) if learned is None else {int(seed) for seed in learned}
    most = max(len(rules) for rules in accuracies.values())
    fig = new_figure(max(4.2, 0.8 * most + 0.6) * len(accuracies), 4.4)
    axes = fig.subplots(1, len(accuracies), sharey=True, squeeze=False)[0]
    dashes = ["--", ":", "-."]
    for ax, (name, rules) in zip(axes, accuracies.items(), strict=True):
        for k, (rule, values) in enumerate(rules.items()):
            base = rule.split(",")[0].strip()  # "pi, half" and "PI, half" have PI's colour; "plain" is plain RoPE's
            style = _style(RULE_KEYS.get(base, base), k)
            offsets = [k + 0.64 * (j / max(count - 1, 1) - 0.5) for j in range(count)]
            if rule in shaded:
                ax.axvspan(k - 0.5, k + 0.5, color="#000000", alpha=0.07, linewidth=0, zorder=0)
            kept = sorted(v for v, seed in zip(values, names, strict=True) if seed in chosen)
            half = len(kept) // 2
            median = kept[half] if len(kept) % 2 else (kept[half - 1] + kept[half]) / 2
            # The median first, thin and pale: the dots and their seed numbers are drawn over it.
            ax.plot([k - 0.36, k + 0.36], [median, median], color="#999999", linewidth=2.5, zorder=1, solid_capstyle="butt")
            step = 0.64 / max(count - 1, 1)
            marks, placed = list(zip(offsets, values, strict=True)), []  # placed: (x, y) of the numbers written so far
            for x, value, seed in zip(offsets, values, names, strict=True):
                if seed in chosen:
                    ax.plot([x], [value], linestyle="none", marker=style.get("marker", "o"), color=style["color"],
                            markersize=5, alpha=0.9, zorder=3)
                else:  # a seed that did not learn the task: an open grey circle, whatever the rule's marker
                    ax.plot([x], [value], linestyle="none", marker="o", color="#777777", markersize=5,
                            fillstyle="none", markeredgewidth=1.2, zorder=3)
                y = _clear_spot(x, value, median=median, marks=marks, placed=placed, step=step)
                placed.append((x, y))
                ax.annotate(str(seed), (x, y), ha="center", va="center", fontsize=7.5, color="#333333", zorder=4)
        ax.set_xticks(range(len(rules)), list(rules), fontsize=8, rotation=30, ha="right")
        ax.set_xlim(-0.6, len(rules) - 0.4)
        ax.set_ylim(-0.06, 1.02)  # room below 0 for the seed labels
        ax.set_title(name, fontsize=9)
        ax.grid(axis="y", alpha=0.3)
        for j, (line, values) in enumerate((references or {}).items()):
            if name in values:
                ax.axhline(values[name], color="#333333", linestyle=dashes[j % len(dashes)], linewidth=1, zorder=2)
                if line in (tags or {}):
                    ax.annotate(tags[line], (1, values[name]), xycoords=("axes fraction", "data"), xytext=(-3, 2),
                                textcoords="offset points", ha="right", va="bottom", fontsize=7.5, color="#333333")
    others = [seed for seed in names if seed not in chosen]
    axes[0].set_ylabel(ylabel)
    median = "median of coloured marks" if others else "median"
    if others and name_learned:
        median += f" ({_seeds([seed for seed in names if seed in chosen])})"
    handles = [Line2D([], [], color="#999999", linewidth=2.5, label=median)]
    if others:
        handles.append(Line2D([], [], linestyle="none", marker="o", color="#777777", fillstyle="none",
                              markeredgewidth=1.2, label=f"{_seeds(others)}: {others_are}"))
    handles += [Line2D([], [], color="#333333", linestyle=dashes[j % len(dashes)], linewidth=1, label=label)
                for j, label in enumerate(references or {})]
    if any(rule in shaded for rules in accuracies.values() for rule in rules):
        handles.append(Patch(facecolor="#000000", alpha=0.07, linewidth=0, label=shaded_are))
    fig.legend(handles=handles, loc="outside lower center", ncol=min(len(handles), 3), fontsize=8, frameon=False)
    fig.suptitle(title, fontsize=10)
    return fig

