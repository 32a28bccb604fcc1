"""Figures of positions in a real pipeline: subword pieces and their positions, the position of every
slot of a padded batch, a packed row's mask, and differences measured per scheme.

Each function takes numbers or strings the notebook computed and returns a Figure.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from matplotlib.figure import Figure
from matplotlib.legend_handler import HandlerTuple
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle

from .style import OKABE_ITO, SCHEME_COLOURS, new_figure, shorten

__all__ = ["subword_figure", "position_ids_figure", "packed_mask_figure", "differences_figure"]

PADDING_GREY = "#DDDDDD"
# Light tints of Okabe-Ito's colours, for boxes with black text on them; the two blues are 4 apart, so the first
# four words of a figure never take both.
TINTS = ("#F5D08A", "#A9D8F3", "#EEA77A", "#E5B9D3", "#8ED3BE", "#8CB8D9")
PLAIN_TINT = "#E4EAF1"  # one colour for every box, when colour means nothing


def subword_figure(sentences: dict[str, Sequence[Sequence[str]]], *, title: str, colour_by_word: bool = False) -> Figure:
    """Each sentence as a row of boxes, one box per piece, with the position it takes underneath.

    `sentences` maps a row's label (the sentence, or "words" / "pieces") to its words, each
    word the list of pieces a tokenizer cut it into; a word in one piece is a list of one.
    The pieces of one word share a bracket, so a word of three pieces is seen to take three
    positions. Up to 6 rows of 40 pieces fit on a page. Every box has one plain colour, unless
    `colour_by_word`: then a word's colour follows the word itself (case and spaces aside), so the
    same word matches across rows, and a colour never means anything else; with more than 6
    different words, colours repeat.
    """
    rows = {label: [list(word) for word in words] for label, words in sentences.items()}
    widest = max(sum(len(word) for word in words) for words in rows.values())
    label_room = 0.7 + 0.11 * max(len(shorten(label, 40)) for label in rows)  # in boxes: the labels left of the rows
    fig = new_figure(min(16, 0.4 + 0.8 * (widest + label_room)), 0.9 + 1.25 * len(rows))
    ax = fig.add_subplot()
    word_colours: dict[str, str] = {}  # with colour_by_word: each word's colour, in the order the words first appear
    for r, (label, words) in enumerate(rows.items()):
        y = -1.6 * r
        position = 0
        for word in words:
            start = position
            colour = PLAIN_TINT
            if colour_by_word:
                colour = word_colours.setdefault("".join(word).strip().lower(), TINTS[len(word_colours) % len(TINTS)])
            for piece in word:
                ax.add_patch(Rectangle((position - 0.45, y - 0.35), 0.9, 0.7, facecolor=colour,
                                       edgecolor="black", linewidth=0.6))
                shown = piece.replace(" ", "␣")
                if piece == " ":  # a bare space is easy to miss: drawn large, and named
                    ax.text(position, y + 0.08, "␣", ha="center", va="center", fontsize=14)
                    ax.text(position, y - 0.2, "(space)", ha="center", va="center", fontsize=6.5)
                else:
                    ax.text(position, y, shorten(shown, 11), ha="center", va="center", fontsize=8 if len(shown) <= 6 else 6.5)
                ax.text(position, y - 0.55, str(position), ha="center", va="top", fontsize=7.5, color="#444444")
                position += 1
            if len(word) > 1:  # a bracket over the pieces of one word
                ax.plot([start - 0.4, start - 0.4, position - 0.6, position - 0.6], [y + 0.42, y + 0.5, y + 0.5, y + 0.42],
                        color="black", linewidth=0.8)
        ax.text(-0.7, y, shorten(label, 40), ha="right", va="center", fontsize=9)
    ax.set_xlim(-label_room, widest - 0.4)
    ax.set_ylim(-1.6 * (len(rows) - 1) - 1.0, 0.75)
    ax.set_aspect("auto")
    ax.axis("off")
    ax.set_title(title + "\n(the number under a piece is its position)", fontsize=10)
    return fig


def position_ids_figure(panels: dict[str, torch.Tensor], *, attention_mask: torch.Tensor,
                        row_labels: Sequence[str] | None = None, tokens: Sequence[Sequence[str]] | None = None) -> Figure:
    """A padded batch as a grid per panel: each slot shows the position it is given; padded slots are grey.

    `panels` maps a title to a `(batch, seq)` integer tensor of positions (at most 4 panels);
    `attention_mask` is the batch's `(batch, seq)` mask, 1 (True) for a real token. A real
    token's cell is coloured by the position it gets, so the same token coloured alike in two
    rows means it gets the same position in both. `tokens` (a string per slot, as the mask) writes each real
    token's text above its position, so a token is seen to move from one position to another.
    """
    mask = attention_mask.detach().long().cpu()
    grids = {title: value.detach().cpu().long() for title, value in panels.items()}
    batch, seq = mask.shape
    tall = 0.75 if tokens is not None else 0.5  # a box holds two lines when it writes its token too
    fig = new_figure(min(16, 1.2 + len(grids) * (0.9 + 0.5 * seq)), 1.3 + tall * batch)
    axes = fig.subplots(1, len(grids), squeeze=False)[0]
    colours = [OKABE_ITO[k] for k in (1, 2, 0, 4, 5, 3, 6)]  # seven: positions 0 to 6 all differ
    for ax, (title, positions) in zip(axes, grids.items()):
        for b in range(batch):
            for s in range(seq):
                real = bool(mask[b, s])
                value = int(positions[b, s])
                colour = colours[value % len(colours)] if real else PADDING_GREY
                ax.add_patch(Rectangle((s - 0.47, b - 0.42), 0.94, 0.84, facecolor=colour, edgecolor="white",
                                       alpha=1.0 if real else 0.9))
                token = None if tokens is None else str(tokens[b][s])
                # A bare space is easy to miss: named under its glyph.
                token = "␣\n(space)" if token in ("␣", " ") else token if token is None else shorten(token, 6)
                text = str(value) if token is None else f"{token}\n{value}"
                ax.text(s, b, text if real else f"pad\n{value}", ha="center", va="center",
                        fontsize=(7 if text.count("\n") > 1 else 8) if real else 7.5, color="black" if real else "#333333")
        ax.set_xlim(-0.6, seq - 0.4)
        ax.set_ylim(batch - 0.5, -0.5)
        ax.set_xticks(range(seq))
        ax.set_yticks(range(batch), row_labels if row_labels is not None else [f"row {b}" for b in range(batch)],
                      fontsize=8)
        ax.tick_params(length=0, labelsize=8)
        ax.set_xlabel("slot in the tensor")
        for side in ax.spines.values():
            side.set_visible(False)
        ax.set_title(title, fontsize=10)
    return fig


def packed_mask_figure(mask: torch.Tensor, *, document_ids: torch.Tensor, labels: Sequence[str] | None = None,
                       title: str = "a packed row's mask") -> Figure:
    """A `(seq, seq)` mask (True = query r may look at key c) with each document's block outlined.

    `document_ids` is the row's `(seq,)` document id per token; the cells a query may see are
    coloured by its document, hidden cells are white. `labels` names each token (its piece or
    its position) on both axes.
    """
    seq = mask.shape[0]
    ids = document_ids.detach().cpu().long().tolist()
    visible = mask.detach().cpu()
    names = list(dict.fromkeys(ids))
    fig = new_figure(min(12, 2.4 + 0.27 * seq), min(11, 1.5 + 0.26 * seq))
    ax = fig.add_subplot()
    colours = [OKABE_ITO[k] for k in (1, 0, 2, 5, 4, 3)]
    for r in range(seq):
        for c in range(seq):
            if bool(visible[r, c]):
                ax.add_patch(Rectangle((c - 0.5, r - 0.5), 1, 1, facecolor=colours[names.index(ids[r]) % len(colours)],
                                       edgecolor="white", linewidth=0.8))
    start = 0
    for k in range(1, seq + 1):  # outline each run of one document id: its block on the diagonal
        if k == seq or ids[k] != ids[start]:
            ax.add_patch(Rectangle((start - 0.5, start - 0.5), k - start, k - start, fill=False, edgecolor="black",
                                   linewidth=1.3))
            start = k
    ax.set_xlim(-0.5, seq - 0.5)
    ax.set_ylim(seq - 0.5, -0.5)
    ax.set_aspect("equal")
    shown = list(labels) if labels is not None else [str(k) for k in range(seq)]
    ax.set_xticks(range(seq), [shorten(s, 8) for s in shown], rotation=90, fontsize=7.5)
    ax.set_yticks(range(seq), [shorten(s, 8) for s in shown], fontsize=7.5)
    ax.set_xlabel("key (looked at)")
    ax.set_ylabel("query (looking)")
    ax.set_title(title, fontsize=10)
    handles = [Rectangle((0, 0), 1, 1, facecolor=colours[k % len(colours)]) for k in range(len(names))]
    ax.legend(handles, [f"document {name}" for name in names], fontsize=7.5, loc="upper left",
              bbox_to_anchor=(1.02, 1), frameon=False)
    return fig


def _value_text(value: float) -> str:
    """A bar's number, as the notebooks print it: 0.87, 3.20; 2.0e-05 below 0.01; 120 from 10 on."""
    if value < 0.01:
        return f"{value:.1e}"
    return f"{value:.2f}" if value < 10 else f"{value:.3g}"


