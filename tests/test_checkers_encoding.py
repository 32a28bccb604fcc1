"""The checkers of the encoding table, fed the wrong answers a learner gives (the pitfalls' slide code, the sizes read
the wrong way round, the positions before half the columns turn, where a column turns negative); and the facts stated about
the wavelengths and the pitfalls."""

import math
import re
import subprocess
import sys

import numpy as np
import pytest
import torch

from posenc import encoding, exercises, schemes
from posenc.builder import sinusoidal_encoding

# The positions a table needs before half its columns turn (08, Exercise 1) -----------------------------------------


def half_turn_by_hand(d_model, base=10_000.0):
    # The fewest positions whose last position, length - 1, reaches the wavelength of each of the first half's columns.
    wavelengths = [2 * math.pi * base ** ((j - j % 2) / d_model) for j in range(d_model)]
    return next(length for length in range(2, 10**6)
                if sum(w <= length - 1 for w in wavelengths) >= (d_model + 1) // 2)


class TestHalfTurnLength:
    def check(self, answer, d_model=512, **kwargs):
        return exercises.check_half_turn_length(answer, d_model=d_model, **kwargs)

    @pytest.mark.parametrize("answer", [608, "608", 608.0, np.int64(608), torch.tensor(608)])
    def test_the_answer_in_several_forms(self, answer):
        assert half_turn_by_hand(512) == 608
        feedback = self.check(answer)
        assert feedback.correct and "turns once every 606.1 positions" in feedback.message, feedback.message
        assert "last position must be at least 607. Positions 0 to 607 make 608." in feedback.message, feedback.message

    @pytest.mark.parametrize("d_model,base", [(512, 10_000.0), (128, 10_000.0), (6, 10_000.0), (8, 100.0), (7, 10.0)])
    def test_the_accepted_length_is_the_length_by_hand(self, d_model, base):
        expected = half_turn_by_hand(d_model, base)
        assert self.check(expected, d_model=d_model, base=base).correct
        assert not self.check(expected + 1, d_model=d_model, base=base).correct

    @pytest.mark.parametrize("answer,words", [
        (606, "column 255's wavelength, 606.1 positions, as a whole number"),   # the wavelength rounded down
        (607, "607 is the last position the table needs"),   # the last position, not yet counted as positions
        (97, "One turn takes 2π times the denominator"),                       # 2 pi forgotten: 10000^(254/512) = 96.5
        (618, "puts the column, 255, in the exponent"),                        # 2 pi 10000^(255/512) = 617.1
        (60612, "takes column 255 for pair 255"),                              # 2 pi 10000^(510/512) = 60611.5
    ])
    def test_each_mistake_is_named(self, answer, words):
        feedback = self.check(answer)
        assert feedback.status == "mistake" and words in feedback.message, feedback.message

    def test_the_mistakes_rest_on_these_numbers(self):
        assert round(2 * math.pi * 10_000 ** (254 / 512), 1) == 606.1
        assert round(10_000 ** (254 / 512), 1) == 96.5
        assert round(2 * math.pi * 10_000 ** (255 / 512), 1) == 617.1
        assert round(2 * math.pi * 10_000 ** (510 / 512), 1) == 60611.5

    @pytest.mark.parametrize("answer,words", [
        (609, "256 of the 512 columns make a full turn: half, but fewer positions would do"),
        (630, "258 of the 512 columns make a full turn: more than half"),   # pair 128, 628.3, fits too
        (500, "244 of the 512 columns make a full turn, fewer than half"),
        (0, "no table's number of positions"), (-3, "no table's number of positions"),
    ])
    def test_other_lengths_get_a_true_count(self, answer, words):
        feedback = self.check(answer)
        assert feedback.status == "wrong" and words in feedback.message, feedback.message
        if answer > 0:
            wavelengths = [2 * math.pi * 10_000 ** ((j - j % 2) / 512) for j in range(512)]
            assert f"{sum(w <= answer - 1 for w in wavelengths)} of the 512" in feedback.message

    def test_no_wrong_answer_gives_the_length_away(self):
        for answer in range(0, 1000):
            feedback = self.check(answer)
            assert feedback.correct == (answer == 608)
            if answer != 608:
                assert not re.search(r"\b608\b", feedback.message), (answer, feedback.message)

    @pytest.mark.parametrize("answer", [None, 6.5, "x", [608], float("nan")])
    def test_anything_else_is_not_attempted_or_wrong(self, answer):
        assert self.check(answer).status in ("not attempted", "wrong")


def test_show_half_turn_lengths_waits_for_a_judged_prediction(capsys):
    exercises.show_half_turn_lengths(None, d_models=(512,))
    assert "positions needed" not in capsys.readouterr().out
    exercises.check_half_turn_length(608, d_model=512)
    exercises.show_half_turn_lengths(608, d_models=(128, 256, 512))
    lines = capsys.readouterr().out.splitlines()
    assert [line.split() for line in lines[1:4]] == [["128", "63", "544.1", "546", "628.3"],
                                                     ["256", "127", "584.7", "586", "628.3"],
                                                     ["512", "255", "606.1", "608", "628.3"]]
    assert [half_turn_by_hand(d) for d in (128, 256, 512)] == [546, 586, 608]
    # Column d_model / 2 is in pair d_model / 4, where 2i/d_model = 1/2: 2 pi 10000^(1/2) = 628.3.
    assert "2i/d_model = 1/2" in lines[4] and "= 628.3 positions" in lines[4] and round(200 * math.pi, 1) == 628.3


# Where a column first turns negative (03, Exercise 1) -------------------------------------------------------


class TestFirstNegative:
    def check(self, answer, column=2, d_model=6):
        return exercises.check_first_negative(answer, column=column, d_model=d_model)

    @pytest.mark.parametrize("column,d_model", [(0, 6), (1, 6), (2, 6), (3, 6), (4, 6), (3, 8), (10, 128), (41, 128)])
    def test_the_accepted_position_is_where_the_table_first_goes_below_zero(self, column, d_model):
        values = sinusoidal_encoding(max_sequence_length=20_000, d_model=d_model, dtype=torch.float64)[:, column]
        first = int((values < 0).nonzero()[0])
        assert self.check(first, column, d_model).correct
        assert not self.check(first - 1, column, d_model).correct and not self.check(first + 1, column, d_model).correct

    @pytest.mark.parametrize("answer", [68, 68.0, torch.tensor(68), torch.tensor([68.0])])
    def test_the_answer_in_any_numeric_form(self, answer):
        assert self.check(answer).correct

    @pytest.mark.parametrize("answer,words", [
        (67, "One too early"), (67.68, "where the angle reaches pi"), (135, "whole wavelength"),
        (136, "whole wavelength"), (34, "at its peak"), (22, "the denominator 10000^(2/6) itself"),
    ])
    def test_each_mistake_is_named(self, answer, words):
        feedback = self.check(answer)
        assert feedback.status == "mistake" and words in feedback.message, feedback.message

    def test_a_cosine_column_has_its_own_mistakes(self):
        assert self.check(34, column=3).correct
        sine_answer = self.check(68, column=3)
        assert sine_answer.status == "mistake" and "a cosine" in sine_answer.message and "pi / 2" in sine_answer.message

    # 03's Exercise 1: column 3 of the d_model = 8 table is cos(pos / 10000^(2/8)) = cos(pos / 10), negative from 16.
    def test_the_notebooks_answer(self):
        assert 10_000 ** (2 / 8) == pytest.approx(10) and math.floor(math.pi / 2 * 10) + 1 == 16
        assert self.check(16, column=3, d_model=8).correct

    @pytest.mark.parametrize("answer,words", [
        (15, "One too early"), (15.71, "where the angle reaches pi / 2"), (32, "where a sine would turn negative"),
        (50, "That uses 10000^(3/8) as the denominator"), (49, "10000^((3 - 1)/8) = 10"), (63, "whole wavelength"),
        (10, "the denominator 10000^(2/8) itself"),
        # i taken as the column: 10000^(6/8) = 1000, and pi / 2 x 1000 = 1570.8.
        (1570, "That takes i = j = 3"), (1571, "column 3 is in pair i = 1"),
    ])
    def test_the_notebooks_mistakes_are_named(self, answer, words):
        feedback = self.check(answer, column=3, d_model=8)
        assert feedback.status == "mistake" and words in feedback.message, feedback.message

    @pytest.mark.original_example
    def test_the_answer_at_the_running_examples_width_is_named(self):
        # At d_model = 6, column 3 is cos(pos / 10000^(2/6)) = cos(pos / 21.5443), negative from pi / 2 x 21.5443 = 33.8.
        assert math.floor(math.pi / 2 * 10_000 ** (2 / 6)) + 1 == 34
        feedback = self.check(34, column=3, d_model=8)
        assert feedback.status == "mistake" and "running example's d_model = 6" in feedback.message, feedback.message
        assert "cos(pos / 10)" in feedback.message

    @pytest.mark.parametrize("column,answer,words", [(3, 63, "from a quarter to three quarters of a wavelength"),
                                                     (2, 135, "from half a wavelength to a whole one")])
    def test_the_whole_wavelength_message_says_where_the_wave_is_negative(self, column, answer, words):
        # A cosine is negative only between a quarter and three quarters of its wavelength, not "from a quarter on".
        feedback = self.check(answer, column=column, d_model=8 if column == 3 else 6)
        assert feedback.status == "mistake" and words in feedback.message, feedback.message

    def test_a_number_just_off_a_whole_one_is_shown_as_it_was_given(self):
        # %g would print 16.000000001 as 16, and "Expected a whole position, got 16." contradicts itself.
        feedback = self.check(16.000000001, column=3, d_model=8)
        assert feedback.status == "wrong" and "got 16.000000001." in feedback.message, feedback.message

    def test_a_sine_column_never_hears_of_the_cosines_exponent(self):
        # 10000^(2/6) = 21.5 is column 2's own denominator: no "That uses" mistake for a sine column.
        assert "That uses" not in self.check(34, column=2).message

    @pytest.mark.parametrize("answer,words", [(50, "not yet below zero"), (100, "already was"),
                                              (200, "first negative stretch comes earlier"), (-5, "no position")])
    def test_other_positions_say_which_way_to_look(self, answer, words):
        feedback = self.check(answer)
        assert feedback.status == "wrong" and words in feedback.message and "68" not in feedback.message

    @pytest.mark.parametrize("junk", [None, "sixty-eight", [68, 69], float("nan"), float("inf"), 1e300, 67.5, True,
                                      object()])
    def test_junk_is_answered_without_raising(self, junk):
        assert not self.check(junk).correct

    def test_the_position_typed_with_quotes_is_read(self):
        assert self.check("68").correct and self.check(" 68 ").correct


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
        # A table built by hand (the package's own, widened to float64, is named as the package's: see below).
        by_hand = self.table + 1e-6
        feedback = exercises.check_encoding(convert(by_hand), max_sequence_length=10, d_model=6, dtype=torch.float32)
        assert feedback.status == "mistake" and words in feedback.message, feedback.message

    @pytest.mark.parametrize("convert", [lambda t: t.double(), lambda t: t.double().numpy(), lambda t: t.tolist()])
    def test_the_right_numbers_in_any_precise_form_where_no_dtype_is_asked(self, convert):
        # Built by hand with float32 steps (the package's own table, widened, is named: see below).
        pair = torch.arange(0, 6, 2, dtype=torch.float32)
        angles = torch.arange(10, dtype=torch.float32)[:, None] / 10000 ** (pair / 6)
        by_hand = torch.stack([torch.sin(angles), torch.cos(angles)], dim=2).flatten(1)
        assert self.check(convert(by_hand)).correct
        float64 = torch.stack([torch.sin(angles.double()), torch.cos(angles.double())], dim=2).flatten(1)
        assert self.check(convert(float64)).correct

    @pytest.mark.parametrize("convert", [lambda t: t.double(), lambda t: t.tolist(), lambda t: t.detach(),
                                         lambda t: np.array(t.tolist()), lambda t: t.detach().double()])
    def test_a_copy_of_the_packages_table_is_named(self, convert):
        table = sinusoidal_encoding(max_sequence_length=10, d_model=6)
        feedback = self.check(convert(table))
        assert feedback.status == "mistake" and "the package's own" in feedback.message, feedback
        # A float32 copy (.clone()) has the bits of a table built in float64 and rounded: it must pass, as that does.
        assert self.check(table.clone()).correct

    @pytest.mark.parametrize("convert,words", [(lambda t: t.half(), "torch.float16 keeps only about 3"),
                                               (lambda t: t.bfloat16(), "torch.bfloat16 keeps only about 2")])
    def test_a_table_rounded_to_16_bits_is_a_mistake_where_no_dtype_is_asked(self, convert, words):
        feedback = self.check(convert(self.table))
        assert feedback.status == "mistake" and words in feedback.message, feedback.message

    def test_a_float32_array_is_accepted_with_a_note_and_a_tensor_without(self):
        array = self.check(self.table.numpy())
        assert array.correct and "NumPy array" in array.message
        # 03 and 04 store this exact line: it must not change. (A copy: the package's own table is named.)
        assert str(self.check(self.table.clone())) == ("✔ Correct: a (10, 6) table, sin and cos interleaved, matching the "
                                               "formula to 1e-4.")

    def test_the_packages_own_table_is_named_and_every_table_built_by_hand_is_not(self):
        # 03 and 04 ask for the table by hand, and show the package's builders: their own tensors (or views of
        # them) are named; the same numbers built by hand, in float32 or float64, are right.
        package = [(sinusoidal_encoding(max_sequence_length=5, d_model=8), "builder.sinusoidal_encoding"),
                   (sinusoidal_encoding(max_sequence_length=5, d_model=8, dtype=torch.float64),
                    "builder.sinusoidal_encoding"),
                   (encoding.PositionalEncoding(d_model=8, max_sequence_length=5).table, ".table"),
                   (sinusoidal_encoding(max_sequence_length=20, d_model=8)[:5], "sinusoidal_encoding"),
                   (encoding.stepwise_encoding(max_sequence_length=5, d_model=8), "encoding.stepwise_encoding"),
                   (encoding.interleave(encoding.even_pe(max_sequence_length=5, d_model=8),
                                        encoding.odd_pe(max_sequence_length=5, d_model=8)), "encoding.interleave")]
        for table, words in package:
            feedback = self.check(table, max_sequence_length=5, d_model=8)
            assert feedback.status == "mistake" and "the package's own" in feedback.message, feedback
            assert words in feedback.message, feedback
        j = torch.arange(8)
        for dtype in (torch.float32, torch.float64):
            angles = torch.arange(5, dtype=dtype)[:, None] / torch.pow(10000, torch.where(j % 2 == 0, j, j - 1) / 8)
            by_hand = torch.where(j % 2 == 0, torch.sin(angles), torch.cos(angles))
            for right in (by_hand, by_hand.float()):
                assert self.check(right, max_sequence_length=5, d_model=8).correct
        # Computed in float64 and rounded, it equals the package's float32 table bit for bit: only where a tensor
        # came from tells the two apart.
        assert torch.equal(by_hand.float(), sinusoidal_encoding(max_sequence_length=5, d_model=8))
        # A table of the wrong size is told its size, whoever built it.
        wrong = self.check(sinusoidal_encoding(max_sequence_length=10, d_model=6), max_sequence_length=8,
                           d_model=4)
        assert wrong.status == "wrong" and "Shape (10, 6)" in wrong.message


# The sizes read the wrong way round (04, Exercises 1 and 2) -------------------------------------------------


def read_the_wrong_way_round(X):
    """04's code: `d, L = X.shape` on X of shape (max_sequence_length, d_model), then the notebook's steps."""
    d, L = X.shape
    position = torch.arange(L, dtype=torch.float32).reshape(L, 1)
    denominator = torch.pow(10000, torch.arange(0, d, 2).float() / d)
    return torch.flatten(torch.stack([torch.sin(position / denominator), torch.cos(position / denominator)], dim=2), 1, 2)


class TestSwappedSizes:
    def check_shape(self, answer, max_sequence_length=10, d_model=6):
        return exercises.check_table_shape(answer, max_sequence_length=max_sequence_length, d_model=d_model)

    @pytest.mark.parametrize("length,d_model", [(10, 6), (9, 6), (4, 10), (7, 7)])
    def test_the_accepted_shape_is_what_the_code_builds(self, length, d_model):
        shape = tuple(read_the_wrong_way_round(torch.zeros(length, d_model)).shape)
        for form in (shape, list(shape), torch.Size(shape), tuple(float(n) for n in shape), torch.tensor(shape),
                     torch.tensor(shape, dtype=torch.float32)):
            assert self.check_shape(form, length, d_model).correct, form

    @pytest.mark.parametrize("answer,words", [
        ((10, 6), "the shape the code means to build"), ((10, 6), "d = 10 and L = 6"),
        ((10, 6), "6 positions"), ((10, 6), "one (sin, cos) pair per even number below d = 10, 10 columns"),
    ])
    def test_the_intended_shape_is_named(self, answer, words):
        feedback = self.check_shape(answer)
        assert feedback.status == "mistake" and words in feedback.message, feedback.message
        assert "even column" not in feedback.message  # the pairs count even numbers below d, not columns

    def test_the_right_sizes_in_the_wrong_order_and_an_odd_size(self):
        # With an odd max_sequence_length the shape read the wrong way is not the intended shape transposed.
        assert "wrong order" in self.check_shape((10, 6), max_sequence_length=9, d_model=6).message
        odd = self.check_shape((6, 9), max_sequence_length=9, d_model=6)
        assert odd.status == "mistake" and "10 columns, one more than d" in odd.message

    @pytest.mark.parametrize("answer,words", [
        ((6, 5), "6 rows is right"), ((6, 5), "You counted the denominators"), ((6, 6), "2 columns per pair: 10"),
    ])
    def test_the_right_rows_with_too_few_columns_are_named(self, answer, words):
        feedback = self.check_shape(answer)
        assert feedback.status == "mistake" and words in feedback.message, feedback.message
        assert "Read the first line" not in feedback.message
        assert (answer == (6, 5)) == ("You counted" in feedback.message)

    @pytest.mark.parametrize("junk", [None, (10, 10), (6,), "6, 10", 60, [6, "ten"], (6, -10), (True, 10)])
    def test_junk_is_answered_without_raising(self, junk):
        assert not self.check_shape(junk).correct

    def test_the_table_and_its_transpose_are_named(self):
        table = read_the_wrong_way_round(torch.zeros(10, 6))
        feedback = exercises.check_encoding(table, max_sequence_length=10, d_model=6)
        assert feedback.status == "mistake" and "two sizes in each other's places" in feedback.message
        transposed = exercises.check_encoding(table.T, max_sequence_length=10, d_model=6)
        assert transposed.status == "mistake" and "`.T` moves numbers" in transposed.message
        fixed = read_the_wrong_way_round(torch.zeros(6, 10))  # X.shape read as (d, L) on a (d, L) X: the fix
        assert exercises.check_encoding(fixed, max_sequence_length=10, d_model=6).correct


def test_python_O_lets_any_length_through_a_class_that_builds_its_positions():
    # The shape of the source class in 11 section 3: an assert on the length, then the positions built on the spot.
    # Plain Python, not torch: under -O, Python would compile all of torch again (its cached bytecode is for plain runs).
    code = ("max_seq_len = 10\n"
            "def forward(x):\n"
            "    assert x < max_seq_len\n"
            "    return [[float(pos)] * 6 for pos in range(x)]\n"
            "print(len(forward(25)))\n")
    result = subprocess.run([sys.executable, "-O", "-c", code], capture_output=True, text=True, timeout=120)
    assert result.stdout.strip() == "25"


def test_loftrs_unbracketed_scale_is_minus_one_and_leaves_four_of_64_pairs_turning():
    # 11 section 1 and check_loftr_turning_pairs: "-log(10000) / d_model//2" at d_model = 256.
    d_model = 256
    assert -math.log(10000.0) / d_model//2 == -1.0
    doubled_pair = torch.arange(0, d_model // 2, 2).float()
    turning = {name: int((256 * torch.exp(doubled_pair * scale) > 0.1).sum())
               for name, scale in [("as written", -1.0), ("with brackets", -math.log(10000.0) / (d_model // 2))]}
    assert turning == {"as written": 4, "with brackets": 55}
    # Review 39: the count itself is asked, in any form; the off-by-ones and the bracketed count are named.
    for right in (4, "4", " 4 ", 4.0, torch.tensor(4)):
        assert exercises.check_loftr_turning_pairs(right).correct, right
    assert "pair 0 counts too" in exercises.check_loftr_turning_pairs(3).message
    assert "pair 4 falls just short" in exercises.check_loftr_turning_pairs(5).message
    assert "count with the brackets" in exercises.check_loftr_turning_pairs(55).message
    for wrong in (3, 5, 55, 64, 0):
        feedback = exercises.check_loftr_turning_pairs(wrong)
        assert not feedback.correct and "Pair 3 reaches 0.63, pair 4 only 0.086" in feedback.message, wrong
    assert "counts too" not in exercises.check_loftr_turning_pairs(64).message
    # Review 59: the message gives the two angles, not the count again (the answer and the plot title say it).
    assert "pass 0.1" not in exercises.check_loftr_turning_pairs(4).message
    for unread in ("c", "four", 1.5, -1, 65, True):
        feedback = exercises.check_loftr_turning_pairs(unread)
        assert not feedback.readable and "Expected a count of pairs from 0 to 64" in feedback.message, unread
    assert exercises.check_loftr_turning_pairs(None).status == "not attempted"


def _by_hand(max_sequence_length, d_model):
    position = torch.arange(max_sequence_length, dtype=torch.float32).reshape(-1, 1)
    angle = position / torch.pow(10000, torch.arange(0, d_model, 2).float() / d_model)
    table = torch.zeros(max_sequence_length, d_model)
    table[:, 0::2] = torch.sin(angle)
    table[:, 1::2] = torch.cos(angle[:, : d_model // 2])
    return table


def _concatenated(max_sequence_length, d_model):
    position = torch.arange(max_sequence_length, dtype=torch.float32).reshape(-1, 1)
    angle = position / torch.pow(10000, torch.arange(0, d_model, 2).float() / d_model)
    return torch.cat([torch.sin(angle), torch.cos(angle[:, : d_model // 2])], dim=1)


def _stack_and_flatten(max_sequence_length, d_model):
    position = torch.arange(max_sequence_length, dtype=torch.float32).reshape(-1, 1)
    denominator = torch.pow(10000, torch.arange(0, d_model, 2).float() / d_model)
    pairs = [torch.sin(position / denominator), torch.cos(position / denominator)]
    return torch.flatten(torch.stack(pairs, dim=2), 1, 2)


def _t2t(max_sequence_length, d_model):
    # tensor2tensor's get_timing_signal_1d, by hand: d_model // 2 denominators from 1 to 10000, both ends included.
    # With one pair (d_model 2 or 3) there are no steps, and its one denominator is 1.
    pairs = d_model // 2
    position = torch.arange(max_sequence_length, dtype=torch.float32).reshape(-1, 1)
    angle = position / torch.pow(10000, torch.arange(pairs).float() / max(pairs - 1, 1))
    return torch.cat([torch.sin(angle), torch.cos(angle), torch.zeros(max_sequence_length, d_model % 2)], dim=1)


class TestEncodingFunction:
    # 04's Exercise 3: tensor2tensor's table (all sines, all cosines, a zero column for an odd d_model), by hand.
    check = staticmethod(exercises.check_encoding_function)

    def test_every_right_route_is_accepted(self):
        def as_tensorflow(max_sequence_length, d_model):  # log-space increments and a pad, as get_timing_signal_1d
            n = d_model // 2
            inverse = torch.exp(torch.arange(n).float() * -(math.log(1.0e4) / max(n - 1, 1)))
            scaled = torch.arange(max_sequence_length).float()[:, None] * inverse[None]
            return torch.nn.functional.pad(torch.cat([torch.sin(scaled), torch.cos(scaled)], dim=1), (0, d_model % 2))

        def by_loop(max_sequence_length, d_model):
            n = d_model // 2
            rows = []
            for p in range(max_sequence_length):
                angles = [p / 10000 ** (i / (n - 1)) if n > 1 else p for i in range(n)]
                rows.append([math.sin(a) for a in angles] + [math.cos(a) for a in angles] + [0.0] * (d_model % 2))
            return rows

        def linspace(max_sequence_length, d_model):
            n = d_model // 2
            angle = torch.arange(max_sequence_length).double()[:, None] / torch.logspace(0, 4, n, dtype=torch.float64)
            table = torch.zeros(max_sequence_length, d_model, dtype=torch.float64)
            table[:, :n], table[:, n:2 * n] = torch.sin(angle), torch.cos(angle)
            return table

        def exponent_by_linspace(max_sequence_length, d_model):  # linspace(0, 1, 1) is [0.]: one pair needs no guard
            n = d_model // 2
            angle = torch.arange(max_sequence_length).float()[:, None] / 10000 ** torch.linspace(0, 1, n)
            return torch.cat([angle.sin(), angle.cos(), torch.zeros(max_sequence_length, d_model % 2)], dim=1)

        for answer in (_t2t, as_tensorflow, by_loop, linspace, exponent_by_linspace):
            feedback = self.check(answer)
            assert feedback.correct, (answer.__name__, feedback.message)
            assert "(5, 2), (3, 3)" in feedback.message, feedback.message

    def test_one_pair_without_the_guard_is_named(self):
        # d_model 2 or 3: pairs - 1 = 0. Dividing by it gives nan (torch) or raises (Python floats); 10000 is wrong.
        def unguarded(max_sequence_length, d_model):
            pairs = d_model // 2
            position = torch.arange(max_sequence_length, dtype=torch.float32).reshape(-1, 1)
            angle = position / torch.pow(10000, torch.arange(pairs).float() / (pairs - 1))
            return torch.cat([torch.sin(angle), torch.cos(angle), torch.zeros(max_sequence_length, d_model % 2)], 1)

        def by_exp(max_sequence_length, d_model):  # 0 * -inf = nan
            n = d_model // 2
            inverse = torch.exp(torch.arange(n).float() * -(math.log(1.0e4) / torch.tensor(n - 1.0)))
            angle = torch.arange(max_sequence_length).float()[:, None] * inverse
            return torch.cat([angle.sin(), angle.cos(), torch.zeros(max_sequence_length, d_model % 2)], dim=1)

        for answer in (unguarded, by_exp):
            feedback = self.check(answer)
            assert feedback.status == "mistake" and "d_model=2" in feedback.message, feedback.message
            assert "holds nan" in feedback.message and "one denominator is 1" in feedback.message, feedback.message
            assert "2017" in feedback.message and "Since 2018" in feedback.message, feedback.message

        def by_python_loop(max_sequence_length, d_model):
            n = d_model // 2
            angles = [[p / 10000 ** (i / (n - 1)) for i in range(n)] for p in range(max_sequence_length)]
            return [[math.sin(a) for a in row] + [math.cos(a) for a in row] + [0.0] * (d_model % 2) for row in angles]

        feedback = self.check(by_python_loop)
        assert feedback.status == "wrong" and "ZeroDivisionError" in feedback.message, feedback.message
        assert "d_model = 2 there is one pair" in feedback.message, feedback.message

        def top_end(max_sequence_length, d_model):  # one pair given the denominator 10000 instead of 1
            if d_model // 2 > 1:
                return _t2t(max_sequence_length, d_model)
            angle = torch.arange(max_sequence_length).float()[:, None] / 10000
            return torch.cat([angle.sin(), angle.cos(), torch.zeros(max_sequence_length, d_model % 2)], dim=1)

        feedback = self.check(top_end)
        assert feedback.status == "mistake" and "not 10000" in feedback.message, feedback.message
        feedback = self.check(lambda max_sequence_length, d_model: _t2t(max_sequence_length, d_model)
                              if d_model != 3 else _t2t(max_sequence_length, d_model)[:, [1, 0, 2]])
        assert feedback.status == "mistake" and "1 sine column, then 1 cosine column, then one column of zeros" in (
            feedback.message), feedback.message

    def test_our_table_reordered_is_named(self):
        # The copy the screen allows: our table in the concatenated layout, or stack + flatten.
        feedback = self.check(_concatenated)
        assert feedback.status == "mistake" and "our table's odd layout" in feedback.message, feedback.message
        feedback = self.check(lambda max_sequence_length, d_model: _concatenated(max_sequence_length, d_model)
                              if d_model % 2 == 0 else _t2t(max_sequence_length, d_model))
        assert feedback.status == "mistake" and "the paper's denominators" in feedback.message, feedback.message
        feedback = self.check(_stack_and_flatten)
        assert feedback.status == "mistake" and "6 columns for d_model = 5" in feedback.message, feedback.message

    def test_the_paper_denominators_message_gives_the_step(self):
        def paper(max_sequence_length, d_model):
            n = d_model // 2
            angle = torch.arange(max_sequence_length, dtype=torch.float32)[:, None] / 10000 ** (2 * torch.arange(n) / d_model)
            zeros = torch.zeros(max_sequence_length, d_model % 2)
            return torch.cat([torch.sin(angle), torch.cos(angle), zeros], dim=1)

        feedback = self.check(paper)
        assert feedback.status == "mistake" and "the paper's denominators" in feedback.message, feedback.message
        assert "10000^(1 / 1)" not in feedback.message, feedback.message
        assert "tensor2tensor's denominators run from 1 to exactly 10000" in feedback.message, feedback.message
        assert "times 10000" in feedback.message and "the step is" not in feedback.message, feedback.message

    def test_the_usual_mistakes_say_what_was_got_and_expected(self):
        def layout(order):
            def built(max_sequence_length, d_model):
                table, n = _t2t(max_sequence_length, d_model), d_model // 2
                parts = {"s": table[:, :n], "c": table[:, n:2 * n], "z": table[:, 2 * n:]}
                return torch.cat([parts[key] for key in order], dim=1)
            return built

        def interleaved(max_sequence_length, d_model):
            table, n = _t2t(max_sequence_length, d_model), d_model // 2
            pairs = torch.stack([table[:, :n], table[:, n:2 * n]], dim=2).flatten(1, 2)
            return torch.cat([pairs, table[:, 2 * n:]], dim=1)

        def short_of_the_base(max_sequence_length, d_model):
            n = d_model // 2
            angle = torch.arange(max_sequence_length).float()[:, None] / torch.pow(10000, torch.arange(n).float() / n)
            return torch.cat([torch.sin(angle), torch.cos(angle), torch.zeros(max_sequence_length, d_model % 2)], 1)

        def one_off(max_sequence_length, d_model):
            table = _t2t(max_sequence_length, d_model)
            table[0, 0] += 0.5
            return table

        cases = [(layout("csz"), "mistake", "cosines come first"), (layout("zsc"), "mistake", "zeros goes last"),
                 (layout("sc"), "mistake", "4 columns for d_model = 5"), (interleaved, "mistake", "interleaved layout"),
                 (short_of_the_base, "mistake", "one step short of 10000"),
                 (lambda max_sequence_length, d_model: _t2t(max_sequence_length + 1, d_model)[1:], "mistake",
                  "start at 1"),
                 (one_off, "wrong", "Row 0, column 0 (the sine of pair 0) is 0.5000, expected 0.0000"),
                 (lambda max_sequence_length, d_model: _t2t(max_sequence_length, d_model).T, "mistake", "Transposed")]
        for answer, status, said in cases:
            feedback = self.check(answer)
            assert feedback.status == status and said in feedback.message, (said, feedback.message)

    def test_a_fixed_table_is_caught_on_fresh_sizes(self):
        table = _t2t(10, 5)
        feedback = self.check(lambda max_sequence_length, d_model: table)
        assert not feedback.correct and "max_sequence_length=6, d_model=8" in feedback.message, feedback.message
        feedback = self.check(table)
        assert feedback.status == "mistake" and "not a function" in feedback.message

    def test_the_package_is_named(self):
        from posenc import encoding

        def helpers(max_sequence_length, d_model):
            position = encoding.positions(max_sequence_length=max_sequence_length)
            sines = torch.sin(position / encoding.even_denominator(d_model=d_model))
            cosines = torch.cos(position / encoding.odd_denominator(d_model=d_model))
            return torch.cat([sines, cosines], dim=1)

        def reordered_package(max_sequence_length, d_model):
            return encoding.to_concatenated(sinusoidal_encoding(max_sequence_length=max_sequence_length,
                                                                d_model=d_model))

        def reordered_own(max_sequence_length, d_model):
            return encoding.to_concatenated(_by_hand(max_sequence_length, d_model))

        for answer in (helpers, reordered_package, reordered_own):
            feedback = self.check(answer)
            assert feedback.status == "mistake" and "package's own" in feedback.message, feedback.message

    def test_the_parameters_may_have_any_names_but_come_in_order(self):
        # Called as my_encoding(L, d), as 03's wavelength checker calls its function: the prompt's signature is
        # positional, so a right function passes whatever its parameters are called.
        def star(*sizes):
            return _t2t(*sizes)

        for answer in (lambda length, d: _t2t(length, d), lambda L, width: _t2t(L, width), star,
                       lambda max_sequence_length, d_model=6: _t2t(max_sequence_length, d_model)):
            feedback = self.check(answer)
            assert feedback.correct, feedback.message

        def keywords_only(*, max_sequence_length, d_model):
            return _t2t(max_sequence_length, d_model)

        for answer in (keywords_only, lambda max_sequence_length: _t2t(max_sequence_length, 6),
                       lambda max_sequence_length, d_model, dtype: _t2t(max_sequence_length, d_model)):
            feedback = self.check(answer)
            assert feedback.status == "mistake" and "calls my_encoding(10, 5), max_sequence_length first" in (
                feedback.message) and "Give it two parameters" in feedback.message, feedback.message
        feedback = self.check(lambda d_model, max_sequence_length: _t2t(max_sequence_length, d_model))  # swapped
        assert feedback.status == "wrong" and "Shape (5, 10), expected" in feedback.message, feedback.message

    def test_odd_answers_never_raise(self):
        assert self.check(None).status == "not attempted"
        assert self.check(3).status == "wrong"
        for returned in (None, "a table", torch.zeros(0), torch.zeros(10, 5, dtype=torch.int64),
                         torch.zeros(10, 5, dtype=torch.complex64), torch.full((10, 5), float("nan")),
                         torch.zeros(10, 5, device="meta"), [[1, 2], [3]]):
            feedback = self.check(lambda max_sequence_length, d_model, returned=returned: returned)
            assert feedback.status == "wrong" and "max_sequence_length=10, d_model=5" in feedback.message, (
                returned, feedback.message)

        def raises(max_sequence_length, d_model):
            raise ValueError("no")

        assert self.check(raises).status == "wrong"
        half = self.check(lambda max_sequence_length, d_model: _t2t(max_sequence_length, d_model).half())
        assert half.status == "mistake" and "float16" in half.message, half.message


# 03's Exercise 2: the wavelength of any column ------------------------------------------------------------------


def _last_full_turn_by_hand(max_sequence_length, d_model):
    # Solve 2π · 10000^(2i/d_model) <= max_sequence_length - 1 for the largest pair i; its cosine is column 2i + 1.
    i = math.floor(d_model / 2 * math.log((max_sequence_length - 1) / (2 * math.pi), 10000))
    return 2 * min(i, d_model // 2 - 1) + 1


def _last_full_turn_by_loop(max_sequence_length, d_model):
    last = None
    for j in range(d_model):
        if 2 * math.pi * 10000 ** ((j - j % 2) / d_model) <= max_sequence_length - 1:
            last = j
    return last


class TestLastFullTurnFunction:
    check = staticmethod(exercises.check_last_full_turn_function)

    def test_right_answers_by_formula_loop_or_table_are_accepted(self):
        assert self.check(_last_full_turn_by_hand).correct
        assert self.check(_last_full_turn_by_loop).correct
        assert self.check(lambda length, d: torch.tensor(_last_full_turn_by_loop(length, d))).correct
        assert self.check(lambda length, d: float(_last_full_turn_by_loop(length, d))).correct

    def test_it_agrees_with_the_package_wavelengths(self):
        for length, d_model in ((10, 6), (63, 8), (64, 128), (100, 512)):
            turning = (encoding.wavelengths(d_model=d_model) <= length - 1).nonzero()
            assert _last_full_turn_by_loop(length, d_model) == int(turning.max())

    def test_the_package_is_named(self):
        feedback = self.check(lambda length, d: int((encoding.wavelengths(d_model=d) <= length - 1).nonzero().max()))
        assert feedback.status == "mistake" and "package's own" in feedback.message, feedback.message

    @pytest.mark.parametrize("rule,words", [
        # Column j in the exponent, the mistake 03 warns about: (10, 6) gives 0, and the right answer is 1.
        (lambda length, d: max(j for j in range(d) if 2 * math.pi * 10000 ** (j / d) <= length - 1), "column j in the exponent"),
        (lambda length, d: max(j for j in range(d) if 2 * math.pi * 10000 ** (j / d) < length - 1), "column j in the exponent"),
        (lambda length, d: _last_full_turn_by_loop(length, d) // 2, "the pair number i"),
        (lambda length, d: _last_full_turn_by_loop(length, d) - 1, "sine column, 2i"),
        (lambda length, d: _last_full_turn_by_loop(length, d) + 1, "one past the last column that turns"),
        # The first column that does not turn (d_model when every column turns): one past the answer, reasoned otherwise.
        (lambda length, d: next((j for j in range(d) if 2 * math.pi * 10000 ** ((j - j % 2) / d) > length - 1), d),
         "the first column that does not turn"),
        (lambda length, d: _last_full_turn_by_loop(length + 1, d), "max_sequence_length - 1"),
        (lambda length, d: max(j for j in range(d) if 10000 ** ((j - j % 2) / d) <= length - 1), "the denominator"),
        # The formula without its clamp: at 100,000 positions and d_model 4 every column turns, and it says 5.
        (lambda length, d: 2 * math.floor(d / 2 * math.log((length - 1) / (2 * math.pi), 10000)) + 1, "past column 3"),
        # The pair number i, not 2i, in the exponent: denominators 10000^(i/d_model), the square roots of the right ones.
        (lambda length, d: max(2 * i + 1 for i in range(d // 2) if 2 * math.pi * 10000 ** (i / d) <= length - 1),
         "square roots"),
    ])
    def test_the_usual_mistakes_are_named(self, rule, words):
        feedback = self.check(rule)
        assert feedback.status == "mistake" and words in feedback.message, feedback.message

    def test_other_answers_say_what_they_got(self):
        assert self.check(None).status == "not attempted"
        assert self.check(3).status == "wrong" and "Expected a function" in self.check(3).message
        feedback = self.check(lambda length, d: 0)
        assert feedback.status == "wrong" and "returned 0. That column turns, but a later column does too" in feedback.message
        assert "is 1" not in feedback.message  # the expected column is never told: no lookup table from the messages
        feedback = self.check(lambda length, d: _last_full_turn_by_loop(length, d) + 3)
        assert feedback.status == "wrong" and "does not complete a full turn" in feedback.message, feedback.message
        feedback = self.check(lambda length, d: 10**6)
        assert feedback.status == "wrong" and "is not a column" in feedback.message, feedback.message
        feedback = self.check(lambda length, d: "many")
        assert feedback.status == "wrong" and "not a whole column number" in feedback.message
        feedback = self.check(lambda length, d: 1 / 0)
        assert feedback.status == "wrong" and "ZeroDivisionError" in feedback.message
        # A function returns a column, not text: the string of the right number is refused.
        feedback = self.check(lambda length, d: str(_last_full_turn_by_loop(length, d)))
        assert feedback.status == "wrong" and "returned str '1', not a whole column number" in feedback.message, feedback.message


# 04's Exercise 2: what row 2 of table.T holds ---------------------------------------------------------------------


def test_transposed_row_meaning_accepts_b_and_names_each_wrong_choice():
    for right in ("b", " B "):
        feedback = exercises.check_transposed_row_meaning(right)
        assert feedback.correct and "slice of one sine wave" in feedback.message, feedback.message
        assert "10000^" not in feedback.message, feedback.message  # the run after it prints the row: one sentence here
    for wrong, words in (("a", "column 2 of table, not row 2"), ("c", "not the numbers of position 2 in another order")):
        feedback = exercises.check_transposed_row_meaning(wrong)
        assert feedback.status == "mistake" and words in feedback.message and "The answer is 'b'" in feedback.message
    assert exercises.check_transposed_row_meaning(None).status == "not attempted"
    feedback = exercises.check_transposed_row_meaning("d")
    assert feedback.status == "wrong" and "Expected one of 'a', 'b', 'c', got" in feedback.message, feedback.message


def test_transposed_row_meaning_matches_the_swapped_table():
    # Row 2 of the transposed swapped table is one sine wave at the swapped sizes, as option b says.
    d, L = 10, 6
    table = encoding.stepwise_encoding(max_sequence_length=L, d_model=d)
    assert torch.allclose(table.T[2], torch.sin(torch.arange(L) / 10000 ** (2 / d)), atol=1e-6)
    assert table.T[2][0] == 0


def test_show_column_waits_for_a_judged_prediction(capsys):
    exercises.show_column(None, column=3, d_model=8, positions=20)
    assert capsys.readouterr().out.strip() == exercises.WAITING_FOR_A_PREDICTION
    exercises.show_column(987_654, column=3, d_model=8, positions=20)  # a prediction no checker has judged
    assert capsys.readouterr().out.strip() == exercises.CHECK_FIRST


def test_a_wrong_position_gets_a_hint_without_the_denominator():
    feedback = exercises.check_first_negative(5, column=3, d_model=8)
    assert feedback.status == "wrong" and "Work out the column's denominator" in feedback.message, feedback.message
    assert "/ 10" not in feedback.message and "x 10" not in feedback.message, feedback.message


def test_show_column_prints_the_column_without_the_line_that_computes_it(capsys):
    # 03's Exercise 1 run cell: column 3 at d_model = 8 first drops below zero at position 16.
    exercises.check_first_negative(16, column=3, d_model=8)
    capsys.readouterr()
    exercises.show_column(16, column=3, d_model=8, positions=20)
    printed = capsys.readouterr().out
    assert printed.startswith("column 3 at d_model = 8, positions 0 to 19:")
    values = [float(v) for v in printed.split("[", 1)[1].split("]")[0].replace("\n", " ").split(",")]
    assert len(values) == 20 and min(p for p, v in enumerate(values) if v < 0) == 16


# The explore notebook's Exercise 2: the position least like 10 by the slowest pair alone, at base 10 ------------------


@pytest.mark.parametrize("right", [40, 40.0, "40", " 40 ", 40.3, np.int64(40), torch.tensor(40)])
def test_least_alike_by_slowest_pair_accepts_40_and_the_exact_40_3(right):
    feedback = exercises.check_least_alike_by_slowest_pair(right)
    assert feedback.correct and "10 + 30.3 = 40.3" in feedback.message, feedback.message


@pytest.mark.parametrize("wrong,words", [(30, "half the wavelength, 30.3"), (30.3, "Add it to 10"),
                                         (61, "one whole wavelength, 60.6"), (60.6, "half a turn on"),
                                         (70, "a full turn past 10, 70.6"), (-20, "half a turn before 10"),
                                         (63, "the last position. It was the answer at base 10,000"),
                                         (27, "27 is the least-alike position by all pairs"),
                                         (41, "Close: half a turn past 10 is 40.3"), (39, "the nearest position is 40")])
def test_least_alike_by_slowest_pair_names_each_slip(wrong, words):
    feedback = exercises.check_least_alike_by_slowest_pair(wrong)
    assert feedback.status == "mistake" and words in feedback.message, feedback.message


def test_least_alike_by_slowest_pair_refuses_the_rest_with_a_true_message():
    for other in (42, 57, 0, 1e9):
        feedback = exercises.check_least_alike_by_slowest_pair(other)
        assert feedback.status == "wrong" and "the position least like 10 is 40" in feedback.message
    assert exercises.check_least_alike_by_slowest_pair("b").status == "wrong"
    assert exercises.check_least_alike_by_slowest_pair(None).status == "not attempted"


def least_like_ten(base, d_model=128, positions=64):
    table = sinusoidal_encoding(max_sequence_length=positions, d_model=d_model, base=base).double()
    row = table @ table[10]
    return int(row.argmin()), float(row.min())


def test_least_alike_states_what_the_tables_show():
    longest = {base: 2 * math.pi * base ** (126 / 128) for base in (10_000, 31.62, 19.95, 10)}
    assert [round(longest[b], 1) for b in (31.62, 19.95, 10)] == [188.2, 119.6, 60.6]
    # All pairs: the last row at base 10,000 (and 100), then the lowest point comes sooner as the base falls.
    assert [least_like_ten(base)[0] for base in (10_000, 100, 31.62, 19.95, 10)] == [63, 63, 57, 39, 27]
    # At base 31.62 the slowest pair alone is lowest half a turn on, 94.1 positions from 10: past the last position, 63.
    assert 10 + longest[31.62] / 2 > 63
    # At base 10 the slowest pair alone is lowest half a turn on, 10 + 30.3 = 40.3: position 40, where the sum says 27.
    assert round(longest[10] / 2, 1) == 30.3 and least_like_ten(10)[0] == 27
    # Every pair's share depends on the offset alone: the stripes. From base 31.62 down, some are below 0 (blue).
    assert least_like_ten(100)[1] > -1 and least_like_ten(31.62)[1] < -9 and least_like_ten(10_000)[1] > 28


def test_show_least_alike_waits_for_a_judged_prediction_then_prints_the_table(capsys):
    exercises.show_least_alike(None, bases=(19.95,))
    assert "position least like" not in capsys.readouterr().out
    exercises.check_least_alike_by_slowest_pair(40)
    exercises.show_least_alike(40, bases=(10_000, 19.95, 10))
    lines = capsys.readouterr().out.splitlines()
    assert "position least like 10" in lines[0] and "by the slowest pair alone" in lines[1]
    # base, longest wavelength, least like 10 by the slowest pair alone (half its turn past 10, or the end), by all pairs
    assert [line.split() for line in lines[2:]] == [["10,000", "54410.1", "63", "63"], ["19.95", "119.6", "63", "39"],
                                                    ["10", "60.6", "40", "27"]]


def test_rope_self_score_peak_accepts_c_and_says_only_true_things_about_a():
    # 13 Exercise 1. Aligned whole vectors are enough for a peak at offset 0, but not needed: aligned pairs suffice too.
    for written in ("c", "C", " (c)", "'c'"):
        assert exercises.check_rope_self_score_peak(written).correct
    for wrong in ("a", "b", "d", "e"):
        assert not exercises.check_rope_self_score_peak(wrong).correct
    # Review 45: the message for c gives the reason c is right, not only why the peak need not be at offset 0
    assert "positions only through the offset" in exercises.check_rope_self_score_peak("c").message
    a = exercises.check_rope_self_score_peak("a").message
    assert "only if" not in a and "if the query and the key point the same way" in a
    q = torch.tensor([1.0, 0.0, 0.0, 2.0], dtype=torch.float64)
    k = torch.tensor([3.0, 0.0, 0.0, 0.5], dtype=torch.float64)  # each pair points as q's does, the whole vector does not
    query = schemes.apply_rotary(q[None], offset=50)[0]  # the query at 50, keys at 0 .. 100
    scores = schemes.apply_rotary(k.expand(101, -1)) @ query
    assert int(scores.argmax()) == 50
