"""The checkers for a padding function, a one-hot matrix's shape and the W_E projection: each accepts the right
answer, names the likely mistakes, and agrees with an independent computation of what it checks (autograd for the
gradient rows)."""

import re
import sys

import numpy as np
import pytest
import torch

from posenc import exercises, tokens

# The walkthrough's original corpus, fixed here: these tests hold facts of the checkers and the pipeline, which must
# not move when a teacher changes the running example (src/posenc/example.py).
CORPUS = ("My name is John", "My name is Grant", "What is your name?", "John is my friend")

L = 10


def fixed_pad(words, *, max_sequence_length, truncate=False):
    if len(words) > max_sequence_length:
        if not truncate:
            raise ValueError(f"{len(words)} tokens, more than max_sequence_length={max_sequence_length}")
        words = words[:max_sequence_length]
    return words + ["<PAD>"] * (max_sequence_length - len(words))


def refusing_pad(words, *, max_sequence_length):  # the fix of the bug without the truncate option
    if len(words) > max_sequence_length:
        raise ValueError("too long")
    return words + ["<PAD>"] * (max_sequence_length - len(words))


def always_refusing_pad(words, *, max_sequence_length, truncate=False):
    return refusing_pad(words, max_sequence_length=max_sequence_length)


def cut_without_padding_pad(words, *, max_sequence_length, truncate=False):
    if truncate:
        return words[:max_sequence_length]
    return refusing_pad(words, max_sequence_length=max_sequence_length)


def cutting_pad(words, *, max_sequence_length):  # the exercise's code
    kept = words[:max_sequence_length]
    return kept + ["<PAD>"] * (max_sequence_length - len(kept))


def off_by_one_pad(words, *, max_sequence_length):
    if len(words) >= max_sequence_length:
        raise ValueError("too long")
    return words + ["<PAD>"] * (max_sequence_length - len(words))


def asserting_pad(words, *, max_sequence_length):
    assert len(words) <= max_sequence_length, "too long"
    return words + ["<PAD>"] * (max_sequence_length - len(words))


def exception_pad(words, *, max_sequence_length):
    if len(words) > max_sequence_length:
        raise Exception("too long")
    return words + ["<PAD>"] * (max_sequence_length - len(words))


def extending_pad(words, *, max_sequence_length):
    if len(words) > max_sequence_length:
        raise ValueError("too long")
    words.extend(["<PAD>"] * (max_sequence_length - len(words)))
    return words


def one_over_pad(words, *, max_sequence_length):  # refuses only what is 2 or more over, and cuts the one over
    if len(words) > max_sequence_length + 1:
        raise ValueError("too long")
    kept = words[:max_sequence_length]
    return kept + ["<PAD>"] * (max_sequence_length - len(kept))


def front_pad(words, *, max_sequence_length):
    if len(words) > max_sequence_length:
        raise ValueError("too long")
    return ["<PAD>"] * (max_sequence_length - len(words)) + words


def swapped_pad(words, *, max_sequence_length, truncate=False):  # the truncate test inverted
    if len(words) > max_sequence_length and truncate:
        raise ValueError("too long")
    kept = words[:max_sequence_length]
    return kept + ["<PAD>"] * (max_sequence_length - len(kept))


def never_cutting_pad(words, *, max_sequence_length, truncate=False):  # truncate=True returns the long sentence
    if len(words) > max_sequence_length and not truncate:
        raise ValueError("too long")
    return words + ["<PAD>"] * (max_sequence_length - len(words))


def last_tokens_pad(words, *, max_sequence_length, truncate=False):  # truncate=True keeps the end of the sentence
    if len(words) > max_sequence_length:
        if not truncate:
            raise ValueError("too long")
        return words[-max_sequence_length:]
    return words + ["<PAD>"] * (max_sequence_length - len(words))


def empty_pad(words, *, max_sequence_length, truncate=False):  # an empty sentence comes back empty
    return fixed_pad(words, max_sequence_length=max_sequence_length, truncate=truncate) if words else []


