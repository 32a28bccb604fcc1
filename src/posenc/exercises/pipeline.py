"""Checkers for a real pipeline: the position ids of a left-padded batch, the position a decoding loop with a KV
cache gives each new token, and the scores one step of a RoPE cache gives."""

from __future__ import annotations

import math
import re
from collections.abc import Callable

import torch

from .._checks import check_floating_tensor, check_size, short
from .._provenance import calls_any, loaded_library_functions
from ..positions import check_attention_mask
from ..positions import position_ids as mask_position_ids
from ..schemes import apply_rotary
from .feedback import (
    CORRECT,
    MISTAKE,
    NOT_ATTEMPTED,
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
    run_learner,
)
from .signature import refuses

__all__ = ["check_position_ids", "check_new_position", "check_cached_keys"]


def _check_attention_mask(attention_mask: object) -> torch.Tensor:
    """The exercise's (batch, seq) 0/1 mask, as a LongTensor (a bad one is the notebook's bug: it raises)."""
    mask = check_attention_mask(attention_mask).cpu()
    if not bool(mask.any(dim=-1).all()):
        raise ValueError("attention_mask must have at least one real token in every row")
    return mask


def _borrowed(action: Callable[[], object]) -> str | None:
    """Which library's own position ids `action()` computes through, if any: the package's positions.position_ids, or
    transformers' generation helpers (those loaded now: a session that never imported them called none)."""
    if calls_any(action, [mask_position_ids]):
        return "the package's own positions.position_ids"
    helpers = loaded_library_functions(lambda name: name in _GENERATION_HELPERS)
    if helpers and calls_any(action, helpers):
        return "transformers' own generation helpers (_prepare_position_ids_for_generation and the like)"
    return None


_GENERATION_HELPERS = {"_prepare_position_ids_for_generation", "_update_model_kwargs_for_generation", "_prepare_position_ids"}


# Masks of the checker's own, so that ids typed for the notebook's batch cannot pass.
_POSITION_CASES = (torch.tensor([[0, 0, 0, 1, 1], [0, 1, 1, 1, 1], [1, 1, 1, 1, 1]]), torch.tensor([[0, 1, 1], [1, 1, 1]]))


@exercise("position ids of a left-padded batch")
def check_position_ids(answer: object, *, attention_mask: torch.Tensor, max_sequence_length: int = 64) -> Feedback:
    """A function `answer(attention_mask)` that returns each real token's position among the real tokens of its row
    (the first real token at 0), as integers. It is run on `attention_mask` and on masks of the checker's own.

    A pad's position is never read (no query looks at a pad, and a pad's output is thrown away), so a pad may hold
    any position the tables have a row for, 0 to max_sequence_length - 1 (the real-pipeline tables: TinyDecoder's, the
    Llama's max_position_embeddings and GPT-2's n_positions, 64 each). transformers 5.23 puts 0 there (generation/utils.py,
    `_prepare_position_ids_for_generation`); some of its models put 1. A negative one, or one past the table, is a named
    mistake: the lookup raises. Float ids are a mistake too: the decoder raises "must be an integer tensor". A function
    that calls the package's positions.position_ids, or transformers' generation helpers, is named.
    """
    max_sequence_length = check_size("max_sequence_length", max_sequence_length, maximum=2**40)
    mask = _check_attention_mask(attention_mask)
    if (not_a_function := as_function(
            answer, signature="my_position_ids(attention_mask)",
            when_a_tensor="The checker tries masks of its own: put your line in def my_position_ids(attention_mask): "
                          "and return the ids.")):
        return not_a_function
    cases = [mask, *_POSITION_CASES]
    for case in cases:
        shown = f"my_position_ids({case.tolist()})"
        kind, result = run_learner(answer, case.clone())
        if kind == "raised":
            if refuses(result, answer, case):
                return Feedback(WRONG, f"Calling {shown} failed with {error_line(result)}: give the function one "
                                       "parameter, the attention mask.")
            return Feedback(WRONG, f"{shown} raised {error_line(result)}.")
        if result is None:
            return Feedback(WRONG, f"{shown} returned None: end the function with return and the ids.")
        feedback = _judge_position_ids(result, case, max_sequence_length)
        if feedback.status != CORRECT:
            return feedback if case is mask else Feedback(feedback.status, f"For {shown}: {feedback.message}")
    if (library := _borrowed(lambda: [run_learner(answer, case.clone()) for case in cases])):
        return Feedback(MISTAKE, f"Right ids, but through {library}. The exercise asks you to write them from "
                                 "attention_mask yourself, with a running sum along each row.")
    return Feedback(CORRECT, f"Correct on the batch and on {len(_POSITION_CASES)} masks of the checker's own.")


