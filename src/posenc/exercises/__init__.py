"""Answer checkers for the notebooks' exercises: they name the mistake, not just "wrong".

    feedback      the core: Feedback, progress(), reading an answer, first_mistake
    tokens        a padding function that refuses a sentence too long, the shape of a one-hot matrix
    embedding     the gradient a loss gives each row of W_E, the rows one AdamW step changes
    encoding      the table, the shape of a table built from X.shape
    modules       a positional-encoding module with its length check fixed, one module for both layouts of a batch
    wavelengths   where a column first turns negative, any column's wavelength, the last column that completes a
                  full turn within a table, the positions before half the columns turn, the shift as a rotation,
                  the pairs that still turn with LoFTR's unbracketed scale
    precision     a table whose angles no longer drift, positions in bfloat16
    attention     how many different outputs without PE, a repair of the weights masked after the softmax, one
                  head's score from the heads', where a head lands once heads are folded into the batch
    schemes       RoPE undone, RoPE's cos/sin tables column by column, ALiBi's slopes, the score terms that keep the offset
    predictions   "predict, then run": check_prediction, and check_choice for a multiple choice
    choices       the notebooks' multiple-choice questions, so the cell a learner runs holds no answer key
    explained     the predictions whose explanation would give the answer away in the learner's cell
    batching      a batch fed batch first to a module built for (seq, batch, d_model) (the sequence size it read, the
                  fix), a packed row's mask
    pipeline      position ids of a left-padded batch, a cached loop's new positions, the keys a RoPE cache
                  holds
    stretching    how much a pair's wavelength grows with the base, the pairs YaRN keeps, the columns of a partly
                  turned head whose pair makes a full turn within a length, the two rules that carry the copy model
                  furthest over several seeds

Every checker is importable from `posenc.exercises` itself: this face re-exports each topic's `__all__`, and
names them in no `__all__` of its own, so each checker has one home.

The encoding checker recognises the usual mistakes by rebuilding the table with
each mistake made on purpose and comparing: sine and cosine swapped, exponent `i`
instead of `2i`, `2i` applied to the odd index too, halves concatenated instead of
interleaved, positions starting at 1, the wrong size in the denominator, a
transposed table, float64 where float32 was asked, and `d_model + 1` columns for
an odd `d_model`. The mask-repair checker runs the learner's function on new weights and
masks, and names no repair, the bug itself, row sums without keepdim, column sums, a
second softmax and the mask on the rows. The wavelength-growth
checker names the bases' own ratio, the frequency's factor and another pair's. The undo-RoPE
checker: the rows turned on (the package's own apply_rotary) instead of back, the half-split layout instead of
interleaved pairs, positions from 1, exponent `i`
instead of `2i`, and nothing undone; the cos/sin-table checker the tables left as they were, one of them fixed,
the two swapped, the sign of sin, and the turned queries given instead of tables. The ALiBi checker: slopes from 2^0, the
exponent's sign, the order reversed, and the rule for another head count. The encoding
checker also recognises the angle multiplied by the denominator instead of divided, the
wrong base, and degrees taken for radians; the shift checker degrees. The folded-entry checker: one `view`, folded
head-major, every num_heads-th column, the right head of sequence 0 and another head of the right sequence. The
one-head-score checker: the plain sum of the heads' scores, their mean, one head's own score, and an answer 0.5 to 1 %
off (sqrt(num_heads) rounded too far). The module checker names a
module written for (seq, batch, d_model); the position-ids checker pads at a position no table need have; the
drift-fix checker, which runs the learner's builder on new sizes, a denominator still float32, float32 angles, and
the angle cast before its sine.
The batch-first checker names the bug's own output (the sequences mixed at each position) and its half-fixes; the
document-mask checker, which runs the learner's function on new lengths, the causal mask alone (attention across
documents), the blocks without the triangle and the mask inverted.
Where an exercise asks for something by hand, the table, padding-function and module checkers name the package's own
answer (a table its builders made, tokens.pad, its PositionalEncoding, attention.packed_mask) as not the exercise.
"""

from .attention import *  # noqa: F403
from .batching import *  # noqa: F403
from .choices import *  # noqa: F403
from .embedding import *  # noqa: F403
from .encoding import *  # noqa: F403
from .explained import *  # noqa: F403
from .feedback import Feedback as Feedback
from .feedback import Progress as Progress
from .feedback import progress as progress
from .feedback import reset_progress as reset_progress
from .modules import *  # noqa: F403
from .pipeline import *  # noqa: F403
from .precision import *  # noqa: F403
from .predictions import *  # noqa: F403
from .schemes import *  # noqa: F403
from .stretching import *  # noqa: F403
from .tokens import *  # noqa: F403
from .wavelengths import *  # noqa: F403
