"""SchemeExplorer: one view per position scheme beyond the sinusoid, each with its own controls, drawn by the browser.

    rotary   RoPE's and the added sinusoid's score of one word with itself against the key's offset
    alibi    ALiBi's bias for one head, and every head's bias along the last query's row
    learned  a learned table before and after training, and how alike one row is to every row

An `anywidget` widget, as EncodingExplorer: Python holds the settings (traitlets, checked where they are set) and puts
into the widget's state only what the package alone computes, the schemes notebook's word and its W_Q and W_K (rotary), and
a trained model's learned table before and after training (learned). The front end, scheme_explorer.js beside this
file (after explorer_common.js), computes the rest (RoPE's and the sinusoid's scores in float64, ALiBi's slopes and
bias, cosine similarities) and draws it on a canvas in the same event as the key press, with or without a kernel.
Where widgets cannot render, the output is a still picture of the current view and one line saying how to make it move.
"""

from __future__ import annotations

import anywidget
import torch
import traitlets
from matplotlib.figure import Figure

from .. import plots, schemes
from .._checks import check_flag, check_size, one_of, short
from ..attention import projection_weights
from ..builder import DEFAULT_BASE
from ._front_end import NO_FRONT_END_HINT, check_slider_base, module, readable, still_picture

__all__ = ["SCHEME_VIEWS", "SchemeExplorer"]

SCHEME_VIEWS = ("rotary", "alibi", "learned")
# The rotary view: the word and weights of the schemes notebook's RoPE scores, keys up to this far from the query.
ROTARY_D_MODEL, ROTARY_REACH, MAX_QUERY_POSITION = 64, 60, 1000
MAX_HEADS, MAX_ALIBI_LENGTH = 16, 64
# The learned view's rows without a trained model: posenc.models.transformer.Settings().longest, the longest input the tiny model
# trains on (an explorer imports nothing that trains).
LEARNED_ROWS = 16


def _float32_bytes(tensor: torch.Tensor) -> bytes:
    return tensor.detach().to(torch.float32).contiguous().numpy().astype("<f4").tobytes()


