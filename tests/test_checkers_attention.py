"""The checker of shuffled attention weights, fed the wrong answers a learner gives; and the fact it rests on: without
a causal mask, a whole encoder is permutation-equivariant."""

import json
from pathlib import Path

import pytest
import torch

from posenc import exercises

ROOT = Path(__file__).resolve().parent.parent


def notebook_text(name: str) -> str:
    return "\n".join("".join(c["source"]) for c in json.loads((ROOT / "notebooks" / name).read_text())["cells"])


class TestPermutedWeights:
    weights = torch.softmax(torch.randn(4, 4, generator=torch.Generator().manual_seed(0)), dim=-1)

    def check(self, answer, order):
        return exercises.check_permuted_weights(answer, weights=self.weights, order=order)

    def test_the_notebooks_order_is_not_its_own_inverse(self):
        # With an involution, argsort(order) == order and the inverse-permutation mistake would pass as correct.
        text = notebook_text("09_why_positions_matter.ipynb")
        order = json.loads(text.split("check_permuted_weights(my_shuffled, weights=attention_weights, order=")[1]
                           .split(")")[0])
        assert torch.argsort(torch.tensor(order)).tolist() != order

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
