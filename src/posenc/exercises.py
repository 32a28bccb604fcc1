"""Answer checkers for the notebooks' exercises: they name the mistake, not just "wrong".

Each `check_*` function takes the learner's answer and the exercise's sizes and
returns a `Feedback`, shown as one line in the notebook. Whatever the answer is (None,
a number, a list, a numpy array, a tensor of any dtype, shape or device, NaN, a module
whose forward raises), the checker answers and never raises: the feedback says what
it got and what it expected. Lists and numpy arrays are read as tensors. Only a bad
keyword argument of the checker itself (the exercise's sizes, a notebook's bug) raises.

An exercise cell starts with `answer = None`, which every checker reports as "not
attempted yet", so an unsolved notebook still runs from top to bottom.

The encoding checker recognises the usual mistakes by rebuilding the table with
each mistake made on purpose and comparing: sine and cosine swapped, exponent `i`
instead of `2i`, `2i` applied to the odd index too, halves concatenated instead of
interleaved, positions starting at 1, the wrong size in the denominator, a
transposed table, float64 where float32 was asked, and `d_model + 1` columns for
an odd `d_model`. The masked-attention checker does the same for a missing mask, the
mask applied after the softmax, 0 instead of -inf, hidden rows instead of columns,
and the softmax over the wrong axis. The rotary checker: the rotation turned the wrong
way, the half-split layout instead of interleaved pairs, positions from 1, exponent `i`
instead of `2i`, and no rotation at all. The ALiBi checker: slopes from 2^0, the
exponent's sign, the order reversed, and the rule for another head count.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from . import tokens
from ._validate import _short, check_base, check_float_dtype, check_floating_tensor, check_size, check_str, check_tensor
from .attention import attention_weights
from .encoding import DEFAULT_BASE, sinusoidal_encoding
from .schemes import alibi_slopes, apply_rotary

__all__ = ["Feedback", "check_padding", "check_one_hot", "check_embedding", "check_parameter_count", "check_denominators",
           "check_encoding", "check_positional_module", "check_scores", "check_padding_mask", "check_masked_weights",
           "check_rotary", "check_alibi_slopes", "check_length_prediction"]

CORRECT, MISTAKE, NOT_ATTEMPTED, WRONG = "correct", "mistake", "not attempted", "wrong"
_SYMBOL = {CORRECT: "✔", MISTAKE: "✘", NOT_ATTEMPTED: "…", WRONG: "✘"}


@dataclass(frozen=True)
class Feedback:
    """The verdict on one answer: `status` is correct, mistake (a known one, named), wrong, or not attempted."""

    status: str
    message: str

    def __post_init__(self) -> None:
        if not isinstance(self.status, str) or self.status not in _SYMBOL:
            raise ValueError(f"status must be one of {tuple(_SYMBOL)}, got {_short(self.status)}")
        check_str("message", self.message)

    @property
    def correct(self) -> bool:
        return self.status == CORRECT

    def __str__(self) -> str:
        return f"{_SYMBOL[self.status]} {self.message}"

    def __repr__(self) -> str:
        return str(self)


def _not_attempted(what: str) -> Feedback:
    return Feedback(NOT_ATTEMPTED, f"Not attempted yet: replace None with {what}.")


def _describe(answer: object) -> str:
    if isinstance(answer, torch.Tensor):
        return f"a tensor of shape {tuple(answer.shape)} and dtype {answer.dtype}"
    if isinstance(answer, np.ndarray):
        return f"a numpy array of shape {answer.shape} and dtype {answer.dtype}"
    return f"{type(answer).__name__} {_short(answer)}"


def _as_tensor(answer: object, what: str, *, allow_nan: bool = False) -> torch.Tensor | Feedback:
    """The answer as a detached CPU tensor of real numbers, or the feedback that says why it is not one.

    NaN and inf are refused unless `allow_nan` (for an exercise where a NaN is itself a diagnosis).
    """
    if answer is None:
        return _not_attempted(what)
    if isinstance(answer, torch.Tensor):
        tensor = answer
    elif isinstance(answer, (list, tuple, np.ndarray)):
        try:  # a list of lists or an array of numbers reads as a tensor; anything ragged or non-numeric does not
            tensor = torch.as_tensor(np.asarray(answer))
        except (TypeError, ValueError, RuntimeError):
            return Feedback(WRONG, f"Expected {what} as a tensor; could not read {_describe(answer)} as one.")
    else:
        return Feedback(WRONG, f"Expected {what} as a torch.Tensor, got {_describe(answer)}.")
    if tensor.is_meta:
        return Feedback(WRONG, "Got a tensor on the 'meta' device, which holds no numbers: create it on the CPU.")
    if tensor.is_complex():
        return Feedback(WRONG, f"Got complex numbers ({tensor.dtype}); the answer holds real numbers.")
    tensor = tensor.detach().cpu()
    if not allow_nan and tensor.is_floating_point() and tensor.numel() and not bool(torch.isfinite(tensor).all()):
        where = tuple(int(k) for k in (~torch.isfinite(tensor)).nonzero()[0])
        return Feedback(WRONG, f"Your answer holds NaN or inf (first at index {where}); every entry should be a finite number.")
    return tensor


def _close(a: torch.Tensor, b: torch.Tensor, atol: float = 1e-4) -> bool:
    if a.shape != b.shape or a.is_meta or a.is_complex():
        return False
    return bool(torch.allclose(a.detach().cpu().double(), b.detach().cpu().double(), atol=atol, rtol=0))


def _ids(name: str, ids: object) -> list[int]:
    """The exercise's ids (a checker argument, not the learner's answer)."""
    if isinstance(ids, (str, bytes)) or not isinstance(ids, Sequence) or not all(
            isinstance(i, numbers.Integral) and not isinstance(i, bool) and i >= 0 for i in ids):
        raise TypeError(f"{name} must be a list of ints >= 0, got {_short(ids)}")
    return [int(i) for i in ids]


# Padding and one-hot ---------------------------------------------------------------


def check_padding(answer: Sequence[str] | None, *, sentence: str, max_sequence_length: int) -> Feedback:
    """The sentence's tokens followed by `<PAD>` up to exactly max_sequence_length tokens."""
    expected = tokens.pad(tokens.tokenize(sentence), max_sequence_length=max_sequence_length)
    if answer is None:
        return _not_attempted("the list of padded tokens")
    if isinstance(answer, str) or not isinstance(answer, Sequence):
        return Feedback(WRONG, f"Expected a list of tokens (str), got {_describe(answer)}.")
    answer = list(answer)
    for k, token in enumerate(answer):
        if not isinstance(token, str):
            return Feedback(WRONG, f"Expected a list of str tokens, but item {k} is {_describe(token)}.")
    if answer == expected:
        return Feedback(CORRECT, f"Correct: {len(answer)} tokens, the last {expected.count(tokens.PAD_TOKEN)} are padding.")
    words = [t for t in answer if t != tokens.PAD_TOKEN]
    if len(answer) != max_sequence_length:
        return Feedback(MISTAKE, f"Wrong length: {len(answer)} tokens; padded to max_sequence_length={max_sequence_length}, "
                                 f"a sentence has exactly {max_sequence_length}.")
    if answer[: answer.count(tokens.PAD_TOKEN)] == [tokens.PAD_TOKEN] * answer.count(tokens.PAD_TOKEN) and words == expected[: len(words)]:
        return Feedback(MISTAKE, "The padding is in front: put <PAD> after the words, so position 0 is the first word.")
    if [w.lower() for w in words] == [w for w in expected if w != tokens.PAD_TOKEN] and words != expected[: len(words)]:
        return Feedback(MISTAKE, "Lower-case the words first: the vocabulary holds 'my', not 'My'.")
    return Feedback(WRONG, f"Got {_short(answer)}; expected the padded sentence {expected}.")


