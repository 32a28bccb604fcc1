"""The predictions whose explanation would give the answer away if the learner's cell showed it.

A silent line before the checker computes `actual`; the checker here holds the question and why the answer is what it
is, and hands them to `check_prediction`. So the cells a learner reads before predicting hold neither. (The multiple
choices do the same in choices.py.)
"""

from __future__ import annotations

import re

import torch

from ..builder import sinusoidal_encoding
from .feedback import Feedback, as_number
from .predictions import check_prediction

__all__ = ["check_same_words_other_order", "check_row_a_token_gets"]


def check_same_words_other_order(answer: object, *, actual: object) -> Feedback:
    """A prediction: how many more tokens does "My friend is Grant" take than "Grant is my friend" (`actual`)?"""
    explanation = ("Only Grant changes its count. After a space it takes one piece more, a bare ␣, because BPE never made ␣G. "
                   "The training text has ␣G 12 times, 10 of them in ␣GPT and ␣Going. In those words G had already merged "
                   "with the letters after it (GPT, Going), so the pair ␣ G stayed too rare to become a piece.")
    if as_number(answer) == 0 and actual != 0:  # the likely slip: John kept its count, so Grant should too
        explanation = f"John kept its count because ␣J is a piece. Grant has no ␣G. {explanation}"
    return check_prediction(answer, actual=actual, question="how many more tokens My friend is Grant takes",
                            explanation=explanation)


def _row_of_token_7() -> int:
    """The row pytorch/examples' PositionalEncoding (a (10, 1, 6) buffer, pe[:x.size(0)]) adds to token 7 of sentence 0
    of a batch-first (2, 10, 6) input."""
    pe = sinusoidal_encoding(max_sequence_length=10, d_model=6)[:, None, :]
    added = torch.zeros(2, 10, 6) + pe[:2]
    return next(row for row in range(10) if torch.equal(added[0, 7], pe[row, 0]))


def check_row_a_token_gets(answer: object, *, actual: object = None) -> Feedback:
    """A prediction: fed (batch, sequence, d_model), which table row does token 7 of sentence 0 get (`actual`; the
    checker runs the module itself when it is not given, so no cell computes the answer before the prediction)?"""
    if isinstance(answer, str):  # "row 0" or "pe[0]" names the row as the question asks for it
        named = re.fullmatch(r"\s*(?:row\s*|pe\s*\[\s*)?(\d+)\s*\]?\s*", answer, flags=re.IGNORECASE)
        answer = named.group(1) if named else answer
    if actual is None and answer is not None:
        actual = _row_of_token_7()
    # The cell after the checker prints the row every token got: a right answer hears only the cause.
    explanation = "forward reads x.size(0), the batch of 2, as the length, so it adds pe[:2], one row per sentence."
    if as_number(answer) == 7 and actual != 7:  # the likely slip: the answer for sequence-first input
        explanation = (f"7 is the row it would get fed sequence first. {explanation} Token 7 of sentence 0 gets row 0, "
                       "not row 7, the row of its position.")
    feedback = check_prediction(answer, actual=actual, question="the table row of token 7 of sentence 0, fed batch first",
                                explanation=explanation)
    if isinstance(answer, str) and re.search(r"error|raise|exception|fail", answer, flags=re.IGNORECASE):
        # Says only that nothing raises: how the shapes meet is the answer, kept until a row is predicted.
        return Feedback(feedback.status, f"{feedback.message} Nothing raises: the module runs on this input. "
                                         "Predict the row number token 7 gets.", readable=False)
    return feedback
