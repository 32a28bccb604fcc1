"""Checkers for attention, masks and heads: a repair of weights masked after the softmax, the rows a mask on the
wrong axis turns to NaN, one head's score against two heads', where a head lands once heads are folded into the batch.
The show_ functions print each prediction's run, once judged."""

from __future__ import annotations

from collections.abc import Callable

import torch

from .._checks import check_tensor, is_real, short
from .._provenance import calls_builtin
from ..attention import multi_head_attention, scaled_dot_product_scores
from .feedback import (
    CORRECT,
    MISTAKE,
    WRONG,
    Feedback,
    as_function,
    as_number,
    as_tensor,
    close,
    describe,
    error_line,
    exercise,
    first_mistake,
    not_attempted,
    run_learner,
)
from .predictions import check_prediction, predicted
from .signature import refuses

__all__ = ["check_mask_repair", "check_nan_rows",
           "check_one_head_score", "show_every_score_plus_five",
           "show_nan_rows", "show_one_head_score"]


def show_every_score_plus_five(prediction: object, *, scores: torch.Tensor, key_mask: torch.Tensor) -> None:
    """Print the largest change of a masked weight when every score gets 5 more: the run after the multiple choice.
    It prints only once a checker has judged `prediction` (see `predicted`)."""
    if not predicted(prediction):
        return
    hidden = ~check_tensor("key_mask", key_mask, ndim=(1, 2), kind="bool")
    weights = torch.softmax(scores.detach().masked_fill(hidden, float("-inf")), dim=-1)
    shifted = torch.softmax((scores.detach() + 5).masked_fill(hidden, float("-inf")), dim=-1)
    print(f"every score + 5: the largest change of a weight is {(shifted - weights).abs().max():.6f}")


def _repair_cases() -> list[tuple[str, torch.Tensor, torch.Tensor]]:
    """The inputs a repair is run on, none of them a notebook's: (what they are, a softmax's weights, key_mask)."""
    generator = torch.Generator().manual_seed(5)
    cases = []
    for what, queries, mask in (("6 x 6, the last 3 keys padded", 6, [True] * 3 + [False] * 3),
                                ("4 x 8, keys 1, 4 and 7 padded", 4, [True, False, True, True, False, True, True, False]),
                                ("3 x 3, no padding", 3, [True] * 3)):
        scores = 2 * torch.randn(queries, len(mask), generator=generator)
        cases.append((what, torch.softmax(scores, dim=-1), torch.tensor(mask)))
    return cases


def _repair_mistakes(weights: torch.Tensor, key_mask: torch.Tensor) -> list[tuple[str, object]]:
    """What the usual wrong repairs give on one case (NaN, from a division by 0, read as 0)."""
    kept = weights * key_mask
    by_rows = weights * key_mask[:, None] if weights.shape[0] == key_mask.shape[0] else None
    real = int(key_mask.sum())
    rows_hidden = ("The mask hid rows (queries) instead of columns (keys). key_mask has one entry per key, True where the "
                   "key is real. Multiply each row by it: unmasked * key_mask.")
    return [
        ("Nothing was repaired: the padded keys still get their weights. Set them to 0, then divide each row by "
         "its new sum.", weights),
        ("That is the bug itself: the padding's weights are 0, but each row now sums to less than 1. Dividing by the "
         "old row sums would change nothing, since each is 1. Divide each row by the sum of the weights you kept.", kept),
        ("Each row was divided by its sum without keepdim=True: the (queries,) vector of sums lines up with the last "
         "dimension, so column j was divided by row j's sum. Use kept.sum(dim=-1, keepdim=True).",
         lambda: kept / kept.sum(dim=-1) if kept.shape[0] == kept.shape[1] else None),
        ("Each column was divided by its sum (dim=0 or dim=-2): a row is one query's weights, so each row must sum "
         "to 1. Sum along dim=-1, with keepdim=True.", lambda: kept / kept.sum(dim=-2, keepdim=True)),
        ("A second softmax: a softmax reads scores, and these are weights already. It gives each zeroed weight "
         "exp(0) = 1 and flattens the rest. Divide each row by its sum instead.",
         lambda: torch.softmax(kept, dim=-1)),
        ("A second softmax, in effect: exp of the weights, the padding hidden, then each row normalised. A softmax "
         "reads scores, and these are weights already, so it flattens the real keys' weights. Divide the weights "
         "themselves by each row's sum instead.",
         lambda: torch.softmax(weights.masked_fill(~key_mask, float("-inf")), dim=-1)),
        (rows_hidden, lambda: by_rows),
        (rows_hidden, lambda: None if by_rows is None else by_rows / by_rows.sum(dim=-1, keepdim=True)),
        ("The padding's share was split evenly among the real keys. It goes back in proportion: dividing a row by "
         "its real keys' sum multiplies each of them by the same factor.",
         lambda: kept + (1 - kept.sum(dim=-1, keepdim=True)) / real * key_mask),
    ]


