"""Checkers for padding and one-hot encoding: a padding function that refuses what does not fit unless told to cut,
the shape of a one-hot matrix for a new vocabulary."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .. import example, tokens
from .._checks import check_size, check_str, check_str_list, short
from .._provenance import calls_any
from .feedback import CORRECT, MISTAKE, WRONG, Feedback, as_shape, describe, error_line, exercise, not_attempted, run_learner
from .signature import refuses

__all__ = ["check_pad_function", "check_one_hot_shape"]


# The sentence of the padding lesson's too-long example: its first tokens make a sentence that fits, all of them one
# that does not.
_WORDS = ("my", "name", "is", "john", "and", "i", "am", "learning", "how", "transformers", "read", "their", "input")


def _run_pad(function: Callable, words: list[str], max_sequence_length: int,
             **truncate: bool) -> tuple[str, object, list[str]]:
    """Call the learner's function on a copy of `words`: ("returned", result, the copy) or ("raised", error, the copy)."""
    given = list(words)
    return *run_learner(function, given, max_sequence_length=max_sequence_length, **truncate), given


def _pad_as_given(words, *, max_sequence_length, truncate=False):
    """The exercise's `pad`, bug included: it refuses a sentence of exactly max_sequence_length tokens."""
    if len(words) >= max_sequence_length and not truncate:
        raise ValueError("the sentence is too long")
    kept = words[:max_sequence_length]
    return kept + ["<PAD>"] * (max_sequence_length - len(kept))


def _same_as_given(answer: Callable, sentences: Sequence[list[str]], max_sequence_length: int) -> bool:
    """Whether `answer` returns, or raises, what the exercise's `pad` does, for each sentence, cut or not."""
    def outcome(function, words, **cut):
        kind, result, _ = _run_pad(function, words, max_sequence_length, **cut)
        return kind, (type(result), str(result)) if kind == "raised" else result

    return all(outcome(answer, words, **cut) == outcome(_pad_as_given, words, **cut)
               for words in sentences for cut in ({}, {"truncate": True}))


