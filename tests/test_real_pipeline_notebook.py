"""Notebook 15's checkers and figures: every diagnosis fed the exact mistake, answers checked against transformers'
own position ids, and every figure readable (the checks of tests/test_figures.py)."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
import torch
from matplotlib.figure import Figure

from posenc import attention, exercises, plots, schemes, subwords
from posenc.models import decoder
from posenc.positions import position_ids
from test_figures import check_figure

LEFT_PADDED = torch.tensor([[0, 0, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1], [0, 0, 0, 0, 1, 1]])
LENGTHS = [2, 3, 1]


def status(feedback):
    assert isinstance(feedback, exercises.Feedback)
    return feedback.status


# check_position_ids ------------------------------------------------------------------------------------------------


def test_position_ids_from_the_mask_are_correct():
    def mine(mask):
        return (mask.cumsum(-1) - 1).masked_fill(mask == 0, 0)
    feedback = exercises.check_position_ids(mine, attention_mask=LEFT_PADDED)
    assert feedback.status == "correct" and "masks of the checker's own" in feedback.message, feedback.message


@pytest.mark.parametrize("answer", [position_ids, lambda mask: position_ids(mask) + 0,
                                    lambda mask: position_ids(mask).clone().long(),
                                    lambda mask: torch.stack([position_ids(row) for row in mask])])
def test_the_package_position_ids_are_refused_however_copied(answer):
    # The numbers are right, so only the call tells: the checker traces it, through + 0, a copy or a wrapper.
    feedback = exercises.check_position_ids(answer, attention_mask=LEFT_PADDED)
    assert feedback.status == "mistake" and "positions.position_ids" in feedback.message, feedback.message


def test_position_ids_typed_for_the_batch_or_a_tensor_are_refused():
    right = (LEFT_PADDED.cumsum(-1) - 1).masked_fill(LEFT_PADDED == 0, 0)
    feedback = exercises.check_position_ids(right, attention_mask=LEFT_PADDED)
    assert feedback.status == "wrong" and "def my_position_ids(attention_mask)" in feedback.message, feedback.message
    feedback = exercises.check_position_ids(lambda mask: right, attention_mask=LEFT_PADDED)  # the batch's, typed
    assert feedback.status == "wrong" and feedback.message.startswith("For my_position_ids("), feedback.message


def test_negative_positions_at_the_pads_are_a_named_mistake():
    # cumsum - 1 alone leaves -1 at the pads: a learned table (GPT-2's wpe) has no row -1.
    feedback = exercises.check_position_ids(lambda mask: mask.cumsum(-1) - 1, attention_mask=LEFT_PADDED)
    assert feedback.status == "mistake" and "a position the table has" in feedback.message, feedback.message
    assert "masked_fill" not in feedback.message  # the fix is named, not handed over as code
    # no pads, nothing negative: cumsum - 1 is right there
    full = torch.ones(2, 4, dtype=torch.long)
    assert exercises.pipeline._judge_position_ids(full.cumsum(-1) - 1, full, 64).status == "correct"


def test_position_ids_agree_with_transformers_generation():
    # The positions transformers computes before generating (transformers 5.23, generation/utils.py,
    # _prepare_position_ids_for_generation); it uses nothing of the model it is a method of.
    from transformers.generation.utils import GenerationMixin

    def theirs(mask):
        return GenerationMixin._prepare_position_ids_for_generation(None, mask, {"attention_mask": mask})
    assert torch.equal(theirs(LEFT_PADDED), position_ids(LEFT_PADDED))
    # Right numbers, but transformers' own: the exercise asks for them by hand, so the call is named.
    feedback = exercises.check_position_ids(theirs, attention_mask=LEFT_PADDED)
    assert feedback.status == "mistake" and "_prepare_position_ids_for_generation" in feedback.message, feedback.message


@pytest.mark.parametrize("answer, words", [
    (lambda mask: mask.cumsum(-1), "Off by one"),
    (lambda mask: torch.arange(mask.shape[1]).expand_as(mask), "slots of the tensor"),
    (lambda mask: (mask.flip(-1).cumsum(-1) - 1).flip(-1), "from the right"),
    (lambda mask: (mask.cumsum(-1) - 1).T, "Transposed"),
])
def test_position_ids_mistakes_are_named(answer, words):
    feedback = exercises.check_position_ids(answer, attention_mask=LEFT_PADDED)
    assert feedback.status == "mistake" and words in feedback.message, feedback.message
    # The mistake is named, but the answer's line is not handed over: a second try must not copy it.
    assert "cumsum(-1) - 1" not in feedback.message and "masked_fill" not in feedback.message, feedback.message


@pytest.mark.parametrize("pad", [3, 6, 63])
def test_any_valid_position_at_the_pads_is_accepted(pad):
    # A pad's position is never read: any row of notebook 15's tables (64 rows each) is right, 63 included.
    def mine(mask):
        return (mask.cumsum(-1) - 1).masked_fill(mask == 0, pad)
    assert status(exercises.check_position_ids(mine, attention_mask=LEFT_PADDED)) == "correct"
    assert status(exercises.check_position_ids(mine, attention_mask=LEFT_PADDED, max_sequence_length=64)) == "correct"
    with torch.no_grad():  # and the decoder runs on them
        decoder.TinyDecoder(scheme="learned", vocab_size=5)(torch.zeros(3, 6, dtype=torch.long),
                                                          attention_mask=LEFT_PADDED, position_ids=mine(LEFT_PADDED))


def test_float_position_ids_are_a_named_mistake():
    # The decoder raises "must be an integer tensor" on them.
    def right(mask):
        return (mask.cumsum(-1) - 1).masked_fill(mask == 0, 0)
    for dtype in (torch.double, torch.float):
        feedback = exercises.check_position_ids(lambda mask, dtype=dtype: right(mask).to(dtype),
                                                attention_mask=LEFT_PADDED)
        assert feedback.status == "mistake" and "must be integers" in feedback.message, feedback
    assert status(exercises.check_position_ids(lambda mask: right(mask).int(), attention_mask=LEFT_PADDED)) == "correct"
    with pytest.raises((TypeError, ValueError), match="integer"):
        decoder.TinyDecoder(scheme="learned", vocab_size=5)(torch.zeros(3, 6, dtype=torch.long),
                                                          attention_mask=LEFT_PADDED,
                                                          position_ids=right(LEFT_PADDED).double())


@pytest.mark.parametrize("pad", [64, 999, 1024, 10**12])
def test_a_pad_position_no_table_has_is_a_named_mistake(pad):
    # Notebook 15's tables have 64 rows, 0 to 63 (GPT-2's wpe raises IndexError past its rows).
    def mine(mask):
        return (mask.cumsum(-1) - 1).masked_fill(mask == 0, pad)
    for answer in (mine, lambda mask: mine(mask).double()):
        feedback = exercises.check_position_ids(answer, attention_mask=LEFT_PADDED)
        assert feedback.status == "mistake" and f"position {pad:,}" in feedback.message, feedback
        assert "0 to 63" in feedback.message and "transformers puts 0" in feedback.message
        assert "masked_fill" not in feedback.message
    feedback = exercises.check_position_ids(mine, attention_mask=LEFT_PADDED, max_sequence_length=2**40)
    assert feedback.status == "correct"


def test_the_pad_positions_real_libraries_use_are_accepted():
    # transformers 5.23 before generating: 0 (generation/utils.py); some of its models: 1 (masked_fill_(..., 1)).
    for pad in (0, 1):
        def mine(mask, pad=pad):
            return (mask.cumsum(-1) - 1).masked_fill(mask == 0, pad)
        assert status(exercises.check_position_ids(mine, attention_mask=LEFT_PADDED)) == "correct"


@pytest.mark.parametrize("answer", ["positions", 3, [[0, 1]], torch.full((3, 6), 0.5), np.zeros((3, 6)),
                                    lambda mask: torch.full((3, 6), math.nan), lambda mask: None,
                                    lambda mask: torch.zeros(3, 6, dtype=torch.complex64), lambda mask: [[1, "a"]],
                                    lambda: 0, lambda mask: 1 / 0, lambda mask: mask.bool()])
def test_position_ids_any_answer_gets_feedback(answer):
    assert status(exercises.check_position_ids(answer, attention_mask=LEFT_PADDED)) in ("wrong", "mistake")


def test_position_ids_none_is_not_attempted():
    assert status(exercises.check_position_ids(None, attention_mask=LEFT_PADDED)) == "not attempted"


@pytest.mark.parametrize("mask, error", [(torch.ones(6), ValueError), (torch.ones(2, 3), TypeError),
                                         (torch.tensor([[0, 2, 1]]), ValueError), (torch.tensor([[0, 0, 0]]), ValueError),
                                         ("mask", TypeError)])
def test_position_ids_bad_exercise_raises(mask, error):
    with pytest.raises(error, match="attention_mask"):
        exercises.check_position_ids(None, attention_mask=mask)


# A packed row's mask ----------------------------------------------------------------------------------------------


def packed(lengths=LENGTHS):
    return attention.packed_mask(attention.document_ids_from_lengths(lengths))


def test_the_packed_mask_agrees_with_transformers_reading_of_packed_positions():
    # transformers reads the documents of a packed row back from its position ids (masking_utils.py,
    # find_packed_sequence_indices): the same documents as posenc's ids.
    from transformers.masking_utils import find_packed_sequence_indices

    document_ids = attention.document_ids_from_lengths(LENGTHS)
    theirs = find_packed_sequence_indices(attention.packed_position_ids(document_ids)[None])[0]
    mask = (theirs[:, None] == theirs[None, :]) & torch.ones(6, 6, dtype=torch.bool).tril()
    assert torch.equal(packed(), mask)


PACKED_DOCUMENTS = [[5, 9, 2, 7], [3, 3, 8], [1, 4, 6, 2, 9]]


def test_packing_every_scheme_needs_the_block_mask_and_only_the_sinusoid_restarted_positions():
    differences = decoder.packing_differences(PACKED_DOCUMENTS, vocab_size=10)
    for scheme, by_positions in differences.items():
        assert by_positions["restarted"]["document mask"] < 1e-5, scheme
        assert min(by_positions[p]["plain causal"] for p in by_positions) > 0.1, scheme
    assert differences["sinusoid"]["along the row"]["document mask"] > 0.1
    assert differences["RoPE"]["along the row"]["document mask"] < 1e-5


def test_the_notebooks_packing_table_is_exercise_3s_answer():
    # Notebook 15's Exercise 3 table, on its own three documents and tokenizer (kept out of the notebook's check cell,
    # which the learner's edition shows before the prediction): True where the packed row equals each document alone.
    from posenc import subwords

    tokenizer = subwords.train_bpe()
    documents = [tokenizer.encode(d).ids for d in ("My name is Grant", "What is your name?", "John is my friend")]
    table = decoder.packing_differences(documents, vocab_size=tokenizer.get_vocab_size())
    equal = {scheme: {positions: {mask: d < 1e-5 for mask, d in row.items()} for positions, row in by_positions.items()}
             for scheme, by_positions in table.items()}
    assert equal == {
        "sinusoid": {"restarted": {"plain causal": False, "document mask": True},
                     "along the row": {"plain causal": False, "document mask": False}},
        "RoPE": {"restarted": {"plain causal": False, "document mask": True},
                 "along the row": {"plain causal": False, "document mask": True}},
    }
    assert all(d < 1e-5 or d > 0.1 for by_positions in table.values() for row in by_positions.values()
               for d in row.values())
    # RoPE needs the document mask only: "b", which the checker takes.
    assert exercises.check_rope_in_a_packed_row("b").status == "correct"


def test_the_packing_table_prints_each_row_and_column():
    table = decoder.packing_table({"restarted": {"plain causal": 0.5, "document mask": 0.0},
                                   "along the row": {"plain causal": 1.234, "document mask": 2e-6}}, "RoPE")
    assert table.splitlines() == [f"{'RoPE':<24}{'plain causal':>15}{'document mask':>16}",
                                  f"positions {'restarted':<14}{'0.50':>15}{'equal':>16}",
                                  f"positions {'along the row':<14}{'1.23':>15}{'equal':>16}"]
    with pytest.raises(TypeError, match="by_positions"):
        decoder.packing_table({"restarted": {"plain causal": 0.5}}, "RoPE")


def test_the_difference_table_prints_each_row_and_column():
    table = decoder.difference_table({"llama": {"no ids": 0.5, "with ids": 2e-6},
                                      "gpt2": {"no ids": 1.234, "with ids": 0.0}})
    assert table.splitlines() == [" " * 7 + f"{'no ids':>9}{'with ids':>11}",
                                  f"{'llama':<7}{'0.50':>9}{'equal':>11}",
                                  f"{'gpt2':<7}{'1.23':>9}{'equal':>11}"]
    for wrong in ({}, {"a": {"x": 0.1}, "b": {"y": 0.1}}, [("a", {"x": 0.1})]):
        with pytest.raises(TypeError, match="differences"):
            decoder.difference_table(wrong)


def test_packing_one_document_is_its_own_run_alone():
    # Nothing to keep apart, and positions along the row are the restarted ones: every run equals the run alone.
    differences = decoder.packing_differences(PACKED_DOCUMENTS[:1], vocab_size=10)
    assert all(d < 1e-5 for by_positions in differences.values() for row in by_positions.values() for d in row.values())


def test_a_difference_is_equal_only_below_rounding():
    assert [decoder.difference_text(d) for d in (0, 9.9e-6, 1e-5, 0.873)] == ["equal", "equal", "0.00", "0.87"]
    with pytest.raises(ValueError, match="difference"):
        decoder.difference_text(-1.0)


def test_packing_refuses_an_id_outside_the_vocabulary():
    with pytest.raises(ValueError, match="documents"):
        decoder.packing_differences(PACKED_DOCUMENTS, vocab_size=9)


# check_new_position ------------------------------------------------------------------------------------------------

DECODER = decoder.TinyDecoder(scheme="rotary", vocab_size=50)
CACHE_IDS = torch.randint(1, 50, (2, 10), generator=torch.Generator().manual_seed(0))
CACHE_IDS[0, :2] = 0
CACHE_MASK = torch.tensor([[0, 0] + [1] * 8, [1] * 10])
PREFILL = 7
CACHE_SIZES = {"attention_mask": CACHE_MASK, "prefill": PREFILL}


def decoding_loop(offset):
    """The notebook's loop: the prompt in one call, then one token per call at `offset(cache, mask)`."""
    positions = position_ids(CACHE_MASK)
    with torch.no_grad():
        out = DECODER(CACHE_IDS[:, :PREFILL], attention_mask=CACHE_MASK[:, :PREFILL], position_ids=positions[:, :PREFILL])
        cache, logits = out.cache, [out.logits]
        for t in range(PREFILL, CACHE_IDS.shape[1]):
            mask = CACHE_MASK[:, :t + 1]
            out = DECODER(CACHE_IDS[:, t:t + 1], attention_mask=mask, position_ids=offset(cache, mask), cache=cache)
            cache = out.cache
            logits.append(out.logits)
    return torch.cat(logits, dim=1)


