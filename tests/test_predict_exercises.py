"""A "predict, then run" exercise keeps its answer until the learner has predicted, and counts the prediction made.

The learner writes a prediction, its checker judges it (progress() keeps that first verdict: posenc.exercises.feedback),
and only then does the run that shows why, under `if exercises.predicted(answer):`, show anything
(posenc.exercises.predictions.predicted waits for a judged prediction). So a learner's notebook run untouched (Run All)
shows nothing between the placeholder and the checker, and each run says that it waits. What holds that:

- here: in every notebook, each cell between a predict exercise's placeholder and its checker is silent, and each run
  guarded by its answer comes after its checker;
- nbval, which runs the learner's edition under the oldest CPU (tests/notebook_runs.py): it finds each guarded cell
  saying that it waits, and nothing more;
- here again: the students' site shows what that run shows (tools/student_edition.learner_with_outputs), and the otter
  student notebook has no outputs at all (tools/assignment.py; test_grading holds it cell for cell the learner's edition).
"""

import inspect
import re
from pathlib import Path

import nbformat
import pytest
import torch

from posenc import exercises, schemes
from posenc.exercises import choices, explained
from posenc.exercises.predictions import CHECK_FIRST, WAITING_FOR_A_PREDICTION
from tests.notebook_runs import for_nbval
from tools.assignment import find_exercises
from tools.student_edition import learner_with_outputs, suite_notebooks, waiting_output, waits_for_a_prediction

ROOT = Path(__file__).resolve().parent.parent


def predict_exercises(notebook: nbformat.NotebookNode, name: str = "notebook"):
    return [e for e in find_exercises(notebook, name) if "(predict" in notebook.cells[e.heading].source.splitlines()[0]]


def _guard(answer: str) -> re.Pattern:
    return re.compile(rf"\bexercises\.predicted\([^)]*\b{answer}\b")


def out_of_order(notebook: nbformat.NotebookNode, name: str = "notebook") -> list[str]:
    """What breaks a predict exercise's order: a cell between its placeholder and its checker that shows something or
    runs the reveal, and a run guarded by its answer before its checker."""
    found = []
    for exercise in predict_exercises(notebook, name):
        guard = _guard(exercise.answer)
        for i in range(exercise.placeholder + 1, exercise.checker):
            cell = notebook.cells[i]
            if i != exercise.solution and cell.cell_type == "code" and (cell.outputs or guard.search(cell.source)):
                found.append(f"{name}, exercise {exercise.number}: cell {i} shows or reveals before the checker")
        found += [f"{name}, exercise {exercise.number}: cell {i} runs the reveal before the checker"
                  for i, cell in enumerate(notebook.cells[:exercise.placeholder])
                  if cell.cell_type == "code" and guard.search(cell.source)]
    return found


NOTEBOOKS = {path.name: nbformat.read(path, as_version=4) for path in suite_notebooks()}
WITH_PREDICTIONS = [name for name, notebook in NOTEBOOKS.items() if any(
    "(predict" in cell.source for cell in notebook.cells if cell.cell_type == "markdown")]


def test_most_exercises_are_predictions():
    assert sum(len(predict_exercises(NOTEBOOKS[name], name)) for name in WITH_PREDICTIONS) >= 25


@pytest.mark.parametrize("name", WITH_PREDICTIONS)
def test_the_checker_judges_the_prediction_before_any_run_shows_it(name):
    assert out_of_order(NOTEBOOKS[name], name) == []


def _one_exercise(run: str, outputs: list, *, checker_first: bool = True) -> nbformat.NotebookNode:
    new = nbformat.v4
    checker = new.new_code_cell("exercises.check_prediction(my_shape, actual=(2, 3), question='the shape')")
    reveal = new.new_code_cell(run, outputs=outputs)
    return new.new_notebook(cells=[
        new.new_markdown_cell("### Exercise 1 (predict, then run): a shape"),
        new.new_code_cell("my_shape = None  # (rows, columns)", metadata={"tags": ["exercise"]}),
        new.new_code_cell("my_shape = (2, 3)", metadata={"tags": ["solution"]}),
        *([checker, reveal] if checker_first else [reveal, checker])])


