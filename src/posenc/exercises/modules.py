"""Checkers for positional-encoding modules: a fixed length check, one module for both layouts of a batch."""

from __future__ import annotations

import inspect

import torch

from .._checks import check_size
from .._provenance import calls_any
from ..builder import sinusoidal_encoding
from ..encoding import PositionalEncoding
from .feedback import CORRECT, MISTAKE, WRONG, Feedback, close, describe, error_line, exercise, not_attempted, run_learner

__all__ = ["check_positional_module", "check_layout_module"]


def _rows_added(out: torch.Tensor, x: torch.Tensor, L: int, d: int) -> str:
    """Which table rows forward added to x (both batch first), when they are the table's rows from k on for one k > 0,
    the same for every sequence: an off-by-one start, such as positions counted from 1. Else, or if out holds no
    numbers to compare, nothing."""
    try:
        added = out.detach().cpu().double() - x.detach().cpu().double()
    except Exception:  # a meta or odd tensor: nothing to say beyond the shape
        return ""
    n = added.shape[1]
    wider = sinusoidal_encoding(max_sequence_length=2 * L + n, d_model=d).double()
    for k in range(1, 2 * L + 1):
        if close(added, wider[k:k + n].expand_as(added)):
            return f": position 0 got the table's row {k}, not row 0"
    return ""


def _forward(module: torch.nn.Module, x: torch.Tensor) -> tuple[str, object]:
    """Call the learner's module on a copy of x: ("returned", output) or ("raised", the exception)."""
    return run_learner(module, x.clone())


def _changes_its_input(module: torch.nn.Module, x: torch.Tensor) -> Feedback | None:
    """The mistake of a forward that adds in place (`x += ...`), changing the caller's tensor; None if x is left as it was."""
    given = x.clone()
    run_learner(module, given)
    if torch.equal(given, x):
        return None
    return Feedback(MISTAKE, "forward returns x + PE, but it changed x itself: `x += ...` or `x.add_(...)` adds in "
                             "place, into the caller's tensor. So a second call on the same x adds the table twice. Write "
                             "`return x + ...`, which makes a new tensor.")


def _raised_with_grad(prefix: str, given: str, error: BaseException) -> Feedback:
    """The mistake of a forward that adds the table to x, but raises once x requires grad: the gradient cannot reach x."""
    return Feedback(MISTAKE, f"{prefix}forward adds the table to {given}, but it fails once x has requires_grad=True "
                             f"({error_line(error)}). In training x requires grad, and gradients must flow back through "
                             "forward to x. Something in forward needs x outside autograd, such as `x.numpy()`. Keep "
                             "every step in torch.")


def _one_sentence(module: torch.nn.Module, full: torch.Tensor, too_long: torch.Tensor, expected: torch.Tensor) -> Feedback | None:
    """The mistakes of a module that takes a batch but not one sentence, x of shape (seq, d_model): most often a length
    read as x.shape[1], which is d_model for one sentence. None if it adds the table to `full` and refuses `too_long`."""
    L = expected.shape[0]
    shape, longer = f"x of shape (seq, d_model) = {tuple(full.shape)}", f"{tuple(too_long.shape)}"
    front = ("If forward reads the length as x.shape[1], that is d_model for one sentence. Count the positions from the "
             "end, x.shape[-2], the length in both shapes.")
    kind, out = _forward(module, full)
    if kind == "raised":
        if isinstance(out, ValueError):
            return Feedback(MISTAKE, f"forward takes a batch but refuses one sentence, {shape} ({error_line(out)}). "
                                     "It should take both.")
        return Feedback(MISTAKE, f"forward takes a batch but fails on one sentence, {shape} ({error_line(out)}). {front}")
    if not isinstance(out, torch.Tensor) or out.shape != full.shape:
        return Feedback(WRONG, f"For one sentence, {shape}, forward should return x's shape, got "
                               f"{tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__}.")
    if not close(out, full + expected):
        return Feedback(WRONG, f"For one sentence, {shape}, forward(x) should equal x + PE: the table's {L} rows added "
                               f"to its {L} positions.")
    kind, out = _forward(module, too_long)
    if kind == "raised" and isinstance(out, ValueError):
        return None
    if kind == "returned":  # nothing failed: the length was never checked for one sentence, whatever axis it read
        cut = isinstance(out, torch.Tensor) and tuple(out.shape) == tuple(full.shape)
        got = f"returned {L} positions, cutting the input without a word" if cut else f"returned {describe(out)}"
        return Feedback(MISTAKE, f"forward refuses a batch of {L + 1} positions with ValueError. For one sentence of "
                                 f"{L + 1} positions, {longer}, it {got}. Check the length of one sentence too, "
                                 "x.shape[-2], and raise ValueError.")
    return Feedback(MISTAKE, f"forward refuses a batch of {L + 1} positions with ValueError. For one sentence of {L + 1} "
                             f"positions, {longer}, it raised ({error_line(out)}). {front}")


