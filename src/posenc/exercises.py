"""Answer checkers for the notebooks' exercises: they name the mistake, not just "wrong".

Each `check_*` function takes the learner's answer and the exercise's sizes and
returns a `Feedback`, shown as one line in the notebook. Whatever the answer is (None,
a number, a list, a numpy array, a tensor of any dtype, shape or device, NaN, a module
whose forward raises), the checker answers and never raises: the feedback says what
it got and what it expected. Lists and numpy arrays are read as tensors. Only a bad
keyword argument of the checker itself (the exercise's sizes, a notebook's bug) raises.

An exercise cell starts with `answer = None`, which every checker reports as "not
attempted yet", so an unsolved notebook still runs from top to bottom. Every checker
also records its latest verdict per exercise, and `progress()` lists them: done, wrong
or not attempted.

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
exponent's sign, the order reversed, and the rule for another head count. The encoding
checker also recognises the angle multiplied by the denominator instead of divided, the
wrong base, and degrees taken for radians; the denominator and wavelength checkers the
wrong base; the wavelength and shift checkers degrees.
"""

from __future__ import annotations

import functools
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
           "check_rotary", "check_alibi_slopes", "check_length_prediction", "check_distinct_rows",
           "check_score_entry", "check_wavelength", "check_shift_matrix", "check_permuted_weights",
           "check_error_position", "check_prediction", "progress", "reset_progress", "Progress"]

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


# Progress ---------------------------------------------------------------------------
# The latest verdict per exercise, in the order the exercises were first checked. An exercise is one checker
# with one set of sizes, so running a checker cell again replaces its verdict instead of adding a line.
_VERDICTS: dict[tuple, tuple[str, Feedback]] = {}
_STATUS_WORDS = {CORRECT: "done", MISTAKE: "wrong", WRONG: "wrong", NOT_ATTEMPTED: "not attempted"}
_SYMBOLS_BY_WORD = {"done": "✔", "wrong": "✘", "not attempted": "…"}


_NUMPY_DTYPES = {torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16, torch.float32,
                 torch.float64, torch.complex64, torch.complex128}


def _fingerprint(value: object) -> object:
    """A hashable stand-in for a checker's keyword argument (tensors by their numbers)."""
    if isinstance(value, torch.Tensor):
        if value.is_meta:
            return ("tensor", tuple(value.shape), str(value.dtype))
        tensor = value.detach().cpu()
        if tensor.dtype not in _NUMPY_DTYPES:  # bfloat16, float8, ...: numpy has no such type
            tensor = tensor.to(torch.complex128 if tensor.is_complex() else torch.float64)
        return ("tensor", tuple(value.shape), str(value.dtype), tensor.numpy().tobytes())
    if isinstance(value, (list, tuple)):
        return tuple(_fingerprint(v) for v in value)
    if isinstance(value, dict):
        return tuple((repr(k), _fingerprint(v)) for k, v in value.items())
    return repr(value)


def _summary(kwargs: dict) -> str:
    """The exercise's plain sizes (strings and numbers) for its line in `progress()`; tensors are left out."""
    parts = [f"{name}={value!r}" for name, value in kwargs.items()
             if isinstance(value, (str, int, float)) and not isinstance(value, bool)
             and name not in ("question", "explanation")]
    text = ", ".join(parts)
    return text if len(text) <= 70 else text[:69] + "…"


def _exercise(title: str) -> Callable:
    """Record every verdict of the checker under `title` and its sizes, for `progress()`."""
    def decorate(checker: Callable[..., Feedback]) -> Callable[..., Feedback]:
        @functools.wraps(checker)
        def recorded(*args, **kwargs) -> Feedback:
            feedback = checker(*args, **kwargs)
            name = kwargs.get("question") if isinstance(kwargs.get("question"), str) else title
            sizes = _summary(kwargs)
            label = f"{name} ({sizes})" if sizes else name
            _VERDICTS[(checker.__name__, _fingerprint(kwargs))] = (label, feedback)
            return feedback
        return recorded
    return decorate


