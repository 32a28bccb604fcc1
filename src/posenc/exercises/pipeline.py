"""Checkers for a real pipeline: the position ids of a left-padded batch, a decoding loop's logits with a KV
cache, and the keys a RoPE cache holds."""

from __future__ import annotations

from collections.abc import Callable

import torch

from .._checks import check_floating_tensor, check_size, check_tensor, short
from .._provenance import calls_any, made_by
from ..models.decoder import TinyDecoder, decode_with_cache
from ..positions import check_attention_mask
from ..positions import position_ids as mask_position_ids
from ..schemes import apply_rotary, rotary_angles, rotate_pairs
from .batching import _run
from .feedback import (
    CORRECT,
    MISTAKE,
    NOT_ATTEMPTED,
    WRONG,
    Feedback,
    as_function,
    as_tensor,
    close,
    describe,
    error_line,
    exercise,
    first_mistake,
    not_attempted,
)

__all__ = ["check_position_ids", "check_cached_logits", "check_cached_keys"]


def _check_attention_mask(attention_mask: object) -> torch.Tensor:
    """The exercise's (batch, seq) 0/1 mask, as a LongTensor (a bad one is the notebook's bug: it raises)."""
    mask = check_attention_mask(attention_mask).cpu()
    if not bool(mask.any(dim=-1).all()):
        raise ValueError("attention_mask must have at least one real token in every row")
    return mask


# Masks of the checker's own, so that ids typed for the notebook's batch cannot pass.
_POSITION_CASES = (torch.tensor([[0, 0, 0, 1, 1], [0, 1, 1, 1, 1], [1, 1, 1, 1, 1]]), torch.tensor([[0, 1, 1], [1, 1, 1]]))


