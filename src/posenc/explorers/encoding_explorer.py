"""EncodingExplorer: the sinusoidal table and four ways of looking at it, drawn by the browser.

    views: heatmap (optionally with the concatenated layout beside it), curves (a column and
    its sin/cos partner over positions), wavelengths, similarity (PE[p] . PE[q])

An `anywidget` widget: Python holds the settings (traitlets, synced with the page); the front end,
encoding_explorer.js beside this file (after explorer_common.js), computes the table, the wavelengths and the
similarity itself and draws them on a canvas in the same event as the key press. The same module runs in JupyterLab, VS Code,
Colab and on a static page (a saved notebook keeps the module and the settings), so the explorer moves
without a kernel. Where widgets cannot render, the output is a still picture of the table and one line
saying how to make it move.
"""

from __future__ import annotations

import anywidget
import traitlets

from .. import plots
from .._checks import check_flag, check_size, one_of
from ..builder import DEFAULT_BASE, sinusoidal_encoding
from ._front_end import NO_FRONT_END_HINT, check_slider_base, module, still_picture

__all__ = ["VIEWS", "MAX_ENTRIES", "STILL_HINT", "EncodingExplorer"]

VIEWS = ("heatmap", "curves", "wavelengths", "similarity")
# The front end computes the table directly (one float64 angle per entry), as the package does up to 2^16 entries.
MAX_ENTRIES = 1 << 16
SLIDER_MAX = 256  # the size sliders' end: 256 x 256 is 2^16 entries
# The one line beside the still picture, as every explorer says it (and tests/lab_browser.py looks for it).
STILL_HINT = NO_FRONT_END_HINT


class EncodingExplorer(anywidget.AnyWidget):
    """Sliders for the sinusoidal table and four ways of looking at it, computed and drawn in the browser.

    >>> explorer = EncodingExplorer(d_model=16, max_sequence_length=20)
    >>> explorer.d_model = 15          # the picture in the page follows
    >>> explorer.view = "curves"
    """

    _esm = module("encoding_explorer.js")
    # Any, each checked by its validator below: a wrong type is a TypeError naming the setting, as everywhere in posenc.
    d_model = traitlets.Any(128).tag(sync=True)
    max_sequence_length = traitlets.Any(64).tag(sync=True)
    base = traitlets.Any(DEFAULT_BASE).tag(sync=True)
    position = traitlets.Any(10).tag(sync=True)
    dimension = traitlets.Any(0).tag(sync=True)
    view = traitlets.Any("heatmap").tag(sync=True)
    compare_layouts = traitlets.Any(False).tag(sync=True)

    def __init__(self, *, d_model: int = 128, max_sequence_length: int = 64, base: float = DEFAULT_BASE,
                 position: int = 10, dimension: int = 0, view: str = "heatmap", compare_layouts: bool = False) -> None:
        # A position or dimension past the table's end is moved to its last row or column; the validators below
        # check every setting once all are set (the sizes first).
        super().__init__(d_model=d_model, max_sequence_length=max_sequence_length, base=base,
                         position=min(position, max_sequence_length - 1), dimension=min(dimension, d_model - 1),
                         view=view, compare_layouts=compare_layouts)

    # Every setting checked where it is set, in the constructor or later (explorer.view = ...): a clear error.
    @traitlets.validate("d_model", "max_sequence_length")
    def _size(self, proposal):
        return check_size(proposal["trait"].name, proposal["value"], maximum=SLIDER_MAX)

    @traitlets.validate("position", "dimension")
    def _index(self, proposal):
        name = proposal["trait"].name
        end = (self.max_sequence_length if name == "position" else self.d_model) - 1
        return check_size(name, proposal["value"], minimum=0, maximum=end)

    @traitlets.validate("base")
    def _base(self, proposal):
        return check_slider_base(proposal["value"])

    @traitlets.validate("compare_layouts")
    def _flag(self, proposal):
        return check_flag("compare_layouts", proposal["value"])

    @traitlets.validate("view")
    def _view(self, proposal):
        return one_of(VIEWS)("view", proposal["value"])

    @traitlets.observe("d_model", "max_sequence_length")
    def _fit(self, change) -> None:
        # A smaller table moves the chosen position and dimension to its last row and column.
        self.position = min(self.position, self.max_sequence_length - 1)
        self.dimension = min(self.dimension, self.d_model - 1)

    def picture(self) -> bytes:
        """The still picture (PNG): the table at the current settings as a heatmap, with the line `STILL_HINT`."""
        table = sinusoidal_encoding(max_sequence_length=self.max_sequence_length, d_model=self.d_model, base=self.base)
        return still_picture(plots.encoding_heatmap(table))

    def _repr_mimebundle_(self, **kwargs):
        bundle = super()._repr_mimebundle_(**kwargs)
        data, metadata = bundle if isinstance(bundle, tuple) else (bundle, {})
        data["text/plain"] = STILL_HINT
        data["image/png"] = self.picture()
        return data, metadata