def check_one_hot(answer: torch.Tensor | None, *, ids: Sequence[int], vocab_size: int) -> Feedback:
    """One row per id, a single 1 in column id: shape (len(ids), vocab_size)."""
    expected = tokens.one_hot(_ids("ids", ids), vocab_size=check_size("vocab_size", vocab_size, maximum=100_000))
    answer = _as_tensor(answer, "the one-hot matrix")
    if isinstance(answer, Feedback):
        return answer
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
    ids = _ids("ids", ids)
    check_floating_tensor("W_E", W_E, ndim=(2,))
    if any(i >= W_E.shape[0] for i in ids):
        raise ValueError(f"ids must be rows of W_E, below {W_E.shape[0]}, got {ids}")
    answer = _as_tensor(answer, "X, one row of W_E per token")
    if isinstance(answer, Feedback):
        return answer
    expected = W_E.detach()[torch.as_tensor(ids, dtype=torch.long)]
    W_E = W_E.detach()
    if _close(answer, expected):
        return Feedback(CORRECT, f"Correct: shape {tuple(expected.shape)}, row k is W_E[ids[k]].")
    if answer.shape == expected.shape[::-1] and _close(answer.T, expected):
        return Feedback(MISTAKE, f"Transposed: expected (len(ids), d_model) = {tuple(expected.shape)}.")
    if answer.shape == (W_E.shape[0], W_E.shape[1]):
        return Feedback(MISTAKE, "That is all of W_E: pick the rows of the sentence's ids (W_E[ids], or one_hot @ W_E).")
    if answer.shape == expected.shape and _close(answer, W_E[torch.as_tensor(ids, dtype=torch.long) - 1]):
        return Feedback(MISTAKE, "Off by one: id k is row k of W_E, counting from 0.")
    return Feedback(WRONG, f"Got {_describe(answer)}; expected W_E[ids], shape {tuple(expected.shape)}.")