@exercise("a repair of the weights masked after the softmax")
def check_mask_repair(answer: Callable | None) -> Feedback:
    """A function `answer(unmasked, key_mask)` that takes a softmax's weights, `(queries, keys)`, and a key mask,
    `(keys,)`, True where a key is real, and returns the weights with the padded keys at 0 and each row summing to 1:
    the softmax over the real keys alone.

    It is run on three cases of its own, none of them the notebook's, so a tensor computed in the notebook cannot
    pass, and a repair that masks the scores with -inf cannot be written: the function never sees the scores. A
    softmax of its own (the -inf route again, on the weights' logarithms) is named.
    """
    if (not_a_function := as_function(
            answer, signature="my_repair(unmasked, key_mask)",
            when_a_tensor="The checker runs your repair on new weights: put your lines in def my_repair(unmasked, "
                          "key_mask): and return the result.")):
        return not_a_function
    cases = _repair_cases()
    in_place = False  # whether the repair changed the weights it was given
    for what, weights, key_mask in cases:
        kept = weights.double() * key_mask
        expected = kept / kept.sum(dim=-1, keepdim=True)
        given_weights = weights.clone()
        kind, result = run_learner(answer, given_weights, key_mask.clone())
        in_place = in_place or given_weights.shape != weights.shape or not bool(torch.equal(given_weights, weights))
        if kind == "raised":
            if refuses(result, answer, weights, key_mask):
                return Feedback(WRONG, f"Calling my_repair(unmasked, key_mask) failed with {error_line(result)}: give "
                                       "the function the two parameters (unmasked, key_mask).")
            tip = (" If it reads the notebook's weights or key_mask, build the result from the function's own arguments"
                   " instead.") if "must match the size" in str(result) else ""
            return Feedback(WRONG, f"On new weights ({what}) it raised {error_line(result)}.{tip}")
        given = as_tensor(result, "the repaired weights", allow_nan=True)
        if isinstance(given, Feedback) or not isinstance(result, torch.Tensor):  # a list or an array cannot go into weights @ V
            return Feedback(WRONG, f"On new weights ({what}) it returned {describe(result)}; expected a torch.Tensor of the "
                                   f"weights' shape, {tuple(weights.shape)}, for weights @ V.")
        finite = not given.is_floating_point() or bool(given.isfinite().all())
        real = int(key_mask.sum())
        if given.shape == (weights.shape[0], real) and real < weights.shape[1]:
            right = given.is_floating_point() and close(given.double(), expected[:, key_mask])
            return Feedback(WRONG, f"On weights of shape {tuple(weights.shape)} ({what}) it returned shape "
                                   f"{tuple(given.shape)}, one column per real key"
                                   f"{', with the right weights on them' if right else ''}. Keep every key's column, "
                                   "with 0 on the padded ones: weights @ V needs one weight per key.")
        if given.shape != weights.shape:  # a size its arguments lack is likely the notebook's
            foreign = [size for size in given.shape if size not in (1, *weights.shape)]
            return Feedback(WRONG, f"On weights of shape {tuple(weights.shape)} ({what}) it returned shape {tuple(given.shape)}"
                                   + (f": {foreign[0]} is no size of its arguments. Build the result from the function's "
                                      "own arguments, not from the notebook's variables." if foreign else
                                      f"; expected {tuple(weights.shape)}, one weight per query and key."))
        padding_only = finite or bool(given[:, key_mask].isfinite().all())  # NaN or inf on padded keys alone
        given = torch.nan_to_num(given.double(), nan=0.0, posinf=0.0, neginf=0.0) if given.is_floating_point() else given
        if close(given, expected) and finite:
            continue
        if close(given, expected) and padding_only:
            return Feedback(WRONG, f"On new weights ({what}) the real keys' weights are right, but a padded key gets "
                                   "NaN or inf instead of 0. A row holding one makes its row of weights @ V NaN or inf "
                                   "too: put 0 on the padded keys, for example with unmasked * key_mask.")
        mistake = first_mistake(lambda built, given=given: built is not None and close(given, torch.nan_to_num(built, nan=0.0)),
                                _repair_mistakes(weights, key_mask))
        if mistake:
            return mistake
        if not finite:
            return Feedback(WRONG, f"On new weights ({what}) it returned NaN or inf, which 0 / 0 and 1 / 0 give, for "
                                   "example: check what each row is divided by.")
        sums = given.double().sum(dim=-1)
        padded = given[:, ~key_mask]
        if padded.numel() and bool((padded.abs() > 1e-4).any()):
            return Feedback(WRONG, f"On new weights ({what}) a padded key still gets weight (up to "
                                   f"{float(padded.abs().max()):.3f}); it should get 0.")
        off = [(row, total) for row, total in enumerate(sums.tolist()) if not abs(total - 1) <= 1e-4]
        if off:  # only the rows that miss, so that no sum printed as 1.0 is called wrong
            rows = ", ".join(f"row {row} sums to {total:.6g}" for row, total in off[:3])
            return Feedback(WRONG, f"On new weights ({what}) {rows}{', ...' if len(off) > 3 else ''}; each row should "
                                   "sum to 1, within 1e-4.")
        return Feedback(WRONG, f"On new weights ({what}) the padding gets 0 and each row sums to 1, but the real keys' "
                               "weights are not in their old proportions: divide each row by its sum.")
    if calls_builtin(lambda: [run_learner(answer, weights.clone(), key_mask.clone()) for _, weights, key_mask in cases],
                     ["softmax", "log_softmax", "special_softmax"]):
        return Feedback(MISTAKE, "Right numbers, but through a softmax of your own: hiding the padding before a "
                                 "softmax is the -inf route the exercise rules out. Repair the weights themselves: "
                                 "zero the padding's, then divide each row by its new sum.")
    note = (" One caution: it also changed the weights it was given, in place (`*=`, `/=`), so the caller's tensor "
            "changed too. `kept = unmasked * key_mask` makes a new tensor and leaves the caller's alone.") if in_place else ""
    return Feedback(CORRECT, f"Correct on {len(cases)} new cases: each row is the softmax over its real keys alone, "
                             "within 1e-4.\nOn paper it is exact. Let S sum e^s over all keys, and R over the real ones. "
                             "The buggy rows sum to R / S, less than 1. The padding's weight is lost. "
                             "Dividing e^s_j / S by R / S gives e^s_j / R, the -inf mask's weight." + note)