def _judge_position_ids(answer: object, mask: torch.Tensor, max_sequence_length: int) -> Feedback:
    """The verdict on the ids one call returned for `mask` (a correct verdict's message is not shown)."""
    real = mask.bool()
    expected = mask.cumsum(-1) - 1
    answer = as_tensor(answer, f"the position ids, a {tuple(mask.shape)} tensor of whole numbers")
    if isinstance(answer, Feedback):
        return answer
    if answer.shape != mask.shape:
        if answer.shape == mask.shape[::-1]:
            return Feedback(MISTAKE, f"Transposed: shape {tuple(answer.shape)}; the position ids have the mask's shape, "
                                     f"{tuple(mask.shape)}, one row per sequence.")
        return Feedback(WRONG, f"Got {describe(answer)}; the position ids have the mask's shape, {tuple(mask.shape)}.")
    if answer.is_floating_point() and not bool((answer == answer.round()).all()):
        return Feedback(WRONG, "Positions are whole numbers; your answer has fractions.")
    if answer.dtype == torch.bool:
        return Feedback(WRONG, "Got a tensor of True/False: that is a mask. The position ids are whole numbers: each "
                               "real token's count of the real tokens before it in its row.")
    # Clamped: a float beyond int64 would wrap around to a negative number.
    given = answer.round().clamp(-2.0**62, 2.0**62).long() if answer.is_floating_point() else answer.long()

    def same_on_real(positions: torch.Tensor) -> bool:
        return bool(torch.equal(given[real], positions[real]))

    if same_on_real(expected):
        if bool((given[~real] < 0).any()):
            # cumsum - 1 is -1 before a row's first real token; a lookup table has no row -1.
            return Feedback(MISTAKE, "Right on the real tokens, but some pads hold negative positions (cumsum - 1, for "
                                     "example, gives -1 before the first real token). A learned table has no row -1: GPT-2's "
                                     "wpe raises IndexError. Give each pad a position the table has, such as 0, as transformers "
                                     "does before it generates.")
        if bool((given[~real] >= max_sequence_length).any()):
            beyond = int(given[~real].max())
            return Feedback(MISTAKE, f"Right on the real tokens, but a pad holds position {beyond:,}, past the tables' "
                                     f"{max_sequence_length} rows, 0 to {max_sequence_length - 1}: a learned table has "
                                     f"no row {beyond:,} (GPT-2's wpe raises IndexError past its rows). Any position "
                                     "the table has will do, since no real token reads a pad's; transformers puts 0.")
        if answer.is_floating_point():
            return Feedback(MISTAKE, f"The right numbers, but as {answer.dtype}: position ids index a table, so they "
                                     "must be integers (the decoder raises \"must be an integer tensor\", an embedding "
                                     "lookup refuses floats). Keep the mask's integer dtype, or convert with .long().")
        return Feedback(CORRECT, "Correct.")
    seq = mask.shape[1]
    naive = torch.arange(seq).expand_as(mask)
    mistakes = [
        ("Off by one: each row's first real token is at position 1. A running sum counts the real tokens up to and "
         "including this one, one more than the real tokens before it.", mask.cumsum(-1)),
        ("These are the slots of the tensor, 0 to seq - 1, as if there were no padding: a left-padded row's first "
         "real token then sits at the number of pads before it, not at 0. Count the real tokens before each one "
         "instead.", naive),
        ("Counted from the right: the last real token is at 0. Positions count from the first real token, "
         "left to right.", (mask.flip(-1).cumsum(-1) - 1).flip(-1)),
        ("The padding was counted too: a running sum over a tensor of ones numbers every slot. A pad must add "
         "nothing to the count.", torch.ones_like(mask).cumsum(-1) - 1),
    ]
    mistake = first_mistake(same_on_real, mistakes)
    if mistake:
        return mistake
    return Feedback(WRONG, f"Got {given.tolist()}; each row's real tokens should be numbered 0, 1, 2, ... from its "
                           "first real token.")


