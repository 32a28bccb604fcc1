"""Every diagnosis of posenc.exercises, fed the exact mistake a learner makes."""

import math

import pytest
import torch

from posenc import exercises, tokens
from posenc.encoding import PositionalEncoding, sinusoidal_encoding

L, D = 10, 6


def learner_table(length=L, d_model=D, *, exponent="2i", swap=False, start=0, size=None, layout="interleaved",
                  position_dtype=torch.float32):
    """A table written the way a learner writes it, with one mistake switched on."""
    even_i = torch.arange(0, d_model, 2).float()
    pair_i = torch.arange(0, (d_model + 1) // 2).float()
    scale = size or d_model
    if exponent in ("2i", "j"):
        denominator = torch.pow(10000, even_i / scale)
    elif exponent == "i":
        denominator = torch.pow(10000, pair_i / scale)
    position = torch.arange(start, start + length, dtype=position_dtype).reshape(length, 1)
    first, second = torch.sin(position / denominator), torch.cos(position / denominator)
    if exponent == "j":  # odd column j uses j / d_model, as if it were 2i
        odd_i = torch.arange(1, d_model, 2).float()
        second = torch.cos(position / torch.pow(10000, odd_i / scale))
        second = torch.cat([second, torch.zeros(length, first.shape[1] - second.shape[1])], dim=1)
    if swap:
        first, second = second, first
    if layout == "concatenated":
        return torch.cat([first, second[:, : d_model // 2]], dim=1)
    return torch.flatten(torch.stack([first, second], dim=2), start_dim=1, end_dim=2)[:, :d_model]


def check(answer, **sizes):
    return exercises.check_encoding(answer, **{"max_sequence_length": L, "d_model": D, **sizes})


def test_a_correct_table():
    feedback = check(learner_table())
    assert feedback.correct and "Correct" in str(feedback)


def test_not_attempted():
    feedback = check(None)
    assert feedback.status == "not attempted" and "Not attempted yet" in str(feedback)


@pytest.mark.parametrize("mistake,table,words", [
    ("swapped", lambda: learner_table(swap=True), "sine and cosine are swapped"),
    ("exponent i", lambda: learner_table(exponent="i"), "uses i instead of 2i"),
    ("2i on the odd index", lambda: learner_table(exponent="j"), "odd columns use their own index"),
    ("concatenated", lambda: learner_table(layout="concatenated"), "concatenated [sin..., cos...]"),
    ("positions from 1", lambda: learner_table(start=1), "positions start at 1"),
    ("wrong size in the denominator", lambda: learner_table(size=L), "instead of d_model"),
    ("transposed", lambda: learner_table().T, "Transposed"),
    ("float64", lambda: learner_table(position_dtype=torch.float64), "float64"),
])
def test_each_known_mistake_is_named(mistake, table, words):
    feedback = check(table())
    assert feedback.status == "mistake", f"{mistake}: {feedback}"
    assert words in feedback.message


def test_d_model_plus_one_columns_for_odd_d_model():
    d_model = 7
    even_i = torch.arange(0, d_model, 2).float()
    denominator = torch.pow(10000, even_i / d_model)
    position = torch.arange(L, dtype=torch.float32).reshape(L, 1)
    naive = torch.flatten(torch.stack([torch.sin(position / denominator), torch.cos(position / denominator)], dim=2), 1, 2)
    feedback = exercises.check_encoding(naive, max_sequence_length=L, d_model=d_model)
    assert feedback.status == "mistake" and "8 columns for d_model = 7" in feedback.message


def test_an_unrecognised_answer_says_where_it_differs():
    table = learner_table()
    table[4, 3] += 0.5
    feedback = check(table)
    assert feedback.status == "wrong" and "position 4, column 3" in feedback.message


def test_a_non_tensor_is_wrong_not_an_exception():
    assert check([[0.0] * D] * L).status == "wrong"


class TestOtherCheckers:
    def test_padding(self):
        sentence = "My name is John"
        good = ["my", "name", "is", "john"] + ["<PAD>"] * 6
        assert exercises.check_padding(None, sentence=sentence, max_sequence_length=10).status == "not attempted"
        assert exercises.check_padding(good, sentence=sentence, max_sequence_length=10).correct
        assert "Wrong length" in exercises.check_padding(good[:8], sentence=sentence, max_sequence_length=10).message
        front = ["<PAD>"] * 6 + ["my", "name", "is", "john"]
        assert "in front" in exercises.check_padding(front, sentence=sentence, max_sequence_length=10).message
        upper = ["My", "name", "is", "John"] + ["<PAD>"] * 6
        assert "Lower-case" in exercises.check_padding(upper, sentence=sentence, max_sequence_length=10).message

    def test_one_hot(self):
        ids = [2, 3, 0]
        good = torch.eye(5)[ids]
        assert exercises.check_one_hot(good, ids=ids, vocab_size=5).correct
        assert "Transposed" in exercises.check_one_hot(good.T, ids=ids, vocab_size=5).message
        assert "dtype" in exercises.check_one_hot(good.long(), ids=ids, vocab_size=5).message
        assert "off by one" in exercises.check_one_hot(torch.eye(5)[[3, 4, 1]], ids=ids, vocab_size=5).message
        assert exercises.check_one_hot(None, ids=ids, vocab_size=5).status == "not attempted"

    def test_embedding(self):
        W_E = torch.randn(6, 4, generator=torch.Generator().manual_seed(0))
        ids = [2, 3, 0]
        assert exercises.check_embedding(W_E[ids], ids=ids, W_E=W_E).correct
        assert "Transposed" in exercises.check_embedding(W_E[ids].T, ids=ids, W_E=W_E).message
        assert "all of W_E" in exercises.check_embedding(W_E, ids=ids, W_E=W_E).message
        assert "Off by one" in exercises.check_embedding(W_E[[1, 2, 5]], ids=ids, W_E=W_E).message
        assert exercises.check_embedding(None, ids=ids, W_E=W_E).status == "not attempted"

    def test_parameter_count(self):
        assert exercises.check_parameter_count(3072, vocab_size=6, d_model=512).correct
        assert "multiply" in exercises.check_parameter_count(518, vocab_size=6, d_model=512).message
        assert "bias" in exercises.check_parameter_count(3584, vocab_size=6, d_model=512).message

    def test_denominators(self):
        good = torch.pow(10000, torch.arange(0, 6, 2).float() / 6)
        assert exercises.check_denominators(good, d_model=6).correct
        assert "2i / d_model" in exercises.check_denominators(torch.pow(10000, torch.arange(3).float() / 6), d_model=6).message
        assert "1 / denominator" in exercises.check_denominators(1 / good, d_model=6).message
        assert "one denominator per (sin, cos) pair" in exercises.check_denominators(torch.pow(10000, torch.arange(6).float() / 6), d_model=6).message

    def test_module(self):
        assert exercises.check_positional_module(PositionalEncoding(d_model=6, max_sequence_length=10)).correct
        assert exercises.check_positional_module(None).status == "not attempted"

        class TableOnly(torch.nn.Module):
            def forward(self, x):
                return sinusoidal_encoding(max_sequence_length=x.shape[-2], d_model=6).expand_as(x)

        class StrictAssert(torch.nn.Module):
            def forward(self, x):
                assert x.shape[-2] < 10, "too long"  # the source material's off-by-one
                return x

        assert "add it to x" in exercises.check_positional_module(TableOnly()).message
        assert "AssertionError" in exercises.check_positional_module(StrictAssert()).message

    def test_scores(self):
        Q, K = torch.randn(2, 4, 8, generator=torch.Generator().manual_seed(0))
        assert exercises.check_scores(Q @ K.T / math.sqrt(8), Q=Q, K=K).correct
        assert "sqrt(d_k)" in exercises.check_scores(Q @ K.T, Q=Q, K=K).message
        assert "square root" in exercises.check_scores(Q @ K.T / 8, Q=Q, K=K).message
        assert "Transposed" in exercises.check_scores(K @ Q.T / math.sqrt(8), Q=Q, K=K).message


class TestBatchCheckers:
    ids = tokens.batch_ids(["My name is John", "my friend"], tokens.example_vocabulary(), max_sequence_length=5)
    mask = ids != 0
    scores = torch.randn(2, 5, 5, generator=torch.Generator().manual_seed(0))

    def test_padding_mask(self):
        check = lambda answer: exercises.check_padding_mask(answer, ids=self.ids, pad_id=0)  # noqa: E731
        assert check(self.mask).correct
        assert "Inverted" in check(~self.mask).message and "key_padding_mask" in check(~self.mask).message
        assert "need a bool" in check(self.mask.float()).message
        assert "Transposed" in check(self.mask.T).message
        assert check(None).status == "not attempted"

    @pytest.mark.parametrize("mistake,build,words", [
        ("no mask", lambda s, k: torch.softmax(s, -1), "No mask"),
        ("after softmax", lambda s, k: torch.softmax(s, -1) * k[:, None, :], "after the softmax"),
        ("zero, not -inf", lambda s, k: torch.softmax(s.masked_fill(~k[:, None, :], 0.0), -1), "not -inf"),
        ("queries", lambda s, k: torch.softmax(s.masked_fill(~k[:, :, None], float("-inf")), -1), "instead of columns"),
        ("wrong axis", lambda s, k: torch.softmax(s.masked_fill(~k[:, None, :], float("-inf")), -2), "dim=-2"),
    ])
    def test_masked_weights_mistakes(self, mistake, build, words):
        feedback = exercises.check_masked_weights(build(self.scores, self.mask), scores=self.scores, key_mask=self.mask)
        assert feedback.status == "mistake" and words in feedback.message, f"{mistake}: {feedback}"

    def test_masked_weights_correct(self):
        from posenc import attention

        answer = attention.attention_weights(self.scores, key_mask=self.mask)
        assert exercises.check_masked_weights(answer, scores=self.scores, key_mask=self.mask).correct


class TestSchemeCheckers:
    x = torch.randn(6, 8, generator=torch.Generator().manual_seed(3))

    def rotate(self, angles):
        x1, x2 = self.x[:, 0::2].double(), self.x[:, 1::2].double()
        return torch.stack([x1 * angles.cos() - x2 * angles.sin(), x1 * angles.sin() + x2 * angles.cos()], -1).flatten(-2)

    def test_rotary_correct_in_any_sensible_form(self):
        from posenc import schemes

        answer = schemes.apply_rotary(self.x)
        for form in (answer, answer.double(), answer.numpy(), answer.tolist(), answer.requires_grad_(False)):
            assert exercises.check_rotary(form, x=self.x).correct
        assert exercises.check_rotary(None, x=self.x).status == "not attempted"

    @pytest.mark.parametrize("mistake,angles,words", [
        ("clockwise", lambda p, i, d: -p * 10000.0 ** (-2 * i / d), "wrong way"),
        ("from 1", lambda p, i, d: (p + 1) * 10000.0 ** (-2 * i / d), "start at 1"),
        ("i for 2i", lambda p, i, d: p * 10000.0 ** (-i / d), "i instead of 2i"),
        ("multiplied", lambda p, i, d: p * 10000.0 ** (2 * i / d), "instead of dividing"),
        ("nothing", lambda p, i, d: p * 0.0 * i, "Nothing was rotated"),
    ])
    def test_rotary_mistakes_are_named(self, mistake, angles, words):
        p = torch.arange(6, dtype=torch.float64)[:, None]
        i = torch.arange(4, dtype=torch.float64)[None, :]
        feedback = exercises.check_rotary(self.rotate(angles(p, i, 8)), x=self.x)
        assert feedback.status == "mistake" and words in feedback.message, f"{mistake}: {feedback}"

    def test_rotary_half_split_is_named(self):
        from posenc import schemes

        feedback = exercises.check_rotary(schemes.apply_rotary(self.x, layout="half_split"), x=self.x)
        assert feedback.status == "mistake" and "half-split" in feedback.message

    def test_rotary_wrong_shape_and_garbage_answer(self):
        assert "keeps x's shape" in exercises.check_rotary(torch.zeros(6, 4), x=self.x).message
        assert exercises.check_rotary(torch.zeros(6, 8), x=self.x).status == "wrong"

    def test_alibi_slopes(self):
        check = lambda answer, n=8: exercises.check_alibi_slopes(answer, num_heads=n)  # noqa: E731
        slopes = [2.0 ** -k for k in range(1, 9)]
        assert check(slopes).correct and check(torch.tensor(slopes)).correct
        assert check([2.0 ** (-k / 2) for k in range(1, 17)], 16).correct
        assert "One step too early" in check([2.0 ** -k for k in range(0, 8)]).message
        assert "sign" in check([2.0 ** k for k in range(1, 9)]).message
        assert "Reversed" in check(slopes[::-1]).message
        assert "right for 8 heads only" in check([2.0 ** -k for k in range(1, 5)], 4).message
        assert "expected 8 slopes" in check(slopes[:4]).message
        assert check(None).status == "not attempted" and check("half").status == "wrong"

    def test_length_prediction(self):
        measured = {"none": {32: 0.2}, "learned": {32: None}, "sinusoidal": {32: 0.5}, "rotary": {32: 1.0}}
        check = lambda answer: exercises.check_length_prediction(answer, accuracies=measured, length=32)  # noqa: E731
        assert check(["none", "learned", "sinusoidal"]).correct
        assert check(("sinusoidal", "learned", "none")).correct
        missed = check(["none"])
        assert missed.status == "wrong" and "also failing: learned, sinusoidal" in missed.message
        assert "held up (at least 0.9): rotary" in check(["none", "learned", "sinusoidal", "rotary"]).message
        assert "Unknown scheme names ['rope']" in check(["rope"]).message
        assert check(None).status == "not attempted" and check(3).status == "wrong"
