"""The redraw engine every explorer stands on: a picture that redraws only what moves, and a debounced redraw.

How an explorer stays fast: each view is one matplotlib figure, built once; a change
updates that figure's artists in place (`set_data`), recomputes only what the change
touches, and sends the picture as PNG bytes into an `ipywidgets.Image`. A burst of
changes from a dragged slider is debounced: the first change draws at once, the rest
are folded into one trailing redraw.

Because the picture lives in the Image widget's state, a saved notebook shows the
last picture without a kernel, and a front end without widget support shows a
static PNG with one line saying how to get the sliders.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import re
import time
import warnings
from collections.abc import Callable, Iterator, Sequence

import ipywidgets as widgets
from matplotlib.artist import Artist
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from PIL import Image as PILImage

from .._validate import check_base, is_real, is_sequence, short
from ..plots import check_figure

__all__ = ["NO_FRONT_END_HINT", "MAX_SIZE", "BASE_RANGE", "check_slider_base", "base_slider", "check_debounce",
           "Picture", "Debounced", "Explorer"]

NO_FRONT_END_HINT = (
    "If you see this line instead of sliders, this front end cannot show widgets: open the notebook "
    "in JupyterLab (`make lab`), which has ipywidgets installed, and run the cell again."
)
# The largest sizes an explorer starts with: a picture a few hundred pixels wide cannot show more rows or columns.
MAX_SIZE = 512
BASE_EXPONENTS = (0.3, 6)  # the base slider's ends, as powers of 10
BASE_RANGE = (10 ** BASE_EXPONENTS[0], 10 ** BASE_EXPONENTS[1])


def check_slider_base(base: object) -> float:
    """A base the explorers' base slider can show (the slider would move any other value to an end without a word)."""
    base = check_base(base)
    if not BASE_RANGE[0] <= base <= BASE_RANGE[1]:
        raise ValueError(f"base must lie in the slider's range [{BASE_RANGE[0]:.4g}, {BASE_RANGE[1]:.4g}], got {base!r}")
    return base


def base_slider(base: float) -> widgets.FloatLogSlider:
    """The slider for the base of the wavelengths, on a log scale from 10^0.3 to 10^6."""
    return widgets.FloatLogSlider(value=check_slider_base(base), base=10, min=BASE_EXPONENTS[0], max=BASE_EXPONENTS[1],
                                  step=0.05, description="base", style={"description_width": "initial"},
                                  readout_format=".4g")


def check_debounce(debounce: object) -> float:
    """A debounce interval: a number of seconds from 0 to 60."""
    return _seconds(debounce, "debounce")


def _seconds(debounce: object, name: str) -> float:
    # `name` is the argument's name where it was given, for the error message.
    if not is_real(debounce):
        raise TypeError(f"{name} must be a number of seconds from 0 to 60, got {short(debounce)}")
    if not 0 <= debounce <= 60:
        raise ValueError(f"{name} must be a number of seconds from 0 to 60, got {short(debounce)}")
    return float(debounce)


def _encode(canvas: FigureCanvasAgg) -> bytes:
    # zlib level 1 encodes several times faster than matplotlib's default, same picture.
    width, height = canvas.get_width_height(physical=True)
    buffer = io.BytesIO()
    PILImage.frombuffer("RGBA", (width, height), canvas.buffer_rgba(), "raw", "RGBA", 0, 1).save(
        buffer, format="png", compress_level=1
    )
    return buffer.getvalue()


def _check_key(name: str, key: object) -> object:
    """A layout or frame key: None, or a tuple of numbers, strs and such tuples (compared with ==)."""
    if key is None or isinstance(key, (str, bool, int, float)):
        return key
    if isinstance(key, tuple):
        for item in key:
            _check_key(name, item)
        return key
    raise TypeError(f"{name} must be None or a tuple of numbers and str, got {short(key)}")