def test_a_run_that_shows_or_reveals_before_the_checker_is_found():
    shown = [nbformat.v4.new_output("stream", name="stdout", text="(2, 3)\n")]
    guarded = "if exercises.predicted(my_shape):\n    print(x.shape)"
    assert out_of_order(_one_exercise("x = torch.zeros(2, 3)\nprint(x.shape)", shown, checker_first=False))
    assert out_of_order(_one_exercise(guarded, [], checker_first=False))  # silent, but before the checker
    assert not out_of_order(_one_exercise(guarded, shown))
    assert not out_of_order(_one_exercise("x = torch.zeros(2, 3)", [], checker_first=False))


@pytest.mark.parametrize("name", WITH_PREDICTIONS)
def test_each_predictions_checker_keeps_its_first_verdict(name):
    # The checker's own record (posenc.exercises.feedback.exercise(prediction=True)), or one it hands the answer to.
    for exercise in predict_exercises(NOTEBOOKS[name], name):
        checker = getattr(exercises, re.search(r"exercises\.(check_\w+)", exercise.call).group(1))
        handed_on = re.search(r"\b(check_prediction|check_choice|_recorded_choice)\(", inspect.getsource(checker))
        assert getattr(checker, "prediction", False) or (not hasattr(checker, "prediction") and handed_on), (
            name, exercise.number, checker.__name__)


@pytest.mark.parametrize("name", WITH_PREDICTIONS)
def test_the_learners_run_must_wait_and_the_site_shows_it_waiting(name):
    teacher = NOTEBOOKS[name]
    nbval_copy, site = for_nbval(teacher), learner_with_outputs(teacher)
    for exercise in predict_exercises(teacher, name):
        guard = _guard(exercise.answer)
        runs = {cell.id for cell in teacher.cells if cell.cell_type == "code" and guard.search(cell.source)
                and waits_for_a_prediction(cell.source)}
        for edition in (nbval_copy, site):
            for cell in edition.cells:
                if cell.id in runs:
                    assert cell.outputs in ([], [waiting_output()]), (name, exercise.number, cell.source[:60])
                    # nbval compares it: silent, or waiting, in the learner's own run too.
                    assert edition is site or "nbval-ignore-output" not in cell.metadata.get("tags", [])
        checker = teacher.cells[exercise.checker].id
        assert [cell.outputs for cell in site.cells if cell.id == checker] == [[]]


def test_predicted_waits_for_every_prediction_and_says_so(capsys):
    exercises.reset_progress()
    for answer in (False, 0, "a", (2, 3)):
        exercises.check_prediction(answer, actual=answer, question="q")
    assert exercises.predicted(False) and exercises.predicted(0) and exercises.predicted("a", (2, 3))
    assert capsys.readouterr().out == ""
    assert not exercises.predicted(None)
    assert not exercises.predicted("a", None)
    assert capsys.readouterr().out == f"{WAITING_FOR_A_PREDICTION}\n" * 2
    assert not exercises.predicted("b")
    assert capsys.readouterr().out == f"{CHECK_FIRST}\n"
    assert "None" in WAITING_FOR_A_PREDICTION and "run this cell again" in WAITING_FOR_A_PREDICTION
    exercises.reset_progress()



def test_after_an_answer_the_checker_could_not_read_the_run_says_what_to_do(capsys):
    # The checker did run and reply: the run must not say only "run the checker cell".
    exercises.reset_progress()
    corpus = ("The cat sat.", "The dog sat on the mat.")
    feedback = exercises.check_one_hot_shape("7, 9", corpus=corpus, sentence="the dog sat", max_sequence_length=7)
    assert not feedback.correct
    capsys.readouterr()
    assert not exercises.predicted("7, 9")
    assert capsys.readouterr().out == f"{CHECK_FIRST}\n"
    assert "could not read your answer" in CHECK_FIRST and "run this cell again" in CHECK_FIRST
    exercises.reset_progress()

