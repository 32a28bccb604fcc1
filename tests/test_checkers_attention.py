"""The facts 05, 06 and 09 rest on: without PE, equal words get equal outputs; a key mask on the query axis hides rows,
not keys; without a causal mask, a whole encoder is permutation-equivariant; with one, a word's output depends on the
words up to it, in any order."""

import math

import pytest
import torch

from posenc import attention, embedding, encoding, exercises, tokens


def test_a_whole_encoder_without_a_causal_mask_is_permutation_equivariant():
    # PyTorch's own encoder layer (attention, feed-forward, residuals, LayerNorm), independent of posenc.
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16,
                                                                         batch_first=True), num_layers=2).eval()
    x = torch.randn(1, 5, 8)
    order = torch.tensor([3, 0, 4, 1, 2])
    with torch.no_grad():
        assert torch.allclose(layer(x[:, order]), layer(x)[:, order], atol=1e-5)
        causal = torch.nn.Transformer.generate_square_subsequent_mask(5)
        assert not torch.allclose(layer(x[:, order], mask=causal), layer(x, mask=causal)[:, order], atol=1e-3)


def test_shuffled_weights_are_p_a_p_transposed():
    # 09's proof, steps 4 and 5: without a mask, the weights of the shuffled input are P A P^T.
    x = torch.randn(4, 6, generator=torch.Generator().manual_seed(0))
    weights = attention.projection_weights(d_model=6, seed=0)
    order = torch.tensor([3, 2, 0, 1])
    P = torch.eye(4)[order]
    _, A = attention.self_attention(x, weights)
    _, shuffled_A = attention.self_attention(x[order], weights)
    assert torch.allclose(shuffled_A, P @ A @ P.T, atol=1e-6)


def test_with_a_causal_mask_a_words_output_depends_on_the_set_of_words_up_to_it():
    # 09's Exercise 2: swap the first two words and only the rows of the words after both keep their output.
    x = torch.randn(5, 8, generator=torch.Generator().manual_seed(0))
    weights = attention.projection_weights(d_model=8, seed=0)
    swap = torch.tensor([1, 0, 2, 3, 4])
    plain, _ = attention.self_attention(x, weights, causal=True)
    swapped, _ = attention.self_attention(x[swap], weights, causal=True)
    same = [bool(torch.allclose(plain[i], swapped[swap][i], atol=1e-6)) for i in range(5)]
    assert same == [False, False, True, True, True]


def test_without_pe_attention_gives_one_output_row_per_different_word():
    # 00's claim: "the dog saw the cat and the cat saw the dog" has 11 words, 5 of them different. Without PE,
    # equal words get equal output rows (5 different rows); with PE, all 11 differ.
    sentence = "the dog saw the cat and the cat saw the dog"
    vocabulary = tokens.build_vocabulary([sentence])
    words = tokens.tokenize(sentence)
    ids = tokens.sentence_to_ids(sentence, vocabulary, max_sequence_length=len(words))
    x = embedding.embedding_lookup(ids, embedding.embedding_matrix(vocab_size=vocabulary.vocab_size, d_model=6))
    x_pe = encoding.PositionalEncoding(d_model=6, max_sequence_length=len(words))(x)
    weights = attention.projection_weights(d_model=6, seed=0)

    def different_rows(outputs):
        same = torch.cdist(outputs, outputs) < 1e-5
        return int((~same.tril(diagonal=-1).any(dim=1)).sum())

    assert different_rows(attention.self_attention(x, weights)[0]) == 5
    assert different_rows(attention.self_attention(x_pe, weights)[0]) == 11


def test_show_every_score_plus_five_waits_then_shows_no_weight_moves(capsys):
    scores = torch.randn(10, 10, generator=torch.Generator().manual_seed(0))
    key_mask = torch.arange(10) < 4
    exercises.reset_progress()
    exercises.show_every_score_plus_five(None, scores=scores, key_mask=key_mask)
    assert "largest change" not in capsys.readouterr().out
    exercises.check_every_score_plus_five("b")
    exercises.show_every_score_plus_five("b", scores=scores, key_mask=key_mask)
    assert capsys.readouterr().out.strip() == "every score + 5: the largest change of a weight is 0.000000"
    with pytest.raises(TypeError, match="key_mask"):
        exercises.show_every_score_plus_five("b", scores=scores, key_mask=key_mask.int())
    exercises.reset_progress()


