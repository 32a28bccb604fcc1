"""Explorers: sliders that redraw a picture at once, one module per explorer.

    encoding_explorer   EncodingExplorer: the sinusoidal table as heatmap, curves, wavelengths, similarity
    pipeline_explorer   PipelineExplorer: a sentence -> padded tokens, one-hot, X, PE, X + PE
    scheme_explorer     SchemeExplorer: one view per position scheme (RoPE, ALiBi, a learned table)

All three are anywidgets: Python holds the settings and what only the package computes; each explorer's .js file
(after the shared explorer_common.js, see _front_end.py) computes and draws the rest in the page, so it moves without
a kernel, on a static page too. Where widgets cannot render, each shows a still picture and NO_FRONT_END_HINT.
The names below are re-exported from their modules (each lists its own in `__all__`; this package lists none).
"""

from ._front_end import NO_FRONT_END_HINT as NO_FRONT_END_HINT
from .encoding_explorer import VIEWS as VIEWS
from .encoding_explorer import EncodingExplorer as EncodingExplorer
from .pipeline_explorer import PipelineExplorer as PipelineExplorer
from .scheme_explorer import SCHEME_VIEWS as SCHEME_VIEWS
from .scheme_explorer import SchemeExplorer as SchemeExplorer
