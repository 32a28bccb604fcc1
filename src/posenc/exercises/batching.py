"""Checkers for batches: a batch fed to a module built for (seq, batch, d_model), the mask of a packed row, the
position ids of a left-padded batch, a decoding loop's logits with a KV cache, and the keys a RoPE cache holds."""

from __future__ import annotations

import copy
from collections.abc import Callable

import torch

from .._checks import check_floating_tensor, check_size, check_tensor, short
from .._provenance import calls_any, made_by
from ..attention import document_ids_from_lengths, packed_mask
from ..models.decoder import TinyDecoder, decode_with_cache
from ..positions import check_attention_mask
from ..positions import position_ids as mask_position_ids
from ..schemes import apply_rotary, rotary_angles, rotate_pairs
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

__all__ = ["check_batch_first", "check_document_mask", "check_position_ids", "check_cached_logits", "check_cached_keys"]


@exercise("a batch-first batch through a sequence-first module")
def check_batch_first(answer: object, *, module: torch.nn.MultiheadAttention, x: torch.Tensor) -> Feedback:
    """The output of `module` (an `nn.MultiheadAttention`) on the batch-first `x`, `(batch, seq, d_model)`, read as
    a batch of sequences: self-attention within each sequence, one output row per token, in `x`'s layout.

    Right whichever way it was fixed: the input transposed to (seq, batch, d_model) and the output back, or the module
    set to batch_first=True. The bug itself (x fed as it is to a module with batch_first=False, which reads it as
    (seq, batch, d_model) and mixes the sequences at each position) is a named mistake, and so are its half-fixes.
    """
    if not isinstance(module, torch.nn.MultiheadAttention):
        raise TypeError(f"module must be a torch.nn.MultiheadAttention, got {short(module)}")
    if not module._qkv_same_embed_dim:
        raise ValueError("module must have kdim = vdim = embed_dim (one input for queries, keys and values)")
    check_floating_tensor("x", x, ndim=(3,))
    if x.shape[-1] != module.embed_dim or not x.numel():
        raise ValueError(f"x must be a non-empty (batch, seq, {module.embed_dim}) tensor for a module of embed_dim "
                         f"{module.embed_dim}, got shape {tuple(x.shape)}")
    # A copy read as (seq, batch, d_model) whatever the learner set on the module, without dropout.
    reference = copy.deepcopy(module).eval()
    reference.batch_first = False
    x = x.detach().to(reference.in_proj_weight.dtype)
    with torch.no_grad():
        seq_first = x.transpose(0, 1)
        expected = reference(seq_first, seq_first, seq_first, need_weights=False)[0].transpose(0, 1)
        mixed = reference(x, x, x, need_weights=False)[0]  # the bug: the batch read as the sequence
    batch, seq = x.shape[0], x.shape[1]
    pair = ""
    if isinstance(answer, (tuple, list)) and len(answer) == 2 and isinstance(answer[0], torch.Tensor):
        answer, pair = answer[0], " (the module returns (output, weights): the output is the first)"
    answer = as_tensor(answer, f"the output, a ({batch}, {seq}, {x.shape[-1]}) tensor")
    if isinstance(answer, Feedback):
        return answer
    if close(answer, expected, atol=1e-5):
        return Feedback(CORRECT, f"Correct: shape {tuple(expected.shape)}; each of the {batch} sequences attends "
                                 f"within itself, over its {seq} tokens{pair}. The module reads (seq, batch, d_model) "
                                 "unless it is built with batch_first=True.")
    if close(answer, mixed, atol=1e-5):
        return Feedback(MISTAKE, f"That is the bug's output: with batch_first=False the module reads ({batch}, {seq}, "
                                 f"d_model) as {batch} positions of a batch of {seq}, so token t of each sequence "
                                 "attends to token t of every sequence, and to no other token of its own. Transpose "
                                 "the input to (seq, batch, d_model) and the output back, or set batch_first=True.")
    mistakes = [
        (f"The right numbers in the module's layout, (seq, batch, d_model) = ({seq}, {batch}, {x.shape[-1]}): turn "
         "the output back with .transpose(0, 1), to one row per sequence as in x.", expected.transpose(0, 1)),
        ("Only the output was transposed: the module still read the sequences as positions and mixed them. "
         "Transpose the input too, before the module.", mixed.transpose(0, 1)),
        ("That is x itself, not the module's output.", x),
        (f"The output was reshaped to ({batch}, {seq}, {x.shape[-1]}) instead of transposed back: .reshape (or "
         ".view) keeps the numbers in their memory order, so each row of the result mixes the sequences. Turn the "
         "module's (seq, batch, d_model) output back with .transpose(0, 1).",
         expected.transpose(0, 1).contiguous().reshape(batch, seq, -1)),
        ("The input was reshaped to (seq, batch, d_model) instead of transposed: .reshape (or .view) keeps the numbers "
         "in their memory order, so the module read a mixture of the sequences. Use .transpose(0, 1) on the input, "
         "and on the output.", lambda: _reshaped_in(reference, x)),
        ("The module read x as it is, (batch, seq, d_model) taken for (seq, batch, d_model), and its output was then "
         "transposed and reshaped: a reshape keeps the numbers in their memory order, so the sequences stay mixed. "
         "Transpose the input to (seq, batch, d_model) before the module, and the output back with .transpose(0, 1).",
         mixed.transpose(0, 1).contiguous().reshape(batch, seq, -1)),
    ]
    mistake = first_mistake(lambda wrong: close(answer, wrong, atol=1e-5), mistakes)
    if mistake:
        return mistake
    if tuple(answer.shape) == tuple(expected.shape):
        return Feedback(WRONG, f"The right shape, {tuple(expected.shape)}, but other numbers. Run this module (a new "
                               "one draws new random weights) on its input transposed with .transpose(0, 1) (and the "
                               "output back the same way), or with batch_first=True set on it.")
    return Feedback(WRONG, f"Got {describe(answer)}; expected the module's output on x, shape {tuple(expected.shape)}, "
                           "each sequence attending within itself.")