@dataclass(frozen=True)
class Progress:
    """The exercises checked in this kernel session, each with its latest verdict (see `progress()`)."""

    entries: tuple[tuple[str, str], ...]  # (exercise, "done" | "wrong" | "not attempted")

    def count(self, status: str) -> int:
        """How many exercises have `status`: "done", "wrong" or "not attempted"."""
        if check_str("status", status) not in _SYMBOLS_BY_WORD:
            raise ValueError(f"status must be one of {tuple(_SYMBOLS_BY_WORD)}, got {status!r}")
        return sum(1 for _, s in self.entries if s == status)

    def __str__(self) -> str:
        if not self.entries:
            return "Your progress: no exercise checked yet in this session (run the checker cells)."
        head = (f"Your progress: {len(self.entries)} exercises, {self.count('done')} done, {self.count('wrong')} wrong, "
                f"{self.count('not attempted')} not attempted")
        return "\n".join([head] + [f"  {_SYMBOLS_BY_WORD[s]} {s:<14} {name}" for name, s in self.entries])

    def __repr__(self) -> str:
        return str(self)


def progress() -> Progress:
    """Which exercises of this session are done, wrong or not attempted, in the order they were first checked.

    Each checker call records its verdict; running a checker again (after changing the
    answer) replaces that exercise's verdict. Restarting the kernel starts afresh.
    """
    return Progress(tuple((label, _STATUS_WORDS[feedback.status]) for label, feedback in _VERDICTS.values()))


def reset_progress() -> None:
    """Forget every verdict so far: `progress()` lists only the exercises checked after this call.

    For a notebook that runs a checker on purpose to show a diagnosis before its own exercises.
    """
    _VERDICTS.clear()


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


@_exercise("pad a sentence")
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
        given = next(w for w in words if w != w.lower())
        return Feedback(MISTAKE, f"Lower-case the words first: the vocabulary holds {given.lower()!r}, not {given!r}.")
    return Feedback(WRONG, f"Got {_short(answer)}; expected the padded sentence {expected}.")


@_exercise("one-hot rows")
def check_one_hot(answer: torch.Tensor | None, *, ids: Sequence[int], vocab_size: int) -> Feedback:
    """One row per id, a single 1 in column id: shape (len(ids), vocab_size)."""
    expected = tokens.one_hot(_ids("ids", ids), vocab_size=check_size("vocab_size", vocab_size, maximum=100_000))
    answer = _as_tensor(answer, "the one-hot matrix")
    if isinstance(answer, Feedback):
        return answer
    if answer.shape != expected.shape and answer.shape == expected.shape[::-1] and _close(answer.T, expected):
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


@_exercise("X by looking up rows of W_E")
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


@_exercise("parameters of W_E")
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


def _single_real(answer: object) -> numbers.Real | None:
    """The one real number an int, a float, or a one-element tensor or array holds; else None (bool is no number here)."""
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
    return answer


def _as_count(answer: object) -> int | None:
    """A whole number from an int, a whole float, or a one-element tensor or array holding one; else None."""
    number = _single_real(answer)
    if number is None:
        return None
    if isinstance(number, numbers.Integral):
        return int(number)
    return int(number) if math.isfinite(number) and float(number).is_integer() else None


def _as_number(answer: object) -> float | None:
    """A real number from an int, a float, or a one-element tensor or array; else None."""
    number = _single_real(answer)
    return None if number is None else float(number)


# The encoding ------------------------------------------------------------------------


@_exercise("the denominators")
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
    if base != DEFAULT_BASE and _close(answer, DEFAULT_BASE ** (2 * pairs / d_model), atol=1e-3):
        return Feedback(MISTAKE, f"The base is {DEFAULT_BASE:g} here; this exercise asks for base {base:g}: "
                                 f"{base:g}^(2i / d_model).")
    if answer.numel() == d_model:
        return Feedback(MISTAKE, f"{d_model} values: one denominator per (sin, cos) pair, {expected.numel()} in all.")
    return Feedback(WRONG, f"Got {_describe(answer)}; expected {expected.numel()} values starting 1, {float(expected[1]) if len(expected) > 1 else 1:.4g}, ...")


