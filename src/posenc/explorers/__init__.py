"""Explorers: sliders that redraw a picture at once, one module per explorer.

    encoding_explorer   EncodingExplorer: the sinusoidal table as heatmap, curves, wavelengths, similarity
    pipeline_explorer   PipelineExplorer: a sentence -> padded tokens, one-hot, X, PE, X + PE
                        (both anywidgets: computed and drawn in the page by their .js files, after explorer_common.js,
                        so they move without a kernel, on a static page too)
    engine              the kernel-side redraw engine of the scheme explorer: Picture (blitting), Debounced, Explorer
    scheme_explorer     SchemeExplorer: one view per position scheme (RoPE, ALiBi, a learned table)

Each explorer module holds its own pictures and the code that updates them.
"""

from .encoding_explorer import VIEWS, EncodingExplorer
from .engine import NO_FRONT_END_HINT
from .pipeline_explorer import PipelineExplorer
from .scheme_explorer import SCHEME_VIEWS, SchemeExplorer

__all__ = ["EncodingExplorer", "PipelineExplorer", "SchemeExplorer", "VIEWS", "SCHEME_VIEWS", "NO_FRONT_END_HINT"]