class TestPadFunction:
    def test_the_fix_is_accepted_in_any_signature_that_takes_the_keyword(self):
        assert exercises.check_pad_function(fixed_pad, max_sequence_length=L).correct
        assert exercises.check_pad_function(
            lambda w, max_sequence_length, truncate=False: fixed_pad(w, max_sequence_length=max_sequence_length,
                                                                     truncate=truncate),
            max_sequence_length=L).correct
        assert exercises.check_pad_function(fixed_pad, max_sequence_length=2).correct

    @pytest.mark.parametrize("function,words", [
        (cutting_pad, "dropped without a word"), (off_by_one_pad, "exactly max_sequence_length=10"), (asserting_pad, "python -O"),
        (exception_pad, "raise ValueError"), (extending_pad, "changed the list"), (front_pad, "in front"),
        (always_refusing_pad, "tokens still raised an error (ValueError: "),
        (always_refusing_pad, "). The caller asked for a cut"), (cut_without_padding_pad, "still padded"),
        (one_over_pad, "For 11 tokens, more than max_sequence_length=10, it cut to 10"),
        (swapped_pad, "the two cases are swapped"),
        (last_tokens_pad, "for 13 tokens it kept the last 10: keep the first ones"),
    ])
    def test_each_mistake_is_named(self, function, words):
        feedback = exercises.check_pad_function(function, max_sequence_length=L)
        assert feedback.status == "mistake" and words in feedback.message, feedback.message

    @pytest.mark.parametrize("function,words", [
        (never_cutting_pad, "for 13 tokens it returned 13 tokens; expected the first 10 tokens"),
        (empty_pad, "For an empty sentence it gave [];"),
    ])
    def test_a_wrong_length_is_said_in_tokens(self, function, words):
        feedback = exercises.check_pad_function(function, max_sequence_length=L)
        assert feedback.status == "wrong" and words in feedback.message, feedback.message

    def test_a_padding_of_the_wrong_length_or_token_is_said_so_not_as_two_lists_cut_alike(self):
        def one_pad_too_many(words, *, max_sequence_length, truncate=False):
            return fixed_pad(words, max_sequence_length=max_sequence_length, truncate=truncate) + ["<PAD>"]

        def no_padding(words, *, max_sequence_length, truncate=False):
            return fixed_pad(words, max_sequence_length=max_sequence_length, truncate=truncate)[:len(words)]

        def capitalised(words, *, max_sequence_length, truncate=False):
            return [w.upper() for w in words] + fixed_pad(words, max_sequence_length=max_sequence_length)[len(words):]

        for function, said in ((one_pad_too_many, "it returned 11 tokens; expected 10, the 5 words and then 5 <PAD>s."),
                               (no_padding, "it returned 5 tokens; expected 10, the 5 words and then 5 <PAD>s."),
                               (capitalised, "at position 0; expected ")):
            feedback = exercises.check_pad_function(function, max_sequence_length=L)
            assert feedback.status == "wrong" and said in feedback.message, feedback.message
            assert "<P..." not in feedback.message, feedback.message

    def test_a_cut_that_checked_the_length_is_not_told_it_still_cuts(self):
        for function in (one_over_pad, cutting_pad, swapped_pad):
            message = exercises.check_pad_function(function, max_sequence_length=L).message
            assert "still" not in message and "Check the length first" not in message, message

    def test_the_off_by_one_names_the_fix_and_no_material_the_learner_never_saw(self):
        message = exercises.check_pad_function(off_by_one_pad, max_sequence_length=L).message
        assert "len(words) > max_sequence_length" in message
        assert not re.search(r"(?i)pitfalls|lecture notebooks|source material|seed", message)

    def test_the_packages_own_pad_is_named_and_a_fix_that_only_looks_like_it_is_not(self):
        # 01 shows tokens.pad refusing the long sentence: handing it in (or a wrapper around it) is not the exercise.
        def sometimes_the_package(words, *, max_sequence_length):
            if len(words) > max_sequence_length:
                return tokens.pad(words, max_sequence_length=max_sequence_length)  # the package raises for it
            return fixed_pad(words, max_sequence_length=max_sequence_length)

        profile = sys.getprofile()
        for function in (tokens.pad, lambda words, **sizes: tokens.pad(words, **sizes), sometimes_the_package):
            feedback = exercises.check_pad_function(function, max_sequence_length=L)
            assert feedback.status == "mistake" and "the package's own tokens.pad" in feedback.message, feedback
        # A hand-written fix whose error message copies the package's word for word is still the learner's own.
        def same_message(words, *, max_sequence_length, truncate=False):
            if len(words) > max_sequence_length and not truncate:
                raise ValueError(f"the sentence has {len(words)} tokens, more than max_sequence_length="
                                 f"{max_sequence_length}; shorten it or raise max_sequence_length to at least "
                                 f"{len(words)}")
            words = list(words)[:max_sequence_length]
            return words + ["<PAD>"] * (max_sequence_length - len(words))

        assert exercises.check_pad_function(same_message, max_sequence_length=L).correct
        assert sys.getprofile() is profile  # the watch on the calls is removed

    def test_the_bug_01_shows_is_named_and_the_text_does_not_say_it(self):
        # 01's Exercise 1 (find the bug) shows a `pad` with one bug: handed in as it is, the checker names its
        # off-by-one, and the exercise's text does not say which bug it is.
        import json
        from pathlib import Path

        path = Path(__file__).resolve().parent.parent / "notebooks" / "01_padding_and_one_hot.ipynb"
        text = next("".join(c["source"]) for c in json.loads(path.read_text())["cells"]
                    if "(find the bug)" in "".join(c["source"]))
        shown = re.search(r"```python\n(.*?)```", text, re.S).group(1)
        namespace = {}
        exec(shown, namespace)
        feedback = exercises.check_pad_function(namespace["pad"], max_sequence_length=L)
        assert feedback.status == "mistake" and "exactly max_sequence_length" in feedback.message, feedback.message
        # Handed in unchanged, it is told the symptom, not the fix: pasting and running must not give the answer away.
        assert "as given" in feedback.message and "len(words) >" not in feedback.message, feedback.message
        # A changed function that still refuses the sentence that fits is told the fix (off_by_one_pad, above).
        changed = exercises.check_pad_function(off_by_one_pad, max_sequence_length=L).message
        assert "as given" not in changed and "len(words) > max_sequence_length" in changed, changed
        assert not re.search(r"(?i)exactly|off-by-one", text.replace(shown, "")), text

    def test_the_right_answer_says_what_was_tried_in_words_that_read_right(self):
        message = exercises.check_pad_function(fixed_pad, max_sequence_length=L).message
        assert "a 5-token sentence was padded to 10, and a 10-token one came back unchanged" in message, message
        assert "11, 12 and 13 tokens were refused" in message, message
        assert "also works at max_sequence_length=13, a second length the checker tried" in message, message

    def test_a_number_written_in_for_the_parameter_is_named(self):
        def ten_pad(words, *, max_sequence_length, truncate=False):
            if len(words) > 10 and not truncate:
                raise ValueError("too long")
            words = words[:10]
            return words + ["<PAD>"] * (10 - len(words))

        feedback = exercises.check_pad_function(ten_pad, max_sequence_length=10)
        assert feedback.status == "mistake" and "not a number written in" in feedback.message, feedback.message
        # Written in only in the test of the length: the verdict at the second length says what went wrong.
        def ten_test_pad(words, *, max_sequence_length, truncate=False):
            if len(words) > 10 and not truncate:
                raise ValueError("too long")
            words = words[:max_sequence_length]
            return words + ["<PAD>"] * (max_sequence_length - len(words))

        feedback = exercises.check_pad_function(ten_test_pad, max_sequence_length=10)
        assert not feedback.correct and "It passed at max_sequence_length=10, but not at 13" in feedback.message, feedback

    def test_two_over_and_a_short_cut_of_one_over_are_caught(self):
        def two_over_pad(words, *, max_sequence_length, truncate=False):
            if len(words) > max_sequence_length and len(words) != max_sequence_length + 2 and not truncate:
                raise ValueError("too long")
            words = words[:max_sequence_length]
            return words + ["<PAD>"] * (max_sequence_length - len(words))

        def short_cut_pad(words, *, max_sequence_length, truncate=False):
            if len(words) > max_sequence_length:
                if not truncate:
                    raise ValueError("too long")
                return words[:max_sequence_length - (len(words) == max_sequence_length + 1)]
            return words + ["<PAD>"] * (max_sequence_length - len(words))

        feedback = exercises.check_pad_function(two_over_pad, max_sequence_length=L)
        said = "For 12 tokens, more than max_sequence_length=10, it cut to 10"
        assert feedback.status == "mistake" and said in feedback.message, feedback.message
        feedback = exercises.check_pad_function(short_cut_pad, max_sequence_length=L)
        assert feedback.status == "wrong" and "With truncate=True, for 11 tokens" in feedback.message, feedback.message

    def test_a_fix_written_another_way_is_accepted(self):
        def while_pad(words, max_sequence_length, truncate=False):  # positional, a loop, a copy cut in place
            if len(words) > max_sequence_length and not truncate:
                raise ValueError("too long")
            padded = list(words)
            del padded[max_sequence_length:]
            while len(padded) < max_sequence_length:
                padded.append("<PAD>")
            return padded

        def slice_pad(words, *, max_sequence_length, truncate=False):
            if len(words) - 1 >= max_sequence_length and not truncate:
                raise ValueError("too long")
            return (words + ["<PAD>"] * max_sequence_length)[:max_sequence_length]

        for function in (while_pad, slice_pad):
            assert exercises.check_pad_function(function, max_sequence_length=L).correct, function

    def test_a_cut_that_shortens_the_callers_list_is_named(self):
        # The harm a silent cut does, done to the caller's own sentence: the result is right, the caller's list is not.
        def del_pad(words, *, max_sequence_length, truncate=False):
            if len(words) > max_sequence_length:
                if not truncate:
                    raise ValueError("too long")
                del words[max_sequence_length:]
                return words
            return words + ["<PAD>"] * (max_sequence_length - len(words))

        def slice_assign_pad(words, *, max_sequence_length, truncate=False):
            if len(words) > max_sequence_length and not truncate:
                raise ValueError("too long")
            words[:] = words[:max_sequence_length]
            return words + ["<PAD>"] * (max_sequence_length - len(words))

        for function in (del_pad, slice_assign_pad):
            feedback = exercises.check_pad_function(function, max_sequence_length=L)
            assert feedback.status == "mistake", feedback
            assert "With truncate=True, it changed the list it was given: the caller's 13 tokens are now 10" in \
                feedback.message, feedback.message

    def test_a_fix_without_the_truncate_option_is_told_to_add_it(self):
        feedback = exercises.check_pad_function(refusing_pad, max_sequence_length=L)
        assert feedback.status == "wrong" and "truncate=False" in feedback.message, feedback.message

    def test_the_cut_is_said_in_tokens_not_in_words_the_learner_never_saw(self):
        message = exercises.check_pad_function(cutting_pad, max_sequence_length=L).message
        assert "its last 3 tokens were dropped without a word" in message and "read" not in message, message

    def test_anything_else_is_answered(self):
        assert exercises.check_pad_function(None).status == "not attempted"
        assert exercises.check_pad_function(3).status == "wrong"
        assert exercises.check_pad_function(lambda *args, **kwargs: 1 / 0).status == "wrong"
        assert "parameters" in exercises.check_pad_function(lambda words, n: words).message