def test_transformers_generate_adds_1_to_the_last_position_id():
    # The checker's praise names generate's own rule (transformers 5.23, generation/utils.py,
    # _update_model_kwargs_for_generation: position_ids[..., -1:] + 1), which gives the same numbers.
    from transformers.generation.utils import GenerationMixin
    last = torch.tensor([[4], [6]])
    kwargs = GenerationMixin._update_model_kwargs_for_generation(None, {}, {"position_ids": last})
    assert torch.equal(kwargs["position_ids"], torch.tensor([[4, 5], [6, 7]]))


def my_position_ids(attention_mask):  # the notebook's Exercise 2, reused as its Exercise 4 may
    return (attention_mask.cumsum(-1) - 1).masked_fill(attention_mask == 0, 0)


@pytest.mark.parametrize("answer", [
    lambda mask_so_far: mask_so_far.sum(dim=1, keepdim=True) - 1,  # the solution
    lambda mask_so_far: mask_so_far.sum(-1)[:, None] - 1,
    lambda mask_so_far: my_position_ids(mask_so_far)[:, -1:],
    lambda mask_so_far: (mask_so_far.cumsum(-1) - 1)[:, -1:],
    lambda mask_so_far: position_ids(mask_so_far)[:, -1:],
    lambda mask_so_far: (mask_so_far.sum(dim=1, keepdim=True) - 1).tolist(),
    lambda mask_so_far: torch.stack([row.count_nonzero() - 1 for row in mask_so_far])[:, None],
    lambda mask_so_far: mask_so_far.shape[1] - 1 - (mask_so_far == 0).sum(dim=1, keepdim=True),
])
def test_every_right_new_position_is_correct(answer):
    feedback = exercises.check_new_position(answer, **CACHE_SIZES)
    assert feedback.status == "correct", feedback.message
    # Review 9: only row 0 has pads, so only its positions differ from its slots in the cache, by its 2 pads.
    assert "Row 0's 2 pads take cache slots" in feedback.message and "Row 1" not in feedback.message, feedback.message
    assert "last position id plus 1" in feedback.message, feedback.message


