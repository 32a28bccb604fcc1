"""Every diagnosis of posenc.exercises, fed the exact mistake a learner makes."""

import functools
import json
import math
import re
from pathlib import Path

import pytest
import torch

from posenc import encoding, exercises, schemes
from posenc.encoding import PositionalEncoding, sinusoidal_encoding, stepwise_encoding
from posenc.exercises import feedback

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
])
def test_each_known_mistake_is_named(mistake, table, words):
    feedback = check(table())
    assert feedback.status == "mistake", f"{mistake}: {feedback}"
    assert words in feedback.message


def test_float64_is_a_mistake_only_where_float32_is_asked():
    table = learner_table(position_dtype=torch.float64)
    asked = check(table, dtype=torch.float32)
    assert asked.status == "mistake" and "float64" in asked.message
    # Asked for no dtype, the exact table is right in float64, as a NumPy array, or as a list.
    # (A copy: the package's own table is named as not the learner's, test_the_packages_own_answers_are_named.)
    exact = sinusoidal_encoding(max_sequence_length=L, d_model=D, dtype=torch.float64).clone()
    for right in (table, exact, exact.numpy(), exact.tolist()):
        feedback = check(right)
        assert feedback.correct, feedback
    # A dtype too narrow to hold the numbers is still a mistake.
    assert check(exact.half()).status == "mistake" and "float16" in check(exact.half()).message


def test_a_float32_table_of_many_positions_is_right():
    # The Annotated Transformer's construction at its own sizes: float32's rounding of the angle grows with the
    # position (about 1.2e-4 by position 2,047 here), past a fixed 1e-4.
    length, d_model = 2048, 512
    position = torch.arange(length, dtype=torch.float32)[:, None]
    div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
    table = torch.zeros(length, d_model)
    table[:, 0::2], table[:, 1::2] = torch.sin(position * div_term), torch.cos(position * div_term)
    exact = sinusoidal_encoding(max_sequence_length=length, d_model=d_model, dtype=torch.float64)
    assert float((table.double() - exact).abs().max()) > 1e-4
    assert exercises.check_encoding(table, max_sequence_length=length, d_model=d_model).correct
    # The tolerance grows with the position only: an error of 1e-3 at position 5 is still found.
    table[5, 7] += 1e-3
    feedback = exercises.check_encoding(table, max_sequence_length=length, d_model=d_model)
    assert feedback.status == "wrong" and "position 5, column 7" in feedback.message


