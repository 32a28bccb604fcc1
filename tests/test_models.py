"""posenc.models (transformer, training, copy_task): the task, the order-blind bound, the model's symmetry,
seeding. (The trained results are checked, with margins, by notebook 14 under nbval for one seed, and over the
saved seeds here, from benchmarks/results/previous_token.json.)"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from fractions import Fraction
from math import comb

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc import task
from posenc.attention import split_heads
from posenc.builder import sinusoidal_encoding
from posenc.models import copy_task, training, transformer
from posenc.schemes import apply_rotary

TINY = transformer.Settings(steps=3, d_model=8, num_heads=2, num_layers=1, batch_size=4)


def test_previous_token_batch_shifts_by_one():
    ids, targets = task.previous_token_batch(batch_size=3, length=6, vocab_size=10,
                                                   generator=torch.Generator().manual_seed(0))
    assert ids.shape == targets.shape == (3, 6) and ids.dtype == torch.int64
    assert (targets[:, 0] == -100).all() and torch.equal(targets[:, 1:], ids[:, :-1])


def order_blind_loop(ids, targets, causal=False):
    """The best order-blind guess, written out: at t, the most frequent token among those t sees
    (every other token; with causal=True, the ones before t)."""
    hits, count = 0.0, 0
    for row, answers in zip(ids.tolist(), targets.tolist(), strict=True):
        for t, answer in enumerate(answers):
            if answer == -100:
                continue
            if causal:
                others = Counter(row[:t])
            else:
                others = Counter(row)
                others[row[t]] -= 1
            top = max(others.values())
            best = [token for token, n in others.items() if n == top]
            hits += (answer in best) / len(best)
            count += 1
    return hits / count


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**16), length=st.integers(2, 20), vocab_size=st.integers(2, 10), causal=st.booleans())
def test_order_blind_accuracy_is_the_best_guess_written_out(seed, length, vocab_size, causal):
    ids, targets = task.previous_token_batch(batch_size=5, length=length, vocab_size=vocab_size,
                                                   generator=torch.Generator().manual_seed(seed))
    expected = order_blind_loop(ids, targets, causal)
    assert task.order_blind_accuracy(ids, targets, causal=causal) == pytest.approx(expected, abs=1e-9)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**16))
def test_without_positions_the_encoder_is_permutation_equivariant(seed):
    torch.manual_seed(seed)
    model = transformer.TinyTransformer(scheme="none", settings=TINY).eval()
    generator = torch.Generator().manual_seed(seed)
    ids = torch.randint(10, (2, 9), generator=generator)
    order = torch.randperm(9, generator=generator)
    with torch.no_grad():
        assert torch.allclose(model(ids[:, order]), model(ids)[:, order], atol=1e-5)


@pytest.mark.parametrize("scheme", ["learned", "sinusoidal", "rotary", "alibi"])
def test_every_scheme_breaks_the_symmetry(scheme):
    torch.manual_seed(0)
    model = transformer.TinyTransformer(scheme=scheme, settings=TINY).eval()
    ids = torch.arange(8)[None] % 10
    # Not a reversal: that keeps every |i - j|, which symmetric ALiBi sees.
    order = torch.tensor([3, 0, 7, 1, 5, 2, 6, 4])
    with torch.no_grad():
        assert not torch.allclose(model(ids[:, order]), model(ids)[:, order], atol=1e-5)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**16), length=st.integers(2, 20))
def test_symmetric_alibi_gives_a_reversed_input_the_reversed_output(seed, length):
    # 14's ceiling for symmetric ALiBi: a reversal keeps every |i - j|, so the model answers at L - 1 - t of the reversed
    # input what it answered at t, where the previous token is x_{t+1}, not x_{t-1}. The causal form has no such mirror.
    torch.manual_seed(seed)
    model = transformer.TinyTransformer(scheme="alibi", settings=TINY).eval()
    ids = torch.randint(10, (2, length), generator=torch.Generator().manual_seed(seed))
    with torch.no_grad():
        assert torch.allclose(model(ids.flip(1)), model(ids).flip(1), atol=1e-5)
        causal = transformer.TinyTransformer(scheme="alibi", settings=transformer.Settings(causal=True)).eval()
        assert length < 3 or not torch.allclose(causal(ids.flip(1)), causal(ids).flip(1), atol=1e-5)


def test_causal_models_do_not_look_ahead():
    torch.manual_seed(0)
    for scheme in transformer.SCHEMES:
        model = transformer.TinyTransformer(scheme=scheme, settings=transformer.Settings(
            causal=True, d_model=8, num_heads=2, num_layers=2)).eval()
        ids = torch.randint(10, (1, 10), generator=torch.Generator().manual_seed(1))
        changed = ids.clone()
        changed[0, 6:] = (changed[0, 6:] + 1) % 10
        with torch.no_grad():
            assert torch.allclose(model(ids)[0, :6], model(changed)[0, :6], atol=1e-6), scheme


def test_training_is_seeded_and_leaves_the_thread_count_alone():
    threads = torch.get_num_threads()
    torch.set_num_threads(3)  # not 1, the count training sets (and the tests' own: tests/conftest.py)
    try:
        first = training.train("rotary", settings=TINY)
        second = training.train("rotary", settings=TINY)
        assert first.losses == second.losses and len(first.losses) == TINY.steps
        assert torch.get_num_threads() == 3
    finally:
        torch.set_num_threads(threads)
    assert not first.model.training


def test_progress_is_reported_and_a_learned_table_has_no_answer_beyond_its_length():
    seen = []
    result = training.train("learned", settings=TINY, progress=lambda *a: seen.append(a))
    assert seen[-1][:3] == ("learned", TINY.steps, TINY.steps)
    assert training.accuracy(result.model, length=TINY.longest) is not None
    assert training.accuracy(result.model, length=TINY.longest + 1) is None
    # The state before training is kept, and training moved the table away from it.
    fresh = transformer.TinyTransformer(scheme="learned", settings=TINY)
    assert result.initial_state.keys() == fresh.state_dict().keys()
    before, after = result.initial_state["position.weight"], result.model.position.weight.detach()
    assert before.shape == after.shape == (TINY.longest, TINY.d_model) and not torch.allclose(before, after)
    with pytest.raises(ValueError, match="1 to 16 positions"):
        result.model(torch.zeros(1, 17, dtype=torch.int64))


def test_compare_gives_a_table_per_scheme_and_length(capsys):
    comparison = training.compare(["none", "learned"], settings=TINY, lengths=[8, 32])
    assert set(comparison.accuracies) == {"none", "learned"}
    assert comparison.accuracies["learned"][32] is None and 0 <= comparison.accuracies["none"][32] <= 1
    assert "no rows" in comparison.table().splitlines()[2]
    some = comparison.table(lengths=[8]).splitlines()  # only the columns asked for
    assert some[0].split() == ["scheme", "8"] and "no rows" not in some[2]
    with pytest.raises(ValueError, match="measured"):
        comparison.table(lengths=[16])
    assert "trained in" in capsys.readouterr().out


# The order-blind bound, exactly ---------------------------------------------------------


def sequences_with_counts_at_most(k, *, longest, vocab_size):
    """[N(0), ..., N(longest)]: how many sequences of each length have no symbol more than k times (exact ints)."""
    counts = [1] + [0] * longest  # no symbols yet: only the empty sequence
    for _ in range(vocab_size):  # one more symbol, used j <= k times, in any j of the i places
        counts = [sum(comb(i, j) * counts[i - j] for j in range(min(k, i) + 1)) for i in range(longest + 1)]
    return counts


def expected_top_counts(*, longest, vocab_size):
    """E[how often the most frequent symbol occurs] among m random symbols, for m = 0 .. longest, as fractions:
    the sum over k of P(top count > k)."""
    at_most = [sequences_with_counts_at_most(k, longest=longest, vocab_size=vocab_size) for k in range(longest)]
    return [sum(1 - Fraction(at_most[k][m], vocab_size**m) for k in range(m)) for m in range(longest + 1)]


def exact_order_blind(*, length, vocab_size, causal):
    """The best order-blind guess's accuracy over all random inputs, averaged over the positions t = 1 .. length - 1.

    Given the m tokens position t sees, every order of them is equally likely, so the previous
    token is symbol s with probability count_s / m, and guessing a most frequent one is right
    with probability top count / m (ties included). An encoder's position sees m = length - 1
    other tokens; a decoder's position t sees the m = t tokens before it.
    """
    top = expected_top_counts(longest=length - 1, vocab_size=vocab_size)
    if causal:
        return sum(top[t] / t for t in range(1, length)) / (length - 1)
    return top[length - 1] / (length - 1)


def every_sequence(*, length, vocab_size):
    ids = torch.tensor(list(itertools.product(range(vocab_size), repeat=length)), dtype=torch.int64)
    targets = torch.full_like(ids, -100)
    targets[:, 1:] = ids[:, :-1]
    return ids, targets


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("length,vocab_size", [(2, 2), (5, 3), (6, 2), (4, 4), (7, 3)])
def test_order_blind_accuracy_over_every_input_is_the_exact_expectation(length, vocab_size, causal):
    # Scored on every possible input once, the measured share is the expectation itself.
    ids, targets = every_sequence(length=length, vocab_size=vocab_size)
    measured = task.order_blind_accuracy(ids, targets, causal=causal)
    exact = float(exact_order_blind(length=length, vocab_size=vocab_size, causal=causal))
    assert measured == pytest.approx(exact, abs=1e-12)


def test_order_blind_numbers_the_docstring_and_notebook_14_state():
    encoder = [exact_order_blind(length=n, vocab_size=10, causal=False) for n in (8, 16, 32, 64)]
    decoder = [exact_order_blind(length=n, vocab_size=10, causal=True) for n in (8, 16, 32, 64)]
    assert [round(float(a), 3) for a in encoder] == [0.317, 0.241, 0.195, 0.165]
    assert [round(float(a), 3) for a in decoder] == [0.482, 0.367, 0.287, 0.231]
    for e, d in zip(encoder, decoder, strict=True):
        assert f"{float(e):.3f}" in task.order_blind_accuracy.__doc__
        assert f"{float(d):.3f}" in task.order_blind_accuracy.__doc__


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("length,vocab_size", [(2, 2), (5, 3), (6, 2), (4, 4), (7, 3), (5, 5), (4, 7)])
def test_the_package_expectation_is_the_share_over_every_input(length, vocab_size, causal):
    # Every possible input scored once by the written-out guess's vectorised form: the expectation by enumeration.
    # (vocab_size 3, 5, 7: the package merges symbols by doubling, and adds a single one where the binary digit is 1.)
    ids, targets = every_sequence(length=length, vocab_size=vocab_size)
    measured = task.order_blind_accuracy(ids, targets, causal=causal)
    expected = task.expected_order_blind_accuracy(length=length, vocab_size=vocab_size, causal=causal)
    assert expected == pytest.approx(measured, abs=1e-12)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("length,vocab_size", [(8, 10), (16, 10), (32, 10), (64, 10), (30, 17), (40, 2), (12, 100)])
def test_the_package_expectation_matches_exact_fractions(length, vocab_size, causal):
    exact = exact_order_blind(length=length, vocab_size=vocab_size, causal=causal)
    assert task.expected_order_blind_accuracy(length=length, vocab_size=vocab_size, causal=causal) == \
        pytest.approx(float(exact), abs=1e-12)


def test_the_expectation_refuses_sizes_it_cannot_compute_quickly():
    with pytest.raises(ValueError, match="length must be an int from 2 to 128"):
        task.expected_order_blind_accuracy(length=129, vocab_size=10)
    with pytest.raises(ValueError, match="vocab_size must be an int from 2 to 1000"):
        task.expected_order_blind_accuracy(length=8, vocab_size=1001)


@pytest.mark.parametrize("causal", [False, True])
def test_the_evaluation_batch_is_near_the_expectation(causal):
    # 256 x 15 positions: the measured share is within a few standard errors of the exact value.
    ids, targets = training.evaluation_batch(length=16)
    measured = task.order_blind_accuracy(ids, targets, causal=causal)
    assert abs(measured - float(exact_order_blind(length=16, vocab_size=10, causal=causal))) < 0.02


def test_a_causal_guess_has_nothing_to_go_on_at_position_0():
    ids = torch.tensor([[1, 2, 3]])
    with pytest.raises(ValueError, match="not position 0 when causal=True"):
        task.order_blind_accuracy(ids, ids.clone(), causal=True)
    # Position 1 sees only x_0, which is its answer: the causal guess is always right there.
    targets = torch.tensor([[-100, 1, -100]])
    assert task.order_blind_accuracy(ids, targets, causal=True) == 1.0
    assert task.order_blind_accuracy(ids, targets) == 0.5  # an encoder's position 1 sees 1 and 3: a tie


# The model: embeddings scaled as the paper does, attention as the reference implementation ----


def test_token_embeddings_are_scaled_by_sqrt_d_model_unless_told_not_to():
    assert transformer.Settings().scale_embeddings is True
    ids = torch.tensor([[3, 1, 4, 1, 5]])
    for scale, factor in ((True, math.sqrt(32)), (False, 1.0)):
        torch.manual_seed(0)
        model = transformer.TinyTransformer(scheme="sinusoidal", settings=transformer.Settings(scale_embeddings=scale))
        table = sinusoidal_encoding(max_sequence_length=5, d_model=32)
        expected = model.embedding.weight.detach()[ids] * factor + table
        assert torch.allclose(model.embed(ids).detach(), expected, atol=1e-6)
    # Why it matters: at initialisation a token's row is about 0.02 * sqrt(32) long, the sinusoid's 4 (06's imbalance).
    rows = model.embedding.weight.detach().norm(dim=-1)
    assert 0.05 < rows.mean() < 0.2 and table.norm(dim=-1).allclose(torch.full((5,), 4.0))


def test_only_the_learned_table_adds_trainable_numbers_one_row_per_trained_position():
    # Notebook 14's model list: the learned table adds 16 x 32 = 512 trainable numbers; the other schemes add none.
    settings = transformer.Settings()
    trainable = {scheme: sum(p.numel() for p in transformer.TinyTransformer(scheme=scheme, settings=settings).parameters()
                             if p.requires_grad) for scheme in transformer.SCHEMES}
    assert settings.longest * settings.d_model == 512
    assert {s: n - trainable["none"] for s, n in trainable.items()} == {
        s: (512 if s == "learned" else 0) for s in transformer.SCHEMES}


def test_every_scheme_starts_from_the_same_weights_for_the_same_seed():
    # The models may differ only in their position scheme: the learned table is drawn after everything else.
    starts = {}
    for scheme in transformer.SCHEMES:
        torch.manual_seed(0)
        starts[scheme] = transformer.TinyTransformer(scheme=scheme).state_dict()
    shared = starts["none"]
    for scheme, state in starts.items():
        assert set(state) - set(shared) == ({"position.weight"} if scheme == "learned" else set()), scheme
        for name, value in shared.items():
            assert torch.equal(state[name], value), f"{scheme}: {name}"


@pytest.mark.parametrize("causal", [False, True])
def test_attention_without_a_scheme_is_torchs_multi_head_attention(causal):
    torch.manual_seed(0)
    ours = transformer.Attention(scheme="none", d_model=8, num_heads=2, causal=causal)
    reference = torch.nn.MultiheadAttention(8, 2, batch_first=True)
    with torch.no_grad():
        reference.in_proj_weight.copy_(ours.qkv.weight)  # W_Q, W_K, W_V stacked, as torch stacks them
        reference.in_proj_bias.copy_(ours.qkv.bias)
        reference.out_proj.weight.copy_(ours.out.weight)
        reference.out_proj.bias.copy_(ours.out.bias)
    x = torch.randn(3, 6, 8, generator=torch.Generator().manual_seed(1))
    hidden = torch.ones(6, 6, dtype=torch.bool).triu(1) if causal else None
    expected, weights = reference(x, x, x, attn_mask=hidden, average_attn_weights=False)
    assert torch.allclose(ours(x), expected, atol=1e-6)
    assert torch.allclose(ours.last_weights, weights, atol=1e-6)


def test_alibi_and_rotary_enter_where_the_papers_put_them():
    torch.manual_seed(0)
    x = torch.randn(1, 5, 8, generator=torch.Generator().manual_seed(2))
    plain = transformer.Attention(scheme="none", d_model=8, num_heads=2, causal=True)
    for scheme in ("alibi", "rotary"):
        other = transformer.Attention(scheme=scheme, d_model=8, num_heads=2, causal=True)
        other.load_state_dict(plain.state_dict())
        plain(x), other(x)
        q = plain.qkv(x)[..., :8].view(1, 5, 2, 4).transpose(1, 2)  # columns 0-7: the queries, 4 per head
        k = plain.qkv(x)[..., 8:16].view(1, 5, 2, 4).transpose(1, 2)
        if scheme == "alibi":  # the scores plus -m (i - j); two heads: m = 2^-4, 2^-8 (Press et al. 2022, section 3)
            slopes = torch.tensor([2.0**-4, 2.0**-8])
            distance = torch.arange(5)[:, None] - torch.arange(5)[None, :]
            scores = q @ k.transpose(-2, -1) / 2 - slopes[:, None, None] * distance
        else:  # queries and keys turned by their positions before the dot product
            scores = apply_rotary(q) @ apply_rotary(k).transpose(-2, -1) / 2
        scores = scores.masked_fill(torch.ones(5, 5, dtype=torch.bool).triu(1), float("-inf"))
        assert torch.allclose(other.last_weights, torch.softmax(scores, dim=-1).detach(), atol=1e-6), scheme


def test_attention_weights_are_one_row_per_query():
    torch.manual_seed(0)
    settings = transformer.Settings(causal=True, d_model=8, num_heads=2)
    model = transformer.TinyTransformer(scheme="rotary", settings=settings)
    ids = torch.randint(10, (3, 7), generator=torch.Generator().manual_seed(0))
    weights = training.attention_map(model, ids, layer=1)
    assert weights.shape == (3, 2, 7, 7)
    assert torch.allclose(weights.sum(-1), torch.ones(3, 2, 7))
    assert (weights.triu(1) == 0).all()  # causal: nothing after the query


def _untrained_rotary(seed, *, d_model=8, batch=3, causal=False):
    """An untrained two-head rotary model set up for lengths 4-6, and a batch of 9-token inputs: longer than it trains on."""
    torch.manual_seed(seed)
    model = transformer.TinyTransformer(scheme="rotary", settings=transformer.Settings(
        d_model=d_model, num_heads=2, shortest=4, longest=6, causal=causal))
    ids = torch.randint(10, (batch, 9), generator=torch.Generator().manual_seed(seed))
    return model, ids


def test_the_previous_token_head_is_the_one_that_looks_back_most():
    model, ids = _untrained_rotary(3, batch=4)
    best, where = -1.0, None
    for layer in range(2):
        weights = training.attention_map(model, ids, layer=layer)
        for head in range(2):
            # Query t's weight on key t - 1, for t = 1 .. 5 (the trained positions of a model with longest=6).
            share = sum(float(weights[b, head, t, t - 1]) for b in range(4) for t in range(1, 6)) / 20
            if share > best:
                best, where = share, (layer, head)
    assert training.previous_token_head(model, ids) == where


@pytest.mark.parametrize("causal", [False, True])
def test_weight_by_offset_adds_up_the_heads_weights_offset_by_offset(causal):
    model, ids = _untrained_rotary(2, causal=causal)
    layer, head = training.previous_token_head(model, ids)
    weights = training.attention_map(model, ids, layer=layer)[:, head]
    expected = Counter()
    for b, query, key in itertools.product(range(3), range(5, 9), range(9)):
        expected[key - query] += float(weights[b, query, key]) / (3 * 4)
    found = training.weight_by_offset(model, ids, queries=range(5, 9))
    assert found.keys() == {o for o, w in expected.items() if w > 0}
    assert all(found[o] == pytest.approx(expected[o], abs=1e-6) for o in found)
    assert list(found.values()) == sorted(found.values(), reverse=True) and sum(found.values()) == pytest.approx(1)
    assert causal == (max(found) == 0)  # a causal head sees no key ahead of its query


@pytest.mark.parametrize("causal", [False, True])
def test_score_by_pair_splits_the_heads_own_scores_pair_by_pair(causal):
    # The scores by hand: q . k / sqrt(head_dim) with the model's own W_Q, W_K and RoPE; their softmax must be the
    # weights the head used, and each back's pair parts must add up to the mean of the scores `back` below the diagonal.
    model, ids = _untrained_rotary(4, d_model=16, causal=causal)
    layer, head = training.previous_token_head(model, ids)
    with torch.no_grad():
        x = model.embed(ids)
        for block in model.blocks[:layer]:
            x = block(x)
        attention = model.blocks[layer].attention
        q, k, _ = split_heads(attention.qkv(model.blocks[layer].norm1(x)), num_heads=6).chunk(3, dim=1)
        q, k = attention.rotate(q[:, head]), attention.rotate(k[:, head])
        scores = q @ k.transpose(-1, -2) / 8 ** 0.5  # (3, 9, 9)
    unmasked = scores  # the parts are taken before the mask: keys ahead (a negative back) too
    if causal:
        scores = scores.masked_fill(torch.ones(9, 9, dtype=torch.bool).triu(1), float("-inf"))
    assert torch.allclose(scores.softmax(-1), training.attention_map(model, ids, layer=layer)[:, head], atol=1e-6)
    found = training.score_by_pair(model, ids, backs=[1, 4, 8, 0, -3])
    assert list(found) == [1, 4, 8, 0, -3] and all(part.shape == (4,) for part in found.values())
    for back, part in found.items():
        assert float(part.sum()) == pytest.approx(float(unmasked.diagonal(offset=-back, dim1=-2, dim2=-1).mean()), abs=1e-5)


def test_score_by_pair_needs_a_rotary_model_and_backs_inside_the_input():
    ids = torch.zeros(2, 5, dtype=torch.int64)
    with pytest.raises(ValueError, match="needs a rotary model"):
        training.score_by_pair(transformer.TinyTransformer(scheme="alibi", settings=TINY), ids, backs=[1])
    with pytest.raises(ValueError, match="backs shorter than the 5 positions"):
        training.score_by_pair(transformer.TinyTransformer(scheme="rotary", settings=TINY), ids, backs=[1, 5])
    with pytest.raises(ValueError, match="backs shorter than the 5 positions"):
        training.score_by_pair(transformer.TinyTransformer(scheme="rotary", settings=TINY), ids, backs=[-5])
    with pytest.raises(TypeError, match="backs must be a non-empty list"):
        training.score_by_pair(transformer.TinyTransformer(scheme="rotary", settings=TINY), ids, backs=[])
    with pytest.raises(TypeError, match=r"negative: a key ahead"):
        training.score_by_pair(transformer.TinyTransformer(scheme="rotary", settings=TINY), ids, backs=[1.5])


def test_compare_keeps_one_line_per_model_outside_jupyter(capsys):
    training.compare(["none", "rotary"], settings=TINY, lengths=[8])
    out = capsys.readouterr().out
    assert "\r" not in out and len(out.splitlines()) == 2
    assert out.splitlines()[0].startswith("none        trained in") and "3 steps" in out


@pytest.mark.parametrize("call,message", [
    (lambda: transformer.Settings(d_model=30, num_heads=4), "d_model must be num_heads times an even head size"),
    (lambda: transformer.Settings(shortest=10, longest=8), "longest"),
    (lambda: transformer.TinyTransformer(scheme="rope"), "scheme must be one of"),
    (lambda: training.compare("rotary"), "schemes must be a non-empty list"),
    (lambda: transformer.TinyTransformer(scheme="none")(torch.zeros(1, 5)), "int64"),
    (lambda: transformer.TinyTransformer(scheme="none")(torch.full((1, 5), 10)), r"token ids in \[0, 10\)"),
    (lambda: transformer.Settings(scale_embeddings=1), "scale_embeddings must be True or False"),
    (lambda: task.order_blind_accuracy(torch.zeros(1, 3, dtype=torch.int64), torch.zeros(1, 3, dtype=torch.int64),
                                             causal="yes"), "causal must be True or False"),
    (lambda: training.attention_map(transformer.TinyTransformer(scheme="none"),
                                          torch.zeros(1, 3, dtype=torch.int64), layer=2),
     "layer must be an int from 0 to 1"),
    (lambda: training.attention_map("model", torch.zeros(1, 3, dtype=torch.int64)), "model must be"),
])
def test_bad_input_is_named(call, message):
    with pytest.raises((TypeError, ValueError), match=message):
        call()


# Stretching the context (posenc.models.copy_task, notebook 16): the copy task, the RoPE model whose frequencies are numbers --

from posenc.rope_scaling import rope_frequencies, yarn_attention_factor  # noqa: E402
from posenc.task import repeat_block_batch  # noqa: E402

COPY = copy_task.CopySettings(steps=3, d_model=8, num_heads=2, num_layers=1, batch_size=4, shortest_block=2,
                            longest_block=4)


def test_repeat_block_batch_repeats_and_scores_the_repeat_after_its_first_token():
    ids, targets = repeat_block_batch(batch_size=3, block_length=5, vocab_size=10,
                                      generator=torch.Generator().manual_seed(0))
    assert ids.shape == targets.shape == (3, 10) and ids.dtype == torch.int64
    assert torch.equal(ids[:, :5], ids[:, 5:])
    assert (targets[:, :5] == -100).all() and (targets[:, -1] == -100).all()
    assert torch.equal(targets[:, 5:9], ids[:, 6:10])  # next token, on the repeat


def test_copy_model_with_plain_rope_is_the_experiments_rotary_decoder():
    settings = copy_task.CopySettings(d_model=8, num_heads=2, num_layers=2, shortest_block=2, longest_block=4, seed=3)
    model = copy_task.copy_model(settings)
    torch.manual_seed(3)
    plain = transformer.TinyTransformer(scheme="rotary", settings=copy_task._model_settings(settings))
    ids = torch.randint(10, (2, 13), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        assert torch.equal(model(ids), plain(ids))
        assert torch.equal(copy_task.stretched(model, scaling=None)(ids), plain(ids))
        for rule in ("linear", "ntk", "yarn", "llama3"):
            assert torch.allclose(copy_task.stretched(model, scaling=rule, factor=1.0)(ids), plain(ids), atol=1e-6)


def test_stretched_swaps_frequencies_in_a_copy_and_yarn_scales_the_scores_by_its_square():
    model = copy_task.copy_model(COPY)
    before = [block.attention.frequencies.clone() for block in model.blocks]
    yarn = copy_task.stretched(model, scaling="yarn", factor=4.0)
    linear = copy_task.stretched(model, scaling="linear", factor=2.0)
    assert all(torch.equal(block.attention.frequencies, f) for block, f in zip(model.blocks, before, strict=True))
    assert model.blocks[0].attention.attention_factor == 1.0
    attention = yarn.blocks[0].attention
    assert attention.attention_factor == yarn_attention_factor(factor=4.0)
    torch.testing.assert_close(attention.frequencies, rope_frequencies(head_dim=4, scaling="yarn", factor=4.0,
                                                                       original_max_position_embeddings=8))
    torch.testing.assert_close(linear.blocks[0].attention.frequencies, before[0] / 2)
    # The scores, computed by hand: RoPE with the yarn frequencies, times the factor squared.
    x = torch.randn(1, 6, 8, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        attention(x)
        q, k, _ = split_heads_of(attention, x)
        q = apply_rotary(q, frequencies=attention.frequencies)
        k = apply_rotary(k, frequencies=attention.frequencies)
        scores = q @ k.transpose(-2, -1) * attention.attention_factor**2 / 2
        scores = scores.masked_fill(torch.ones(6, 6, dtype=torch.bool).triu(1), float("-inf"))
    torch.testing.assert_close(attention.last_weights, torch.softmax(scores, dim=-1))


def split_heads_of(attention, x):
    from posenc.attention import split_heads
    return split_heads(attention.qkv(x), num_heads=3 * attention.num_heads).chunk(3, dim=1)


def test_partial_rotation_turns_only_the_first_columns_of_each_head():
    settings = copy_task.CopySettings(d_model=16, num_heads=2, num_layers=1, shortest_block=2, longest_block=4,
                                    partial_rotary_factor=0.25)
    assert copy_task.rotary_dim_of(settings) == 2
    model = copy_task.copy_model(settings)
    attention = model.blocks[0].attention
    assert attention.rotary_dim == 2 and attention.frequencies.shape == (1,)
    x = torch.randn(1, 5, 16, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        attention(x)
        q, k, _ = split_heads_of(attention, x)
        q, k = apply_rotary(q, rotary_dim=2), apply_rotary(k, rotary_dim=2)
        scores = (q @ k.transpose(-2, -1) / math.sqrt(8)).masked_fill(torch.ones(5, 5, dtype=torch.bool).triu(1),
                                                                    float("-inf"))
    torch.testing.assert_close(attention.last_weights, torch.softmax(scores, dim=-1))
    with pytest.raises(ValueError, match="partial_rotary_factor"):
        copy_task.CopySettings(d_model=16, num_heads=2, partial_rotary_factor=0.1)  # 0 columns of 8


def test_wider_heads_than_d_model_over_num_heads():
    settings = copy_task.CopySettings(d_model=8, num_heads=2, head_dim=6, num_layers=1, shortest_block=2, longest_block=4)
    model = copy_task.copy_model(settings)
    assert model.blocks[0].attention.qkv.weight.shape == (36, 8)
    assert model(torch.zeros(1, 8, dtype=torch.int64)).shape == (1, 8, settings.vocab_size)


def test_train_copy_is_seeded_and_fine_tune_leaves_the_model_alone():
    first, second = copy_task.train_copy(settings=COPY), copy_task.train_copy(settings=COPY)
    assert first.losses == second.losses and len(first.losses) == 3
    state = {key: value.clone() for key, value in first.model.state_dict().items()}
    tuned = copy_task.fine_tune(first.model, scaling="linear", factor=2.0, steps=2)
    assert len(tuned.losses) == 2 and tuned.scheme == "linear x2 tuned"
    assert all(torch.equal(value, first.model.state_dict()[key]) for key, value in state.items())
    torch.testing.assert_close(tuned.model.blocks[0].attention.frequencies, first.model.blocks[0].attention.frequencies / 2)
    accuracy = copy_task.copy_accuracy(first.model, length=8, batch_size=8)
    assert 0.0 <= accuracy <= 1.0
    assert accuracy == copy_task.copy_accuracy(first.model, length=8, batch_size=8)


@pytest.mark.parametrize("call,message", [
    (lambda: copy_task.CopySettings(partial_rotary_factor=0.0), "partial_rotary_factor"),
    (lambda: copy_task.CopySettings(shortest_block=5, longest_block=4), "longest_block"),
    (lambda: copy_task.train_copy(settings=TINY), "settings must be a posenc.models.copy_task.CopySettings"),
    (lambda: copy_task.stretched(transformer.TinyTransformer(scheme="rotary", settings=TINY), scaling="linear"), "model"),
    (lambda: copy_task.stretched(copy_task.copy_model(COPY), scaling="pi", factor=2.0), "scaling must be one of"),
    (lambda: copy_task.stretched(copy_task.copy_model(COPY), scaling="linear", factor=0.5), "factor"),
    (lambda: copy_task.copy_accuracy(copy_task.copy_model(COPY), length=9), "length must be even"),
    (lambda: copy_task.fine_tune(copy_task.copy_model(COPY), steps=0), "steps"),
    (lambda: repeat_block_batch(batch_size=2, block_length=1, vocab_size=10), "block_length"),
    (lambda: transformer.TinyTransformer(scheme="rotary", settings=TINY, rotary_dim=6), "rotary_dim"),
])
def test_stretch_bad_input_is_named(call, message):
    with pytest.raises((TypeError, ValueError), match=message):
        call()


def test_train_copy_and_fine_tune_show_one_line_each_with_progress_true(capsys):
    result = copy_task.train_copy(settings=COPY, progress=True)
    copy_task.fine_tune(result.model, steps=2, progress=True)
    lines = capsys.readouterr().out.splitlines()
    assert "\r" not in "".join(lines) and len(lines) == 2
    assert lines[0].startswith("rotary      trained in") and "3 steps" in lines[0]
    assert lines[1].startswith("linear x2 tuned trained in") and "2 steps" in lines[1]
    with pytest.raises(TypeError, match="progress"):
        copy_task.train_copy(settings=COPY, progress="yes")


# The trained results over seeds: benchmarks/bench_previous_token.py ------------------------------------------

def _previous_token_benchmark():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_previous_token.py"
    spec = importlib.util.spec_from_file_location("bench_previous_token", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_claim_about_the_trained_models_holds_in_every_saved_seed():
    # The saved results cover every scheme, encoder and decoder, at 1x, 2x and 4x, over at least three seeds, and
    # every claim the notebook makes about them holds there with its margin.
    bench = _previous_token_benchmark()
    import json

    record = json.loads(bench.OUTPUT.read_text())
    assert len(record["seeds"]) >= 3 and record["lengths"] == [8, 16, 32, 64]
    for mode in ("encoder", "decoder"):
        for scheme in transformer.SCHEMES:
            assert all(len(record["accuracy"][mode]["250"][scheme][str(n)]) == len(record["seeds"])
                       for n in record["lengths"]), (mode, scheme)
    claims = bench.check_claims(record)
    failed = [row["claim"] for row in claims.rows if not row["holds"]]
    assert not failed and len(claims.rows) >= 60, failed


def test_a_claim_that_fails_in_one_seed_fails():
    bench = _previous_token_benchmark()
    claims = bench.Claims()
    claims.check("above 0.5 in every seed", [0.9, 0.49, 0.8], above=0.5)
    claims.check("below 0.5 in every seed", [0.1, 0.2, 0.3], below=0.5)
    claims.check("a missing value fails", [0.9, None], above=0.5)
    assert [row["holds"] for row in claims.rows] == [False, True, False]
    assert claims.rows[0]["margin"] == pytest.approx(-0.01) and claims.rows[1]["margin"] == pytest.approx(0.2)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**16))
def test_symmetric_alibi_cannot_tell_a_sequence_from_its_reversal(seed):
    # Why 0.55 is a ceiling for the encoder with symmetric ALiBi: reversing the input reverses the output, so the
    # model answers position i of x as it answers position L-1-i of x reversed, whose previous token is x's next one.
    torch.manual_seed(seed)
    model = transformer.TinyTransformer(scheme="alibi", settings=TINY).eval()
    ids = torch.randint(10, (2, 9), generator=torch.Generator().manual_seed(seed))
    with torch.no_grad():
        assert torch.allclose(model(ids.flip(1)), model(ids).flip(1), atol=1e-5)