# Batches of the checker's own, (attention mask, prefill), so that a function that reads the notebook's variables
# instead of its argument cannot pass.
_STEP_CASES = ((torch.tensor([[0, 0, 0, 1, 1, 1, 1, 1], [0, 1, 1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1, 1, 1]]), 5),
               (torch.tensor([[0, 1, 1, 1, 1], [1, 1, 1, 1, 1]]), 2))


def _rows(positions: torch.Tensor) -> str:
    """The new tokens' positions, row by row, as feedback writes them."""
    return ", ".join(str(row) for row in positions.tolist())


def _read_step(result: object, batch: int, seen: int) -> tuple[torch.Tensor, bool] | Feedback:
    """One step's answer as `(batch,)` whole numbers and whether it was a float tensor, or the feedback on it. `seen`
    is the width of the mask the step was given."""
    value = as_tensor(result, f"the new token's position ids, a ({batch}, 1) tensor of whole numbers")
    if isinstance(value, Feedback):
        return value if value.status != NOT_ATTEMPTED else Feedback(WRONG, "Your function returned None: end it with "
                                                                           "return and the new token's position ids.")
    if value.dtype == torch.bool:
        return Feedback(WRONG, "Got a tensor of True/False: that is a mask. The new token's position id is a whole "
                               "number per row.")
    if tuple(value.shape) == (batch, seen) and seen > 1:
        return Feedback(MISTAKE, f"Got {describe(value)}: a position for every slot so far. The step feeds one token "
                                 f"per row, the last slot: keep only the last column, ({batch}, 1).")
    if tuple(value.shape) != (batch, 1):  # the loop passes it as position_ids, one column: a (batch,) one raises there
        return Feedback(WRONG, f"Got {describe(value)}; the step feeds one token per row: expected its position ids, "
                               f"({batch}, 1), as the loop passes them to the model.")
    if value.is_floating_point() and not bool((value == value.round()).all()):
        return Feedback(WRONG, f"Got {value.flatten().tolist()}: positions are whole numbers, yours have fractions.")
    floating = value.is_floating_point()
    # Clamped: a float beyond int64 would wrap around to a negative number.
    return (value.round().clamp(-2.0**62, 2.0**62).long() if floating else value.long()).reshape(batch), floating


def _new_positions(answer: Callable, mask: torch.Tensor, prefill: int) -> tuple[torch.Tensor, bool] | Feedback:
    """The learner's positions for the new tokens, `(batch, seq - prefill)`, called as the loop calls it: at step t on
    the mask so far, slots 0 to t (and whether any step gave floats); or the feedback on the first step that went
    wrong."""
    batch, seq = mask.shape
    columns, floating = [], False
    for t in range(prefill, seq):
        so_far = mask[:, :t + 1]
        shown = f"my_new_position(mask_so_far) at step {t}, mask_so_far = {so_far.tolist()}"
        kind, result = run_learner(answer, so_far.clone())
        if kind == "raised":
            if refuses(result, answer, so_far):
                return Feedback(WRONG, f"Calling {shown} failed with {error_line(result)}: give the function one "
                                       "parameter, the attention mask so far.")
            return Feedback(WRONG, f"{shown} raised {error_line(result)}.")
        step = _read_step(result, batch, t + 1)
        if isinstance(step, Feedback):
            return Feedback(step.status, f"At step {t}: {step.message}")
        columns.append(step[0])
        floating = floating or step[1]
    return torch.stack(columns, dim=1), floating