class TestOneHotShape:
    corpus = ("The cat sat.", "The dog sat on the mat.")

    def check(self, answer, **sizes):
        return exercises.check_one_hot_shape(answer, **{"corpus": self.corpus, "sentence": "the dog sat",
                                                        "max_sequence_length": 8, **sizes})

    def test_the_accepted_shape_is_what_the_package_builds(self):
        vocabulary = tokens.build_vocabulary(self.corpus)
        ids = tokens.sentence_to_ids("the dog sat", vocabulary, max_sequence_length=8)
        shape = tuple(tokens.one_hot(ids, vocab_size=vocabulary.vocab_size).shape)
        assert shape == (8, 9)
        for form in (shape, list(shape), torch.Size(shape), (8.0, 9.0), torch.tensor(shape), np.array(shape),
                     np.array(shape, dtype=float), tuple(np.int64(size) for size in shape)):
            assert self.check(form).correct, form
        for form in (np.array([8.5, 9]), np.array(["8", "9"]), np.zeros((8, 9))):
            assert not self.check(form).correct, form

    def test_the_right_answer_is_told_why_without_the_shape_the_run_below_prints(self):
        for form in ((8, 9), [8, 9], torch.Size([8, 9])):
            message = self.check(form).message
            assert "one row per padded token" in message and "<UNK> and 7 tokens" in message, message
            assert "(8, 9)" not in message, message

    @pytest.mark.parametrize("answer,words", [
        ((9, 8), "Transposed"), ((3, 9), "before padding"), ((8, 7), "leaves out the special tokens"),
        ((8, 10), "lower-cased first"), ((8, 11), "each time"), ((8, 11), "without <PAD> and <UNK>"),
        ((8, 13), "each time it occurs: the vocabulary lists each token once"),
        ((8, 8), "one short"), ((3, 7), "before padding"), ((3, 7), "special tokens"),
        # Padded to the running example's length, 10: a teacher's own example has another.
        pytest.param((10, 9), "running example's max_sequence_length", marks=pytest.mark.original_example),
    ])
    def test_each_mistake_is_named(self, answer, words):
        feedback = self.check(answer)
        assert feedback.status == "mistake" and words in feedback.message, feedback.message

    @pytest.mark.original_example
    def test_the_running_examples_vocab_size_is_named_where_it_was_copied(self):
        # The running example's shape is (10, 11); this corpus has 11 tokens in all, so 11 columns is also every
        # occurrence counted: the message says both, and says the running example's shape when the rows do too.
        for answer in ((7, 11), (8, 11)):
            feedback = self.check(answer, max_sequence_length=7)
            assert feedback.status == "mistake", feedback
            assert "11 columns is the running example's vocab_size" in feedback.message, feedback
            assert "the corpus's tokens counted each time they occur, without <PAD> and <UNK>" in feedback.message, feedback
        feedback = self.check((10, 11), max_sequence_length=7)
        assert feedback.status == "mistake" and "(10, 11), the running example's shape" in feedback.message, feedback
        assert "max_sequence_length = 7 tokens" in feedback.message and "each time" not in feedback.message, feedback
        # Another corpus, whose every occurrence is not 11: only the running example is named.
        feedback = exercises.check_one_hot_shape((4, 11), corpus=("a b c", "a b d"), sentence="a b", max_sequence_length=4)
        assert "the running example's vocab_size. Here the vocabulary" in feedback.message, feedback
        # 13, every occurrence with <PAD> and <UNK>, is not the running example's.
        feedback = self.check((7, 13), max_sequence_length=7)
        assert "each time it occurs" in feedback.message and "running example" not in feedback.message, feedback

    def test_the_full_stop_left_out_of_the_rows_is_named(self):
        # Padded to the longer sentence, 7 tokens: counting its 6 words leaves out the full stop.
        for answer in ((6, 9), (6, 8)):
            feedback = self.check(answer, max_sequence_length=7)
            assert feedback.status == "mistake" and "the full stop, is a token too" in feedback.message, feedback
        assert "full stop" not in self.check((6, 9)).message  # padded to 8, 6 rows is not the words of a sentence

    def test_rows_padded_to_the_shorter_sentence_are_named(self):
        # Padded to the longer sentence, 7 tokens: 4 rows is the shorter one's length.
        for answer in ((4, 9), (4, 11)):
            feedback = self.check(answer, max_sequence_length=7)
            assert feedback.status == "mistake" and "4 rows pads to the shorter sentence of the corpus: pad to the " \
                "longer one's 7 tokens" in feedback.message, feedback
        assert "shorter" not in self.check((4, 9)).message  # padded to 8, not the longer sentence's length
        feedback = exercises.check_one_hot_shape((2, 7), corpus=("a b", "a b c", "a b c d e"), sentence="a b c",
                                                 max_sequence_length=5)
        assert "2 rows pads to the shortest sentence of the corpus: pad to the longest one's 5" in feedback.message

    def test_an_unnamed_answer_says_what_each_side_counts_without_the_numbers(self):
        feedback = self.check((5, 20))
        assert feedback.status == "wrong" and "one row per token after padding" in feedback.message
        assert "one column per vocabulary entry" in feedback.message and not re.search(r"\b[89]\b", feedback.message)

    @pytest.mark.parametrize("junk", [None, "(8, 9)", 8, (8,), (8, 9, 1), (True, 9), [8, None], torch.zeros(8, 9)])
    def test_junk_is_answered_without_raising(self, junk):
        assert not self.check(junk).correct


