"""Checkers for batches: a batch fed to a module built for (seq, batch, d_model), and the mask of a packed row."""

from __future__ import annotations

import copy

import torch

from .._checks import check_floating_tensor, short
from .._provenance import calls_any
from ..attention import document_ids_from_lengths, packed_mask
from .feedback import (
    CORRECT,
    MISTAKE,
    WRONG,
    Feedback,
    as_count,
    as_function,
    as_tensor,
    close,
    describe,
    error_line,
    exercise,
    first_mistake,
    not_attempted,
    run_learner,
)

__all__ = ["check_sequence_size", "check_batch_first", "check_document_mask"]


@exercise("the size a sequence-first module read as the sequence", prediction=True)
def check_sequence_size(answer: object, *, module: torch.nn.MultiheadAttention, x: torch.Tensor) -> Feedback:
    """How many tokens per sequence `module` (an `nn.MultiheadAttention`) reads in the batch-first `x`,
    `(batch, seq, d_model)`: the key count of the attention weights it returns, `(batch, query, key)`.

    The checker runs the module itself (a copy, without dropout), so the notebook computes nothing before it. A
    prediction of how the module reads x's layout. Named: the length we meant (x's second size) and d_model.
    """
    if not isinstance(module, torch.nn.MultiheadAttention):
        raise TypeError(f"module must be a torch.nn.MultiheadAttention, got {short(module)}")
    check_floating_tensor("x", x, ndim=(3,))
    if x.shape[-1] != module.embed_dim or not x.numel():
        raise ValueError(f"x must be a non-empty (batch, seq, {module.embed_dim}) tensor for a module of embed_dim "
                         f"{module.embed_dim}, got shape {tuple(x.shape)}")
    if answer is None:
        return not_attempted("the number of tokens per sequence the module read, a whole number")
    reference = copy.deepcopy(module).eval()
    x = x.detach().to(reference.in_proj_weight.dtype if reference.in_proj_weight is not None else x.dtype)
    with torch.no_grad():
        weights = reference(x, x, x)[1]
    shape, expected, read_batch = tuple(weights.shape), weights.shape[-1], weights.shape[0]
    read = (f"The weights {shape} are (batch, query, key): the module read {read_batch} sequences of {expected} "
            f"tokens, where x holds {x.shape[0]} sequences of {x.shape[1]}.")
    given = as_count(answer)
    if given is None:
        return Feedback(WRONG, f"Got {short(answer)}; expected a whole number, {expected}. {read}")
    if given == expected:
        return Feedback(CORRECT, f"Correct: {expected}. {read}")
    if given == x.shape[1]:
        return Feedback(MISTAKE, f"Got {given}, the length we meant; the module read {expected}. {read}")
    if given == x.shape[-1]:
        return Feedback(MISTAKE, f"Got {given}, d_model, the size of each token's vector; expected {expected}. {read}")
    return Feedback(WRONG, f"Got {given}; expected {expected}. {read}")


