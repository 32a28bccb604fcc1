"""What a hidden test asks of a computed answer: the value the exercise's own solution computes, exactly.

A notebook's checker accepts an answer within its tolerance and in any form it can read; a hidden test asks a
computed answer (a tensor or an array) for the solution's value itself. The solution cell is run again on a copy of
the submission's variables, so it computes from the same inputs the learner had, and the answer is compared with
what it leaves under the answer's name: entries to 1e-6 (float rounding, not a tolerance for a near miss), the
shape and the kind of number exactly. Any other answer (a prediction, a choice, a shape, a function) is the
checker's to judge: its verdict is asserted in the same test, and a right prediction typed to fewer decimals or in
another form the checker accepts must not lose a point.

tools/assignment.py ships this file inside each autograder zip (otter's `autograder_files`), and the hidden tests
import it in the grading kernel: it needs nothing but numpy and torch.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import torch

# Relative and absolute: the last bits float32 arithmetic leaves when the same value is computed in another order.
ROUNDING = 1e-6


def assert_matches_solution(env: dict, name: str, solution: str) -> None:
    """Fail with what differs unless `env[name]` is the value `solution` (a cell's source) gives `name` in `env`."""
    expected_env = dict(env)  # a copy: the solution's own names must not leak into the submission's
    exec(compile(solution, f"<the solution of {name}>", "exec"), expected_env)
    if not isinstance(expected_env[name], (torch.Tensor, np.ndarray)):
        return  # not a computed value: the checker's verdict, asserted beside this, decides
    difference = differs(env.get(name), expected_env[name])
    assert difference is None, f"{name}: {difference}"


def differs(answer: object, expected: object) -> str | None:
    """What makes `answer` another value than `expected`, in a few words; None if it is the same value."""
    if answer is None:
        return "not attempted (None)"
    if isinstance(expected, (bool, np.bool_, str, bytes)):
        return None if type(answer) is type(expected) and answer == expected else f"{_short(answer)}, not {expected!r}"
    if _number(expected) is not None:
        return _differs_as_numbers(answer, expected)
    if isinstance(expected, (torch.Tensor, np.ndarray)):
        return _differs_as_tensors(answer, expected)
    if isinstance(expected, (list, tuple)):
        if not isinstance(answer, (list, tuple)) or len(answer) != len(expected):
            return f"{_short(answer)}, not a sequence of {len(expected)}"
        return next((f"item {k}: {d}" for k, (a, e) in enumerate(zip(answer, expected))
                     if (d := differs(a, e)) is not None), None)
    if isinstance(expected, dict):
        if not isinstance(answer, dict) or set(answer) != set(expected):
            return f"{_short(answer)}, not a dict with the keys {sorted(map(str, expected))}"
        return next((f"[{key!r}]: {d}" for key in expected if (d := differs(answer[key], expected[key])) is not None), None)
    if callable(expected):
        return None
    try:
        return None if bool(answer == expected) else f"{_short(answer)}, not {_short(expected)}"
    except Exception as error:  # an == that cannot answer (an array's, a custom type's) is no match
        return f"{_short(answer)} cannot be compared with {_short(expected)} ({type(error).__name__})"


def _number(value: object) -> float | None:
    """The real number a Python or numpy number or a 0-d tensor or array holds; None for a bool or anything else."""
    if isinstance(value, (torch.Tensor, np.ndarray)) and value.ndim == 0 and value.dtype not in (torch.bool, np.bool_):
        value = value.item()
    if isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_)):
        return float(value)
    return None


def _differs_as_numbers(answer: object, expected: object) -> str | None:
    number, target = _number(answer), _number(expected)
    if number is None:
        return f"{_short(answer)}, not a number"
    return None if math.isclose(number, target, rel_tol=ROUNDING, abs_tol=ROUNDING) else f"{number!r}, not {target!r}"


def _differs_as_tensors(answer: object, expected: torch.Tensor | np.ndarray) -> str | None:
    if not isinstance(answer, (torch.Tensor, np.ndarray)):
        return f"{_short(answer)}, not a tensor"
    got, want = (torch.as_tensor(np.asarray(x)) if isinstance(x, np.ndarray) else x.detach().cpu() for x in (answer, expected))
    if got.shape != want.shape:
        return f"shape {tuple(got.shape)}, not {tuple(want.shape)}"
    if _kind(got) != _kind(want):
        return f"{_kind(got)} entries ({got.dtype}), not {_kind(want)} ({want.dtype})"
    if _kind(want) != "floating-point":
        return None if torch.equal(got.long(), want.long()) else "other entries"
    if torch.allclose(got.double(), want.double(), rtol=ROUNDING, atol=ROUNDING, equal_nan=True):
        return None
    return f"entries off by up to {float((got.double() - want.double()).abs().nan_to_num(math.inf).max()):.3g}"


def _kind(tensor: torch.Tensor) -> str:
    return "bool" if tensor.dtype == torch.bool else "floating-point" if tensor.is_floating_point() else "integer"


def _short(value: object) -> str:
    if isinstance(value, (torch.Tensor, np.ndarray)):
        return f"a {type(value).__name__} of shape {tuple(value.shape)}"
    text = repr(value)
    return text if len(text) <= 60 else text[:59] + "…"