def check_parameter_count(answer: int | None, *, vocab_size: int, d_model: int) -> Feedback:
    """vocab_size * d_model: W_E has one learned d_model-long row per vocabulary entry, and no bias."""
    vocab_size, d_model = check_size("vocab_size", vocab_size), check_size("d_model", d_model)
    if answer is None:
        return _not_attempted("a number")
    number = _as_count(answer)
    if number is None:
        return Feedback(WRONG, f"Expected a whole number of parameters, got {_describe(answer)}.")
    answer = number
    expected = vocab_size * d_model
    if answer == expected:
        return Feedback(CORRECT, f"Correct: {vocab_size} x {d_model} = {expected:,} parameters.")
    if answer == vocab_size + d_model:
        return Feedback(MISTAKE, "Added the sizes: W_E is a (vocab_size, d_model) matrix, so multiply them.")
    if answer == expected + d_model:
        return Feedback(MISTAKE, "Counted a bias: the projection X = one_hot @ W_E has none.")
    return Feedback(WRONG, f"Got {answer:,}; W_E has shape ({vocab_size}, {d_model}): how many numbers is that?")


def _as_count(answer: object) -> int | None:
    """A whole number from an int, a whole float, or a one-element tensor or array holding one; else None."""
    if isinstance(answer, torch.Tensor):
        if answer.is_meta or answer.is_complex() or answer.numel() != 1:
            return None
        answer = answer.item()
    elif isinstance(answer, np.ndarray):
        if answer.size != 1 or answer.dtype.kind not in "iuf":
            return None
        answer = answer.item()
    if isinstance(answer, bool) or not isinstance(answer, numbers.Real):
        return None
    if isinstance(answer, numbers.Integral):
        return int(answer)
    return int(answer) if math.isfinite(answer) and float(answer).is_integer() else None


# The encoding ------------------------------------------------------------------------


def check_denominators(answer: torch.Tensor | None, *, d_model: int, base: float = DEFAULT_BASE) -> Feedback:
    """base^(2i / d_model) for i = 0 .. ceil(d_model / 2) - 1."""
    d_model, base = check_size("d_model", d_model, maximum=100_000), check_base(base)
    answer = _as_tensor(answer, "the tensor of denominators")
    if isinstance(answer, Feedback):
        return answer
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
    return Feedback(WRONG, f"Got {_describe(answer)}; expected {expected.numel()} values starting 1, {float(expected[1]) if len(expected) > 1 else 1:.4g}, ...")


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
    # The diagnosis rebuilds the table with each known mistake: exercise-sized tables only.
    L = check_size("max_sequence_length", max_sequence_length, maximum=4096)
    d = check_size("d_model", d_model, maximum=4096)
    base, dtype = check_base(base), check_float_dtype(dtype)
    answer = _as_tensor(answer, "your (max_sequence_length, d_model) table")
    if isinstance(answer, Feedback):
        return answer
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
    expected = sinusoidal_encoding(max_sequence_length=check_size("max_sequence_length", max_sequence_length, maximum=4096),
                                   d_model=check_size("d_model", d_model, maximum=4096))
    if module is None:
        return _not_attempted("an instance of your module")
    if not isinstance(module, torch.nn.Module):
        return Feedback(WRONG, f"Expected an nn.Module instance, got {_describe(module)}.")
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
    if not isinstance(short, torch.Tensor) or not _close(short, x[:, :3] + expected[:3]):
        return Feedback(WRONG, "for a shorter sequence, forward should add the table's first rows.")
    return Feedback(CORRECT, "Correct: forward adds the table, for full-length and shorter sequences.")