@exercise("a batch-first batch through a sequence-first module")
def check_batch_first(answer: object, *, module: torch.nn.MultiheadAttention, x: torch.Tensor) -> Feedback:
    """The output of `module` (an `nn.MultiheadAttention`) on the batch-first `x`, `(batch, seq, d_model)`, read as
    a batch of sequences: self-attention within each sequence, one output row per token, in `x`'s layout.

    Right whichever correct fix produced it. The bug itself (x fed to the module as it is) is a named mistake, and so
    are its half-fixes (tests/test_checkers_batching.py lists them).
    """
    if not isinstance(module, torch.nn.MultiheadAttention):
        raise TypeError(f"module must be a torch.nn.MultiheadAttention, got {short(module)}")
    if not module._qkv_same_embed_dim:
        raise ValueError("module must have kdim = vdim = embed_dim (one input for queries, keys and values)")
    check_floating_tensor("x", x, ndim=(3,))
    if x.shape[-1] != module.embed_dim or not x.numel():
        raise ValueError(f"x must be a non-empty (batch, seq, {module.embed_dim}) tensor for a module of embed_dim "
                         f"{module.embed_dim}, got shape {tuple(x.shape)}")
    # A copy read as (seq, batch, d_model) whatever the learner set on the module, without dropout.
    reference = copy.deepcopy(module).eval()
    reference.batch_first = False
    x = x.detach().to(reference.in_proj_weight.dtype)
    with torch.no_grad():
        seq_first = x.transpose(0, 1)
        expected = reference(seq_first, seq_first, seq_first, need_weights=False)[0].transpose(0, 1)
        mixed = reference(x, x, x, need_weights=False)[0]  # the bug: the batch read as the sequence
    batch, seq = x.shape[0], x.shape[1]
    pair = ""
    if isinstance(answer, (tuple, list)) and len(answer) == 2 and isinstance(answer[0], torch.Tensor):
        answer, pair = answer[0], " (the module returns (output, weights): the output is the first)"
    answer = as_tensor(answer, f"the output, a ({batch}, {seq}, {x.shape[-1]}) tensor")
    if isinstance(answer, Feedback):
        return answer
    if close(answer, expected, atol=1e-5):
        return Feedback(CORRECT, f"Correct: shape {tuple(expected.shape)}; each of the {batch} sequences attends "
                                 f"within itself, over its {seq} tokens{pair}. The module reads (seq, batch, d_model) "
                                 "unless it is built with batch_first=True.")
    if close(answer, mixed, atol=1e-5):
        # What is wrong, not the fix: this is the buggy output handed in unchanged.
        return Feedback(MISTAKE, f"That is the bug's output, unchanged. The module reads ({batch}, {seq}, d_model) as "
                                 f"{batch} positions of a batch of {seq}, so token t of each sequence attends to token "
                                 "t of every sequence, and to no other token of its own.")
    mistakes = [
        (f"The right numbers in the module's layout, (seq, batch, d_model) = ({seq}, {batch}, {x.shape[-1]}): turn "
         "the output back with .transpose(0, 1), to one row per sequence as in x.", expected.transpose(0, 1)),
        ("Only the output was transposed: the module still read the sequences as positions and mixed them. "
         "Transpose the input too, before the module.", mixed.transpose(0, 1)),
        ("That is x itself, not the module's output.", x),
        (f"The output was reshaped to ({batch}, {seq}, {x.shape[-1]}) instead of transposed back: .reshape (or "
         ".view) keeps the numbers in their memory order, so each row of the result mixes the sequences. Turn the "
         "module's (seq, batch, d_model) output back with .transpose(0, 1).",
         expected.transpose(0, 1).contiguous().reshape(batch, seq, -1)),
        ("The input was reshaped to (seq, batch, d_model) instead of transposed: .reshape (or .view) keeps the numbers "
         "in their memory order, so the module read a mixture of the sequences. Use .transpose(0, 1) on the input, "
         "and on the output.", lambda: _reshaped_in(reference, x)),
        ("The module read x as it is, (batch, seq, d_model) taken for (seq, batch, d_model), and its output was then "
         "transposed and reshaped: a reshape keeps the numbers in their memory order, so the sequences stay mixed. "
         "Transpose the input to (seq, batch, d_model) before the module, and the output back with .transpose(0, 1).",
         mixed.transpose(0, 1).contiguous().reshape(batch, seq, -1)),
    ]
    mistake = first_mistake(lambda wrong: close(answer, wrong, atol=1e-5), mistakes)
    if mistake:
        return mistake
    if tuple(answer.shape) == tuple(expected.shape):
        return Feedback(WRONG, f"The right shape, {tuple(expected.shape)}, but other numbers. Run this module (a new "
                               "one draws new random parameters) on its input transposed with .transpose(0, 1) (and the "
                               "output back the same way), or with batch_first=True set on it.")
    return Feedback(WRONG, f"Got {describe(answer)}; expected the module's output on x, shape {tuple(expected.shape)}, "
                           "each sequence attending within itself. The module reads (seq, batch, d_model): "
                           "x.transpose(0, 1) swaps a tensor's first two dimensions.")


def _reshaped_in(reference: torch.nn.MultiheadAttention, x: torch.Tensor) -> torch.Tensor:
    """The module on x reshaped (not transposed) to (seq, batch, d_model), its output transposed back."""
    batch, seq, d = x.shape
    mixed = x.reshape(seq, batch, d)
    with torch.no_grad():
        return reference(mixed, mixed, mixed, need_weights=False)[0].transpose(0, 1)


# The lengths a document-mask function is tried on, none of them the notebook's: a one-token document, a single
# document, four documents.
_DOCUMENT_CASES = ([3, 2, 4], [1, 4, 2], [5], [2, 1, 3, 2])


def _document_mask(lengths: list[int]) -> torch.Tensor:
    """True where query r may look at key c: same document, c <= r."""
    document = torch.repeat_interleave(torch.arange(len(lengths)), torch.tensor(lengths))
    return (document[:, None] == document[None, :]) & torch.ones(len(document), len(document), dtype=torch.bool).tril()


