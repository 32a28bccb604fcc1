"""The feedback core: a verdict (`Feedback`), the record of verdicts (`progress()`), and reading an answer.

A checker takes the learner's answer and the exercise's sizes and returns a `Feedback`,
shown as one line in the notebook. Whatever the answer is (None, a number, a list, a
numpy array, a tensor of any dtype, shape or device, NaN, a module whose forward
raises), the checker answers and never raises: `as_tensor`, `as_count` and `as_number`
read an answer or say why it cannot be read. Only a bad keyword argument of the checker
itself (the exercise's sizes, a notebook's bug) raises.

An exercise cell starts with `answer = None`, which every checker reports as "not
attempted yet", so an unsolved notebook still runs from top to bottom. Each checker is
decorated with `exercise(title)`, which records its latest verdict per exercise, and
`progress()` lists them: done, wrong or not attempted. A prediction (`exercise(title, prediction=True)`) keeps its
first verdict instead: it is judged before the run that shows the answer (`predictions.predicted`).
In a notebook's kernel (IPython), a cell that raises is noted too: a checker call in it that gave no verdict is listed
as an error, and `progress()` says that an exercise whose checker cell has not run (Run All stops at the first error)
is not counted.
"""

from __future__ import annotations

import ast
import functools
import math
import numbers
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from .._checks import check_flag, check_str, is_real, is_sequence, short

__all__ = ["CORRECT", "MISTAKE", "NOT_ATTEMPTED", "WRONG", "Feedback", "Progress", "progress", "reset_progress",
           "exercise", "not_attempted", "run_learner", "describe", "as_tensor", "close", "as_count", "as_number", "as_shape",
           "first_mistake"]

CORRECT, MISTAKE, NOT_ATTEMPTED, WRONG = "correct", "mistake", "not attempted", "wrong"
_SYMBOL = {CORRECT: "✔", MISTAKE: "✘", NOT_ATTEMPTED: "…", WRONG: "✘"}


@dataclass(frozen=True)
class Feedback:
    """The verdict on one answer: `status` is correct, mistake (a known one, named), wrong, or not attempted.

    `readable` is False for an answer the checker could not read (a typo, the wrong type): a prediction checker
    does not keep such an answer as the learner's prediction."""

    status: str
    message: str
    readable: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.status, str) or self.status not in _SYMBOL:
            raise ValueError(f"status must be one of {tuple(_SYMBOL)}, got {short(self.status)}")
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
_SYMBOLS_BY_WORD = {"done": "✔", "wrong": "✘", "not attempted": "…", "error": "!"}
# In a kernel: each cell that raised and has not run without an error since (by its cell id, else its source), with
# the labels of the checker calls in it that gave no verdict and the error; and how many verdicts the running cell
# has recorded so far (the calls after those are the ones the error stopped).
_RAISED: dict[object, tuple[tuple[str, ...], str]] = {}
_TITLES: dict[str, str] = {}  # each recorded checker's title, by its name
_RECORDED_IN_CELL = [0]
# A prediction's first answer per exercise (its fingerprint and how it reads), and every answer a prediction checker
# has judged: the run that shows a prediction's answer waits until its checker has judged it (`was_judged`).
_FIRST_PREDICTIONS: dict[tuple, tuple[object, str]] = {}
_JUDGED: set[object] = set()


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
             and name not in ("question", "explanation", "actual", "tolerance")]  # never the answer
    text = ", ".join(parts)
    return text if len(text) <= 70 else text[:69] + "…"


def exercise(title: str, *, prediction: bool = False) -> Callable:
    """Decorate a checker: record every verdict under `title` and the exercise's sizes, for `progress()`.

    A checker of a prediction (`prediction=True`; its answer is its first argument) keeps the verdict on the first
    answer other than None: a prediction counts as it was made, before the run showed the answer. A later, different
    answer is judged too, and its feedback says which answer progress() keeps.
    """
    check_str("title", title)
    check_flag("prediction", prediction)
    def decorate(checker: Callable[..., Feedback]) -> Callable[..., Feedback]:
        _TITLES[checker.__name__] = title

        @functools.wraps(checker)
        def recorded(*args, **kwargs) -> Feedback:
            feedback = checker(*args, **kwargs)
            name = kwargs.get("question") if isinstance(kwargs.get("question"), str) else title
            sizes = _summary(kwargs)
            label = f"{name} ({sizes})" if sizes else name
            # The explanation may name the slip behind this answer: it is no size, so it is not part of the key.
            key = (checker.__name__, _fingerprint({k: v for k, v in kwargs.items() if k != "explanation"}))
            _RECORDED_IN_CELL[0] += 1
            if prediction and key in _FIRST_PREDICTIONS and (feedback.status == NOT_ATTEMPTED or not feedback.readable):
                return feedback  # a placeholder or a typo after the first prediction leaves its verdict as it was
            if prediction and feedback.status != NOT_ATTEMPTED and feedback.readable:
                answer = args[0] if args else kwargs.get("answer")
                judged = _fingerprint(answer)
                _JUDGED.add(judged)
                first = _FIRST_PREDICTIONS.setdefault(key, (judged, short(answer)))
                if first[0] != judged:
                    return Feedback(feedback.status, f"{feedback.message} (progress() keeps your first prediction, "
                                                     f"{first[1]}: a prediction counts as it was made.)")
            _VERDICTS[key] = (label, feedback)
            return feedback
        recorded.prediction = prediction
        return recorded
    return decorate