def _judge_new_positions(given: torch.Tensor, mask: torch.Tensor, prefill: int) -> Feedback:
    """The verdict on the new tokens' positions `(batch, seq - prefill)` (a correct verdict's message is not shown)."""
    batch, seq = mask.shape
    expected = mask_position_ids(mask)[:, prefill:]
    if torch.equal(given, expected):
        return Feedback(CORRECT, "Correct.")
    slots = torch.arange(prefill, seq)[None, :].expand(batch, -1)
    pads = int((~mask.bool()).sum(dim=-1).max())
    mistakes = [
        (f"Every row's new tokens at the same positions, their slots in the cache, pads included, as the loop's bug "
         f"puts them (up to {pads} too far in a padded row; an unpadded row is right). A position counts only real "
         "tokens, so each row's new ones must carry on from its own.", slots),
        ("One too far in every row: that is the number of real tokens so far, the new one included. Positions start "
         "at 0, so the new token's is one less.", expected + 1),
        ("Every new token at position 0: the forgotten offset. Alone in its call, a new token is still not the first "
         "of its sequence.", torch.zeros_like(expected)),
        ("That counts the pads, not the real tokens. A position counts the real tokens before it.",
         slots + 1 - (expected + 1)),
    ]
    mistake = first_mistake(lambda value: torch.equal(given, value), mistakes)
    got = f" Got the new tokens at {_rows(given)}, row by row; expected {_rows(expected)}."
    if mistake:
        return Feedback(MISTAKE, mistake.message + got)
    return Feedback(WRONG, "Not the new token's position in its row run alone, pads left out." + got)


@exercise("a KV cache's positions in a left-padded batch")
def check_new_position(answer: object, *, attention_mask: torch.Tensor, prefill: int) -> Feedback:
    """A function `answer(mask_so_far)` that gives the token a decoding loop feeds at step t its position id,
    `(batch, 1)`, from the attention mask of slots 0 to t, `(batch, t + 1)`, the new token's included: its position in
    its row run alone.

    The checker steps the function as the exercise's loop does, for each token after the first `prefill` of the
    `(batch, seq)` attention_mask, on this batch and on batches of its own. Right: every new token at its position,
    `(batch, 1)` (a list of that shape too). The named mistakes: the exhibit's bug (slots), the count of real tokens
    without the 1 taken off, position 0, the count of pads, every slot's position instead of the last, and floats
    (tests/test_real_pipeline_notebook.py lists them).
    """
    mask = _check_attention_mask(attention_mask)
    batch, seq = mask.shape
    prefill = check_size("prefill", prefill, maximum=seq - 1)
    if not bool(mask[:, prefill:].all()):
        raise ValueError("attention_mask must mark every token after the prefill as real (left padding only)")
    if (not_a_function := as_function(
            answer, signature="my_new_position(mask_so_far)",
            when_a_tensor="The checker runs the loop itself, on this batch and on batches of its own: put your line in "
                          "def my_new_position(mask_so_far): and return the new token's position ids, (batch, 1).")):
        return not_a_function
    cases = [(mask, prefill), *((case.to(mask.dtype), start) for case, start in _STEP_CASES)]
    for case, start in cases:
        read = _new_positions(answer, case, start)
        feedback = read if isinstance(read, Feedback) else _judge_new_positions(read[0], case, start)
        if case is not mask and feedback.status != CORRECT:
            feedback = Feedback(feedback.status, f"On a batch of the checker's own (attention mask {case.tolist()}, "
                                                 f"the first {start} tokens in one call). {feedback.message}")
        if feedback.status == CORRECT and read[1]:
            feedback = Feedback(MISTAKE, "The right numbers, but as floats: position ids index a table, so they must "
                                         "be integers (the decoder raises \"must be an integer tensor\"). Keep the "
                                         "integer dtype of the mask, or convert with .long().")
        if feedback.status != CORRECT:
            return feedback
    pads = {b: int((mask[b] == 0).sum()) for b in range(mask.shape[0])}  # only in a row with pads do slot and position differ
    takes = {True: "pads take cache slots", False: "pad takes a cache slot"}
    rows = "".join(f" Row {b}'s {n} {takes[n > 1]}, so each new token's position is its slot minus {n}."
                   for b, n in pads.items() if n)
    return Feedback(CORRECT, f"Correct on this batch and on {len(_STEP_CASES)} of the checker's own.{rows} "
                             "generate gets the same numbers, since at each step it takes the row's last position id plus 1.")


# Keys of the checker's own, (n, d), so that scores typed for the notebook's cache cannot pass.
_KEY_CASES = ((3, 4), (7, 6))