def test_d_model_plus_one_columns_for_odd_d_model():
    d_model = 7
    even_i = torch.arange(0, d_model, 2).float()
    denominator = torch.pow(10000, even_i / d_model)
    position = torch.arange(L, dtype=torch.float32).reshape(L, 1)
    pairs = [torch.sin(position / denominator), torch.cos(position / denominator)]
    naive = torch.flatten(torch.stack(pairs, dim=2), 1, 2)
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
    def test_module(self):
        assert exercises.check_positional_module(SeedModule(refuse_with(ValueError, "<="))).correct
        # The package's own module (04 builds one with these sizes), or a module that hands x to it, is named.
        package = PositionalEncoding(d_model=6, max_sequence_length=10)

        class Wrapper(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.inner = package

            def forward(self, x):
                return self.inner(x)

        for module in (package, Wrapper()):
            feedback = exercises.check_positional_module(module)
            assert feedback.status == "mistake" and "the package's own PositionalEncoding" in feedback.message
        assert exercises.check_positional_module(None).status == "not attempted"

        class TableOnly(torch.nn.Module):
            def forward(self, x):
                return sinusoidal_encoding(max_sequence_length=x.shape[-2], d_model=6).expand_as(x)

        class StrictAssert(torch.nn.Module):
            def forward(self, x):
                assert x.shape[-2] < 10, "too long"  # the source material's off-by-one
                return x

        assert "add it to x" in exercises.check_positional_module(TableOnly()).message
        feedback = exercises.check_positional_module(StrictAssert())
        assert "AssertionError" in feedback.message and "<=" in feedback.message and "python -O" in feedback.message


class SeedModule(torch.nn.Module):
    """Notebook 04's Exercise 2, its `forward` written by `check`."""

    def __init__(self, check):
        super().__init__()
        self.check = check
        self.register_buffer("table", sinusoidal_encoding(max_sequence_length=10, d_model=6))

    def forward(self, x):
        length = x.shape[-2]
        self.check(length, self.table.shape[0])
        return x + self.table[:length]


def test_a_float64_table_that_makes_the_output_float64_is_named_and_the_same_table_cast_once_passes():
    wide = SeedModule(refuse_with(ValueError, "<="))
    wide.table = sinusoidal_encoding(max_sequence_length=10, d_model=6, dtype=torch.float64)
    feedback = exercises.check_positional_module(wide)
    assert feedback.status == "mistake" and "but in float64" in feedback.message and ".to(x.dtype)" in feedback.message
    wide.table = wide.table.float()  # built wide, the finished table cast once
    assert exercises.check_positional_module(wide).correct


def refuse_with(error, longer_than):
    def check(length, rows):
        if length > rows - (longer_than == "<"):
            raise error("sequence too long")
    return check


def asserting(comparison):
    def check(length, rows):
        assert (length < rows) if comparison == "<" else (length <= rows), "sequence too long"
    return check


class CuttingModule(SeedModule):
    def forward(self, x):
        return x[..., : self.table.shape[0], :] + self.table[: x.shape[-2]]


@pytest.mark.parametrize("module,words", [
    (SeedModule(asserting("<")), "stops one position too early"),  # the seed as it is
    (SeedModule(asserting("<=")), "python -O"),  # the comparison fixed, the assert kept
    (SeedModule(lambda length, rows: None), "Nothing checks the length"),  # the check deleted
    (CuttingModule(lambda length, rows: None), "cut the input without a word"),
    (SeedModule(refuse_with(ValueError, "<")), "stops one position too early"),  # ValueError, still off by one
    (SeedModule(refuse_with(ValueError, "<")), "`>=` where it needs `>`"),  # `if length >= rows`: the message names it
    (SeedModule(refuse_with(TypeError, "<=")), "raise ValueError"),
    (SeedModule(refuse_with(IndexError, "<=")), "raise ValueError"),
])
def test_a_module_that_does_not_refuse_a_long_input_cleanly_is_never_correct(module, words):
    feedback = exercises.check_positional_module(module)
    assert feedback.status == "mistake" and words in feedback.message, feedback.message


def test_the_kept_assert_is_explained_in_the_feedback_and_not_sent_to_a_notebook_that_never_teaches_it():
    # No notebook's prose teaches `python -O`: the feedback says what it does, and names no notebook or section.
    message = exercises.check_positional_module(SeedModule(asserting("<="))).message
    assert "`python -O` removes every assert" in message and "Pitfalls" not in message and "section" not in message


def test_the_fixed_module_refuses_one_position_too_many_with_value_error():
    assert exercises.check_positional_module(SeedModule(refuse_with(ValueError, "<="))).correct
    # A module built with 10 rows, checked for 7: it accepts 8 positions, one more than asked.
    feedback = exercises.check_positional_module(SeedModule(refuse_with(ValueError, "<=")), max_sequence_length=7)
    assert feedback.status == "mistake" and "accepted 8 positions" in feedback.message
    # The learner's table may be longer than max_sequence_length: the feedback must not claim its row count.
    assert "rows" not in feedback.message and "longer than max_sequence_length" in feedback.message, feedback.message


def test_the_module_checker_says_the_shape_it_feeds():
    table = sinusoidal_encoding(max_sequence_length=10, d_model=6)

    class OnlyOneLength(torch.nn.Module):
        def forward(self, x):
            if x.shape[-2] != 10:
                raise ValueError("only 10 positions")
            return x + table

    feedback = exercises.check_positional_module(OnlyOneLength())
    assert "x of shape (batch, seq, d_model) = (2, 3, 6)" in feedback.message, feedback
    correct = exercises.check_positional_module(SeedModule(refuse_with(ValueError, "<=")))
    assert correct.correct and "(batch, seq, d_model) = (2, 10, 6)" in correct.message


def test_a_module_written_for_seq_batch_d_model_is_named():
    # pytorch/examples' word_language_model (model.py, PositionalEncoding): x is [sequence length, batch size, embed dim]
    # and forward adds self.pe[:x.size(0)], a (max_len, 1, d_model) buffer. Fed (batch, seq, d_model), it adds row b
    # to every position of sequence b.
    class SequenceFirst(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("pe", sinusoidal_encoding(max_sequence_length=10, d_model=6)[:, None, :])

        def forward(self, x):
            if x.size(0) > self.pe.size(0):
                raise ValueError("too long")
            return x + self.pe[: x.size(0), :]

    feedback = exercises.check_positional_module(SequenceFirst())
    assert feedback.status == "mistake" and "(seq, batch, d_model)" in feedback.message, feedback
    assert "(batch, seq, d_model) = (2, 10, 6)" in feedback.message


@pytest.mark.parametrize("kept", [[1, 2, 3, 4, 5], [0, 1, 2, 3, 5], [0, 2, 3, 4, 5]])
def test_odd_d_model_with_the_wrong_column_dropped_names_the_column(kept):
    d_model = 5
    denominator = torch.pow(10000, torch.arange(0, d_model, 2).float() / d_model)
    position = torch.arange(L, dtype=torch.float32).reshape(L, 1)
    naive = torch.flatten(torch.stack([torch.sin(position / denominator), torch.cos(position / denominator)], dim=2), 1, 2)
    dropped = next(k for k in range(d_model + 1) if k not in kept)
    feedback = exercises.check_encoding(naive[:, kept], max_sequence_length=L, d_model=d_model)
    assert feedback.status == "mistake" and f"column {dropped} (the" in feedback.message
    assert "column 5 instead" in feedback.message
    assert exercises.check_encoding(naive[:, :d_model], max_sequence_length=L, d_model=d_model).correct


def _repair(weights, key_mask):
    """05's Exercise 2, repaired: the padding's weights zeroed, each row divided by its new sum."""
    kept = weights * key_mask
    return kept / kept.sum(dim=-1, keepdim=True)


class TestMaskCheckers:
    """05's repair of weights masked after the softmax."""

    @pytest.mark.parametrize("right", [
        _repair,
        lambda w, m: torch.where(m, w, torch.zeros(())) / torch.where(m, w, torch.zeros(())).sum(-1, keepdim=True),
        lambda w, m: w * m / (w * m).sum(dim=1)[:, None],  # (a list of rows is refused: weights @ V needs a tensor)
    ])
    def test_mask_repair_accepts_a_right_repair(self, right):
        feedback = exercises.check_mask_repair(right)
        assert feedback.correct and "3 new cases" in feedback.message, feedback
        # The verdict fits one short line; the proof sits on the next.
        first, proof = feedback.message.split("\n")
        assert len(first.split()) <= 20 and "softmax over its real keys" in first and "R / S" in proof, feedback
        assert "buggy rows sum to R / S, less than 1" in proof, feedback  # what went wrong, said once it is fixed

    @pytest.mark.parametrize("mistake,function,words", [
        ("nothing", lambda w, m: w, "Nothing was repaired"),
        ("the bug", lambda w, m: w * m, "the bug itself"),
        ("the old row sum", lambda w, m: (w * m) / w.sum(-1, keepdim=True), "old row sums would change nothing"),
        ("no keepdim", lambda w, m: (w * m) / (w * m).sum(-1), "without keepdim=True"),
        ("columns", lambda w, m: (w * m) / (w * m).sum(0, keepdim=True), "Each column"),
        ("softmax of the zeroed weights", lambda w, m: torch.softmax(w * m, -1), "second softmax"),
        ("softmax of the weights at -inf", lambda w, m: torch.softmax(w.masked_fill(~m, float("-inf")), -1),
         "second softmax"),
        # The same, written out: exp, the mask, then each row normalised (no -inf, no torch.softmax).
        ("exp, mask, normalise", lambda w, m: (w.exp() * m) / (w.exp() * m).sum(-1, keepdim=True), "exp of the weights"),
        ("rows", lambda w, m: w * m[:, None], "rows (queries)"),
        ("split evenly", lambda w, m: w * m + (1 - (w * m).sum(-1, keepdim=True)) / m.sum() * m, "split evenly"),
        # Right numbers through -inf and a softmax again: the route the exercise rules out.
        ("the log trick", lambda w, m: torch.softmax(w.log().masked_fill(~m, float("-inf")), -1), "softmax of your own"),
    ])
    def test_mask_repair_names_the_mistake(self, mistake, function, words):
        feedback = exercises.check_mask_repair(function)
        assert feedback.status == "mistake" and words in feedback.message, f"{mistake}: {feedback}"

    def test_mask_repair_names_the_parameter_unmasked_as_the_notebook_does(self):
        # In the notebook `weights` is the masked table; the function's first parameter is the unmasked one.
        message = exercises.check_mask_repair(torch.zeros(3, 3)).message
        assert "my_repair(unmasked, key_mask)" in message and "my_repair(weights" not in message, message
        message = exercises.check_mask_repair(lambda w, m: w * m[:, None]).message
        assert "unmasked * key_mask" in message, message

    def test_the_bug_itself_is_not_told_of_a_division_it_did_not_make(self):
        # No division and a division by the old row sums (each 1) give the same numbers: one message true of both.
        message = exercises.check_mask_repair(lambda w, m: w * m).message
        assert "dividing by them" not in message and "would change nothing" in message, message

    def test_mask_repair_accepts_an_in_place_repair_with_a_caution(self):
        def in_place(weights, key_mask):
            weights *= key_mask
            weights /= weights.sum(dim=-1, keepdim=True)
            return weights

        feedback = exercises.check_mask_repair(in_place)
        assert feedback.correct and "changed the weights it was given" in feedback.message, feedback
        for right in (_repair, lambda w, m: (w * m) / (w * m).sum(-1, keepdim=True)):
            feedback = exercises.check_mask_repair(right)
            assert feedback.correct and "caution" not in feedback.message, feedback

    def test_mask_repair_runs_the_function_on_new_inputs(self):
        # The old exercise's answer, a tensor of the notebook's weights, and a function that returns one, both fail.
        scores = torch.randn(10, 10, generator=torch.Generator().manual_seed(0))
        key_mask = torch.arange(10) < 4
        notebook_weights = _repair(torch.softmax(scores, -1), key_mask)
        assert "Expected a function" in exercises.check_mask_repair(notebook_weights).message
        copied = exercises.check_mask_repair(lambda w, m: notebook_weights)
        assert copied.status == "wrong" and "10 is no size of its arguments" in copied.message
        assert "not from the notebook's variables" in copied.message
        hard_coded = exercises.check_mask_repair(lambda w, m: _repair(w, torch.arange(w.shape[-1]) < 3))
        assert hard_coded.status == "wrong" and "padded key still gets weight" in hard_coded.message

    @pytest.mark.parametrize("convert", [lambda t: t.tolist(), lambda t: t.numpy()], ids=["list", "numpy"])
    def test_mask_repair_refuses_right_numbers_that_are_not_a_tensor(self, convert):
        # A round-37 reader: a repair returning .tolist() was praised, but a list cannot go into weights @ V.
        feedback = exercises.check_mask_repair(lambda w, m: convert(_repair(w, m)))
        assert feedback.status == "wrong" and "expected a torch.Tensor" in feedback.message, feedback

    @pytest.mark.parametrize("wrong_shape", [lambda w, m: m, lambda w, m: _repair(w, m)[..., None]], ids=["mask", "extra axis"])
    def test_mask_repair_blames_the_notebook_only_for_a_size_the_arguments_lack(self, wrong_shape):
        # A round-37 reader: returning key_mask itself, shape (6,), was told to stop reading the notebook's variables.
        feedback = exercises.check_mask_repair(wrong_shape)
        assert feedback.status == "wrong" and "expected (6, 6)" in feedback.message, feedback
        assert "notebook's variables" not in feedback.message, feedback

    def test_mask_repair_that_reads_the_notebooks_mask_is_told_to_use_its_arguments(self):
        # A round-37 reader: a repair that read the notebook's 10-key mask raised a bare size mismatch on 6 keys.
        notebook_mask = torch.arange(10) < 4
        feedback = exercises.check_mask_repair(lambda w, m: _repair(w, notebook_mask))
        assert feedback.status == "wrong" and "must match the size" in feedback.message, feedback
        assert "build the result from the function's own arguments" in feedback.message, feedback
        other = exercises.check_mask_repair(lambda w, m: 1 / 0)
        assert "ZeroDivisionError" in other.message and "own arguments" not in other.message, other

    def test_mask_repair_names_dropped_padded_columns(self):
        # A round-34 reader: a repair that keeps only the real keys' columns built its result from its own arguments,
        # so the message must name the dropped columns, not the notebook's variables.
        right_values = exercises.check_mask_repair(lambda w, m: w[:, m] / w[:, m].sum(-1, keepdim=True))
        assert right_values.status == "wrong" and "one column per real key, with the right weights" in right_values.message
        assert "notebook's variables" not in right_values.message
        unrepaired = exercises.check_mask_repair(lambda w, m: w[:, m])
        assert unrepaired.status == "wrong" and "one column per real key. Keep every key's column" in unrepaired.message

    def test_mask_repair_prints_only_the_rows_that_miss_1(self):
        # A right repair rounded to 3 decimals misses by up to 1e-3: the rows named are those, not the ones at 1.0.
        rounded = exercises.check_mask_repair(lambda w, m: _repair(w, m).round(decimals=3))
        assert rounded.status == "wrong" and "within 1e-4" in rounded.message
        assert "sums to 1.0," not in rounded.message and "sums to 1;" not in rounded.message
        assert re.search(r"row \d sums to (1\.001|0\.999)", rounded.message), rounded
        scaled = exercises.check_mask_repair(lambda w, m: 1.01 * _repair(w, m))
        assert "row 0 sums to 1.01, row 1 sums to 1.01, row 2 sums to 1.01, ...;" in scaled.message, scaled

    @pytest.mark.parametrize("leaky", [
        # A round-36 reader: right on the real keys, but NaN or inf on the padded ones, was praised.
        lambda w, m: w.masked_fill(~m, float("nan")) / w.masked_fill(~m, float("nan")).nansum(-1, keepdim=True),
        lambda w, m: w.masked_fill(~m, float("inf")).where(~m, _repair(w, m)),
        lambda w, m: _repair(w, m) * m / m,  # 0 / 0 on the padded keys
        lambda w, m: _repair(w, m).masked_fill(~m, float("-inf")),
    ])
    def test_mask_repair_refuses_nan_or_inf_on_the_padded_keys(self, leaky):
        feedback = exercises.check_mask_repair(leaky)
        assert feedback.status == "wrong" and "a padded key gets NaN or inf" in feedback.message, feedback

    def test_mask_repair_names_nan_or_inf_elsewhere(self):
        feedback = exercises.check_mask_repair(lambda w, m: _repair(w, m) / 0)
        assert feedback.status == "wrong" and "returned NaN or inf" in feedback.message, feedback

    def test_mask_repair_rows_message_says_key_mask_is_true_at_real_keys(self):
        feedback = exercises.check_mask_repair(lambda w, m: w * m[:, None])
        assert "True where the key is real" in feedback.message and "no query may look at" not in feedback.message

    @pytest.mark.parametrize("answer,status,words", [
        (None, "not attempted", "Not attempted"),
        ("abc", "wrong", "Expected a function"),
        (lambda w: w, "wrong", "two parameters"),
        (lambda w, m: 1 / 0, "wrong", "ZeroDivisionError"),
        (lambda w, m: w * float("nan"), "wrong", "NaN"),
    ])
    def test_mask_repair_answers_whatever_it_gets(self, answer, status, words):
        feedback = exercises.check_mask_repair(answer)
        assert feedback.status == status and words in feedback.message, feedback


class TestSchemeCheckers:
    x = torch.randn(6, 8, generator=torch.Generator().manual_seed(3))

    def turn_back(self, angles):
        # Each pair (a, b) of row p turned back by its angle: (a cos t + b sin t, -a sin t + b cos t).
        y1, y2 = self.x[:, 0::2].double(), self.x[:, 1::2].double()
        return torch.stack([y1 * angles.cos() + y2 * angles.sin(), -y1 * angles.sin() + y2 * angles.cos()], -1).flatten(-2)

    def angles(self, p, i, d=8):
        return p * 10000.0 ** (-2 * i / d)

    @staticmethod
    def by_hand(t, layout="interleaved"):
        # A learner's my_unturn: each pair of row p of t turned back by p * 10000^(-2i/d), in either layout.
        t = torch.as_tensor(t).double()
        d = t.shape[1]
        angles = torch.arange(t.shape[0], dtype=torch.float64)[:, None] * 10000.0 ** (-torch.arange(0, d, 2) / d)
        y1, y2 = (t[:, 0::2], t[:, 1::2]) if layout == "interleaved" else (t[:, :d // 2], t[:, d // 2:])
        a, b = y1 * angles.cos() + y2 * angles.sin(), -y1 * angles.sin() + y2 * angles.cos()
        return torch.stack([a, b], -1).flatten(-2) if layout == "interleaved" else torch.cat([a, b], -1)

    def test_rotary_undone_correct_in_any_sensible_form(self):
        from posenc import schemes

        p, i = torch.arange(6, dtype=torch.float64)[:, None], torch.arange(4, dtype=torch.float64)[None, :]
        answer = self.turn_back(self.angles(p, i))
        torch.testing.assert_close(self.by_hand(self.x), answer)
        for form in (torch.Tensor.double, torch.Tensor.float, torch.Tensor.numpy, torch.Tensor.tolist):
            assert exercises.check_rotary_undone(lambda turned, form=form: form(self.by_hand(turned)), turned=self.x).correct
        # Undoing undoes: the package's turn of the answer gives back what was turned.
        torch.testing.assert_close(schemes.apply_rotary(answer), self.x.double())
        assert exercises.check_rotary_undone(None, turned=self.x).status == "not attempted"

    def test_rotary_undone_refuses_the_package_and_a_bare_tensor(self):
        from posenc import schemes

        angles = schemes.rotary_angles(max_sequence_length=6, d=8)
        for calls in (lambda t: schemes.rotate_pairs(t, -angles),
                      lambda t: torch.stack([schemes.rotation_matrix(position=k, d=8).T @ t[k] for k in range(6)]),
                      lambda t: schemes._rotate(t.double(), -angles, "interleaved")):  # the helper under them
            feedback = exercises.check_rotary_undone(calls, turned=self.x)
            assert feedback.status == "mistake" and "package's own rotation" in feedback.message
        bare = exercises.check_rotary_undone(self.x, turned=self.x)
        assert bare.status == "wrong" and "Expected a function" in bare.message
        raised = exercises.check_rotary_undone(lambda t: t.no_such_method(), turned=self.x)
        assert raised.status == "wrong" and "raised" in raised.message

    def test_rotary_undone_refuses_rows_worked_out_before_the_call(self):
        # Review 37: rows turned back with the package outside the function, then handed back whatever the argument,
        # are right on `turned` only. The checker tries other rows too, and says so; a function that raises there is named.
        from posenc import schemes

        angles = schemes.rotary_angles(max_sequence_length=6, d=8)
        for layout in ("interleaved", "half_split"):
            before = schemes.rotate_pairs(self.x.double(), -angles, layout=layout)
            feedback = exercises.check_rotary_undone(lambda t, before=before: before, turned=self.x, layout=layout)
            assert feedback.status == "wrong" and "not rows worked out before it is called" in feedback.message, feedback
        only_turned = lambda t: self.by_hand(t) if torch.equal(t, self.x) else t.no_such_method()  # noqa: E731
        raised = exercises.check_rotary_undone(only_turned, turned=self.x)
        assert raised.status == "wrong" and "on other rows of the same shape it raised" in raised.message, raised

    @pytest.mark.parametrize("mistake,angles,words", [
        ("from 1", lambda p, i, d: (p + 1) * 10000.0 ** (-2 * i / d), "start at 1"),
        ("i for 2i", lambda p, i, d: p * 10000.0 ** (-i / d), "i instead of 2i"),
        ("multiplied", lambda p, i, d: p * 10000.0 ** (2 * i / d), "instead of dividing"),
        ("nothing", lambda p, i, d: p * 0.0 * i, "Nothing was undone"),
        ("d/2 for d", lambda p, i, d: p * 10000.0 ** (-2 * i / (d // 2)), "head size, 8, not the number of pairs, 4"),
    ])
    def test_rotary_undone_mistakes_are_named(self, mistake, angles, words):
        p = torch.arange(6, dtype=torch.float64)[:, None]
        i = torch.arange(4, dtype=torch.float64)[None, :]
        feedback = exercises.check_rotary_undone(lambda t: self.turn_back(angles(p, i, 8)), turned=self.x)
        assert feedback.status == "mistake" and words in feedback.message, f"{mistake}: {feedback}"

    def test_rotary_undone_names_the_package_call_and_the_half_split_layout(self):
        from posenc import schemes

        turned_on = schemes.apply_rotary(self.x)
        on = exercises.check_rotary_undone(lambda t: turned_on, turned=self.x)
        assert on.status == "mistake" and "schemes.apply_rotary(turned)" in on.message and "transpose" in on.message
        angles = torch.arange(6, dtype=torch.float64)[:, None] * 10000.0 ** (-torch.arange(0, 8, 2) / 8)
        half_split = schemes.rotate_pairs(self.x.double(), -angles, layout="half_split")
        half = exercises.check_rotary_undone(lambda t: half_split, turned=self.x)
        assert half.status == "mistake" and "half-split" in half.message

    @pytest.mark.parametrize("layout", ["interleaved", "half_split"])
    def test_rotary_undone_names_one_sine_flipped(self, layout):
        # Review 39: (a cos + b sin, a sin + b cos) or (a cos - b sin, -a sin + b cos), a likely slip, is named.
        d = self.x.shape[1]
        t = torch.arange(6, dtype=torch.float64)[:, None] * 10000.0 ** (-torch.arange(0, d, 2) / d)
        x = self.x.double()
        a, b = (x[:, 0::2], x[:, 1::2]) if layout == "interleaved" else (x[:, :d // 2], x[:, d // 2:])
        for first, second in ((a * t.cos() + b * t.sin(), a * t.sin() + b * t.cos()),
                              (a * t.cos() - b * t.sin(), -a * t.sin() + b * t.cos())):
            wrong = torch.stack([first, second], -1).flatten(-2) if layout == "interleaved" else torch.cat([first, second], -1)
            feedback = exercises.check_rotary_undone(lambda turned, wrong=wrong: wrong, turned=self.x, layout=layout)
            assert feedback.status == "mistake" and "Only one sin changed sign" in feedback.message, feedback
        right = exercises.check_rotary_undone(lambda turned: self.by_hand(turned, layout), turned=self.x, layout=layout)
        assert right.correct, right

    def test_rotary_undone_wrong_shape_and_garbage_answer(self):
        assert "keeps the shape" in exercises.check_rotary_undone(lambda t: torch.zeros(6, 4), turned=self.x).message
        zeros = exercises.check_rotary_undone(lambda t: torch.zeros(6, 8), turned=self.x)
        # Review 35: the shape is right there, so the message starts with the values, not with what it got.
        assert zeros.status == "wrong" and zeros.message.startswith("The shape is right, but the values are not."), zeros
        assert "turn back by the angle p * 10000^(-2i/8)" in zeros.message
        p, i = torch.arange(6, dtype=torch.float64)[:, None], torch.arange(4, dtype=torch.float64)[None, :]
        y1, y2 = self.x[:, 0::2].double(), self.x[:, 1::2].double()
        t = p * 10000.0 ** (-2 * i / 8)
        swapped = torch.stack([y1 * t.sin() + y2 * t.cos(), -y1 * t.cos() + y2 * t.sin()], -1).flatten(-2)  # cos, sin swapped
        for wrong in (swapped, self.turn_back(p * 1000.0 ** (-2 * i / 8))):  # and base 1000
            assert exercises.check_rotary_undone(lambda t, wrong=wrong: wrong, turned=self.x).message.startswith(
                "The shape is right, but the values are not.")
        assert exercises.check_rotary_undone(lambda t: "back", turned=self.x).status == "wrong"
        assert exercises.check_rotary_undone("back", turned=self.x).status == "wrong"
        with pytest.raises(ValueError, match="turned"):
            exercises.check_rotary_undone(None, turned=torch.zeros(6, 3))

    def test_rotary_undone_in_the_half_split_layout(self):
        from posenc import schemes

        check = lambda answer: exercises.check_rotary_undone(answer, turned=self.x, layout="half_split")  # noqa: E731
        p = torch.arange(6, dtype=torch.float64)[:, None]
        angles = p * 10000.0 ** (-torch.arange(0, 8, 2, dtype=torch.float64) / 8)
        y1, y2 = self.x[:, :4].double(), self.x[:, 4:].double()  # pair i is the columns (i, i + 4)
        answer = torch.cat([y1 * angles.cos() + y2 * angles.sin(), -y1 * angles.sin() + y2 * angles.cos()], -1)
        torch.testing.assert_close(self.by_hand(self.x, "half_split"), answer)
        for form in (torch.Tensor.double, torch.Tensor.float, torch.Tensor.numpy, torch.Tensor.tolist):
            feedback = check(lambda turned, form=form: form(self.by_hand(turned, "half_split")))
            assert feedback.correct and "(i, i + 4)" in feedback.message, feedback
        torch.testing.assert_close(schemes.apply_rotary(answer, layout="half_split"), self.x.double())
        interleaved = check(lambda t: self.turn_back(angles))
        assert interleaved.status == "mistake" and "interleaved layout" in interleaved.message, interleaved
        turned_on = schemes.apply_rotary(self.x.double(), layout="half_split")  # made before the check runs
        on = check(lambda t: turned_on)
        assert on.status == "mistake" and 'layout="half_split"' in on.message and "transpose" in on.message, on
        package = check(lambda t: schemes.apply_rotary(t, layout="half_split"))
        assert package.status == "mistake" and "package's own rotation" in package.message
        from_one = schemes.rotate_pairs(self.x.double(), -(angles + angles[1:2]), layout="half_split")
        assert "start at 1" in check(lambda t: from_one).message
        assert check(None).status == "not attempted" and check(lambda t: torch.zeros(6, 8)).status == "wrong"
        with pytest.raises(ValueError, match="layout"):
            exercises.check_rotary_undone(None, turned=self.x, layout="sideways")

    def test_rotary_undone_refuses_transformers_rope_once_loaded(self):
        # Review 9: Llama's rotate_half does the half-split pairing the exercise asks for; the checker names it (and
        # apply_rotary_pos_emb) when transformers has loaded them, and still accepts the pairing written by hand.
        from transformers.models.llama.modeling_llama import apply_rotary_pos_emb, rotate_half

        check = lambda answer: exercises.check_rotary_undone(answer, turned=self.x, layout="half_split")  # noqa: E731
        p = torch.arange(6, dtype=torch.float64)[:, None]
        angles = p * 10000.0 ** (-torch.arange(0, 8, 2, dtype=torch.float64) / 8)
        emb = torch.cat([angles, angles], -1)

        def with_rotate_half(t):
            return t.double() * emb.cos() - rotate_half(t.double()) * emb.sin()

        def with_apply(t):
            t = t.double()[None, None]
            return apply_rotary_pos_emb(t, t, emb.cos()[None], -emb.sin()[None])[0][0, 0]

        for theirs in (with_rotate_half, with_apply):
            refused = check(theirs)
            assert refused.status == "mistake" and "Hugging Face's own RoPE" in refused.message, refused
        assert check(lambda t: self.by_hand(t, "half_split")).correct

    def test_rotary_undone_refuses_rotary_embedding_torchs_rope_once_loaded(self):
        # Review 11: rotary_embedding_torch's apply_rotary_emb takes the angles, so negative ones undo the turn (on the
        # half-split columns, reordered); it and its rotate_half are named when loaded, and the hand-written turn passes.
        from rotary_embedding_torch import RotaryEmbedding, apply_rotary_emb
        from rotary_embedding_torch.rotary_embedding_torch import rotate_half

        from posenc import schemes

        check = lambda answer: exercises.check_rotary_undone(answer, turned=self.x, layout="half_split")  # noqa: E731
        permutation = schemes.half_split_permutation(d=8)
        inverse = torch.argsort(permutation)

        def with_apply(t):
            angles = RotaryEmbedding(dim=8)(torch.arange(t.shape[0]))
            return apply_rotary_emb(-angles, t[:, inverse])[:, permutation]

        p = torch.arange(6, dtype=torch.float64)[:, None]
        angles = p * 10000.0 ** (-torch.arange(0, 8, 2, dtype=torch.float64) / 8)

        def with_rotate_half(t):  # their rotate_half pairs neighbouring columns: reorder, turn back, reorder again
            t = t.double()[:, inverse]
            in_place = angles.repeat_interleave(2, -1)
            return (t * in_place.cos() - rotate_half(t) * in_place.sin())[:, permutation]

        for theirs in (with_apply, with_rotate_half):
            refused = check(theirs)
            assert refused.status == "mistake" and "rotary-embedding-torch's own RoPE" in refused.message, refused
        assert check(lambda t: self.by_hand(t, "half_split")).correct

    def test_rotary_tables_accept_the_fix_in_any_form_and_name_each_mistake(self):
        from posenc import schemes

        check = lambda answer: exercises.check_rotary_tables(answer, x=self.x)  # noqa: E731
        angles = torch.arange(6, dtype=torch.float64)[:, None] / 10000.0 ** (torch.arange(0, 8, 2) / 8)
        halves, in_place = torch.cat([angles, angles], -1), angles.repeat_interleave(2, -1)
        per_column = torch.arange(6, dtype=torch.float64)[:, None] / 10000.0 ** (torch.arange(8) / 8)
        cos, sin = in_place.cos(), in_place.sin()
        for form in ((cos, sin), [cos, sin], (cos.float(), sin.float()), (cos.numpy(), sin.numpy()),
                     (cos.tolist(), sin.tolist())):
            assert check(form).correct
        # The success message tells where torch.cat's side-by-side tables are right; the notebook's table gives the pairs.
        assert "suit the half-split layout" in check((cos, sin)).message
        # The right tables turn the queries as the package does.
        swapped = torch.stack([-self.x[:, 1::2], self.x[:, 0::2]], -1).flatten(-2).double()
        torch.testing.assert_close(self.x.double() * cos + swapped * sin, schemes.apply_rotary(self.x.double()))
        square = exercises.check_rotary_tables((cos[:, :6].T, sin[:, :6].T), x=self.x[:, :6])  # seq = d = 6
        assert square.status == "wrong"
        six = torch.arange(6, dtype=torch.float64)[:, None] / 10000.0 ** (torch.arange(0, 6, 2) / 6)
        six = six.repeat_interleave(2, -1)
        transposed = exercises.check_rotary_tables((six.cos().T, six.sin().T), x=self.x[:, :6])
        assert transposed.status == "mistake" and "transposed" in transposed.message
        for answer, words in [((halves.cos(), halves.sin()), "These equal the tables of the first cell of this exercise"),
                              ((angles.repeat(1, 2).cos(), angles.repeat(1, 2).sin()), "These equal the tables"),
                              ((cos, halves.sin()), "sin still comes"),
                              ((halves.cos(), sin), "cos still comes"),
                              ((sin, cos), "wrong order"),
                              ((in_place, in_place), "the angles themselves"),
                              ((cos, -sin), "sign of sin"),
                              (((in_place + in_place[1:2]).cos(), (in_place + in_place[1:2]).sin()), "start at 1"),
                              ((angles.cos(), angles.sin()), "one entry per pair"),
                              # Review 40: the odd-column slip, p / 10000^(j/d) for every column j
                              ((per_column.cos(), per_column.sin()), "Each column j got its own angle, p / 10000^(j/8)")]:
            feedback = check(answer)
            assert feedback.status in ("mistake", "wrong") and words in feedback.message, f"{words}: {feedback}"
        # The unchanged tables get a question, not the diagnosis the solution gives.
        unchanged = check((halves.cos(), halves.sin())).message
        assert "columns 0 and 1" in unchanged and "torch.cat" not in unchanged and "repeat" not in unchanged
        # Review 35: .repeat(1, 2) is a change that gives the same tables; the message says they are equal, not unchanged.
        assert "unchanged" not in unchanged and check((angles.repeat(1, 2).cos(), angles.repeat(1, 2).sin())).message == unchanged

    def test_rotary_tables_refuse_the_turned_queries_and_junk(self):
        from posenc import schemes

        check = lambda answer: exercises.check_rotary_tables(answer, x=self.x)  # noqa: E731
        assert check(None).status == "not attempted"
        turned = check(schemes.apply_rotary(self.x))
        assert turned.status == "wrong" and "not the turned queries" in turned.message
        assert "not the turned queries" in check(schemes.apply_rotary(self.x).tolist()).message
        assert check((torch.zeros(6, 8), torch.zeros(6, 8))).status == "wrong"
        assert "expected (6, 8)" in check((torch.zeros(6, 4, 2), torch.zeros(6, 8))).message
        assert check(("cos", "sin")).status == "wrong" and check("turned").status == "wrong"
        assert check((torch.full((6, 8), float("nan")), torch.zeros(6, 8))).status == "wrong"

    def test_alibi_slopes_for_twelve_heads(self):
        check = lambda values: exercises.check_alibi_slopes(lambda num_heads: values, head_counts=(12,))  # noqa: E731
        right = [2.0 ** -k for k in range(1, 9)] + [2.0 ** -e for e in (0.5, 1.5, 2.5, 3.5)]
        assert check(right).correct and check(torch.tensor(right)).correct
        package = check(schemes.alibi_slopes(num_heads=12))  # made before the function ran, then handed back
        assert package.status == "mistake" and "package's own schemes.alibi_slopes" in package.message
        assert check([float(f"{s:.4g}") for s in right]).correct  # four significant digits
        assert not check([float(f"{s:.2g}") for s in right]).correct
        assert "sorted" in check(sorted(right, reverse=True)).message
        # Review 42: the learner was told not to read the paper's code, so no message points at "the code"
        assert "the code" not in check(sorted(right, reverse=True)).message
        assert "the code" not in check(right[:8] + [2.0 ** -e for e in (1, 2, 3, 4)]).message
        assert "first 12 slopes of 16 heads" in check([2.0 ** (-k / 2) for k in range(1, 13)]).message
        assert "1st, 3rd" in check(right[:8] + [2.0 ** -e for e in (1, 2, 3, 4)]).message
        wrong = right[:4] + [0.0314] + right[5:]  # one slope off by more than half a unit of the 4th decimal
        feedback = check(wrong)
        assert not feedback.correct and "For 12 heads" in feedback.message
        # the listing shows the difference: not "0.0312" against "0.0312"
        assert "head 4's: 0.0314, not 0.03125" in feedback.message, feedback.message
        # only the first wrong slope's expected value, not the whole list to copy
        assert "0.7071" not in check([1.0] * 12).message
        # the first natural wrong answer gets a hint, not the rule in words
        formula = check([2.0 ** (-8 * k / 12) for k in range(1, 13)]).message
        assert "code uses it only for a power of two" in formula and "2^-1 and 2^-3" in formula, formula
        assert "every other" not in formula and "1st, 3rd" not in formula, formula
        assert "12-head row does the same with 8 and 16" in formula and "plays the part" not in formula, formula

    def test_alibi_slopes_names_the_rules_that_fit_six_heads_but_not_twelve(self):
        # 6 heads alone also fit "the odd powers of 1/2" and "twice the first slopes"; the notebook shows 12 heads
        # too, which rule both out, and the checker names each.
        def rule(extra):
            def slopes(num_heads):
                c = 2 ** (num_heads.bit_length() - 1)
                return [2 ** (-8 / c * k) for k in range(1, c + 1)] + [extra(j, c) for j in range(1, num_heads - c + 1)]
            return slopes
        odd_powers = rule(lambda j, c: 2.0 ** -(2 * j - 1))
        twice = rule(lambda j, c: 2 * 2 ** (-8 / c * j))
        right = rule(lambda j, c: 2 ** (-8 / (2 * c) * (2 * j - 1)))
        for fits_six in (odd_powers, twice, right):  # all three give the notebook's 6-head row
            assert fits_six(6) == [1 / 4, 1 / 16, 1 / 64, 1 / 256, 1 / 2, 1 / 8]
            assert exercises.check_alibi_slopes(fits_six, head_counts=(6,)).correct
        for n in (12, 20, 37):
            check = lambda slopes, n=n: exercises.check_alibi_slopes(slopes, head_counts=(n,))  # noqa: E731
            assert check(right).correct
            odd = check(odd_powers)
            assert odd.status == "mistake" and "odd powers of 1/2" in odd.message and "2^-0.5" in odd.message, odd
            doubled = check(twice)
            assert doubled.status == "mistake" and "twice the first ones" in doubled.message, doubled
        # the default run: named counts 16, 20, 24, 48 (not the notebook's 6 and 12) and one unnamed
        feedback = exercises.check_alibi_slopes(odd_powers)
        assert feedback.status == "mistake" and "For 20 heads" in feedback.message, feedback
        assert "Correct for 16, 20, 24 and 48 heads" in exercises.check_alibi_slopes(right).message

    def test_alibi_slopes_wants_a_function_it_tries_on_several_head_counts(self):
        def by_the_rule(num_heads):
            c = 2 ** (num_heads.bit_length() - 1)
            doubled = [2 ** (-8 / (2 * c) * k) for k in range(1, 2 * c + 1)]
            return [2 ** (-8 / c * k) for k in range(1, c + 1)] + doubled[0::2][: num_heads - c]

        correct = exercises.check_alibi_slopes(by_the_rule)
        assert correct.correct and "16, 20, 24 and 48 heads, and one more the checker keeps to itself" in correct.message
        assert "For 20: the 16 slopes of 16 heads" in correct.message and "0.8409" in correct.message, correct.message
        # a lookup table of the named counts fails on the unnamed one
        table = {n: by_the_rule(n) for n in (16, 20, 24, 48)}
        assert not exercises.check_alibi_slopes(lambda n: table[n]).correct
        # Review 45: a failure on the unnamed count names neither the count nor its slopes
        hidden = (exercises.check_alibi_slopes(lambda n: table[n]),  # raises KeyError: 37
                  exercises.check_alibi_slopes(lambda n: table.get(n)),  # returns None
                  exercises.check_alibi_slopes(lambda n: table.get(n, by_the_rule(n)[:-1] + [0.5])))
        for verdict in hidden:
            assert not verdict.correct and "37" not in verdict.message, verdict
            assert "Right for 16, 20, 24 and 48 heads, but for one more head count" in verdict.message, verdict
        assert "it raised KeyError" in hidden[0].message and "returned None" in hidden[1].message
        assert "not right" in hidden[2].message
        # Review 45: an answer of the wrong type is told the types that work, not "a list as a torch.Tensor"
        generator = exercises.check_alibi_slopes(lambda n: (s for s in by_the_rule(n)))
        assert generator.status == "wrong" and "as a list or a tensor, got" in generator.message, generator
        assert "a list as a" not in generator.message
        assert exercises.check_alibi_slopes(lambda *, num_heads: by_the_rule(num_heads)).correct  # keyword-only
        assert exercises.check_alibi_slopes(lambda n: torch.tensor(by_the_rule(n), dtype=torch.float32)).correct
        # Review 37: the slopes as a column or a row are still the slopes; a (n, 2) table is not.
        assert exercises.check_alibi_slopes(lambda n: torch.tensor(by_the_rule(n))[:, None]).correct
        assert exercises.check_alibi_slopes(lambda n: [by_the_rule(n)]).correct
        square = exercises.check_alibi_slopes(lambda n: torch.tensor(by_the_rule(n))[:, None].repeat(1, 2))
        assert square.status == "wrong" and "expected 16 slopes" in square.message, square
        # Review 42: a wrong count is named as the learner wrote it, not as the checker's float64 copy
        short = exercises.check_alibi_slopes(lambda n: by_the_rule(16))
        assert "For 20 heads: Got 16 slopes; expected 20" in short.message and "dtype" not in short.message, short
        table = exercises.check_alibi_slopes(lambda n: [[s, s] for s in by_the_rule(n)])
        assert "Got a list of shape (16, 2)" in table.message, table
        assert "dtype torch.float32" in square.message, square
        assert exercises.check_alibi_slopes(None).status == "not attempted"
        for copied in (by_the_rule(12), schemes.alibi_slopes(num_heads=12)):  # the slopes, not a function
            assert "Expected a function" in exercises.check_alibi_slopes(copied).message
        for package in (lambda n: schemes.alibi_slopes(num_heads=n).tolist(),
                        lambda n: (-schemes.alibi_bias(num_heads=n, max_sequence_length=2)[:, 1, 0]).tolist()):
            refused = exercises.check_alibi_slopes(package)
            assert refused.status == "mistake" and "package's own ALiBi" in refused.message, refused
        from transformers.models.bloom.modeling_bloom import _get_alibi_slopes, build_alibi_tensor

        for theirs in (lambda n: _get_alibi_slopes(n, torch.device("cpu")),
                       lambda n: build_alibi_tensor(torch.ones(1, 2), n, torch.float32)[:, 0, 1].tolist()):
            refused = exercises.check_alibi_slopes(theirs)
            assert refused.status == "mistake" and "Hugging Face's own ALiBi" in refused.message, refused
        assert exercises.check_alibi_slopes(by_the_rule).correct  # with transformers loaded, the rule still passes
        only_twelve = exercises.check_alibi_slopes(lambda n: by_the_rule(12))
        assert only_twelve.status == "wrong" and "For 16 heads" in only_twelve.message
        raised = exercises.check_alibi_slopes(lambda n: 1 / 0)
        assert raised.status == "wrong" and "my_slopes(16) raised ZeroDivisionError" in raised.message

        def below(num_heads):  # c strictly below n: wrong for a power of two
            c = 2 ** ((num_heads - 1).bit_length() - 1)
            doubled = [2 ** (-8 / (2 * c) * k) for k in range(1, 2 * c + 1)]
            return [2 ** (-8 / c * k) for k in range(1, c + 1)] + doubled[0::2][: num_heads - c]
        feedback = exercises.check_alibi_slopes(below)
        assert feedback.status == "mistake" and "16 is itself a power of two" in feedback.message, feedback

    def test_alibi_slopes_for_six_heads(self):
        check = lambda values: exercises.check_alibi_slopes(lambda n: values, head_counts=(6,))  # noqa: E731
        right = [1 / 4, 1 / 16, 1 / 64, 1 / 256, 1 / 2, 1 / 8]
        assert check(right).correct and check(tuple(right)).correct and check(torch.tensor(right)).correct
        assert "sorted" in check(sorted(right, reverse=True)).message
        assert "first 6 slopes of 8 heads" in check([2.0 ** -k for k in range(1, 7)]).message

    def test_alibi_slopes(self):
        check = lambda values, n=8: exercises.check_alibi_slopes(lambda _: values, head_counts=(n,))  # noqa: E731
        slopes = [2.0 ** -k for k in range(1, 9)]
        assert check(slopes).correct and check(torch.tensor(slopes)).correct
        assert check([2.0 ** (-k / 2) for k in range(1, 17)], 16).correct
        assert "One step too early" in check([2.0 ** -k for k in range(0, 8)]).message
        assert "sign" in check([2.0 ** k for k in range(1, 9)]).message
        assert "Reversed" in check(slopes[::-1]).message
        assert "right for 8 heads only" in check([2.0 ** -k for k in range(1, 5)], 4).message
        assert "expected 8 slopes" in check(slopes[:4]).message
        assert "Expected a function" in exercises.check_alibi_slopes("half").message
        assert check("half").status == "wrong"


# Issue 12: the mistakes a learner is likely to make, each named -----------------------------


def learner_angles(length=L, d_model=D, *, base=10000.0):
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)
    return torch.arange(length, dtype=torch.float64)[:, None] / base ** (two_i / d_model)


def interleaved(angles):
    return torch.stack([angles.sin(), angles.cos()], dim=2).flatten(1, 2)


def test_encoding_multiplied_by_the_denominator():
    angles = torch.arange(L, dtype=torch.float64)[:, None] * 10000.0 ** (torch.arange(0, D, 2, dtype=torch.float64) / D)
    feedback = check(interleaved(angles))
    assert feedback.status == "mistake" and "multiplied by the denominator" in feedback.message


def test_encoding_in_degrees():
    feedback = check(interleaved(torch.deg2rad(learner_angles())))
    assert feedback.status == "mistake" and "degrees" in feedback.message


def test_encoding_with_the_default_base_when_another_was_asked():
    feedback = exercises.check_encoding(interleaved(learner_angles()).float(), max_sequence_length=L, d_model=D,
                                        base=100.0)
    assert feedback.status == "mistake" and "base 10000" in feedback.message and "base 100" in feedback.message
    right = exercises.check_encoding(interleaved(learner_angles(base=100.0)).float(), max_sequence_length=L, d_model=D,
                                     base=100.0)
    assert right.correct


def _builder(*, denominator_dtype=torch.float64, angle_dtype=torch.float64, table_dtype=torch.float32):
    """12's Exercise 1: the table from float64 positions, each other step in the dtype given (float32 angles; 11's
    pitfall and the notebook's bug: a float32 denominator)."""
    def build(*, max_sequence_length, d_model):
        position = torch.arange(max_sequence_length, dtype=torch.float64)[:, None]
        denominator = 10000.0 ** (torch.arange(0, d_model, 2, dtype=denominator_dtype) / d_model)
        angle = (position / denominator).to(angle_dtype)
        return torch.stack([torch.sin(angle), torch.cos(angle)], dim=-1).flatten(1).to(table_dtype)
    return build


def test_drift_fix_accepts_float64_angles_however_built():
    def slice_assignment(*, max_sequence_length, d_model):  # the Annotated Transformer's form, in float64
        position = torch.arange(max_sequence_length, dtype=torch.float64)[:, None]
        div_term = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float64) * -(math.log(10000.0) / d_model))
        pe = torch.zeros(max_sequence_length, d_model, dtype=torch.float64)
        pe[:, 0::2], pe[:, 1::2] = torch.sin(position * div_term), torch.cos(position * div_term)
        return pe.float()

    def float32_positions(*, max_sequence_length, d_model):  # exact below 2^24, and promoted to float64 by the division
        position = torch.arange(max_sequence_length, dtype=torch.float32)[:, None]
        angle = position / 10000.0 ** (torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
        return torch.stack([angle.sin(), angle.cos()], dim=-1).flatten(1).float()

    for right in (_builder(), slice_assignment, float32_positions):
        feedback = exercises.check_drift_fix(right)
        assert feedback.correct and "30,000 x 16" in feedback.message, feedback


def _still_drifts(*, max_sequence_length, d_model):
    """12's Exercise 1 as the notebook prints it: float64 denominators stored by torch.tensor, float32 by default."""
    position = torch.arange(max_sequence_length, dtype=torch.float64)[:, None]
    denominator = torch.tensor([10000.0 ** (2 * i / d_model) for i in range(d_model // 2)])
    angle = position / denominator
    return torch.stack([torch.sin(angle), torch.cos(angle)], dim=-1).flatten(1).float()


def _still_drifts_cast_after(*, max_sequence_length, d_model, cast=lambda t: t.double()):
    """Review 29: the bug "fixed" by casting the finished denominator: its dtype is float64, its values float32's."""
    position = torch.arange(max_sequence_length, dtype=torch.float64)[:, None]
    denominator = cast(torch.tensor([10000.0 ** (2 * i / d_model) for i in range(d_model // 2)]))
    assert denominator.dtype == torch.float64
    angle = position / denominator
    return torch.stack([torch.sin(angle), torch.cos(angle)], dim=-1).flatten(1).float()


def test_drift_fix_does_not_call_a_float64_denominator_float32():
    for cast in (lambda t: t.double(), lambda t: t.to(torch.float64), lambda t: t.type(torch.float64)):
        feedback = exercises.check_drift_fix(functools.partial(_still_drifts_cast_after, cast=cast))
        assert feedback.status == "mistake" and "is still float32" not in feedback.message, feedback
        assert "later cast to float64 cannot bring the lost digits back" in feedback.message, feedback


def test_drift_fix_leaves_the_step_to_find():
    # Review 40: the notebook's bug, run unchanged, is told a value is rounded, not which one: finding it is the exercise.
    feedback = exercises.check_drift_fix(_still_drifts)
    assert feedback.status == "mistake" and "denominator" not in feedback.message.lower(), feedback


@pytest.mark.parametrize("builder,words", [
    (_builder(denominator_dtype=torch.float32), "still rounded to float32 before the division"),  # 11's pitfall
    (_builder(angle_dtype=torch.float32), "rounded to float32 before sin and cos"),
    (_still_drifts, "still rounded to float32 before the division"),  # the notebook's bug, as it is written there
    (_still_drifts_cast_after, "A later cast to float64 cannot bring the lost digits back"),  # a float64 dtype, float32 values
    (lambda **sizes: stepwise_encoding(**sizes), "The angles are float32"),  # stack + flatten
    (_builder(table_dtype=torch.float64), "cast the finished table to float32"),
    (_builder(table_dtype=torch.bfloat16), "bfloat16 table"),
    (lambda **sizes: _builder()(**sizes).T, "transposed"),
])
def test_drift_fix_names_the_mistake(builder, words):
    feedback = exercises.check_drift_fix(builder)
    assert feedback.status == "mistake" and words in feedback.message, feedback
    assert "dtype=torch.float64" not in feedback.message  # it names the mistake, it does not hand over the fixed line


def test_drift_fix_runs_the_builder_on_new_sizes():
    from posenc import builder

    table = _builder()(max_sequence_length=100_000, d_model=64)  # the notebook's sizes
    assert "Expected a function" in exercises.check_drift_fix(table).message
    copied = exercises.check_drift_fix(lambda **sizes: table)
    assert copied.status == "wrong" and "for the sizes the function is given" in copied.message
    package = exercises.check_drift_fix(lambda **sizes: builder.sinusoidal_encoding(**sizes))
    assert package.status == "mistake" and "package's own builder" in package.message

    def with_frequencies(*, max_sequence_length, d_model):  # notebook 12's float64 angles, on screen
        angle = torch.arange(max_sequence_length, dtype=torch.float64)[:, None] * builder.frequencies(d_model=d_model)
        return torch.stack([angle.sin(), angle.cos()], dim=-1).flatten(1).float()
    refused = exercises.check_drift_fix(with_frequencies)
    assert refused.status == "mistake" and "builder.frequencies" in refused.message
    # Through another package function: the message says so, not only the name the learner never typed.
    from posenc import rope_scaling

    def with_rope_frequencies(*, max_sequence_length, d_model):
        angle = torch.arange(max_sequence_length, dtype=torch.float64)[:, None] * rope_scaling.rope_frequencies(head_dim=d_model)
        return torch.stack([angle.sin(), angle.cos()], dim=-1).flatten(1).float()
    through = exercises.check_drift_fix(with_rope_frequencies)
    assert through.status == "mistake" and "through another package function" in through.message
    swapped = exercises.check_drift_fix(lambda **sizes: _builder()(**sizes).roll(1, dims=1))
    assert swapped.status == "wrong" and "check the formula" in swapped.message


def test_drift_fix_refuses_transformers_sinusoidal_table_once_loaded():
    # Review 9: XLM's (Flaubert's, DistilBERT's) create_sinusoidal_embeddings builds the table in NumPy float64, the
    # fix itself; the checker names it when transformers has loaded it, and still accepts a fix by hand.
    from transformers.models.xlm.modeling_xlm import create_sinusoidal_embeddings

    def theirs(*, max_sequence_length, d_model):
        out = torch.empty(max_sequence_length, d_model)
        create_sinusoidal_embeddings(max_sequence_length, d_model, out)
        return out

    refused = exercises.check_drift_fix(theirs)
    assert refused.status == "mistake" and "create_sinusoidal_embeddings" in refused.message, refused
    assert exercises.check_drift_fix(_builder()).correct


def test_drift_fix_refuses_marians_table_reordered():
    # Review 11: Marian's create_weight (sines, then cosines) with its columns interleaved passes the tolerance.
    from transformers.models.marian.modeling_marian import MarianSinusoidalPositionalEmbedding

    from posenc import schemes

    def theirs(*, max_sequence_length, d_model):
        halves = MarianSinusoidalPositionalEmbedding(max_sequence_length, d_model).create_weight()
        return halves[:, torch.argsort(schemes.half_split_permutation(d_model))]

    refused = exercises.check_drift_fix(theirs)
    assert refused.status == "mistake" and "create_weight" in refused.message, refused


@pytest.mark.parametrize("answer,words", [
    (None, "Not attempted"), ("abc", "Expected a function"), (lambda n, d: None, "the parameters"),
    (lambda **sizes: 1 / 0, "ZeroDivisionError"), (lambda **sizes: [1, 2], "expected the table"),
    (lambda **sizes: _builder()(**sizes) * float("nan"), "NaN"),
])
def test_drift_fix_answers_whatever_it_gets(answer, words):
    assert words in exercises.check_drift_fix(answer).message


def test_wavelength_growth_accepts_the_factor_to_two_decimal_places():
    for answer in (50 ** 0.25, 2.66, 2.659, 2.664, "2.66", torch.tensor(2.659), 50 ** (1 / 4)):
        feedback = exercises.check_wavelength_growth(answer, pair=16, head_dim=128, base=10_000.0, new_base=500_000.0)
        assert feedback.correct, (answer, feedback)
    # Against wavelengths computed from the package's frequencies, at another pair and bases.
    from posenc import rope_scaling

    old, new = (2 * math.pi / rope_scaling.rope_frequencies(head_dim=64, base=b) for b in (10_000.0, 1_000_000.0))
    factor = float(new[5] / old[5])
    assert exercises.check_wavelength_growth(factor, pair=5, head_dim=64, base=10_000.0, new_base=1_000_000.0).correct


@pytest.mark.parametrize("answer", [2.7, "2.7", torch.tensor(2.7)])
def test_wavelength_growth_asks_two_digits_for_a_third(answer):
    # 2.7 is 2.66 rounded, but also 50^(32/126) = 2.7008 rounded, the exponent over head_dim - 2: not praised.
    feedback = exercises.check_wavelength_growth(answer, pair=16, head_dim=128, base=10_000.0, new_base=500_000.0)
    # Review 40: the message named 2.66, so the second try was a copy. Now it names no number but the learner's.
    # Review 41: "give two decimal places" was false for 2.70, the slip to two places; the message now fits both.
    assert feedback.status == "wrong" and "2.66" not in feedback.message, feedback
    assert "the factor is not 2.70" in feedback.message and "give two" in feedback.message, feedback
    assert "check the exponent: 2i/128" in feedback.message, feedback


@pytest.mark.parametrize("answer", [2.65, 2.68, 2.654, 2.67])
def test_wavelength_growth_refuses_a_factor_off_in_the_second_decimal_place(answer):
    # Review 41: within 1%, 2.65 and 2.68 were praised "Correct: 2.66", though the question asks two decimal places.
    feedback = exercises.check_wavelength_growth(answer, pair=16, head_dim=128, base=10_000.0, new_base=500_000.0)
    assert feedback.status == "wrong" and not feedback.message.startswith("Correct"), feedback


def test_wavelength_growth_says_round_for_a_truncated_factor():
    # Review 51: 2.65, 2.659 cut short, was told "the wavelength does not grow that many times".
    feedback = exercises.check_wavelength_growth(2.65, pair=16, head_dim=128, base=10_000.0, new_base=500_000.0)
    assert feedback.status == "wrong" and "do not truncate" in feedback.message and "2.66" not in feedback.message, feedback
    assert "truncate" not in exercises.check_wavelength_growth(2.64, pair=16, head_dim=128, base=10_000.0,
                                                               new_base=500_000.0).message


def test_wavelength_growth_names_no_exponent_for_two_digits_that_are_not_the_slip():
    # Pair 8: 50^(16/128) = 1.63, given as 1.6. The slip 50^(16/126) = 1.64 is not 1.60: no hint at the exponent.
    feedback = exercises.check_wavelength_growth(1.6, pair=8, head_dim=128, base=10_000.0, new_base=500_000.0)
    assert feedback.status == "wrong" and "give two" in feedback.message, feedback
    assert "exponent" not in feedback.message and "1.63" not in feedback.message, feedback


@pytest.mark.parametrize("answer,words", [
    (50, "bases' own ratio"), (1, "pair 0's factor"), (50 ** -0.25, "frequency"), (50 ** (16 / 128), "exponent"),
    (2 * math.pi * 500_000 ** 0.25, "wavelength itself"), (2 * math.pi * 10, "before the base grows"),
    (50 ** 0.5, "pair 32's factor"), (7.07, "pair 32's factor"), (50 ** (36 / 128), "pair 18's factor"),
    (50 ** (32 / 126), "not 32/126"), (2.701, "not 32/126"),
])
def test_wavelength_growth_names_the_mistake(answer, words):
    feedback = exercises.check_wavelength_growth(answer, pair=16, head_dim=128, base=10_000.0, new_base=500_000.0)
    assert feedback.status == "mistake" and words in feedback.message, feedback


@pytest.mark.parametrize("answer", [3, 2.5, 2, 4, 24, 10, 2.69, 2.72, 2.718])
def test_wavelength_growth_names_no_mistake_for_a_round_guess(answer):
    # 3, 2.5 and 24 are within 0.2%, 0.06% and 0.05% of pairs 18, 15 and 52's factors: guesses, not pairs.
    feedback = exercises.check_wavelength_growth(answer, pair=16, head_dim=128, base=10_000.0, new_base=500_000.0)
    assert feedback.status == "wrong" and "factor, not pair" not in feedback.message, feedback


@pytest.mark.parametrize("answer", [2.65, 2.6, 4, 10, 50, 1, 50 ** (32 / 126), 2 * math.pi * 10])
def test_wavelength_growth_gives_no_factor_away_to_a_wrong_answer(answer):
    # Review 42: "You gave 2.65; the wavelength grows 2.66 times": any guess, then a copy. No wrong answer sees 2.66.
    feedback = exercises.check_wavelength_growth(answer, pair=16, head_dim=128, base=10_000.0, new_base=500_000.0)
    assert not feedback.correct and "2.66" not in feedback.message and "32/128)" not in feedback.message, feedback


def test_wavelength_growth_is_a_computation_whose_last_answer_counts():
    # Exercise 1 of "stretching the context" asks to compute the factor: a right answer after a wrong one counts.
    exercises.reset_progress()
    grow = functools.partial(exercises.check_wavelength_growth, pair=16, head_dim=128, base=10_000.0, new_base=500_000.0)
    assert grow(50).status == "mistake" and grow(2.6).message.startswith("You gave 2.6;")
    again = grow(50 ** (32 / 128))
    assert again.correct and "first prediction" not in again.message, again
    assert [status for _, status in exercises.progress().entries] == ["done"]
    exercises.reset_progress()


def test_wavelength_growth_answers_whatever_it_gets():
    for answer, status in ((None, "not attempted"), ("2.66", "correct"), (4, "wrong"), (-3, "wrong"), (float("inf"), "wrong"),
                           (float("nan"), "wrong")):
        feedback = exercises.check_wavelength_growth(answer, pair=16, head_dim=128, base=10_000.0, new_base=500_000.0)
        assert feedback.status == status, (answer, feedback)
        assert "exponent" not in feedback.message or answer is None, feedback  # inf once matched every mistake


@pytest.mark.parametrize("answer, actual, status", [
    (True, True, "correct"), (False, True, "wrong"), ((10, 10), (10, 10), "correct"), ((4, 10), (10, 4), "mistake"),
    (torch.Size([10, 4]), (10, 4), "correct"), (3, 3, "correct"), (3.1, 3.0, "wrong"), ("yes", True, "wrong"),
    (None, True, "not attempted")])
def test_prediction(answer, actual, status):
    feedback = exercises.check_prediction(answer, actual=actual, question="q", explanation="Because.")
    assert feedback.status == status
    if status in ("correct", "wrong", "mistake") and not isinstance(answer, str):
        assert "Because." in feedback.message


@pytest.mark.parametrize("answer, actual, status", [
    ("True", True, "correct"), (" true ", True, "correct"), ("FALSE", False, "correct"), ("False", True, "wrong"),
    ("true", False, "wrong"), ("maybe", True, "wrong")])
def test_a_bool_prediction_written_as_a_string_reads_as_the_bool(answer, actual, status):
    feedback = exercises.check_prediction(answer, actual=actual, question="q", explanation="Because.")
    assert feedback.status == status, feedback
    if answer.strip().lower() in ("true", "false"):
        assert "Expected True or False" not in feedback.message and "Because." in feedback.message


def test_progress_keeps_the_latest_verdict_per_exercise():
    @feedback.exercise("distinct rows")
    def rows(answer, *, matrix):
        # A checker of the simplest kind: the answer is the number of different rows of matrix.
        if answer is None:
            return feedback.not_attempted("a whole number")
        right = answer == torch.unique(matrix, dim=0).shape[0]
        return feedback.Feedback("correct" if right else "wrong", "message")

    exercises.reset_progress()
    rows(None, matrix=torch.eye(3))
    assert str(exercises.progress()).startswith("Your progress: 1 exercise, 0 done")  # not "1 exercises"
    rows(2, matrix=torch.eye(2))
    assert exercises.progress().count("not attempted") == 1 and exercises.progress().count("done") == 1
    rows(2, matrix=torch.eye(3))
    rows(3, matrix=torch.eye(3))
    progress = exercises.progress()
    assert [status for _, status in progress.entries] == ["done", "done"]
    assert str(progress).startswith("Your progress: 2 exercises, 2 done, 0 wrong, 0 not attempted")
    # Another matrix is another exercise.
    rows(3, matrix=torch.eye(4))
    assert exercises.progress().count("wrong") == 1
    exercises.reset_progress()
    assert "no exercise checked yet" in str(exercises.progress())


def test_progress_keeps_a_predictions_first_answer_and_says_so():
    # A prediction counts as it was made: changing it once the run has shown the answer changes nothing in progress().
    exercises.reset_progress()
    shape = functools.partial(exercises.check_one_hot_shape, corpus=["a b"], sentence="a b", max_sequence_length=3)
    assert shape(None).status == "not attempted"  # the placeholder fixes nothing
    first = shape((4, 3))
    assert first.status != "correct" and "first prediction" not in first.message
    again = shape((3, 4))
    assert again.correct and "progress() keeps your first prediction, (4, 3)" in again.message
    assert [status for _, status in exercises.progress().entries] == ["wrong"]
    assert "first prediction" not in shape((4, 3)).message  # the first answer again: nothing to say
    # Neither a placeholder nor an answer the checker cannot read replaces the first prediction's verdict.
    exercises.reset_progress()
    assert shape((3, 4)).correct
    assert not shape("(3, 4)").correct and shape(None).status == "not attempted"
    assert [status for _, status in exercises.progress().entries] == ["done"]
    assert "(3, 4)" in shape((4, 3)).message  # the first prediction is still the one kept
    exercises.reset_progress()
    shape((4, 3))
    # A multiple choice and a plain prediction keep theirs too; another exercise starts afresh.
    exercises.check_shift_back("a")
    exercises.check_shift_back("b")
    exercises.check_prediction(3, actual=3, question="q")
    exercises.check_prediction(4, actual=3, question="q")
    assert [status for _, status in exercises.progress().entries] == ["wrong", "wrong", "done"]
    exercises.reset_progress()


def test_a_run_waits_until_a_checker_has_judged_its_prediction(capsys):
    exercises.reset_progress()
    assert not exercises.predicted(None) and not exercises.predicted((4, 3))
    assert capsys.readouterr().out == f"{exercises.WAITING_FOR_A_PREDICTION}\n{exercises.CHECK_FIRST}\n"
    exercises.check_one_hot_shape((4, 3), corpus=["a b"], sentence="a b", max_sequence_length=3)
    assert exercises.predicted((4, 3)) and not exercises.predicted((4, 3), "z")
    # A checker that is not a prediction's judges nothing the run waits for.
    table = torch.stack([torch.sin(torch.arange(2.0)), torch.cos(torch.arange(2.0))], dim=1)
    assert exercises.check_encoding(table, max_sequence_length=2, d_model=2).correct
    assert not exercises.predicted(table)
    exercises.reset_progress()
    assert not exercises.predicted((4, 3))


def test_the_progress_list_never_shows_a_predictions_answer():
    # The learner's edition lists every exercise as "not attempted" under its label: a label with the run's value
    # in it would hand the answer out before the learner predicts it.
    exercises.reset_progress()
    exercises.check_prediction(0.25, actual=0.2154, tolerance=0.003, question="the typo's first denominator")
    exercises.check_prediction(None, actual=35, question="the pairs Llama 4's rule keeps")
    text = repr(exercises.progress())
    assert "0.2154" not in text and "35" not in text and "actual" not in text
    assert "the typo's first denominator" in text and "the pairs Llama 4's rule keeps" in text
    exercises.reset_progress()


def test_progress_counts_an_exercise_whose_checker_cell_raised():
    # In a kernel, progress() hears of every cell that raises (IPython's events): a checker call the error stopped
    # is listed as an error, and the summary says that exercises whose checker has not run are not counted.
    from IPython.core.interactiveshell import InteractiveShell

    from posenc.exercises import feedback

    shell = InteractiveShell.instance()
    try:
        feedback.watch_cells(shell)
        exercises.reset_progress()
        shell.run_cell("from posenc import exercises", cell_id="import")
        table = "torch.stack([torch.sin(torch.arange(2.0)), torch.cos(torch.arange(2.0))], dim=1)"
        check = f"exercises.check_encoding({table}, max_sequence_length=2, d_model=2)"
        shell.run_cell(check, cell_id="first")  # NameError: torch
        shell.run_cell(f"import torch\n{check}", cell_id="first")
        shell.run_cell("my_shape = None\nmy_shape = undefined_name", cell_id="answer")
        shell.run_cell('exercises.check_one_hot_shape(my_shape, corpus=["a b"], sentence="a b", max_sequence_length=3)',
                       cell_id="checker")
        shell.run_cell('exercises.check_prediction(my_guess, actual=35, question="the pairs kept")', cell_id="guess")
        progress = exercises.progress()
        text = str(progress)
        assert text.startswith("Your progress: 3 exercises, 1 done, 0 wrong, 1 not attempted, 1 stopped by an error")
        assert progress.count("error") == 1 and "! error          the pairs kept" in text
        assert "2 cell(s) raised an error" in text and "not counted above" in text
        assert "NameError: name 'undefined_name' is not defined" in text
        assert "NameError: name 'torch' is not defined" not in text  # run again without an error: forgotten
        # Fixed and run again: the error is gone, and the summary is the one a notebook without errors stores.
        shell.run_cell("my_shape = (3, 4)", cell_id="answer")
        shell.run_cell("my_guess = 35", cell_id="guess-answer")
        shell.run_cell('exercises.check_prediction(my_guess, actual=35, question="the pairs kept")', cell_id="guess")
        shell.run_cell('exercises.check_one_hot_shape(my_shape, corpus=["a b"], sentence="a b", max_sequence_length=3)',
                       cell_id="checker")
        assert str(exercises.progress()).split("\n")[0] == "Your progress: 3 exercises, 3 done, 0 wrong, 0 not attempted"
        assert "raised" not in str(exercises.progress())
    finally:
        exercises.reset_progress()
        InteractiveShell.clear_instance()


class InPlaceModule(SeedModule):
    """Notebook 04's Exercise 4 with its length check fixed and `x +=` kept."""

    def forward(self, x):
        self.check(x.shape[-2], self.table.shape[0])
        x += self.table[: x.shape[-2]]
        return x


class AddUnderscoreModule(SeedModule):
    """The same with `x.add_(...)`: the message names both ways of adding in place."""

    def forward(self, x):
        self.check(x.shape[-2], self.table.shape[0])
        return x.add_(self.table[: x.shape[-2]])


def test_a_module_that_adds_in_place_is_named():
    feedback = exercises.check_positional_module(InPlaceModule(refuse_with(ValueError, "<=")))
    assert feedback.status == "mistake" and "changed x itself" in feedback.message, feedback.message
    feedback = exercises.check_positional_module(AddUnderscoreModule(refuse_with(ValueError, "<=")))
    assert feedback.status == "mistake" and "`x.add_(...)`" in feedback.message, feedback.message
    # Both bugs, as the exercise shows the module: named as the exhibit, with no line or fix given away.
    feedback = exercises.check_positional_module(InPlaceModule(asserting("<")))
    assert feedback.status == "mistake" and "like the module as given" in feedback.message, feedback.message
    for fix in ("<=", "ValueError", "x +", "+=", "assert", "in place", "too early"):
        assert fix not in feedback.message, fix
    # One bug fixed: the other is named, as for any partial fix.
    feedback = exercises.check_positional_module(InPlaceModule(asserting("<=")))
    assert feedback.status == "mistake" and "changed x itself" in feedback.message, feedback.message
    feedback = exercises.check_positional_module(SeedModule(asserting("<")))
    assert feedback.status == "mistake" and "stops one position too early" in feedback.message, feedback.message


class EitherLayout(torch.nn.Module):
    """11's Exercise 3, right: batch_first as torch.nn.Transformer takes it."""

    def __init__(self, d_model, max_sequence_length, batch_first=False):
        super().__init__()
        self.batch_first = batch_first
        self.register_buffer("pe", sinusoidal_encoding(max_sequence_length=max_sequence_length, d_model=d_model))

    def length(self, x):
        return x.size(1) if self.batch_first else x.size(0)

    def forward(self, x):
        if self.length(x) > self.pe.size(0):
            raise ValueError("too long")
        rows = self.pe[: self.length(x)]
        return x + (rows if self.batch_first else rows.unsqueeze(1))


class FlagIgnored(EitherLayout):
    def length(self, x):
        return x.size(0)  # pytorch/examples' reading, whatever the flag

    def forward(self, x):
        if x.size(0) > self.pe.size(0):
            raise ValueError("too long")
        return x + self.pe[: x.size(0)].unsqueeze(1)


class AlwaysBatchFirst(EitherLayout):
    def length(self, x):
        return x.size(1)

    def forward(self, x):
        if x.size(1) > self.pe.size(0):
            raise ValueError("too long")
        return x + self.pe[: x.size(1)]


class LayoutInPlace(EitherLayout):
    def forward(self, x):
        if self.length(x) > self.pe.size(0):
            raise ValueError("too long")
        rows = self.pe[: self.length(x)]
        x += rows if self.batch_first else rows.unsqueeze(1)
        return x


class LayoutAssert(EitherLayout):
    def forward(self, x):
        assert self.length(x) <= self.pe.size(0)
        rows = self.pe[: self.length(x)]
        return x + (rows if self.batch_first else rows.unsqueeze(1))


class LayoutIndexError(EitherLayout):
    """The length checked on the right dimension, but refused with IndexError."""

    def forward(self, x):
        if self.length(x) > self.pe.size(0):
            raise IndexError(self.length(x))
        return super().forward(x)


class PackageWrapped(torch.nn.Module):
    """The package's own module, which reads (batch, seq, d_model) rightly, turned by a transpose: no bug found."""

    def __init__(self, d_model, max_sequence_length, batch_first=False):
        super().__init__()
        self.batch_first = batch_first
        self.pe = PositionalEncoding(d_model=d_model, max_sequence_length=max_sequence_length)

    def forward(self, x):
        return self.pe(x) if self.batch_first else self.pe(x.transpose(0, 1)).transpose(0, 1)


class PackageCalled(EitherLayout):
    """The same, with the package's module built inside forward: it holds none, but its forward runs."""

    def forward(self, x):
        pe = PositionalEncoding(d_model=x.size(-1), max_sequence_length=self.pe.size(0))
        return pe(x) if self.batch_first else pe(x.transpose(0, 1)).transpose(0, 1)


class DefaultBatchFirst(EitherLayout):
    """Right with the flag given, but batch first by default, unlike torch.nn.Transformer."""

    def __init__(self, d_model, max_sequence_length, batch_first=True):
        super().__init__(d_model, max_sequence_length, batch_first)


class FlagRequired(EitherLayout):
    def __init__(self, d_model, max_sequence_length, batch_first):
        super().__init__(d_model, max_sequence_length, batch_first)


class EitherLayoutTransposing(torch.nn.Module):
    """Right, written another way: the table stored as (L, 1, d_model), x turned to (seq, batch, d_model) and back."""

    def __init__(self, d_model, max_sequence_length, batch_first=False):
        super().__init__()
        self.batch_first = batch_first
        table = sinusoidal_encoding(max_sequence_length=max_sequence_length, d_model=d_model)
        self.register_buffer("pe", table[:, None, :])

    def forward(self, x):
        x = x.transpose(0, 1) if self.batch_first else x
        if x.size(0) > self.pe.size(0):
            raise ValueError(f"{x.size(0)} positions, more than {self.pe.size(0)}")
        out = x + self.pe[: x.size(0)]
        return out.transpose(0, 1) if self.batch_first else out


class FixedForwardOldCheck(EitherLayout):
    """forward fixed, the length check still on axis 0."""

    def forward(self, x):
        if x.size(0) > self.pe.size(0):
            raise ValueError("too long")
        rows = self.pe[: self.length(x)]
        return x + (rows if self.batch_first else rows.unsqueeze(1))


class Float64Table(EitherLayout):
    """Right numbers, but the table is float64: a float32 x comes back float64, which the next float32 layer refuses."""

    def __init__(self, d_model, max_sequence_length, batch_first=False):
        super().__init__(d_model, max_sequence_length, batch_first)
        self.pe = self.pe.double()


class Float64TableCastOnce(EitherLayout):
    """Right: the table built in float64 and only the finished table cast to float32."""

    def __init__(self, d_model, max_sequence_length, batch_first=False):
        super().__init__(d_model, max_sequence_length, batch_first)
        table = sinusoidal_encoding(max_sequence_length=max_sequence_length, d_model=d_model, dtype=torch.float64)
        self.pe = table.float()


class Float64TableCastAtAdd(EitherLayout):
    """Right: a float64 table kept, and cast to x's dtype where it is added."""

    def __init__(self, d_model, max_sequence_length, batch_first=False):
        super().__init__(d_model, max_sequence_length, batch_first)
        self.pe = self.pe.double()

    def forward(self, x):
        if self.length(x) > self.pe.size(0):
            raise ValueError("too long")
        rows = self.pe[: self.length(x)].to(x.dtype)
        return x + (rows if self.batch_first else rows.unsqueeze(1))


class HalfOutput(EitherLayout):
    """x + PE, rounded to float16 on the way out: a narrower dtype than x's."""

    def forward(self, x):
        return super().forward(x).half()


class LayoutDetached(EitherLayout):
    """Right numbers, but the output detached: no gradient reaches x, so training stops here."""

    def forward(self, x):
        return super().forward(x).detach()


class LayoutNoGrad(EitherLayout):
    """Right numbers, the sum taken under torch.no_grad."""

    def forward(self, x):
        with torch.no_grad():
            return super().forward(x)


class LayoutAtLeast(EitherLayout):
    """The length check uses >= for >: exactly max_sequence_length positions are refused."""

    def forward(self, x):
        if self.length(x) >= self.pe.size(0):
            raise ValueError("too long")
        rows = self.pe[: self.length(x)]
        return x + (rows if self.batch_first else rows.unsqueeze(1))


class LayoutNarrow(torch.nn.Module):
    """Right, written another way: the positions' dimension chosen once, the table cut with narrow and unsqueezed."""

    def __init__(self, d_model, max_sequence_length, batch_first=False):
        super().__init__()
        self.dim = 1 if batch_first else 0
        self.register_buffer("pe", sinusoidal_encoding(max_sequence_length=max_sequence_length, d_model=d_model))

    def forward(self, x):
        n = x.shape[self.dim]
        if n > len(self.pe):
            raise ValueError(f"{n} > {len(self.pe)}")
        return x + self.pe.narrow(0, 0, n).unsqueeze(1 - self.dim)


class LayoutFromOne(EitherLayout):
    """The right shape, the wrong rows: positions counted from 1, from a table one row longer."""

    def forward(self, x):
        if self.length(x) > self.pe.size(0):
            raise ValueError("too long")
        table = sinusoidal_encoding(max_sequence_length=self.pe.size(0) + 1, d_model=self.pe.size(1))
        rows = table[1: self.length(x) + 1]
        return x + (rows if self.batch_first else rows.unsqueeze(1))


class LayoutScaled(EitherLayout):
    """The right shape, other values: x scaled by sqrt(d_model) before the table is added."""

    def forward(self, x):
        return super().forward(x * x.size(-1) ** 0.5)


class LayoutWithDropout(EitherLayout):
    """pytorch/examples keeps nn.Dropout(0.1) after the sum: right, since the checker turns dropout off (review 41)."""

    def __init__(self, d_model, max_sequence_length, batch_first=False):
        super().__init__(d_model, max_sequence_length, batch_first)
        self.dropout = torch.nn.Dropout(0.1)

    def forward(self, x):
        return self.dropout(super().forward(x))


class AlwaysBatchFirstWithDropout(AlwaysBatchFirst):
    """The bug with the example's dropout kept: still named, not hidden behind "other values"."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.dropout = torch.nn.Dropout(0.5)

    def forward(self, x):
        return self.dropout(super().forward(x))


class NoFlag(torch.nn.Module):  # 04's Exercise 4 fixed, copied: no batch_first
    def __init__(self, d_model, max_sequence_length):
        super().__init__()


@pytest.mark.parametrize("answer,status,words", [
    (EitherLayout, "correct", "one table row per position in both layouts"),
    (EitherLayoutTransposing, "correct", "refuses a sequence one longer than its table with ValueError"),
    (Float64TableCastOnce, "correct", "refuses a sequence one longer than its table with ValueError"),
    (Float64TableCastAtAdd, "correct", "refuses a sequence one longer than its table with ValueError"),
    (LayoutNarrow, "correct", "refuses a sequence one longer than its table with ValueError"),
    (LayoutDetached, "mistake", "no gradient flows back to x"),
    (LayoutNoGrad, "mistake", "no gradient flows back to x"),
    (LayoutAtLeast, "mistake", "The check is off by one, like >= where > is needed"),
    (Float64Table, "mistake", "With batch_first=True, x is (batch, seq, d_model): for float32 x of shape (3, 7, 4), forward "
                              "returned x + PE, but in float64. Adding a float64 table does that"),
    (HalfOutput, "mistake", "forward returned x + PE, but in float16. Return x's dtype"),
    (DefaultBatchFirst, "mistake", "Built without batch_first, for x of shape (2, 3, 4), (seq, batch, d_model), your module "
                                   "did not add one table row per position. Make batch_first default to False"),
    (FlagRequired, "mistake", "FlagRequired(d_model=4, max_sequence_length=7) raised TypeError"),
    (FixedForwardOldCheck, "mistake", "Check the length on the dimension that holds the positions"),
    (FlagIgnored, "mistake", "With batch_first=True, x is (batch, seq, d_model): forward read the positions from the other"),
    (AlwaysBatchFirst, "mistake", "With batch_first=False, x is (seq, batch, d_model): forward read the positions"),
    (LayoutInPlace, "mistake", "changed x itself"),
    (LayoutAssert, "mistake", "python -O"),
    (LayoutIndexError, "mistake", "forward raised IndexError: 8. Refuse it with ValueError, Python's error"),
    (LayoutFromOne, "wrong", "it returned the right shape, (3, 7, 4), but other values: position 0 got the table's row 1, "
                             "not row 0."),
    (LayoutScaled, "wrong", "it returned the right shape, (3, 7, 4), but other values."),
    (NoFlag, "wrong", "batch_first=True) raised TypeError"),
    (LayoutWithDropout, "correct", "refuses a sequence one longer than its table with ValueError"),
    (AlwaysBatchFirstWithDropout, "mistake", "With batch_first=False, x is (seq, batch, d_model): forward read the positions"),
    (PackageWrapped, "mistake", "your module holds the package's own PositionalEncoding"),
    (PackageCalled, "mistake", "your module calls the package's own PositionalEncoding"),
    (EitherLayout(d_model=6, max_sequence_length=10), "mistake", "Give the class itself"),
    (3, "wrong", "nn.Module class"),
    (None, "not attempted", "class"),
])
def test_the_layout_module_is_built_fresh_and_checked_in_both_layouts(answer, status, words):
    feedback = exercises.check_layout_module(answer)
    assert feedback.status == status and words in feedback.message, feedback.message
    if answer in (LayoutIndexError, LayoutAssert):  # the right dimension checked: no advice to move the check
        assert "the dimension that holds the positions" not in feedback.message
    if answer is HalfOutput:  # float16 is narrower than float32: no word of a wider table
        assert "wider" not in feedback.message
    # Other sizes: the checker builds its own modules, so a right class stays right.
    assert exercises.check_layout_module(EitherLayout, d_model=6, max_sequence_length=10).correct


def test_a_prediction_not_yet_written_does_not_read_the_run():
    # A show cell counts its answer only under `if exercises.predicted(...)`, so until the learner predicts,
    # the checker is given actual=None, and says "not attempted" rather than raising.
    assert exercises.check_prediction(None, actual=None, question="q").status == "not attempted"
    with pytest.raises(TypeError, match="actual"):
        exercises.check_prediction(3, actual=None, question="q")


@pytest.mark.parametrize("answer,status", [("5", "correct"), (" 5.0 ", "correct"), ("4", "wrong"), ("five", "wrong"),
                                           ("nan", "wrong"), ("inf", "wrong")])
def test_a_number_typed_with_quotes_is_the_same_prediction(answer, status):
    feedback = exercises.check_prediction(answer, actual=5, question="q")
    assert feedback.status == status, feedback.message
    if answer in ("five", "nan", "inf"):
        assert "Expected a number" in feedback.message
    # The named predictions hand the answer on, so they read it the same way.
    assert exercises.check_row_a_token_gets("0", actual=0).correct
    # Predicting an error is not a row, so it is not kept as the prediction: the message says only that nothing
    # raises, and keeps how the shapes meet (the answer) until a row is predicted.
    for error in ("error", "IndexError", "it raises"):
        feedback = exercises.check_row_a_token_gets(error)
        assert feedback.status == "wrong" and not feedback.readable and "Nothing raises" in feedback.message
        assert "(2, 1, 6)" not in feedback.message and "row 0" not in feedback.message, feedback.message
    assert "Nothing raises" not in exercises.check_row_a_token_gets("seven").message
    assert "Nothing raises" not in exercises.check_row_a_token_gets(7).message


class FrontAxisModule(SeedModule):
    """Notebook 04's Exercise 4 fixed for a batch, but reading the length as x.shape[1] (d_model for one sentence)."""

    def __init__(self, check_axis=1, add_axis=1):
        super().__init__(refuse_with(ValueError, "<="))
        self.check_axis, self.add_axis = check_axis, add_axis

    def forward(self, x):
        if x.shape[self.check_axis] > self.table.shape[0]:
            raise ValueError("sequence too long")
        return x + self.table[: x.shape[self.add_axis]]


class BatchOnlyModule(SeedModule):
    def forward(self, x):
        if x.dim() != 3:
            raise ValueError("expected a batch")
        return super().forward(x)


class CutsOneSentenceModule(SeedModule):
    """Checks the length of a batch only, and cuts one sentence to the table's length without a word."""

    def forward(self, x):
        if x.dim() == 2:
            return x[: self.table.shape[0]] + self.table[: x.shape[0]]
        return super().forward(x)


class AlwaysBatchModule(SeedModule):
    def forward(self, x):
        return super().forward(x if x.dim() == 3 else x[None])


@pytest.mark.parametrize("module,status,words", [
    (FrontAxisModule(), "mistake", "fails on one sentence, x of shape (seq, d_model) = (10, 6)"),  # the review's module
    (FrontAxisModule(add_axis=-2), "mistake", "For one sentence of 11 positions, (11, 6), it raised (RuntimeError"),  # check only
    (BatchOnlyModule(refuse_with(ValueError, "<=")), "mistake", "refuses one sentence"),
    (AlwaysBatchModule(refuse_with(ValueError, "<=")), "wrong", "should return x's shape, got (1, 10, 6)"),
    (CutsOneSentenceModule(refuse_with(ValueError, "<=")), "mistake",
     "For one sentence of 11 positions, (11, 6), it returned 10 positions, cutting the input without a word"),
])
def test_a_module_that_takes_a_batch_but_not_one_sentence_is_named(module, status, words):
    # 04's Exercise 4 asks for one sentence (positions, d_model) or a batch: both 3-D shapes pass, the 2-D one does not.
    feedback = exercises.check_positional_module(module)
    assert feedback.status == status and words in feedback.message, feedback.message
    if "x.shape[1]" in feedback.message:
        assert "x.shape[-2]" in feedback.message
    if "it returned" in feedback.message:  # nothing failed, so no axis is guessed at
        assert "x.shape[1]" not in feedback.message and "x.shape[-2]" in feedback.message


def test_a_module_that_takes_one_sentence_and_a_batch_is_correct():
    for module in (SeedModule(refuse_with(ValueError, "<=")), FrontAxisModule(check_axis=-2, add_axis=-2)):
        feedback = exercises.check_positional_module(module)
        assert feedback.correct and "one sentence (10, 6)" in feedback.message and "(11, 6)" in feedback.message, feedback
    # A module that reshapes one sentence into a batch of one, and back, is right too.

    class Reshaping(SeedModule):
        def forward(self, x):
            return super().forward(x[None])[0] if x.dim() == 2 else super().forward(x)

    assert exercises.check_positional_module(Reshaping(refuse_with(ValueError, "<="))).correct


@pytest.mark.parametrize("written", ["(b)", "b.", "'B'", ' "b" ', "[b]"])
def test_a_choice_written_as_the_notebook_prints_it_is_read(written):
    options = {"a": "Why a.", "b": "Why b."}
    assert exercises.check_choice(written, options=options, correct="b", question="q").correct


def test_a_prediction_the_checker_cannot_read_is_not_kept_as_the_first_prediction():
    # A typo is not a prediction: the first answer the checker can read is the one progress() keeps.
    exercises.reset_progress()
    options = {"a": "Why a.", "b": "Why b."}
    typo = exercises.check_choice("(z)", options=options, correct="b", question="q")
    assert typo.status == "wrong" and not typo.readable and "Expected one of 'a', 'b'" in typo.message
    assert exercises.check_choice("b", options=options, correct="b", question="q").correct
    assert [status for _, status in exercises.progress().entries] == ["done"]
    exercises.reset_progress()
    assert not exercises.check_prediction("six", actual=6, question="n").readable
    assert exercises.check_prediction(6, actual=6, question="n").correct
    assert [status for _, status in exercises.progress().entries] == ["done"]
    # A readable wrong prediction is still kept.
    exercises.check_prediction(5, actual=6, question="m")
    assert "first prediction, 5" in exercises.check_prediction(6, actual=6, question="m").message
    exercises.reset_progress()


def test_a_choice_reads_same_as_the_same_and_the_other_way_round():
    options = {"the same": "Why same.", "better": "Why better."}
    assert exercises.check_choice("same", options=options, correct="the same", question="q").correct
    assert exercises.check_choice("The same", options=options, correct="the same", question="q").correct
    assert exercises.check_choice("the better", options=options, correct="better", question="q").correct


def test_the_rotary_tables_checker_speaks_of_queries_only_for_one_tensor():
    x = torch.randn(4, 8, generator=torch.Generator().manual_seed(0))
    three = exercises.check_rotary_tables((x, x, x), x=x)
    assert three.status == "wrong" and "turned queries" not in three.message, three
    one = exercises.check_rotary_tables(x, x=x)
    assert one.status == "wrong" and "not the turned queries" in one.message, one


def test_a_written_function_without_return_is_wrong_not_unattempted():
    turned = torch.randn(4, 8, generator=torch.Generator().manual_seed(0))
    for verdict in (exercises.check_rotary_undone(lambda turned: None, turned=turned),
                    exercises.check_alibi_slopes(lambda num_heads: None)):
        assert verdict.status == "wrong" and "returned None" in verdict.message, verdict


class DetachingModule(SeedModule):
    """Notebook 04's Exercise 4 fixed, but with the gradient to x cut, in one of several ways."""

    def __init__(self, check, cut):
        super().__init__(check)
        self.cut = cut

    def forward(self, x):
        self.check(x.shape[-2], self.table.shape[0])
        return self.cut(x, self.table[: x.shape[-2]])


def _under_no_grad(x, table):
    with torch.no_grad():
        return x + table


@pytest.mark.parametrize("cut", [lambda x, table: (x + table).detach(), lambda x, table: x.detach() + table,
                                 _under_no_grad, lambda x, table: torch.from_numpy(x.detach().numpy()) + table],
                         ids=["detach the sum", "detach x", "no_grad", "numpy"])
def test_a_module_that_cuts_the_gradient_is_named(cut):
    feedback = exercises.check_positional_module(DetachingModule(refuse_with(ValueError, "<="), cut))
    assert feedback.status == "mistake" and "no gradient flows back to x" in feedback.message, feedback.message


def test_a_module_that_raises_once_x_requires_grad_is_named():
    # x.numpy() raises on a tensor that requires grad: right numbers for a plain x, but training could not run it.
    def through_numpy(x, table):
        return torch.from_numpy(x.numpy() + table.numpy())

    plain = torch.zeros(2, 3, 6)
    assert torch.equal(through_numpy(plain, plain[0]), plain)
    with pytest.raises(RuntimeError):
        through_numpy(plain.clone().requires_grad_(), plain[0])
    feedback = exercises.check_positional_module(DetachingModule(refuse_with(ValueError, "<="), through_numpy))
    assert feedback.status == "mistake" and "fails once x has requires_grad=True (RuntimeError" in feedback.message, feedback
    assert "gradients must flow back through forward to x" in feedback.message


class LayoutThroughNumpy(EitherLayout):
    """Right numbers through NumPy: fine for a plain x, but it raises once x requires grad."""

    def forward(self, x):
        return torch.from_numpy(super().forward(x).numpy())


def test_a_layout_module_that_raises_once_x_requires_grad_is_named():
    feedback = exercises.check_layout_module(LayoutThroughNumpy)
    assert feedback.status == "mistake", feedback
    message = feedback.message
    assert message.startswith("With batch_first=True, x is (batch, seq, d_model): forward adds the table to x of shape "
                              "(3, 7, 4), but it fails once x has requires_grad=True (RuntimeError"), message


@pytest.mark.parametrize("add", [lambda x, table: x + table, lambda x, table: torch.add(x, table),
                                 lambda x, table: table + x, lambda x, table: x.clone().add_(table)],
                         ids=["plus", "torch.add", "table first", "clone then add_"])
def test_a_module_whose_gradient_reaches_x_passes(add):
    assert exercises.check_positional_module(DetachingModule(refuse_with(ValueError, "<="), add)).correct
    with torch.no_grad():  # the checker turns gradients on for its own test, whatever the caller's mode
        assert exercises.check_positional_module(DetachingModule(refuse_with(ValueError, "<="), add)).correct


class LayoutIndexForSlice(EitherLayout):
    """Review 39 (DiffPoseTalk issue #20's slip): the right length check, but an index where a slice is needed."""

    def forward(self, x):
        if self.length(x) > self.pe.size(0):
            raise ValueError("too long")
        row = self.pe[self.length(x)]  # one row, and out of range at exactly max_sequence_length
        return x + row


class LayoutPlainTable(EitherLayout):
    """Right, with the table kept as a plain attribute rather than a buffer."""

    def __init__(self, d_model, max_sequence_length, batch_first=False):
        super().__init__(d_model, max_sequence_length, batch_first)
        del self.pe
        self.pe = sinusoidal_encoding(max_sequence_length=max_sequence_length, d_model=d_model)


class LayoutMaxLen(EitherLayout):
    def __init__(self, d_model, max_len, batch_first=False):
        super().__init__(d_model, max_len, batch_first)


class LayoutBrokenInit(EitherLayout):
    def __init__(self, d_model, max_sequence_length, batch_first=False):
        super().__init__(d_model, max_sequence_length, batch_first)
        raise TypeError("a slip inside __init__")


class LayoutParameterTable(EitherLayout):
    """Right sums, with the table stored as a trainable nn.Parameter: training would change it (review 44)."""

    def __init__(self, d_model, max_sequence_length, batch_first=False, requires_grad=True):
        super().__init__(d_model, max_sequence_length, batch_first)
        table = self.pe
        del self.pe
        self.pe = torch.nn.Parameter(table, requires_grad=requires_grad)


class LayoutFrozenParameterTable(LayoutParameterTable):
    def __init__(self, d_model, max_sequence_length, batch_first=False):
        super().__init__(d_model, max_sequence_length, batch_first, requires_grad=False)


class LayoutUnusedParameter(EitherLayout):
    def __init__(self, d_model, max_sequence_length, batch_first=False):
        super().__init__(d_model, max_sequence_length, batch_first)
        self.unused = torch.nn.Parameter(torch.ones(2))


def test_a_table_stored_as_a_trainable_parameter_is_named_review_44():
    feedback = exercises.check_layout_module(LayoutParameterTable)
    assert feedback.status == "mistake", feedback.message
    assert "trainable nn.Parameter (pe of shape (7, 4))" in feedback.message and "buffer" in feedback.message
    # A frozen one is never trained, and a parameter forward does not use is not the table: both pass as before.
    for answer in (LayoutFrozenParameterTable, LayoutUnusedParameter, EitherLayout):
        feedback = exercises.check_layout_module(answer)
        assert feedback.correct and "nn.Parameter" not in feedback.message, feedback.message
    with torch.no_grad():  # the checker turns gradients on for its own test, whatever the caller's mode
        assert exercises.check_layout_module(LayoutParameterTable).status == "mistake"


def test_the_layout_checker_names_the_slip_it_sees_review_39():
    # An index for a slice fails at exactly max_sequence_length, but is no off-by-one check: it is wrong at 6 too.
    feedback = exercises.check_layout_module(LayoutIndexForSlice)
    assert not feedback.correct and "off by one" not in feedback.message
    assert "raised IndexError" in feedback.message and "7 positions, which fit" in feedback.message, feedback.message
    # The real off-by-one is still named.
    assert "The check is off by one" in exercises.check_layout_module(LayoutAtLeast).message
    # A wrong argument name is told the names; a slip inside __init__ is not told to rename anything.
    named = exercises.check_layout_module(LayoutMaxLen).message
    assert "name its arguments d_model, max_sequence_length and batch_first" in named and "as keyword" not in named
    inner = exercises.check_layout_module(LayoutBrokenInit).message
    assert "a slip inside __init__" in inner and "name its arguments" not in inner
    # A plain attribute passes, with one line on what a buffer adds; a buffer or no stored table hears nothing.
    plain = exercises.check_layout_module(LayoutPlainTable)
    assert plain.correct and "plain attribute" in plain.message
    assert "plain attribute" not in exercises.check_layout_module(EitherLayout).message


# A TypeError from a line inside a function whose signature is right is reported as it is, not as a wrong signature
# (round 41: `keep_dim=True` for `keepdim=True` was told "give the function the two parameters"). -------------------

def _keep_dim_repair(weights, key_mask):
    kept = weights * key_mask
    return kept / kept.sum(dim=-1, keep_dim=True)


def _keep_dim_builder(*, max_sequence_length, d_model):
    return torch.zeros(max_sequence_length, d_model).sum(dim=-1, keep_dim=True)


def _keep_dim_pad(words, *, max_sequence_length, truncate=False):
    return sorted(words, keep_dim=True)


def _keep_dim_cut(words, *, max_sequence_length, truncate=False):  # right until asked to cut
    if len(words) > max_sequence_length:
        if truncate:
            return sorted(words, keep_dim=True)
        raise ValueError("too long")
    return words[:max_sequence_length] + ["<PAD>"] * (max_sequence_length - len(words))


def _no_truncate_pad(words, *, max_sequence_length):  # right, but with no truncate parameter
    if len(words) > max_sequence_length:
        raise ValueError("too long")
    return words + ["<PAD>"] * (max_sequence_length - len(words))


def _keep_dim_ids(attention_mask):
    return attention_mask.cumsum(dim=-1, keep_dim=True) - 1


_SIGNATURE_CASES = [  # checker, a right signature with a typo inside, a wrong signature, the signature advice
    (exercises.check_mask_repair, _keep_dim_repair, lambda weights: weights, "two parameters"),
    (exercises.check_drift_fix, _keep_dim_builder, lambda max_sequence_length: None, "the parameters"),
    (functools.partial(exercises.check_pad_function, max_sequence_length=4), _keep_dim_pad, lambda words, n: words,
     "the parameters"),
    (functools.partial(exercises.check_pad_function, max_sequence_length=4), _keep_dim_cut, _no_truncate_pad,
     "add the parameter"),
    (functools.partial(exercises.check_position_ids, attention_mask=torch.tensor([[0, 1, 1], [1, 1, 1]])), _keep_dim_ids,
     lambda: None, "one parameter"),
]


@pytest.mark.parametrize("check, typo, wrong_signature, advice", _SIGNATURE_CASES,
                         ids=["mask repair", "drift fix", "pad", "pad, truncate", "position ids"])
def test_a_type_error_inside_a_right_signature_is_not_blamed_on_the_parameters(check, typo, wrong_signature, advice):
    feedback = check(typo)
    assert not feedback.correct and "keep_dim" in feedback.message, feedback.message
    assert advice not in feedback.message and "give the function" not in feedback.message, feedback.message
    feedback = check(wrong_signature)
    assert feedback.status == "wrong" and advice in feedback.message, feedback.message


def test_a_module_that_keeps_its_table_as_a_parameter_is_named():
    learned = SeedModule(refuse_with(ValueError, "<="))
    table = learned.table
    del learned.table
    learned.table = torch.nn.Parameter(table.clone())
    feedback = exercises.check_positional_module(learned)
    assert feedback.status == "mistake" and "trainable parameters (table)" in feedback.message
    frozen = SeedModule(refuse_with(ValueError, "<="))
    del frozen.table
    frozen.table = torch.nn.Parameter(table.clone(), requires_grad=False)  # not trained, so allowed
    assert exercises.check_positional_module(frozen).correct


def test_the_exhibit_of_04_pasted_back_keeps_its_secret():
    # A learner who pastes the module the exercise shows is told it is that module, not where its two bugs are.
    path = next((Path(__file__).parents[1] / "notebooks").glob("04_*.ipynb"))
    (prompt,) = ["".join(cell["source"]) for cell in json.loads(path.read_text())["cells"]
                 if "".join(cell["source"]).startswith("### Exercise 4")]
    namespace = {"torch": torch, "encoding": encoding}
    exec(re.search(r"```python\n(.*?)```", prompt, re.S).group(1), namespace)
    feedback = exercises.check_positional_module(namespace["PositionalEncoding"](d_model=6, max_sequence_length=10))
    assert feedback.status == "mistake" and "like the module as given" in feedback.message, feedback.message
