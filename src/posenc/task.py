"""The task "previous token", and what a model blind to order can score on it.

The model reads random tokens and must output, at every position t >= 1, the token at
position t - 1. Attention without any position information and without a causal mask is
permutation-equivariant ("Why positions matter" shows it): the output at position t can
depend only on the token at t and on how often each token occurs among the others, not on
where they are. The best guess made from that alone is the *order-blind guess*; for a causal
model it uses the counts of the tokens before t (a causal model can beat it even without
positions: it can count, as shown where the causal mask is taught). `order_blind_accuracy`
scores the guess on given inputs, `expected_order_blind_accuracy` gives its average over all
random inputs. `posenc.models.training` trains the models.

The task for stretching the context, "repeat the block" (`repeat_block_batch`), needs
offsets that grow with the input: a block of B random symbols followed by the same block,
where the model predicts each token of the repeat from the one B - 1 positions back (or
finds the earlier copy of the current token and reads the token after it). Previous token
needs offset 1 at every length, so it cannot show what a longer input does to a position
scheme.
"""

from __future__ import annotations

import torch
from torch import nn

from ._checks import FLAG, check_flag, check_size, check_tensor, checked, short, size

__all__ = ["previous_token_batch", "repeat_block_batch", "order_blind_accuracy", "expected_order_blind_accuracy"]

# The expectation builds (length x length x length) tables: 128 keeps them at 16 MB.
LONGEST_EXPECTED = 128
# As many symbols as models.transformer.Settings allows (symbols are merged by doubling: the cost grows with log2 of it).
LARGEST_EXPECTED_VOCAB = 1000