# The predictions' checkers hold their explanation, so that the notebook's checker cell does not show the answer.
_predict = check_prediction.__wrapped__  # unrecorded: the named checker records the verdict once


@exercise("the mask as ~mask[:, :, None]: how many rows all NaN?", prediction=True)
def check_nan_rows(answer: object, *, scores: torch.Tensor, key_mask: torch.Tensor) -> Feedback:
    """A prediction: how many rows of softmax(scores masked with `~key_mask[:, :, None]`) are all NaN.

    scores is `(batch, L, L)` and key_mask `(batch, L)`, True for a real token.
    """
    check_tensor("scores", scores, ndim=(3,))
    if check_tensor("key_mask", key_mask, ndim=(2,)).dtype != torch.bool or key_mask.shape != scores.shape[:2]:
        raise ValueError(f"key_mask must be a bool (batch, L) mask for scores of shape {tuple(scores.shape)}")
    wrong_axis = torch.softmax(scores.detach().masked_fill(~key_mask[:, :, None], float("-inf")), dim=-1)
    actual = int(wrong_axis.isnan().all(dim=-1).sum())
    given, rows = as_number(answer), scores.shape[0] * scores.shape[1]
    slip = ""  # the likely mistake behind a wrong count, named before the reason
    if given == 0 != actual:
        slip = "0 would mean the mask still hides keys, as ~mask[:, None, :] does. "
    elif given == rows != actual:
        slip = f"{rows} is every row. A real word's row keeps all its keys, so its softmax is fine. "
    elif given == scores.shape[0] != actual:
        slip = f"{scores.shape[0]} counts the sentences. The mask hides one row per <PAD>, not one per sentence. "
    elif given != actual and given in (per_sentence := [int(n) for n in (~key_mask).sum(dim=1)]):
        slip = f"{given:g} counts only sentence {per_sentence.index(given)}'s <PAD>s. Count every sentence's. "
    elif given == int(key_mask.sum()) != actual:
        slip = (f"{int(key_mask.sum())} counts the real words. Their rows are not masked at all: they come out as numbers, with "
                "weight on the padding and no error. Count the other rows. ")
    return _predict(answer, actual=actual, question="rows all NaN",
                    explanation=f"{slip}~mask[:, :, None] has shape {tuple(key_mask[:, :, None].shape)}, so it hides "
                                "rows (queries), not columns (keys): one row per <PAD> of the batch.")


