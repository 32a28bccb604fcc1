"""Answer checkers for the notebooks' exercises: they name the mistake, not just "wrong".

Each `check_*` function takes the learner's answer and the exercise's sizes and
returns a `Feedback`, shown as one line in the notebook. An exercise cell starts
with `answer = None`, which every checker reports as "not attempted yet", so an
unsolved notebook still runs from top to bottom.

The encoding checker recognises the usual mistakes by rebuilding the table with
each mistake made on purpose and comparing: sine and cosine swapped, exponent `i`
instead of `2i`, `2i` applied to the odd index too, halves concatenated instead of
interleaved, positions starting at 1, the wrong size in the denominator, a
transposed table, float64 where float32 was asked, and `d_model + 1` columns for
an odd `d_model`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from . import tokens
from ._validate import check_base, check_size
from .encoding import DEFAULT_BASE, sinusoidal_encoding

__all__ = ["Feedback", "check_padding", "check_one_hot", "check_embedding", "check_parameter_count", "check_denominators",
           "check_encoding", "check_positional_module", "check_scores"]

CORRECT, MISTAKE, NOT_ATTEMPTED, WRONG = "correct", "mistake", "not attempted", "wrong"
_SYMBOL = {CORRECT: "✔", MISTAKE: "✘", NOT_ATTEMPTED: "…", WRONG: "✘"}


@dataclass(frozen=True)
class Feedback:
    """The verdict on one answer: `status` is correct, mistake (a known one, named), wrong, or not attempted."""

    status: str
    message: str

    @property
    def correct(self) -> bool:
        return self.status == CORRECT

    def __str__(self) -> str:
        return f"{_SYMBOL[self.status]} {self.message}"

    def __repr__(self) -> str:
        return str(self)


def _not_attempted(what: str) -> Feedback:
    return Feedback(NOT_ATTEMPTED, f"Not attempted yet: replace None with {what}.")


def _as_tensor(answer: object, what: str) -> torch.Tensor | Feedback:
    if answer is None:
        return _not_attempted(what)
    if not isinstance(answer, torch.Tensor):
        return Feedback(WRONG, f"Expected a torch.Tensor, got {type(answer).__name__}.")
    return answer


def _close(a: torch.Tensor, b: torch.Tensor, atol: float = 1e-4) -> bool:
    return a.shape == b.shape and bool(torch.allclose(a.double(), b.double(), atol=atol, rtol=0))


# Padding and one-hot ---------------------------------------------------------------


def check_padding(answer: Sequence[str] | None, *, sentence: str, max_sequence_length: int) -> Feedback:
    """The sentence's tokens followed by `<PAD>` up to exactly max_sequence_length tokens."""
    expected = tokens.pad(tokens.tokenize(sentence), max_sequence_length=max_sequence_length)
    if answer is None:
        return _not_attempted("the list of padded tokens")
    if isinstance(answer, str) or not isinstance(answer, Sequence):
        return Feedback(WRONG, f"Expected a list of tokens, got {type(answer).__name__}.")
    answer = list(answer)
    if answer == expected:
        return Feedback(CORRECT, f"Correct: {len(answer)} tokens, the last {expected.count(tokens.PAD_TOKEN)} are padding.")
    words = [t for t in answer if t != tokens.PAD_TOKEN]
    if len(answer) != max_sequence_length:
        return Feedback(MISTAKE, f"Wrong length: {len(answer)} tokens, but the model reads exactly max_sequence_length="
                                 f"{max_sequence_length}.")
    if answer[: answer.count(tokens.PAD_TOKEN)] == [tokens.PAD_TOKEN] * answer.count(tokens.PAD_TOKEN) and words == expected[: len(words)]:
        return Feedback(MISTAKE, "The padding is in front: put <PAD> after the words, so position 0 is the first word.")
    if [w.lower() for w in words] == [w for w in expected if w != tokens.PAD_TOKEN] and words != expected[: len(words)]:
        return Feedback(MISTAKE, "Lower-case the words first: the vocabulary holds 'my', not 'My'.")
    return Feedback(WRONG, f"Not the padded sentence: expected {expected}.")


