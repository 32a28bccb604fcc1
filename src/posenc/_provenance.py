"""Which answers the package made itself, so that a checker can say "that is the package's own, not yours".

An exercise that asks for a table built by hand is answered, wrongly, by calling the package's builder; a fixed
function or module, by handing in the package's. The numbers are then right, so only where they came from tells.

- `@marked(maker)` on a builder: the tensor it returns is recorded (weakly: marking keeps nothing alive), and the
  builder's own lines stay the formula.
- `made_by(tensor)`: the maker of a marked tensor or of a view of one (a view keeps its base alive), else None.
- `calls_any(action, functions)`: whether running `action()` enters one of `functions`, directly or through the
  learner's own code (a wrapper, a lambda, a module that holds the package's).
- `loaded_library_functions(matches, libraries)`: the functions and methods of other libraries (Hugging Face's
  transformers by default, rotary_embedding_torch...), loaded now, whose name `matches`, for `calls_any` (a learner
  who used one has imported its module, so nothing is imported here).
- `calls_builtin(action, names)`: whether running `action()` calls a built-in (C) function by its name, such as
  torch's softmax, for an exercise that rules out a step its right numbers do not show.

A copy (`.clone()`, `.tolist()`, arithmetic) is not marked: it names the honest shortcut, it is not a lock.
"""

from __future__ import annotations

import functools
import inspect
import sys
import weakref
from collections.abc import Callable, Iterable

import torch

# id(tensor) -> (a weak reference to it, its maker). The reference's callback drops the entry when the tensor dies,
# before its id can be reused; `made_by` also checks the reference still points at the tensor asked about.
_MADE: dict[int, tuple[weakref.ref, str]] = {}


def mark(tensor: torch.Tensor, maker: str) -> torch.Tensor:
    """Record that `maker` (as a learner would call it, e.g. "builder.sinusoidal_encoding") made `tensor`."""
    # A view's views name the first tensor as their base, not the view: mark that too.
    for made in (tensor, tensor._base):
        if made is not None:
            key = id(made)
            _MADE[key] = (weakref.ref(made, lambda _, key=key: _MADE.pop(key, None)), maker)
    return tensor


def marked(maker: str) -> Callable:
    """Decorate a builder: each tensor it returns is marked as made by `maker`."""
    def decorate(builder: Callable[..., torch.Tensor]) -> Callable[..., torch.Tensor]:
        @functools.wraps(builder)
        def recorded(*args, **kwargs) -> torch.Tensor:
            return mark(builder(*args, **kwargs), maker)
        return recorded
    return decorate


def made_by(value: object) -> str | None:
    """The maker recorded for `value` or for the tensor it is a view of; None for anything else."""
    if not isinstance(value, torch.Tensor):
        return None
    for tensor in (value, value._base):
        entry = _MADE.get(id(tensor)) if tensor is not None else None
        if entry is not None and entry[0]() is tensor:
            return entry[1]
    return None


def calls_any(action: Callable[[], object], functions: Iterable[Callable]) -> bool:
    """Whether `action()` runs the code of any of `functions` (decorators unwrapped). Whatever `action` raises is
    swallowed: the caller runs the answer again to judge it."""
    codes = {inspect.unwrap(function).__code__ for function in functions}
    return _any_event(action, lambda frame, event, _arg: event == "call" and frame.f_code in codes)


def loaded_library_functions(matches: Callable[[str], bool],
                             libraries: Iterable[str] = ("transformers",)) -> list[Callable]:
    """The functions and methods of `libraries` (top-level package names) that are loaded now and whose name
    `matches` (BLOOM's `_get_alibi_slopes`, Llama's `rotate_half`, `GenerationMixin._prepare_position_ids_for_generation`,
    rotary_embedding_torch's `apply_rotary_emb`...): a learner who used one has imported its module, so nothing needs
    importing here, and a session that never imported a library gets nothing from it."""
    roots = tuple(libraries)
    found = []
    for name, module in list(sys.modules.items()):
        if module is None or not any(name == root or name.startswith(root + ".") for root in roots):
            continue
        try:
            attributes = list(vars(module).items())
        except TypeError:  # an entry of sys.modules without a __dict__
            continue
        for attribute, value in attributes:
            if getattr(value, "__module__", None) != name:
                continue  # imported from elsewhere: found where it is defined
            if inspect.isclass(value):  # its methods, static and class methods unwrapped
                found += [inspect.unwrap(getattr(method, "__func__", method)) for key, method in vars(value).items()
                          if matches(key) and inspect.isfunction(getattr(method, "__func__", method))]
            elif matches(attribute) and inspect.isfunction(value):
                found.append(value)
    return found


def calls_builtin(action: Callable[[], object], names: Iterable[str]) -> bool:
    """Whether `action()` calls a built-in (C) function or method with one of `names`, such as torch's "softmax"
    (torch.softmax, a tensor's .softmax and torch.nn.functional.softmax all end in it). Whatever `action` raises is
    swallowed, as in `calls_any`."""
    wanted = set(names)
    return _any_event(action, lambda _frame, event, arg: event == "c_call" and getattr(arg, "__name__", None) in wanted)


def _any_event(action: Callable[[], object], matches: Callable[..., bool]) -> bool:
    """Whether, while `action()` runs, the profiler sees an event (frame, event, arg) that `matches`."""
    seen = False

    def watch(frame, event, arg):
        nonlocal seen
        if not seen and matches(frame, event, arg):
            seen = True

    previous = sys.getprofile()
    sys.setprofile(watch)
    try:
        action()
    except (Exception, SystemExit):  # the learner's code: what it raises is judged by the checker's own call
        pass
    finally:
        sys.setprofile(previous)
    return seen