def test_a_row_with_one_pad_is_told_it_takes_a_cache_slot():
    one_pad = torch.tensor([[0] + [1] * 9, [1] * 10])
    feedback = exercises.check_new_position(lambda mask_so_far: mask_so_far.sum(dim=1, keepdim=True) - 1,
                                            attention_mask=one_pad, prefill=PREFILL)
    assert feedback.status == "correct", feedback.message
    assert "Row 0's 1 pad takes a cache slot" in feedback.message, feedback.message


def test_a_new_position_the_loop_cannot_pass_is_refused():
    # Review 44: a (batch,) answer raises in the notebook's loop ("position_ids must be (2, 1) or (1,)").
    feedback = exercises.check_new_position(lambda mask_so_far: mask_so_far.sum(-1) - 1, **CACHE_SIZES)
    assert feedback.status == "wrong" and "(2, 1)" in feedback.message, feedback.message


def test_the_checker_gives_each_step_the_mask_so_far():
    seen = []

    def mine(mask_so_far):
        seen.append(tuple(mask_so_far.shape))
        return mask_so_far.sum(dim=1, keepdim=True) - 1
    assert exercises.check_new_position(mine, **CACHE_SIZES).status == "correct"
    assert seen[:3] == [(2, 8), (2, 9), (2, 10)], seen  # slots 0 to t, the new token's included


def test_the_right_positions_give_the_full_pass_in_the_loop():
    # What the checker's verdict rests on: the loop with these positions is the full pass, the bug's is not.
    with torch.no_grad():
        full = DECODER(CACHE_IDS, attention_mask=CACHE_MASK, position_ids=position_ids(CACHE_MASK)).logits
    fixed = decoding_loop(lambda cache, mask: mask.sum(dim=-1, keepdim=True) - 1)
    assert torch.allclose(fixed[CACHE_MASK.bool()], full[CACHE_MASK.bool()], atol=1e-5)


def test_slot_numbers_everywhere_also_give_the_full_pass_for_rope():
    # Review 43: with RoPE the bug is the mix (the prompt at real-token positions, new tokens at slots), not slots.
    slots = torch.arange(CACHE_IDS.shape[1]).expand_as(CACHE_IDS)
    with torch.no_grad():
        full = DECODER(CACHE_IDS, attention_mask=CACHE_MASK, position_ids=position_ids(CACHE_MASK)).logits
        out = DECODER(CACHE_IDS[:, :PREFILL], attention_mask=CACHE_MASK[:, :PREFILL], position_ids=slots[:, :PREFILL])
        cache, logits = out.cache, [out.logits]
        for t in range(PREFILL, CACHE_IDS.shape[1]):
            out = DECODER(CACHE_IDS[:, t:t + 1], attention_mask=CACHE_MASK[:, :t + 1], position_ids=slots[:, t:t + 1],
                          cache=cache)
            cache = out.cache
            logits.append(out.logits)
    looped = torch.cat(logits, dim=1)
    assert torch.allclose(looped[CACHE_MASK.bool()], full[CACHE_MASK.bool()], atol=1e-5)


def test_the_full_pass_and_typed_numbers_are_refused():
    # The full pass's logits, as the earlier cell computes them: not a function, so the checker says what it runs.
    with torch.no_grad():
        full = DECODER(CACHE_IDS, attention_mask=CACHE_MASK, position_ids=position_ids(CACHE_MASK)).logits
    for given in (full, decoder.decode_with_cache(DECODER, CACHE_IDS, attention_mask=CACHE_MASK, prefill=PREFILL)):
        feedback = exercises.check_new_position(given, **CACHE_SIZES)
        assert feedback.status == "wrong" and "def my_new_position(mask_so_far)" in feedback.message, feedback.message
    feedback = exercises.check_new_position(lambda mask_so_far: full, **CACHE_SIZES)
    assert feedback.status == "wrong" and "(2, 1)" in feedback.message, feedback.message
    # The notebook's positions typed in: right on its batch, wrong on the checker's own.
    answers = iter([torch.tensor([[5], [7]]), torch.tensor([[6], [8]]), torch.tensor([[7], [9]])])
    typed = lambda mask_so_far: next(answers, torch.zeros(mask_so_far.shape[0], 1, dtype=torch.long))  # noqa: E731
    feedback = exercises.check_new_position(typed, **CACHE_SIZES)
    assert feedback.status != "correct" and "checker's own" in feedback.message, feedback.message