def check_scores(answer: torch.Tensor | None, *, Q: torch.Tensor, K: torch.Tensor) -> Feedback:
    """Q @ K^T / sqrt(d_k)."""
    check_floating_tensor("Q", Q, ndim=(2, 3))
    check_floating_tensor("K", K, ndim=(2, 3))
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last dimension d_k, got {tuple(Q.shape)} and {tuple(K.shape)}")
    Q, K = Q.detach().double(), K.detach().double()
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
    return Feedback(WRONG, f"Got {_describe(answer)}; expected Q @ K^T / sqrt(d_k), shape {tuple(raw.shape)}.")


# Batches and masks ---------------------------------------------------------------------


def check_padding_mask(answer: torch.Tensor | None, *, ids: torch.Tensor, pad_id: int) -> Feedback:
    """True where a token is real, False where it is padding: a bool tensor of ids' shape."""
    check_tensor("ids", ids, ndim=(1, 2))
    pad_id = check_size("pad_id", pad_id, minimum=0, maximum=2**62)
    expected = ids != pad_id
    answer = _as_tensor(answer, "the (batch, max_sequence_length) mask")
    if isinstance(answer, Feedback):
        return answer
    if answer.shape == expected.shape[::-1] and answer.shape != expected.shape and torch.equal(answer.T.bool(), expected):
        return Feedback(MISTAKE, f"Transposed: shape {tuple(answer.shape)}, expected one row per sentence, "
                                 f"{tuple(expected.shape)}.")
    if answer.shape != expected.shape:
        return Feedback(WRONG, f"Got shape {tuple(answer.shape)}; the mask has the shape of ids, {tuple(expected.shape)}.")
    if torch.equal(answer.bool(), ~expected) and bool(((answer == 0) | (answer == 1)).all()):
        return Feedback(MISTAKE, "Inverted: True marks the padding here. That is the convention of PyTorch's "
                                 "nn.MultiheadAttention (key_padding_mask, True = ignore); this suite's mask is True "
                                 "where a token is real: ids != pad_id.")
    if torch.equal(answer.bool(), expected) and bool(((answer == 0) | (answer == 1)).all()):
        if answer.dtype != torch.bool:
            return Feedback(MISTAKE, f"The right 0s and 1s, but dtype {answer.dtype}: masked_fill and ~ need a bool "
                                     "mask (compare ids != pad_id gives one).")
        return Feedback(CORRECT, f"Correct: {int(expected.sum())} real tokens, {int((~expected).sum())} padding.")
    return Feedback(WRONG, f"Got {_describe(answer)} that marks other places; expected True exactly where ids != {pad_id}.")


