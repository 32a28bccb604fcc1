"""The checkers of notebooks 08, 09 and 11, fed the wrong answers a learner gives; and the facts these notebooks
state."""

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from posenc import exercises
from posenc.encoding import sinusoidal_encoding

ROOT = Path(__file__).resolve().parent.parent


def notebook_text(name: str) -> str:
    return "\n".join("".join(c["source"]) for c in json.loads((ROOT / "notebooks" / name).read_text())["cells"])


# 08: columns that repeat within the table ---------------------------------------------------------------------


def count_by_hand(d_model, max_sequence_length, base=10_000.0):
    return sum(2 * math.pi * base ** ((j - j % 2) / d_model) < max_sequence_length for j in range(d_model))


class TestRepeatingColumns:
    def check(self, answer, **sizes):
        return exercises.check_repeating_columns(answer, **{"d_model": 128, "max_sequence_length": 64, **sizes})

    @pytest.mark.parametrize("answer,words", [
        (64, "half of d_model = 128 (the number of sin/cos pairs) and also max_sequence_length"),
        (0, "Column 0's wavelength is 2 pi = 6.28 positions"),
        (58, "whose denominator"),        # 2 pi forgotten: denominators below 64
    ])
    def test_each_mistake_is_named(self, answer, words):
        feedback = self.check(answer)
        assert feedback.status == "mistake" and words in feedback.message, feedback.message

    def test_the_denominator_count_is_what_forgetting_2_pi_gives(self):
        assert sum(10_000 ** ((j - j % 2) / 128) < 64 for j in range(128)) == 58

    def test_pairs_and_positions_are_told_apart_when_they_differ(self):
        assert "number of sin/cos pairs" in self.check(64, max_sequence_length=100).message
        assert "the number of positions" in self.check(100, max_sequence_length=100).message

    def test_no_wrong_answer_gives_the_count_away(self):
        assert count_by_hand(128, 64) == 34
        for answer in range(0, 200):
            feedback = self.check(answer)
            assert feedback.correct == (answer == 34)
            if answer != 34:
                assert not re.search(r"\b34\b", feedback.message), (answer, feedback.message)

    def test_the_fallback_says_which_way_and_what_to_count(self):
        assert "too many" in self.check(50).message and "shorter than 64 positions" in self.check(50).message
        assert "too few" in self.check(20).message


# 09: shuffled attention weights ------------------------------------------------------------------------------


class TestPermutedWeights:
    weights = torch.softmax(torch.randn(4, 4, generator=torch.Generator().manual_seed(0)), dim=-1)

    def check(self, answer, order):
        return exercises.check_permuted_weights(answer, weights=self.weights, order=order)

    def test_the_notebooks_order_is_not_its_own_inverse(self):
        # With an involution, argsort(order) == order and the inverse-permutation mistake would pass as correct.
        text = notebook_text("09_why_positions_matter.ipynb")
        order = json.loads(text.split("check_permuted_weights(my_shuffled, weights=attention_weights, order=")[1]
                           .split(")")[0])
        assert torch.argsort(torch.tensor(order)).tolist() != order

    @pytest.mark.parametrize("order", [[3, 0, 1, 2], [1, 2, 3, 0], [2, 0, 3, 1]])
    def test_each_mistake_is_named(self, order):
        index = torch.tensor(order)
        inverse = torch.argsort(index)
        right = self.weights[index][:, index]
        assert self.check(right, order).correct
        named = {"inverse permutation": self.weights[inverse][:, inverse], "Transposed": right.T,
                 "the diagonal": self.weights[index, index], "Only the rows": self.weights[index],
                 "Only the columns": self.weights[:, index], "Unchanged": self.weights}
        for words, answer in named.items():
            feedback = self.check(answer, order)
            assert feedback.status == "mistake" and words in feedback.message, (words, feedback.message)


# 11: the table checker on the pitfalls' answers ----------------------------------------------------------------


def slide_code(embedding_dim, num_tokens, *, fixed=False):
    """The slide's construction (rows and columns in each other's places), or the fixed one."""
    rows, pairs = (num_tokens, embedding_dim) if fixed else (embedding_dim, num_tokens)
    table = torch.zeros(rows, pairs)
    position = torch.arange(rows, dtype=torch.float32)[:, None]
    angle = position / 10_000 ** (torch.arange(0, pairs, 2, dtype=torch.float32) / embedding_dim)
    table[:, 0::2], table[:, 1::2] = torch.sin(angle), torch.cos(angle)
    return table