@pytest.mark.parametrize("answer, words", [
    (lambda mask_so_far: torch.full((mask_so_far.shape[0], 1), mask_so_far.shape[1] - 1), "as the loop's bug puts them"),
    (lambda mask_so_far: mask_so_far.sum(dim=1, keepdim=True), "One too far"),
    (lambda mask_so_far: torch.zeros(mask_so_far.shape[0], 1, dtype=torch.long), "forgotten offset"),
    (lambda mask_so_far: (mask_so_far == 0).sum(dim=1, keepdim=True), "counts the pads"),
    (lambda mask_so_far: mask_so_far.cumsum(-1) - 1, "keep only the last column"),
])
def test_new_position_mistakes_are_named(answer, words):
    feedback = exercises.check_new_position(answer, **CACHE_SIZES)
    assert feedback.status == "mistake" and words in feedback.message, feedback.message
    assert "sum(" not in feedback.message and "- 1" not in feedback.message, feedback.message  # no line to copy


def test_float_positions_are_named():
    # The right numbers as floats: the decoder's table lookup raises on them, so the message names the dtype.
    feedback = exercises.check_new_position(lambda mask_so_far: mask_so_far.float().sum(1, keepdim=True) - 1,
                                            **CACHE_SIZES)
    assert feedback.status == "mistake" and "as floats" in feedback.message and ".long()" in feedback.message


def test_the_exhibits_bug_is_named_with_its_numbers():
    # The notebook's line reads the cache's length: every row's new tokens at their slots.
    given = torch.tensor([[7, 8, 9], [7, 8, 9]])
    feedback = exercises.pipeline._judge_new_positions(given, CACHE_MASK, PREFILL)
    assert feedback.status == "mistake" and "as the loop's bug puts them" in feedback.message, feedback.message
    assert "up to 2 too far" in feedback.message, feedback.message


def test_a_wrong_answer_says_what_it_got_and_what_was_expected():
    feedback = exercises.check_new_position(lambda mask_so_far: mask_so_far.sum(dim=1, keepdim=True) - 2, **CACHE_SIZES)
    assert feedback.status == "wrong", feedback.message
    assert "Got the new tokens at [4, 5, 6], [6, 7, 8]" in feedback.message, feedback.message
    assert "expected [5, 6, 7], [7, 8, 9]" in feedback.message, feedback.message


def test_the_slot_bug_leaves_the_unpadded_row_right_and_moves_the_padded_one():
    # What the exercise's symptom shows: the padded row's new tokens move, the other row's do not.
    bug = decoding_loop(lambda cache, mask: torch.full((2, 1), cache.keys.shape[-2]))
    fixed = decoding_loop(lambda cache, mask: mask.sum(dim=-1, keepdim=True) - 1)
    assert torch.allclose(bug[1], fixed[1], atol=1e-6) and torch.allclose(bug[0, :PREFILL], fixed[0, :PREFILL])
    assert float((bug[0, PREFILL:] - fixed[0, PREFILL:]).abs().max()) > 0.01


def _raises(mask_so_far):
    raise RuntimeError("no")


@pytest.mark.parametrize("answer", [None, "logits", torch.zeros(2, 1), [[1.0]], 3, _raises, lambda: 0,
                                    lambda m: None, lambda m: torch.full((2, 1), math.nan),
                                    lambda m: torch.full((m.shape[0], 1), 10**30), lambda m: -m[:, -1:],
                                    lambda m: torch.full((m.shape[0], 1), 1e30), lambda m: m.bool(),
                                    lambda m: 0.5 + m[:, -1:], lambda m: "5", lambda m: m.T, lambda m: m.sum(),
                                    lambda m: m.sum(dim=0, keepdim=True), lambda m: m.float().mean(1, keepdim=True)])
def test_new_position_any_answer_gets_feedback(answer):
    assert status(exercises.check_new_position(answer, **CACHE_SIZES)) in ("wrong", "not attempted", "mistake")


@pytest.mark.parametrize("sizes, error", [
    ({"attention_mask": CACHE_MASK.float()}, TypeError), ({"prefill": 10}, ValueError),
    ({"attention_mask": torch.tensor([[1] * 9 + [0], [1] * 10])}, ValueError), ({"prefill": 0}, ValueError),
])
def test_new_position_bad_exercise_raises(sizes, error):
    with pytest.raises(error, match="attention_mask|prefill"):
        exercises.check_new_position(None, **{**CACHE_SIZES, **sizes})


# check_cached_keys -------------------------------------------------------------------------------------------------

KEYS = torch.randn(6, 8, generator=torch.Generator().manual_seed(3))


def step_scores(query, cached):
    return schemes.apply_rotary(query, offset=len(cached) - 1) @ torch.cat(cached).T


def the_bug(query, cached):  # the exhibit's two lines, as functions of the cache
    return schemes.apply_rotary(query, offset=len(cached) - 1) @ schemes.apply_rotary(torch.cat(cached)).T


@pytest.mark.parametrize("answer", [
    step_scores,
    lambda query, cached: (schemes.apply_rotary(query, offset=len(cached) - 1) @ torch.stack(cached)[:, 0].T).double(),
    lambda query, cached: torch.stack([(schemes.apply_rotary(query, offset=len(cached) - 1) * key).sum()
                                       for key in cached]),  # (t + 1,), a loop over the keys
    lambda query, cached: (schemes.apply_rotary(torch.cat([torch.zeros(len(cached) - 1, query.shape[-1]), query]))[-1:]
                           @ torch.cat(cached).T),  # the query as the last row of a block
])
def test_right_scores_are_correct_however_written(answer):
    feedback = exercises.check_cached_keys(answer, 6, keys=KEYS)
    assert feedback.status == "correct" and "2 caches of the checker's own" in feedback.message, feedback.message
    assert "my_turn = 6 is right. Query 5 then sees key 3 at offset 6 - 5 = 1" in feedback.message, feedback.message


@pytest.mark.parametrize("layout", ["coo", "csr"])
def test_sparse_answers_get_feedback_and_do_not_raise(layout):
    # Review 45: a sparse tensor raised inside both checkers (reshape, isfinite); a checker must never raise.
    sparse = (lambda t: t.to_sparse()) if layout == "coo" else (lambda t: t.to_sparse_csr())
    feedback = exercises.check_new_position(lambda m: sparse(m.sum(1, keepdim=True) - 1), **CACHE_SIZES)
    assert feedback.status == "correct", feedback.message
    feedback = exercises.check_cached_keys(lambda query, cached: sparse(step_scores(query, cached)), 6, keys=KEYS)
    assert feedback.status == "correct", feedback.message
    wrong = exercises.check_cached_keys(lambda query, cached: sparse(the_bug(query, cached)), 6, keys=KEYS)
    assert wrong.status == "mistake", wrong.message


