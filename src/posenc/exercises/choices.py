"""The multiple-choice questions: each option's explanation and the right choice live here, not in the cell the
learner runs, so the answer key is not on the screen when the learner chooses.

Each checker hands its question to `check_choice` (predictions.py), which names the choice made, says why it is
right or wrong, and keeps the answer out of `progress()`.
"""

from __future__ import annotations

import re

import torch

from ..schemes import rotation_matrix
from .feedback import Feedback
from .predictions import check_choice

__all__ = [
    "check_alibi_without_the_mask",
    "check_added_at_every_position",
    "check_average_of_shuffled_outputs",
    "check_causal_model_without_positions",
    "check_embedding_factor",
    "check_every_score_plus_five",
    "check_half_turned_heads",
    "check_llama_4_rule",
    "check_rope_in_a_packed_row",
    "check_rope_self_score_peak",
    "check_shift_back",
    "check_sinusoidal_head_on_32_tokens",
    "check_smaller_model_word_row",
    "check_transposed_row_meaning",
]


_EVERY_SCORE_PLUS_FIVE = {
    "a": "Each exp(s) grows by e^5, but so does the row's sum, and the factor cancels.",
    "b": "e^(s + 5) = e^5 e^s: every exp(s) grows by the same factor e^5, the largest and the smallest alike. The "
         "row's sum grows by e^5 too, so each weight, its share of the sum, stays the same.",
    "c": "Adding moves every score alike and keeps their differences, and the differences alone set the weights. "
         "Dividing the scores, as by sqrt(d_k), is what evens the weights out.",
    "d": "softmax(s + c) = e^c e^s / (e^c sum(e^s)) = softmax(s). Only the differences between scores count.",
}


def check_every_score_plus_five(answer: object) -> Feedback:
    """A multiple choice: every score + 5: what happens to the weights."""
    return check_choice(answer, options=_EVERY_SCORE_PLUS_FIVE, correct="d",
                        question="every score + 5: what happens to the weights?")


_ADDED_AT_EVERY_POSITION = {
    "a": "PE[1] is the same at every position, so each word gets the same addition wherever it moves.",
    "b": "Reversed, PE's rows still differ from one position to the next. john gets PE[0] in one order and PE[3] "
         "in the other, so its output changes.",
    "c": "A small PE is still a PE. Its rows differ, so john's output changes a little. The gap is small, but it "
         "is not 0.",
    "d": "One of them keeps the gap at 0: the one that adds the same vector at every position.",
}

# The notebook's own code or table text for each option names that option too.
_ADDED_AT_EVERY_POSITION_TEXTS = {"pe[1]": "a", "pe[1,:]": "a", "pe[1]ateveryposition": "a", "pe.flip(0)": "b",
                                  "pe.flip(0),therowsofpeinreverseorder": "b", "0.01*pe": "c", "none": "d",
                                  "noneofthem": "d"}


def check_added_at_every_position(answer: object) -> Feedback:
    """A multiple choice: which one, added in place of PE in both runs, keeps the shuffle gap at 0 (no mask)."""
    if isinstance(answer, str):
        answer = _ADDED_AT_EVERY_POSITION_TEXTS.get(answer.strip(" `'\".").lower().replace(" ", ""), answer)
    return check_choice(answer, options=_ADDED_AT_EVERY_POSITION, correct="a",
                        question="what can be added and keep the shuffle gap at 0")


_AVERAGE_OF_SHUFFLED_OUTPUTS = {
    "a": "With no mask the averages match. But the causal mask lets each query see only the keys up to its own "
         "place. john sees only itself at position 0 (in 'john is my name') and all four words at position 3 (in "
         "'my name is john'). So the outputs change, not only their order.",
    "b": "With no mask the outputs are the same rows in a new order, and an average does not depend on the order of "
         "what it adds. With the causal mask, 'differ' is right: the mask changes the output rows themselves.",
    "c": "With no mask, an average ignores the order of its rows. The causal mask changes the output rows "
         "themselves, not just their order, so in general their average changes too.",
    "d": "With no mask the outputs are the same rows in a new order, and an average does not depend on the order of "
         "what it adds. It is the causal mask that changes the output rows themselves.",
}


# Each row of the notebook's table, "no mask, causal mask", names that option too.
_AVERAGE_OF_SHUFFLED_OUTPUTS_TEXTS = {"matchmatch": "a", "differdiffer": "b", "matchdiffer": "c", "differmatch": "d"}


