"""posenc: from a sentence to the matrix a Transformer's attention reads.

    example     the walkthrough's running example: sentence, corpus, max_sequence_length, d_model
    tokens      sentence -> tokens -> padded ids -> one-hot rows
    positions   position ids: one function, by slot, by attention mask, by document, from an offset
    embedding   one-hot rows @ W_E -> X (and why that is an embedding lookup)
    encoding    the sinusoidal positional encoding PE, step by step
    builder     the table as the package builds it, within 2e-7 at every position; the column frequencies
    _checks     the check primitives (sizes, tensors, the memory guard, `@checked`); each function's own rules
                sit beside it
    attention   X + PE -> Q, K, V -> heads, masks, and `attend`: the one attention core of the package
    plots       matplotlib figures (pure functions returning a Figure): style, matrices, curves, diagrams
    explorers   the explorers: anywidgets that compute and draw in the page, one module each
    exercises   answer checkers that name the learner's mistake, by topic, on a shared feedback core
    schemes     other position schemes: a learned table, rotary (RoPE, one rotation), ALiBi (one bias)
    task        the order tasks (previous token, repeat the block) and the order-blind guess
    models      the tiny Transformers trained live, a file per job: transformer (the model), training (one
                training loop, one evaluation), copy_task (the copy task's RoPE decoder, stretched), decoder (a
                decoder with a KV cache)
    rope_scaling  RoPE's frequencies and the rules that stretch a context (PI, NTK, YaRN, Llama 3.1)
    subwords    a byte-level BPE trained on the notebooks' text: positions count pieces
"""

# The package's face: a few names re-exported from their one home (`import x as x` marks a re-export, and no
# `__all__` here lists them a second time).
from .builder import sinusoidal_encoding as sinusoidal_encoding
from .encoding import PositionalEncoding as PositionalEncoding
from .encoding import stepwise_encoding as stepwise_encoding

__version__ = "0.1.0"