def _variant(length: int, d_model: int, base: float, *, exponent: Callable[[torch.Tensor], torch.Tensor],
             first_position: int = 0, swap: bool = False, size_in_denominator: int | None = None,
             multiply: bool = False, degrees: bool = False) -> torch.Tensor:
    """The table built with one deliberate mistake, in float64, interleaved."""
    position = torch.arange(first_position, first_position + length, dtype=torch.float64)[:, None]
    column = torch.arange(d_model, dtype=torch.float64)
    denominator = base ** (exponent(column) / (size_in_denominator or d_model))
    angle = position * denominator if multiply else position / denominator
    if degrees:
        angle = torch.deg2rad(angle)
    sine, cosine = torch.sin(angle), torch.cos(angle)
    even = column % 2 == 0
    return torch.where(even ^ swap, sine, cosine)


def _pair_exponent(column: torch.Tensor) -> torch.Tensor:
    return 2 * torch.div(column, 2, rounding_mode="floor")  # 2i for columns 2i and 2i + 1


@_exercise("the positional-encoding table")
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
        ("the position was multiplied by the denominator: the angle is pos / base^(2i / d_model) (or pos times "
         "its reciprocal, exp(-2i ln(base) / d_model)).",
         lambda: _variant(L, d, base, exponent=_pair_exponent, multiply=True)),
        ("the angle was taken in degrees (converted with pi / 180): torch.sin and torch.cos read radians, and the "
         "formula's angle pos / base^(2i / d_model) is in radians already.",
         lambda: _variant(L, d, base, exponent=_pair_exponent, degrees=True)),
    ]
    if base != DEFAULT_BASE:
        mistakes.append((f"this is the table for base {DEFAULT_BASE:g}; the exercise asks for base {base:g}.",
                         lambda: sinusoidal_encoding(max_sequence_length=L, d_model=d, dtype=torch.float64)))
    for message, build in mistakes:
        if _close(answer, build()):
            return Feedback(MISTAKE, "Not quite: " + message)
    worst = (answer.double() - expected).abs()
    row, column = divmod(int(worst.argmax()), d)
    return Feedback(WRONG, f"Not the sinusoidal table: the largest difference, {float(worst.max()):.3g}, is at "
                           f"position {row}, column {column}.")


@_exercise("a positional-encoding module")
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


@_exercise("scaled dot-product scores")
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


@_exercise("a padding mask")
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


@_exercise("masked attention weights")
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


@_exercise("RoPE by hand")
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


@_exercise("ALiBi's slopes")
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


@_exercise("which schemes fail on longer inputs")
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


# Predict, then run; transfer ----------------------------------------------------------


@_exercise("distinct rows")
def check_distinct_rows(answer: int | None, *, matrix: torch.Tensor) -> Feedback:
    """How many different rows `matrix` has (a prediction, checked against the matrix itself)."""
    check_floating_tensor("matrix", matrix, ndim=(2,))
    if matrix.numel() == 0:
        raise ValueError(f"matrix must have at least one row and one column, got shape {tuple(matrix.shape)}")
    matrix = matrix.detach().cpu()
    expected = int(torch.unique(matrix, dim=0).shape[0])
    rows = matrix.shape[0]
    if answer is None:
        return _not_attempted("a whole number")
    number = _as_count(answer)
    if number is None:
        return Feedback(WRONG, f"Expected a whole number of rows, got {_describe(answer)}.")
    if number == expected:
        return Feedback(CORRECT, f"Correct: {rows} rows, {expected} of them different.")
    if number == rows and expected < rows:
        return Feedback(MISTAKE, f"{rows} is every row, but equal ids give equal rows: row k of X is row id_k of W_E, "
                                 f"so repeated tokens (the padding too) repeat a row. {expected} are different.")
    if number == expected - 1 and expected < rows:
        return Feedback(MISTAKE, f"One short: a repeated row still counts once. {expected} are different.")
    return Feedback(WRONG, f"You said {number}; the matrix has {expected} different rows out of {rows}.")