def was_judged(answer: object) -> bool:
    """Whether a prediction checker has judged `answer` in this session (compared by value, tensors by their numbers)."""
    return _fingerprint(answer) in _JUDGED


@dataclass(frozen=True)
class Progress:
    """The exercises checked in this kernel session, each with its latest verdict (see `progress()`)."""

    entries: tuple[tuple[str, str], ...]  # (exercise, "done" | "wrong" | "not attempted" | "error")
    raised: tuple[str, ...] = ()  # the errors of the cells that raised and have not run without one since

    def count(self, status: str) -> int:
        """How many exercises have `status`: "done", "wrong", "not attempted" or "error" (its checker cell raised)."""
        if check_str("status", status) not in _SYMBOLS_BY_WORD:
            raise ValueError(f"status must be one of {tuple(_SYMBOLS_BY_WORD)}, got {status!r}")
        return sum(1 for _, s in self.entries if s == status)

    def __str__(self) -> str:
        if not self.entries:
            head = "Your progress: no exercise checked yet in this session (run the checker cells)."
        else:
            plural = "" if len(self.entries) == 1 else "s"
            head = (f"Your progress: {len(self.entries)} exercise{plural}, {self.count('done')} done, "
                    f"{self.count('wrong')} wrong, {self.count('not attempted')} not attempted")
            if self.count("error"):
                head += f", {self.count('error')} stopped by an error"
        lines = [head] + [f"  {_SYMBOLS_BY_WORD[s]} {s:<14} {name}" for name, s in self.entries]
        if self.raised:
            # Only the exercises whose checker ran are known here: the notebook's others are not counted.
            lines += [f"{len(self.raised)} cell(s) raised an error and have not run without one since; an exercise "
                      "whose checker cell has not run since is not counted above (fix the cell, then run the cells "
                      "below it):", *(f"  ! {error}" for error in self.raised)]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)


def progress() -> Progress:
    """Which exercises of this session are done, wrong or not attempted, in the order they were first checked.

    Each checker call records its verdict; running a checker again (after changing the
    answer) replaces that exercise's verdict, except a prediction's: its first answer's verdict stays.
    Restarting the kernel starts afresh.
    """
    checked = [(label, _STATUS_WORDS[feedback.status]) for label, feedback in _VERDICTS.values()]
    stopped = [(label, "error") for labels, _ in _RAISED.values() for label in labels]
    return Progress(tuple(checked + stopped), tuple(error for _, error in _RAISED.values()))


def reset_progress() -> None:
    """Forget every verdict so far: `progress()` lists only the exercises checked after this call.

    For a notebook that runs a checker on purpose to show a diagnosis before its own exercises.
    """
    _VERDICTS.clear()
    _RAISED.clear()
    _FIRST_PREDICTIONS.clear()
    _JUDGED.clear()


# Cells that raise (IPython's events) ------------------------------------------------------------------------------


