"""The checker of 12's bfloat16 exercise, against an independent count of bfloat16's whole numbers."""

import math

import pytest

from posenc import exercises


def bfloat16_round(n: int) -> int:
    """n rounded to bfloat16 (8 significant bits, round half to even), in plain integer arithmetic."""
    if n < 256:
        return n
    gap = 2 ** (n.bit_length() - 8)  # n has bit_length() bits; 8 of them are kept
    quotient, remainder = divmod(n, gap)
    if 2 * remainder > gap or (2 * remainder == gap and quotient % 2 == 1):
        quotient += 1
    return quotient * gap


def distinct(max_sequence_length: int) -> int:
    return len({bfloat16_round(p) for p in range(max_sequence_length)})


def test_the_independent_count_knows_the_known_values():
    rounded = [bfloat16_round(p) for p in (255, 256, 257, 258, 259, 514, 515, 1000)]
    assert rounded == [255, 256, 256, 258, 260, 512, 516, 1000]
    assert distinct(4096) == 769 and distinct(1001) == 507


@pytest.mark.parametrize("max_sequence_length", [1, 10, 257, 258, 300, 1001, 4096, 70_000])
def test_the_count_is_correct_and_one_off_is_not(max_sequence_length):
    expected = distinct(max_sequence_length)
    assert exercises.check_bfloat16_positions(expected, max_sequence_length=max_sequence_length).correct
    assert exercises.check_bfloat16_positions(float(expected), max_sequence_length=max_sequence_length).correct
    assert not exercises.check_bfloat16_positions(expected + 1, max_sequence_length=max_sequence_length).correct


def test_it_names_the_likely_mistakes():
    def message(answer):
        return exercises.check_bfloat16_positions(answer, max_sequence_length=1001).message

    assert "one value per position" in message(1001)
    assert "only the exact positions" in message(257)
    assert "Close" in message(506) and "507" in message(506)
    assert "expected 507" in message(100)
    assert "Not attempted" in message(None)
    assert "whole number" in message(math.pi)


def test_a_bad_size_names_the_argument():
    with pytest.raises(ValueError, match="max_sequence_length"):
        exercises.check_bfloat16_positions(3, max_sequence_length=0)