class TestGradientColumn:
    """02's Exercise 1: the gradient of each row's first entry of W_E, for the loss X.sum()."""
    vocabulary = tokens.build_vocabulary(CORPUS)
    ids = vocabulary.ids(tokens.pad(tokens.tokenize("My friend is Paul"), max_sequence_length=L))

    def check(self, answer, ids=None):
        return exercises.check_gradient_column(answer, ids=self.ids if ids is None else ids, vocab_size=11)

    def gradient_autograd_finds(self, ids):
        W_E = torch.randn(11, 6, requires_grad=True)
        (torch.eye(11)[ids] @ W_E).sum().backward()
        return W_E.grad[:, 0]

    @pytest.mark.parametrize("sentence", ["My friend is Paul", "What is your name, Paul?", "My name is John",
                                          "my name is my name", "Paul"])
    def test_what_autograd_finds_is_accepted_in_any_list_like_form(self, sentence):
        ids = self.vocabulary.ids(tokens.pad(tokens.tokenize(sentence), max_sequence_length=L))
        gradient = self.gradient_autograd_finds(ids)
        for answer in (gradient, gradient.tolist(), [int(g) for g in gradient], tuple(gradient.tolist()), gradient.numpy()):
            assert self.check(answer, ids=ids).correct

    def test_the_slow_route_in_float32_and_a_list_of_0_d_tensors_are_accepted(self):
        # The loss's rise over a step of 0.01, in float32, lands near the count (5.99995); a comprehension of sums
        # gives 0-d tensors.
        counts = [6, 1, 1, 0, 1, 0, 0, 0, 0, 0, 1]
        rises = [float((torch.tensor(c, dtype=torch.float32) * 0.01) / 0.01) - 5e-5 * (c == 6) for c in counts]
        assert rises[0] == pytest.approx(5.99995) and self.check(rises).correct
        ids = torch.tensor(self.ids)
        assert self.check([(ids == r).sum() for r in range(11)]).correct
        assert self.check([torch.tensor(float(c)) for c in counts]).correct
        feedback = self.check([6.0000001, 1, 1, 0, 1, 0, 0, 0, 0, 0, 2])
        assert not feedback.correct and "Row 10: you said 2" in feedback.message, feedback.message

    def test_the_right_answer_says_what_the_gradient_counts(self):
        feedback = self.check([6, 1, 1, 0, 1, 0, 0, 0, 0, 0, 1])
        assert feedback.correct and "counts its uses" in feedback.message, feedback.message

    @pytest.mark.parametrize("answer,words", [
        ([1, 1, 1, 0, 1, 0, 0, 0, 0, 0, 1], "a row used more than once"),
        ([1] * 11, "gradient is 0"),
        ([0, 1, 1, 0, 1, 0, 0, 0, 0, 0, 1], "padding is a token too"),
        ([6, 0, 1, 0, 1, 0, 0, 0, 0, 0, 1], "becomes <UNK>, id 1"),
        ([0, 1, 2, 4, 10], "rows with a gradient"),
        ([0.06, 0.01, 0.01, 0, 0.01, 0, 0, 0, 0, 0, 0.01], "divided by the step"),
        ((0.06, 0.01, 0.01, 0.0, 0.01, 0.0, 0.0, 0.0, 0.0, 0.0, 0.01), "divided by the step"),
    ])
    def test_each_mistake_is_named(self, answer, words):
        feedback = self.check(answer)
        assert feedback.status == "mistake" and words in feedback.message, feedback.message

    def test_another_wrong_list_names_a_row_that_differs(self):
        feedback = self.check([6, 1, 1, 0, 1, 0, 0, 0, 0, 0, 2])
        assert feedback.status == "wrong" and "Row 10: you said 2" in feedback.message, feedback.message
        assert "got 3" in self.check([6, 1, 1]).message

    @pytest.mark.parametrize("answer", [[6, 1, 1, 0, 1, 0, 0, 0, 0, 0, 2], [7, 0, 1, 0, 1, 0, 0, 0, 0, 0, 1],
                                        [6, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0], [1, 1, 1, 0, 1, 0, 0, 0, 0, 0, 1],
                                        [0, 1, 1, 0, 1, 0, 0, 0, 0, 0, 1], [1] * 11])
    def test_a_wrong_list_names_a_wrong_row_and_the_rule_but_never_a_right_value(self, answer):
        # Telling a row's right value would let a learner walk to the answer row by row.
        message = self.check(answer).message
        assert not re.search(r"\b6\b|up once|\d times|\[0, 1, 2, 4, 10\]", message), message

    def test_the_count_of_wrong_rows_agrees_with_its_verb(self):
        assert "1 of the 11 numbers differs. Row 10: you said 2. Its gradient is the number of times the ids look row " \
               "10 up." in self.check([6, 1, 1, 0, 1, 0, 0, 0, 0, 0, 2]).message
        assert "2 of the 11 numbers differ. Row 0: you said 7." in self.check([7, 0, 1, 0, 1, 0, 0, 0, 0, 0, 1]).message

    def test_the_sign_slip_and_a_column_not_flattened_are_named(self):
        feedback = self.check([-6, -1, -1, 0, -1, 0, 0, 0, 0, 0, -1])
        assert feedback.status == "mistake" and "sign flipped" in feedback.message, feedback.message
        column = torch.tensor([6.0, 1, 1, 0, 1, 0, 0, 0, 0, 0, 1])
        for answer in (column[None], column[:, None], column[:, None].numpy()):
            feedback = self.check(answer)
            assert not feedback.correct and "Flatten it" in feedback.message, feedback.message

    def test_the_whole_gradient_is_told_to_take_column_0(self):
        whole = torch.tensor([6.0, 1, 1, 0, 1, 0, 0, 0, 0, 0, 1])[:, None].repeat(1, 6)
        feedback = self.check(whole)
        assert feedback.status == "wrong" and "take its column 0, [:, 0]" in feedback.message, feedback.message
        assert self.check(whole[:, 0]).correct
        assert "column 0" not in self.check(whole[0]).message  # row 0, 6 numbers: a count, not a column

    @pytest.mark.parametrize("junk", [None, "6, 1", 6, [6, None], [[6]], torch.zeros(11, 2), [float("nan")] * 11,
                                      [True] * 11, {0: 6}])
    def test_junk_is_answered_without_raising(self, junk):
        assert not self.check(junk).correct