def test_a_key_mask_on_the_query_axis_gives_one_nan_row_per_pad_and_hides_no_key():
    # 06's Exercise 1: ~mask[:, :, None] hides rows (queries), not columns (keys). Each <PAD> query's row is all -inf,
    # so NaN: one row per <PAD> of the batch. The real queries' rows are left as they were: they still see the padding.
    scores = torch.randn(3, 10, 10, generator=torch.Generator().manual_seed(0))
    mask = torch.arange(10) < torch.tensor([4, 5, 2])[:, None]
    wrong = torch.softmax(scores.masked_fill(~mask[:, :, None], float("-inf")), dim=-1)
    nan_rows = int(wrong.isnan().all(dim=-1).sum())
    assert nan_rows == int((~mask).sum()) == 19
    assert torch.equal(wrong[mask], torch.softmax(scores, dim=-1)[mask])
    assert bool(((wrong * ~mask[:, None, :]).sum(dim=-1)[mask] > 0).all())
    assert exercises.check_nan_rows(19, scores=scores, key_mask=mask).correct
    wrong_count = exercises.check_nan_rows(11, scores=scores, key_mask=mask)
    assert "You predicted 11; the answer is 19" in wrong_count.message and "one row per <PAD>" in wrong_count.message
    assert "11 counts the real words" in wrong_count.message and "no error" in wrong_count.message  # the silent half
    assert "still hides keys" in exercises.check_nan_rows(0, scores=scores, key_mask=mask).message
    assert "30 is every row" in exercises.check_nan_rows("30", scores=scores, key_mask=mask).message
    right = exercises.check_nan_rows(19, scores=scores, key_mask=mask).message
    assert "one row per <PAD>" in right and "still hides" not in right and "every row" not in right
    assert exercises.check_nan_rows(None, scores=scores, key_mask=mask).status == "not attempted"


def test_show_nan_rows_waits_for_a_judged_prediction(capsys):
    # The reveal holds the line that computes the answer, so it prints nothing before the checker has judged.
    scores = torch.randn(3, 10, 10, generator=torch.Generator().manual_seed(0))
    mask = torch.arange(10) < torch.tensor([4, 5, 2])[:, None]
    exercises.show_nan_rows(None, scores=scores, key_mask=mask)
    assert "rows all NaN" not in capsys.readouterr().out
    exercises.check_nan_rows(19, scores=scores, key_mask=mask)
    exercises.show_nan_rows(19, scores=scores, key_mask=mask)
    assert capsys.readouterr().out.strip() == "rows all NaN: 19 of 30"


def test_the_nan_rows_checker_names_a_count_of_sentences_and_one_sentences_pads():
    scores = torch.randn(3, 10, 10, generator=torch.Generator().manual_seed(0))
    mask = torch.arange(10) < torch.tensor([4, 5, 2])[:, None]  # sentence 0 has 6 <PAD>s, the batch 19
    sentences = exercises.check_nan_rows(3, scores=scores, key_mask=mask).message
    assert "3 counts the sentences" in sentences and "one row per <PAD>" in sentences
    first = exercises.check_nan_rows("6", scores=scores, key_mask=mask).message
    assert "6 counts only sentence 0's <PAD>s" in first and "the answer is 19" in first
    for count, sentence in ((5, 1), (8, 2)):  # any one sentence's <PAD>s, not only the first's
        assert f"{count} counts only sentence {sentence}'s <PAD>s" in exercises.check_nan_rows(
            count, scores=scores, key_mask=mask).message
    for other in (18, 20, 57):
        message = exercises.check_nan_rows(other, scores=scores, key_mask=mask).message
        assert "counts the sentences" not in message and "counts only" not in message


def test_one_heads_score_is_the_heads_scores_summed_over_sqrt_num_heads():
    # 07's Exercise 1: one head of d_model columns scores a pair (s0 + s1) / sqrt(2), from the two heads' s0 and s1.
    x = torch.randn(10, 6, generator=torch.Generator().manual_seed(0))
    weights = attention.multi_head_weights(d_model=6, seed=0)
    Q, K = x @ weights.W_Q, x @ weights.W_K
    s0, s1 = attention.scaled_dot_product_scores(attention.split_heads(Q[None], num_heads=2),
                                                 attention.split_heads(K[None], num_heads=2))[0, :, 1, 0].tolist()
    one = float(attention.scaled_dot_product_scores(Q, K)[1, 0])
    assert abs(one - (s0 + s1) / math.sqrt(2)) < 1e-5

    def check(answer):
        return exercises.check_one_head_score(answer, x=x, weights=weights, num_heads=2, query=1, key=0)

    for answer in (one, round(one, 3), round(one, 2), torch.tensor(one), str(one), f" {one:.2f} ", (s0 + s1) / 1.41,
                   one * 1.0045, one * 0.9955):  # sqrt(2) ~ 1.41 by hand: 0.3 % off
        assert check(answer).correct, answer
    assert not check(one + max(0.006, abs(one) * 0.006)).correct  # beyond rounding and beyond 0.5 %
    assert "(s0 + s1) / sqrt(2)" in check(one).message
    for answer, words in ((s0 + s1, "wrong scale"), ((s0 + s1) / 2, "the mean"), (s0, "head 0's own"), (s1, "head 1's own"),
                          ((s0 + s1) / 6 ** 0.5, "divides twice"), (round((s0 + s1) / 6 ** 0.5, 2), "divides twice"),
                          ((s0 + s1) * 2 ** 0.5, "times sqrt(2)"), (round((s0 + s1) * 2 ** 0.5, 2), "1 / sqrt(2)")):
        feedback = check(answer)
        assert feedback.status == "mistake" and words in feedback.message
    wrong = check(one + 1)
    assert wrong.status == "wrong" and f"{one:.4f}" in wrong.message and "close" not in wrong.message
    # beyond 0.5 %, within 2 %: sqrt(num_heads) rounded too far, as 1.4 (1.0 % off here)
    for close in (one * 1.008, one * 0.992, (s0 + s1) / 1.4, one * 1.019, one * 0.981):
        feedback = check(close)
        assert feedback.status == "wrong" and "That is close" in feedback.message and "sqrt(2) = 1.4142" in feedback.message
    assert "close" not in check(one * 1.03).message and "close" not in check(one * 0.97).message
    assert check("junk").status == "wrong" and check(None).status == "not attempted"
    with pytest.raises(ValueError):
        exercises.check_one_head_score(None, x=x, weights=weights, num_heads=4, query=1, key=0)
    with pytest.raises(ValueError):
        exercises.check_one_head_score(None, x=x, weights=weights, num_heads=2, query=10, key=0)