@exercise("a positional-encoding module")
def check_positional_module(module: object, *, d_model: int = 6, max_sequence_length: int = 10) -> Feedback:
    """A module whose forward adds the table to (batch, seq, d_model) or (seq, d_model) inputs up to
    max_sequence_length positions, and refuses a longer input with ValueError.

    It is called on a batch of 2 sequences of exactly max_sequence_length positions, on a shorter one, and on one
    with a position more than the table has: the fix of the stack-and-flatten exercise must accept the
    first two and refuse the third with ValueError, and give the same output on a further call on a tensor the
    checker keeps. It must do the same for one sentence, (seq, d_model): a length read as x.shape[1] is named. The
    exhibit pasted back is told it is the exhibit (its two bugs are the exercise); each bug left alone after a partial
    fix, and the usual wrong ways to fix its length check (a deleted check, a cut input, ...), are named
    (tests/test_exercises.py lists them). Every message names the shape of the x it fed, (batch, seq, d_model) or
    (seq, d_model): a module written for (seq, batch, d_model), as pytorch/examples' word_language_model is,
    is named too, and so is the package's own PositionalEncoding (its forward running, however it is wrapped), and a
    float64 table that turns a float32 x into a float64 output.
    """
    L = check_size("max_sequence_length", max_sequence_length, maximum=4096)
    d = check_size("d_model", d_model, maximum=4096)
    expected = sinusoidal_encoding(max_sequence_length=L, d_model=d)
    if module is None:
        return not_attempted("an instance of your module")
    if not isinstance(module, torch.nn.Module):
        return Feedback(WRONG, f"Expected an nn.Module instance, got {describe(module)}.", readable=False)
    batch = 2
    x = torch.randn(batch, L + 1, d, generator=torch.Generator().manual_seed(0))
    full, short, too_long = x[:, :L], x[:, :3], x

    def fed(inputs: torch.Tensor) -> str:
        return f"x of shape (batch, seq, d_model) = {tuple(inputs.shape)}"

    # The package's module passes every test below: only its forward running tells it from a fix written by hand.
    if calls_any(lambda: [_forward(module, inputs) for inputs in (full, too_long)], [PositionalEncoding.forward]):
        return Feedback(MISTAKE, "This is the package's own PositionalEncoding (its forward ran): the exercise asks "
                                 "for a module of your own, whose forward checks x's length with `if` and raises "
                                 "ValueError.")

    # Exactly max_sequence_length positions fit: the source's `x < max` refuses them.
    kind, out = _forward(module, full)
    # The exhibit itself, pasted back (an assert that refuses L positions, and `x +=`): the two bugs are the exercise's
    # secret, so the verdict says what it got and sends the learner to the requirements, not to the lines.
    if kind == "raised" and isinstance(out, AssertionError) and _changes_its_input(module, full[:, :-1]):
        return Feedback(MISTAKE, f"This behaves like the module as given, both bugs included: for {fed(full)} it "
                                 "fails in the same way, and so does a second call on one x. Test each of the six "
                                 "requirements with one input of your own. The ones that fail point at the two lines.")
    refused = kind == "raised" and isinstance(out, (AssertionError, ValueError))
    if refused and _forward(module, full[:, :-1])[0] == "returned":  # one position fewer passes: `<` instead of `<=`
        also = (" And raise ValueError instead of asserting: `python -O` removes every assert."
                if isinstance(out, AssertionError) else "")
        return Feedback(MISTAKE, f"forward refuses {fed(full)}, exactly max_sequence_length={L} positions "
                                 f"({error_line(out)}): the check stops one position too early (`<` where it needs `<=`, or "
                                 f"`>=` where it needs `>`). The table has {L} rows, so {L} positions fit; refuse only "
                                 f"more than {L}.{also}")
    if kind == "raised":
        return Feedback(WRONG, f"forward raised {error_line(out)} for {fed(full)}: {L} positions, which fit.")
    if not isinstance(out, torch.Tensor) or out.shape != full.shape:
        return Feedback(WRONG, f"For {fed(full)}, forward should return x's shape, got "
                               f"{tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__}.")
    if close(out, expected.expand_as(full)):
        return Feedback(MISTAKE, "forward returns the table alone: add it to x.")
    if batch <= L and close(out, full + expected[:batch, None, :]):
        return Feedback(MISTAKE, f"forward added table row b to every position of sequence b: it reads x as (seq, "
                                 f"batch, d_model), as pytorch/examples' word_language_model does (self.pe[:x.size(0)]). "
                                 f"The checker feeds {fed(full)}: add the table's first x.shape[-2] rows, one per "
                                 "position, to every sequence of the batch.")
    if not close(out, full + expected):
        return Feedback(WRONG, f"For {fed(full)}, forward(x) should equal x + PE: the table's {L} rows added to each "
                               f"of the {batch} sequences.")
    if out.dtype != full.dtype:
        return _other_dtype("Right numbers", full, out)
    changed = _changes_its_input(module, full)
    if changed:
        return changed
    # Requirement 5: the gradient reaches x (a `.detach()`, or a table added under torch.no_grad, cuts it).
    with torch.enable_grad():
        kind, out = run_learner(module, full.clone().requires_grad_())
    if kind == "raised":  # the same x ran without requires_grad: only the gradient differs, as through x.numpy()
        return _raised_with_grad("", fed(full), out)
    if kind == "returned" and isinstance(out, torch.Tensor) and not out.requires_grad:
        return Feedback(MISTAKE, f"forward returns x + PE, but no gradient flows back to x: for {fed(full)} with "
                                 "requires_grad=True, the output has requires_grad=False. So training could not reach "
                                 "W_E through it. Something in forward cuts the gradient, such as `.detach()`, "
                                 "`torch.no_grad()` or a trip through NumPy. Return x + table[: x.shape[-2]].")

    kind, out = _forward(module, short)
    if kind == "raised":
        return Feedback(MISTAKE, f"forward fails on a shorter sequence, {fed(short)} ({error_line(out)}): slice the "
                                 "table to x's length, table[: x.shape[-2]].")
    if not isinstance(out, torch.Tensor) or not close(out, short + expected[:3]):
        return Feedback(WRONG, f"For a shorter sequence, {fed(short)}, forward should add the table's first 3 rows.")

    # One position more than the table has: refused with ValueError, never cut, never left to the shapes.
    kind, out = _forward(module, too_long)
    if kind == "returned":
        if isinstance(out, torch.Tensor) and out.shape == full.shape:
            return Feedback(MISTAKE, f"For {fed(too_long)}, forward returned {L} positions: it cut the input without "
                                     f"a word, and position {L} is lost. Check the length first and raise ValueError.")
        return Feedback(MISTAKE, f"forward accepted {L + 1} positions ({fed(too_long)}), one more than "
                                 f"max_sequence_length={L}, and returned {describe(out)}. Refuse any x longer than "
                                 "max_sequence_length with ValueError.")
    if isinstance(out, AssertionError):
        return Feedback(MISTAKE, f"An assert refuses {L + 1} positions, but `python -O` removes every assert, and then "
                                 "nothing does: check with `if` and raise ValueError.")
    if isinstance(out, ValueError):
        # Requirement 4: one sentence, (seq, d_model), as well as a batch.
        one_sentence = _one_sentence(module, full[0], too_long[0], expected)
        if one_sentence:
            return one_sentence
        # Requirement 6: nothing to train.
        trainable = [name for name, part in module.named_parameters() if part.requires_grad]
        if trainable:
            return Feedback(MISTAKE, f"forward is right, but the module has trainable parameters ({', '.join(trainable)}). "
                                     "The formula fixes the table, so training must not change it: keep it with "
                                     "register_buffer, not as an nn.Parameter.")
        return Feedback(
            CORRECT, f"Correct: forward adds the table to x of shape (batch, seq, d_model) = {tuple(full.shape)} and "
                     f"{tuple(short.shape)}, and to one sentence {tuple(full.shape[1:])}. It refuses "
                     f"{tuple(too_long.shape)} and {tuple(too_long.shape[1:])} ({error_line(out)}).")
    if isinstance(out, RuntimeError):
        return Feedback(MISTAKE, f"Nothing checks the length: for {fed(too_long)}, {L + 1} positions, forward failed only "
                                 f"when adding ({error_line(out)}), an error about shapes that does not say what is "
                                 "wrong. Check x.shape[-2] before adding and raise ValueError that names the length "
                                 "and the limit.")
    return Feedback(MISTAKE, f"For {fed(too_long)}, {L + 1} positions, forward raised {error_line(out)}: raise "
                             "ValueError, Python's error for a value outside what is allowed, so that a caller can "
                             "catch exactly that.")