# Multiple choice: the answer key stays in the package (posenc.exercises.choices), not in the cell the learner runs.

def test_no_notebook_cell_holds_a_multiple_choice_answer_key():
    for path in suite_notebooks():
        for index, cell in enumerate(nbformat.read(path, as_version=4).cells):
            if cell.cell_type == "code":
                assert "check_choice(" not in cell.source, f"{path.name} cell {index}: move the question to choices.py"


def test_the_choices_module_is_found():
    # The test below is only as good as this list: it must hold every question the notebooks ask.
    assert len(choices.__all__) >= 10


@pytest.mark.parametrize("name", choices.__all__)
def test_each_question_takes_its_right_choice_and_explains_every_other(name):
    checker = getattr(exercises, name)
    options = getattr(choices, "_" + name.removeprefix("check_").upper())
    verdicts = {key: checker(key) for key in options}
    right = [key for key, verdict in verdicts.items() if verdict.correct]
    assert len(right) == 1, verdicts
    for key, verdict in verdicts.items():
        assert options[key].split(".")[0] in verdict.message, (key, verdict.message)
        if key != right[0]:
            assert verdict.status == "mistake" and f"The answer is '{right[0]}'" in verdict.message, (key, verdict.message)
    assert checker(None).status == "not attempted"
    assert checker("z").status == "wrong" and "Expected one of" in checker("z").message


# A prediction's explanation says why the answer is what it is, so it stays in the package too
# (posenc.exercises.explained and the topic checkers), not in the checker cell below the learner's placeholder.

def test_no_notebook_cell_explains_a_prediction_before_it_is_made():
    for path in suite_notebooks():
        for index, cell in enumerate(nbformat.read(path, as_version=4).cells):
            if cell.cell_type == "code" and "check_prediction(" in cell.source:
                assert "explanation=" not in cell.source, f"{path.name} cell {index}: move the question to explained.py"


@pytest.mark.parametrize("name", explained.__all__)
def test_each_explained_prediction_explains_a_right_and_a_wrong_answer(name):
    checker = getattr(exercises, name)
    assert checker(None, actual=None).status == "not attempted"
    right, wrong = checker(1, actual=1), checker(0, actual=1)  # a bool is an int too
    assert right.correct and not wrong.correct and wrong.status in ("wrong", "mistake")
    why = right.message.split(". ", 1)[1][:30]  # the explanation follows the verdict, whatever the prediction
    assert why and why in wrong.message, (right.message, wrong.message)


def test_the_row_a_token_gets_takes_the_row_typed_with_quotes_and_names_the_naive_guess():
    for answer in (0, "0", " 0 "):
        assert exercises.check_row_a_token_gets(answer, actual=0).correct, answer
    naive = exercises.check_row_a_token_gets("7", actual=0)
    assert not naive.correct and "7" in naive.message and "row 0, not row 7" in naive.message
    # 11 computes the row in no cell before the prediction: the checker runs the module itself.
    assert exercises.check_row_a_token_gets(0).correct
    # The cell after the checker shows every token of sentence b getting row b: the message only names the cause.
    assert "it adds pe[:2], one row per sentence" in exercises.check_row_a_token_gets(1, actual=0).message
    # Review 59: a right answer is not told the row again, since the cell after the checker prints it.
    assert "gets row 0" not in exercises.check_row_a_token_gets(0, actual=0).message
    assert exercises.check_row_a_token_gets(None).status == "not attempted"
    assert not exercises.check_row_a_token_gets(7).correct
    assert "7 is the row it would get fed sequence first" in exercises.check_row_a_token_gets(7).message
    assert "fed sequence first" not in exercises.check_row_a_token_gets(1).message