@_exercise("read an entry of the scores")
def check_score_entry(answer: float | None, *, scores: torch.Tensor, tokens: Sequence[str], query: str,
                      key: str) -> Feedback:
    """The entry of `scores` where the token `query` (a row) looks at the token `key` (a column)."""
    check_floating_tensor("scores", scores, ndim=(2,))
    if isinstance(tokens, (str, bytes)) or not isinstance(tokens, Sequence) or not all(isinstance(t, str) for t in tokens):
        raise TypeError(f"tokens must be a list of str, got {_short(tokens)}")
    if len(tokens) != scores.shape[0] or scores.shape[0] != scores.shape[1]:
        raise ValueError(f"scores must be square with one row per token, got shape {tuple(scores.shape)} "
                         f"for {len(tokens)} tokens")
    for name, word in (("query", query), ("key", key)):
        if check_str(name, word) not in tokens:
            raise ValueError(f"{name} must be one of the tokens {list(tokens)}, got {word!r}")
    scores = scores.detach().cpu().double()
    row, column = list(tokens).index(query), list(tokens).index(key)
    if answer is None:
        return _not_attempted("one number from scores")
    number = _as_number(answer)
    if number is None:
        return Feedback(WRONG, f"Expected one number from scores, got {_describe(answer)}.")

    def at(r: int, c: int) -> bool:
        return 0 <= r < scores.shape[0] and 0 <= c < scores.shape[1] and abs(float(scores[r, c]) - number) <= 1e-6

    if at(row, column):
        return Feedback(CORRECT, f"Correct: scores[{row}, {column}]: row {row} ({query}) looks, column {column} ({key}) "
                                 "is looked at.")
    if at(column, row):
        return Feedback(MISTAKE, f"That is scores[{column}, {row}], how much {key} attends to {query}. Rows are the words "
                                 f"looking (queries), columns the words looked at (keys): {query} is row {row}.")
    if at(row + 1, column + 1):
        return Feedback(MISTAKE, f"That is scores[{row + 1}, {column + 1}]: indices count from 0, so {query} is row {row}.")
    found = [(r, c) for r in range(scores.shape[0]) for c in range(scores.shape[1]) if at(r, c)]
    if found:
        r, c = found[0]
        return Feedback(WRONG, f"That is scores[{r}, {c}]: how much {tokens[r]} attends to {tokens[c]}. "
                               f"You want the row of {query} and the column of {key}.")
    return Feedback(WRONG, f"{number:.4g} is not an entry of scores: pick one with scores[row, column].")