_LAYOUTS = {True: "(batch, seq, d_model)", False: "(seq, batch, d_model)"}


def _other_dtype(built: str, x: torch.Tensor, out: torch.Tensor) -> Feedback:
    """The mistake of a forward that returns x + PE in another dtype than x's: a float64 table added to a float32 x
    makes the sum float64, which the next float32 layer refuses."""
    given, got = (str(dtype).removeprefix("torch.") for dtype in (x.dtype, out.dtype))
    wider = torch.promote_types(x.dtype, out.dtype) == out.dtype
    why = (f" Adding a {got} table does that, since x + table takes the wider dtype. The next {given} layer, such as "
           f"an nn.Linear, would then refuse it. Build the table in {given}, or cast the finished table, "
           "for example with .to(x.dtype)." if wider else " Return x's dtype, so that the next layer can take it.")
    return Feedback(MISTAKE, f"{built}: for {given} x of shape {tuple(x.shape)}, forward returned x + PE, but in "
                             f"{got}.{why}")


def _trained(module: torch.nn.Module, x: torch.Tensor) -> str:
    """The trainable parameters that forward's output on x depends on (a gradient reaches them), named with their
    shapes; empty if none, or if forward cannot be differentiated."""
    parameters = [(name, part) for name, part in module.named_parameters() if part.requires_grad]
    if not parameters:
        return ""
    with torch.enable_grad():
        kind, out = run_learner(module, x.clone())
        if kind != "returned" or not isinstance(out, torch.Tensor) or not out.requires_grad:
            return ""
        try:
            grads = torch.autograd.grad(out.sum(), [part for _, part in parameters], allow_unused=True)
        except (Exception, SystemExit):  # the learner's graph
            return ""
    return ", ".join(f"{name} of shape {tuple(part.shape)}" for (name, part), grad in zip(parameters, grads)
                     if grad is not None and bool(grad.abs().sum() > 0))