@exercise("the keys a RoPE cache holds")
def check_cached_keys(answer: object, turn: object = None, *, keys: torch.Tensor) -> Feedback:
    """A function `answer(query, cached)`: one step of a RoPE decoding loop. `cached` is the list of `(1, d)` keys the
    loop has cached after step t's append, key j turned at offset j (`schemes.apply_rotary`, interleaved pairs);
    `query` is query t, `(1, d)`, not turned. Right is query t's scores against keys 0 to t as the full pass gives
    them, `(1, t + 1)` (a `(t + 1,)` tensor too; a `(t + 1, 1)` column is refused). It is run on the cache of the raw
    keys `(n, d)` and on caches of the checker's own, each with a query of the checker's own.

    Named mistakes: the exhibit's bug (keys turned again when read), the query turned by the wrong position or
    in the wrong layout, and the scores divided by √d (tests/test_real_pipeline_notebook.py lists them).

    `turn`, judged first: in the exhibit's loop, by which position is key 3 turned when step 5 reads it? A whole
    number in any form (an int, a whole float, its string, a one-element tensor).
    """
    scores_feedback = _check_step_scores(answer, keys=keys)  # first: a bad exercise (keys) raises, whatever the turn
    said = _judge_turn(turn)
    if said is not None and said.status != CORRECT:
        return said
    if scores_feedback.status != CORRECT:
        return scores_feedback
    if said is None:
        return Feedback(NOT_ATTEMPTED, "Your my_step_scores is right. Not attempted yet: my_turn (replace None with the "
                                       "position by which key 3 is turned when step 5 of the loop above reads it).")
    return Feedback(CORRECT, f"{scores_feedback.message} And my_turn = {_TURN} is right. {said.message}")


_KEY, _STEP, _TURN = 3, 5, 6  # the exhibit turns key j by j when it caches it, and by j again when it reads it


def _judge_turn(turn: object) -> Feedback | None:
    """The verdict on my_turn (None while it is still None); a CORRECT one carries the message the checker ends with."""
    if turn is None:
        return None
    text = turn.strip() if isinstance(turn, str) else None
    value = as_number(float(text) if text and re.fullmatch(r"[+-]?\d+(\.\d*)?", text) else turn)
    if value is None or not math.isfinite(value):
        return Feedback(WRONG, f"my_turn: expected a whole number, a position; got {short(turn)}.")
    if value == _TURN:
        return Feedback(CORRECT, f"Query {_STEP} then sees key {_KEY} at offset {_TURN} - {_STEP} = {_TURN - _STEP} "
                                 f"instead of {_KEY} - {_STEP} = {_KEY - _STEP}: ahead of it, not {_STEP - _KEY} back.")
    # A wrong turn gets the rule, not the number: a second try would otherwise copy it (this is no prediction).
    named = {_KEY: f"my_turn = {_KEY} is the turn key {_KEY} gets when it is cached, once. Reading it turns it again.",
             _KEY + _STEP: f"my_turn = {_KEY + _STEP} adds the step, {_STEP}. apply_rotary with no offset turns row "
                           f"p by p, and key {_KEY} is row {_KEY}.",
             _STEP: f"my_turn = {_STEP} is the query's position, the step. The key keeps its own turns."}
    if value in named:
        return Feedback(MISTAKE, f"{named[value]} Expected the sum of every turn it has when step {_STEP} reads it.")
    return Feedback(WRONG, f"my_turn = {short(turn)}; expected the sum of every turn key {_KEY} has when step {_STEP} reads "
                           "it. Count them: once when it is cached, and again when the loop turns the keys it reads.")


