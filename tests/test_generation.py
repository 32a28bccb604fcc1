"""The KV cache and position ids (posenc.models.decoder), for the four position schemes.

Decoding one token at a time with a cache must give the logits of the full pass (1e-6 in
float32); forgetting the offset must not (except for ALiBi, which counts positions from the
mask); a left-padded row must give the logits of the row alone once its position ids come from
the attention mask. Each scheme's positions are checked against the package's own reference
(PositionalEncoding's offset, apply_rotary's offset, alibi_bias).
"""

from __future__ import annotations

import math

import pytest
import torch

from posenc import attention, positions, schemes
from posenc.models import decoder

ATOL = 1e-6
VOCAB = 50
PADS = 3


def batch():
    """A left-padded batch: row 0 = PADS pads + the 6 tokens of `alone`, row 1 = 9 tokens; and its mask."""
    generator = torch.Generator().manual_seed(1)
    alone = torch.randint(1, VOCAB, (1, 6), generator=generator)
    other = torch.randint(1, VOCAB, (1, 6 + PADS), generator=generator)
    ids = torch.cat([torch.cat([torch.zeros(1, PADS, dtype=torch.long), alone], dim=1), other])
    mask = torch.tensor([[0] * PADS + [1] * 6, [1] * (6 + PADS)])
    return alone, other, ids, mask


def largest(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a - b).abs().max())


MODELS = {scheme: decoder.TinyDecoder(scheme=scheme, vocab_size=VOCAB) for scheme in decoder.DECODER_SCHEMES}


@pytest.fixture(autouse=True)
def no_grad():
    with torch.no_grad():
        yield


@pytest.mark.parametrize("scheme", decoder.DECODER_SCHEMES)
@pytest.mark.parametrize("prefill", [1, 4])
def test_decoding_with_a_cache_equals_the_full_pass(scheme, prefill):
    model = MODELS[scheme]
    ids = torch.randint(0, VOCAB, (2, 9), generator=torch.Generator().manual_seed(0))
    full = model(ids).logits
    assert largest(decoder.decode_with_cache(model, ids, prefill=prefill), full) < ATOL
    # Left-padded: positions from the mask in both.
    _, _, padded, mask = batch()
    full = model(padded, attention_mask=mask, position_ids=positions.position_ids(mask)).logits
    assert largest(decoder.decode_with_cache(model, padded, attention_mask=mask, prefill=prefill), full) < ATOL


def test_the_cache_holds_every_token_and_the_next_position_is_its_length():
    model = MODELS["rotary"]
    ids = torch.randint(0, VOCAB, (2, 5), generator=torch.Generator().manual_seed(2))
    output = model(ids[:, :3])
    assert output.cache.keys.shape == (2, 4, 3, 4) and output.cache.key_mask.shape == (2, 3)
    # Left out, the next token's position is the number cached: the same logits as passing it explicitly.
    implicit = model(ids[:, 3:4], cache=output.cache).logits
    explicit = model(ids[:, 3:4], cache=output.cache, position_ids=torch.tensor([3])).logits
    assert torch.equal(implicit, explicit)
    assert model(ids[:, 3:4], cache=output.cache).weights.shape == (2, 4, 1, 4)


@pytest.mark.parametrize("scheme,moves", [("sinusoidal", True), ("learned", True), ("rotary", True), ("alibi", False)])
def test_forgetting_the_offset_moves_every_scheme_that_reads_position_ids(scheme, moves):
    model = MODELS[scheme]
    ids = torch.randint(0, VOCAB, (2, 9), generator=torch.Generator().manual_seed(0))
    difference = largest(decoder.decode_with_cache(model, ids, forget_offset=True), model(ids).logits)
    # The first token is at position 0 either way: only the later ones can move.
    assert largest(decoder.decode_with_cache(model, ids, forget_offset=True)[:, 0], model(ids).logits[:, 0]) < ATOL
    assert (difference > 0.1) if moves else (difference < ATOL), difference