class TestRowsChanged:
    """02's Exercise 2: how many rows of W_E one AdamW step changes, with padding_idx and weight decay. The checker
    takes the step itself, on a copy, so that the notebook takes it only after the prediction."""

    vocabulary = tokens.build_vocabulary(CORPUS)
    ids = vocabulary.ids(tokens.pad(tokens.tokenize("My name is John"), max_sequence_length=L))

    def lookup(self):
        before = torch.randn(self.vocabulary.vocab_size, 6, generator=torch.Generator().manual_seed(0))
        table = torch.nn.Embedding.from_pretrained(before.clone(), freeze=False, padding_idx=0)
        table(torch.tensor(self.ids)).sum().backward()
        return table

    def check(self, answer, lookup=None):
        return exercises.check_rows_changed(answer, lookup=lookup or self.lookup(), lr=0.1, ids=self.ids)

    def test_weight_decay_changes_every_row_and_each_right_answer_is_accepted(self):
        table = self.lookup()
        before = table.weight.detach().clone()
        for answer in (11, 11.0, torch.tensor(11), list(range(11)), set(range(11))):
            assert self.check(answer, table).correct, answer
        assert torch.equal(table.weight.detach(), before)  # the step was taken on a copy
        torch.optim.AdamW(table.parameters(), lr=0.1).step()  # the notebook's own step, after the checker
        assert (table.weight.detach() != before).any(dim=1).all()

    def test_without_weight_decay_only_the_rows_with_a_gradient_change(self, monkeypatch):
        adamw = torch.optim.AdamW
        monkeypatch.setattr(torch.optim, "AdamW", lambda params, **kwargs: adamw(params, weight_decay=0.0, **kwargs))
        assert self.check(4).correct and "changed 4 of the 11 rows" in self.check(4).message
        assert self.check([2, 3, 4, 5]).correct
        assert not self.check(11).correct

    def test_the_right_answer_points_to_the_run_and_no_message_names_what_the_run_teaches(self):
        # The stem gives weight_decay's value but not what it does to a row with no gradient, which the run after the
        # prediction teaches: no message says it first.
        # The run and the text below it say that every row changed, so the right answer's message does not repeat it.
        for answer in (11, [11], list(range(11))):
            message = self.check(answer).message
            assert message.startswith("Correct. The run below shows why."), message
        for answer in (11, 4, 5, [0, 2, 3, 4, 5], 1, [0], 7, 10, list(range(1, 11)), 9, 0, 12):
            message = self.check(answer).message
            assert "decay" not in message.lower() and "'s included" not in message, (answer, message)

    def test_a_table_without_a_gradient_is_skipped_as_adamw_skips_it(self):
        table = torch.nn.Embedding(5, 3)
        assert exercises.check_rows_changed(0, lookup=table, lr=0.1, ids=[0, 1]).correct
        assert "changed 0 of the 5" in exercises.check_rows_changed(5, lookup=table, lr=0.1, ids=[0, 1]).message
        assert table.weight.grad is None
        before = table.weight.detach().clone()
        torch.optim.AdamW(table.parameters(), lr=0.1).step()  # what the checker says: PyTorch skips it
        assert torch.equal(table.weight.detach(), before)
        table.weight.grad = torch.zeros_like(table.weight)  # an all-zero gradient is decayed
        assert exercises.check_rows_changed(5, lookup=table, lr=0.1, ids=[0, 1]).correct

    @pytest.mark.parametrize("answer,words", [
        (4, "rows with a gradient"), (5, "<PAD> included"), ([0, 2, 3, 4, 5], "<PAD> included"),
        (1, "not the only one"), (7, "gradient is all zeros"), (10, "all but the <PAD> row"),
        (list(range(1, 11)), "all but the <PAD> row"),
    ])
    def test_each_mistake_is_named(self, answer, words):
        feedback = self.check(answer)
        assert feedback.status == "mistake" and words in feedback.message, feedback.message

    @pytest.mark.parametrize("answer,words", [(9, "You said 9"), ("eleven", "whole number"), ([0, 1], "listed 2")])
    def test_other_answers_are_wrong_and_never_raise(self, answer, words):
        feedback = self.check(answer)
        assert feedback.status == "wrong" and words in feedback.message, feedback.message
        assert self.check(None).status == "not attempted"

    @pytest.mark.parametrize("answer", [[11], (11,), [11.0]])
    def test_a_count_in_a_list_is_read_as_a_count_since_no_row_has_that_number(self, answer):
        assert self.check(answer).correct, answer
        feedback = self.check([12])
        assert feedback.status == "wrong" and "You said 12" in feedback.message, feedback.message
        assert self.check((4,)).status == "wrong" and self.check([4]).status == "wrong"

    @pytest.mark.parametrize("answer", [(4,), [4], [1]])
    def test_one_listed_row_that_is_not_pad_is_not_called_the_pad_row(self, answer):
        feedback = self.check(answer)
        assert "<PAD>" not in feedback.message, feedback.message
        assert f"listed 1 row, [{answer[0]}]" in feedback.message and "plain number" in feedback.message
        assert self.check([0]).status == "mistake" and "not the only one" in self.check([0]).message

    def test_a_list_is_named_by_its_rows_not_by_its_length(self):
        assert self.check([2, 3, 4, 5]).status == "mistake"  # the rows with a gradient
        for answer in ([0, 1, 6, 7], list(range(7))):  # as many rows as a mistake, but other rows
            feedback = self.check(answer)
            assert feedback.status == "wrong" and f"listed {len(answer)} rows" in feedback.message, feedback.message

    def test_what_is_not_a_lookup_is_refused_by_name(self):
        with pytest.raises(TypeError, match="lookup"):
            exercises.check_rows_changed(11, lookup=torch.zeros(11, 6), lr=0.1, ids=self.ids)
        with pytest.raises(ValueError, match="lr"):
            exercises.check_rows_changed(11, lookup=self.lookup(), lr=-0.1, ids=self.ids)