@_exercise("a wavelength")
def check_wavelength(answer: float | None, *, column: int, d_model: int, base: float = DEFAULT_BASE) -> Feedback:
    """The wavelength, in positions, of column `column`: 2 pi base^(2i / d_model), with 2i = column rounded down to even."""
    d_model = check_size("d_model", d_model, maximum=100_000)
    column = check_size("column", column, minimum=0, maximum=d_model - 1)
    base = check_base(base)
    two_i = column - column % 2
    denominator = base ** (two_i / d_model)
    expected = 2 * math.pi * denominator
    if answer is None:
        return _not_attempted("a number of positions")
    number = _as_number(answer)
    if number is None or not math.isfinite(number):
        return Feedback(WRONG, f"Expected a number of positions, got {_describe(answer)}.")

    def near(value: float) -> bool:
        return abs(number - value) <= 1e-3 * abs(value)

    if near(expected):
        return Feedback(CORRECT, f"Correct: column {column} repeats every 2 pi x {base:g}^({two_i}/{d_model}) = "
                                 f"{expected:.1f} positions.")
    mistakes = [
        (denominator, f"That is the denominator {base:g}^({two_i}/{d_model}) alone: sin(pos / denominator) repeats when "
                      "pos / denominator grows by 2 pi, so multiply by 2 pi."),
        (360 * denominator, "360 x the denominator is a period in degrees: torch.sin reads radians, whose period is 2 pi."),
        (1 / denominator, "1 / denominator is the angular frequency (radians per position); the wavelength is 2 pi over it."),
        (2 * math.pi / denominator, "2 pi / denominator divides the wrong way: the wavelength is 2 pi x denominator."),
    ]
    if column % 2:
        mistakes.append((2 * math.pi * base ** (column / d_model),
                         f"Column {column} is a cosine column: it shares the denominator of column {two_i}, "
                         f"{base:g}^({two_i}/{d_model}), not {base:g}^({column}/{d_model})."))
    if base != DEFAULT_BASE:
        mistakes.append((2 * math.pi * DEFAULT_BASE ** (two_i / d_model),
                         f"That is the wavelength for base {DEFAULT_BASE:g}; this one asks for base {base:g}."))
    for value, message in mistakes:
        if near(value):
            return Feedback(MISTAKE, message)
    return Feedback(WRONG, f"You said {number:.6g}; column {column}'s wavelength is 2 pi x {base:g}^({two_i}/{d_model}).")


