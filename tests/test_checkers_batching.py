"""The checker of a bug of batches, fed the answers a learner gives: a packed row attended to without a document mask
(a function of the lengths)."""


import json
import math
import re
from pathlib import Path

import pytest
import torch

from posenc import attention, builder, exercises


class TestDocumentMask:
    """07's Exercise 3: a function of the lengths, run on the checker's own lengths."""

    @staticmethod
    def document(lengths):
        return torch.repeat_interleave(torch.arange(len(lengths)), torch.tensor(lengths))

    @classmethod
    def right(cls, lengths):
        document = cls.document(lengths)
        return (document[:, None] == document[None, :]) & attention.causal_mask(sequence_length=sum(lengths))

    def test_every_right_form_is_right(self):
        for function in (self.right,
                         lambda lengths: self.right(lengths)[None],  # a leading dimension of 1
                         lambda lengths: self.right(lengths).tolist(),
                         lambda lengths: torch.block_diag(*(torch.ones(n, n) for n in lengths)).tril().bool()):
            feedback = exercises.check_document_mask(function)
            assert feedback.correct, feedback
        assert "new cases" in exercises.check_document_mask(self.right).message

    def test_a_mask_of_numbers_is_named(self):
        """PyTorch adds a float 0/1 mask to the scores, so it would hide nothing; it refuses an integer one."""
        for function, words in ((lambda lengths: self.right(lengths).float(), "1.0 and 0.0 would hide nothing"),
                                (lambda lengths: self.right(lengths).float()[None], "adds a float mask to the scores"),
                                (lambda lengths: self.right(lengths).int(), "refuse an integer mask")):
            feedback = exercises.check_document_mask(function)
            assert feedback.status == "mistake" and words in feedback.message and ".bool()" in feedback.message, feedback
        feedback = exercises.check_document_mask(lambda lengths: self.right(lengths).int().tolist())
        assert feedback.status == "mistake" and "integers 0 and 1" in feedback.message and ".bool()" not in feedback.message
        q = torch.randn(1, 1, 4, 2)
        mask = self.right([2, 2])
        values = torch.eye(4)[None, None]  # the output is the weights themselves
        float_weights = torch.nn.functional.scaled_dot_product_attention(q, q, values, attn_mask=mask.float())
        assert bool((float_weights > 0).all())  # the float mask hides no key
        bool_weights = torch.nn.functional.scaled_dot_product_attention(q, q, values, attn_mask=mask)
        assert torch.equal(bool_weights[0, 0] > 0, mask)
        with pytest.raises(RuntimeError):
            torch.nn.functional.scaled_dot_product_attention(q, q, q, attn_mask=mask.int())
        with pytest.raises(RuntimeError):
            torch.zeros(4, 4).masked_fill(mask.int(), 0.0)

    def test_an_additive_mask_is_named(self):
        def additive(lengths):
            return torch.zeros(sum(lengths), sum(lengths)).masked_fill(~self.right(lengths), float("-inf"))

        feedback = exercises.check_document_mask(additive)
        assert feedback.status == "mistake" and "additive mask" in feedback.message, feedback

    def test_the_package_is_refused(self):
        for function in (lambda lengths: attention.packed_mask(attention.document_ids_from_lengths(lengths)),
                         lambda lengths: self.right(lengths) & attention.packed_mask(self.document(lengths))):
            feedback = exercises.check_document_mask(function)
            assert feedback.status == "mistake" and "packed_mask" in feedback.message, feedback

    def test_the_notebooks_own_mask_is_not_a_function_for_new_lengths(self):
        notebook_mask = self.right([4, 5, 2])
        assert "Expected a function" in exercises.check_document_mask(notebook_mask).message
        feedback = exercises.check_document_mask(lambda lengths: notebook_mask)
        assert feedback.status == "wrong" and "(11, 11)" in feedback.message and "argument" in feedback.message

    @pytest.mark.parametrize("words,build", [
        ("causal mask alone", lambda t, n: attention.causal_mask(sequence_length=sum(n))),
        ("without the causal triangle", lambda t, n: t.document(n)[:, None] == t.document(n)[None, :]),
        ("Combine the blocks with the causal mask using &", lambda t, n: t.document(n)[:, None] == t.document(n)[None, :]),
        ("Inverted", lambda t, n: ~t.right(n)),
        ("diagonal is hidden", lambda t, n: t.right(n) & ~torch.eye(sum(n), dtype=torch.bool)),
        ("wrong way", lambda t, n: t.right(n).T),
        ("No mask", lambda t, n: torch.ones(sum(n), sum(n), dtype=torch.bool)),
        ("such as weights", lambda t, n: torch.softmax(torch.zeros(sum(n), sum(n)).masked_fill(~t.right(n), -1e9), -1)),
    ])
    def test_each_mistake_is_named(self, words, build):
        feedback = exercises.check_document_mask(lambda lengths: build(self, lengths))
        assert feedback.status == "mistake" and words in feedback.message, feedback.message

    def test_the_first_likely_try_is_not_handed_the_solution(self):
        feedback = exercises.check_document_mask(lambda lengths: attention.causal_mask(sequence_length=sum(lengths)))
        assert feedback.status == "mistake" and "[:, None]" not in feedback.message and "==" not in feedback.message

    def test_another_wrong_mask_names_an_entry(self):
        def one_off(lengths):
            mask = self.right(lengths).clone()
            mask[-1, 0] = True
            return mask
        feedback = exercises.check_document_mask(one_off)
        assert feedback.status == "wrong" and "query 8, key 0 is True, expected False" in feedback.message, feedback

    def test_an_error_inside_the_function_is_not_blamed_on_its_parameters(self):
        def positional(lengths):  # one parameter; the TypeError comes from the package's keyword-only causal_mask
            return (self.document(lengths)[:, None] == self.document(lengths)[None, :]) & attention.causal_mask(sum(lengths))

        feedback = exercises.check_document_mask(positional)
        assert feedback.status == "wrong" and "one parameter" not in feedback.message, feedback.message
        assert "causal_mask(sequence_length=n)" in feedback.message, feedback.message
        feedback = exercises.check_document_mask(lambda lengths: torch.ones(2, 2).tril(3, 4))
        assert "one parameter" not in feedback.message and "raised TypeError" in feedback.message, feedback.message
        feedback = exercises.check_document_mask(lambda lengths, n: None)
        assert "one parameter" in feedback.message, feedback.message

    @pytest.mark.parametrize("answer", [None, "mask", 1.0, torch.zeros(11, 11, dtype=torch.bool), torch.nn.Identity(),
                                        lambda: None, lambda lengths: None, lambda lengths: 1 / 0,
                                        lambda lengths: [[1, 2], [3]], lambda lengths: torch.full((9, 9), float("nan"))])
    def test_junk_is_answered_without_raising(self, answer):
        feedback = exercises.check_document_mask(answer)
        assert not feedback.correct and feedback.message

    def test_the_leak_closes_under_a_right_mask_and_waits_otherwise(self, capsys):
        # 07's reveal after Exercise 3: the packed row's second document's first token, 0 % on the first document.
        lengths = [3, 2, 4]
        scores = torch.randn(9, 9, generator=torch.Generator().manual_seed(0))
        for answer in (self.right, lambda n: self.right(n).int().tolist()):
            exercises.show_document_leak(answer, scores=scores, lengths=lengths)
            assert capsys.readouterr().out == "with your mask, on the first document: 0 %\n"
        for answer in (None, lambda n: attention.causal_mask(sequence_length=sum(n)), lambda n: 1 / 0, lambda: None,
                       lambda n: "mask", lambda n: torch.ones(2, 2)):
            exercises.show_document_leak(answer, scores=scores, lengths=lengths)
            assert capsys.readouterr().out == "This shows once my_document_mask([3, 2, 4]) returns the right mask.\n"