def check_masked_weights(answer: torch.Tensor | None, *, scores: torch.Tensor, key_mask: torch.Tensor) -> Feedback:
    """softmax over each row of the scores, with the padded keys set to -inf first."""
    check_floating_tensor("scores", scores, ndim=(2, 3))
    check_tensor("key_mask", key_mask, ndim=(1, 2))  # attention_weights checks the rest (dtype, length, batch)
    scores = scores.detach().double()
    expected = attention_weights(scores, key_mask=key_mask)
    # The softmax down the wrong axis gives NaN where a whole column is masked: keep NaN to recognise it.
    answer = _as_tensor(answer, "the masked attention weights", allow_nan=True)
    if isinstance(answer, Feedback):
        return answer
    answer = torch.nan_to_num(answer.double(), nan=0.0, posinf=0.0, neginf=0.0) if answer.is_floating_point() else answer
    keep = key_mask.unsqueeze(-2)
    if _close(answer, expected):
        return Feedback(CORRECT, f"Correct: shape {tuple(expected.shape)}, padding gets weight 0, every row sums to 1.")
    mistakes = [
        ("No mask: the padded keys still get weight. Set their scores to -inf before the softmax.",
         lambda: torch.softmax(scores, dim=-1)),
        ("The mask came after the softmax: zeroing weights afterwards leaves rows that no longer sum to 1. "
         "Mask the scores with -inf first, then take the softmax.", lambda: torch.softmax(scores, dim=-1) * keep),
        ("The padded scores were set to 0, not -inf: exp(0) = 1, so padding still gets weight. Use float('-inf').",
         lambda: torch.softmax(scores.masked_fill(~keep, 0.0), dim=-1)),
        ("The mask hides rows (queries) instead of columns (keys): it is the padded keys no word may look at, "
         "so the mask is broadcast over the rows, key_mask[..., None, :].",
         lambda: torch.softmax(scores.masked_fill(~key_mask.unsqueeze(-1), float("-inf")), dim=-1)),
        ("The softmax ran down the columns (dim=-2): each query's row must sum to 1, so use dim=-1.",
         lambda: torch.softmax(scores.masked_fill(~keep, float("-inf")), dim=-2)),
    ]
    for message, build in mistakes:
        if _close(answer, torch.nan_to_num(build(), nan=0.0)):
            return Feedback(MISTAKE, message)
    return Feedback(WRONG, f"Got {_describe(answer)}; expected softmax(scores with padded keys at -inf), "
                           f"shape {tuple(expected.shape)}.")


# Other position schemes -------------------------------------------------------------


