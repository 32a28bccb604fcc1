"""SchemeExplorer: one view per position scheme beyond the sinusoid, each with its own sliders and figure.

    rotary   RoPE's and the added sinusoid's score of one word with itself against the key's offset
    alibi    ALiBi's bias for one head, and every head's bias along the last query's row
    learned  a learned table before and after training, and how alike one row is to every row

Each scheme is drawn in its colour of `plots.SCHEME_COLOURS`.
"""

from __future__ import annotations

import math

import ipywidgets as widgets
import matplotlib
import torch
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure

from .. import models, plots, schemes
from .._validate import check_flag, check_matrix_to_draw, check_size, short
from ..attention import projection_weights
from ..builder import DEFAULT_BASE
from ..plots import DIVERGING, SCHEME_COLOURS, line_style, new_figure
from .engine import Explorer, Picture, base_slider, check_slider_base

__all__ = ["SCHEME_VIEWS", "SchemeExplorer"]

SCHEME_VIEWS = ("rotary", "alibi", "learned")
# The rotary view: the word and weights of the schemes notebook's RoPE scores, keys up to this far from the query.
ROTARY_D_MODEL, ROTARY_REACH, MAX_QUERY_POSITION = 64, 60, 1000
MAX_HEADS, MAX_ALIBI_LENGTH = 16, 64