def test_a_nested_tensor_gets_feedback_and_does_not_raise():
    # A nested tensor reports the strided layout but has no single shape; a checker must never raise on it.
    nested = exercises.check_cached_keys(lambda query, cached: torch.nested.nested_tensor([step_scores(query, cached)[0]]),
                                         6, keys=KEYS)
    assert nested.status == "wrong" and "nested" in nested.message, nested.message


def test_a_column_of_scores_is_refused():
    # Review 45: a (t + 1, 1) column of the right numbers breaks a softmax over dim=-1; the exercise asks (1, t + 1).
    column = lambda query, cached: torch.cat(cached) @ schemes.apply_rotary(query, offset=len(cached) - 1).T  # noqa: E731
    feedback = exercises.check_cached_keys(column, 6, keys=KEYS)
    assert feedback.status == "wrong" and "(6, 1)" in feedback.message and "(1, 6)" in feedback.message, feedback.message


def test_the_exhibits_loop_turns_key_3_by_6_when_step_5_reads_it():
    # The fact my_turn rests on: notebook 15's Exercise 5 loop, run as the notebook runs it.
    k = torch.randn(6, 8, generator=torch.Generator().manual_seed(1))
    cached = [schemes.apply_rotary(k[t:t + 1], offset=t) for t in range(6)]
    keys = schemes.apply_rotary(torch.cat(cached))  # what step 5 reads
    assert torch.allclose(keys[3], schemes.apply_rotary(k[3:4], offset=6)[0], atol=1e-5)  # turned by 6
    assert not torch.allclose(keys[3], cached[3][0], atol=1e-3)  # not by 3, as it was cached


def test_the_right_scores_are_the_full_pass_row():
    # What the checker calls right: query t's row of the full pass, from the cache alone.
    q = torch.randn(6, 8, generator=torch.Generator().manual_seed(2))
    cached = [schemes.apply_rotary(KEYS[j:j + 1], offset=j) for j in range(6)]
    full = schemes.apply_rotary(q) @ schemes.apply_rotary(KEYS).T
    assert torch.allclose(step_scores(q[5:6], cached)[0], full[5], atol=1e-5)
    assert torch.isclose(the_bug(q[5:6], cached)[0], full[5], atol=1e-5).tolist() == [True] + [False] * 5


@pytest.mark.parametrize("turn", [6, 6.0, "6", " 6 ", torch.tensor(6), torch.tensor([6.0]), np.int64(6), np.array(6)])
def test_every_form_of_the_right_turn_is_accepted(turn):
    feedback = exercises.check_cached_keys(step_scores, turn, keys=KEYS)
    assert feedback.status == "correct", feedback.message


def test_the_right_turn_states_the_offset_as_the_suite_defines_it():
    # Review 38: an offset is the key's position minus the query's (13, 14), so key 3, turned by 6, sits at
    # 6 - 5 = 1 from query 5, ahead of it, instead of 3 - 5 = -2.
    message = exercises.check_cached_keys(step_scores, 6, keys=KEYS).message
    assert "key 3 at offset 6 - 5 = 1 instead of 3 - 5 = -2: ahead of it, not 2 back" in message, message
    assert "5 - 6" not in message, message


@pytest.mark.parametrize("turn, status_, words", [
    (3, "mistake", "when it is cached, once"), (8, "mistake", "adds the step"), (5, "mistake", "the query's position"),
    (12, "wrong", "my_turn = 12; expected the sum of every turn"), (6.5, "wrong", "expected the sum"),
    ("six", "wrong", "got 'six'"),
    (True, "wrong", "got True"), (math.nan, "wrong", "a whole number"), ([6, 6], "wrong", "a whole number"),
])
def test_a_wrong_turn_is_named_with_what_it_got_and_expected(turn, status_, words):
    for answer in (step_scores, None):  # judged before the function, whatever the function is
        feedback = exercises.check_cached_keys(answer, turn, keys=KEYS)
        assert feedback.status == status_ and words in feedback.message, feedback.message
        assert "expected" in feedback.message.lower(), feedback.message
        # It says what it expects as a rule, not the number: a second try must not copy it.
        told = feedback.message.replace(str(turn), "").replace(repr(turn), "")  # without the learner's own answer
        assert not re.search(r"(?<![\d.])6(?![\d.])", told), feedback.message


def test_a_right_function_without_the_turn_is_not_done_yet():
    feedback = exercises.check_cached_keys(step_scores, keys=KEYS)
    assert feedback.status == "not attempted" and "my_turn" in feedback.message, feedback.message
    feedback = exercises.check_cached_keys(the_bug, 6, keys=KEYS)
    assert feedback.status == "mistake" and "This is the bug" in feedback.message, feedback.message


def test_scores_typed_from_the_notebooks_keys_fail_on_the_checkers_caches():
    k = torch.randn(6, 8, generator=torch.Generator().manual_seed(1))  # the notebook's keys, used instead of the cache
    feedback = exercises.check_cached_keys(
        lambda query, cached: schemes.apply_rotary(query, offset=5) @ schemes.apply_rotary(k).T, keys=k)
    assert feedback.status == "wrong" and "my_step_scores(query 2, a cache of 3 keys" in feedback.message, feedback.message


def test_a_tensor_of_scores_is_refused():
    feedback = exercises.check_cached_keys(torch.zeros(1, 6), keys=KEYS)
    assert feedback.status == "wrong" and "def my_step_scores(query, cached)" in feedback.message, feedback.message


@pytest.mark.parametrize("answer, words", [
    (the_bug, "This is the bug"),
    (lambda query, cached: query @ torch.cat(cached).T, "The query is not turned"),
    (lambda query, cached: schemes.apply_rotary(query, offset=len(cached)) @ torch.cat(cached).T, "len(cached)."),
    (lambda query, cached: schemes.apply_rotary(query, offset=len(cached) - 1, layout="half_split") @ torch.cat(cached).T,
     "half-split"),
    (lambda query, cached: schemes.apply_rotary(query, offset=len(cached) + 2) @ torch.cat(cached).T,
     "The query turned by position 8"),
    (lambda query, cached: step_scores(query, cached) / math.sqrt(query.shape[-1]), "divided by √d = √8"),
    (lambda query, cached: step_scores(query, cached) / torch.tensor(query.shape[-1]).sqrt(), "divided by √d"),
])
def test_step_scores_mistakes_are_named(answer, words):
    feedback = exercises.check_cached_keys(answer, keys=KEYS)
    assert feedback.status == "mistake" and words in feedback.message, feedback.message


def test_the_bugs_message_is_true_only_key_0_right():
    # "Only key 0 (turned by 0) comes out right": checked on the checker's own query for the notebook's keys.
    query = torch.randn(1, 8, generator=torch.Generator().manual_seed(9)).double()
    cached = [schemes.apply_rotary(KEYS[j:j + 1].double(), offset=j) for j in range(6)]
    right = torch.isclose(the_bug(query, cached), step_scores(query, cached), atol=1e-6)[0].tolist()
    assert right == [True] + [False] * 5