def _reshaped_in(reference: torch.nn.MultiheadAttention, x: torch.Tensor) -> torch.Tensor:
    """The module on x reshaped (not transposed) to (seq, batch, d_model), its output transposed back."""
    batch, seq, d = x.shape
    mixed = x.reshape(seq, batch, d)
    with torch.no_grad():
        return reference(mixed, mixed, mixed, need_weights=False)[0].transpose(0, 1)


# The lengths a document-mask function is tried on, none of them the notebook's: a one-token document, a single
# document, four documents.
_DOCUMENT_CASES = ([3, 2, 4], [1, 4, 2], [5], [2, 1, 3, 2])


def _document_mask(lengths: list[int]) -> torch.Tensor:
    """True where query r may look at key c: same document, c <= r."""
    document = torch.repeat_interleave(torch.arange(len(lengths)), torch.tensor(lengths))
    return (document[:, None] == document[None, :]) & torch.ones(len(document), len(document), dtype=torch.bool).tril()


def _run(function: Callable, argument: object) -> tuple[str, object]:
    """Call the learner's function on `argument`: ("returned", result) or ("raised", the error)."""
    try:
        return "returned", function(argument)
    except (Exception, SystemExit) as error:  # the learner's code: whatever it raises is part of the answer
        return "raised", error


def _run_document_mask(function: Callable, lengths: list[int]) -> tuple[str, object]:
    """Call the learner's function on a copy of `lengths`."""
    return _run(function, list(lengths))