class SchemeExplorer(Explorer):
    """One view per position scheme beyond the sinusoid (learned, rotary, ALiBi), each with its own sliders.

        rotary   one word's score with itself against the key's offset, RoPE beside the
                 added sinusoid. Move the query's position: RoPE's curve stays where it
                 is (it depends on the offset only), the added sinusoid's moves. Move the
                 base: both change.
        alibi    ALiBi's bias for one head as a matrix, and every head's bias along the
                 last query's row; the number of heads sets the slopes.
        learned  the learned table of the tiny model trained live, before and after training,
                 and how alike row `position` is to every row: pass `trained`,
                 `models.train("learned")`'s result (the explorer never trains; without
                 it, this view says what to pass).

    >>> explorer = SchemeExplorer(view="alibi", num_heads=8)
    >>> explorer.head.value = 7     # the picture updates
    """

    def __init__(self, *, view: str = "rotary", base: float = DEFAULT_BASE, query_position: int = 100,
                 num_heads: int = 8, head: int = 0, max_sequence_length: int = 16, causal: bool = True,
                 position: int = 0, trained: models.Result | None = None, debounce: float = 0.05) -> None:
        if not isinstance(view, str) or view not in SCHEME_VIEWS:
            raise ValueError(f"view must be one of {SCHEME_VIEWS}, got {short(view)}")
        base = check_slider_base(base)
        query_position = check_size("query_position", query_position, minimum=0, maximum=MAX_QUERY_POSITION)
        num_heads = check_size("num_heads", num_heads, maximum=MAX_HEADS)
        head = check_size("head", head, minimum=0, maximum=num_heads - 1)
        max_sequence_length = check_size("max_sequence_length", max_sequence_length, minimum=2, maximum=MAX_ALIBI_LENGTH)
        causal = check_flag("causal", causal)
        if trained is not None and not (isinstance(trained, models.Result) and trained.scheme == "learned"):
            raise TypeError(f"trained must be models.train('learned')'s result or None, got {short(trained)}")
        self._trained = trained
        rows = trained.model.max_sequence_length if trained is not None else models.Settings().longest
        position = check_size("position", position, minimum=0, maximum=rows - 1)
        super().__init__(debounce=debounce)
        style = {"description_width": "initial"}
        self.view = widgets.ToggleButtons(options=SCHEME_VIEWS, value=view, description="scheme", style=style)
        self.base = base_slider(base)
        self.query_position = widgets.IntSlider(value=query_position, min=0, max=MAX_QUERY_POSITION,
                                                description="query position p", style=style)
        self.num_heads = widgets.IntSlider(value=num_heads, min=1, max=MAX_HEADS, description="num_heads", style=style)
        self.head = widgets.IntSlider(value=head, min=0, max=num_heads - 1, description="head", style=style)
        self.max_sequence_length = widgets.IntSlider(value=max_sequence_length, min=2, max=MAX_ALIBI_LENGTH,
                                                     description="max_sequence_length", style=style)
        self.causal = widgets.Checkbox(value=causal, description="causal (keys after the query masked)", indent=False,
                                       layout=widgets.Layout(width="auto"))
        self.position = widgets.IntSlider(value=position, min=0, max=rows - 1, description="position p", style=style)
        self._controls = {
            "rotary": [widgets.HBox([self.query_position, self.base])],
            "alibi": [widgets.HBox([self.num_heads, self.head]), widgets.HBox([self.max_sequence_length, self.causal])],
            "learned": [self.position],
        }
        self.controls = widgets.VBox()
        self._watch(self.view, self.base, self.query_position, self.num_heads, self.head, self.max_sequence_length,
                    self.causal, self.position)
        self.widget = widgets.VBox([self.view, self.controls, self.image, self.message])
        self._pictures: dict[str, Picture] = {}
        self._word = torch.randn(ROTARY_D_MODEL, generator=torch.Generator().manual_seed(1))
        self._weights = projection_weights(d_model=ROTARY_D_MODEL, seed=0)
        self.redraw()

    @property
    def trained(self) -> models.Result | None:
        """The learned-table model the learned view shows, as passed (None: the view has nothing to show)."""
        return self._trained

    @property
    def figure(self) -> Figure:
        """The figure of the current view."""
        return self._picture().fig

    def _picture(self) -> Picture:
        name = self.view.value
        if name not in self._pictures:
            if name == "rotary":
                picture = Picture(_rotary_figure())
            elif name == "alibi":
                picture = Picture(_alibi_figure())
            else:
                fig = _learned_figure(*self._learned_tables())
                moving = ["before training_position", "after training_position", "before training_similarity",
                          "after training_similarity", "similarity_title"]
                picture = Picture(fig, [plots.artist(fig, gid) for gid in moving])
            self._pictures[name] = picture
        return self._pictures[name]

    def _learned_tables(self) -> tuple[torch.Tensor, torch.Tensor]:
        result = self._trained
        if result is None:
            raise ValueError('trained must be given for the learned view: SchemeExplorer(trained=models.train("learned"))')
        return result.initial_state["position.weight"], result.model.position.weight.detach()

    def _fit_sliders(self) -> None:
        with self._quietly():
            self.head.max = self.num_heads.value - 1  # a head past the new last one moves to it

    def redraw(self) -> None:
        self._fit_sliders()
        view = self.view.value
        self.controls.children = self._controls[view]
        if view == "learned" and self._trained is None:
            self.message.value = ('The learned view shows a trained table: pass trained=models.train("learned") '
                                  "(about a second of training) to SchemeExplorer.")
            return
        picture = self._picture()
        layout, frame, what = {"rotary": self._update_rotary, "alibi": self._update_alibi,
                               "learned": self._update_learned}[view](picture.fig)
        self.message.value = what
        self._show(picture, layout=layout, frame=frame)

    # The three views ----------------------------------------------------------------------

    def _update_rotary(self, fig: Figure) -> tuple:
        p, base = self.query_position.value, float(self.base.value)
        offsets = range(-min(p, ROTARY_REACH), ROTARY_REACH + 1)
        at_0 = range(0, ROTARY_REACH + 1)
        curves = {}
        for scheme in schemes.SCORE_SCHEMES:
            for gid, query, keys in ((scheme, p, offsets), (scheme + "_at_0", 0, at_0)):
                scores = schemes.same_word_scores(self._word, self._weights, scheme=scheme, query_position=query,
                                                  offsets=keys, base=base)
                plots.artist(fig, gid).set_data(list(keys), scores.numpy())
                curves[gid] = scores
        ax = plots.artist(fig, "rotary").axes
        everything = torch.cat(list(curves.values()))
        low, high = float(everything.min()), float(everything.max())
        margin = 0.05 * (high - low) or 1.0
        ax.set_xlim(-ROTARY_REACH - 1, ROTARY_REACH + 1)
        ax.set_ylim(low - margin, high + margin)
        plots.artist(fig, "title").set_text(
            f"One word, query at p = {p}, base = {base:.4g}\nRoPE's curve is the same for every p; the added sinusoid's is not")
        what = (f"Scores of one word with itself against the key's offset, query at position {p}, base {base:g} "
                f"(d_model = {ROTARY_D_MODEL}); faint: the query at position 0")
        return (p, base), None, what

    def _update_alibi(self, fig: Figure) -> tuple:
        num_heads, h = self.num_heads.value, self.head.value
        length, causal = self.max_sequence_length.value, self.causal.value
        bias = schemes.alibi_bias(num_heads=num_heads, max_sequence_length=length, causal=causal, dtype=torch.float64)
        slopes = schemes.alibi_slopes(num_heads=num_heads, dtype=torch.float64)
        image = plots.artist(fig, "bias")
        shown = bias[h].masked_fill(bias[h].isinf(), float("nan"))  # drawn grey, like a masked cell
        image.set_data(shown.numpy())
        image.set_clim(-float(slopes[h]) * (length - 1), 0.0)  # each head on its own scale: the right panel compares them
        image.set_extent((-0.5, length - 0.5, length - 0.5, -0.5))
        image.axes.set_xlim(-0.5, length - 0.5)
        image.axes.set_ylim(length - 0.5, -0.5)
        exponent = -math.log2(float(slopes[h]))
        plots.artist(fig, "bias_title").set_text(
            f"head {h} of {num_heads}: slope 2^-{exponent:.4g} = {float(slopes[h]):.4g}"
            + ("  (grey: masked, -inf)" if causal else ""))
        last = bias[:, -1, :]  # the last query sees every key, masked or not
        keys = list(range(length))
        plots.artist(fig, "heads").set_segments([list(zip(keys, row.tolist())) for row in last])
        plots.artist(fig, "head").set_data(keys, last[h].numpy())
        ax = plots.artist(fig, "head").axes
        ax.set_xlim(-0.5, length - 0.5)
        # The steepest head sets the range. For a head count that is not a power of two that is not head 0
        # (6 heads: 1/4, 1/16, 1/64, 1/256, then 1/2 and 1/8).
        lowest = float(last.min())
        ax.set_ylim(1.05 * lowest - 0.05, -0.05 * lowest + 0.05)
        plots.artist(fig, "row_title").set_text(f"the last query (i = {length - 1}): head {h} in colour, the other heads grey")
        what = (f"ALiBi's bias for head {h} of {num_heads} (slope {float(slopes[h]):.4g}), {length} positions, "
                f"{'causal' if causal else 'not causal'}; right: every head's bias along the last row")
        # The colour bar's tick labels change width with the head's slope: its room is recomputed then.
        return (num_heads, h, length, causal), (len(str(length)), num_heads, h), what

    def _update_learned(self, fig: Figure) -> tuple:
        before, after = self._learned_tables()
        p = self.position.value
        for name, table in (("before training", before), ("after training", after)):
            plots.artist(fig, f"{name}_position").set_ydata([p, p])
            similarity = torch.nn.functional.cosine_similarity(table[p : p + 1], table, dim=-1)
            plots.artist(fig, f"{name}_similarity").set_data(list(range(table.shape[0])), similarity.numpy())
        plots.artist(fig, "similarity_title").set_text(f"row p = {p} against every row q")
        what = (f"A learned table ({before.shape[0]} positions x d_model = {before.shape[1]}) before and after training "
                f"on the previous-token task; right: how alike row {p} is to every row")
        return (), None, what