def test_twice_turned_keys_put_key_j_at_position_2j():
    # The diagnosis the checker gives, checked: turning twice is turning by 2j.
    doubled = schemes.rotate_pairs(KEYS, 2 * schemes.rotary_angles(max_sequence_length=6, d=8))
    assert torch.allclose(schemes.apply_rotary(schemes.apply_rotary(KEYS)), doubled, atol=1e-6)


@pytest.mark.parametrize("answer", [None, "scores", torch.zeros(1, 6), np.zeros((1, 6)), lambda query, cached: None,
                                    lambda query, cached: torch.zeros(1, 6), lambda query, cached: torch.full((1, 6), math.nan),
                                    lambda query, cached: cached, lambda query, cached: cached[-1], lambda: 0,
                                    lambda query, cached: 1 / 0, lambda cached: torch.cat(cached)])
def test_cached_keys_any_answer_gets_feedback(answer):
    assert status(exercises.check_cached_keys(answer, keys=KEYS)) in ("wrong", "not attempted")


@pytest.mark.parametrize("answer, words", [(lambda query, cached: cached, "a list of 6 tensors, not one tensor"),
                                           (lambda query, cached: tuple(cached), "a tuple of 6 tensors"),
                                           (lambda query, cached: torch.cat(cached), "a tensor of shape (6, 8)")])
def test_keys_instead_of_scores_are_named_by_what_came_back(answer, words):
    # The message says what came back, and does not name the fix.
    feedback = exercises.check_cached_keys(answer, keys=KEYS)
    assert feedback.status == "wrong" and words in feedback.message and "apply_rotary" not in feedback.message, feedback.message


@pytest.mark.parametrize("keys, error", [(torch.zeros(6, 7), ValueError), (torch.zeros(6, 8, dtype=torch.long), TypeError),
                                         (torch.zeros(8), ValueError), ("keys", TypeError)])
def test_cached_keys_bad_exercise_raises(keys, error):
    with pytest.raises(error, match="keys"):
        exercises.check_cached_keys(None, keys=keys)


# Figures ---------------------------------------------------------------------------------------------------------

FIGURES = {
    "subword_figure": lambda: plots.subword_figure(
        {"My name is John": [["M", "y"], [" name"], [" is"], [" ", "J", "ohn"]],
         "The positional encoding extrapolates": [["The"], [" positional"], [" encoding"],
                                                  [" ex", "t", "ra", "p", "ol", "at", "es"]]}, title="pieces"),
    "subword_figure_by_word": lambda: plots.subword_figure(
        {"Grant is my friend": [["G", "r", "ant"], [" is"], [" my"], [" f", "r", "i", "end"]],
         "My friend is Grant": [["My"], [" f", "r", "i", "end"], [" is"], [" ", "G", "r", "ant"]]},
        title="pieces", colour_by_word=True),
    "position_ids_figure": lambda: plots.position_ids_figure(
        {"naive": torch.arange(6).expand(3, 6), "position ids": position_ids(LEFT_PADDED)},
        attention_mask=LEFT_PADDED, row_labels=["a", "b", "c"]),
    "packed_mask_figure": lambda: plots.packed_mask_figure(
        packed([4, 3, 5]), document_ids=attention.document_ids_from_lengths([4, 3, 5]),
        labels=[f"t{k}" for k in range(12)]),
    "differences_figure": lambda: plots.differences_figure(
        {"sinusoidal": {"cache": 0.0, "offset forgotten": 0.7}, "learned": {"cache": 1e-8, "offset forgotten": 0.05},
         "rotary": {"cache": 3e-7, "offset forgotten": 1.2}, "alibi": {"cache": 0.0, "offset forgotten": 0.0}},
        title="t", ylabel="largest difference", floor=1e-6),
}


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_figure_can_be_read(name):
    fig = FIGURES[name]()
    assert isinstance(fig, Figure)
    problems = check_figure(fig)
    assert not problems, "\n".join(problems)


def test_every_figure_of_the_module_is_drawn_here():
    assert set(plots.batching.__all__) == {name.removesuffix("_by_word") for name in FIGURES}


def test_colour_by_word_gives_a_word_one_colour_in_every_row():
    fig = FIGURES["subword_figure_by_word"]()
    boxes = [patch.get_facecolor() for patch in fig.axes[0].patches]  # row 0: G r ant is my f r i end; row 1 follows
    row_0, row_1 = boxes[:9], boxes[9:]
    assert row_0[0] == row_1[-1] and row_0[3] == row_1[5] and row_0[5] == row_1[1]  # Grant, is, friend
    assert len({row_0[0], row_0[3], row_0[4], row_0[5]}) == 4  # four words, four colours


def test_without_colour_by_word_every_box_has_one_colour():
    # Colour means one thing in notebook 15's two subword figures: the same word. Without colour_by_word, it means nothing.
    fig = FIGURES["subword_figure"]()
    assert len({patch.get_facecolor() for patch in fig.axes[0].patches}) == 1


def test_the_position_ids_figure_names_a_bare_space():
    words = [["␣" if s == 3 else f"w{s}" for s in range(LEFT_PADDED.shape[1])] for b in range(LEFT_PADDED.shape[0])]
    fig = plots.position_ids_figure({"ids": position_ids(LEFT_PADDED)}, attention_mask=LEFT_PADDED, tokens=words)
    assert not check_figure(fig)
    assert sum(t.get_text().startswith("␣\n(space)\n") for t in fig.axes[0].texts) == int(LEFT_PADDED[:, 3].sum())


def test_exercise_3s_rope_table_is_computed_only_after_the_prediction():
    # Notebook 15 prints the sinusoid's packing table before Exercise 3; the RoPE one, its answer, only in the reveal.
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "notebooks" / "15_real_pipeline.ipynb"
    sources = ["".join(c["source"]) for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]
    exercise = next(k for k, text in enumerate(sources) if text.startswith("my_packing_choice = None"))
    before = [text for text in sources[:exercise] if "packing_differences" in text]
    assert before and all('["sinusoid"]' in text and "RoPE" not in text for text in before)


def test_a_difference_below_the_floor_gets_no_bar_and_says_so():
    fig = plots.differences_figure({"rotary": {"a": 0.0, "b": 0.5}, "alibi": {"a": 3e-7, "b": 2e-5}}, title="t",
                                   ylabel="y", floor=1e-5)
    ax = fig.axes[0]
    bars = [bar for container in ax.containers for bar in container]
    heights = sorted(round(bar.get_y() + bar.get_height(), 9) for bar in bars if bar.get_height() > 0)
    assert heights == [2e-5, 0.5]  # two bars, each up to its value; none for the two below the floor
    texts = [t.get_text() for t in ax.texts]
    assert not any("below" in text for text in texts) and "0.50" in texts and "2.0e-05" in texts  # the legend says it once
    assert all(text.get_rotation() == 0 for text in ax.texts) and ax.get_ylim()[1] < 0.5 * 10
    assert any("below 1e-5" in t.get_text() for t in ax.get_legend().get_texts())


