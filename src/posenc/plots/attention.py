"""Attention weights as pictures: maps of who looks at whom, and what one trained head looks at past its training."""

from __future__ import annotations

import torch
from matplotlib.figure import Figure

from .matrices import matrices_figure
from .style import SCHEME_COLOURS, SEQUENTIAL, line_style, new_figure, shorten

__all__ = ["attention_maps", "mask_maps", "previous_token_attention"]


def attention_maps(maps: dict[str, torch.Tensor], *, tokens: list[str] | dict[str, list[str]] | None = None,
                   keys: list[str] | None = None, **options) -> Figure:
    """Attention weights, one panel per entry of `maps`: queries down, keys across, on one blue scale from 0 to 1.

    `tokens` labels the queries and the keys alike, or maps each panel's title to its own word order (then every
    panel is square); `keys` labels the keys when they are not the queries (a map cut to its real queries). Any other
    option of `matrices_figure` (hidden cells and their key, outlined rows and columns, `categories`) passes through,
    and may override the scale or the labels (a mask drawn as 0 and 1, say)."""
    look = {"value_range": (0.0, 1.0), "cmap": "Blues", "colorbar_label": "attention weight",
            "xlabel": "key (looked at)", "ylabel": "query (looking)"}
    if isinstance(tokens, dict):
        look["labels"] = tokens
    elif tokens is not None:
        look["row_labels"], look["column_labels"] = list(tokens), list(keys if keys is not None else tokens)
    return matrices_figure(maps, **(look | options))


def mask_maps(masks: dict[str, torch.Tensor], *, tokens: list[str], framed_rows: int = 0) -> Figure:
    """Boolean masks, one panel per entry of `masks` (queries down, keys across), in two colours: "may look" (True)
    and "hidden" (False). The first `framed_rows` rows (a sentence's real words, say) are framed in every panel but
    the first, the one the others are compared with."""
    framed = {title: range(framed_rows) for title in list(masks)[1:]}
    return attention_maps({title: mask.float() for title, mask in masks.items()}, tokens=tokens, outline_rows=framed,
                          categories={1: "may look", 0: "hidden"}, colorbar_label="mask")


def previous_token_attention(weights: dict[str, torch.Tensor], *, trained_length: int,
                             heads: dict[str, str] | None = None) -> Figure:
    """What one attention head per model looks at, on inputs longer than the model was trained on.

    `weights` maps a scheme (at most two) to one head's attention weights on a batch of
    sequences, shape (batch, seq, seq), as `models.training.attention_map(...)[:, head]`
    gives them; all must have one shape. For each scheme the weights of the first
    sequence are an image (row i: how much query i takes from each key j; the colours stop at 0.5, so faint
    weights show), with dashed
    lines after position `trained_length - 1`, the last one seen in training. The last
    panel shows, for every query i >= 1, the weight it gives key i - 1 (the previous
    token), averaged over the batch: one line per scheme in its colour (`SCHEME_COLOURS`),
    the trained positions shaded. `heads` labels each scheme's head, e.g. "layer 0, head 3".
    """
    panels = {scheme: values.detach().float() for scheme, values in weights.items()}
    length = next(iter(panels.values())).shape[-1]
    fig = new_figure(3.6 * len(panels) + 5.2, 3.9)
    grid = fig.add_gridspec(1, len(panels) + 1, width_ratios=[1] * len(panels) + [1.45])
    images = []
    for k, (scheme, values) in enumerate(panels.items()):
        ax = fig.add_subplot(grid[0, k])
        images.append(ax.imshow(values[0].numpy(), cmap=SEQUENTIAL, vmin=0, vmax=0.5, interpolation="nearest"))
        for line in (ax.axhline, ax.axvline):  # the edge of what the model saw in training
            line(trained_length - 0.5, color="white", linestyle="--", linewidth=1)
        label = f", {shorten(heads[scheme], 24)}" if heads else ""
        ax.set_title(f"{shorten(scheme, 16)}{label}\none sequence of {length} tokens", fontsize=9)
        ax.set_xlabel("key position j")
        ax.set_ylabel("query position i" if k == 0 else "")
    fig.colorbar(images[-1], ax=fig.axes, shrink=0.85, extend="max", label="attention weight (0.5 and above: brightest)",
                 pad=0.04)
    ax = fig.add_subplot(grid[0, -1])
    ax.axvspan(0, trained_length - 0.5, color="#DDDDDD", zorder=0, label=f"positions seen in training (0-{trained_length - 1})")
    for k, (scheme, values) in enumerate(panels.items()):
        # The scheme's look in every figure of the suite (as in plots.accuracy_by_length).
        style = line_style(list(SCHEME_COLOURS).index(scheme) if scheme in SCHEME_COLOURS else k)
        style["color"] = SCHEME_COLOURS.get(scheme, style["color"])
        # Entry i - 1 of the first diagonal below the main one: query i's weight on key i - 1.
        back = values.diagonal(offset=-1, dim1=-2, dim2=-1).mean(dim=0)
        ax.plot(range(1, length), back.numpy(), label=shorten(scheme, 16), markersize=3, **style)
    ax.set_xlim(0, length)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("query position i")
    ax.set_ylabel("weight on key i - 1")
    ax.set_title(f"weight on the previous token, mean of {next(iter(panels.values())).shape[0]} sequences", fontsize=9)
    ax.legend(fontsize=8, loc="lower left")
    return fig