def test_the_gradient_column_names_the_ids_given_instead():
    ids = [2, 10, 4, 1, 0, 0, 0, 0, 0, 0]
    feedback = exercises.check_gradient_column(ids, ids=ids, vocab_size=11)
    assert feedback.status == "mistake" and "Those are the ids, one per position" in feedback.message, feedback


def test_the_counts_of_the_notebooks_own_sentence_are_named():
    # 02's Exercise 1 asks about another sentence: counting the running sentence's ids is the likeliest slip.
    vocabulary = tokens.build_vocabulary(CORPUS)
    running = vocabulary.ids(tokens.pad(tokens.tokenize("My name is John"), max_sequence_length=L))
    friend = vocabulary.ids(tokens.pad(tokens.tokenize("My friend is Paul"), max_sequence_length=L))
    slip = [running.count(k) for k in range(11)]
    feedback = exercises.check_gradient_column(slip, ids=friend, vocab_size=11, other_ids=running)
    assert feedback.status == "mistake" and "the sentence the notebook follows" in feedback.message, feedback.message
    right = [friend.count(k) for k in range(11)]
    for answer in (right, torch.tensor(right, dtype=torch.float32), np.array(right), tuple(float(c) for c in right)):
        assert exercises.check_gradient_column(answer, ids=friend, vocab_size=11, other_ids=running).correct, answer
    # Without other_ids, the same slip gets the generic message, which is still true.
    assert "differ" in exercises.check_gradient_column(slip, ids=friend, vocab_size=11).message
    with pytest.raises(TypeError, match="other_ids"):
        exercises.check_gradient_column(right, ids=friend, vocab_size=11, other_ids="my name")