@exercise("a padding that cuts only when asked")
def check_pad_function(answer: Callable | None, *, max_sequence_length: int = 10) -> Feedback:
    """A function `answer(words, max_sequence_length=..., truncate=False)` that pads a sentence which fits with
    `<PAD>`, raises ValueError for one longer than max_sequence_length, and cuts that one to its first
    max_sequence_length tokens when called with truncate=True.

    It is called on five sentences: shorter than max_sequence_length, exactly as long, and 1, 2 and 3 tokens longer;
    each gets a fresh copy of its list. Then the longest, 1 token longer and the shortest again, with truncate=True. A
    function that changes its argument, the short sentence or a long one it cuts, is named. All of it is done again at
    max_sequence_length + 3, so that a number written in for the parameter is caught. A function that calls the
    package's own `tokens.pad` is named: the exercise is to write it.
    """
    max_sequence_length = check_size("max_sequence_length", max_sequence_length, minimum=2, maximum=1000)
    if answer is None:
        return not_attempted("your fixed function")
    if not callable(answer):
        return Feedback(WRONG, "Expected a function such as my_pad(words, max_sequence_length, truncate=False), "
                               f"got {describe(answer)}.", readable=False)
    words = list(_WORDS) * (max_sequence_length // len(_WORDS) + 1)
    # Its numbers would be right: only its calls tell the package's own function from a fix written by hand.
    if calls_any(lambda: [_run_pad(answer, s, max_sequence_length, **cut)
                          for s in (words[:max_sequence_length // 2], words[:max_sequence_length + 3])
                          for cut in ({}, {"truncate": True})], [tokens.pad]):
        return Feedback(MISTAKE, "It calls the package's own tokens.pad, the function this exercise asks you to write: "
                                 "check the length yourself, raise ValueError when len(words) > max_sequence_length, "
                                 "and pad with \"<PAD>\".")
    feedback = _judge_pad(answer, max_sequence_length)
    if not feedback.correct:
        return feedback
    # A number written in for max_sequence_length passes at that length only: a longer one tells.
    other = max_sequence_length + 3
    again = _judge_pad(answer, other)
    if again.correct:
        return Feedback(CORRECT, f"{feedback.message} It also works at max_sequence_length={other}, a second length "
                                  "the checker tried.")
    kind, result, _ = _run_pad(answer, words[:max_sequence_length // 2], other)
    if kind == "returned" and isinstance(result, list) and len(result) == max_sequence_length:
        return Feedback(MISTAKE, f"It passed at max_sequence_length={max_sequence_length}, but with "
                                 f"max_sequence_length={other} it still pads to {max_sequence_length} tokens: use the "
                                 "parameter max_sequence_length, not a number written in.")
    return Feedback(again.status, f"It passed at max_sequence_length={max_sequence_length}, but not at {other}. "
                                  f"{again.message}")


def _judge_pad(answer: Callable, max_sequence_length: int) -> Feedback:
    """check_pad_function's verdict at one max_sequence_length."""
    words = list(_WORDS) * ((max_sequence_length + 3) // len(_WORDS) + 1)
    short_sentence, exact = words[:max_sequence_length // 2], words[:max_sequence_length]
    too_long = words[:max_sequence_length + 3]
    expected = short_sentence + [tokens.PAD_TOKEN] * (max_sequence_length - len(short_sentence))

    # A sentence that fits: padded at the end, a new list, the caller's list untouched.
    kind, result, given = _run_pad(answer, short_sentence, max_sequence_length)
    if kind == "raised":
        if refuses(result, answer, short_sentence, max_sequence_length=max_sequence_length):
            return Feedback(WRONG, f"Calling my_pad(words, max_sequence_length={max_sequence_length}) failed with "
                                   f"{error_line(result)}: give the function the parameters (words, max_sequence_length, "
                                   "truncate=False).")
        return Feedback(WRONG, f"For {len(short_sentence)} tokens it raised {error_line(result)}; "
                               "a sentence that fits is padded.")
    if given != short_sentence:
        return Feedback(MISTAKE, "It changed the list it was given (append, extend or +=): return a new list, "
                                 "words + [\"<PAD>\"] * n, so the caller's sentence stays as it was.")
    if not isinstance(result, list):
        return Feedback(WRONG, f"For {len(short_sentence)} tokens it returned {describe(result)}; expected a list of tokens.")
    if result != expected:
        if result == [tokens.PAD_TOKEN] * (len(expected) - len(short_sentence)) + short_sentence:
            return Feedback(MISTAKE, "The padding is in front: put <PAD> after the words, so position 0 is the first word.")
        if len(result) == max_sequence_length and result[: len(short_sentence)] == short_sentence:
            return Feedback(MISTAKE, f"Pad with {tokens.PAD_TOKEN!r}, the token the vocabulary knows as id 0; got "
                                     f"{short(result[len(short_sentence):])}.")
        # Said in counts and at the first difference: two long lists, cut short alike, would read the same.
        if len(result) != len(expected):
            return Feedback(WRONG, f"For {len(short_sentence)} tokens and max_sequence_length={max_sequence_length} it "
                                   f"returned {len(result)} tokens; expected {len(expected)}, the {len(short_sentence)} "
                                   f"words and then {len(expected) - len(short_sentence)} <PAD>s.")
        at = next(i for i, (got, want) in enumerate(zip(result, expected)) if got != want)
        return Feedback(WRONG, f"For {short(short_sentence)} and max_sequence_length={max_sequence_length} it returned "
                               f"{short(result[at])} at position {at}; expected {expected[at]!r}.")

    # An empty sentence: all padding.
    kind, result, _ = _run_pad(answer, [], max_sequence_length)
    if kind == "raised" or result != [tokens.PAD_TOKEN] * max_sequence_length:
        got = error_line(result) if kind == "raised" else short(result)
        return Feedback(WRONG, f"For an empty sentence it gave {got}; expected {max_sequence_length} <PAD>s.")

    # A sentence of exactly max_sequence_length tokens fits: the off-by-one refuses it.
    kind, result, _ = _run_pad(answer, exact, max_sequence_length)
    if kind == "raised" and _same_as_given(answer, (short_sentence, exact, too_long), max_sequence_length):
        # Handed in unchanged: the symptom only, so that finding the bug is still the learner's.
        return Feedback(MISTAKE, "This behaves exactly like the function as given, so the bug is still there. "
                                 f"Call it on a sentence of exactly max_sequence_length={max_sequence_length} tokens, "
                                 "which fits, and see what it does.")
    if kind == "raised":
        return Feedback(MISTAKE, f"It refuses a sentence of exactly max_sequence_length={max_sequence_length} tokens "
                                 f"({error_line(result)}): refuse only len(words) > max_sequence_length.")
    if result != exact:
        return Feedback(WRONG, f"For exactly {max_sequence_length} tokens it returned {short(result)}; such a sentence "
                               "fits and comes back as it is.")

    # A sentence too long by three tokens, then by one and by two: refused with ValueError, never cut.
    raised = []
    for longer in (too_long, words[:max_sequence_length + 1], words[:max_sequence_length + 2]):
        kind, result, _ = _run_pad(answer, longer, max_sequence_length)
        if kind == "returned":
            extra = len(longer) - max_sequence_length
            dropped = f"{extra} token was" if extra == 1 else f"{extra} tokens were"
            if isinstance(result, list) and result == longer[:max_sequence_length]:
                swapped_kind, swapped_error, _ = _run_pad(answer, longer, max_sequence_length, truncate=True)
                if swapped_kind == "raised" and not isinstance(swapped_error, TypeError):
                    return Feedback(MISTAKE, f"With truncate=False it cut {len(longer)} tokens to {max_sequence_length}, "
                                             "and with truncate=True it raised: the two cases are swapped.")
                return Feedback(MISTAKE, f"For {len(longer)} tokens, more than max_sequence_length={max_sequence_length}, "
                                         f"it cut to {max_sequence_length}: its last {dropped} dropped without a word. Unless "
                                         "truncate=True, refuse every len(words) > max_sequence_length with ValueError.")
            return Feedback(MISTAKE, f"For {len(longer)} tokens, more than max_sequence_length={max_sequence_length}, "
                                     f"it returned {short(result)} instead of raising ValueError: refuse every "
                                     "sentence longer than max_sequence_length.")
        raised.append(result)
    result = raised[0]  # the error for too_long, which the messages below quote
    if isinstance(result, AssertionError):
        return Feedback(MISTAKE, "An assert refuses it, but `python -O` removes every assert, and then nothing does: "
                                 "raise ValueError.")
    if not isinstance(result, ValueError):
        return Feedback(MISTAKE, f"It raised {error_line(result)}: raise ValueError, Python's error for a value outside "
                                 "what is allowed, so that a caller can catch exactly that.")
    refused = error_line(result)

    # Asked to cut: the first max_sequence_length tokens; a sentence that fits is still padded.
    for longer in (too_long, words[:max_sequence_length + 1]):
        kind, result, given = _run_pad(answer, longer, max_sequence_length, truncate=True)
        if given != longer:
            return Feedback(MISTAKE, f"With truncate=True, it changed the list it was given: the caller's {len(longer)} "
                                     f"tokens are now {len(given)}. Return a new list, such as "
                                     "words[:max_sequence_length], so the caller's sentence stays as it was.")
        if kind == "raised":
            if refuses(result, answer, longer, max_sequence_length=max_sequence_length, truncate=True):
                return Feedback(WRONG, f"Calling it with truncate=True failed with {error_line(result)}: add the "
                                       "parameter, my_pad(words, max_sequence_length, truncate=False).")
            return Feedback(MISTAKE, f"With truncate=True, {len(longer)} tokens still raised an error ({error_line(result)}). "
                                     f"The caller asked for a cut, so return the first {max_sequence_length}.")
        if result != longer[:max_sequence_length]:
            if result == longer[-max_sequence_length:]:
                return Feedback(MISTAKE, f"With truncate=True, for {len(longer)} tokens it kept the last "
                                         f"{max_sequence_length}: keep the first ones, words[:max_sequence_length].")
            got = f"{len(result)} tokens" if isinstance(result, list) else short(result)
            return Feedback(WRONG, f"With truncate=True, for {len(longer)} tokens it returned {got}; expected "
                                   f"the first {max_sequence_length} tokens, {short(longer[:max_sequence_length])}.")
    kind, result, _ = _run_pad(answer, short_sentence, max_sequence_length, truncate=True)
    if kind == "raised" or result != expected:
        got = error_line(result) if kind == "raised" else short(result)
        return Feedback(MISTAKE, f"With truncate=True, {len(short_sentence)} tokens gave {got}; expected them padded to "
                                 f"{max_sequence_length}. "
                                 "Cutting only shortens a sentence too long: one that fits is still padded.")
    return Feedback(CORRECT, f"Correct: a {len(short_sentence)}-token sentence was padded to {max_sequence_length}, and a "
                             f"{max_sequence_length}-token one came back unchanged. {max_sequence_length + 1}, "
                             f"{max_sequence_length + 2} and {len(too_long)} tokens were refused ({refused}), and cut to "
                             f"{max_sequence_length} with truncate=True.")


@exercise("the shape of a one-hot matrix", prediction=True)
def check_one_hot_shape(answer: object, *, corpus: Sequence[str], sentence: str, max_sequence_length: int) -> Feedback:
    """The shape of the one-hot matrix of `sentence`, padded to max_sequence_length, against the vocabulary built from
    `corpus`, as `tokens.build_vocabulary` builds it. A tuple, a list, a torch.Size or a 1-D tensor or array is read."""
    corpus = check_str_list("corpus", corpus, if_str="wrap it in a list")
    words = tokens.tokenize(check_str("sentence", sentence))
    length = check_size("max_sequence_length", max_sequence_length, maximum=100_000)
    if not corpus or len(words) > length:
        raise ValueError(f"the exercise needs a corpus and a sentence of at most max_sequence_length={length} tokens, "
                         f"got {len(corpus)} sentences and {len(words)} tokens")
    size = tokens.build_vocabulary(corpus).vocab_size
    expected = (length, size)
    if answer is None:
        return not_attempted("a pair (rows, columns)")
    shape = as_shape(answer)
    if shape is None or len(shape) != 2:
        return Feedback(WRONG, f"Expected a pair (rows, columns) such as (4, 7), got {describe(answer)}.", readable=False)
    if shape == expected:
        # The run below the checker prints the shape, so the message gives the reason, not the numbers again.
        return Feedback(CORRECT, f"Correct: one row per padded token, and one column per vocabulary entry "
                                 f"(<PAD>, <UNK> and {size - 2} tokens).")
    if shape == expected[::-1]:
        return Feedback(MISTAKE, f"Transposed: rows are the {length} padded tokens, columns the {size} vocabulary "
                                 f"entries, so (max_sequence_length, vocab_size) = {expected}.")
    rows, columns = shape
    special = len(tokens.SPECIAL_TOKENS)
    cased = tokens.build_vocabulary(corpus, lowercase=False).vocab_size
    every_token = sum(len(tokens.tokenize(line)) for line in corpus)
    # Each side gets a note: a named mistake where one fits, else what the side counts (without the number).
    before_padding = rows == len(words) != length
    longest = max(corpus, key=lambda line: len(tokens.tokenize(line)))
    marks = sum(1 for token in tokens.tokenize(longest) if not token.isalnum())
    words_only = (not before_padding and marks and length == len(tokens.tokenize(longest))
                  and rows == length - marks)
    lengths = [len(tokens.tokenize(line)) for line in corpus]
    shorter = not before_padding and not words_only and length == max(lengths) and rows == min(lengths) != length
    running_length = not words_only and not shorter and rows == example.MAX_SEQUENCE_LENGTH != length
    named_rows = before_padding or words_only or shorter or running_length
    rows_note = (f"{rows} rows is the sentence before padding: it is padded to max_sequence_length = {length} tokens, "
                 "one row each." if before_padding else
                 f"{rows} rows counts only the words: a punctuation mark, such as the full stop, is a token too. So the "
                 f"longer sentence has {length} tokens, one row each." if words_only else
                 f"{rows} rows pads to the {'shorter' if len(corpus) == 2 else 'shortest'} sentence of the corpus: "
                 f"pad to the {'longer' if len(corpus) == 2 else 'longest'} one's {length} tokens, one row each."
                 if shorter else
                 f"{rows} rows pads to the running example's max_sequence_length. Here the sentence is padded to "
                 f"max_sequence_length = {length} tokens, one row each." if running_length else
                 f"{rows} rows: there is one row per token after padding." if rows != length else "")
    columns_mistakes = [
        (columns == size - special, f"{columns} columns leaves out the special tokens: the vocabulary starts with <PAD> "
                                    "and <UNK>."),
        (columns == cased != size, f"{columns} columns counts a word with and without its capital letter as two "
                                   "entries: the tokens are lower-cased first, so 'The' and 'the' are one."),
        (columns == every_token != size - special,
         f"{columns} columns counts a token each time it occurs, without <PAD> and <UNK>: the vocabulary lists "
         "<PAD>, <UNK> and each token once."),
        (columns == every_token + special and every_token != size - special,
         f"{columns} columns counts a token each time it occurs: the vocabulary lists each token once."),
        (columns in (size - 1, size + 1), f"{columns} columns is one {'short' if columns < size else 'too many'}: count "
                                          "<PAD>, <UNK> and each token of the corpus once, lower-cased, punctuation "
                                          "marks included."),
    ]
    # The running example's vocab_size, copied: for a small corpus it can equal a count of every occurrence too.
    running_size = tokens.build_vocabulary(example.CORPUS).vocab_size
    if running_length and columns == running_size != size:
        return Feedback(MISTAKE, f"You said {shape}, the running example's shape. Here the sentence is padded to "
                                 f"max_sequence_length = {length} tokens, one row each. The vocabulary is built from the "
                                 "exercise's corpus: <PAD>, <UNK> and each of its tokens once.")
    if columns == running_size != size:
        also = [f"It is also {what}. " for matches, what in (
            (columns == every_token, "the corpus's tokens counted each time they occur, without <PAD> and <UNK>"),
            (columns == every_token + special, "<PAD>, <UNK> and the corpus's tokens counted each time they occur"))
            if matches]
        columns_mistakes.insert(0, (True, f"{columns} columns is the running example's vocab_size. {''.join(also)}Here "
                                          "the vocabulary is built from the exercise's corpus: <PAD>, <UNK> and "
                                          "each of its tokens once."))
    named_columns = next((note for matches, note in columns_mistakes if matches), None) if columns != size else None
    columns_note = named_columns or (f"{columns} columns: there is one column per vocabulary entry, <PAD> and <UNK> "
                                     "included." if columns != size else "")
    notes = " ".join(note for note in (rows_note, columns_note) if note)
    return Feedback(MISTAKE if named_rows or named_columns else WRONG, f"You said {shape}. {notes}")