# The three views' figures (the explorer sets their data) -------------------------------------


def _rotary_figure() -> Figure:
    """One word's score with itself against the key's offset: RoPE and the added sinusoid, at the query's
    position and, faint, at position 0."""
    fig = new_figure(9, 4.2)
    ax = fig.add_subplot()
    for k, (gid, label) in enumerate([("rotary", "RoPE"), ("sinusoidal", "added sinusoid")]):
        style = {**line_style(2 * k), "color": SCHEME_COLOURS[gid]}
        ax.plot([], [], color=style["color"], linewidth=4, alpha=0.25, label=f"{label}, query at 0")[0].set_gid(gid + "_at_0")
        ax.plot([], [], linewidth=1.6, label=f"{label}, query at p", markersize=4, **style)[0].set_gid(gid)
    ax.axvline(0, color="#555555", linewidth=1, linestyle=":")
    ax.set_xlabel("offset of the key (key position - query position)")
    ax.set_ylabel("score")
    ax.set_title("", fontsize=10).set_gid("title")
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5)).set_gid("legend")
    return fig


def _alibi_figure() -> Figure:
    """ALiBi's bias for one head as a matrix, and every head's bias along the last query row."""
    fig = new_figure(11, 4.4)
    left, right = fig.subplots(1, 2, width_ratios=[1, 1.2])
    cmap = matplotlib.colormaps["viridis"].with_extremes(bad="#D9D9D9")  # -inf (a masked key) in grey
    image = left.imshow([[0.0]], cmap=cmap, aspect="equal", interpolation="nearest")
    image.set_gid("bias")
    left.set_xlabel("key position j")
    left.set_ylabel("query position i")
    left.set_title("", fontsize=10).set_gid("bias_title")
    fig.colorbar(image, ax=left, shrink=0.85, label="bias added to the score")
    right.add_collection(LineCollection([], colors="#BBBBBB", linewidths=1)).set_gid("heads")
    right.plot([], [], "o-", color=SCHEME_COLOURS["alibi"], markersize=3, linewidth=1.6)[0].set_gid("head")
    right.set_xlabel("key position j")
    right.set_ylabel("bias")
    right.set_title("", fontsize=10).set_gid("row_title")
    return fig