def _shift_blocks(k: float, d_model: int, base: float, *, degrees: bool = False) -> torch.Tensor:
    """The (d_model, d_model) matrix M with M @ PE[p] = PE[p + k]: blocks [[cos wk, sin wk], [-sin wk, cos wk]]."""
    M = torch.zeros(d_model, d_model, dtype=torch.float64)
    for pair in range(d_model // 2):
        angle = k / base ** (2 * pair / d_model)
        angle = math.radians(angle) if degrees else angle
        c, s = math.cos(angle), math.sin(angle)
        M[2 * pair : 2 * pair + 2, 2 * pair : 2 * pair + 2] = torch.tensor([[c, s], [-s, c]], dtype=torch.float64)
    return M


@_exercise("the shift as a rotation")
def check_shift_matrix(answer: torch.Tensor | None, *, k: int, d_model: int, base: float = DEFAULT_BASE) -> Feedback:
    """The block-diagonal M with M @ PE[p] = PE[p + k] for every p (even d_model)."""
    k = check_size("k", k, minimum=-2**20, maximum=2**20)
    d_model = check_size("d_model", d_model, maximum=512)
    if d_model % 2:
        raise ValueError(f"d_model must be even: every (sin, cos) pair turns as one block, got d_model={d_model}")
    base = check_base(base)
    answer = _as_tensor(answer, f"the ({d_model}, {d_model}) matrix")
    if isinstance(answer, Feedback):
        return answer
    expected = _shift_blocks(k, d_model, base)
    if answer.shape != expected.shape:
        return Feedback(WRONG, f"Got shape {tuple(answer.shape)}; M maps a row of {d_model} numbers to another: "
                               f"({d_model}, {d_model}).")
    if _close(answer, expected):
        return Feedback(CORRECT, f"Correct: M @ PE[p] = PE[p + ({k})] for every p, one 2 x 2 block per pair.")
    if k and _close(answer, _shift_blocks(-k, d_model, base)):
        return Feedback(MISTAKE, f"That matrix moves k = {-k}: it is the transpose of the one asked for (a rotation's "
                                 f"inverse is its transpose). For k = {k} the blocks are [[cos wk, sin wk], "
                                 "[-sin wk, cos wk]] with k's own sign.")
    if _close(answer, torch.eye(d_model, dtype=torch.float64)):
        return Feedback(MISTAKE, "That is the identity, the shift by k = 0.")
    if _close(answer, _shift_blocks(k, d_model, base, degrees=True)):
        return Feedback(MISTAKE, "The angles were read as degrees: w k is in radians already.")
    return Feedback(WRONG, f"Got {_describe(answer)}; expected blocks [[cos wk, sin wk], [-sin wk, cos wk]], "
                           f"w = 1 / {base:g}^(2i/{d_model}), k = {k}.")


@_exercise("attention weights of a shuffled sentence")
def check_permuted_weights(answer: torch.Tensor | None, *, weights: torch.Tensor, order: Sequence[int]) -> Feedback:
    """The attention weights of the input reordered by `order`, from `weights` alone: weights[order][:, order]."""
    check_floating_tensor("weights", weights, ndim=(2,))
    n = weights.shape[0]
    order = _ids("order", order)
    if weights.shape[1] != n or sorted(order) != list(range(n)):
        raise ValueError(f"order must be a permutation of 0..{n - 1} for a square weights matrix, got {order} "
                         f"and shape {tuple(weights.shape)}")
    weights = weights.detach().cpu().double()
    answer = _as_tensor(answer, f"the ({n}, {n}) matrix of shuffled weights")
    if isinstance(answer, Feedback):
        return answer
    index = torch.tensor(order)
    inverse = torch.argsort(index)
    if _close(answer, weights[index][:, index], atol=1e-6):
        return Feedback(CORRECT, "Correct: rows and columns move together, weights[order][:, order] (P A P^T).")
    if _close(answer, weights, atol=1e-6) and order != sorted(order):
        return Feedback(MISTAKE, "Unchanged: the words moved, so their rows (who looks) and columns (who is looked at) move.")
    mistakes = [
        (weights[index], "Only the rows moved: each word's row does, but so does its column (the word as a key). "
                         "Permute both: weights[order][:, order]."),
        (weights[:, index], "Only the columns moved: permute the rows too, weights[order][:, order]."),
        (weights[inverse][:, inverse], "The inverse permutation: position k of the new sentence holds word order[k], "
                                       "so index with order itself, not with argsort(order)."),
    ]
    for wrong, message in mistakes:
        if _close(answer, wrong, atol=1e-6):
            return Feedback(MISTAKE, message)
    return Feedback(WRONG, f"Got {_describe(answer)}; expected the weights with rows and columns reordered by {order}.")


# Positions scanned by check_error_position: the angle error passes 1e-3 long before this.
MAX_ERROR_POSITION = 200_000


@functools.lru_cache(maxsize=4)
def _float32_angle_error(d_model: int, base: float) -> torch.Tensor:
    """Per position, the largest |float32 angle - exact angle| over the columns (positions 0 .. MAX_ERROR_POSITION - 1)."""
    denominator64 = base ** (torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    positions = torch.arange(MAX_ERROR_POSITION, dtype=torch.float32)[:, None]
    return ((positions / denominator64.float()).double() - positions.double() / denominator64).abs().amax(dim=1)


@_exercise("where float32 angles go wrong")
def check_error_position(answer: int | None, *, d_model: int, threshold: float = 1e-3,
                         base: float = DEFAULT_BASE) -> Feedback:
    """The first position whose float32 angles pos / denominator (largest over the columns) are off by more than
    `threshold` from the exact angle.

    The float32 angles are computed as the stepwise notebooks do (positions and denominators
    in float32, one division, which IEEE arithmetic rounds the same way on every CPU); the
    denominators are rounded from float64, so the answer does not depend on the machine.
    An answer within 1% of the position is accepted: another way of computing the
    denominators can move it by a few positions.
    """
    d_model = check_size("d_model", d_model, maximum=1024)
    base = check_base(base)
    if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real) or not 1e-6 <= threshold <= 0.1:
        raise ValueError(f"threshold must be a number from 1e-6 to 0.1, got {threshold!r}")
    error = _float32_angle_error(d_model, float(base))
    past = (error > threshold).nonzero()
    if len(past) == 0:
        raise ValueError(f"threshold={threshold} is not passed before position {MAX_ERROR_POSITION} for d_model={d_model}: "
                         "choose a smaller threshold or a larger d_model")
    expected = int(past[0])
    if answer is None:
        return _not_attempted("a position (a whole number)")
    number = _as_count(answer)
    if number is None:
        return Feedback(WRONG, f"Expected a position, a whole number, got {_describe(answer)}.")
    if abs(number - expected) <= 0.01 * expected:
        return Feedback(CORRECT, f"Correct: the float32 angles first miss by more than {threshold:g} at position "
                                 f"{expected:,}.")
    if 0 <= number < MAX_ERROR_POSITION and number < expected:
        return Feedback(WRONG, f"Too early: at position {number:,} the largest angle error is {float(error[number]):.1e}, "
                               f"still below {threshold:g}.")
    if number > expected:
        return Feedback(WRONG, f"Too late: the error already passed {threshold:g} before position {number:,}; look for "
                               "the first position where it does (e.g. (error > threshold).nonzero()[0]).")
    return Feedback(WRONG, f"Positions run from 0; got {number}.")


_PREDICTION_TYPES = (bool, int, float, str, tuple)


@_exercise("a prediction")
def check_prediction(answer: object, *, actual: object, question: str, explanation: str = "",
                     tolerance: float = 0.0) -> Feedback:
    """Compare the learner's prediction with what the run that follows it computed (`actual`).

    `actual` is a bool, a number, a str or a shape (a tuple of ints or torch.Size);
    numbers match within `tolerance` (relative). `explanation` says why the answer is
    what it is, and is shown whatever the prediction was.
    """
    if isinstance(actual, torch.Size):
        actual = tuple(actual)
    if not isinstance(actual, _PREDICTION_TYPES) or (isinstance(actual, tuple) and not all(
            isinstance(n, int) and not isinstance(n, bool) for n in actual)):
        raise TypeError(f"actual must be a bool, a number, a str or a shape (tuple of ints), got {_short(actual)}")
    if isinstance(actual, float) and not math.isfinite(actual):
        raise ValueError(f"actual must be a finite number, got {actual!r}")
    check_str("question", question)
    check_str("explanation", explanation)
    if isinstance(tolerance, bool) or not isinstance(tolerance, numbers.Real) or not 0 <= tolerance < 1:
        raise ValueError(f"tolerance must be a number in [0, 1), got {tolerance!r}")
    why = f" {explanation}" if explanation else ""
    if answer is None:
        return _not_attempted("your prediction, before you run the cell that reveals it")
    shown = _describe(answer) if isinstance(answer, (torch.Tensor, np.ndarray)) else _short(answer)
    if isinstance(actual, bool):
        given = answer
        if isinstance(answer, torch.Tensor) and answer.dtype == torch.bool and answer.dim() == 0 and not answer.is_meta:
            given = bool(answer)
        if not isinstance(given, (bool, np.bool_)):
            return Feedback(WRONG, f"Expected True or False, got {shown}.")
        right = bool(given) == actual
    elif isinstance(actual, tuple):
        if isinstance(answer, (torch.Size, list, tuple)) and all(isinstance(n, numbers.Integral) and not isinstance(n, bool)
                                                                 for n in answer):
            given = tuple(int(n) for n in answer)
        else:
            return Feedback(WRONG, f"Expected a shape such as (2, 3), got {shown}.")
        right = given == actual
        if not right and given == actual[::-1]:
            return Feedback(MISTAKE, f"The right sizes in the wrong order: the run says {actual}.{why}")
    elif isinstance(actual, str):
        if not isinstance(answer, str):
            return Feedback(WRONG, f"Expected a str, got {shown}.")
        right = answer.strip().lower() == actual.strip().lower()
    else:
        given = _as_number(answer)
        if given is None:
            return Feedback(WRONG, f"Expected a number, got {shown}.")
        right = abs(given - actual) <= tolerance * abs(actual) if tolerance else given == actual
    if right:
        return Feedback(CORRECT, f"Correct: {actual}.{why}")
    return Feedback(WRONG, f"You predicted {_short(answer) if not isinstance(answer, torch.Tensor) else shown}; "
                           f"the run says {actual}.{why}")