@exercise("position ids of a left-padded batch")
def check_position_ids(answer: object, *, attention_mask: torch.Tensor, max_sequence_length: int = 64) -> Feedback:
    """A function `answer(attention_mask)` that returns each real token's position among the real tokens of its row
    (the first real token at 0), as integers. It is run on `attention_mask` and on masks of the checker's own.

    A pad's position is never read (no query looks at a pad, and a pad's output is thrown away), so a pad may hold
    any position the tables have a row for, 0 to max_sequence_length - 1 (the real-pipeline tables: TinyDecoder's, the
    Llama's max_position_embeddings and GPT-2's n_positions, 64 each). transformers 5.23 puts 0 there
    (generation/utils.py, `_prepare_position_ids_for_generation`, `masked_fill(attention_mask == 0, 0)`); some of its
    models put 1. A negative one, or one past the table, is a named mistake: the lookup raises. Float ids are a
    mistake too: the decoder raises "must be an integer tensor". A function that calls the package's
    positions.position_ids is named: the exercise writes the ids by hand.
    """
    max_sequence_length = check_size("max_sequence_length", max_sequence_length, maximum=2**40)
    mask = _check_attention_mask(attention_mask)
    if answer is None:
        return not_attempted("your function my_position_ids(attention_mask)")
    if (not_a_function := as_function(
            answer, signature="my_position_ids(attention_mask)",
            when_a_tensor="The checker tries masks of its own: put your line in def my_position_ids(attention_mask): "
                          "and return the ids.")):
        return not_a_function
    cases = [mask, *_POSITION_CASES]
    for case in cases:
        shown = f"my_position_ids({case.tolist()})"
        kind, result = _run(answer, case.clone())
        if kind == "raised":
            if isinstance(result, TypeError) and "argument" in str(result):
                return Feedback(WRONG, f"Calling {shown} failed with {error_line(result)}: give the function one "
                                       "parameter, the attention mask.")
            return Feedback(WRONG, f"{shown} raised {error_line(result)}.")
        if result is None:
            return Feedback(WRONG, f"{shown} returned None: end the function with return and the ids.")
        feedback = _judge_position_ids(result, case, max_sequence_length)
        if feedback.status != CORRECT:
            return feedback if case is mask else Feedback(feedback.status, f"For {shown}: {feedback.message}")
    if calls_any(lambda: [_run(answer, case.clone()) for case in cases], [mask_position_ids]):
        return Feedback(MISTAKE, "Right ids, but through the package's own positions.position_ids. The exercise asks "
                                 "you to write them from attention_mask yourself, with a running sum along each row.")
    real = mask.bool()
    given = mask_position_ids(mask)
    rows = ", ".join(str(given[b][real[b]].tolist()) for b in range(mask.shape[0]))
    return Feedback(CORRECT, f"Correct on the batch and on {len(_POSITION_CASES)} masks of the checker's own: the "
                             f"batch's real tokens at {rows}, as each row alone (the pads need only a valid position: "
                             "no real token looks at them).")


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
        return Feedback(WRONG, "Got a tensor of True/False: that is a mask. The position ids count the real tokens: "
                               "integers, attention_mask.cumsum(-1) - 1.")
    # Clamped: a float beyond int64 would wrap around to a negative number.
    given = answer.round().clamp(-2.0**62, 2.0**62).long() if answer.is_floating_point() else answer.long()

    def same_on_real(positions: torch.Tensor) -> bool:
        return bool(torch.equal(given[real], positions[real]))

    if same_on_real(expected):
        if bool((given[~real] < 0).any()):
            # cumsum - 1 is -1 before a row's first real token; a lookup table has no row -1.
            return Feedback(MISTAKE, "Right on the real tokens, but the pads hold negative positions (cumsum - 1 is -1 "
                                     "before the first real token). A learned table has no row -1: GPT-2's wpe raises "
                                     "IndexError. Give the pads a valid position: .masked_fill(attention_mask == 0, 0), "
                                     "as transformers does before it generates.")
        if bool((given[~real] >= max_sequence_length).any()):
            beyond = int(given[~real].max())
            return Feedback(MISTAKE, f"Right on the real tokens, but a pad holds position {beyond:,}, past the tables' "
                                     f"{max_sequence_length} rows, 0 to {max_sequence_length - 1}: a learned table has "
                                     f"no row {beyond:,} (GPT-2's wpe raises IndexError past its rows). Any position "
                                     "the table has will do, since no real token reads a pad's; transformers puts 0: "
                                     ".masked_fill(attention_mask == 0, 0).")
        if answer.is_floating_point():
            return Feedback(MISTAKE, f"The right numbers, but as {answer.dtype}: position ids index a table, so they "
                                     "must be integers (the decoder raises \"must be an integer tensor\", an embedding "
                                     "lookup refuses floats). Keep the mask's integer dtype, or convert with .long().")
        return Feedback(CORRECT, "Correct.")
    seq = mask.shape[1]
    naive = torch.arange(seq).expand_as(mask)
    mistakes = [
        ("Off by one: each row's first real token is at position 1. cumsum counts the real tokens up to and including "
         "this one, so subtract 1: attention_mask.cumsum(-1) - 1.", mask.cumsum(-1)),
        ("These are the slots of the tensor, 0 to seq - 1, as if there were no padding: a left-padded row's first "
         "real token then sits at the number of pads before it, not at 0. Count the real tokens instead: "
         "attention_mask.cumsum(-1) - 1.", naive),
        ("Counted from the right: the last real token is at 0. Positions count from the first real token, "
         "left to right: attention_mask.cumsum(-1) - 1.", (mask.flip(-1).cumsum(-1) - 1).flip(-1)),
        ("The padding was counted too: cumsum of a tensor of ones numbers every slot. Take the cumsum of the mask "
         "itself, so that pads add nothing.", torch.ones_like(mask).cumsum(-1) - 1),
    ]
    mistake = first_mistake(same_on_real, mistakes)
    if mistake:
        return mistake
    return Feedback(WRONG, f"Got {given.tolist()}; each row's real tokens should be numbered 0, 1, 2, ... from its "
                           "first real token.")