def show_nan_rows(prediction: object, *, scores: torch.Tensor, key_mask: torch.Tensor) -> None:
    """Print how many rows of softmax(scores masked with `~key_mask[:, :, None]`) are all NaN, of how many: the run
    after the NaN-rows prediction. It holds the one line that would compute the answer, so it prints only once a
    checker has judged `prediction` (see `predicted`); until then it says what it waits for."""
    if not predicted(prediction):
        return
    check_tensor("scores", scores, ndim=(3,))
    if check_tensor("key_mask", key_mask, ndim=(2,)).dtype != torch.bool or key_mask.shape != scores.shape[:2]:
        raise ValueError(f"key_mask must be a bool (batch, L) mask for scores of shape {tuple(scores.shape)}")
    wrong_axis = torch.softmax(scores.detach().masked_fill(~key_mask[:, :, None], float("-inf")), dim=-1)
    print("rows all NaN:", int(wrong_axis.isnan().all(dim=-1).sum()), "of", wrong_axis.shape[0] * wrong_axis.shape[1])


@exercise("one head on the same matrices: its score", prediction=True)
def check_one_head_score(answer: object, *, x: torch.Tensor, weights: object, num_heads: int, query: int,
                         key: int) -> Feedback:
    """A prediction: the score that ONE head of d_model columns gives (query, key) of x, `(seq, d_model)`, on the same
    `weights` (`attention.multi_head_weights`) whose `num_heads` heads score that pair s_0, s_1, ... The answer is
    (s_0 + s_1 + ...) / sqrt(num_heads), taken within 5e-3 or 0.5 %, whichever is wider (an answer rounded to two
    decimals is right, and so is a hand division by sqrt(2) ~ 1.41); the named mistakes are taken within 5e-3.

    Named, each by the number it gives: the plain sum of the heads' scores (the wrong scale), their mean, their sum
    divided by sqrt(d_model) (a second division), their sum times sqrt(num_heads), and one head's own score.
    """
    check_tensor("x", x, ndim=(2,))
    seq, d_model = x.shape
    if not is_real(num_heads, whole=True) or not 1 < num_heads <= d_model or d_model % int(num_heads):
        raise ValueError(f"num_heads must be a whole number above 1 that divides d_model = {d_model}, got {short(num_heads)}")
    for name, index in (("query", query), ("key", key)):
        if not is_real(index, whole=True) or not 0 <= index < seq:
            raise ValueError(f"{name} must be a position of x, 0 to {seq - 1}, got {short(index)}")
    num_heads, query, key = int(num_heads), int(query), int(key)
    x = x.detach().cpu().double()
    Q, K = x @ weights.W_Q.detach().cpu().double(), x @ weights.W_K.detach().cpu().double()
    head_dim = d_model // num_heads
    heads = [float(Q[query, h * head_dim:(h + 1) * head_dim] @ K[key, h * head_dim:(h + 1) * head_dim]) / head_dim ** 0.5
             for h in range(num_heads)]
    expected = float(Q[query] @ K[key]) / d_model ** 0.5
    names = " + ".join(f"s{h}" for h in range(num_heads))
    if answer is None:
        return not_attempted(f"a number: the one head's score for query {query} and key {key}")
    number = as_number(answer)
    if number is None:
        return Feedback(WRONG, f"Expected one number, the one head's score, got {describe(answer)}.", readable=False)
    why = (f"One head's dot product runs over all {d_model} columns, so it is the sum of the heads' dot products. It "
           f"divides by sqrt({d_model}) instead of sqrt({head_dim}), so the score is ({names}) / sqrt({num_heads}) = "
           f"{expected:.4f}.")
    # Rounded to 2 decimals, or divided by sqrt(2) ~ 1.41 by hand (0.3 % off): right too.
    if abs(number - expected) <= max(5e-3, 5e-3 * abs(expected)):
        return Feedback(CORRECT, f"Correct: {expected:.4f}. {why}")
    mistakes = [(f"That is {names}, the right sum at the wrong scale.", sum(heads)),
                (f"That is the mean of the heads' scores. The factor is 1 / sqrt({num_heads}), not 1 / {num_heads}.",
                 sum(heads) / num_heads),
                (f"That is ({names}) / sqrt({d_model}). Each head's score is already divided by sqrt({head_dim}), so that "
                 f"divides twice. Only sqrt({d_model}) / sqrt({head_dim}) = sqrt({num_heads}) is left to divide by.",
                 sum(heads) / d_model ** 0.5),
                 (f"That is ({names}) times sqrt({num_heads}). The one head divides by the larger sqrt({d_model}), so "
                  f"the factor is 1 / sqrt({num_heads}).", sum(heads) * num_heads ** 0.5)]
    mistakes += [(f"That is head {h}'s own score. The one head reads every column.", s) for h, s in enumerate(heads)]
    mistake = first_mistake(lambda value: abs(number - value) <= 5e-3, mistakes)
    if mistake:
        return Feedback(MISTAKE, f"{mistake.message} {why}")
    close_to = (f" That is close. If you divided ({names}) by sqrt({num_heads}), keep more decimals "
                f"(sqrt({num_heads}) = {num_heads ** 0.5:.4f}).") if abs(number - expected) <= 0.02 * abs(expected) else ""
    return Feedback(WRONG, f"You predicted {number:g}; the one head's score is {expected:.4f}.{close_to} {why}")


def show_one_head_score(prediction: object, *, x: torch.Tensor, weights: object, num_heads: int, query: int,
                        key: int) -> None:
    """Print the score one head of all d_model columns gives (query, key) of x, `(seq, d_model)`, on the `num_heads`
    heads' `weights`, and whether its output equals theirs: the run after the one-head-score prediction. It prints
    only once a checker has judged `prediction` (see `predicted`)."""
    if not predicted(prediction):
        return
    x = check_tensor("x", x, kind="floating-point", ndim=(2,)).detach()
    one = scaled_dot_product_scores(x @ weights.W_Q, x @ weights.W_K)[query, key]
    print(f"one head's score for query {query} and key {key}: {one.item():.4f}")
    one_head = multi_head_attention(x[None], weights, num_heads=1)[0]
    same = bool(torch.allclose(one_head, multi_head_attention(x[None], weights, num_heads=num_heads)[0], atol=1e-6))
    d_model = x.shape[-1]
    print(f"one head of {d_model} columns gives the same output as {num_heads} heads of {d_model // num_heads} columns:", same)
    if not same:
        print("Each head takes its own softmax, so the weights, and the outputs, differ.")