def check_one_hot(answer: torch.Tensor | None, *, ids: Sequence[int], vocab_size: int) -> Feedback:
    """One row per id, a single 1 in column id: shape (len(ids), vocab_size)."""
    answer = _as_tensor(answer, "the one-hot matrix")
    if isinstance(answer, Feedback):
        return answer
    expected = tokens.one_hot(list(ids), vocab_size=vocab_size)
    if answer.shape == expected.shape[::-1] and _close(answer.T, expected):
        return Feedback(MISTAKE, f"Transposed: shape {tuple(answer.shape)}, expected {tuple(expected.shape)} "
                                 "(one row per token, one column per vocabulary entry).")
    if answer.shape != expected.shape:
        return Feedback(WRONG, f"Shape {tuple(answer.shape)}, expected (len(ids), vocab_size) = {tuple(expected.shape)}.")
    if not answer.is_floating_point():
        return Feedback(MISTAKE, f"dtype {answer.dtype}: W_E is float, so the one-hot rows should be float too (.float()).")
    if _close(answer, expected):
        return Feedback(CORRECT, f"Correct: shape {tuple(expected.shape)}, one 1 per row.")
    ones = answer.sum(dim=1)
    if bool((ones == 1).all()):
        return Feedback(MISTAKE, "Each row has a single 1, but not in column id: check the ids (off by one?).")
    return Feedback(WRONG, "Each row must hold a single 1 (in the column of its id) and zeros elsewhere.")


def check_embedding(answer: torch.Tensor | None, *, ids: Sequence[int], W_E: torch.Tensor) -> Feedback:
    """X for these ids: row id of W_E for every token, shape (len(ids), d_model)."""
    answer = _as_tensor(answer, "X, one row of W_E per token")
    if isinstance(answer, Feedback):
        return answer
    expected = W_E[torch.as_tensor(list(ids))]
    if _close(answer, expected):
        return Feedback(CORRECT, f"Correct: shape {tuple(expected.shape)}, row k is W_E[ids[k]].")
    if answer.shape == expected.shape[::-1] and _close(answer.T, expected):
        return Feedback(MISTAKE, f"Transposed: expected (len(ids), d_model) = {tuple(expected.shape)}.")
    if answer.shape == (W_E.shape[0], W_E.shape[1]):
        return Feedback(MISTAKE, "That is all of W_E: pick the rows of the sentence's ids (W_E[ids], or one_hot @ W_E).")
    if answer.shape == expected.shape and _close(answer, W_E[torch.as_tensor(list(ids)) - 1]):
        return Feedback(MISTAKE, "Off by one: id k is row k of W_E, counting from 0.")
    return Feedback(WRONG, f"Expected W_E[ids], shape {tuple(expected.shape)}.")


def check_parameter_count(answer: int | None, *, vocab_size: int, d_model: int) -> Feedback:
    """vocab_size * d_model: W_E has one learned d_model-long row per vocabulary entry, and no bias."""
    if answer is None:
        return _not_attempted("a number")
    expected = vocab_size * d_model
    if answer == expected:
        return Feedback(CORRECT, f"Correct: {vocab_size} x {d_model} = {expected:,} parameters.")
    if answer == vocab_size + d_model:
        return Feedback(MISTAKE, "Added the sizes: W_E is a (vocab_size, d_model) matrix, so multiply them.")
    if answer == expected + d_model:
        return Feedback(MISTAKE, "Counted a bias: the projection X = one_hot @ W_E has none.")
    return Feedback(WRONG, f"W_E has shape ({vocab_size}, {d_model}); how many numbers is that?")


# The encoding ------------------------------------------------------------------------