@exercise("a KV cache's positions in a left-padded batch")
def check_cached_logits(answer: object, *, model: object, ids: torch.Tensor, attention_mask: torch.Tensor,
                        prefill: int) -> Feedback:
    """The logits of a decoding loop with a cache: the first `prefill` tokens of ids `(batch, seq)` in one call, then
    one token per call, each at its position among the real tokens (`models.decoder.TinyDecoder`).

    Right: the full pass's logits on the real tokens (within 1e-5), with the position ids of the attention mask.
    The named mistakes are loops that feed the new tokens other positions: the cache's slots, pads included (the
    exhibit's bug), position 0 (the forgotten offset), the prompt's length every step (an offset not advanced), or
    one too many.
    """
    if not isinstance(model, TinyDecoder):
        raise TypeError(f"model must be a posenc.models.decoder.TinyDecoder, got {short(model)}")
    if not bool(((check_tensor("ids", ids, ndim=(2,), kind="integer") >= 0) & (ids < model.vocab_size)).all()):
        raise ValueError(f"ids must lie in [0, vocab_size={model.vocab_size})")
    mask = _check_attention_mask(attention_mask)
    batch, seq = ids.shape
    if mask.shape != (batch, seq):
        raise ValueError(f"attention_mask must have the shape of ids, {(batch, seq)}, got {tuple(mask.shape)}")
    prefill = check_size("prefill", prefill, maximum=seq - 1)
    if not bool(mask[:, prefill:].all()):
        raise ValueError("attention_mask must mark every token after the prefill as real (left padding only)")
    real = mask.bool()
    right = mask_position_ids(mask)
    expected_shape = (batch, seq, model.vocab_size)
    if made_by(answer) == "decoder.decode_with_cache":
        return Feedback(MISTAKE, "These are the logits of the package's own decoder.decode_with_cache, which runs the "
                                 "loop for you. The exercise asks you to fix the loop above: copy it, and change the "
                                 "position it gives each new token.")
    answer = as_tensor(answer, f"the logits of your loop, a {expected_shape} tensor")
    if isinstance(answer, Feedback):
        return answer
    if tuple(answer.shape) != expected_shape:
        if answer.dim() == 3 and answer.shape[0] == batch and answer.shape[2] == model.vocab_size:
            return Feedback(WRONG, f"Got logits for {answer.shape[1]} tokens; the loop gives one row per token of "
                                   f"ids, {seq}: the prompt's {prefill}, then each new token's. Concatenate them "
                                   "along dim=1.")
        return Feedback(WRONG, f"Got {describe(answer)}; expected the logits, {expected_shape}.")

    with torch.no_grad():
        def logits(positions: torch.Tensor) -> torch.Tensor:
            return decode_with_cache(model, ids, attention_mask=mask, prefill=prefill, position_ids=positions)

        def same(result: torch.Tensor) -> bool:
            return close(answer[real], result[real], atol=1e-5)

        full = model(ids, attention_mask=mask, position_ids=right).logits
        if same(full):
            # The loop's logits equal the full pass's within 1e-5, not bit for bit: the new tokens' rows of one full
            # pass, bit for bit (in float32, or widened to float64), were not computed one token per call.
            looped = logits(right)
            new_rows = answer[:, prefill:].double()
            if torch.equal(new_rows, full[:, prefill:].double()) and not torch.equal(new_rows, looped[:, prefill:].double()):
                return Feedback(MISTAKE, "These are the logits of one full pass, bit for bit "
                                         "model(ids, attention_mask=..., position_ids=...), not of a loop with a cache "
                                         "(its logits agree with the full pass within 1e-5, not in every bit). Write the "
                                         f"loop: the prompt's {prefill} tokens in one call, then one token per call, "
                                         "each passing the cache of the call before and its position among the real "
                                         "tokens.")
            new = ", ".join(str(right[b, prefill:].tolist()) for b in range(batch))
            return Feedback(CORRECT, f"Correct: the logits of the full pass. Each new token at the number of real "
                                     f"tokens before it ({new}, row by row): the cache's length minus the row's pads.")

        def after_prefill(new: torch.Tensor) -> Callable[[], torch.Tensor]:
            return lambda: logits(torch.cat([right[:, :prefill], new.expand(batch, seq - prefill)], dim=1))

        steps = torch.arange(prefill, seq)[None, :]
        pads = int((~real).sum(dim=-1).max())
        mistakes = [
            (f"This is the bug: each new token at the cache's length, its slots, pads included (up to {pads} too "
             "far in a padded row; the unpadded row is right). The positions the prompt got count only real tokens, "
             "so the new ones must too: the number of real tokens cached, attention_mask.sum(-1) before the new "
             "token.", after_prefill(steps)),
            ("Every new token at position 0: the forgotten offset. Alone in its call, a new token is still not the "
             "first of its sequence: its position is the number of real tokens before it.",
             after_prefill(torch.zeros(1, 1, dtype=torch.long))),
            ("The offset was not advanced: every new token at the position of the first new one. Count the real "
             "tokens cached again at every step (or add 1 after each).",
             after_prefill(mask[:, :prefill].sum(dim=-1, keepdim=True))),
            ("Off by one: each new token one position too far. attention_mask.sum(-1) counts the new token too once "
             "it is appended: subtract 1, or count before appending.", after_prefill(right[:, prefill:] + 1)),
        ]
        mistake = first_mistake(same, mistakes)
    if mistake:
        return mistake
    return Feedback(WRONG, "Not the full pass's logits: the prompt in one call with the position ids of its mask, then "
                           "each new token at the number of real tokens before it, reading the cache.")


# Keys of the checker's own, (n, d), so that keys typed for the notebook's cache cannot pass.
_KEY_CASES = ((3, 4), (7, 6))