def test_an_unknown_comma_missed_is_named_without_the_count():
    # 02's Exercise 1: counting only Paul as <UNK> (the comma missed), or the comma as one more <PAD>, is the likeliest slip.
    vocabulary = tokens.build_vocabulary(CORPUS)
    question = vocabulary.ids(tokens.pad(tokens.tokenize("What is your name, Paul?"), max_sequence_length=L))
    right = [question.count(k) for k in range(11)]
    assert right[1] == 2 and exercises.check_gradient_column(right, ids=question, vocab_size=11).correct
    for pad_extra in (0, 1):
        slip = [right[0] + pad_extra, 1] + right[2:]
        feedback = exercises.check_gradient_column(slip, ids=question, vocab_size=11)
        assert feedback.status == "mistake" and "commas included" in feedback.message, feedback.message
        assert not re.search(r"\b2\b", feedback.message.split(" (progress()")[0]), feedback.message


def test_a_row_of_its_own_for_an_unknown_word_is_named():
    # 02's Exercise 1: giving Paul a twelfth row, as if it were in the vocabulary, is named as such.
    vocabulary = tokens.build_vocabulary(CORPUS)
    friend = vocabulary.ids(tokens.pad(tokens.tokenize("My friend is Paul"), max_sequence_length=L))
    feedback = exercises.check_gradient_column([6, 0, 1, 0, 1, 0, 0, 0, 0, 0, 1, 1], ids=friend, vocab_size=11)
    assert feedback.status == "mistake" and "<UNK>'s row" in feedback.message, feedback.message