def test_the_row_a_token_gets_takes_the_row_named_as_the_question_names_it():
    # Review 40: "row 0" and "pe[0]" were refused with "Expected a number".
    for answer in ("row 0", "Row 0", "pe[0]", "PE[0]", " row0 "):
        assert exercises.check_row_a_token_gets(answer, actual=0).correct, answer
    for answer in ("row 7", "pe[7]"):
        wrong = exercises.check_row_a_token_gets(answer, actual=0)
        assert wrong.readable and not wrong.correct and "not row 7" in wrong.message, answer
    assert not exercises.check_row_a_token_gets("rows 0 and 1", actual=0).readable


def _constant_score_inputs() -> dict:
    """The hand-set score of 10's Exercise 2: one word at three placements, PE of width 64, W_QK from seed 0."""
    import torch

    from posenc import attention, builder

    PE = builder.sinusoidal_encoding(max_sequence_length=128, d_model=64, dtype=torch.float64)
    weights = attention.projection_weights(d_model=64, seed=0)
    W_QK = weights.W_Q.double() @ weights.W_K.double().T
    word = torch.randn(64, generator=torch.Generator().manual_seed(1)).double()
    return dict(word=word, W_QK=W_QK, PE=PE, placements=[(0, 5), (20, 25), (100, 105)])


def test_the_constant_score_terms_take_the_count_typed_with_quotes_and_explain_the_position_term():
    import torch

    from posenc import schemes

    inputs = _constant_score_inputs()
    for answer in (1, "1", " 1 ", 1.0, torch.tensor(1), "one", " One "):  # the count as a word too
        assert exercises.check_constant_score_terms(answer, **inputs).correct, answer
    two = exercises.check_constant_score_terms("two", **inputs)  # a wrong count as a word is read, and judged
    assert two.readable and not two.correct and "counts pos-pos too" in two.message
    for answer in (1.5, -1, 5, "five", "won", True):  # no count of four terms: unreadable, so not locked in as a prediction
        unread = exercises.check_constant_score_terms(answer, **inputs)
        assert not unread.correct and not unread.readable and "Expected a count from 0 to 4" in unread.message, answer
    guess = exercises.check_constant_score_terms(2, **inputs)  # word-word and pos-pos, as if M kept the offset
    assert not guess.correct and "predicted 2" in guess.message and "not a function of q - p alone" in guess.message
    # An M that turns and scales within each pair keeps pos-pos: then word-word and pos-pos stay.
    turn = schemes.rotation_matrix(position=3, d=64).double()
    kept = exercises.check_constant_score_terms(2, **{**inputs, "W_QK": 2 * turn})
    assert kept.correct and "word-word and pos-pos stay" in kept.message and "Only word-word" not in kept.message
    assert "within each pair" in kept.message and "alike" not in kept.message
    # The two likeliest wrong counts each hear what they missed.
    assert "counts pos-pos too" in guess.message
    zero = exercises.check_constant_score_terms(0, **inputs).message
    assert "same word through the same W_QK" in zero and "Only word-word stays." in zero
    assert zero.count("same word") == 1  # review 39: the reason was said twice
    # Review 41: the right count hears the verdict and its reason only. The run's table shows all four terms, and the
    # cells after it explain pos-pos. The slip for 2 hears pos-pos once.
    right = exercises.check_constant_score_terms(1, **inputs).message
    assert "Only word-word stays, since the word is the same at every placement." in right
    assert "pos-pos" not in right and "word-pos" not in right
    assert guess.message.count("pos-pos") == 2 and "pos-pos changes too" not in guess.message
    three = exercises.check_constant_score_terms(3, **inputs).message  # a wrong count still hears every term
    assert "word-pos and pos-word each read one position" in three and "pos-pos changes too" in three
    assert "pos-pos changes too" not in kept.message and "mixes pairs" not in kept.message
    # What this M does wrong is left to the cells after the exercise: the feedback does not give them away.
    for message in (right, guess.message):
        assert "mixes" not in message and "turn each pair" not in message and "cells below" not in message