class Picture:
    """A figure drawn in full once, then redrawn by blitting only the artists that move.

    The axes, ticks, labels and colour bar are drawn once and kept as a background
    bitmap; a slider step restores that bitmap and draws the `moving` artists (marked
    animated) on top. A full draw happens only when `layout` changes (sizes that
    move the axes' limits, ticks or colour bar), and the constrained layout, which
    costs as much as the drawing itself, is recomputed only when `frame` changes
    (the width of the tick labels); in between, the axes keep their place.
    """

    def __init__(self, fig: Figure, moving: Sequence[Artist] = ()) -> None:
        self.fig = check_figure(fig)
        if not is_sequence(moving) or not all(isinstance(a, Artist) and a.get_figure(root=True) is fig for a in moving):
            raise TypeError(f"moving must be a list of artists of fig, got {short(moving)}")
        self.canvas = FigureCanvasAgg(fig)
        self.moving = list(moving)
        for artist in self.moving:
            artist.set_animated(True)
        self._background = None
        self._layout: object = None
        self._frame: object = None

    def render(self, layout: object, frame: object) -> bytes:
        """The picture as PNG bytes: in full if `layout` or `frame` changed since the last call, else blitted."""
        layout, frame = _check_key("layout", layout), _check_key("frame", frame)
        if frame != self._frame:
            self.fig.set_layout_engine("constrained")
        if self._background is None or layout != self._layout or frame != self._frame:
            self.canvas.draw()  # everything but the moving artists
            self._background = self.canvas.copy_from_bbox(self.fig.bbox)
            if frame != self._frame:
                self.fig.set_layout_engine("none")  # keep the axes where they are
            self._layout, self._frame = layout, frame
        else:
            self.canvas.restore_region(self._background)
        for artist in self.moving:
            self.fig.draw_artist(artist)
        return _encode(self.canvas)


class Debounced:
    """Run `action` now if it has been quiet for `interval` seconds, else once when the burst ends."""

    def __init__(self, action: Callable[[], None], interval: float) -> None:
        if not callable(action):
            raise TypeError(f"action must be a function of no arguments, got {short(action)}")
        self.action = action
        self.interval = _seconds(interval, "interval")
        self._last_run = -float("inf")
        self._pending: asyncio.TimerHandle | None = None

    def __call__(self) -> None:
        if self._pending is not None:
            return  # a trailing run is already booked and will see the latest values
        quiet_for = time.monotonic() - self._last_run
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # plain Python (tests, scripts): nothing to wait on
            loop = None
        if loop is None or quiet_for >= self.interval:
            self._run()
        else:
            self._pending = loop.call_later(self.interval - quiet_for, self._run)

    def _run(self) -> None:
        self._pending = None
        self.action()
        self._last_run = time.monotonic()


class Explorer:
    """What every explorer shares: a picture, a message line, a debounced redraw.

    A subclass builds its controls, calls `_watch` on them and defines `redraw`,
    which updates its figure and hands it to `_show`.
    """

    def __init__(self, *, debounce: float) -> None:
        self.image = widgets.Image(format="png", layout=widgets.Layout(max_width="100%"))
        self.message = widgets.HTML()
        self._redraw = Debounced(self.redraw, check_debounce(debounce))
        self._quiet = False
        self.redraws = 0  # how many pictures were drawn: tests use it to see the debounce work

    def redraw(self) -> None:
        """Draw the picture for the controls' current values (each explorer defines it)."""
        raise NotImplementedError(f"{type(self).__name__} must define redraw")

    @contextlib.contextmanager
    def _quietly(self) -> Iterator[None]:
        """Change controls without a redraw per change (e.g. a slider's end moving with a size)."""
        self._quiet = True
        try:
            yield
        finally:
            self._quiet = False

    def _changed(self, change) -> None:
        if self._quiet:
            return
        # A change sent by the browser (a slider being dragged) arrives while ipywidgets
        # holds the property lock: debounce those. A change made by code in a cell is
        # drawn at once, so the cell's output (and the saved notebook) shows it.
        if change["owner"]._property_lock:
            self._redraw()
        else:
            self.redraw()

    def _watch(self, *controls: widgets.Widget) -> None:
        for control in controls:
            control.observe(self._changed, names="value")

    def _show(self, picture: Picture, *, layout: object, frame: object) -> None:
        # Text the font cannot draw (emoji, some scripts) makes matplotlib warn once per glyph; in a widget
        # callback that warning would land in the kernel's log, not where the learner looks: say it here.
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            self.image.value = picture.render(layout, frame)
        missing = sorted({m.group(1) for w in caught if (m := re.search(r"Glyph \d+ \((.*?)\) missing", str(w.message)))})
        for warning in caught:
            if "Glyph" not in str(warning.message):
                warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
        if missing:
            note = f"The picture's font has no glyph for {len(missing)} character(s) of the text; they show as empty boxes."
            self.message.value = "<br>".join(filter(None, [self.message.value, note]))
        self.redraws += 1

    def _repr_mimebundle_(self, **kwargs):
        bundle = self.widget._repr_mimebundle_(**kwargs)
        bundle["text/plain"] = NO_FRONT_END_HINT
        bundle["image/png"] = bytes(self.image.value)  # the picture as it is now, for front ends without widgets
        return bundle
