"""The checkers of two bugs of batches, fed the answers a learner gives: a batch-first batch through a module built for
(seq, batch, d_model), and a packed row attended to without a document mask (a function of the lengths)."""

import copy
import re

import pytest
import torch

from posenc import attention, exercises


class TestBatchFirst:
    torch.manual_seed(0)
    module = torch.nn.MultiheadAttention(6, 1, bias=False)  # batch_first=False, PyTorch's default
    x = torch.randn(2, 4, 6, generator=torch.Generator().manual_seed(1))  # batch first: 2 sequences of 4 tokens

    def check(self, answer, module=None):
        return exercises.check_batch_first(answer, module=module or self.module, x=self.x)

    def run(self, x):
        with torch.no_grad():
            return self.module(x, x, x)

    def test_every_fix_is_right(self):
        seq_first = self.x.transpose(0, 1)
        transposed = self.run(seq_first)[0].transpose(0, 1)
        assert self.check(transposed).correct
        # 06's prompt no longer says the default layout: the feedback on a right answer does.
        assert "reads (seq, batch, d_model) unless" in self.check(transposed).message
        assert self.check(transposed.tolist()).correct  # a list of lists holds the same numbers
        assert self.check(self.run(seq_first)[0].transpose(0, 1).contiguous().double()).correct
        # A module of its own with batch_first=True and this module's weights.
        batch_first = torch.nn.MultiheadAttention(6, 1, bias=False, batch_first=True)
        batch_first.load_state_dict(self.module.state_dict())
        with torch.no_grad():
            output, weights = batch_first(self.x, self.x, self.x)
        assert self.check(output).correct
        # The (output, weights) pair as the module returns it: the output is in it.
        feedback = self.check((output, weights))
        assert feedback.correct and "output is the first" in feedback.message

    def test_the_module_set_to_batch_first_on_the_spot_is_right_too(self):
        module = torch.nn.MultiheadAttention(6, 1, bias=False)
        module.load_state_dict(self.module.state_dict())
        module.batch_first = True
        with torch.no_grad():
            output = module(self.x, self.x, self.x)[0]
        # The checker reads the module's weights, not its batch_first: this fix is right.
        assert self.check(output, module=module).correct

    def test_each_mistake_is_named(self):
        seq_first = self.x.transpose(0, 1)
        bug = self.run(self.x)[0]
        named = {"the bug's output": bug, "token t of every sequence": bug,
                 "turn the output back": self.run(seq_first)[0],
                 "Only the output was transposed": bug.transpose(0, 1), "x itself": self.x}
        for words, answer in named.items():
            feedback = self.check(answer)
            assert feedback.status == "mistake" and words in feedback.message, (words, feedback.message)
        # The buggy output handed in unchanged is told what is wrong, not given the fix.
        assert not re.search(r"transpose|batch_first=True", self.check(bug).message, re.I), self.check(bug).message
        # A new module, with new random weights: the right shape, other numbers.
        other = torch.nn.MultiheadAttention(6, 1, bias=False, batch_first=True)
        with torch.no_grad():
            feedback = self.check(other(self.x, self.x, self.x)[0])
        assert feedback.status == "wrong" and "new random parameters" in feedback.message

    def test_an_output_reshaped_instead_of_transposed_is_named(self):
        seq_first = self.x.transpose(0, 1)
        output = self.run(seq_first)[0]
        feedback = self.check(output.reshape(2, 4, 6))
        assert feedback.status == "mistake" and "reshaped" in feedback.message, feedback.message
        assert "mixes the sequences" in feedback.message and "random parameters" not in feedback.message
        assert self.check(output.transpose(0, 1)).correct  # transposed back: right
        reshaped_in = self.run(self.x.reshape(4, 2, 6))[0].transpose(0, 1)
        feedback = self.check(reshaped_in)
        assert feedback.status == "mistake" and "input was reshaped" in feedback.message, feedback.message
        bo = self.run(self.x)[0]  # the module on x as it is, then transposed and reshaped
        feedback = self.check(bo.transpose(0, 1).reshape(2, 4, 6))
        assert feedback.status == "mistake" and "reshaped" in feedback.message, feedback.message
        assert "random parameters" not in feedback.message

    @pytest.mark.parametrize("answer", [None, "output", 3.0, torch.zeros(3), torch.full((2, 4, 6), float("nan")),
                                        (None, None), [[1, 2], [3]], torch.nn.Identity()])
    def test_junk_is_answered_without_raising(self, answer):
        feedback = self.check(answer)
        assert not feedback.correct and feedback.message

    def test_a_bad_exercise_raises(self):
        with pytest.raises(TypeError, match="module"):
            exercises.check_batch_first(None, module=torch.nn.Linear(6, 6), x=self.x)
        with pytest.raises(ValueError, match="x"):
            exercises.check_batch_first(None, module=self.module, x=torch.randn(2, 4, 5))
        with pytest.raises(ValueError, match="x"):
            exercises.check_batch_first(None, module=self.module, x=torch.randn(4, 6))