def test_show_one_head_score_waits_for_a_judged_prediction_then_prints_the_score(capsys):
    x = torch.randn(10, 6, generator=torch.Generator().manual_seed(0))
    weights = attention.multi_head_weights(d_model=6, seed=0)
    one = float(attention.scaled_dot_product_scores(x @ weights.W_Q, x @ weights.W_K)[1, 0])
    exercises.reset_progress()
    exercises.show_one_head_score(None, x=x, weights=weights, num_heads=2, query=1, key=0)
    assert "score" not in capsys.readouterr().out.replace("The result shows", "")
    exercises.check_one_head_score(0.5, x=x, weights=weights, num_heads=2, query=1, key=0)
    exercises.show_one_head_score(0.5, x=x, weights=weights, num_heads=2, query=1, key=0)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"one head's score for query 1 and key 0: {one:.4f}"
    assert lines[1] == "one head of 6 columns gives the same output as 2 heads of 3 columns: False" and "own softmax" in lines[2]
    exercises.reset_progress()


def test_what_can_be_added_takes_one_vector_at_every_position_and_names_each_other_choice():
    # 09's Exercise 1: in place of PE, add PE[1] at every row, PE reversed, a small PE, or none of them keeps the gap at 0.
    for right in ("a", "A", "(a)", "'a'", "PE[1]", " pe[1] ", "`PE[1]`", "PE[1, :]", "PE[1] at every position"):
        feedback = exercises.check_added_at_every_position(right)
        assert feedback.correct and "the same at every position" in feedback.message, feedback.message
    for wrong, why in (("b", "still differ"), ("PE.flip(0)", "still differ"), ("c", "is not 0"),
                       ("0.01 * PE", "is not 0"), ("d", "One of them keeps the gap at 0"), ("none", "One of them")):
        feedback = exercises.check_added_at_every_position(wrong)
        assert feedback.status == "mistake" and why in feedback.message and "The answer is 'a'" in feedback.message
    for wrong in ("PE.flip(0), the rows of PE in reverse order", "none of them"):  # the table's own text
        assert exercises.check_added_at_every_position(wrong).status == "mistake"
    assert exercises.check_added_at_every_position("PE").status == "wrong"  # not an option: the choices are listed
    assert exercises.check_added_at_every_position(True).status == "wrong"
    assert exercises.check_added_at_every_position(None).status == "not attempted"


def test_the_average_of_shuffled_outputs_takes_c_and_names_each_other_choice():
    # The prompt lays the four choices out as a table: no mask / causal mask, match or differ.
    for right in ("c", "C", "(c)", "c.", "'c'", " c ", "match, differ", "Match and differ", "match differ"):
        feedback = exercises.check_average_of_shuffled_outputs(right)
        assert feedback.correct and "an average ignores the order of its rows" in feedback.message, feedback.message
        assert "their average changes too" in feedback.message  # the question asks about the average, not the rows
        assert "dog" not in feedback.message  # review 39: the goal's example, said again, made every message longer
    # "a": the causal half, with each position's sentence named.
    feedback = exercises.check_average_of_shuffled_outputs("a")
    assert feedback.status == "mistake" and "position 0 (in 'john is my name')" in feedback.message
    assert "position 3 (in 'my name is john')" in feedback.message and "The answer is 'c'" in feedback.message
    for wrong in ("b", "d", "differ, differ", "differ, match"):  # both say the averages differ with no mask
        feedback = exercises.check_average_of_shuffled_outputs(wrong)
        assert feedback.status == "mistake" and "an average does not depend on the order" in feedback.message
    assert "'differ' is right" in exercises.check_average_of_shuffled_outputs("b").message  # its causal half is right
    assert exercises.check_average_of_shuffled_outputs("e").status == "wrong"
    assert exercises.check_average_of_shuffled_outputs(None).status == "not attempted"