@pytest.mark.parametrize("scheme,moves", [("sinusoidal", True), ("learned", True), ("rotary", True), ("alibi", False)])
def test_a_loop_that_feeds_the_new_tokens_the_cache_length_moves_a_left_padded_row(scheme, moves):
    # position_ids: the positions a decoding loop feeds. The prompt's from the mask, then the cache's slots: a padded
    # row's new tokens jump by its pads (RoPE too: the jump is not shared by the prompt's keys); the other row is right.
    model = MODELS[scheme]
    _, _, ids, mask = batch()
    right = positions.position_ids(mask)
    full = model(ids, attention_mask=mask, position_ids=right).logits
    assert largest(decoder.decode_with_cache(model, ids, attention_mask=mask, prefill=6, position_ids=right), full) < ATOL
    slots = torch.cat([right[:, :6], torch.arange(6, 9).expand(2, 3)], dim=1)
    drifted = decoder.decode_with_cache(model, ids, attention_mask=mask, prefill=6, position_ids=slots)
    assert largest(drifted[1], full[1]) < ATOL and largest(drifted[0, :6], full[0, :6]) < ATOL
    difference = largest(drifted[0, 6:], full[0, 6:])
    assert (difference > 0.01) if moves else (difference < ATOL), difference


@pytest.mark.parametrize("scheme,absolute", [("sinusoidal", True), ("learned", True), ("rotary", False), ("alibi", False)])
def test_a_left_padded_row_equals_the_row_alone_with_position_ids_from_the_mask(scheme, absolute):
    model = MODELS[scheme]
    alone, other, ids, mask = batch()
    row_alone = model(alone).logits[0]
    naive = model(ids, attention_mask=mask).logits
    counted = model(ids, attention_mask=mask, position_ids=positions.position_ids(mask)).logits
    assert largest(counted[0, PADS:], row_alone) < ATOL
    assert largest(counted[1], model(other).logits[0]) < ATOL  # the unpadded row: naive and counted agree
    assert largest(naive[1], model(other).logits[0]) < ATOL
    # Naive positions put the first real token at position PADS: absolute schemes see another input,
    # relative ones (RoPE: q_m . k_n depends on m - n; ALiBi: counts the mask) do not.
    difference = largest(naive[0, PADS:], row_alone)
    assert (difference > 0.1) if absolute else (difference < ATOL), difference


@pytest.mark.parametrize("scheme,moves", [("sinusoidal", True), ("learned", True), ("rotary", False), ("alibi", False)])
def test_scores_under_a_constant_shift_of_all_positions(scheme, moves):
    model = MODELS[scheme]
    alone, _, _, _ = batch()
    at_0 = model(alone).scores
    at_5 = model(alone, position_ids=torch.arange(6) + 5).scores
    difference = largest(at_0, at_5)
    # RoPE: angles in float64, rounded once to float32; the scores agree to float32 rounding.
    assert (difference > 0.1) if moves else (difference < 1e-5), difference
    if scheme == "alibi":
        # ALiBi reads no position ids: shift its tokens by 3 slots (left padding) instead; the real tokens' scores stay.
        _, _, ids, mask = batch()
        padded = model(ids, attention_mask=mask).scores[0, :, PADS:, PADS:]
        assert largest(padded, at_0[0]) < ATOL


def test_each_scheme_puts_positions_where_the_package_reference_does():
    alone, _, _, _ = batch()
    length = alone.shape[1]
    raw = {}
    for scheme, model in MODELS.items():
        x = model.W_E[alone[0]]
        W_Q, W_K = model.attention_weights[0], model.attention_weights[1]
        if scheme in ("sinusoidal", "learned"):
            # Rows k, k + 1, ... added: the module's own forward with offset=k.
            shifted = model.position_embedding(x, offset=2)
            indexed = model(alone, position_ids=torch.arange(length) + 2)
            q = attention.split_heads(shifted @ W_Q, num_heads=4)
            k = attention.split_heads(shifted @ W_K, num_heads=4)
            assert largest(indexed.scores[0], q @ k.transpose(-2, -1) / math.sqrt(model.head_dim)) < ATOL
        q, k = (attention.split_heads(x @ W, num_heads=4) for W in (W_Q, W_K))
        raw[scheme] = (q, k)
    # RoPE at positions 2, 3, ...: schemes.apply_rotary with offset=2, interleaved pairs.
    q, k = raw["rotary"]
    expected = schemes.apply_rotary(q, offset=2) @ schemes.apply_rotary(k, offset=2).transpose(-2, -1) / 2.0
    got = MODELS["rotary"](alone, position_ids=torch.arange(length) + 2).scores[0]
    assert largest(got, expected) < ATOL
    # ALiBi: the raw scores plus schemes.alibi_bias, on and below the diagonal.
    q, k = raw["alibi"]
    bias = schemes.alibi_bias(num_heads=4, max_sequence_length=length)
    got = MODELS["alibi"](alone).scores[0]
    lower = torch.ones(length, length, dtype=torch.bool).tril()
    assert largest(got[:, lower], (q @ k.transpose(-2, -1) / 2.0 + bias)[:, lower]) < ATOL