@exercise("a mask for documents packed in one row")
def check_document_mask(answer: object) -> Feedback:
    """A function `answer(lengths)` that returns the `(n, n)` mask of documents of `lengths` packed in one row
    (n = sum(lengths)): True where query r may look at key c, i.e. both are in one document and c <= r.

    It is run on lengths of the checker's own, none of them the notebook's, so a mask built for the notebook cannot
    pass. A 0/1 mask of numbers is right too. Named: the causal mask alone (the bug), the blocks without the triangle,
    the mask inverted (nn.MultiheadAttention's convention), the diagonal hidden, the triangle the wrong way, no mask,
    and weights instead of a mask. A function that calls the package's packed_mask or document_ids_from_lengths is
    named: the exercise builds the mask by hand.
    """
    if answer is None:
        return not_attempted("your function my_document_mask(lengths)")
    if (not_a_function := as_function(
            answer, signature="my_document_mask(lengths)",
            when_a_tensor="The checker tries new lengths: put your lines in def my_document_mask(lengths): and "
                          "return the mask.")):
        return not_a_function
    for lengths in _DOCUMENT_CASES:
        kind, result = _run_document_mask(answer, lengths)
        if kind == "raised":
            if isinstance(result, TypeError) and "argument" in str(result):
                return Feedback(WRONG, f"Calling my_document_mask({lengths}) failed with {error_line(result)}: give "
                                       "the function one parameter, the list of lengths.")
            return Feedback(WRONG, f"my_document_mask({lengths}) raised {error_line(result)}.")
        n = sum(lengths)
        given = as_tensor(result, f"the mask, a ({n}, {n}) tensor")
        if isinstance(given, Feedback):
            return Feedback(WRONG, f"my_document_mask({lengths}) returned {describe(result)}; expected a ({n}, {n}) "
                                   "boolean tensor, True where a query may look.")
        if given.dim() > 2 and all(size == 1 for size in given.shape[:-2]):
            given = given.reshape(given.shape[-2:])
        if tuple(given.shape) != (n, n):
            return Feedback(WRONG, f"For lengths {lengths} ({n} tokens) it returned shape {tuple(given.shape)}, "
                                   f"expected ({n}, {n}): build the mask from the function's argument, not from the "
                                   "notebook's variables.")
        expected = _document_mask(lengths)
        if given.dtype != torch.bool and not bool(((given == 0) | (given == 1)).all()):
            return Feedback(MISTAKE, f"For lengths {lengths} it returned numbers other than 0 and 1, such as weights. "
                                     "Return the mask itself, True where a query may look.")
        given = given != 0
        if torch.equal(given, expected):
            continue
        causal = torch.ones(n, n, dtype=torch.bool).tril()
        same = expected | expected.T  # the document blocks, whole
        mistakes = [
            ("The causal mask alone, the bug itself: each token still sees the documents before its own. Keep a key "
             "only if it is in the query's document too: document[:, None] == document[None, :], and the causal mask.",
             causal),
            ("The document blocks without the causal triangle: each token sees the later tokens of its own document. "
             "A decoder hides the future inside each document too: and the blocks with the causal mask.", same),
            ("Inverted: True where a query may not look. That is nn.MultiheadAttention's convention; this suite's "
             "mask, like F.scaled_dot_product_attention's, is True where a query may look (06).", ~expected),
            ("The diagonal is hidden: a token may look at itself, and without it each document's first token sees "
             "nothing. Keep c <= r, torch.tril.", expected & ~torch.eye(n, dtype=torch.bool)),
            ("The triangle points the wrong way: each query sees the later tokens of its document, not the earlier "
             "ones. Keep c <= r, torch.tril (or the package's causal_mask).", expected.T),
            ("No mask: every entry is True. Keep the keys of the query's own document, up to the query.",
             torch.ones(n, n, dtype=torch.bool)),
        ]
        mistake = first_mistake(lambda wrong, given=given: torch.equal(given, wrong), mistakes)
        if mistake:
            return mistake
        r, c = (int(k) for k in (given != expected).nonzero()[0])
        return Feedback(WRONG, f"For lengths {lengths}: query {r}, key {c} is {bool(given[r, c])}, expected "
                               f"{bool(expected[r, c])}. A query may look at a key of its own document, at or before "
                               "itself.")
    if calls_any(lambda: [_run_document_mask(answer, lengths) for lengths in _DOCUMENT_CASES],
                 [packed_mask, document_ids_from_lengths]):
        return Feedback(MISTAKE, "Right masks, but through the package's packed_mask or document_ids_from_lengths. "
                                 "Build the mask with torch: number each token's document, compare the numbers, and "
                                 "combine with the causal mask.")
    tried = "; ".join(str(lengths) for lengths in _DOCUMENT_CASES)
    return Feedback(CORRECT, f"Correct on {len(_DOCUMENT_CASES)} new cases (lengths {tried}): each token sees its own "
                             "document's keys, up to itself, as if its document were alone in the row.")


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