def _check_step_scores(answer: object, *, keys: torch.Tensor) -> Feedback:
    """check_cached_keys without the turn: the verdict on the function `answer(query, cached)`."""
    raw = check_floating_tensor("keys", keys, ndim=(2,)).detach()
    n, d = raw.shape
    if n == 0 or d == 0 or d % 2 or n > 4096:
        raise ValueError(f"keys must be (n, d) with 1 <= n <= 4096 and d even, got shape {tuple(raw.shape)}")
    if not bool(torch.isfinite(raw).all()):
        raise ValueError("keys must hold finite numbers")
    if (not_a_function := as_function(
            answer, signature="my_step_scores(query, cached)",
            when_a_tensor="The checker tries caches of its own: put your two lines in def my_step_scores(query, "
                          "cached): and return the scores.")):
        return not_a_function
    generator = torch.Generator().manual_seed(0)
    cases = [raw, *(torch.randn(size, generator=generator, dtype=raw.dtype) for size in _KEY_CASES)]
    for case in cases:
        query = torch.randn(1, case.shape[1], generator=generator, dtype=raw.dtype)
        cached = [apply_rotary(case[j:j + 1], offset=j) for j in range(case.shape[0])]
        kind, result = run_learner(answer, query.clone(), [key.clone() for key in cached])
        shown = f"my_step_scores(query {case.shape[0] - 1}, a cache of {case.shape[0]} keys of width {case.shape[1]})"
        if kind == "raised":
            return Feedback(WRONG, f"{shown} raised {error_line(result)}.")
        feedback = _judge_step_scores(result, query, case)
        if feedback.status != CORRECT:
            return feedback if case is raw else Feedback(feedback.status, f"For {shown}: {feedback.message}")
    return Feedback(CORRECT, f"Correct on the loop's keys and on {len(_KEY_CASES)} caches of the checker's own. "
                             "transformers caches turned keys too.")


def _judge_step_scores(answer: object, query: torch.Tensor, raw: torch.Tensor) -> Feedback:
    """The verdict on the scores one call returned for query `query` (not turned) and the cache of the raw keys
    `(n, d)` (a correct one's message is not shown)."""
    raw, query = raw.double(), query.double()
    n, d = raw.shape
    t, keys = n - 1, apply_rotary(raw)  # each key as the loop cached it, turned once by its position

    def scores(query_turned_by: int, read: torch.Tensor = keys, layout: str = "interleaved") -> torch.Tensor:
        return apply_rotary(query, offset=query_turned_by, layout=layout) @ read.T

    given, answer = answer, as_tensor(answer, f"query {t}'s {n} scores, a (1, {n}) tensor")
    if isinstance(answer, Feedback):
        return answer if answer.status != NOT_ATTEMPTED else Feedback(WRONG, "Your function returned None: end it "
                                                                              "with return and the scores.")
    if answer.numel() != n or answer.ndim > 2 or (answer.ndim == 2 and answer.shape[0] != 1):
        got = (f"a {type(given).__name__} of {len(given)} tensors, not one tensor"
               if isinstance(given, (list, tuple)) and answer.ndim == 3 else describe(answer))
        return Feedback(WRONG, f"Got {got}; expected query {t}'s scores against the {n} cached keys, one (1, {n}) "
                               "tensor, key j in column j.")
    answer = answer.double().reshape(1, n)

    def same(value: torch.Tensor) -> bool:
        return close(answer, value)

    if same(scores(t)):
        return Feedback(CORRECT, "Correct.")
    mistakes = [
        ("This is the bug: every key turned twice, once when cached and once when read. Turns add up, so key j sits "
         f"at position 2j, and its score with query {t} depends on 2j - {t}, not j - {t}. Only key 0 (turned by 0) "
         "comes out right. The cache already holds each key turned once.", lambda: scores(t, apply_rotary(keys))),
        (f"The query is not turned. Key j carries the turn of its position j, so query {t} needs the turn of its own "
         f"position, {t}: then each score depends on j - {t}.", lambda: query.double() @ keys.T),
        (f"The query turned by position {n}, len(cached). The cache already holds the new key, so query {t} sits at "
         "len(cached) - 1.", lambda: scores(n)),
        ("The query turned in the half-split layout, pairs (i, i + d/2), while the cached keys turn interleaved pairs "
         "(2i, 2i + 1): queries and keys must share one layout.", lambda: scores(t, layout="half_split")),
        (f"These are the right scores divided by √d = √{d}, as attention scales them. The loop's scores, and the full "
         "pass's, are plain dot products: drop the division.", lambda: scores(t) / math.sqrt(d)),
    ]
    mistake = first_mistake(same, mistakes)
    if mistake:
        return mistake
    for position in range(1, 2 * n + 1):
        if same(scores(position)):
            return Feedback(MISTAKE, f"The query turned by position {position}. Query {t} is the newest token, so it "
                                     "sits at len(cached) - 1, and each cached key stays at its own position.")
    return Feedback(WRONG, f"Not query {t}'s scores: the query turned by its position, len(cached) - 1, then multiplied "
                           "by each cached key as it is, key j in column j.")
