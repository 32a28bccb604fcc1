"""Explorers: sliders that redraw a picture at once, one module per explorer.

    encoding_explorer   EncodingExplorer: the sinusoidal table as heatmap, curves, wavelengths, similarity
    pipeline_explorer   PipelineExplorer: a sentence -> padded tokens, one-hot, X, PE, X + PE
    scheme_explorer     SchemeExplorer: one view per position scheme (RoPE, ALiBi, a learned table)

All three are anywidgets: Python holds the settings and what only the package computes; each explorer's .js file
(after the shared explorer_common.js, see _front_end.py) computes and draws the rest in the page, so it moves without
a kernel, on a static page too. Where widgets cannot render, each shows a still picture and NO_FRONT_END_HINT.
"""

from ._front_end import NO_FRONT_END_HINT
from .encoding_explorer import VIEWS, EncodingExplorer
from .pipeline_explorer import PipelineExplorer
from .scheme_explorer import SCHEME_VIEWS, SchemeExplorer

__all__ = ["EncodingExplorer", "PipelineExplorer", "SchemeExplorer", "VIEWS", "SCHEME_VIEWS", "NO_FRONT_END_HINT"]