def _checker_calls(source: str) -> list[str]:
    """The labels of the `check_...(...)` calls in a cell's source, in the order they run (a string `question=` names
    the exercise, as in progress()); by a pattern where the source is not plain Python (IPython's magics)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return [_TITLES.get(name, name) for name in re.findall(r"\b(check_\w+)\s*\(", source)]
    calls = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name.startswith("check_"):
                question = next((k.value.value for k in node.keywords if k.arg == "question"
                                 and isinstance(k.value, ast.Constant) and isinstance(k.value.value, str)), None)
                calls.append((node.lineno, node.col_offset, question or _TITLES.get(name, name)))
    return [label for *_, label in sorted(calls)]


def _before_cell(info: object = None) -> None:
    _RECORDED_IN_CELL[0] = 0


def _after_cell(result: object) -> None:
    """Note a cell that raised, with the checker calls in it that gave no verdict; forget it once it runs cleanly."""
    info = getattr(result, "info", None)
    source = getattr(info, "raw_cell", None)
    if not isinstance(source, str) or getattr(info, "silent", False):
        return
    key = getattr(info, "cell_id", None) or source
    error = getattr(result, "error_before_exec", None) or getattr(result, "error_in_exec", None)
    if error is None:
        _RAISED.pop(key, None)
        return
    message = f"{type(error).__name__}: {error}".strip()
    _RAISED[key] = (tuple(_checker_calls(source)[_RECORDED_IN_CELL[0]:]), message if len(message) <= 200
                    else message[:199] + "…")


def watch_cells(shell: object) -> None:
    """Have `progress()` note the cells of `shell` (an IPython shell) that raise; done on import in a kernel."""
    if shell is None or getattr(shell, "_posenc_progress_watches", False):
        return
    shell.events.register("pre_run_cell", _before_cell)
    shell.events.register("post_run_cell", _after_cell)
    shell._posenc_progress_watches = True


if "IPython" in sys.modules:  # a kernel (or IPython) has it loaded already; a plain script never imports it here
    watch_cells(sys.modules["IPython"].get_ipython())


def not_attempted(what: str) -> Feedback:
    """The verdict on `None`, the placeholder an exercise cell starts with; `what` says what replaces it."""
    return Feedback(NOT_ATTEMPTED, f"Not attempted yet: replace None with {what}.")


def error_line(error: BaseException) -> str:
    """An exception as a traceback's last line shows it, cut to one short line (its message's first line)."""
    try:
        text = str(error).strip()
    except Exception:  # a learner's exception class whose __str__ fails: the name alone still says what it was
        text = ""
    text = text.splitlines()[0] if text else ""
    text = text if len(text) <= 80 else text[:79] + "…"
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def describe(answer: object) -> str:
    """An answer as feedback names it: tensors and arrays by shape and dtype, anything else by type and value."""
    if isinstance(answer, torch.Tensor):
        return f"a tensor of shape {tuple(answer.shape)} and dtype {answer.dtype}"
    if isinstance(answer, np.ndarray):
        return f"a numpy array of shape {answer.shape} and dtype {answer.dtype}"
    return f"{type(answer).__name__} {short(answer)}"


def as_tensor(answer: object, what: str, *, allow_nan: bool = False) -> torch.Tensor | Feedback:
    """The answer as a detached CPU tensor of real numbers, or the feedback that says why it is not one.

    NaN and inf are refused unless `allow_nan` (for an exercise where a NaN is itself a diagnosis).
    """
    check_str("what", what)
    check_flag("allow_nan", allow_nan)
    if answer is None:
        return not_attempted(what)
    if isinstance(answer, torch.Tensor):
        tensor = answer
    elif isinstance(answer, (list, tuple, np.ndarray)):
        try:  # a list of lists or an array of numbers reads as a tensor; anything ragged or non-numeric does not
            tensor = torch.as_tensor(np.asarray(answer))
        except (TypeError, ValueError, RuntimeError):
            return Feedback(WRONG, f"Expected {what} as a tensor; could not read {describe(answer)} as one.", readable=False)
    else:
        return Feedback(WRONG, f"Expected {what} as a torch.Tensor, got {describe(answer)}.", readable=False)
    if tensor.is_meta:
        return Feedback(WRONG, "Got a tensor on the 'meta' device, which holds no numbers: create it on the CPU.")
    if tensor.is_nested:  # ragged rows: no single shape to compare
        return Feedback(WRONG, "Got a nested tensor; return an ordinary tensor with one shape.")
    if tensor.layout != torch.strided:  # sparse (COO, CSR, ...): most operations a checker runs raise on these
        try:
            tensor = tensor.detach().to_dense()
        except (RuntimeError, NotImplementedError, TypeError):
            return Feedback(WRONG, f"Got a tensor in the {tensor.layout} layout; return an ordinary (dense) tensor.")
    if tensor.is_complex():
        return Feedback(WRONG, f"Got complex numbers ({tensor.dtype}); the answer holds real numbers.")
    tensor = tensor.detach().cpu()
    if not allow_nan and tensor.is_floating_point() and tensor.numel() and not bool(torch.isfinite(tensor).all()):
        where = tuple(int(k) for k in (~torch.isfinite(tensor)).nonzero()[0])
        return Feedback(WRONG, f"Your answer holds NaN or inf (first at index {where}); every entry should be a finite number.")
    return tensor


def as_function(answer: object, *, signature: str, when_a_tensor: str) -> Feedback | None:
    """None when the answer can be called; else the feedback: not attempted for the placeholder None, and for a
    tensor, that the learner ran their lines on the notebook's values instead of writing the function the checker runs
    on values of its own (`when_a_tensor` says how to write it)."""
    if answer is None:
        return not_attempted(f"your function {signature}")
    if isinstance(answer, torch.Tensor):
        return Feedback(WRONG, f"Expected a function, got {describe(answer)}. {when_a_tensor}", readable=False)
    if not callable(answer):
        return Feedback(WRONG, f"Expected a function {signature}, got {describe(answer)}.", readable=False)
    return None


def run_learner(function: Callable, *args, **kwargs) -> tuple[str, object]:
    """Call the learner's function: ("returned", its result) or ("raised", the error). Whatever the learner's code
    raises, SystemExit included, is part of the answer, not a failure of the checker."""
    try:
        return "returned", function(*args, **kwargs)
    except (Exception, SystemExit) as error:
        return "raised", error


def close(a: torch.Tensor, b: torch.Tensor, atol: float = 1e-4) -> bool:
    """Whether a and b have one shape and every entry within `atol` of the other's (compared in float64 on the CPU)."""
    for name, tensor in (("a", a), ("b", b)):
        if not isinstance(tensor, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {short(tensor)}")
    if not is_real(atol) or not atol >= 0:
        raise ValueError(f"atol must be a number >= 0, got {short(atol)}")
    if a.shape != b.shape or a.is_meta or b.is_meta or a.is_complex() or b.is_complex():
        return False  # a tensor on the meta device holds no numbers to compare
    return bool(torch.allclose(a.detach().cpu().double(), b.detach().cpu().double(), atol=atol, rtol=0))


def _single_real(answer: object) -> numbers.Real | None:
    """The one real number an int, a float, a number typed with quotes ("154", " 2.7 "), or a one-element tensor or
    array holds; else None (bool is no number here)."""
    if isinstance(answer, str):
        try:
            answer = int(answer.strip())
        except ValueError:
            try:
                answer = float(answer.strip())
            except ValueError:
                return None
            if not math.isfinite(answer):  # "nan" and "inf" are words here, not numbers
                return None
    if isinstance(answer, torch.Tensor):
        if answer.is_meta or answer.is_complex() or answer.numel() != 1:
            return None
        answer = answer.item()
    elif isinstance(answer, np.ndarray):
        if answer.size != 1 or answer.dtype.kind not in "iuf":
            return None
        answer = answer.item()
    return answer if is_real(answer) else None


def as_count(answer: object) -> int | None:
    """A whole number from an int, a whole float, a string of one, or a one-element tensor or array holding one; else
    None."""
    number = _single_real(answer)
    if number is None:
        return None
    if isinstance(number, numbers.Integral):
        return int(number)
    return int(number) if math.isfinite(number) and float(number).is_integer() else None


def as_number(answer: object) -> float | None:
    """A real number from an int, a float, a string of one, or a one-element tensor or array; else None."""
    number = _single_real(answer)
    return None if number is None else float(number)


def as_shape(answer: object) -> tuple[int, ...] | None:
    """A shape from a tuple, list, torch.Size or 1-D tensor or numpy array of whole numbers (2.0 counts as 2); else
    None."""
    if isinstance(answer, torch.Tensor) and answer.ndim == 1 and answer.numel() <= 32 and not answer.is_complex():
        answer = answer.tolist()
    elif isinstance(answer, np.ndarray) and answer.ndim == 1 and answer.size <= 32 and answer.dtype.kind in "iuf":
        answer = answer.tolist()
    if not isinstance(answer, (tuple, list, torch.Size)) or len(answer) > 32:
        return None
    sizes = [as_count(size) for size in answer]
    return None if any(size is None or size < 0 for size in sizes) else tuple(sizes)


def first_mistake(matches: Callable[[object], bool], mistakes: Sequence[tuple[str, object]]) -> Feedback | None:
    """The feedback naming the first of `mistakes` whose result `matches` the answer; None if none does.

    Each mistake is (message, what that mistake gives): a value, or a function of no
    arguments that builds it, so that a costly rebuild runs only when no mistake before
    it matched.
    """
    if not callable(matches):
        raise TypeError(f"matches must be a function of one result, got {short(matches)}")
    if not is_sequence(mistakes) or not all(isinstance(m, tuple) and len(m) == 2 and isinstance(m[0], str)
                                            for m in mistakes):
        raise TypeError(f"mistakes must be a list of (message, result) pairs, got {short(mistakes)}")
    for message, result in mistakes:
        if matches(result() if callable(result) else result):
            return Feedback(MISTAKE, message)
    return None
