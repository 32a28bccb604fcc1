"""The checkers of "predict, then run" exercises: a prediction against what the run computed, and a multiple choice."""

from __future__ import annotations

import math

import numpy as np
import torch

from .._checks import check_str, is_real, short
from .feedback import CORRECT, MISTAKE, WRONG, Feedback, as_number, describe, exercise, not_attempted, was_judged

__all__ = ["check_prediction", "check_choice", "predicted", "WAITING_FOR_A_PREDICTION", "CHECK_FIRST"]

# What the run of a "predict, then run" exercise shows until the learner has predicted, and until the prediction is
# checked (`predicted`).
WAITING_FOR_A_PREDICTION = ("The result shows once you have written your prediction above (it is still None) "
                            "and run its checker: do both, then run this cell again.")
CHECK_FIRST = ("The result shows once the checker above has judged your prediction. Run the checker cell; if it "
               "could not read your answer, write it as the checker asks. Then run this cell again.")


def predicted(*predictions: object) -> bool:
    """Whether the learner has predicted, and a checker has judged each prediction (see `feedback.exercise`).

    A "predict, then run" exercise checks the prediction first, then shows why under
    `if exercises.predicted(my_answer):`. So no answer shows before the learner has predicted, not even with Run All,
    and the prediction that progress() keeps is the one made before the run; until then the run says what it waits
    for. A prediction counts as judged when a prediction checker has judged an equal value in this session.
    """
    if any(prediction is None for prediction in predictions):
        print(WAITING_FOR_A_PREDICTION)
        return False
    if not all(was_judged(prediction) for prediction in predictions):
        print(CHECK_FIRST)
        return False
    return True


_PREDICTION_TYPES = (bool, int, float, str, tuple)


@exercise("a prediction", prediction=True)
def check_prediction(answer: object, *, actual: object, question: str, explanation: str = "",
                     tolerance: float = 0.0) -> Feedback:
    """Compare the learner's prediction with what the run that follows the checker shows (`actual`).

    `actual` is a bool, a number, a str or a shape (a tuple of ints or torch.Size); a bool prediction may be written
    as the string "True" or "False" too (any case, spaces around ignored), and a number as a string such as "5";
    numbers match within `tolerance` (relative). `explanation` says why the answer is what it is, and is shown
    whatever the prediction was.
    While the prediction is still None, `actual` is not read (it may be None). progress() keeps the verdict on the
    first prediction (see `feedback.exercise`).
    """
    check_str("question", question)
    check_str("explanation", explanation)
    if answer is None:
        return not_attempted("your prediction, before you run the cell that reveals it")
    if isinstance(actual, torch.Size):
        actual = tuple(actual)
    if not isinstance(actual, _PREDICTION_TYPES) or (isinstance(actual, tuple) and not all(
            is_real(n, whole=True) for n in actual)):
        raise TypeError(f"actual must be a bool, a number, a str or a shape (tuple of ints), got {short(actual)}")
    if isinstance(actual, float) and not math.isfinite(actual):
        raise ValueError(f"actual must be a finite number, got {actual!r}")
    if not is_real(tolerance) or not 0 <= tolerance < 1:
        raise ValueError(f"tolerance must be a number in [0, 1), got {tolerance!r}")
    why = f" {explanation}" if explanation else ""
    shown = describe(answer) if isinstance(answer, (torch.Tensor, np.ndarray)) else short(answer)
    if isinstance(actual, bool):
        given = answer
        if isinstance(answer, torch.Tensor) and answer.dtype == torch.bool and answer.dim() == 0 and not answer.is_meta:
            given = bool(answer)
        if isinstance(given, str) and given.strip().lower() in ("true", "false"):
            given = given.strip().lower() == "true"  # "True" typed with quotes: the same prediction
        if not isinstance(given, (bool, np.bool_)):
            return Feedback(WRONG, f"Expected True or False, got {shown}.", readable=False)
        right = bool(given) == actual
    elif isinstance(actual, tuple):
        if isinstance(answer, (torch.Size, list, tuple)) and all(is_real(n, whole=True) for n in answer):
            given = tuple(int(n) for n in answer)
        else:
            return Feedback(WRONG, f"Expected a shape such as (2, 3), got {shown}.", readable=False)
        right = given == actual
        if not right and given == actual[::-1]:
            return Feedback(MISTAKE, f"The right sizes in the wrong order: the shape is {actual}.{why}")
    elif isinstance(actual, str):
        if not isinstance(answer, str):
            return Feedback(WRONG, f"Expected a str, got {shown}.", readable=False)
        right = answer.strip().lower() == actual.strip().lower()
    else:
        given = as_number(answer)  # "5" typed with quotes too: the same prediction
        if given is None:
            return Feedback(WRONG, f"Expected a number, got {shown}.", readable=False)
        right = abs(given - actual) <= tolerance * abs(actual) if tolerance else given == actual
    if right:
        return Feedback(CORRECT, f"Correct: {actual}.{why}")
    return Feedback(WRONG, f"You predicted {short(answer) if not isinstance(answer, torch.Tensor) else shown}; "
                           f"the answer is {actual}.{why}")


def check_choice(answer: object, *, options: dict[str, str], correct: str, question: str) -> Feedback:
    """A multiple-choice answer: `options` maps each choice ("a", "b", ...) to why it is right or wrong.

    The feedback on a wrong choice says why that choice is wrong, then which one is right
    and why; every option's explanation is written in the notebook, so each wrong answer
    gets its own. Choices match without regard to case, surrounding spaces, brackets, quotes or a full stop.
    """
    if not isinstance(options, dict) or len(options) < 2 or not all(
            isinstance(key, str) and key.strip() and isinstance(why, str) and why.strip() for key, why in options.items()):
        raise TypeError(f"options must be a dict of at least two choices (str) -> why each is right or wrong (str), "
                        f"got {short(options)}")
    keys = {key.strip().lower(): key for key in options}
    if len(keys) != len(options):
        raise ValueError(f"options must have choices that differ other than in case and spaces, got {sorted(options)}")
    if not isinstance(correct, str) or correct not in options:
        raise ValueError(f"correct must be one of the choices {sorted(options)}, got {short(correct)}")
    check_str("question", question)
    # The right choice goes to the recorded checker inside a tuple: progress() lists a checker's plain strings
    # and numbers, and must not print the answer next to the question.
    return _recorded_choice(answer, options=options, answer_key=(correct,), question=question)


@exercise("a multiple-choice question", prediction=True)
def _recorded_choice(answer: object, *, options: dict[str, str], answer_key: tuple[str], question: str) -> Feedback:
    correct = answer_key[0]
    listed = ", ".join(repr(key) for key in options)
    if answer is None:
        return not_attempted(f"one of {listed}")
    # "(b)", "b.", "'B'" and " b " all mean "b": the notebooks print their options as "(b)" or `"b"`.
    keys = {key.strip().lower(): key for key in options}
    if isinstance(answer, str):
        plain = answer.strip(" ()[]'\".").lower()
        chosen = keys.get(answer.strip().lower()) or keys.get(plain) or keys.get(f"the {plain}") \
            or keys.get(plain.removeprefix("the "))
    else:
        chosen = None
    if chosen is None:
        return Feedback(WRONG, f"Expected one of {listed}, got {short(answer)}.", readable=False)
    if chosen == correct:
        return Feedback(CORRECT, f"Correct: {correct!r}. {options[correct]}")
    return Feedback(MISTAKE, f"Not {chosen!r}: {options[chosen]} The answer is {correct!r}: {options[correct]}")