def check_average_of_shuffled_outputs(answer: object) -> Feedback:
    """A multiple choice: the average of the outputs, shuffled, with no mask and with the causal mask (no PE)."""
    if isinstance(answer, str):
        answer = _AVERAGE_OF_SHUFFLED_OUTPUTS_TEXTS.get(re.sub(r"[\s,;/'\".()]+|\band\b", "", answer.lower()), answer)
    return check_choice(answer, options=_AVERAGE_OF_SHUFFLED_OUTPUTS, correct="c",
                        question="the average of the outputs, shuffled")


_SHIFT_BACK = {
    "a": "Negating flips every entry, so each pair turns a further half turn: small[p] @ -R_2 = -small[p + 2], "
         "not small[p - 2].",
    "b": "Turning back by the same angle undoes the turn, and a rotation's inverse is its transpose.",
    "c": "No new cosines or sines are needed. cos(-a) = cos(a) and sin(-a) = -sin(a), so the backward block "
         "[[c, s], [-s, c]] holds the same numbers as [[c, -s], [s, c]]: it is its transpose.",
}


# Each option's own text, as the notebook prints it, names that option too.
_SHIFT_BACK_TEXTS = {"-rotation": "a", "rotation.t": "b", "rotation.t()": "b", "rotation.mt": "b",
                     "rotation.transpose(0,1)": "b", "transpose": "b", "thetranspose": "b", "neither": "c",
                     "r.t": "b", "inverse": "b", "theinverse": "b", "rotation.inverse()": "b",
                     "torch.linalg.inv(rotation)": "b", "torch.inverse(rotation)": "b"}


# The transpose or the inverse written out: rotation.transpose(-1, -2), torch.transpose(rotation, 0, 1),
# "inverse of rotation", "rotation transposed", rotation^-1 (spaces already removed; rotation ** -1 is elementwise).
_SWAP = r"\((0,1|1,0|-1,-2|-2,-1|0,-1|-1,0|1,-2|-2,1)\)"
_SHIFT_BACK_FORMS = re.compile(
    rf"(rotation|r)(\.transpose{_SWAP}|\.swapaxes{_SWAP}|transposed|inverted|\^t|ᵀ|\^-1|\^\{{-1\}}|\^\(-1\)|⁻¹)"
    rf"|torch\.(transpose|swapaxes)\((rotation|r),{_SWAP[2:]}"
    r"|(the)?(transpose|inverse|invert)(of)?(the)?(rotation|r|matrix)")
# R_{-2}, the backward shift itself: the right matrix, but not one of the options.
_BACKWARD_SHIFT = re.compile(r"r_(-2|\{-2\})|(schemes\.)?rotation_matrix\((position=)?-2(,d=6)?\)")


def check_shift_back(answer: object) -> Feedback:
    """A multiple choice: which one operation on R_2 (d_model = 6) shifts a row of the table back by 2."""
    if isinstance(answer, str):
        # The notebook's own name for the matrix, R_2, reads as rotation.
        text = re.sub(r"r_?2(?!\d)", "rotation", answer.strip(" `'\".").lower().replace(" ", ""))
        if _BACKWARD_SHIFT.fullmatch(text):
            refused = check_choice(answer, options=_SHIFT_BACK, correct="b",
                                   question="the shift back by 2 as one operation on R_2 (d_model=6)")
            return Feedback(refused.status, f"{refused.message} {answer.strip()} is the right matrix. Which option "
                                            "builds it from R_2's own numbers?", readable=False)
        answer = "b" if _SHIFT_BACK_FORMS.fullmatch(text) else _SHIFT_BACK_TEXTS.get(text, answer)
    elif isinstance(answer, torch.Tensor) and answer.shape == (6, 6) and answer.is_floating_point() \
            and answer.layout == torch.strided and answer.device.type != "meta":
        # The operation's result itself, -rotation or rotation.T (its inverse), names that option.
        rotation = rotation_matrix(position=2, d=6).to(torch.float64)
        answer = next((key for key, matrix in (("a", -rotation), ("b", rotation.T))
                       if torch.allclose(answer.detach().cpu().to(torch.float64), matrix, atol=1e-4)), answer)
    return check_choice(answer, options=_SHIFT_BACK, correct="b",
                        question="the shift back by 2 as one operation on R_2 (d_model=6)")


