"""PipelineExplorer: type a sentence, see its padded tokens, one-hot rows, X, PE and X + PE side by side.

An `anywidget` widget: Python puts into its state only what the package alone computes, the vocabulary and W_E
(`embedding_matrix`, seed 0) for every d_model its slider reaches; the front end, pipeline_explorer.js beside this
file (after explorer_common.js), tokenises the typed sentence within that vocabulary, pads it, and computes and draws
the rest in the page, so it responds without a kernel too. An unknown word becomes <UNK>, and the explorer says so.
"""

from __future__ import annotations

import anywidget
import torch
import traitlets

from .. import example, plots, tokens
from .._checks import check_size, check_str
from ..builder import sinusoidal_encoding
from ..embedding import embedding_matrix, project
from ._front_end import module, still_picture
from .encoding_explorer import STILL_HINT

__all__ = ["PipelineExplorer"]

LENGTH_MAX = 32  # the max_sequence_length slider's end (or the starting value, if larger)
D_MODEL_MAX = 64  # the d_model slider's end, for a vocabulary small enough (see `d_model_max`)
W_E_NUMBERS = 1 << 16  # at most this many numbers of W_E in the widget's state (256 KB as float32)
STILL_SIDE = 30  # the still picture writes every number in its cell: at most 30 rows and columns


def d_model_max(vocab_size: int) -> int:
    """The d_model slider's end: 64, or less for a vocabulary so large that every W_E up to it would pass 2^16 numbers."""
    reach = D_MODEL_MAX
    while reach > 1 and vocab_size * reach * (reach + 1) // 2 > W_E_NUMBERS:
        reach -= 1
    return reach


class PipelineExplorer(anywidget.AnyWidget):
    """Type a sentence; see its padded tokens, one-hot rows, X, PE and X + PE side by side.

    A sentence longer than max_sequence_length shows the error in the widget instead of raising into the notebook.

    >>> pipeline = PipelineExplorer(sentence="My name is John", max_sequence_length=10, d_model=6)
    >>> pipeline.sentence = "What is your name?"      # the page follows
    """

    _esm = module("pipeline_explorer.js")
    sentence = traitlets.Any(example.SENTENCE).tag(sync=True)
    max_sequence_length = traitlets.Any(example.MAX_SEQUENCE_LENGTH).tag(sync=True)
    d_model = traitlets.Any(example.D_MODEL).tag(sync=True)
    _vocabulary = traitlets.List().tag(sync=True)  # the vocabulary's tokens, in id order
    _W_E = traitlets.Bytes().tag(sync=True)  # float32 W_E for d_model = 1, 2, ..., one after another

    def __init__(self, *, sentence: str = example.SENTENCE, max_sequence_length: int = example.MAX_SEQUENCE_LENGTH,
                 d_model: int = example.D_MODEL, vocabulary: tokens.Vocabulary | None = None) -> None:
        self.vocabulary = vocabulary or example.vocabulary()
        if tokens.UNK_TOKEN not in self.vocabulary.tokens:
            raise ValueError(f"vocabulary must hold {tokens.UNK_TOKEN}, what an unknown word becomes")
        size = self.vocabulary.vocab_size
        self.d_model_max = max(d_model_max(size), check_size("d_model", d_model, maximum=D_MODEL_MAX))
        self.length_max = max(LENGTH_MAX, check_size("max_sequence_length", max_sequence_length, maximum=512))
        tables = [embedding_matrix(vocab_size=size, d_model=d, seed=0).flatten() for d in range(1, self.d_model_max + 1)]
        super().__init__(sentence=sentence, max_sequence_length=max_sequence_length, d_model=d_model,
                         _vocabulary=list(self.vocabulary.tokens), _W_E=torch.cat(tables).numpy().astype("<f4").tobytes())

    @traitlets.validate("sentence")
    def _sentence(self, proposal):
        return check_str("sentence", proposal["value"])

    @traitlets.validate("max_sequence_length", "d_model")
    def _size(self, proposal):
        name = proposal["trait"].name
        return check_size(name, proposal["value"], maximum=self.length_max if name == "max_sequence_length" else self.d_model_max)

    def matrices(self) -> dict[str, torch.Tensor]:
        """What the page draws, computed by the package: one_hot, X, PE and X + PE (ValueError if the sentence is too long)."""
        padded = tokens.pad(tokens.tokenize(self.sentence), max_sequence_length=self.max_sequence_length)
        one_hot = tokens.one_hot(torch.tensor(self.vocabulary.ids(padded)), vocab_size=self.vocabulary.vocab_size)
        X = project(one_hot, embedding_matrix(vocab_size=self.vocabulary.vocab_size, d_model=self.d_model, seed=0))
        PE = sinusoidal_encoding(max_sequence_length=self.max_sequence_length, d_model=self.d_model)
        return {"one_hot": one_hot, "X": X, "PE": PE, "X + PE": X + PE}

    def _repr_mimebundle_(self, **kwargs):
        data, metadata = super()._repr_mimebundle_(**kwargs)
        data["text/plain"] = STILL_HINT
        if max(self.max_sequence_length, self.d_model) > STILL_SIDE:  # too large to write cell by cell: the line alone
            return data, metadata
        try:  # X, PE and X + PE on one colour scale (one-hot has another shape)
            matrices = {name: m for name, m in self.matrices().items() if name != "one_hot"}
            padded = tokens.pad(tokens.tokenize(self.sentence), max_sequence_length=self.max_sequence_length)
        except ValueError:  # a sentence too long: the line alone
            return data, metadata
        # An unknown word's row is the <UNK> row, and its label says so, as the page's readout does.
        known = set(self.vocabulary.tokens)
        labels = [plots.shorten(t) if t in known else f"{plots.shorten(t, 8)} → {tokens.UNK_TOKEN}" for t in padded]
        fig = plots.matrices_figure(matrices, row_labels=labels)
        data["image/png"] = still_picture(fig, hint=False)
        return data, metadata
