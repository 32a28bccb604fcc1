"""The checkers of two bugs of batches, fed the answers a learner gives: a batch-first batch through a module built for
(seq, batch, d_model), and a packed row attended to without a document mask."""

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
        named = {"the bug's output": bug, "Transpose the input to (seq, batch, d_model)": bug,
                 "turn the output back": self.run(seq_first)[0],
                 "Only the output was transposed": bug.transpose(0, 1), "x itself": self.x}
        for words, answer in named.items():
            feedback = self.check(answer)
            assert feedback.status == "mistake" and words in feedback.message, (words, feedback.message)
        # A new module, with new random weights: the right shape, other numbers.
        other = torch.nn.MultiheadAttention(6, 1, bias=False, batch_first=True)
        with torch.no_grad():
            feedback = self.check(other(self.x, self.x, self.x)[0])
        assert feedback.status == "wrong" and "new random weights" in feedback.message

    def test_an_output_reshaped_instead_of_transposed_is_named(self):
        seq_first = self.x.transpose(0, 1)
        output = self.run(seq_first)[0]
        feedback = self.check(output.reshape(2, 4, 6))
        assert feedback.status == "mistake" and "reshaped" in feedback.message, feedback.message
        assert "mixes the sequences" in feedback.message and "random weights" not in feedback.message
        assert self.check(output.transpose(0, 1)).correct  # transposed back: right
        reshaped_in = self.run(self.x.reshape(4, 2, 6))[0].transpose(0, 1)
        feedback = self.check(reshaped_in)
        assert feedback.status == "mistake" and "input was reshaped" in feedback.message, feedback.message
        bo = self.run(self.x)[0]  # the module on x as it is, then transposed and reshaped
        feedback = self.check(bo.transpose(0, 1).reshape(2, 4, 6))
        assert feedback.status == "mistake" and "reshaped" in feedback.message, feedback.message
        assert "random weights" not in feedback.message

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


class TestPackedWeights:
    lengths = [4, 5, 2]
    scores = torch.randn(11, 11, generator=torch.Generator().manual_seed(0))
    document = attention.document_ids_from_lengths(lengths)
    same = document[:, None] == document[None, :]
    causal = torch.ones(11, 11, dtype=torch.bool).tril()
    visible = same & causal

    def check(self, answer):
        return exercises.check_packed_weights(answer, scores=self.scores, lengths=self.lengths)

    def softmax(self, keep, fill=float("-inf"), dim=-1):
        return torch.softmax(self.scores.masked_fill(~keep, fill), dim=dim)

    def test_every_right_form_is_right(self):
        assert self.check(self.softmax(self.visible)).correct
        assert self.check(attention.attention_weights(self.scores, mask=attention.packed_mask(self.document))).correct
        assert self.check(self.softmax(self.visible).double().tolist()).correct
        # The other way to say it: the causal weights renormalised over the query's own document.
        causal = self.softmax(self.causal) * self.same
        assert self.check(causal / causal.sum(dim=-1, keepdim=True)).correct

    @pytest.mark.parametrize("words,build", [
        ("causal mask alone", lambda t: t.softmax(t.causal)),
        ("No mask at all", lambda t: torch.softmax(t.scores, dim=-1)),
        ("without the causal triangle", lambda t: t.softmax(t.same)),
        ("diagonal is hidden", lambda t: t.softmax(t.visible & ~torch.eye(11, dtype=torch.bool))),
        ("after the softmax", lambda t: t.softmax(t.causal) * t.visible),
        ("after the softmax", lambda t: torch.softmax(t.scores, dim=-1) * t.visible),
        ("not -inf", lambda t: t.softmax(t.visible, fill=0.0)),
        ("inverted", lambda t: t.softmax(~t.visible)),
        ("dim=-2", lambda t: t.softmax(t.visible, dim=-2)),
        ("the right mask, not the weights", lambda t: t.visible),
        ("the right mask, not the weights", lambda t: t.visible.int()),
    ])
    def test_each_mistake_is_named(self, words, build):
        feedback = self.check(build(self))
        assert feedback.status == "mistake" and words in feedback.message, feedback.message

    @pytest.mark.parametrize("answer", [None, "weights", 1.0, torch.zeros(11), torch.zeros(11, 11, dtype=torch.bool),
                                        torch.full((11, 11), float("nan")), [[1, 2], [3]], torch.nn.Identity()])
    def test_junk_is_answered_without_raising(self, answer):
        feedback = self.check(answer)
        assert not feedback.correct and feedback.message

    def test_a_bad_exercise_raises(self):
        with pytest.raises(ValueError, match="scores"):
            exercises.check_packed_weights(None, scores=torch.randn(10, 10), lengths=self.lengths)
        with pytest.raises(TypeError, match="lengths"):
            exercises.check_packed_weights(None, scores=self.scores, lengths=11)