def _learned_figure(before: torch.Tensor, after: torch.Tensor) -> Figure:
    """A learned table before and after training, and how alike one row is to every row (data set by the explorer)."""
    tables = {"before training": check_matrix_to_draw("before", before), "after training": check_matrix_to_draw("after", after)}
    if before.shape != after.shape:
        raise ValueError(f"before and after must have the same shape, got {tuple(before.shape)} and {tuple(after.shape)}")
    fig = new_figure(12, 4.2)
    axes = fig.subplots(1, 3, width_ratios=[1, 1, 1.3])
    for ax, (name, table) in zip(axes, tables.items()):
        limit = float(table.abs().max()) or 1.0
        image = ax.imshow(table.numpy(), cmap=DIVERGING, vmin=-limit, vmax=limit, aspect="auto", interpolation="nearest")
        ax.axhline(0, color="black", linewidth=1.2).set_gid(f"{name}_position")
        ax.set_xlabel("dimension")
        ax.set_ylabel("position")
        ax.set_title(f"the table {name}", fontsize=10)
        fig.colorbar(image, ax=ax, shrink=0.85, label="value")
    # Room between the panels, or the first colour bar's label runs into the second table's "position".
    fig.get_layout_engine().set(wspace=0.08)
    right = axes[2]
    # After training in the learned table's colour; before, the random start, in grey.
    for k, (name, colour) in enumerate(zip(tables, ("#999999", SCHEME_COLOURS["learned"]))):
        style = {**line_style(3 * k), "color": colour}
        right.plot([], [], linewidth=1.6, markersize=4, label=name, **style)[0].set_gid(f"{name}_similarity")
    right.set_xlim(-0.5, before.shape[0] - 0.5)
    right.set_ylim(-1.05, 1.05)
    right.set_xlabel("position q")
    right.set_ylabel("cosine similarity of rows p and q")
    right.set_title("", fontsize=10).set_gid("similarity_title")
    right.legend(fontsize=8, loc="lower left")
    return fig
