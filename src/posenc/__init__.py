"""posenc: from a sentence to the matrix a Transformer's attention reads.

    tokens      sentence -> tokens -> padded ids -> one-hot rows
    embedding   one-hot rows @ W_E -> X (and why that is an embedding lookup)
    encoding    the sinusoidal positional encoding PE, step by step and fast
    attention   X + PE -> Q, K, V -> scaled dot-product scores
    plots       matplotlib figures (pure functions returning a Figure)
    widgets     ipywidgets explorers built on plots
    exercises   answer checkers that name the learner's mistake
    schemes     other position schemes: a learned table, rotary (RoPE), ALiBi
    experiment  a tiny Transformer trained live to compare the schemes
"""

from .encoding import PositionalEncoding, sinusoidal_encoding, stepwise_encoding

__version__ = "0.1.0"
__all__ = ["PositionalEncoding", "sinusoidal_encoding", "stepwise_encoding", "__version__"]
