"""The checkers of the encoding table, fed the wrong answers a learner gives (the pitfalls' slide code, the columns
that repeat within a table); and the facts stated about the wavelengths and the pitfalls."""

import math
import re
import subprocess
import sys

import pytest
import torch

from posenc import exercises
from posenc.encoding import sinusoidal_encoding

# The columns that repeat within the table --------------------------------------------------------------------


def count_by_hand(d_model, max_sequence_length, base=10_000.0):
    return sum(2 * math.pi * base ** ((j - j % 2) / d_model) < max_sequence_length for j in range(d_model))


class TestRepeatingColumns:
    def check(self, answer, **sizes):
        return exercises.check_repeating_columns(answer, **{"d_model": 128, "max_sequence_length": 64, **sizes})

    @pytest.mark.parametrize("answer,words", [
        (64, "half of d_model = 128 (the number of sin/cos pairs) and also max_sequence_length"),
        (0, "Column 0's wavelength is 2 pi = 6.28 positions"),
        (58, "whose denominator"),        # 2 pi forgotten: denominators below 64
        (17, "counts pairs"), (33, "counting from column 0"), (94, "above the line"), (128, "Not every column"),
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

    @pytest.mark.parametrize("d_model,length,base", [(128, 64, 10_000.0), (128, 64, 10.0), (6, 10, 10_000.0),
                                                     (7, 1000, 100.0), (512, 2048, 10_000.0)])
    def test_the_accepted_count_is_the_count_by_hand(self, d_model, length, base):
        expected = count_by_hand(d_model, length, base)
        assert exercises.check_repeating_columns(expected, d_model=d_model, max_sequence_length=length,
                                                 base=base).correct
        assert not exercises.check_repeating_columns(expected + 1, d_model=d_model, max_sequence_length=length,
                                                     base=base).correct

    def test_the_notebooks_answer(self):
        assert count_by_hand(128, 64) == 34

    def test_the_other_base_is_named(self):
        feedback = exercises.check_repeating_columns(34, d_model=128, max_sequence_length=64, base=10.0)
        assert feedback.status == "mistake" and "base 10,000" in feedback.message


def test_the_quoted_wavelengths():
    assert 2 * math.pi * 10 ** (126 / 128) == pytest.approx(60.6, abs=0.05) and 2 * math.pi * 10 ** (126 / 128) < 63
    assert round(2 * math.pi * 10_000 ** (126 / 128), -2) == 54_400
    assert round(2 * math.pi * 10_000, -2) == 62_800


# The table checker on the pitfalls' answers ---------------------------------------------------------------


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