def differences_figure(differences: dict[str, dict[str, float]], *, title: str, ylabel: str,
                       floor: float = 1e-9) -> Figure:
    """Grouped bars on a log axis: for each scheme, one bar per way of running it, its largest difference on top.

    `differences` maps a scheme ("sinusoidal", "learned", "rotary", "alibi", or any label) to
    {way: a difference >= 0} (1 to 8 schemes, 1 to 4 ways); every scheme names the same ways. A
    label whose first word is a scheme of `SCHEME_COLOURS` ("rotary (tiny Llama)") gets that
    scheme's colour; ways are told apart by hatching as well. A difference below `floor` (0 included) gets no bar: on a log axis 0
    has no place, and below float32 rounding the digits mean nothing. It is drawn as a triangle
    pointing down in the grey band under the dashed floor line: filled for the first way, hollow for the others,
    as the legend shows beside each way's bar (the legend says "below <floor>", once). The axis ends just above the highest bar,
    and every number is written level.
    """
    ways = list(next(iter(differences.values())))
    hatches = ("", "///", "...", "xx")
    fig = new_figure(min(12, 2.5 + 1.6 * len(differences)), 3.9)
    ax = fig.add_subplot()
    ax.set_yscale("log")
    width = 0.8 / len(ways)
    highest = max(max(values.values()) for values in differences.values())
    bottom = floor / 20
    floor_text = f"{floor:.0e}".replace("e-0", "e-")  # 1e-5, as the notebooks write it
    # Below the floor: a grey band with a dashed edge, where no bar is drawn.
    ax.axhspan(bottom, floor, color="#EEEEEE", zorder=0)
    ax.axhline(floor, color="#555555", linestyle="--", linewidth=0.8, zorder=1)
    for k, way in enumerate(ways):
        for s, (scheme, values) in enumerate(differences.items()):
            value = float(values[way])
            # "rotary (tiny Llama)" takes the colour of "rotary": a scheme's colour is the same in every figure.
            colour = SCHEME_COLOURS.get(scheme.split(" ")[0], OKABE_ITO[s % len(OKABE_ITO)])
            x = s - 0.4 + width * (k + 0.5)
            alpha = 1.0 if k == 0 else 0.55
            if value >= floor:
                ax.bar(x, value - bottom, bottom=bottom, width=width * 0.92, color=colour, alpha=alpha,
                       hatch=hatches[k], edgecolor="black", linewidth=0.6, zorder=2)
                ax.text(x, value * 1.3, _value_text(value), ha="center", va="bottom", fontsize=8)
            else:
                # Filled for the first way, hollow for the others: hatching cannot mark a triangle.
                ax.plot(x, floor / 2.5, marker="v", markersize=8, color=colour, markeredgecolor="black" if k == 0 else colour,
                        markerfacecolor=colour if k == 0 else "white", markeredgewidth=0.6 if k == 0 else 1.6, zorder=3)
    ax.set_xticks(range(len(differences)), list(differences))
    ax.set_xlim(-0.55, len(differences) - 0.45)
    ax.set_ylim(bottom, max(highest, floor) * 8)  # room for the highest bar's number, and no more
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    # Each way: its bar, and the triangle it gets below the floor (grey: the colour is the scheme's).
    handles = [(Patch(facecolor="#999999", alpha=1.0 if k == 0 else 0.55, hatch=hatches[k], edgecolor="black",
                      linewidth=0.6),
                Line2D([], [], linestyle="none", marker="v", markersize=8, color="#999999",
                       markerfacecolor="#999999" if k == 0 else "white",
                       markeredgecolor="black" if k == 0 else "#999999", markeredgewidth=0.6 if k == 0 else 1.6))
               for k in range(len(ways))]
    below = Patch(facecolor="#EEEEEE", edgecolor="#555555", linestyle="--", linewidth=0.8)
    ax.legend(handles + [below], ways + [f"below {floor_text}\n(float rounding): a triangle, no bar"], fontsize=8,
              loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False, handler_map={tuple: HandlerTuple(ndivide=None)},
              handlelength=3.2)
    return fig