def test_the_model_is_seeded_and_leaves_the_global_generator_alone():
    state = torch.get_rng_state()
    first = decoder.TinyDecoder(scheme="learned", vocab_size=VOCAB, seed=3)
    assert torch.equal(torch.get_rng_state(), state)
    second = decoder.TinyDecoder(scheme="learned", vocab_size=VOCAB, seed=3)
    assert all(torch.equal(a, b) for a, b in zip(first.parameters(), second.parameters()))
    other = decoder.TinyDecoder(scheme="learned", vocab_size=VOCAB, seed=4)
    assert not torch.equal(first.W_E, other.W_E)
    # No two matrices share draws: W_E holds none of the numbers multi_head_weights drew from the same seed.
    drawn = torch.randn(10 * 4 * 16 * 16, generator=torch.Generator().manual_seed(3))
    assert not bool(torch.isin(first.W_E.flatten()[:64], drawn[: 4 * 16 * 16]).any())
    assert not bool(torch.isin(first.W_out.flatten()[:64] * 16, first.W_E.flatten()).any())


def test_a_padded_query_looks_at_itself_and_nothing_else():
    _, _, ids, mask = batch()
    weights = MODELS["sinusoidal"](ids, attention_mask=mask).weights
    assert torch.equal(weights[0, :, 0, 0], torch.ones(4))
    assert float(weights[0, :, PADS:, :PADS].abs().max()) == 0.0  # no real token looks at a pad


MODEL = MODELS["learned"]
IDS = torch.zeros(2, 4, dtype=torch.long)


@pytest.mark.parametrize("call,error,words", [
    (lambda: decoder.TinyDecoder(scheme="relative", vocab_size=10), ValueError, ["scheme", "relative"]),
    (lambda: decoder.TinyDecoder(scheme="rotary", vocab_size=10, d_model=12, num_heads=4), ValueError,
     ["num_heads=4", "d_model=12", "even"]),
    (lambda: decoder.TinyDecoder(scheme="alibi", vocab_size=10, d_model=12, num_heads=5), ValueError, ["num_heads=5"]),
    (lambda: MODEL(IDS.float()), TypeError, ["ids", "float32"]),
    (lambda: MODEL(IDS + VOCAB), ValueError, ["ids", "vocab_size=50"]),
    (lambda: MODEL(IDS[0]), ValueError, ["ids", "(4,)"]),
    (lambda: MODEL(IDS, attention_mask=torch.ones(2, 5)), TypeError, ["attention_mask"]),
    (lambda: MODEL(IDS, attention_mask=torch.ones(2, 5, dtype=torch.long)), ValueError, ["attention_mask", "(2, 4)"]),
    (lambda: MODEL(IDS, position_ids=torch.arange(4) + 61), ValueError, ["position_ids", "64", "learned"]),
    (lambda: MODEL(IDS, position_ids=torch.arange(3)), ValueError, ["position_ids", "(3,)"]),
    (lambda: MODEL(IDS, cache=(1, 2, 3)), TypeError, ["cache", "KVCache"]),
    (lambda: MODEL(IDS, cache=MODEL(IDS[:1]).cache), ValueError, ["cache", "batch of 2"]),
    (lambda: decoder.decode_with_cache(MODEL, IDS, prefill=5), ValueError, ["prefill", "5"]),
    (lambda: decoder.decode_with_cache(torch.nn.Identity(), IDS), TypeError, ["model", "TinyDecoder"]),
    (lambda: decoder.decode_with_cache(MODEL, IDS, position_ids=torch.arange(4), forget_offset=True), ValueError,
     ["position_ids", "forget_offset"]),
    (lambda: decoder.decode_with_cache(MODEL, IDS, position_ids=torch.arange(3)), ValueError, ["position_ids", "(3,)"]),
    (lambda: decoder.decode_with_cache(MODEL, IDS, position_ids=torch.arange(4.0)), TypeError, ["position_ids"]),
])
def test_bad_input_is_refused_with_a_message_naming_it(call, error, words):
    with pytest.raises(error) as raised:
        call()
    for word in words:
        assert word in str(raised.value), f"{word!r} not in: {raised.value}"