class TestSequenceSize:
    """06's Exercise 2: how many tokens per sequence the module read. The checker runs the module itself."""

    torch.manual_seed(0)
    module = torch.nn.MultiheadAttention(6, 1, bias=False)  # batch_first=False, PyTorch's default
    x = torch.randn(2, 4, 6, generator=torch.Generator().manual_seed(1))  # batch first: 2 sequences of 4 tokens

    def check(self, answer):
        return exercises.check_sequence_size(answer, module=self.module, x=self.x)

    def test_the_key_count_is_right_in_any_whole_form(self):
        with torch.no_grad():
            weights = self.module(self.x, self.x, self.x)[1]  # (4, 2, 2): 4 sequences of 2 tokens, as the module read x
        for answer in (2, 2.0, torch.tensor(2), weights.shape[-1]):
            feedback = self.check(answer)
            assert feedback.correct and "4 sequences of 2 tokens" in feedback.message, feedback.message

    def test_each_mistake_is_named(self):
        meant = self.check(4)
        assert meant.status == "mistake" and "the length we meant" in meant.message, meant.message
        width = self.check(6)
        assert width.status == "mistake" and "d_model" in width.message, width.message
        other = self.check(3)
        assert other.status == "wrong" and "Got 3; expected 2" in other.message, other.message

    def test_a_module_that_reads_the_batch_right_expects_the_length_meant(self):
        batch_first = torch.nn.MultiheadAttention(6, 1, bias=False, batch_first=True)
        assert exercises.check_sequence_size(4, module=batch_first, x=self.x).correct

    def test_the_checker_leaves_the_module_and_x_as_they_were(self):
        module = torch.nn.MultiheadAttention(6, 1, bias=False, dropout=0.5)  # in training mode, with dropout
        before, x = copy.deepcopy(module.state_dict()), self.x.clone()
        for _ in range(3):
            assert exercises.check_sequence_size(2, module=module, x=self.x).correct
        assert module.training and all(torch.equal(before[k], v) for k, v in module.state_dict().items())
        assert torch.equal(x, self.x)

    @pytest.mark.parametrize("answer", [None, "two", 2.5, torch.zeros(3), [2], torch.nn.Identity()])
    def test_junk_is_answered_without_raising(self, answer):
        feedback = self.check(answer)
        assert not feedback.correct and feedback.message

    def test_a_bad_exercise_raises(self):
        with pytest.raises(TypeError, match="module"):
            exercises.check_sequence_size(None, module=torch.nn.Linear(6, 6), x=self.x)
        with pytest.raises(ValueError, match="x"):
            exercises.check_sequence_size(None, module=self.module, x=torch.randn(4, 6))
        with pytest.raises(ValueError, match="x"):
            exercises.check_sequence_size(None, module=self.module, x=torch.randn(2, 4, 5))


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