def check_denominators(answer: torch.Tensor | None, *, d_model: int, base: float = DEFAULT_BASE) -> Feedback:
    """base^(2i / d_model) for i = 0 .. ceil(d_model / 2) - 1."""
    answer = _as_tensor(answer, "the tensor of denominators")
    if isinstance(answer, Feedback):
        return answer
    d_model, base = check_size("d_model", d_model), check_base(base)
    pairs = torch.arange((d_model + 1) // 2, dtype=torch.float64)
    expected = base ** (2 * pairs / d_model)
    if _close(answer, expected, atol=1e-3):
        return Feedback(CORRECT, f"Correct: {answer.numel()} denominators, from 1 to {float(expected[-1]):.4g}.")
    if _close(answer, base ** (pairs / d_model), atol=1e-3):
        return Feedback(MISTAKE, "Exponent i / d_model: it must be 2i / d_model, with 2i the even column index.")
    if _close(answer, 1 / expected, atol=1e-6):
        return Feedback(MISTAKE, "These are 1 / denominator: the angle is pos divided by base^(2i/d_model).")
    if answer.numel() == d_model:
        return Feedback(MISTAKE, f"{d_model} values: one denominator per (sin, cos) pair, {expected.numel()} in all.")
    return Feedback(WRONG, f"Expected {expected.numel()} values starting 1, {float(expected[1]) if len(expected) > 1 else 1:.4g}, ...")


def _variant(length: int, d_model: int, base: float, *, exponent: Callable[[torch.Tensor], torch.Tensor],
             first_position: int = 0, swap: bool = False, size_in_denominator: int | None = None) -> torch.Tensor:
    """The table built with one deliberate mistake, in float64, interleaved."""
    position = torch.arange(first_position, first_position + length, dtype=torch.float64)[:, None]
    column = torch.arange(d_model, dtype=torch.float64)
    angle = position / base ** (exponent(column) / (size_in_denominator or d_model))
    sine, cosine = torch.sin(angle), torch.cos(angle)
    even = column % 2 == 0
    return torch.where(even ^ swap, sine, cosine)


def _pair_exponent(column: torch.Tensor) -> torch.Tensor:
    return 2 * torch.div(column, 2, rounding_mode="floor")  # 2i for columns 2i and 2i + 1


def check_encoding(answer: torch.Tensor | None, *, max_sequence_length: int, d_model: int, base: float = DEFAULT_BASE,
                   dtype: torch.dtype = torch.float32) -> Feedback:
    """The full (max_sequence_length, d_model) table, columns sin, cos, sin, cos, ..."""
    answer = _as_tensor(answer, "your (max_sequence_length, d_model) table")
    if isinstance(answer, Feedback):
        return answer
    L, d = check_size("max_sequence_length", max_sequence_length), check_size("d_model", d_model)
    base = check_base(base)
    expected = sinusoidal_encoding(max_sequence_length=L, d_model=d, base=base, dtype=torch.float64)
    if answer.shape == (d, L) and L != d and _close(answer.T, expected):
        return Feedback(MISTAKE, f"Transposed: shape {tuple(answer.shape)}; rows are positions and columns dimensions, "
                                 f"so the table is (max_sequence_length, d_model) = ({L}, {d}).")
    if d % 2 == 1 and answer.shape == (L, d + 1) and _close(answer[:, :d], expected):
        return Feedback(MISTAKE, f"{d + 1} columns for d_model = {d}: with an odd d_model, stack + flatten pairs the last "
                                 "sine column with an extra cosine column. Keep the first d_model columns.")
    if answer.shape != (L, d):
        return Feedback(WRONG, f"Shape {tuple(answer.shape)}, expected (max_sequence_length, d_model) = ({L}, {d}).")
    if not answer.is_floating_point():
        return Feedback(WRONG, f"dtype {answer.dtype}: the encoding holds fractions, use a floating-point dtype.")
    if _close(answer, expected):
        if answer.dtype != dtype:
            return Feedback(MISTAKE, f"The numbers are right but the dtype is {answer.dtype}, not {dtype}: a float64 "
                                     "position column divided by a float32 denominator turns the whole table float64. "
                                     f"Create the positions with dtype={dtype}.")
        return Feedback(CORRECT, f"Correct: a ({L}, {d}) table, sin and cos interleaved, matching the formula to 1e-4.")
    mistakes = [
        ("sine and cosine are swapped: even columns (2i) take sin, odd columns (2i + 1) take cos.",
         lambda: _variant(L, d, base, exponent=_pair_exponent, swap=True)),
        ("the exponent uses i instead of 2i: the denominator is base^(2i / d_model).",
         lambda: _variant(L, d, base, exponent=lambda j: torch.div(j, 2, rounding_mode="floor"))),
        ("the odd columns use their own index in the exponent: column 2i + 1 shares the denominator of column 2i, "
         "base^(2i / d_model), i.e. (j - 1) / d_model for odd j.", lambda: _variant(L, d, base, exponent=lambda j: j)),
        ("the halves are concatenated [sin..., cos...] instead of interleaved sin, cos, sin, cos: "
         "stack on dim=2, then flatten.", lambda: torch.cat([expected[:, 0::2], expected[:, 1::2]], dim=1)),
        ("the positions start at 1: the first token is position 0 (torch.arange(max_sequence_length)).",
         lambda: _variant(L, d, base, exponent=_pair_exponent, first_position=1)),
        (f"the denominator divides by max_sequence_length={L} instead of d_model={d}: the two sizes are swapped "
         "(as in the source slides' code).",
         lambda: _variant(L, d, base, exponent=_pair_exponent, size_in_denominator=L)),
    ]
    for message, build in mistakes:
        if _close(answer, build()):
            return Feedback(MISTAKE, "Not quite: " + message)
    worst = (answer.double() - expected).abs()
    row, column = divmod(int(worst.argmax()), d)
    return Feedback(WRONG, f"Not the sinusoidal table: the largest difference, {float(worst.max()):.3g}, is at "
                           f"position {row}, column {column}.")


def check_positional_module(module: object, *, d_model: int = 6, max_sequence_length: int = 10) -> Feedback:
    """A module whose forward adds the table to (seq, d_model) or (batch, seq, d_model) inputs."""
    if module is None:
        return _not_attempted("an instance of your module")
    if not isinstance(module, torch.nn.Module):
        return Feedback(WRONG, f"Expected an nn.Module instance, got {type(module).__name__}.")
    expected = sinusoidal_encoding(max_sequence_length=max_sequence_length, d_model=d_model)
    x = torch.randn(2, max_sequence_length, d_model, generator=torch.Generator().manual_seed(0))
    try:
        out = module(x)
    except AssertionError:
        return Feedback(MISTAKE, "forward raised AssertionError for a sequence as long as max_sequence_length: "
                                 "check with <=, and raise ValueError rather than assert (python -O removes asserts).")
    except Exception as error:  # the learner's code: report whatever it raised
        return Feedback(WRONG, f"forward raised {type(error).__name__}: {error}")
    if not isinstance(out, torch.Tensor) or out.shape != x.shape:
        return Feedback(WRONG, f"forward should return x's shape {tuple(x.shape)}, got "
                               f"{tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__}.")
    if _close(out, expected.expand_as(x)):
        return Feedback(MISTAKE, "forward returns the table alone: add it to x.")
    if not _close(out, x + expected):
        return Feedback(WRONG, "forward(x) should equal x + PE for every batch entry.")
    try:
        short = module(x[:, :3])
    except Exception as error:
        return Feedback(MISTAKE, f"forward fails on a shorter sequence ({type(error).__name__}): slice the table to x's length.")
    if not _close(short, x[:, :3] + expected[:3]):
        return Feedback(WRONG, "for a shorter sequence, forward should add the table's first rows.")
    return Feedback(CORRECT, "Correct: forward adds the table, for full-length and shorter sequences.")


def check_scores(answer: torch.Tensor | None, *, Q: torch.Tensor, K: torch.Tensor) -> Feedback:
    """Q @ K^T / sqrt(d_k)."""
    answer = _as_tensor(answer, "the score matrix")
    if isinstance(answer, Feedback):
        return answer
    raw = Q @ K.transpose(-2, -1)
    d_k = Q.shape[-1]
    if _close(answer, raw / math.sqrt(d_k)):
        return Feedback(CORRECT, f"Correct: Q @ K^T / sqrt({d_k}), shape {tuple(answer.shape)}.")
    if _close(answer, raw):
        return Feedback(MISTAKE, f"Divide by sqrt(d_k) = {math.sqrt(d_k):.4g}: unscaled scores make the softmax nearly one-hot.")
    if _close(answer, raw / d_k):
        return Feedback(MISTAKE, f"Divided by d_k = {d_k}; the scale is its square root, sqrt(d_k).")
    if _close(answer, K @ Q.transpose(-2, -1) / math.sqrt(d_k)):
        return Feedback(MISTAKE, "Transposed: rows are queries (the word looking), so Q @ K^T, not K @ Q^T.")
    return Feedback(WRONG, f"Expected Q @ K^T / sqrt(d_k), shape {tuple(raw.shape)}.")
