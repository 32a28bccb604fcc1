"""Diagrams: the pipeline, the Transformer, stack + flatten. Notebooks draw them from their own values; images/ too."""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.figure import Figure
from matplotlib.patches import Circle, FancyArrowPatch, FancyBboxPatch, Rectangle

from .style import COSINE_COLOUR, SINE_COLOUR, new_figure, shorten

__all__ = ["PIPELINE_STEPS", "pipeline_diagram", "transformer_diagram", "interleave_diagram"]

PIPELINE_STEPS = ("sentence", "pad", "one-hot", "X", "X + PE", "Q, K, V", "attention")


def pipeline_diagram(*, sentence: str | None = None, max_sequence_length: int | None = None,
                     vocab_size: int | None = None, d_model: int | None = None, num_heads: int | None = None,
                     highlight: Sequence[str] = (), note: str | None = None,
                     formulas: Sequence[str] | None = None, batch_size: int | None = None, lookup: bool = False) -> Figure:
    """Boxes and arrows: sentence -> padded tokens -> one-hot -> X -> X + PE -> Q, K, V -> attention, with shapes.

    Each notebook of 01-07 passes the values it uses; what it leaves out comes from the running example
    (`posenc.example`, and its vocabulary for vocab_size). `highlight` names the steps a notebook is
    about (from PIPELINE_STEPS); the others are drawn faded. The caption says "this notebook:"
    and the highlighted steps, or `note` where a notebook does more with them. With `num_heads`, Q, K, V and the
    attention are drawn cut into that many heads, `(num_heads, max_sequence_length, d_model / num_heads)` each.
    `formulas` names the steps that show their formula (all of them when None); the others say in words what they
    do, for a reader who has not met `W_E`, `@` or `d_k` yet. With `batch_size`, every shape from the one-hot on gets
    the batch axis first, the padded ids are drawn as one `(batch_size, max_sequence_length)` tensor, and `X` is drawn
    as the lookup `W_E[ids]` that a batch's code uses. With `lookup`, `X` is drawn so for one sentence too.
    """
    from .. import example, tokens

    sentence = example.SENTENCE if sentence is None else sentence
    L = example.MAX_SEQUENCE_LENGTH if max_sequence_length is None else max_sequence_length
    V = example.vocabulary().vocab_size if vocab_size is None else vocab_size
    d = example.D_MODEL if d_model is None else d_model
    words = tokens.tokenize(sentence)
    # The padded sentence in two short lines: its first words, then the padding (a long sentence is cut with "...").
    shown = " ".join(words) if len(" ".join(words)) <= 18 else " ".join(words)[:16] + "..."
    fig = new_figure(12.6, 3.1)
    ax = fig.add_subplot()
    ax.set_xlim(0, 12.6)
    ax.set_ylim(0, 3.1)
    ax.axis("off")
    boxes = {
        "sentence": ("sentence", f'"{shorten(sentence, 18)}"', f"{len(words)} tokens"),
        "pad": ("pad", f"{shown}\n<PAD> ... <PAD>", f"{L} tokens"),
        "one-hot": ("one-hot", "one row per token,\na single 1", f"({L}, {V})"),
        "X": ("X = one_hot @ W_E", f"W_E: ({V}, {d})\nlearned", f"({L}, {d})"),
        "X + PE": ("X + PE", "add the sinusoidal\nposition table", f"({L}, {d})"),
        "Q, K, V": ("Q, K, V", "X' @ W_Q, W_K, W_V", f"3 x ({L}, {d})"),
        "attention": ("attention", "softmax(Q Kᵀ / √d_k)\n@ V", f"({L}, {d})"),
    }
    if num_heads:
        cut = f"({num_heads}, {L}, {d // num_heads})"
        boxes["Q, K, V"] = ("Q, K, V", f"X' @ W_Q, W_K, W_V,\ncut into {num_heads} heads", f"each {cut}")
        boxes["attention"] = ("attention", "per head, then\nside by side @ W_O", f"{cut}\n-> ({L}, {d})")
    if batch_size:
        boxes = {step: (title, body, shape.replace("(", f"({batch_size}, ")) for step, (title, body, shape) in boxes.items()}
        # A batch holds several sentences: the first two boxes give the batch's count and its padded ids' shape.
        boxes["sentence"] = ("sentences", f"{batch_size} sentences,\nof up to {L} tokens", "")
        boxes["pad"] = ("pad", "each padded\nwith <PAD>", f"({batch_size}, {L})")
    if batch_size or lookup:
        boxes["X"] = ("X = W_E[ids]", *boxes["X"][1:])
    in_words = {
        "X": ("X", "one learned vector\nper token", f"({L}, {d})"),
        "Q, K, V": ("Q, K, V", "(X + PE) times three\nlearned matrices", f"3 x ({L}, {d})"),
        "attention": ("attention", "each row: a weighted\nmix of V's rows", f"({L}, {d})"),
    }
    if formulas is not None:
        boxes.update({step: words for step, words in in_words.items() if step not in formulas and not num_heads})
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
        caption += "        this notebook: " + (note or ", ".join(step for step in PIPELINE_STEPS if step in highlight))
    ax.text(6.3, 0.22, caption, ha="center", va="center", fontsize=9, color="#555555")
    return fig


