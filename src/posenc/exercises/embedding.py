"""Checkers for the W_E projection: the gradient a loss on X gives each row of W_E, how many rows
one optimizer step changes."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from .._checks import POSITIVE, check_floating_tensor, check_size, is_real, is_sequence, short
from ..tokens import SPECIAL_TOKENS, UNK_TOKEN
from .feedback import CORRECT, MISTAKE, WRONG, Feedback, as_count, as_number, describe, exercise, not_attempted

__all__ = ["check_gradient_column", "check_rows_changed"]


def _row_numbers(answer: object) -> list[int] | None:
    """Whole numbers >= 0 from a list, tuple, set, range, 1-D tensor or array of them; None if the answer is not that."""
    if isinstance(answer, (torch.Tensor, np.ndarray)):
        if (isinstance(answer, torch.Tensor) and (answer.is_meta or answer.is_complex())) or answer.ndim != 1:
            return None
        answer = answer.tolist()
    # A list longer than any vocabulary here is not a list of its rows (and range(10**12) would take hours to read).
    if not isinstance(answer, (list, tuple, set, frozenset, range)) or len(answer) > 100_000:
        return None
    numbers = [as_count(value) for value in answer]
    return None if any(n is None or n < 0 for n in numbers) else numbers


def _numbers(answer: object) -> list[float] | None:
    """Real numbers from a list, tuple, 1-D tensor or array of them (a list may hold 0-d tensors, as
    `[(t == r).sum() for r in rows]` gives); None if the answer is not that."""
    if isinstance(answer, (torch.Tensor, np.ndarray)):
        if (isinstance(answer, torch.Tensor) and (answer.is_meta or answer.is_complex())) or answer.ndim != 1:
            return None
        answer = answer.tolist()
    if not isinstance(answer, (list, tuple)) or len(answer) > 100_000:
        return None
    # feedback.as_number reads each item (0-d tensors too); a string is not a number in a list here.
    numbers = [None if isinstance(v, str) else as_number(v) for v in answer]
    return None if any(n is None or not np.isfinite(n) for n in numbers) else numbers


@exercise("the gradient of W_E's first column", prediction=True)
def check_gradient_column(answer: object, *, ids: Sequence[int], vocab_size: int,
                          padding_idx: int | None = 0, other_ids: Sequence[int] | None = None) -> Feedback:
    """The gradient of each row's first entry of W_E, for the loss X.sum() with X = one_hot(ids) @ W_E: one number
    per row, the number of times the ids look that row up (a prediction, checked by the run).

    `padding_idx` is the padding's id (None if there is none), for the feedback on the padding's row. `other_ids` are
    the ids of the sentence the notebook follows, if any: counts of those are named as the likeliest slip.
    """
    for name, given_ids in (("ids", ids), ("other_ids", [] if other_ids is None else other_ids)):
        if not is_sequence(given_ids) or not all(is_real(i, whole=True) and i >= 0 for i in given_ids):
            raise TypeError(f"{name} must be a list of ints >= 0, got {short(given_ids)}")
    ids, other_ids = [int(i) for i in ids], [int(i) for i in other_ids or ()]
    vocab_size = check_size("vocab_size", vocab_size, maximum=100_000)
    pad_id = None if padding_idx is None else check_size("padding_idx", padding_idx, minimum=0, maximum=vocab_size - 1)
    if not ids or max(ids) >= vocab_size:
        raise ValueError(f"ids must be a non-empty list of rows of W_E, below vocab_size={vocab_size}, got {short(ids)}")
    expected = [ids.count(k) for k in range(vocab_size)]
    used = sorted(set(ids))
    if answer is None:
        return not_attempted(f"a list of {vocab_size} numbers, one per row of W_E")
    given = _numbers(answer)
    shape = tuple(answer.shape) if isinstance(answer, (torch.Tensor, np.ndarray)) else None
    if given is None and shape is not None and len(shape) == 2 and 1 in shape and max(shape) == vocab_size:
        return Feedback(WRONG, f"Expected a flat list of {vocab_size} numbers, one per row of W_E, got "
                               f"{describe(answer)}. Flatten it, with .flatten().", readable=False)
    if given is None and shape is not None and len(shape) == 2 and shape[0] == vocab_size:
        return Feedback(WRONG, f"Expected a list of {vocab_size} numbers, one per row of W_E, got {describe(answer)}. "
                               "If it is the whole gradient, take its column 0, [:, 0].", readable=False)
    if given is None:
        return Feedback(WRONG, f"Expected a list of {vocab_size} numbers, one per row of W_E, got {describe(answer)}.",
                        readable=False)
    if len(given) != vocab_size:
        if given == [float(i) for i in ids]:
            return Feedback(MISTAKE, f"Those are the ids, one per position. Give one number per row of W_E instead: "
                                     f"{vocab_size} numbers, each row's gradient.")
        if sorted({int(g) for g in given if g == int(g)}) == used and all(g == int(g) for g in given):
            return Feedback(MISTAKE, f"Those are the rows with a gradient. Give each row's gradient instead: "
                                     f"{vocab_size} numbers, one per row of W_E, 0 for a row no token looks up.")
        if len(given) == vocab_size + 1:
            return Feedback(MISTAKE, f"One number too many: W_E has {vocab_size} rows. A word the vocabulary does not know "
                                     "gets no row of its own. It uses <UNK>'s row.")
        return Feedback(WRONG, f"Expected {vocab_size} numbers, one per row of W_E; got {len(given)}.", readable=False)
    # A gradient found as the loss's rise over a step of 0.01, in float32, lands near the whole number (5.99995).
    given = [float(round(g)) if abs(g - round(g)) < 1e-3 else g for g in given]
    if given == expected:
        return Feedback(CORRECT, "Correct: each row's gradient counts its uses in X, and a row no token looks up gets 0.")
    if other_ids and given == [other_ids.count(k) for k in range(vocab_size)]:
        return Feedback(MISTAKE, "Those are the counts for the sentence the notebook follows. Count each row's uses in "
                                 "the exercise's sentence instead.")
    if any(expected) and all(abs(g - 0.01 * c) < 1e-4 for g, c in zip(given, expected)):
        return Feedback(MISTAKE, "Those are the loss's rises for a step of 0.01. The gradient is each rise divided by "
                                 "the step, 0.01.")
    if any(expected) and given == [-c for c in expected]:
        return Feedback(MISTAKE, "The right sizes, but with the sign flipped. The gradient is the loss's rise per unit "
                                 "step, and here no rise is below 0. A training step moves roughly against it.")
    if given == [1 if c else 0 for c in expected] and given != expected:
        repeated = [k for k in used if expected[k] > 1]
        return Feedback(MISTAKE, f"The right rows, but a row used more than once gets more than 1. Each use adds 1 to "
                                 f"the loss's rise. Count the uses of row {repeated[0]}.")
    if given == [1.0] * vocab_size:
        return Feedback(MISTAKE, "A row no token looks up is multiplied only by the 0s of the one-hot rows, so its "
                                 "gradient is 0.")
    if pad_id is not None and expected[pad_id] and given == [0 if k == pad_id else c for k, c in enumerate(expected)]:
        return Feedback(MISTAKE, f"The padding is a token too: <PAD> is id {pad_id}, and each padding slot looks up "
                                 f"row {pad_id}.")
    unknown_id = SPECIAL_TOKENS.index(UNK_TOKEN)
    if unknown_id != pad_id and expected[unknown_id] and \
            given == [0 if k == unknown_id else c for k, c in enumerate(expected)]:
        return Feedback(MISTAKE, f"A word the vocabulary lacks becomes <UNK>, id {unknown_id}, so row {unknown_id} "
                                 f"has a gradient too.")
    # Too few <UNK>s: a token missed as unknown, often punctuation (a comma); its slot may have gone to <PAD> instead.
    missed = expected[unknown_id] - given[unknown_id] if unknown_id != pad_id else 0
    if 0 < missed < expected[unknown_id] and all(g == c for k, (g, c) in enumerate(zip(given, expected))
                                                  if k not in (unknown_id, pad_id)) \
            and (pad_id is None or given[pad_id] - expected[pad_id] in (0, missed)):
        return Feedback(MISTAKE, f"Row {unknown_id} is <UNK>'s: every token the vocabulary lacks looks it up, a "
                                 "punctuation mark too. Is each token of the sentence, commas included, in the vocabulary?")
    # Name the first wrong row and the rule, not its value: the value would walk the learner to the answer row by row.
    wrong = [k for k in range(vocab_size) if given[k] != expected[k]]
    first = wrong[0]
    differ = "differs" if len(wrong) == 1 else "differ"
    return Feedback(WRONG, f"Not quite: {len(wrong)} of the {vocab_size} numbers {differ}. Row {first}: you said "
                           f"{given[first]:g}. Its gradient is the number of times the ids look row {first} up.")


@exercise("rows of W_E one AdamW step changes", prediction=True)
def check_rows_changed(answer: object, *, lookup: torch.nn.Embedding, lr: float, ids: Sequence[int]) -> Feedback:
    """How many rows of `lookup`'s table one step of `torch.optim.AdamW(lookup.parameters(), lr=lr)` changes (a
    prediction, checked by taking that step on a copy of the table, so that the answer is not on the screen before
    the run; `lookup` itself is left as it is).

    The step uses the gradient in `lookup.weight.grad` and AdamW's defaults otherwise; a table whose `.grad` is None
    is skipped, as PyTorch's optimizers skip it, so no row changes.
    `ids` are the ids the loss looked up, for the feedback.
    A list of the changed rows' numbers is a right answer too.
    """
    if not isinstance(lookup, torch.nn.Embedding):
        raise TypeError(f"lookup must be a torch.nn.Embedding, got {short(lookup)} of type {type(lookup).__name__}")
    before = lookup.weight.detach()
    check_floating_tensor("lookup", before, ndim=(2,))
    if before.numel() == 0:
        raise ValueError(f"lookup must have a non-empty table on a real device, got shape {tuple(before.shape)}")
    lr = POSITIVE("lr", lr)
    vocab_size = before.shape[0]
    if not is_sequence(ids) or not ids or not all(is_real(i, whole=True) and 0 <= i < vocab_size for i in ids):
        raise TypeError(f"ids must be a non-empty list of rows of the table, below {vocab_size}, got {short(ids)}")
    gradient = lookup.weight.grad
    copy = before.cpu().clone().requires_grad_(True)
    if gradient is not None:  # without one, AdamW skips the table, as PyTorch's optimizers do
        copy.grad = gradient.detach().cpu().clone().to(copy.dtype)
    with_gradient = [] if gradient is None else (copy.grad != 0).any(dim=1).nonzero().flatten().tolist()
    torch.optim.AdamW([copy], lr=lr).step()  # AdamW's defaults otherwise, as the notebook's step
    after = copy.detach()
    changed = (before.cpu() != after).any(dim=1).nonzero().flatten().tolist()
    expected = len(changed)
    if answer is None:
        return not_attempted("a whole number of rows")
    rows = _row_numbers(answer)
    # Rows with no gradient that changed moved by weight decay alone. The stem gives weight_decay's value, not what it
    # does, and the run below teaches it, so the messages point there instead of saying it first.
    right = ("Correct. The run below shows why."
             if expected == vocab_size > len(with_gradient) else None)
    if rows is not None and sorted(set(rows)) == changed:
        return Feedback(CORRECT, right or f"Correct: the step changed rows {short(changed)}, {expected} of {vocab_size}.")
    number = as_count(answer)
    if number is None and rows is not None and len(rows) == 1 and rows[0] >= vocab_size:
        number, rows = rows[0], None  # [11]: no row has that number, so it is a count in a list
    listed = None if number is not None or rows is None else set(rows)
    if number is None and listed is None:
        return Feedback(WRONG, f"Expected a whole number of rows, got {describe(answer)}.", readable=False)
    if number == expected:
        return Feedback(CORRECT, right or f"Correct: the step changed {expected} of the {vocab_size} rows.")

    def means(these: Sequence[int]) -> bool:  # a count names a set by its size, a list by its rows
        return number == len(these) if listed is None else listed == set(these)

    used = sorted({int(i) for i in ids})
    unused = [k for k in range(vocab_size) if k not in used]
    decay = expected == vocab_size
    if decay and means(with_gradient):
        return Feedback(MISTAKE, f"Those are the rows with a gradient. AdamW changes a row whose gradient is 0 too, "
                                 f"so all {expected} rows change. The run below shows how.")
    if decay and means(used):
        return Feedback(MISTAKE, f"Those are the rows the sentence uses, <PAD> included. AdamW also changes rows "
                                 f"{short(unused)}, which no token looks up, so all {expected} rows change. The run below "
                                 "shows how.")
    pad = lookup.padding_idx
    if decay and (number == 1 if pad is None else means([pad])):
        return Feedback(MISTAKE, f"The <PAD> row is not the only one that changes. Rows {short(with_gradient)} move with "
                                 f"their gradient, and every other row changes too. All {expected} change. The run "
                                 "below shows how.")
    if decay and pad is not None and pad not in with_gradient and means([k for k in range(vocab_size) if k != pad]):
        return Feedback(MISTAKE, f"That is all but the <PAD> row, row {pad}. padding_idx keeps its gradient at zero, but "
                                 f"AdamW changes a row whose gradient is 0 too, so all {expected} change. The run below "
                                 "shows how.")
    if decay and means([k for k in range(vocab_size) if k not in with_gradient]):
        return Feedback(MISTAKE, f"Those are the rows whose gradient is all zeros. Rows {short(with_gradient)} change too: their "
                                 f"gradient moves them. All {expected} change.")
    if listed is None:
        return Feedback(WRONG, f"You said {number}; the step changed {expected} of the {vocab_size} rows.")
    count = f"{len(listed)} row{'' if len(listed) == 1 else 's'}"
    plain = " For a count, give a plain number, not a list." if len(rows) == 1 else ""
    return Feedback(WRONG, f"You listed {count}, {short(sorted(listed))}; the step changed {expected} of the "
                           f"{vocab_size} rows.{plain}")
