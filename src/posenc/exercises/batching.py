"""Checkers for batches: the mask of a packed row; and the run after the std-0.02 prediction on the input side."""

from __future__ import annotations

import math

import torch

from .._provenance import calls_any
from ..attention import document_ids_from_lengths, packed_mask
from ..builder import sinusoidal_encoding
from .feedback import (
    CORRECT,
    MISTAKE,
    WRONG,
    Feedback,
    as_function,
    as_tensor,
    describe,
    error_line,
    exercise,
    first_mistake,
    run_learner,
)
from .predictions import predicted
from .signature import refuses

__all__ = ["check_document_mask", "show_document_leak", "show_word_and_pe_rows"]


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
    pass. A 0/1 mask of numbers is named: PyTorch would add a float one to the scores and refuses an integer one.
    Named too: the causal mask alone (GPT-3's plain mask), the blocks without the triangle,
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
            if refuses(result, answer, list(lengths)):
                return Feedback(WRONG, f"Calling my_document_mask({lengths}) failed with {error_line(result)}: give "
                                       "the function one parameter, the list of lengths.")
            if isinstance(result, TypeError) and "causal_mask() takes 0 positional" in str(result):
                return Feedback(WRONG, f"my_document_mask({lengths}) raised {error_line(result)}. The package's "
                                       "causal_mask takes its size by name: attention.causal_mask(sequence_length=n).")
            return Feedback(WRONG, f"my_document_mask({lengths}) raised {error_line(result)}.")
        n = sum(lengths)
        if isinstance(result, torch.Tensor) and result.is_floating_point() and bool(torch.isneginf(result).any()):
            # An additive mask (0 where a query may look, -inf where it may not) holds the right pattern the other way.
            return Feedback(MISTAKE, f"For lengths {lengths} it returned an additive mask, 0 where a query may look "
                                     "and -inf where it may not, the form added to the scores. Return the boolean "
                                     "mask itself, True where a query may look.")
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
        if given.dtype != torch.bool and torch.equal(given != 0, expected):
            # The right pattern in 0/1 numbers: PyTorch adds a float mask to the scores and refuses an integer one.
            if given.is_floating_point():
                numbers, why = ("the numbers 0.0 and 1.0", "F.scaled_dot_product_attention adds a float mask to the "
                                "scores, so 1.0 and 0.0 would hide nothing.")
            else:
                numbers, why = "the integers 0 and 1", "masked_fill and F.scaled_dot_product_attention refuse an integer mask."
            fix = ": add .bool()." if isinstance(result, torch.Tensor) else "."  # a list has no .bool()
            return Feedback(MISTAKE, f"For lengths {lengths} the pattern is right, but in {numbers}, not True and False. "
                                     f"{why} Return a boolean mask{fix}")
        given = given != 0
        if torch.equal(given, expected):
            continue
        causal = torch.ones(n, n, dtype=torch.bool).tril()
        same = expected | expected.T  # the document blocks, whole
        mistakes = [
            ("The causal mask alone, GPT-3's choice: each token still sees the documents before its own. Keep a key "
             "only if it is in the query's document too: compare each query's document with each key's.",
             causal),
            ("The document blocks without the causal triangle: each token sees the later tokens of its own document. "
             "A decoder hides the future inside each document too. Combine the blocks with the causal mask using &.", same),
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


def show_document_leak(answer: object, *, scores: torch.Tensor, lengths: list[int]) -> None:
    """The run after the document-mask exercise: softmax the packed row's `scores`, `(n, n)`, under the learner's mask
    `answer(lengths)`, and print how much of the second document's first token's weight lands on the first document.
    It prints only a right mask's weight; for anything else it says what it waits for, and it never raises."""
    lengths = [int(n) for n in lengths]
    if len(lengths) < 2:
        raise ValueError(f"lengths must name at least two documents, got {lengths}")
    kind, result = run_learner(answer, list(lengths)) if callable(answer) else ("raised", None)
    given = as_tensor(result, "the mask") if kind != "raised" else None
    if not isinstance(given, torch.Tensor) or given.numel() != sum(lengths) ** 2 \
            or not torch.equal(given.reshape(sum(lengths), sum(lengths)) != 0, _document_mask(lengths)):
        print(f"This shows once my_document_mask({lengths}) returns the right mask.")
        return
    weights = torch.softmax(scores.detach().masked_fill(~_document_mask(lengths), float("-inf")), dim=-1)
    first = lengths[0]
    print(f"with your mask, on the first document: {weights[first, :first].sum().item() * 100:.0f} %")


def show_word_and_pe_rows(prediction: object, *, widths: tuple[int, ...] = (32, 512, 2048), std: float = 0.02,
                          seed: int = 0) -> None:
    """Print, for each d_model in `widths`, the mean length of 1,000 word rows of std `std` times sqrt(d_model), of a
    PE row, and their ratio: the run after the std-0.02 prediction. It holds the lines that would compute the answer,
    so it prints only once a checker has judged `prediction` (see `predicted`)."""
    if not predicted(prediction):
        return
    generator = torch.Generator().manual_seed(seed)
    for width in widths:
        word_rows = torch.randn(1000, width, generator=generator) * std * math.sqrt(width)  # times the factor
        pe_rows = sinusoidal_encoding(max_sequence_length=1000, d_model=width)
        word, position = word_rows.norm(dim=1).mean().item(), pe_rows.norm(dim=1).mean().item()
        print(f"d_model = {width:4d}: word row {word:5.2f}, PE row {position:4.1f}, word / PE {word / position:.2f}")
