"""The checker of a bug of batches, fed the answers a learner gives: a packed row attended to without a document mask
(a function of the lengths)."""


import pytest
import torch

from posenc import attention, exercises


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
                         lambda lengths: self.right(lengths).int(),  # 1 = may look
                         lambda lengths: self.right(lengths).float()[None],  # a leading dimension of 1
                         lambda lengths: self.right(lengths).tolist(),
                         lambda lengths: torch.block_diag(*(torch.ones(n, n) for n in lengths)).tril().bool()):
            feedback = exercises.check_document_mask(function)
            assert feedback.correct, feedback
        assert "new cases" in exercises.check_document_mask(self.right).message

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
        ("Inverted", lambda t, n: ~t.right(n)),
        ("diagonal is hidden", lambda t, n: t.right(n) & ~torch.eye(sum(n), dtype=torch.bool)),
        ("wrong way", lambda t, n: t.right(n).T),
        ("No mask", lambda t, n: torch.ones(sum(n), sum(n), dtype=torch.bool)),
        ("such as weights", lambda t, n: torch.softmax(torch.zeros(sum(n), sum(n)).masked_fill(~t.right(n), -1e9), -1)),
    ])
    def test_each_mistake_is_named(self, words, build):
        feedback = exercises.check_document_mask(lambda lengths: build(self, lengths))
        assert feedback.status == "mistake" and words in feedback.message, feedback.message

    def test_another_wrong_mask_names_an_entry(self):
        def one_off(lengths):
            mask = self.right(lengths).clone()
            mask[-1, 0] = True
            return mask
        feedback = exercises.check_document_mask(one_off)
        assert feedback.status == "wrong" and "query 8, key 0 is True, expected False" in feedback.message, feedback

    @pytest.mark.parametrize("answer", [None, "mask", 1.0, torch.zeros(11, 11, dtype=torch.bool), torch.nn.Identity(),
                                        lambda: None, lambda lengths: None, lambda lengths: 1 / 0,
                                        lambda lengths: [[1, 2], [3]], lambda lengths: torch.full((9, 9), float("nan"))])
    def test_junk_is_answered_without_raising(self, answer):
        feedback = exercises.check_document_mask(answer)
        assert not feedback.correct and feedback.message

