"""posenc.experiment: the task, the order-blind bound, the model's symmetry, seeding. (The trained results are
checked, with margins, by notebook 14 under nbval.)"""

from __future__ import annotations

from collections import Counter

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc import experiment

TINY = experiment.Settings(steps=3, d_model=8, num_heads=2, num_layers=1, batch_size=4)


def test_previous_token_batch_shifts_by_one():
    ids, targets = experiment.previous_token_batch(batch_size=3, length=6, vocab_size=10,
                                                   generator=torch.Generator().manual_seed(0))
    assert ids.shape == targets.shape == (3, 6) and ids.dtype == torch.int64
    assert (targets[:, 0] == -100).all() and torch.equal(targets[:, 1:], ids[:, :-1])


def order_blind_loop(ids, targets):
    """The best order-blind guess, written out: at t, the most frequent token once the one at t is set aside."""
    hits, count = 0.0, 0
    for row, answers in zip(ids.tolist(), targets.tolist()):
        for t, answer in enumerate(answers):
            if answer == -100:
                continue
            others = Counter(row)
            others[row[t]] -= 1
            top = max(others.values())
            best = [token for token, n in others.items() if n == top]
            hits += (answer in best) / len(best)
            count += 1
    return hits / count


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**16), length=st.integers(2, 20), vocab_size=st.integers(2, 10))
def test_order_blind_accuracy_is_the_best_guess_written_out(seed, length, vocab_size):
    ids, targets = experiment.previous_token_batch(batch_size=5, length=length, vocab_size=vocab_size,
                                                   generator=torch.Generator().manual_seed(seed))
    assert experiment.order_blind_accuracy(ids, targets) == pytest.approx(order_blind_loop(ids, targets), abs=1e-6)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**16))
def test_without_positions_the_encoder_is_permutation_equivariant(seed):
    torch.manual_seed(seed)
    model = experiment.TinyTransformer(scheme="none", settings=TINY).eval()
    generator = torch.Generator().manual_seed(seed)
    ids = torch.randint(10, (2, 9), generator=generator)
    order = torch.randperm(9, generator=generator)
    with torch.no_grad():
        assert torch.allclose(model(ids[:, order]), model(ids)[:, order], atol=1e-5)


@pytest.mark.parametrize("scheme", ["learned", "sinusoidal", "rotary", "alibi"])
def test_every_scheme_breaks_the_symmetry(scheme):
    torch.manual_seed(0)
    model = experiment.TinyTransformer(scheme=scheme, settings=TINY).eval()
    ids = torch.arange(8)[None] % 10
    order = torch.tensor([3, 0, 7, 1, 5, 2, 6, 4])  # not a reversal: that keeps every |i - j|, which symmetric ALiBi sees
    with torch.no_grad():
        assert not torch.allclose(model(ids[:, order]), model(ids)[:, order], atol=1e-5)


def test_causal_models_do_not_look_ahead():
    torch.manual_seed(0)
    for scheme in experiment.SCHEMES:
        model = experiment.TinyTransformer(scheme=scheme, settings=experiment.Settings(
            causal=True, d_model=8, num_heads=2, num_layers=2)).eval()
        ids = torch.randint(10, (1, 10), generator=torch.Generator().manual_seed(1))
        changed = ids.clone()
        changed[0, 6:] = (changed[0, 6:] + 1) % 10
        with torch.no_grad():
            assert torch.allclose(model(ids)[0, :6], model(changed)[0, :6], atol=1e-6), scheme


def test_training_is_seeded_and_leaves_the_thread_count_alone():
    threads = torch.get_num_threads()
    first = experiment.train("rotary", settings=TINY)
    second = experiment.train("rotary", settings=TINY)
    assert first.losses == second.losses and len(first.losses) == TINY.steps
    assert torch.get_num_threads() == threads
    assert not first.model.training


def test_progress_is_reported_and_a_learned_table_has_no_answer_beyond_its_length():
    seen = []
    result = experiment.train("learned", settings=TINY, progress=lambda *a: seen.append(a))
    assert seen[-1][:3] == ("learned", TINY.steps, TINY.steps)
    assert experiment.accuracy(result.model, length=TINY.longest) is not None
    assert experiment.accuracy(result.model, length=TINY.longest + 1) is None
    # The state before training is kept, and training moved the table away from it.
    fresh = experiment.TinyTransformer(scheme="learned", settings=TINY)
    assert result.initial_state.keys() == fresh.state_dict().keys()
    before, after = result.initial_state["position.weight"], result.model.position.weight.detach()
    assert before.shape == after.shape == (TINY.longest, TINY.d_model) and not torch.allclose(before, after)
    with pytest.raises(ValueError, match="1 to 16 positions"):
        result.model(torch.zeros(1, 17, dtype=torch.int64))


def test_compare_gives_a_table_per_scheme_and_length(capsys):
    comparison = experiment.compare(["none", "learned"], settings=TINY, lengths=[8, 32])
    assert set(comparison.accuracies) == {"none", "learned"}
    assert comparison.accuracies["learned"][32] is None and 0 <= comparison.accuracies["none"][32] <= 1
    assert "no rows" in comparison.table().splitlines()[2]
    assert "trained in" in capsys.readouterr().out


@pytest.mark.parametrize("call,message", [
    (lambda: experiment.Settings(d_model=30, num_heads=4), "d_model must be num_heads times an even head size"),
    (lambda: experiment.Settings(shortest=10, longest=8), "longest"),
    (lambda: experiment.TinyTransformer(scheme="rope"), "scheme must be one of"),
    (lambda: experiment.compare("rotary"), "schemes must be a non-empty list"),
    (lambda: experiment.TinyTransformer(scheme="none")(torch.zeros(1, 5)), "int64"),
    (lambda: experiment.TinyTransformer(scheme="none")(torch.full((1, 5), 10)), "token ids from 0 to 9"),
])
def test_bad_input_is_named(call, message):
    with pytest.raises((TypeError, ValueError), match=message):
        call()
