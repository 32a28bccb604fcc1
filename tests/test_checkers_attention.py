"""The checker of shuffled attention weights, fed the wrong answers a learner gives; and the facts 09 rests on: without
a causal mask, a whole encoder is permutation-equivariant; with one, a word's output depends on the words up to it, in
any order."""

import pytest
import torch

from posenc import attention, exercises


class TestPermutedWeights:
    weights = torch.softmax(torch.randn(4, 4, generator=torch.Generator().manual_seed(0)), dim=-1)

    def check(self, answer, order):
        return exercises.check_permuted_weights(answer, weights=self.weights, order=order)

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


def test_with_a_causal_mask_a_words_output_depends_on_the_set_of_words_up_to_it():
    # 09's Exercise 2: swap the first two words and only the rows of the words after both keep their output.
    x = torch.randn(5, 8, generator=torch.Generator().manual_seed(0))
    weights = attention.projection_weights(d_model=8, seed=0)
    swap = torch.tensor([1, 0, 2, 3, 4])
    plain, _ = attention.self_attention(x, weights, causal=True)
    swapped, _ = attention.self_attention(x[swap], weights, causal=True)
    same = [bool(torch.allclose(plain[i], swapped[swap][i], atol=1e-6)) for i in range(5)]
    assert same == [False, False, True, True, True]
