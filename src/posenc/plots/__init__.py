"""Figures for the suite: pure functions that take numbers and return a matplotlib Figure.

    style        colours (one per position scheme: SCHEME_COLOURS), line looks, a new figure, show / save
    matrices     the encoding table, any small matrix, several on one scale, the similarity of rows
    curves       columns over positions, denominators, errors, accuracies, timings
    diagrams     the pipeline, the Transformer and stack + flatten, drawn for images/
    batching     subword pieces, the position ids of a padded batch, a packed row's mask, differences per scheme
    frequencies  wavelengths per base, frequencies before and after each rule that stretches a context, loss
                 curves, accuracies over seeds

Every public name of these modules is importable from `posenc.plots` itself. The
explorers' own figures live with their explorer, in `posenc.explorers`.
"""

from . import batching, curves, diagrams, frequencies, matrices, style
from .batching import *  # noqa: F403
from .curves import *  # noqa: F403
from .diagrams import *  # noqa: F403
from .frequencies import *  # noqa: F403
from .matrices import *  # noqa: F403
from .style import *  # noqa: F403

__all__ = [*style.__all__, *matrices.__all__, *curves.__all__, *diagrams.__all__, *batching.__all__,
           *frequencies.__all__]