def check_rotary(answer: torch.Tensor | None, *, x: torch.Tensor, base: float = DEFAULT_BASE) -> Feedback:
    """RoPE of x (seq, d): pair (2i, 2i+1) at position p turned by p * base^(-2i/d), counter-clockwise."""
    check_floating_tensor("x", x, ndim=(2,))
    if x.shape[-1] % 2 or x.shape[-1] == 0:
        raise ValueError(f"x must have an even, non-zero number of columns d, got shape {tuple(x.shape)}")
    base = check_base(base)
    x = x.detach().double()
    expected = apply_rotary(x, base=base)
    answer = _as_tensor(answer, f"the rotated tensor of shape {tuple(x.shape)}")
    if isinstance(answer, Feedback):
        return answer
    if answer.shape != expected.shape:
        return Feedback(WRONG, f"Got shape {tuple(answer.shape)}; a rotation keeps x's shape, {tuple(x.shape)}.")
    if _close(answer, expected):
        return Feedback(CORRECT, f"Correct: each pair (2i, 2i+1) of row p turned by p * {base:g}^(-2i/{x.shape[1]}).")
    seq, d = x.shape

    def with_angles(angles: torch.Tensor) -> torch.Tensor:
        cos, sin = angles.cos(), angles.sin()
        x1, x2 = x[:, 0::2], x[:, 1::2]
        return torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1).flatten(-2)

    position = torch.arange(seq, dtype=torch.float64)[:, None]
    pair = torch.arange(d // 2, dtype=torch.float64)[None, :]
    mistakes = [
        ("Nothing was rotated: every row equals x. Row p turns by the angle p * base^(-2i/d).", lambda: x),
        ("Turned the wrong way: (x1 cos + x2 sin, -x1 sin + x2 cos) is a rotation by -angle. "
         "RoPE's is (x1 cos - x2 sin, x1 sin + x2 cos).", lambda: with_angles(-position * base ** (-2 * pair / d))),
        ("Pairs (i, i + d/2): that is the half-split layout of GPT-NeoX and LLaMA code. This exercise pairs "
         "neighbours, (2i, 2i+1), as the RoFormer paper does; the two differ by a column permutation "
         "(schemes.half_split_permutation).", lambda: apply_rotary(x, base=base, layout="half_split")),
        ("Positions start at 1 here; the first row is position 0 and stays as it is.",
         lambda: apply_rotary(x, base=base, offset=1)),
        ("The exponent used i instead of 2i: the angle is p * base^(-2i/d), where 2i is the pair's first column.",
         lambda: with_angles(position * base ** (-pair / d))),
        ("Multiplied by base^(2i/d) instead of dividing: the angle is p / base^(2i/d) = p * base^(-2i/d).",
         lambda: with_angles(position * base ** (2 * pair / d))),
    ]
    for message, build in mistakes:
        if _close(answer, build()):
            return Feedback(MISTAKE, message)
    return Feedback(WRONG, f"Got {_describe(answer)}; expected each pair (2i, 2i+1) of row p turned by the angle "
                           f"p * {base:g}^(-2i/{d}).")


def check_alibi_slopes(answer: object, *, num_heads: int) -> Feedback:
    """ALiBi's slopes for num_heads heads (a list, array or tensor of numbers, head 0 first)."""
    num_heads = check_size("num_heads", num_heads, maximum=1024)
    expected = alibi_slopes(num_heads=num_heads, dtype=torch.float64)
    answer = _as_tensor(answer, f"the {num_heads} slopes, e.g. a list")
    if isinstance(answer, Feedback):
        return answer
    answer = answer.double().flatten() if answer.dim() <= 1 else answer.double()
    if answer.shape != expected.shape:
        return Feedback(WRONG, f"Got {_describe(answer)}; expected {num_heads} slopes, one per head.")
    first = f"2^(-8/{num_heads}) = {float(expected[0]):.4g}"
    if _close(answer, expected, atol=1e-6):
        return Feedback(CORRECT, f"Correct: {num_heads} slopes from {float(expected[0]):.4g} down to {float(expected[-1]):.4g}.")
    k = torch.arange(num_heads, dtype=torch.float64)
    mistakes = [
        (f"One step too early: the first slope is {first}, not 1; the sequence starts at its ratio.",
         expected / expected[0]),
        ("The exponents' sign: slopes are below 1 and shrink, 2^(-8k/n) for k = 1 .. n.", 1 / expected),
        ("Reversed: head 0 gets the largest slope, " + first + ".", expected.flip(0)),
        (f"That is 2^(-k) for k = 1 .. {num_heads}: right for 8 heads only. For n heads the ratio is 2^(-8/n).",
         2.0 ** -(k + 1)),
    ]
    for message, wrong in mistakes:
        if _close(answer, wrong, atol=1e-6):
            return Feedback(MISTAKE, message)
    return Feedback(WRONG, f"Got {_describe(answer)}; expected the geometric sequence that starts at {first} with that "
                           "ratio" + (" (for a head count that is not a power of two, the paper's rule)"
                                      if num_heads & (num_heads - 1) else "") + ".")


def check_length_prediction(answer: object, *, accuracies: dict, length: int, threshold: float = 0.9) -> Feedback:
    """The schemes the learner predicted to fall below `threshold` accuracy (or have no answer) at `length`.

    `accuracies` is `experiment.compare`'s result. The feedback names the schemes
    predicted right and wrong, not the measured numbers (those move a little with the CPU).
    """
    length = check_size("length", length)
    if not isinstance(accuracies, dict) or not accuracies or not all(
            isinstance(v, dict) and length in v for v in accuracies.values()):
        raise ValueError(f"accuracies must be experiment.compare's result, with length {length} measured, "
                         f"got {_short(accuracies)}")
    if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real) or not 0 < threshold < 1:
        raise ValueError(f"threshold must be a number in (0, 1), got {threshold!r}")
    failing = {s for s, v in accuracies.items() if v[length] is None or v[length] < threshold}
    if answer is None:
        return _not_attempted("a list of the scheme names you expect to fail")
    if isinstance(answer, str):
        answer = [answer]
    if not isinstance(answer, (list, tuple, set, frozenset)) or not all(isinstance(a, str) for a in answer):
        return Feedback(WRONG, f"Expected a list of scheme names such as ['none'], got {_describe(answer)}.")
    unknown = sorted(set(answer) - set(accuracies))
    if unknown:
        return Feedback(WRONG, f"Unknown scheme names {unknown}; the schemes are {sorted(accuracies)}.")
    predicted = set(answer)
    if predicted == failing:
        return Feedback(CORRECT, f"Correct: at length {length}, {', '.join(sorted(failing)) or 'none of them'} "
                                 f"fell below {threshold:g} (or had no answer).")
    parts = []
    if failing - predicted:
        parts.append(f"also failing: {', '.join(sorted(failing - predicted))}")
    if predicted - failing:
        parts.append(f"held up (at least {threshold:g}): {', '.join(sorted(predicted - failing))}")
    return Feedback(WRONG, f"Not quite, at length {length}: " + "; ".join(parts) + ". The plot above shows why.")