def test_the_packed_mask_figure_colours_only_the_visible_cells():
    mask = packed([2, 3])
    fig = plots.packed_mask_figure(mask, document_ids=attention.document_ids_from_lengths([2, 3]))
    filled = [patch for patch in fig.axes[0].patches if patch.get_fill()]
    assert len(filled) == int(mask.sum())


def test_the_position_ids_figure_writes_each_real_tokens_position():
    fig = plots.position_ids_figure({"ids": position_ids(LEFT_PADDED)}, attention_mask=LEFT_PADDED)
    texts = [t.get_text() for t in fig.axes[0].texts if not t.get_text().startswith("pad")]
    assert texts == [str(int(p)) for p in position_ids(LEFT_PADDED)[LEFT_PADDED.bool()]]


def test_the_position_ids_figure_can_write_each_real_tokens_text_above_its_position():
    words = [[f"w{b}{s}" for s in range(LEFT_PADDED.shape[1])] for b in range(LEFT_PADDED.shape[0])]
    fig = plots.position_ids_figure({"naive": torch.arange(6).expand(3, 6), "ids": position_ids(LEFT_PADDED)},
                                    attention_mask=LEFT_PADDED, tokens=words)
    assert not check_figure(fig)
    texts = [t.get_text() for t in fig.axes[1].texts if not t.get_text().startswith("pad")]
    real = LEFT_PADDED.bool()
    assert texts == [f"w{b}{s}\n{int(position_ids(LEFT_PADDED)[b, s])}" for b, s in real.nonzero().tolist()]



# Whatever the learner gives (tests/test_contract.py fuzzes every checker, with the sizes it knows; these are the sizes
# of notebook 15's exercises, fuzzed the same way here) ---------------------------------------------------------------

SIZES = {"check_position_ids": {"attention_mask": LEFT_PADDED}, "check_new_position": CACHE_SIZES,
         "check_cached_keys": {"keys": KEYS}}


@pytest.mark.parametrize("name", sorted(SIZES))
def test_a_checker_answers_whatever_the_learner_gives(name):
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from test_contract import anything, call, scaled, tensors

    checker = getattr(exercises, name)

    @settings(max_examples=scaled(150), deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.one_of(anything, st.builds(torch.nn.Identity), tensors(max_dims=3)))
    def run(answer):
        feedback = call(checker, [answer], SIZES[name])
        assert isinstance(feedback, exercises.Feedback) and feedback.message

    run()


# transformers' Llama RoPE (rotate_half) against posenc's, through notebook 13's column order -------------------------


def test_llama_rotate_half_is_posencs_half_split_layout_and_interleaved_through_the_permutation():
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb

    from posenc import schemes

    head_dim, seq = 8, 12
    config = LlamaConfig(hidden_size=head_dim * 2, num_attention_heads=2, max_position_embeddings=64)
    x = torch.randn(1, 1, seq, head_dim, generator=torch.Generator().manual_seed(0))
    position_ids = torch.arange(3, 3 + seq)[None]  # from 3, as a row after 3 pads with naive positions
    cos, sin = LlamaRotaryEmbedding(config)(x, position_ids)
    theirs, _ = apply_rotary_pos_emb(x, x, cos, sin)
    ours = schemes.apply_rotary(x[0, 0], offset=3, layout="half_split")
    torch.testing.assert_close(theirs[0, 0], ours, atol=1e-5, rtol=0)
    permutation = schemes.half_split_permutation(d=head_dim)
    theirs_permuted, _ = apply_rotary_pos_emb(x[..., permutation], x[..., permutation], cos, sin)
    torch.testing.assert_close(theirs_permuted[0, 0], schemes.apply_rotary(x[0, 0], offset=3)[:, permutation],
                               atol=1e-5, rtol=0)


def test_bloom_keys_only_alibi_gives_the_weights_of_the_whole_bias():
    # Notebook 15, section 2: BLOOM (transformers 5.23, models/bloom/modeling_bloom.py, build_alibi_tensor) adds only
    # slope * key position; the softmax of each query row is the same as with the whole -slope * (i - j).
    from transformers.models.bloom.modeling_bloom import build_alibi_tensor

    num_heads, (batch, seq) = 4, LEFT_PADDED.shape
    bloom = build_alibi_tensor(LEFT_PADDED, num_heads, torch.float32).view(batch, num_heads, 1, seq)
    slopes = schemes.alibi_slopes(num_heads=num_heads)
    positions = position_ids(LEFT_PADDED)
    assert torch.allclose(bloom[:, :, 0, :], slopes[None, :, None] * positions[:, None, :])  # slope x j, pads at 0
    whole = -slopes[None, :, None, None] * (positions[:, None, :, None] - positions[:, None, None, :])
    visible = torch.ones(seq, seq, dtype=torch.bool).tril() & LEFT_PADDED.bool()[:, None, None, :]
    scores = torch.randn(batch, num_heads, seq, seq, generator=torch.Generator().manual_seed(0))
    weights = [torch.softmax((scores + bias).masked_fill(~visible, float("-inf")), dim=-1) for bias in (bloom, whole)]
    real_queries = LEFT_PADDED.bool()[:, None, :, None].expand_as(scores)
    assert torch.allclose(weights[0][real_queries], weights[1][real_queries], atol=1e-6)
    assert not torch.allclose(torch.softmax((scores - bloom).masked_fill(~visible, float("-inf")), dim=-1)[real_queries],
                              weights[1][real_queries], atol=1e-3)  # the sign matters: the check can fail


# check_same_words_other_order and subwords.pieces_by_word ------------------------------------------------------------

def test_the_same_words_in_another_order_take_one_more_token():
    tokenizer = subwords.train_bpe()
    counts = [len(tokenizer.encode(s).ids) for s in ("Grant is my friend", "My friend is Grant")]
    assert counts == [9, 10]
    assert subwords.pieces_by_word("My friend is Grant", tokenizer) == [["My"], [" f", "r", "i", "end"], [" is"],
                                                                        [" ", "G", "r", "ant"]]
    for right in (1, 1.0, "1", " 1 "):
        assert exercises.check_same_words_other_order(right, actual=1).status == "correct"
    for wrong in (0, 2, -1):
        feedback = exercises.check_same_words_other_order(wrong, actual=1)
        assert feedback.status != "correct" and str(wrong) in feedback.message and "1" in feedback.message, feedback.message
    assert exercises.check_same_words_other_order(None, actual=1).status == "not attempted"
    assert exercises.check_same_words_other_order("one", actual=1).status != "correct"
    # 0 is the likely slip (John kept its count): its feedback names why Grant does not; a right 0 says nothing of it.
    for zero in (0, 0.0, "0", " 0.00 ", torch.tensor(0)):
        assert "Grant has no ␣G" in exercises.check_same_words_other_order(zero, actual=1).message
    assert "␣J" not in exercises.check_same_words_other_order(2, actual=1).message
    assert "␣J" not in exercises.check_same_words_other_order(0, actual=0).message