def _evaluate(module: torch.nn.Module) -> None:
    """Dropout off, as pytorch/examples' module has it: the checker compares exact sums, and dropout is not the exercise."""
    for part in module.modules():
        if isinstance(part, torch.nn.modules.dropout._DropoutNd):
            part.eval()


@exercise("a positional-encoding module for both layouts")
def check_layout_module(module_class: object, *, d_model: int = 4, max_sequence_length: int = 7) -> Feedback:
    """A module class built as `module_class(d_model=..., max_sequence_length=..., batch_first=...)`, as
    torch.nn.Transformer takes `batch_first`: with True, forward reads x as (batch, seq, d_model); with False, as
    (seq, batch, d_model), as pytorch/examples' word_language_model does. Each adds the table's first seq rows, one per
    position, to every sequence, and refuses more positions than the table has with ValueError.

    The checker builds its own modules with these sizes (not the notebook's), and feeds each layout a batch of 3 whose
    size is not its length: a module that reads the positions from the other dimension adds row b to sequence b.
    Built without `batch_first`, it must read (seq, batch, d_model), torch.nn.Transformer's default.
    An instance, a class that ignores `batch_first`, an assert, a check that uses >= for >, a forward that adds in
    place or cuts the gradient, an output in another dtype than x's (a float64 table makes the sum float64), and a
    module that holds or calls the package's own PositionalEncoding (which passes every test once wrapped in a
    transpose) are named.
    """
    L = check_size("max_sequence_length", max_sequence_length, minimum=4, maximum=4096)
    d = check_size("d_model", d_model, maximum=4096)
    table = sinusoidal_encoding(max_sequence_length=L, d_model=d)
    if module_class is None:
        return not_attempted("your module class (not an instance)")
    if isinstance(module_class, torch.nn.Module):
        return Feedback(MISTAKE, f"That is an instance, {type(module_class).__name__}(...). Give the class itself: the "
                                 "checker builds its own, with other sizes and both values of batch_first.")
    if not (isinstance(module_class, type) and issubclass(module_class, torch.nn.Module)):
        return Feedback(WRONG, f"Expected an nn.Module class, got {describe(module_class)}.", readable=False)
    batch = 3
    x = torch.randn(batch, L + 1, d, generator=torch.Generator().manual_seed(1))
    for batch_first in (True, False):
        layout = _LAYOUTS[batch_first]
        try:
            module = module_class(d_model=d, max_sequence_length=L, batch_first=batch_first)
        except (Exception, SystemExit) as error:  # the learner's constructor
            try:  # the arguments' names, or something inside __init__?
                inspect.signature(module_class).bind(d_model=d, max_sequence_length=L, batch_first=batch_first)
                advice = "."
            except (TypeError, ValueError):
                advice = ": name its arguments d_model, max_sequence_length and batch_first."
            return Feedback(WRONG, f"{module_class.__name__}(d_model={d}, max_sequence_length={L}, "
                                   f"batch_first={batch_first}) raised {error_line(error)}{advice}")
        built = f"With batch_first={batch_first}, x is {layout}"
        _evaluate(module)
        # The package's module reads (batch, seq, d_model) rightly, and a transpose makes it read the other layout:
        # wrapped, it passes every test below without the bug being found. Holding one, or its forward running, is named.
        holds = any(isinstance(part, PositionalEncoding) for part in module.modules())
        runs = calls_any(lambda module=module: [_forward(module, x[:, :n]) for n in (L, L + 1)],
                         [PositionalEncoding.forward])
        if holds or runs:
            how = "holds" if holds else "calls"
            return Feedback(MISTAKE, f"{built}: your module {how} the package's own PositionalEncoding, which already "
                                     "adds one row per position to (batch, seq, d_model). The exercise asks for a "
                                     "module of your own: find the line that reads the wrong dimension, and read the "
                                     "length from the one that holds the positions in each layout.")

        def arrange(inputs: torch.Tensor, batch_first: bool = batch_first) -> torch.Tensor:
            return inputs if batch_first else inputs.transpose(0, 1).contiguous()

        for length in (L, 2):
            given = arrange(x[:, :length])
            kind, out = _forward(module, given)
            shape = tuple(given.shape)
            if kind == "raised":
                # `>=` for `>`: the module's own ValueError, or one position fewer handled right. (An index where a
                # slice is needed, self.pe[:, n], fails at n = L too, but is wrong at every length.)
                fewer_kind, fewer = _forward(module, arrange(x[:, :L - 1]))
                fewer_right = isinstance(fewer, torch.Tensor) and close(fewer, arrange(x[:, :L - 1] + table[:L - 1]))
                if length == L and fewer_kind == "returned" and (isinstance(out, ValueError) or fewer_right):
                    return Feedback(MISTAKE, f"{built}: forward refuses x of shape {shape}, exactly "
                                             f"max_sequence_length={L} positions ({error_line(out)}), but takes {L - 1}. "
                                             f"The check is off by one, like >= where > is needed: the table has {L} "
                                             f"rows, so {L} positions fit. Refuse only more than {L}.")
                return Feedback(WRONG, f"{built}: forward raised {error_line(out)} for x of shape {shape}, "
                                       f"{length} positions, which fit.")
            right = arrange(x[:, :length] + table[:length])
            if isinstance(out, torch.Tensor) and close(out, arrange(x[:, :length] + table[:batch, None, :])):
                return Feedback(MISTAKE, f"{built}: forward read the positions from the other dimension, so sequence "
                                         f"b got table row b at every position (x of shape {shape}, {batch} "
                                         "sequences). Read the length from the dimension this layout gives the "
                                         "positions, and add one row per position.")
            # x + PE in another dtype (to within a half-precision rounding): most often a float64 table.
            if isinstance(out, torch.Tensor) and out.dtype != given.dtype and close(out, right, atol=0.05):
                return _other_dtype(built, given, out)
            if not isinstance(out, torch.Tensor) or not close(out, right):
                got = tuple(out.shape) if isinstance(out, torch.Tensor) else describe(out)
                if isinstance(out, torch.Tensor) and out.shape == right.shape:
                    got = f"the right shape, {got}, but other values{_rows_added(arrange(out), x[:, :length], L, d)}"
                return Feedback(WRONG, f"{built}: for x of shape {shape}, forward should return x + PE, the table's "
                                       f"first {length} rows added to each of the {batch} sequences; it returned {got}.")
        changed = _changes_its_input(module, arrange(x[:, :L]))
        if changed:
            return changed
        # The gradient must reach x: a `.detach()`, or a table added under torch.no_grad, would stop training there.
        with torch.enable_grad():
            kind, out = run_learner(module, arrange(x[:, :L]).requires_grad_())
        if kind == "raised":
            return _raised_with_grad(f"{built}: ", f"x of shape {tuple(arrange(x[:, :L]).shape)}", out)
        if kind == "returned" and isinstance(out, torch.Tensor) and not out.requires_grad:
            return Feedback(MISTAKE, f"{built}: forward returns x + PE, but no gradient flows back to x: for x of shape "
                                     f"{tuple(arrange(x[:, :L]).shape)} with requires_grad=True, the output has "
                                     "requires_grad=False. So training could not reach the layers before it. Something "
                                     "in forward cuts the gradient, such as `.detach()`, `torch.no_grad()` or a trip "
                                     "through NumPy.")
        too_long = arrange(x)
        kind, out = _forward(module, too_long)
        if kind == "returned" or not isinstance(out, ValueError):
            what = "returned a result" if kind == "returned" else f"raised {error_line(out)}"
            assertion = (" An assert is no check: `python -O` removes it." if isinstance(out, AssertionError) else "")
            # Returned, or failed only when adding: nothing checked the positions' dimension. Another error (an
            # IndexError, an assert) may come from a check on the right dimension: then only its kind is wrong.
            advice = ("Check the length on the dimension that holds the positions, and refuse it with ValueError."
                      if kind == "returned" or isinstance(out, RuntimeError)
                      else "Refuse it with ValueError, Python's error for a value outside what is allowed.")
            return Feedback(MISTAKE, f"{built}: for x of shape {tuple(too_long.shape)}, {L + 1} positions, one more "
                                     f"than the table's {L} rows, forward {what}. {advice}{assertion}")
    # torch.nn.Transformer's batch_first defaults to False: built without it, the module reads (seq, batch, d_model).
    try:
        module = module_class(d_model=d, max_sequence_length=L)
    except (Exception, SystemExit) as error:  # the learner's constructor
        return Feedback(MISTAKE, f"{module_class.__name__}(d_model={d}, max_sequence_length={L}) raised "
                                 f"{error_line(error)}: give batch_first a default, False, as torch.nn.Transformer does.")
    _evaluate(module)
    given = x[:, :2].transpose(0, 1).contiguous()
    kind, out = _forward(module, given)
    if kind == "raised" or not (isinstance(out, torch.Tensor) and close(out, (x[:, :2] + table[:2]).transpose(0, 1))):
        what = f"raised {error_line(out)}" if kind == "raised" else "did not add one table row per position"
        return Feedback(MISTAKE, f"Built without batch_first, for x of shape {tuple(given.shape)}, (seq, batch, d_model), "
                                 f"your module {what}. Make batch_first default to False, as torch.nn.Transformer does.")
    # A trainable nn.Parameter gives the right sums too, but an optimizer would change the table in training.
    trained = _trained(module, given)
    if trained:
        return Feedback(MISTAKE, f"Your module adds one table row per position in both layouts, but forward uses a "
                                 f"trainable nn.Parameter ({trained}). Training would change it, so the rows added would "
                                 "drift from the sinusoid table. Keep the table in a buffer, which moves with the model "
                                 "but is never trained, and add nothing trainable.")
    # A table kept as a plain attribute passes, but model.float() and model.to(...) would leave it behind.
    kept_plain = any(isinstance(value, torch.Tensor) for value in vars(module).values())  # parameters, buffers: not here
    plain = "" if any(True for _ in module.buffers()) or not kept_plain else (
        " Your table is a plain attribute, so model.float() and model.to(...) would not convert it; a buffer would.")
    return Feedback(CORRECT, f"Correct: your module adds one table row per position in both layouts, and refuses a "
                             f"sequence one longer than its table with ValueError.{plain}")
