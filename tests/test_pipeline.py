"""Sentence -> padded tokens -> one-hot -> X = one_hot @ W_E -> X + PE -> Q, K, V."""

import math

import pytest
import torch

from posenc import attention, embedding, example, tokens
from posenc.encoding import PositionalEncoding
from posenc.positions import position_ids

# The walkthrough's original corpus, fixed here: these tests hold facts of the checkers and the pipeline, which must
# not move when a teacher changes the running example (src/posenc/example.py).
CORPUS = ("My name is John", "My name is Grant", "What is your name?", "John is my friend")


def test_tokenize_splits_words_and_punctuation():
    assert tokens.tokenize("My name is John.") == ["my", "name", "is", "john", "."]
    assert tokens.tokenize("Don't stop", lowercase=False) == ["Don't", "stop"]
    assert tokens.tokenize("   ") == []


def test_vocabulary_puts_special_tokens_first_and_maps_unknown_words():
    vocab = tokens.build_vocabulary(["My name is John", "my name is Grant"])
    assert vocab.tokens == ("<PAD>", "<UNK>", "my", "name", "is", "john", "grant")
    assert vocab.vocab_size == len(vocab) == 7
    assert (vocab.pad_id, vocab.unk_id) == (0, 1)
    assert vocab.ids(["john", "paul"]) == [5, 1]
    assert vocab.decode([2, 3, 0]) == ["my", "name", "<PAD>"]
    assert "john" in vocab and "paul" not in vocab


def test_pad_fills_to_max_sequence_length_and_accepts_an_exact_fit():
    assert tokens.pad(["my", "name"], max_sequence_length=4) == ["my", "name", "<PAD>", "<PAD>"]
    assert tokens.pad(["a", "b", "c"], max_sequence_length=3) == ["a", "b", "c"]


def test_one_hot_has_one_one_per_row():
    rows = tokens.one_hot([2, 0, 5], vocab_size=6)
    assert rows.shape == (3, 6) and rows.dtype == torch.float32
    assert torch.equal(rows.sum(dim=1), torch.ones(3))
    assert torch.equal(rows.argmax(dim=1), torch.tensor([2, 0, 5]))
    assert torch.equal(tokens.one_hot(torch.tensor([1, 1]), vocab_size=2), torch.tensor([[0.0, 1.0], [0.0, 1.0]]))


def test_sentence_to_ids_pads_with_the_pad_id():
    vocab = tokens.build_vocabulary(["My name is John"])
    ids = tokens.sentence_to_ids("My name is John", vocab, max_sequence_length=10)
    assert ids.tolist() == [2, 3, 4, 5, 0, 0, 0, 0, 0, 0]


def test_projection_equals_embedding_lookup():
    vocab = tokens.build_vocabulary(["My name is John"])
    ids = tokens.sentence_to_ids("my name is john", vocab, max_sequence_length=10)
    W_E = embedding.embedding_matrix(vocab_size=vocab.vocab_size, d_model=8, seed=3)
    X = embedding.project(tokens.one_hot(ids, vocab_size=vocab.vocab_size), W_E)
    assert X.shape == (10, 8)
    assert torch.equal(X, embedding.embedding_lookup(ids, W_E))
    lookup = torch.nn.Embedding.from_pretrained(W_E)
    assert torch.equal(lookup(ids), X)


def test_embedding_matrix_is_seeded_and_counted():
    a = embedding.embedding_matrix(vocab_size=6, d_model=4, seed=1)
    assert torch.equal(a, embedding.embedding_matrix(vocab_size=6, d_model=4, seed=1))
    assert not torch.equal(a, embedding.embedding_matrix(vocab_size=6, d_model=4, seed=2))
    assert embedding.parameter_count(vocab_size=6, d_model=512) == 3072