def test_the_checker_explains_the_bare_space_truly():
    # Its feedback says: BPE never made ␣G (Ġ in the tokenizer), because G after a space had mostly merged with the
    # letters after it first (GPT, Going): 10 of the 12 capital Gs after a space in the training text.
    tokenizer = subwords.train_bpe()
    message = exercises.check_same_words_other_order(1, actual=1).message
    assert "never made ␣G" in message and "GPT, Going" in message
    words = [word for line in subwords.NOTEBOOK_TEXT.splitlines()
             for word, _ in tokenizer.pre_tokenizer.pre_tokenize_str(line) if word.startswith("ĠG")]
    assert len(words) == 12 and sum(word in ("ĠGPT", "ĠGoing") for word in words) == 10
    vocab = tokenizer.get_vocab()
    assert "ĠG" not in vocab
    for word in ("GPT", "Going"):
        assert vocab[word] < vocab["Ġ" + word]  # an id is its merge's rank: the word first, then the space on


# Claims of notebook 15's prose -----------------------------------------------------------------------------------


def test_the_space_before_g_is_no_piece_because_g_merged_with_the_letters_after_it_first():
    """Notebook 15: ␣J became a piece and ␣G did not, though the text has ␣G more often; G had merged into Go and GPT."""
    tokenizer = subwords.train_bpe()
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m)
              for m in json.loads(tokenizer.to_str())["model"]["merges"]]
    text = subwords.NOTEBOOK_TEXT
    assert len(re.findall(r" G", text)) > len(re.findall(r" J", text))
    assert ("Ġ", "G") not in merges and ("Ġ", "J") in merges
    assert max(merges.index(("G", "o")), merges.index(("G", "PT"))) < merges.index(("Ġ", "J"))
    left = sum(line_tokens[k:k + 2] == ["Ġ", "G"] for line in text.split("\n")
               for line_tokens in [tokenizer.encode(line).tokens] for k in range(len(line_tokens)))
    assert left < sum(1 for _ in re.finditer(r" J", text))  # fewer ␣G pairs left than ␣J had


def test_alibi_on_a_left_padded_row_would_be_equal_even_with_slot_positions(monkeypatch):
    """Notebook 15, section 2: ALiBi reads only the distance, so left padding cannot move it. Counting its positions
    from the mask is not needed for that (it is needed in section 4, where the position ids are wrong)."""
    torch.manual_seed(0)
    model = decoder.TinyDecoder(scheme="alibi", vocab_size=20)
    mask = torch.tensor([[0, 0, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1, 1]])
    ids = torch.randint(2, 20, mask.shape) * mask
    real = mask[0].bool()
    counted = decoder.positions_of

    def slots(*args, **kwargs):  # positions_of(mask) -> the slot numbers 0, 1, 2, ..., whatever the mask
        return torch.arange(args[0].shape[-1]).expand(args[0].shape) if args and not kwargs else counted(*args, **kwargs)

    assert not torch.equal(slots(mask), counted(mask))  # the slot numbers do move row 0's positions by two
    for positions in (counted, slots):
        monkeypatch.setattr(decoder, "positions_of", positions)
        with torch.no_grad():
            difference = (model(ids, attention_mask=mask).logits[0, real] - model(ids[0, real][None]).logits[0]).abs().max()
        assert float(difference) < 1e-5


def test_the_notebooks_cache_figure_and_transformers_packed_mask():
    """Notebook 15's last check, out of the reading path: its cache figure with margins, decode_with_cache on the
    left-padded batch, and transformers' block mask for the packed row once the cache is off, as Trainer sets it."""
    from transformers import DataCollatorWithFlattening, LlamaConfig, LlamaForCausalLM

    tokenizer = subwords.train_bpe()
    vocab_size, pad_id = tokenizer.get_vocab_size(), tokenizer.token_to_id("<PAD>")
    prompt = torch.tensor([tokenizer.encode("What is your name? My name is Grant").ids])
    tokenizer.enable_padding(direction="left", pad_id=pad_id, pad_token="<PAD>")
    batch = tokenizer.encode_batch(["What is your name?", "My name is Grant"])
    tokenizer.no_padding()
    continued = torch.cat([torch.tensor([row.ids for row in batch]), torch.tensor([tokenizer.encode(" and you?").ids] * 2)],
                          dim=1)
    continued_mask = torch.cat([torch.tensor([row.attention_mask for row in batch]), torch.ones(2, 3, dtype=torch.long)],
                               dim=1)
    with torch.no_grad():
        for scheme in decoder.DECODER_SCHEMES:
            model = decoder.TinyDecoder(scheme=scheme, vocab_size=vocab_size)
            full = model(prompt).logits
            assert float((decoder.decode_with_cache(model, prompt) - full).abs().max()) < 1e-5, scheme
            forgot = float((decoder.decode_with_cache(model, prompt, forget_offset=True) - full).abs().max())
            assert forgot < 1e-5 if scheme == "alibi" else forgot > 0.1, scheme
            full = model(continued, attention_mask=continued_mask, position_ids=position_ids(continued_mask)).logits
            step_by_step = decoder.decode_with_cache(model, continued, attention_mask=continued_mask)
            real = continued_mask.bool()
            assert torch.allclose(step_by_step[real], full[real], atol=1e-5), scheme

    encoded = [tokenizer.encode(d).ids for d in ("My name is Grant", "What is your name?", "John is my friend")]
    flattened = DataCollatorWithFlattening()([{"input_ids": ids} for ids in encoded])
    assert [int(label) for label in flattened["labels"][0]] == [label for ids in encoded for label in [-100, *ids[1:]]]
    torch.manual_seed(0)
    llama = LlamaForCausalLM(LlamaConfig(vocab_size=vocab_size, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                         num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=64,
                                         pad_token_id=pad_id)).eval()
    llama.config.use_cache = False
    with torch.no_grad():
        alone = torch.cat([llama(torch.tensor([ids])).logits[0] for ids in encoded])
        trainer_like = llama(flattened["input_ids"], position_ids=flattened["position_ids"]).logits[0]
    assert torch.allclose(trainer_like, alone, atol=1e-5)
    # 'Packing in transformers': a 4D block mask needs no restarted ids, with the cache on, in sdpa and eager.
    packed = attention.packed_mask(attention.document_ids_from_lengths([len(ids) for ids in encoded]))
    block_mask = torch.zeros(packed.shape).masked_fill(~packed, torch.finfo(torch.float32).min)[None, None]
    for implementation in ("sdpa", "eager"):
        llama.set_attn_implementation(implementation)
        with torch.no_grad():
            masked = llama(flattened["input_ids"], attention_mask=block_mask, use_cache=True).logits[0]
        assert torch.allclose(masked, alone, atol=1e-5), implementation


def test_a_type_error_inside_a_right_signature_is_not_blamed_on_the_parameter():
    # Round 41: a typo inside (keep_dim for keepdim) was reported as "give the function one parameter".
    feedback = exercises.check_new_position(lambda mask: mask.sum(dim=-1, keep_dim=True) - 1, **CACHE_SIZES)
    assert feedback.status == "wrong" and "keep_dim" in feedback.message and "one parameter" not in feedback.message, \
        feedback.message
    feedback = exercises.check_new_position(lambda: None, **CACHE_SIZES)
    assert feedback.status == "wrong" and "one parameter" in feedback.message, feedback.message