def test_the_rope_peak_at_an_end_is_answered_by_what_it_claims():
    # Option b says the peak is at an end, not that the score keeps growing: its feedback says why no end is favoured.
    message = choices._ROPE_SELF_SCORE_PEAK["b"]
    assert "Nothing favours the ends" in message and "never exceeds" not in message


def test_the_rope_peak_at_offset_zero_is_said_with_its_subject():
    # Review 35: "it would be" had no clear subject; the message names the peak and where it would be.
    message = choices._ROPE_SELF_SCORE_PEAK["c"]
    # Review 61: in the notebook's word, a turn (it calls no matrix a rotation and names no R before the message).
    assert "With W_Q = W_K the peak would be at offset 0, since turning q cannot make" in message
    assert "it would be" not in message


def test_shift_back_accepts_each_options_own_text_and_names_the_wrong_ones():
    # The options print as code, so a learner may answer with the option's text rather than its letter.
    for right in ("b", "(B)", "rotation.T", " `rotation.T` ", "rotation.t()", "rotation.mT", "rotation.transpose(0, 1)",
                  "transpose", "the transpose"):
        feedback = exercises.check_shift_back(right)
        assert feedback.correct and "its transpose" in feedback.message, right
    for wrong, why in (("-rotation", "Negating flips every entry"), ("a", "Negating flips every entry"),
                       ("neither", "No new cosines or sines"), ("c.", "No new cosines or sines")):
        feedback = exercises.check_shift_back(wrong)
        assert feedback.status == "mistake" and why in feedback.message and "The answer is 'b'" in feedback.message, wrong
    assert not exercises.check_shift_back("rotation").correct and "Expected one of" in exercises.check_shift_back(7).message
    assert exercises.check_shift_back(None).status == "not attempted"


def test_shift_back_takes_the_transpose_and_the_inverse_written_out():
    # Review 39: right answers written as code or words were refused with "Expected one of".
    for right in ("rotation.transpose(-1, -2)", "torch.transpose(rotation, 0, 1)", "inverse of rotation",
                  "the transpose of rotation", "rotation transposed", "R^T", "rotation^-1", "rotation.swapaxes(0, 1)"):
        feedback = exercises.check_shift_back(right)
        assert feedback.correct and "its transpose" in feedback.message, right
    # Not the transpose: no axes swapped, a negated transpose, or 1 / each entry.
    for other in ("rotation.transpose(0, 0)", "-rotation.T", "rotation ** -1", "invert the sign"):
        feedback = exercises.check_shift_back(other)
        assert not feedback.correct and "Expected one of" in feedback.message, other


def test_shift_back_takes_the_notebooks_own_name_r_2():
    # Review 40: the notebook calls the matrix R_2, and "R_2.T" was refused with "Expected one of".
    for right in ("R_2.T", "R_2^T", "R2.T", "torch.linalg.inv(R_2)", "the transpose of R_2"):
        feedback = exercises.check_shift_back(right)
        assert feedback.correct and "its transpose" in feedback.message, right
    feedback = exercises.check_shift_back("-R_2")
    assert feedback.status == "mistake" and "Negating flips every entry" in feedback.message
    assert "small[p] @ -R_2 = -small[p + 2]" in feedback.message  # round 41: the notebook's variable is R_2
    assert not exercises.check_shift_back("R_2").correct and not exercises.check_shift_back("R_22.T").correct