def test_qkv_and_scores_have_the_expected_shapes_and_scale():
    x = PositionalEncoding(d_model=6, max_sequence_length=10)(torch.zeros(10, 6))
    weights = attention.projection_weights(d_model=6, d_k=4, seed=0)
    Q, K, V = attention.project_qkv(x, weights)
    assert Q.shape == K.shape == V.shape == (10, 4)
    assert torch.equal(Q, x @ weights.W_Q)
    scores = attention.scaled_dot_product_scores(Q, K)
    assert scores.shape == (10, 10)
    torch.testing.assert_close(scores, Q @ K.T / math.sqrt(4))
    batched = attention.scaled_dot_product_scores(Q.expand(3, 10, 4), K.expand(3, 10, 4))
    assert batched.shape == (3, 10, 10)


def test_attention_weights_ignore_padding():
    scores = torch.randn(4, 4, generator=torch.Generator().manual_seed(0))
    mask = attention.padding_mask(torch.tensor([5, 2, 0, 0]), pad_id=0)
    weights = attention.attention_weights(scores, key_mask=mask)
    torch.testing.assert_close(weights.sum(dim=-1), torch.ones(4))
    assert torch.equal(weights[:, 2:], torch.zeros(4, 2))


def test_self_attention_matches_torch():
    x = torch.randn(7, 8, generator=torch.Generator().manual_seed(0))
    weights = attention.projection_weights(d_model=8, seed=1)
    out, attn = attention.self_attention(x, weights)
    Q, K, V = attention.project_qkv(x, weights)
    expected = torch.nn.functional.scaled_dot_product_attention(Q, K, V)
    torch.testing.assert_close(out, expected)
    assert attn.shape == (7, 7)


# Position ids from an attention mask (left padding) ------------------------------------------------------------


def test_position_ids_count_the_real_tokens_of_each_row_and_give_padding_zero():
    mask = torch.tensor([[0, 0, 1, 1, 1], [1, 1, 1, 1, 1], [0, 0, 0, 0, 1]])
    assert position_ids(mask).tolist() == [[0, 0, 0, 1, 2], [0, 1, 2, 3, 4], [0, 0, 0, 0, 0]]
    assert position_ids(mask.bool()).tolist() == position_ids(mask).tolist()
    assert position_ids(torch.tensor([1, 1, 0, 0])).tolist() == [0, 1, 0, 0]  # right padding: 0..n-1
    assert position_ids(torch.ones(3, dtype=torch.uint8)).dtype == torch.long
    # From padding_mask of a right-padded batch: the real tokens get 0..n-1, as the naive positions.
    vocab = tokens.build_vocabulary(CORPUS)
    ids = tokens.batch_ids(["My name is John", "What is your name?"], vocab, max_sequence_length=6)
    real = attention.padding_mask(ids, pad_id=vocab.pad_id)
    assert torch.equal(position_ids(real)[real], torch.arange(6).expand(2, 6)[real])


def test_position_ids_refuse_anything_but_a_0_1_mask():
    for bad, error, words in [(torch.tensor([[0.0, 1.0]]), TypeError, ["attention_mask", "float32"]),
                              (torch.tensor([[0, 2, 1]]), ValueError, ["attention_mask", "[2]"]),
                              (torch.tensor([-1, 1]), ValueError, ["attention_mask", "[-1]"]),
                              (torch.ones(1, 2, 3, dtype=torch.long), ValueError, ["attention_mask", "(1, 2, 3)"]),
                              ([[1, 1]], TypeError, ["attention_mask", "list"])]:
        with pytest.raises(error) as raised:
            position_ids(bad)
        assert all(word in str(raised.value) for word in words), raised.value


def test_another_sentences_rows_give_equal_words_equal_rows_of_x_only():
    words, X, X_prime = example.sentence_rows("the cat sat on the mat", d_model=6)
    assert words == ["the", "cat", "sat", "on", "the", "mat"] and X.shape == X_prime.shape == (6, 6)
    assert torch.equal(X[0], X[4]) and not torch.allclose(X_prime[0], X_prime[4])
    torch.testing.assert_close(X_prime - X, PositionalEncoding(d_model=6, max_sequence_length=6).table)
    with pytest.raises(ValueError):
        example.sentence_rows("the cat", d_model=0)
