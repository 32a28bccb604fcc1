"""Figures for the suite: pure functions that take numbers and return a matplotlib Figure.

    style      colours (one per position scheme: SCHEME_COLOURS), line looks, a new figure, show / save
    matrices   the encoding table, any small matrix, several on one scale, the similarity of rows
    curves     columns over positions, denominators, errors, accuracies, timings
    diagrams   the pipeline, the Transformer and stack + flatten, drawn for images/
    real_pipeline  notebook 15: subword tokens, padding side, packing masks, the KV cache
    stretching     notebook 16: wavelengths per base, frequencies before and after each scaling rule

Every public name of these modules is importable from `posenc.plots` itself. The
explorers' own figures live with their explorer, in `posenc.explorers`.
"""

from . import curves, diagrams, matrices, real_pipeline, stretching, style
from .curves import *  # noqa: F403
from .diagrams import *  # noqa: F403
from .matrices import *  # noqa: F403
from .real_pipeline import *  # noqa: F403
from .stretching import *  # noqa: F403
from .style import *  # noqa: F403

__all__ = [*style.__all__, *matrices.__all__, *curves.__all__, *diagrams.__all__, *real_pipeline.__all__,
           *stretching.__all__]