class TestTableChecker:
    table = sinusoidal_encoding(max_sequence_length=10, d_model=6)

    def check(self, answer, max_sequence_length=10, d_model=6):
        return exercises.check_encoding(answer, max_sequence_length=max_sequence_length, d_model=d_model)

    def test_the_slide_code_is_named_for_what_it_does(self):
        feedback = self.check(slide_code(10, 4), max_sequence_length=4, d_model=10)
        assert feedback.status == "mistake" and "Positions and columns swapped roles" in feedback.message
        assert "torch.arange(0, d_model, 2)" in feedback.message and "torch.zeros(max_sequence_length, d_model)" in (
            feedback.message)
        transposed = self.check(slide_code(10, 4).T, max_sequence_length=4, d_model=10)
        assert transposed.status == "mistake" and "`.T` moves numbers" in transposed.message
        assert self.check(slide_code(10, 4, fixed=True), max_sequence_length=4, d_model=10).correct
        # More positions than columns: the swapped table has 10 columns with exponents 2i / 4, past 1.
        longer = self.check(slide_code(4, 10), max_sequence_length=10, d_model=4)
        assert "swapped roles" in longer.message and "exponents 2i / 4" in longer.message

    def test_the_denominator_mistake_does_not_blame_the_slides(self):
        feedback = self.check(slide_code(10, 4), max_sequence_length=10, d_model=4)
        assert "instead of d_model" in feedback.message and "slide" not in feedback.message

    @pytest.mark.parametrize("convert,words", [
        (lambda t: t.half(), "dtype is torch.float16, not torch.float32"),
        (lambda t: t.bfloat16(), "dtype is torch.bfloat16, not torch.float32"),
        (lambda t: t.double(), "dtype is torch.float64, not torch.float32"),
        (lambda t: t.double().numpy(), "dtype is torch.float64, not torch.float32"),
        (lambda t: t.tolist(), "Python list"),
    ])
    def test_the_right_numbers_in_the_wrong_form_where_float32_is_asked(self, convert, words):
        feedback = exercises.check_encoding(convert(self.table), max_sequence_length=10, d_model=6, dtype=torch.float32)
        assert feedback.status == "mistake" and words in feedback.message, feedback.message

    @pytest.mark.parametrize("convert", [lambda t: t.double(), lambda t: t.double().numpy(), lambda t: t.tolist()])
    def test_the_right_numbers_in_any_precise_form_where_no_dtype_is_asked(self, convert):
        assert self.check(convert(self.table)).correct

    @pytest.mark.parametrize("convert,words", [(lambda t: t.half(), "torch.float16 keeps only about 3"),
                                               (lambda t: t.bfloat16(), "torch.bfloat16 keeps only about 2")])
    def test_a_table_rounded_to_16_bits_is_a_mistake_where_no_dtype_is_asked(self, convert, words):
        feedback = self.check(convert(self.table))
        assert feedback.status == "mistake" and words in feedback.message, feedback.message

    def test_a_float32_array_is_accepted_with_a_note_and_a_tensor_without(self):
        array = self.check(self.table.numpy())
        assert array.correct and "NumPy array" in array.message
        # 03, 04 and 11 store this exact line: it must not change.
        assert str(self.check(self.table)) == ("✔ Correct: a (10, 6) table, sin and cos interleaved, matching the "
                                               "formula to 1e-4.")


# Facts the three notebooks state --------------------------------------------------------------------------------


def test_the_wavelengths_08_quotes():
    assert 2 * math.pi * 10 ** (126 / 128) == pytest.approx(60.6, abs=0.05) and 2 * math.pi * 10 ** (126 / 128) < 63
    assert round(2 * math.pi * 10_000 ** (126 / 128), -2) == 54_400
    assert round(2 * math.pi * 10_000, -2) == 62_800


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


def test_python_O_lets_any_length_through_a_class_that_builds_its_positions():
    # The shape of the source class in 11 section 3: an assert on the length, then arange(x) on the spot.
    code = ("import torch\n"
            "max_seq_len = 10\n"
            "def forward(x):\n"
            "    assert x < max_seq_len\n"
            "    return torch.zeros(x, 6) + torch.arange(x, dtype=torch.float32)[:, None]\n"
            "print(forward(25).shape[0])\n")
    result = subprocess.run([sys.executable, "-O", "-c", code], capture_output=True, text=True, timeout=120)
    assert result.stdout.strip() == "25"


def test_the_bracketed_reading_of_the_typo_is_wrong_too():
    i = torch.arange(3, dtype=torch.float64)
    bracketed = 10_000 ** ((2 * i - 1) / 6)
    assert [f"{v:.4g}" for v in bracketed.tolist()] == ["0.2154", "4.642", "100"]
    assert bool((bracketed < 10_000 ** (2 * i / 6)).all())