@exercise("a mask for documents packed in one row")
def check_document_mask(answer: object) -> Feedback:
    """A function `answer(lengths)` that returns the `(n, n)` mask of documents of `lengths` packed in one row
    (n = sum(lengths)): True where query r may look at key c, i.e. both are in one document and c <= r.

    It is run on lengths of the checker's own, none of them the notebook's, so a mask built for the notebook cannot
    pass. A 0/1 mask of numbers is right too. Named: the causal mask alone (the bug), the blocks without the triangle,
    the mask inverted (nn.MultiheadAttention's convention), the diagonal hidden, the triangle the wrong way, no mask,
    and weights instead of a mask. A function that calls the package's packed_mask or document_ids_from_lengths is
    named: the exercise builds the mask by hand.
    """
    if (not_a_function := as_function(
            answer, signature="my_document_mask(lengths)",
            when_a_tensor="The checker tries new lengths: put your lines in def my_document_mask(lengths): and "
                          "return the mask.")):
        return not_a_function
    for lengths in _DOCUMENT_CASES:
        kind, result = run_learner(answer, list(lengths))
        if kind == "raised":
            if isinstance(result, TypeError) and "argument" in str(result):
                return Feedback(WRONG, f"Calling my_document_mask({lengths}) failed with {error_line(result)}: give "
                                       "the function one parameter, the list of lengths.")
            return Feedback(WRONG, f"my_document_mask({lengths}) raised {error_line(result)}.")
        n = sum(lengths)
        given = as_tensor(result, f"the mask, a ({n}, {n}) tensor")
        if isinstance(given, Feedback):
            return Feedback(WRONG, f"my_document_mask({lengths}) returned {describe(result)}; expected a ({n}, {n}) "
                                   "boolean tensor, True where a query may look.")
        if given.dim() > 2 and all(size == 1 for size in given.shape[:-2]):
            given = given.reshape(given.shape[-2:])
        if tuple(given.shape) != (n, n):
            return Feedback(WRONG, f"For lengths {lengths} ({n} tokens) it returned shape {tuple(given.shape)}, "
                                   f"expected ({n}, {n}): build the mask from the function's argument, not from the "
                                   "notebook's variables.")
        expected = _document_mask(lengths)
        if given.dtype != torch.bool and not bool(((given == 0) | (given == 1)).all()):
            return Feedback(MISTAKE, f"For lengths {lengths} it returned numbers other than 0 and 1, such as weights. "
                                     "Return the mask itself, True where a query may look.")
        given = given != 0
        if torch.equal(given, expected):
            continue
        causal = torch.ones(n, n, dtype=torch.bool).tril()
        same = expected | expected.T  # the document blocks, whole
        mistakes = [
            ("The causal mask alone, the bug itself: each token still sees the documents before its own. Keep a key "
             "only if it is in the query's document too: document[:, None] == document[None, :], and the causal mask.",
             causal),
            ("The document blocks without the causal triangle: each token sees the later tokens of its own document. "
             "A decoder hides the future inside each document too: and the blocks with the causal mask.", same),
            ("Inverted: True where a query may not look. That is nn.MultiheadAttention's convention; this suite's "
             "mask, like F.scaled_dot_product_attention's, is True where a query may look (06).", ~expected),
            ("The diagonal is hidden: a token may look at itself, and without it each document's first token sees "
             "nothing. Keep c <= r, torch.tril.", expected & ~torch.eye(n, dtype=torch.bool)),
            ("The triangle points the wrong way: each query sees the later tokens of its document, not the earlier "
             "ones. Keep c <= r, torch.tril (or the package's causal_mask).", expected.T),
            ("No mask: every entry is True. Keep the keys of the query's own document, up to the query.",
             torch.ones(n, n, dtype=torch.bool)),
        ]
        mistake = first_mistake(lambda wrong, given=given: torch.equal(given, wrong), mistakes)
        if mistake:
            return mistake
        r, c = (int(k) for k in (given != expected).nonzero()[0])
        return Feedback(WRONG, f"For lengths {lengths}: query {r}, key {c} is {bool(given[r, c])}, expected "
                               f"{bool(expected[r, c])}. A query may look at a key of its own document, at or before "
                               "itself.")
    if calls_any(lambda: [run_learner(answer, list(lengths)) for lengths in _DOCUMENT_CASES],
                 [packed_mask, document_ids_from_lengths]):
        return Feedback(MISTAKE, "Right masks, but through the package's packed_mask or document_ids_from_lengths. "
                                 "Build the mask with torch: number each token's document, compare the numbers, and "
                                 "combine with the causal mask.")
    tried = "; ".join(str(lengths) for lengths in _DOCUMENT_CASES)
    return Feedback(CORRECT, f"Correct on {len(_DOCUMENT_CASES)} new cases (lengths {tried}): each token sees its own "
                             "document's keys, up to itself, as if its document were alone in the row.")