def transformer_diagram() -> Figure:
    """The encoder and decoder stacks of "Attention Is All You Need" (its figure 1), the input side marked.

    The arrows on the right of each stack are the residual paths: each sublayer's input skips it into its "add & norm".
    The input side (the attention above it is built too, but is not what the shading marks): token embeddings
    (scaled by sqrt(d_model)), plus the positional encoding, then dropout (sections 3.4 and 5.4 of the paper).
    """
    fig = new_figure(8.5, 7.2)
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
    ax.text(5.0, 0.45, "shaded:\nthe input side", ha="center", va="center", fontsize=8.5,
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
            box(x, y0 + 0.45 + 0.62 * k, text, colour, width=3.2, height=0.44 if "\n" not in text else 0.54)
            if text == "add & norm":  # the residual path: the sublayer's input skips it, into this add & norm
                below, here = y0 + 0.45 + 0.62 * (k - 1) - 0.31, y0 + 0.45 + 0.62 * k
                ax.plot([x, x + 1.72, x + 1.72], [below, below, here], color="#444444", linewidth=1)
                ax.plot([x], [below], marker="o", markersize=3, color="#444444")
                arrow(x + 1.72, here, x + 1.6, here)
        tops[name] = y0 + height
        ax.text(x, 0.05, name, ha="center", va="bottom", fontsize=10, fontweight="bold")
    arrow(2.6 + 1.85, tops["encoder"] - 0.3, 7.4 - 1.6, 3.25 + 0.45 + 0.62 * 2)
    box(7.4, tops["decoder"] + 0.45, "linear", "#E3F3EC", width=2.0, height=0.4)
    box(7.4, tops["decoder"] + 1.05, "softmax", "#E3F3EC", width=2.0, height=0.4)
    arrow(7.4, tops["decoder"], 7.4, tops["decoder"] + 0.25)
    arrow(7.4, tops["decoder"] + 0.65, 7.4, tops["decoder"] + 0.85)
    ax.text(7.4, tops["decoder"] + 1.55, "output probabilities", ha="center", va="center", fontsize=9, style="italic")
    ax.set_title('The Transformer of "Attention Is All You Need": its figure 1, with x sqrt(d_model)\n'
                 '(section 3.4) and dropout (section 5.4) drawn in from its text', fontsize=11)
    return fig


def interleave_diagram(*, d_model: int = 6, rows: int | None = None) -> Figure:
    """How stack(dim=2) + flatten turns even_PE and odd_PE into sin, cos, sin, cos, ... columns.

    `rows` positions are drawn; by default one more than the pairs, so that no block is square and positions (rows)
    cannot be taken for columns. One labelled square per entry, so the sizes are small: d_model up to 24, rows up to 12.
    """
    n_sin, n_cos = (d_model + 1) // 2, d_model // 2
    rows = n_sin + 1 if rows is None else rows
    fig = new_figure(11, 1.4 + 0.5 * rows)
    ax = fig.add_subplot()
    ax.axis("off")
    ax.set_aspect("equal")

    def cell(x, y, label, colour):
        ax.add_patch(Rectangle((x, y), 1, 1, facecolor=colour, edgecolor="white", linewidth=1.5))
        ax.text(x + 0.5, y + 0.5, label, ha="center", va="center", fontsize=7.5,
                color="white" if colour == COSINE_COLOUR else "black")

    def block(x0, layout, caption):
        for r in range(rows):
            for c, (label, colour) in enumerate(layout):
                cell(x0 + c, rows - 1 - r, label.format(r=r), colour)
        ax.text(x0 + len(layout) / 2, rows + 0.35, caption, ha="center", va="bottom", fontsize=9)
        return x0 + len(layout)

    sines = [(f"s{k}" "\npos {r}", SINE_COLOUR) for k in range(n_sin)]
    cosines = [(f"c{k}" "\npos {r}", COSINE_COLOUR) for k in range(n_cos)]
    # stack joins equal halves only: for an odd d_model the dummy column is appended before it (names as in the code)
    if d_model % 2:
        x = block(0, sines, f"sines ({rows}, {n_sin})\nsin columns")
        x = block(x + 0.6, cosines + [("dummy", "#DDDDDD")], f"cosines_padded ({rows}, {n_sin})\ncos columns, then zeros")
    else:
        x = block(0, sines, f"even_PE ({rows}, {n_sin})\nsin columns")
        x = block(x + 0.6, cosines, f"odd_PE ({rows}, {n_cos})\ncos columns")
    ax.annotate("", xy=(x + 1.6, rows / 2), xytext=(x + 0.3, rows / 2), arrowprops=dict(arrowstyle="-|>", color="#444444"))
    ax.text(x + 0.95, rows / 2 + 0.25, "stack\ndim=2", ha="center", va="bottom", fontsize=8)
    # The stacked tensor: each position holds n pairs (sin_k, cos_k).
    pairs = []
    for k in range(n_sin):
        pairs.append((f"s{k}" "\npos {r}", SINE_COLOUR))
        pairs.append((f"c{k}" "\npos {r}", COSINE_COLOUR) if k < n_cos else ("dummy", "#DDDDDD"))
    x0 = x + 1.9
    for k in range(n_sin):
        ax.add_patch(Rectangle((x0 + 2 * k + 0.15 * k - 0.05, -0.08), 2.1, rows + 0.16, fill=False, edgecolor="#777777",
                               linewidth=0.8, linestyle=":"))
        for r in range(rows):
            for half in range(2):
                label, colour = pairs[2 * k + half]
                cell(x0 + 2 * k + 0.15 * k + half, rows - 1 - r, label.format(r=r), colour)
    x = x0 + 2.15 * n_sin
    # An odd d_model's last pair is (sin, dummy), not a (sin, cos) pair.
    pairs_label = f"{n_cos} (sin, cos) pairs" + (" + (sin, dummy)" if n_cos < n_sin else "")
    ax.text((x0 + x) / 2, rows + 0.35, f"stacked ({rows}, {n_sin}, 2)\n{pairs_label}", ha="center", va="bottom",
            fontsize=9)
    ax.annotate("", xy=(x + 1.4, rows / 2), xytext=(x + 0.2, rows / 2), arrowprops=dict(arrowstyle="-|>", color="#444444"))
    ax.text(x + 0.8, rows / 2 + 0.25, "flatten\ndims 1-2", ha="center", va="bottom", fontsize=8)
    caption = f"PE ({rows}, {d_model})\nsin, cos, sin, cos, ..."
    if d_model % 2:
        caption = f"PE ({rows}, {d_model})\nlast 'dummy' column cut off"
    block(x + 1.7, pairs[:d_model], caption)
    ax.set_xlim(-0.2, x + 1.9 + d_model)
    ax.set_ylim(-0.3, rows + 1.4)
    return fig