_ROPE_SELF_SCORE_PEAK = {
    "a": "The score is sure to peak at offset 0 if the query and the key point the same way. Here q = word @ W_Q "
         "and k = word @ W_K point different ways, and turning k can bring it closer to q's direction than no turn does.",
    "b": "Nothing favours the ends. Each pair adds |q_i| |k_i| cos(angle_i s + phase_i), which rises and falls with "
         "the offset s, so the largest sum can fall at any offset. The figure below shows where it falls here.",
    "c": "The score depends on the positions only through the offset, so both query positions peak at the same offset. "
         "That offset need not be 0, because W_Q and W_K differ. With W_Q = W_K the peak would be at offset 0, "
         "since turning q cannot make its dot product with the unturned q larger than q . q.",
    "d": "The score is the same at every position for a given offset (the two curves below lie on each other), not the "
         "same at every offset.",
    "e": "The angles grow with the position, but the score depends on the positions only through the offset, as the "
         "next section proves. So the peak sits at the same offset for the query at 100 and at 150.",
}


def check_rope_self_score_peak(answer: object) -> Feedback:
    """A multiple choice: where a word's RoPE score with itself peaks."""
    return check_choice(answer, options=_ROPE_SELF_SCORE_PEAK, correct="c",
                        question="where a word's RoPE score with itself peaks")


_ALIBI_WITHOUT_THE_MASK = {"a": "The bias makes the nearest keys the easiest to attend to, and one of the two nearest is the "
         "answer: more than the order-blind guess.",
    "b": "The next section shows why.",
    "c": "Three in four is more than a symmetric ALiBi encoder can average at 16 tokens. It would need to tell the key "
         "before from the key after, and the bias cannot.",
    "d": "Nearly always would need the model to tell the key before from the key after. The bias cannot."
}


def check_alibi_without_the_mask(answer: object) -> Feedback:
    """A multiple choice: the non-causal ALiBi model at the trained length."""
    return check_choice(answer, options=_ALIBI_WITHOUT_THE_MASK, correct="b",
                        question="the non-causal ALiBi model at the trained length")


_SINUSOIDAL_HEAD_ON_32_TOKENS = {
    "a": "Training never showed the head the sinusoidal rows for positions 16 to 31.",
    "b": "PE[p] . PE[q] depends only on q - p, but after W_Q and W_K the head's score depends on where p and q are too "
         "(the notebook on relative positions). Past the trained positions its weight on the token before falls low "
         "(the right panel below).",
    "c": "A query at a trained position still finds its neighbour, even with 16 new keys beside "
         "it.",
}


def check_sinusoidal_head_on_32_tokens(answer: object) -> Feedback:
    """A multiple choice: where the sinusoidal head looks on 32 tokens."""
    return check_choice(answer, options=_SINUSOIDAL_HEAD_ON_32_TOKENS, correct="a",
                        question="where the sinusoidal head looks on 32 tokens")


_CAUSAL_MODEL_WITHOUT_POSITIONS = {
    "a": "At 32 tokens the order-blind guess is 0.29, and the model scores well above it.",
    "b": "At 32 tokens the model meets key counts that no training input had, and it keeps only some of the order.",
    "c": "Most of the order holds at the trained lengths: at 16 tokens the model is right nearly 9 times in 10. At 32, "
         "query t meets key counts that no training input had, and counting the keys serves it less well.",
}


def check_causal_model_without_positions(answer: object) -> Feedback:
    """A multiple choice: a causal model without positions at length 32, twice the trained length."""
    return check_choice(answer, options=_CAUSAL_MODEL_WITHOUT_POSITIONS, correct="b",
                        question="a causal model without positions at length 32")


_SMALLER_MODEL_WORD_ROW = {
    "a": "At std 0.02 a word row is about 0.02 d_model long, against sqrt(d_model / 2) for a PE row: at d_model = 32, "
         "0.64 against 4. The factor restores the length only when W_E starts at std 1/sqrt(d_model).",
    "b": "A word row's entries have standard deviation 0.02 sqrt(d_model), and there are d_model of them, so the row is "
         "about 0.02 d_model long. A PE row is sqrt(d_model / 2) long. The ratio word / PE, 0.02 sqrt(2 d_model), "
         "grows with d_model.",
    "c": "The word row is shorter, but its length grows like d_model, and a PE row's only like sqrt(d_model / 2): each "
         "sin, cos pair adds sin² + cos² = 1 to the squared length. So word / PE, 0.02 sqrt(2 d_model), grows. "
         "(PE / word falls, but the question asks about word / PE.)",
    "d": "At d_model = 32 a word row is shorter, not longer: about 0.02 d_model = 0.64 long, against sqrt(d_model / 2) "
         "= 4 for a PE row. And "
         "word / PE, 0.02 sqrt(2 d_model), grows with d_model.",
}