def previous_token_batch(*, batch_size: int, length: int, vocab_size: int,
                         generator: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Random token ids of shape (batch_size, length) and the answers: the token one position back.

    The answer at position 0 does not exist; it is -100, the index
    `nn.functional.cross_entropy` ignores.
    """
    batch_size, length, vocab_size = _batch_sizes(batch_size, "length", length, 1, vocab_size, generator)
    ids = torch.randint(vocab_size, (batch_size, length), generator=generator)
    targets = torch.full_like(ids, -100)
    targets[:, 1:] = ids[:, :-1]
    return ids, targets


def repeat_block_batch(*, batch_size: int, block_length: int, vocab_size: int,
                       generator: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Random blocks of `block_length` symbols, each followed by itself: ids of shape (batch_size, 2 * block_length).

    The targets are next-token answers on the repeated half: at position t the token at
    t + 1, for t = block_length .. 2 * block_length - 2, and -100 (ignored by
    `nn.functional.cross_entropy`) everywhere else. Scored are the tokens of the repeat
    after its first: a model reading left to right cannot know where the block ends
    before the repeat has begun, so the first token of the repeat is a guess.
    """
    batch_size, block_length, vocab_size = _batch_sizes(batch_size, "block_length", block_length, 2, vocab_size,
                                                        generator)
    block = torch.randint(vocab_size, (batch_size, block_length), generator=generator)
    ids = torch.cat([block, block], dim=1)
    targets = torch.full_like(ids, -100)
    targets[:, block_length:-1] = ids[:, block_length + 1:]
    return ids, targets


def order_blind_accuracy(ids: torch.Tensor, targets: torch.Tensor, *, causal: bool = False) -> float:
    """How often the best guess that ignores order names the previous token, on these inputs.

    An order-blind guess at position t may use the token at t and how many times each
    token occurs among the tokens position t sees, but not where they are. Without a
    causal mask (`causal=False`, an encoder) position t sees every other token; with one
    (`causal=True`, a decoder) it sees only x_0 .. x_{t-1} before it. The inputs are
    random, so every order of the tokens it sees is equally likely, and the previous
    token is most likely the one that occurs most often among them: the guess scored
    here, which no order-blind model beats on average. When k tokens share the top count,
    the guess is one of them at random: it counts 1/k if the answer is among them.

    Position 0 has no previous token: positions whose target is -100 are not scored,
    and with `causal=True` position 0 must be one of them (it sees nothing before it).
    Averaged over all random inputs of 10 symbols, this is 0.317 / 0.241 / 0.195 / 0.165
    at lengths 8 / 16 / 32 / 64 for an encoder and 0.482 / 0.367 / 0.287 / 0.231 for a
    decoder (`expected_order_blind_accuracy`).
    """
    check_tensor("ids", ids, ndim=(2,))
    check_tensor("targets", targets, ndim=(2,))
    if ids.shape != targets.shape or {ids.dtype, targets.dtype} != {torch.int64} or not ids.numel() \
            or ids.min() < 0 or ids.max() >= 2**16:
        raise ValueError(f"ids and targets must be int64 tensors of one shape, ids in [0, 65535], got {short(ids)}")
    scored = targets != -100
    if not bool(scored.any()) or (check_flag("causal", causal) and bool(scored[:, 0].any())):
        raise ValueError("targets must score a position (not -100), and not position 0 when causal=True (it sees nothing)")
    if bool((targets[scored] < 0).any()) or bool((targets[scored] > ids.max()).any()):
        raise ValueError("targets must be token ids that occur in ids, or -100")
    vocab_size = int(ids.max()) + 1
    here = nn.functional.one_hot(ids, vocab_size)                      # (batch, seq, vocab)
    if causal:
        seen = here.cumsum(dim=1) - here                                # counts in x_0 .. x_{t-1}
    else:
        seen = here.sum(dim=1, keepdim=True) - here                     # counts in every token but x_t
    best = seen == seen.max(dim=-1, keepdim=True).values
    hit = best.gather(-1, targets.clamp(min=0).unsqueeze(-1)).squeeze(-1).double() / best.sum(-1)
    return float(hit[scored].mean())


def _batch_sizes(batch_size: object, name: str, length: object, copies: int, vocab_size: object,
                 generator: object) -> tuple[int, int, int]:
    """A batch of `batch_size` rows of `copies * length` random ids (`name` is the length's argument)."""
    batch_size, vocab_size = check_size("batch_size", batch_size, maximum=2**20), check_size("vocab_size", vocab_size,
                                                                                          minimum=2, maximum=2**31)
    length = check_size(name, length, minimum=2, maximum=2**20 // copies)
    if batch_size * copies * length > 2**24:
        raise ValueError(f"batch_size={batch_size} and {name}={length} make more than {2**24} token ids")
    if generator is not None and not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator or None, got {type(generator).__name__}")
    return batch_size, length, vocab_size


@checked(length=size(2, LONGEST_EXPECTED), vocab_size=size(2, LARGEST_EXPECTED_VOCAB), causal=FLAG)
def expected_order_blind_accuracy(*, length: int, vocab_size: int, causal: bool = False) -> float:
    """`order_blind_accuracy` averaged over all random inputs of `length` tokens from `vocab_size` symbols.

    Computed, not sampled. A position that sees m tokens, in an order it cannot know, finds
    the previous token to be symbol s with probability (count of s) / m, so the guess is
    right with probability (top count) / m: the mean of that is E[top count among m] / m.
    An encoder's position sees m = length - 1 tokens; a decoder's position t sees m = t,
    averaged over t = 1 .. length - 1. E[top count] = sum over k of P(top count > k).
    """
    count = torch.arange(length, dtype=torch.float64)
    n, j = count[:, None], count[None, :]          # n tokens in all, j of them in the first group of symbols
    log_ways = torch.lgamma(n + 1) - torch.lgamma(j + 1) - torch.lgamma((n - j).clamp(min=0) + 1)
    rest = (n - j).clamp(min=0).long()             # [n, j] = n - j: the tokens left to the second group

    def merged(first: torch.Tensor, a: int, second: torch.Tensor, b: int) -> torch.Tensor:
        # Each of the n tokens is one of the a + b symbols: j of them fall in the first group with probability
        # Binomial(n, j; a / (a + b)), and no symbol of either group may then occur more than k times.
        share = a / (a + b)
        binomial = torch.exp(log_ways + j * torch.log(torch.tensor(share, dtype=torch.float64))
                             + (n - j) * torch.log1p(torch.tensor(-share, dtype=torch.float64))) * (j <= n)
        return (binomial * first[:, None, :] * second[:, rest]).sum(dim=-1)

    # at_most[k, n]: the probability that no symbol occurs more than k times among n random tokens (k, n < length).
    one_symbol = (count[None, :] <= count[:, None]).double()   # one symbol: its count is n itself
    at_most, symbols = one_symbol, 1
    for bit in bin(vocab_size)[3:]:                 # doubling, then one more symbol where the binary digit is 1
        at_most, symbols = merged(at_most, symbols, at_most, symbols), 2 * symbols
        if bit == "1":
            at_most, symbols = merged(at_most, symbols, one_symbol, 1), symbols + 1
    below_n = count[:, None] < count[None, :]       # P(top count > k) is 0 for k >= n: leave those terms out
    top = ((1 - at_most) * below_n).sum(dim=0)      # [n] = E[top count among n random tokens]
    if causal:
        return float((top[1:] / count[1:]).mean())
    return float(top[length - 1] / (length - 1))