class TestSmallerModelWordRow:
    """06's Exercise 2: a word row of std 0.02 times sqrt(d_model) against a PE row. The prompt names the ratio's
    direction, so a learner who computes it the other way round is not marked wrong for a right reasoning."""

    @staticmethod
    def lengths(width):
        generator = torch.Generator().manual_seed(0)
        word = (torch.randn(1000, width, generator=generator) * 0.02 * math.sqrt(width)).norm(dim=1).mean().item()
        position = builder.sinusoidal_encoding(max_sequence_length=1000, d_model=width).norm(dim=1).mean().item()
        return word, position

    def test_the_answer_key_is_what_the_numbers_give(self):
        ratios = []
        for width in (128, 512, 2048):
            word, position = self.lengths(width)
            assert word == pytest.approx(0.02 * width, rel=0.02) and position == pytest.approx(math.sqrt(width / 2))
            ratios.append(word / position)
        assert ratios[0] < 1 and ratios == sorted(ratios)  # shorter at 128, and word / PE grows: choice (b)
        assert exercises.check_smaller_model_word_row("b").correct
        assert exercises.check_smaller_model_word_row(" B ").correct

    @pytest.mark.parametrize("choice", ["a", "c", "d"])
    def test_each_wrong_choice_is_named_and_explained(self, choice):
        feedback = exercises.check_smaller_model_word_row(choice)
        assert feedback.status == "mistake" and f"Not {choice!r}" in feedback.message and "The answer is 'b'" in feedback.message

    def test_the_one_who_reads_the_ratio_upside_down_is_told_which_way_it_goes(self):
        assert "the question asks about word / PE" in exercises.check_smaller_model_word_row("c").message
        assert "shorter, not longer" in exercises.check_smaller_model_word_row("d").message
        assert "restores the length only when W_E starts at std 1/sqrt" in exercises.check_smaller_model_word_row("a").message

    def test_the_reveal_waits_for_a_judged_prediction_then_prints_the_lengths(self, capsys):
        exercises.show_word_and_pe_rows(None)
        assert "word row" not in capsys.readouterr().out
        exercises.check_smaller_model_word_row("b")
        exercises.show_word_and_pe_rows("b", widths=(128,))
        line = capsys.readouterr().out.strip()
        assert line == "d_model =  128: word row  2.56, PE row  8.0, word / PE 0.32", line

    def test_the_prompt_says_which_length_is_on_top_and_crosses_the_two_halves(self):
        path = Path(__file__).parents[1] / "notebooks" / "06_batches_and_masks.ipynb"
        cells = ["".join(cell["source"]) for cell in json.loads(path.read_text())["cells"]]
        (prompt,) = [cell for cell in cells if cell.startswith("### Exercise 2")]
        assert re.search(r"word( row length)? / `PE`", prompt), prompt  # the word row on top, as the checker reads it
        options = [line for line in prompt.splitlines() if line.startswith("* (")]
        assert {tuple(o.split(") ", 1)[1].split(", and the ratio ")) for o in options} == {
            ("longer", "grows"), ("shorter", "grows"), ("shorter", "falls"), ("longer", "falls")}

    def test_odd_answers_do_not_raise(self):
        for answer in (None, 2, "e", ["b"]):
            assert exercises.check_smaller_model_word_row(answer).status in {"not attempted", "wrong"}