def check_smaller_model_word_row(answer: object) -> Feedback:
    """A multiple choice: std 0.02 times sqrt(d_model) at d_model = 32: a word row against a PE row, and word / PE as
    d_model grows."""
    return check_choice(answer, options=_SMALLER_MODEL_WORD_ROW, correct="b",
                        question="a word row of std 0.02 times the factor against a PE row, as d_model grows")



_EMBEDDING_FACTOR = {"a": "The factor helped the sinusoidal model in every seed we tried. Our guess: without it, a "
         "trained token row is about a quarter as long as a PE row (norm 0.95 against 4), at every position. So the model "
         "leans on position. Past the trained positions, the PE rows are new to it, and they steer it wrong.",
    "b": "Rotary changed by less than 0.02 at 32 tokens. The sinusoidal model's accuracy dropped more.",
    "c": "LayerNorm rescales the whole row, token + PE, but not the balance inside it. Without the factor, the "
         "token's part shrinks against its position."
}


def check_embedding_factor(answer: object) -> Feedback:
    """A multiple choice: what the sqrt(d_model) factor does to sinusoidal and rotary at length 32."""
    return check_choice(answer, options=_EMBEDDING_FACTOR, correct="a",
                        question="what the sqrt(d_model) factor does to sinusoidal and rotary at length 32")


_ROPE_IN_A_PACKED_ROW = {"a": "With a plain causal mask the later documents still read the earlier ones: their keys "
         "are in the softmax, and the outputs change.",
    "b": "The document mask keeps each document to itself. Along the row, every token of a document moves by the same "
         "amount, so the offsets between its tokens do not change (section 2).",
    "c": "With the document mask, RoPE does not need the restart. Restarted ids matter only when transformers must "
         "build the mask from them (the end of this section).",
    "d": "Without the document mask the later documents read the earlier ones."
}


def check_rope_in_a_packed_row(answer: object) -> Feedback:
    """A multiple choice: what RoPE needs in a packed row."""
    return check_choice(answer, options=_ROPE_IN_A_PACKED_ROW, correct="b",
                        question="what RoPE needs in a packed row")


_HALF_TURNED_HEADS = {
    "better": "The unturned half meets no new angle at 2x, a fair reason to expect it. But in every seed the "
              "model with half heads fell to chance at 64 tokens.",
    "worse": "The model with half heads fell to chance at 64 tokens in every seed.",
    "the same": "The two differ by far at 64 tokens: the model with half heads fell to chance in every seed.",
}


def check_half_turned_heads(answer: object) -> Feedback:
    """A multiple choice: half heads, plain RoPE at 2x."""
    return check_choice(answer, options=_HALF_TURNED_HEADS, correct="worse",
                        question="half heads, plain RoPE at 2x")


_LLAMA_4_RULE = {
    "a": "The divisor 16 is right, but high_freq_factor changed too. It is the bound, in turns within L, above which "
         "a pair is kept, and Scout moves it from 4 turns to 1.",
    "b": "The kept and blended pairs are right, but factor sets the divisor. Scout's factor is 16, so its slow pairs "
         "are divided by 16, not 8.",
    "c": "The divided pairs are those under low_freq_factor turns within L. low_freq_factor stays 1, so the same 29 "
         "are divided.",
    "d": "Both bounds sit at 1 turn within L, so the 6 pairs Llama 3.1 blends are now kept and none is left to "
         "blend.",
}


def check_llama_4_rule(answer: object) -> Feedback:
    """A multiple choice: Llama 4's rule against Llama 3.1's."""
    return check_choice(answer, options=_LLAMA_4_RULE, correct="d",
                        question="Llama 4's rule against Llama 3.1's")


_TRANSPOSED_ROW_MEANING = {
    "a": "Row 2 of table.T is column 2 of table, not row 2. A column of the table holds one wave, read at each "
         "position, not the sines and cosines of one position.",
    # One sentence: the run below prints the row next to row 2 of PE, so the message does not explain it again.
    "b": "Row 2 of table.T is column 2 of table, a slice of one sine wave across positions.",
    "c": "Each entry of row 2 of table.T comes from a different position of the swapped table, sin(pos / 10000^(2/d)) "
         "for pos = 0 to L - 1. Its first entry is sin(0) = 0. These are not the numbers of position 2 in another "
         "order.",
}


def check_transposed_row_meaning(answer: object) -> Feedback:
    """A multiple choice: what row 2 of table.T, the swapped-sizes table transposed, holds."""
    return check_choice(answer, options=_TRANSPOSED_ROW_MEANING, correct="b",
                        question="what row 2 of table.T holds")
