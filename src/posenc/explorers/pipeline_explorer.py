"""PipelineExplorer: type a sentence, see its padded tokens, one-hot rows, X, PE and X + PE side by side."""

from __future__ import annotations

import html
from collections.abc import Sequence

import ipywidgets as widgets
import torch
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from .. import plots, tokens
from .._validate import check_size, short
from ..builder import sinusoidal_encoding
from ..embedding import embedding_matrix, project
from ..plots import DIVERGING, new_figure
from .engine import MAX_SIZE, Explorer, Picture

__all__ = ["PipelineExplorer"]


def _token_list(words: list[str]) -> str:
    # <bdi> keeps each token's own direction: right-to-left words stay in sentence order in the list.
    return " | ".join(f"<code><bdi>{html.escape(plots.shorten(t, 20))}</bdi></code>" for t in words)


class PipelineExplorer(Explorer):
    """Type a sentence; see its padded tokens, one-hot rows, X, PE and X + PE side by side.

    A sentence longer than max_sequence_length shows the error in the widget instead
    of raising into the notebook.
    """

    def __init__(self, *, sentence: str = tokens.EXAMPLE_SENTENCE, max_sequence_length: int = 10, d_model: int = 6,
                 vocabulary: tokens.Vocabulary | None = None, debounce: float = 0.05) -> None:
        max_sequence_length = check_size("max_sequence_length", max_sequence_length, maximum=MAX_SIZE)
        d_model = check_size("d_model", d_model, maximum=MAX_SIZE)
        if not isinstance(sentence, str):
            raise TypeError(f"sentence must be a str, got {type(sentence).__name__}")
        if vocabulary is not None and not isinstance(vocabulary, tokens.Vocabulary):
            raise TypeError(f"vocabulary must be a posenc.tokens.Vocabulary or None, got {short(vocabulary)}")
        super().__init__(debounce=debounce)
        self.vocabulary = vocabulary or tokens.build_vocabulary(tokens.EXAMPLE_CORPUS)
        style = {"description_width": "initial"}
        self.sentence = widgets.Text(value=sentence, description="sentence", continuous_update=True, style=style,
                                     layout=widgets.Layout(width="60%"))
        self.max_sequence_length = widgets.IntSlider(value=max_sequence_length, min=1, max=max(32, max_sequence_length),
                                                     description="max_sequence_length", style=style)
        self.d_model = widgets.IntSlider(value=d_model, min=1, max=max(64, d_model), description="d_model", style=style)
        self.tokens_line = widgets.HTML()
        self.caption = widgets.HTML()
        self._watch(self.sentence, self.max_sequence_length, self.d_model)
        self.widget = widgets.VBox([
            self.sentence,
            widgets.HBox([self.max_sequence_length, self.d_model]),
            self.tokens_line,
            self.message,
            self.image,
            self.caption,
        ])
        self._picture: Picture | None = None
        self.redraw()

    def redraw(self) -> None:
        length, d_model = self.max_sequence_length.value, self.d_model.value
        words = tokens.tokenize(self.sentence.value)
        try:
            padded = tokens.pad(words, max_sequence_length=length)
        except ValueError as error:
            self.message.value = (f'<span style="color:#B00020"><b>ValueError:</b> {html.escape(str(error))}</span>'
                                  "<br>The picture below is still the last sentence that fit.")
            self.tokens_line.value = f"{len(words)} tokens: " + _token_list(words[:length]) + " | ..."
            return
        self.message.value = "" if words else "The sentence is empty: every row is padding."
        self.caption.value = (f"The picture: one-hot rows, X = one_hot @ W_E, PE and X + PE for the padded tokens above, "
                              f"{length} rows each, d_model = {d_model}.")
        self.tokens_line.value = "padded tokens: " + _token_list(padded)
        ids = torch.tensor(self.vocabulary.ids(padded))
        one_hot_rows = tokens.one_hot(ids, vocab_size=self.vocabulary.vocab_size)
        X = project(one_hot_rows, embedding_matrix(vocab_size=self.vocabulary.vocab_size, d_model=d_model, seed=0))
        PE = sinusoidal_encoding(max_sequence_length=length, d_model=d_model)
        if self._picture is None:
            fig = _pipeline_panels(padded, one_hot_rows, X, PE, vocabulary_tokens=self.vocabulary.tokens)
            self._picture = Picture(fig)
        else:
            _update_pipeline_panels(self._picture.fig, padded, one_hot_rows, X, PE)
        # Every change moves some axis here, so every redraw is a full one; the layout is
        # recomputed only when the token labels or the sizes need more room.
        self._show(self._picture, layout=(tuple(padded), length, d_model),
                   frame=(max(len(plots.shorten(t)) for t in padded), len(str(length)), len(str(d_model))))

    @property
    def figure(self) -> Figure | None:
        return None if self._picture is None else self._picture.fig


# The explorer's figure: four panels, their data set by the explorer ------------------------


def _pipeline_panels(padded_tokens: Sequence[str], one_hot_rows: torch.Tensor, X: torch.Tensor, PE: torch.Tensor, *,
                    vocabulary_tokens: Sequence[str] | None = None) -> Figure:
    """one-hot | X | PE | X + PE side by side, one row per token, shapes in the titles."""
    fig = new_figure(12, 4.6)
    axes = fig.subplots(1, 4, sharey=True, width_ratios=[1.3, 1, 1, 1])
    panels = [("one_hot", one_hot_rows, "Greys", (0, 1)), ("X", X, DIVERGING, None), ("PE", PE, DIVERGING, (-1, 1)),
              ("X_plus_PE", X + PE, DIVERGING, None)]
    for ax, (name, matrix, cmap, _limits) in zip(axes, panels):
        image = ax.imshow(matrix.numpy(), cmap=cmap, aspect="auto", interpolation="nearest")
        image.set_gid(name)
        ax.set_title("", fontsize=10).set_gid(name + "_title")
        ax.set_xlabel("column")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # columns are whole numbers: no tick at 2.5
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
    _update_pipeline_panels(fig, padded_tokens, one_hot_rows, X, PE)
    return fig


def _update_pipeline_panels(fig: Figure, padded_tokens: Sequence[str], one_hot_rows: torch.Tensor, X: torch.Tensor,
                           PE: torch.Tensor) -> None:
    """Put new matrices into a figure made by `_pipeline_panels` (sizes may change).

    X, PE and X + PE share one colour scale, so equal colours mean equal numbers across the three panels.
    """
    x_limit = float(max(X.abs().max(), PE.abs().max(), (X + PE).abs().max(), 1.0))
    panels = [("one_hot", one_hot_rows, (0, 1), "one-hot"), ("X", X, (-x_limit, x_limit), "X = one_hot @ W_E"),
              ("PE", PE, (-x_limit, x_limit), "PE"), ("X_plus_PE", X + PE, (-x_limit, x_limit), "X + PE")]
    for name, matrix, limits, label in panels:
        rows, columns = matrix.shape
        image = plots.artist(fig, name)
        image.set_data(matrix.detach().float().numpy())
        image.set_clim(*limits)
        image.set_extent((-0.5, columns - 0.5, rows - 0.5, -0.5))
        image.axes.set_xlim(-0.5, columns - 0.5)
        image.axes.set_ylim(rows - 0.5, -0.5)
        plots.artist(fig, name + "_title").set_text(f"{label}\n{tuple(matrix.shape)}")
    first = plots.artist(fig, "one_hot").axes
    first.set_yticks(range(len(padded_tokens)), [plots.shorten(t) for t in padded_tokens],
                     fontsize=8 if len(padded_tokens) <= 24 else 5)