@exercise("the keys a RoPE cache holds")
def check_cached_keys(answer: object, *, keys: torch.Tensor) -> Feedback:
    """A function `answer(cached)` that returns the keys a step of a RoPE decoding loop reads from its cache, a list
    of `(1, d)` keys, key j already turned by position j (`schemes.apply_rotary`, interleaved pairs). It is run on the
    cache of the raw keys `(n, d)` and on caches of the checker's own; right is key j turned once, `(n, d)`.

    Named mistakes: each key turned twice (once when cached, again when read: the exhibit's bug), never turned,
    every key turned by the newest position, all of them shifted by the same number, or the half-split layout
    against interleaved queries. A function that turns keys with schemes.apply_rotary or rotate_pairs is named too:
    the keys are read as they are.
    """
    raw = check_floating_tensor("keys", keys, ndim=(2,)).detach()
    n, d = raw.shape
    if n == 0 or d == 0 or d % 2 or n > 4096:
        raise ValueError(f"keys must be (n, d) with 1 <= n <= 4096 and d even, got shape {tuple(raw.shape)}")
    if not bool(torch.isfinite(raw).all()):
        raise ValueError("keys must hold finite numbers")
    if answer is None:
        return not_attempted("your function my_read_cache(cached)")
    if (not_a_function := as_function(
            answer, signature="my_read_cache(cached)",
            when_a_tensor="The checker tries caches of its own: put your line in def my_read_cache(cached): and "
                          "return the keys.")):
        return not_a_function
    generator = torch.Generator().manual_seed(0)
    cases = [raw, *(torch.randn(size, generator=generator, dtype=raw.dtype) for size in _KEY_CASES)]

    def cache(case: torch.Tensor) -> list[torch.Tensor]:
        return [apply_rotary(case[j:j + 1], offset=j) for j in range(case.shape[0])]

    caches = [cache(case) for case in cases]
    for case, cached in zip(cases, caches):
        kind, result = _run(answer, [key.clone() for key in cached])
        shown = f"my_read_cache(a cache of {case.shape[0]} keys of width {case.shape[1]})"
        if kind == "raised":
            return Feedback(WRONG, f"{shown} raised {error_line(result)}.")
        feedback = _judge_cached_keys(result, case)
        if feedback.status != CORRECT:
            return feedback if case is raw else Feedback(feedback.status, f"For {shown}: {feedback.message}")
    if calls_any(lambda: [_run(answer, [key.clone() for key in cached]) for cached in caches],
                 [apply_rotary, rotate_pairs]):
        return Feedback(MISTAKE, "The right keys, but your function turns keys with schemes.apply_rotary or "
                                 "rotate_pairs. The cache already holds each key turned by its position: read the "
                                 "keys as they are, with no new turn.")
    return Feedback(CORRECT, f"Correct on this cache and on {len(_KEY_CASES)} of the checker's own: key j turned "
                             "once, by position j. The cache holds keys already turned; reading them is taking them "
                             "as they are.")


def _judge_cached_keys(answer: object, raw: torch.Tensor) -> Feedback:
    """The verdict on the keys one call returned for the cache of the raw keys `(n, d)` (a correct one's message is
    not shown)."""
    raw = raw.double()
    n, d = raw.shape
    expected = apply_rotary(raw)
    answer = as_tensor(answer, f"the {n} keys the step reads, a ({n}, {d}) tensor")
    if isinstance(answer, Feedback):
        return answer if answer.status != NOT_ATTEMPTED else Feedback(WRONG, "Your function returned None: end it "
                                                                              "with return and the keys.")
    if tuple(answer.shape) != (n, d):
        return Feedback(WRONG, f"Got {describe(answer)}; expected the {n} cached keys, ({n}, {d}), key j in row j.")
    answer = answer.double()

    def same(value: torch.Tensor) -> bool:
        return close(answer, value)

    if same(expected):
        return Feedback(CORRECT, "Correct.")
    newest = rotary_angles(max_sequence_length=n, d=d)[-1]
    mistakes = [
        ("This is the bug: every key turned twice, once when cached and once when read. Turns add up, so key j sits at "
         "position 2j and the score of query i with it depends on i - 2j, not i - j: only key 0 (turned by 0) comes "
         "out right. Turn each key once.", lambda: apply_rotary(expected)),
        ("Never turned: the raw keys. The score of query i with key j must depend on i - j, so the key is turned by "
         "its position as the query is by its own.", raw),
        (f"Every key turned by the newest position, {n - 1}: key j belongs at position j, where it was when it was "
         "cached.", lambda: rotate_pairs(raw, newest)),
        ("The half-split layout, pairs (i, i + d/2), while the queries turn interleaved pairs (2i, 2i + 1): queries and "
         "keys must share one layout.", lambda: apply_rotary(raw, layout="half_split")),
    ]
    mistake = first_mistake(same, mistakes)
    if mistake:
        return mistake
    for shift in range(1, 2 * n + 1):
        if same(apply_rotary(raw, offset=shift)):
            return Feedback(MISTAKE, f"Every key shifted by {shift}: key j turned by position j + {shift}. The queries "
                                     "are not shifted, so every score sees the wrong offset: key j at position j.")
    return Feedback(WRONG, "Not the keys the loop should read: key j turned once by position j, "
                           "schemes.apply_rotary(raw keys).")