def test_shift_back_takes_the_inverse_and_the_matrix_itself():
    # "the inverse" names option b, and so does the tensor rotation.T; -rotation names a; any other matrix is refused.
    rotation = schemes.rotation_matrix(position=2, d=6).double()
    for right in ("inverse", "the inverse", "R.T", "torch.linalg.inv(rotation)", rotation.T, rotation.T.float(),
                  torch.linalg.inv(rotation), rotation.T.requires_grad_()):
        feedback = exercises.check_shift_back(right)
        assert feedback.correct and "its transpose" in feedback.message, right
    feedback = exercises.check_shift_back(-rotation)
    assert feedback.status == "mistake" and "Negating flips every entry" in feedback.message
    for other in (rotation, torch.zeros(6, 6), torch.empty(6, 6, device="meta"), torch.eye(6).to_sparse()):
        feedback = exercises.check_shift_back(other)
        assert not feedback.correct and "Expected one of" in feedback.message


def test_the_alibi_and_embedding_factor_answers_leave_the_why_to_the_notebook_and_hedge_the_cause():
    # Review 39: the ALiBi answer repeated the section after it, and the factor's answer stated a guess as a cause.
    for right in ("b", "(B)", " b. ", "'b'"):
        feedback = exercises.check_alibi_without_the_mask(right)
        assert feedback.correct and "The next section shows why" in feedback.message, right
    for wrong, why in (("a", "more than the order-blind guess"), ("C", "Three in four"), ("(d)", "The bias cannot")):
        feedback = exercises.check_alibi_without_the_mask(wrong)
        assert feedback.status == "mistake" and why in feedback.message and "The answer is 'b'" in feedback.message
    for right in ("a", "A.", "(a)"):
        feedback = exercises.check_embedding_factor(right)
        assert feedback.correct and "Our guess:" in feedback.message and "1.00 either way" not in feedback.message, right
        assert "shrinks against its position" not in feedback.message
        # Review 53: the sinusoidal PE is not trained; the trained word row is the short one (0.95 against 4).
        assert "a quarter as long as a PE row" in feedback.message and "trained PE row" not in feedback.message
        # Round 70: every PE row is 4 long, trained or not; only past the trained positions are the rows new.
        assert "drown out" not in feedback.message and "new to it" in feedback.message
    for wrong, why in (("b", "Rotary changed by less than 0.02"), ("c.", "LayerNorm rescales the whole row")):
        feedback = exercises.check_embedding_factor(wrong)
        assert feedback.status == "mistake" and why in feedback.message and "The answer is 'a'" in feedback.message



def test_a_prediction_whose_explanation_follows_the_answer_is_one_exercise_that_keeps_the_first_answer():
    # Review 42: the record's key held the explanation, which names the slip behind each answer. So answering 1, 2, 3
    # listed the exercise three times, and "keeps your first prediction" named 2, not 1.
    inputs = _constant_score_inputs()
    exercises.reset_progress()
    messages = [exercises.check_constant_score_terms(answer, **inputs).message for answer in (1, 2, 3)]
    assert "first prediction" not in messages[0]
    assert all("progress() keeps your first prediction, 1:" in message for message in messages[1:]), messages
    record = exercises.progress()
    assert len(record.entries) == 1 and record.count("done") == 1, record


def test_shift_back_takes_the_inverse_sign_and_names_r_minus_2():
    # Review 43: "R_2⁻¹" and "transpose R_2" name option b and were refused; "R_{-2}" is the right matrix, not an
    # option, and its refusal now says so and asks which option builds it.
    for right in ("R_2⁻¹", "R_2ᵀ", "R_2^{-1}", "transpose R_2", "invert R_2"):
        feedback = exercises.check_shift_back(right)
        assert feedback.correct and "its transpose" in feedback.message, right
    for backward in ("R_{-2}", "R_-2", "rotation_matrix(-2)", "schemes.rotation_matrix(position=-2, d=6)"):
        feedback = exercises.check_shift_back(backward)
        assert not feedback.correct and not feedback.readable, backward
        assert "Expected one of" in feedback.message and "is the right matrix. Which option builds it" in feedback.message
    assert "right matrix" not in exercises.check_shift_back("R_{-3}").message
    assert not exercises.check_shift_back("invert the sign").correct