class SchemeExplorer(anywidget.AnyWidget):
    """One view per position scheme beyond the sinusoid (rotary, ALiBi, learned), each with its own controls.

        rotary   one word's score with itself against the key's offset, RoPE beside the
                 added sinusoid. Move the query's position: RoPE's curve stays where it
                 is (it depends on the offset only), the added sinusoid's moves. Move the
                 base: both change.
        alibi    ALiBi's bias for one head as a matrix, and every head's bias along the
                 last query's row; the number of heads sets the slopes.
        learned  the learned table of the tiny model trained live, before and after training,
                 and how alike row `position` is to every row: pass `trained`,
                 `training.train("learned")`'s result (the explorer never trains; without
                 it, this view says what to pass). The explorer reads its `scheme`,
                 `initial_state["position.weight"]` and `model` (`max_sequence_length`,
                 `position.weight`).

    >>> explorer = SchemeExplorer(view="alibi", num_heads=8)
    >>> explorer.head = 7     # the picture in the page follows
    """

    _esm = module("scheme_explorer.js")
    # Any, each checked by its validator below: a wrong type is a TypeError naming the setting, as everywhere in posenc.
    view = traitlets.Any("rotary").tag(sync=True)
    base = traitlets.Any(DEFAULT_BASE).tag(sync=True)
    query_position = traitlets.Any(100).tag(sync=True)
    num_heads = traitlets.Any(8).tag(sync=True)
    head = traitlets.Any(0).tag(sync=True)
    max_sequence_length = traitlets.Any(16).tag(sync=True)
    causal = traitlets.Any(True).tag(sync=True)
    position = traitlets.Any(0).tag(sync=True)
    # What only the package computes: float32 numbers, read in the page as float64.
    _word = traitlets.Bytes().tag(sync=True)  # (64,)
    _weights = traitlets.Bytes().tag(sync=True)  # W_Q then W_K, each (64, 64), row-major
    _tables = traitlets.Bytes().tag(sync=True)  # the learned table before, then after training, or empty
    _table_shape = traitlets.List().tag(sync=True)  # [rows, d_model], or [] without a trained model

    def __init__(self, *, view: str = "rotary", base: float = DEFAULT_BASE, query_position: int = 100,
                 num_heads: int = 8, head: int = 0, max_sequence_length: int = 16, causal: bool = True,
                 position: int = 0, trained: object | None = None) -> None:
        if trained is not None and getattr(trained, "scheme", None) != "learned":  # say, another scheme's result
            raise TypeError(f"trained must be training.train('learned')'s result or None, got {short(trained)}")
        self._trained = trained
        self._rows = trained.model.max_sequence_length if trained is not None else LEARNED_ROWS
        self._word_tensor = torch.randn(ROTARY_D_MODEL, generator=torch.Generator().manual_seed(1))
        self._projection = projection_weights(d_model=ROTARY_D_MODEL, seed=0)
        tables = self.learned_tables()
        # The validators below check every setting once all are set (num_heads before head).
        super().__init__(view=view, base=base, query_position=query_position, num_heads=num_heads, head=head,
                         max_sequence_length=max_sequence_length, causal=causal, position=position,
                         _word=_float32_bytes(self._word_tensor),
                         _weights=_float32_bytes(torch.cat([self._projection.W_Q, self._projection.W_K])),
                         _tables=b"" if tables is None else _float32_bytes(torch.cat(tables)),
                         _table_shape=[] if tables is None else list(tables[0].shape))

    @property
    def trained(self) -> object | None:
        """The learned-table model the learned view shows, as passed (None: the view has nothing to show)."""
        return self._trained

    def learned_tables(self) -> tuple[torch.Tensor, torch.Tensor] | None:
        """The learned table before and after training (float32), or None without a trained model."""
        if self._trained is None:
            return None
        return self._trained.initial_state["position.weight"], self._trained.model.position.weight.detach()

    # Every setting checked where it is set, in the constructor or later (explorer.head = ...): a clear error.
    @traitlets.validate("view")
    def _view(self, proposal):
        return one_of(SCHEME_VIEWS)("view", proposal["value"])

    @traitlets.validate("base")
    def _base(self, proposal):
        return check_slider_base(proposal["value"])

    @traitlets.validate("causal")
    def _flag(self, proposal):
        return check_flag("causal", proposal["value"])

    @traitlets.validate("query_position", "num_heads", "head", "max_sequence_length", "position")
    def _size(self, proposal):
        name = proposal["trait"].name
        low, high = {"query_position": (0, MAX_QUERY_POSITION), "num_heads": (1, MAX_HEADS),
                     "head": (0, self.num_heads - 1), "max_sequence_length": (2, MAX_ALIBI_LENGTH),
                     "position": (0, self._rows - 1)}[name]
        return check_size(name, proposal["value"], minimum=low, maximum=high)

    @traitlets.observe("num_heads")
    def _fit(self, change) -> None:
        self.head = min(self.head, self.num_heads - 1)  # a head past the new last one moves to it

    # Where widgets cannot render: a still picture of the current view ----------------------------------

    def figure(self) -> Figure | None:
        """The current view as a still matplotlib figure (None: the learned view without a trained model)."""
        if self.view == "rotary":
            p = self.query_position
            offsets = list(range(-min(p, ROTARY_REACH), ROTARY_REACH + 1))
            scores = {scheme: {f"query at p = {p}": schemes.same_word_scores(
                self._word_tensor, self._projection, scheme=scheme, query_position=p, offsets=offsets, base=self.base).tolist()}
                for scheme in ("rotary", "sinusoidal")}
            return plots.score_by_offset(offsets, scores, title=f"One word, query at p = {p}, base = {readable(self.base)}",
                                         titles={"rotary": "RoPE", "sinusoidal": "added sinusoid"})
        if self.view == "alibi":
            bias = schemes.alibi_bias(num_heads=self.num_heads, max_sequence_length=self.max_sequence_length,
                                      causal=self.causal, dtype=torch.float64)[:, -1]
            # At most 8 lines a still can tell apart: the first heads, and the chosen one.
            shown = sorted({*range(min(self.num_heads, 8) - (self.head >= 8)), self.head})
            return plots.lines_figure(list(range(self.max_sequence_length)), {f"head {h}": bias[h].tolist() for h in shown},
                                      title=f"ALiBi: {len(shown)} of {self.num_heads} heads' bias along the last query row",
                                      xlabel="key position j", ylabel="bias",
                                      colours={f"head {self.head}": plots.SCHEME_COLOURS["alibi"]})
        tables = self.learned_tables()
        if tables is None:
            return None
        p = self.position
        lines = {name: torch.nn.functional.cosine_similarity(table[p : p + 1], table, dim=-1).tolist()
                 for name, table in zip(("before training", "after training"), tables)}
        rows, d_model = tables[0].shape  # as the page's caption says it
        return plots.lines_figure(list(range(self._rows)), lines,
                                  title=f"A learned table ({rows} positions x d_model = {d_model}): row {p} against every row",
                                  xlabel="row", ylabel=f"cosine similarity with row {p}",
                                  colours={"before training": "#999999", "after training": plots.SCHEME_COLOURS["learned"]})

    def _repr_mimebundle_(self, **kwargs):
        data, metadata = super()._repr_mimebundle_(**kwargs)
        data["text/plain"] = NO_FRONT_END_HINT
        fig = self.figure()
        if fig is not None:  # the learned view without a trained model: the line alone
            data["image/png"] = still_picture(fig)
        return data, metadata
