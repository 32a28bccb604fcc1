"""Explorers: sliders that redraw the encoding at once.

    EncodingExplorer   d_model, max_sequence_length, base, a position and a dimension;
                       views: heatmap, curves, wavelengths, similarity
    PipelineExplorer   a sentence -> padded tokens, one-hot, X, PE, X + PE
    SchemeExplorer     one view per scheme of notebook 13: RoPE's score against the
                       offset, ALiBi's bias per head, a learned table before and after training

How they stay fast: each view is one matplotlib figure, built once; a change
updates that figure's artists in place (`set_data`), recomputes only what the
change touches (the table only when d_model, max_sequence_length or base move),
and sends the picture as PNG bytes into an `ipywidgets.Image`. A burst of changes
from a dragged slider is debounced: the first change draws at once, the rest are
folded into one trailing redraw.

Because the picture lives in the Image widget's state, a saved notebook shows the
last picture without a kernel, and a front end without widget support shows a
static PNG with one line saying how to get the sliders.
"""

from __future__ import annotations

import asyncio
import html
import io
import math
import re
import time
import warnings
from collections.abc import Callable

import ipywidgets as widgets
import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from PIL import Image as PILImage

from . import experiment, plots, schemes, tokens
from ._validate import _short, check_base, check_flag, check_size
from .attention import projection_weights
from .embedding import embedding_matrix, project
from .encoding import DEFAULT_BASE, sinusoidal_encoding, to_concatenated, wavelengths

__all__ = ["EncodingExplorer", "PipelineExplorer", "SchemeExplorer", "NO_FRONT_END_HINT"]

NO_FRONT_END_HINT = (
    "If you see this line instead of sliders, this front end cannot show widgets: open the notebook "
    "in JupyterLab (`make lab`), which has ipywidgets installed, and run the cell again."
)
VIEWS = ("heatmap", "curves", "wavelengths", "similarity")
# The largest sizes an explorer starts with: a picture a few hundred pixels wide cannot show more rows or columns.
MAX_SIZE = 512
BASE_EXPONENTS = (0.3, 6)  # the base slider's ends, as powers of 10
BASE_RANGE = (10 ** BASE_EXPONENTS[0], 10 ** BASE_EXPONENTS[1])


def _check_slider_base(value: object) -> float:
    """A base the explorers' base slider can show (the slider would move any other value to an end without a word)."""
    base = check_base(value)
    if not BASE_RANGE[0] <= base <= BASE_RANGE[1]:
        raise ValueError(f"base must lie in the slider's range [{BASE_RANGE[0]:.4g}, {BASE_RANGE[1]:.4g}], got {base!r}")
    return base


def _base_slider(base: float, style: dict) -> widgets.FloatLogSlider:
    return widgets.FloatLogSlider(value=base, base=10, min=BASE_EXPONENTS[0], max=BASE_EXPONENTS[1], step=0.05,
                                  description="base", style=style, readout_format=".4g")


def _check_debounce(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 60:
        raise ValueError(f"debounce must be a number of seconds from 0 to 60, got {_short(value)}")
    return float(value)


def _encode(canvas: FigureCanvasAgg) -> bytes:
    # zlib level 1 encodes several times faster than matplotlib's default, same picture.
    width, height = canvas.get_width_height(physical=True)
    buffer = io.BytesIO()
    PILImage.frombuffer("RGBA", (width, height), canvas.buffer_rgba(), "raw", "RGBA", 0, 1).save(
        buffer, format="png", compress_level=1
    )
    return buffer.getvalue()


class _Picture:
    """A figure drawn in full once, then redrawn by blitting only the artists that move.

    The axes, ticks, labels and colour bar are drawn once and kept as a background
    bitmap; a slider step restores that bitmap and draws the moving artists (marked
    animated) on top. A full draw happens only when `layout` changes (sizes that
    move the axes' limits, ticks or colour bar), and the constrained layout, which
    costs as much as the drawing itself, is recomputed only when `frame` changes
    (the width of the tick labels); in between, the axes keep their place.
    """

    def __init__(self, fig: Figure, moving: list[str]) -> None:
        self.fig = fig
        self.canvas = FigureCanvasAgg(fig)
        self.moving = [plots.artist(fig, gid) for gid in moving]
        for artist in self.moving:
            artist.set_animated(True)
        self._background = None
        self._layout: object = None
        self._frame: object = None

    def render(self, layout: object, frame: object) -> bytes:
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


class _Debounced:
    """Run `action` now if it has been quiet for `interval` seconds, else once when the burst ends."""

    def __init__(self, action: Callable[[], None], interval: float) -> None:
        self.action = action
        self.interval = interval
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


class _Explorer:
    """What both explorers share: a picture, a message line, a debounced redraw."""

    def __init__(self, *, debounce: float) -> None:
        self.image = widgets.Image(format="png", layout=widgets.Layout(max_width="100%"))
        self.message = widgets.HTML()
        self._redraw = _Debounced(self.redraw, _check_debounce(debounce))
        self._quiet = False
        self.redraws = 0  # how many pictures were drawn: tests use it to see the debounce work

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

    def redraw(self) -> None:
        raise NotImplementedError

    def _show(self, picture: _Picture, *, layout: object, frame: object) -> None:
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


class EncodingExplorer(_Explorer):
    """Sliders for the sinusoidal table and four ways of looking at it.

    >>> explorer = EncodingExplorer(d_model=16, max_sequence_length=20)
    >>> explorer.d_model.value = 15     # the picture updates
    >>> explorer.view.value = "curves"
    """

    def __init__(self, *, d_model: int = 128, max_sequence_length: int = 64, base: float = DEFAULT_BASE,
                 position: int = 10, dimension: int = 0, view: str = "heatmap", debounce: float = 0.05) -> None:
        d_model = check_size("d_model", d_model, maximum=MAX_SIZE)
        max_sequence_length = check_size("max_sequence_length", max_sequence_length, maximum=MAX_SIZE)
        base = _check_slider_base(base)
        # A position or dimension past the table's end is moved to its last row or column.
        position = min(check_size("position", position, minimum=0), max_sequence_length - 1)
        dimension = min(check_size("dimension", dimension, minimum=0), d_model - 1)
        if not isinstance(view, str) or view not in VIEWS:
            raise ValueError(f"view must be one of {VIEWS}, got {_short(view)}")
        super().__init__(debounce=debounce)
        style = {"description_width": "initial"}
        self.d_model = widgets.IntSlider(value=d_model, min=1, max=max(256, d_model), description="d_model", style=style)
        self.max_sequence_length = widgets.IntSlider(value=max_sequence_length, min=1, max=max(256, max_sequence_length),
                                                     description="max_sequence_length", style=style)
        self.base = _base_slider(base, style)
        self.position = widgets.IntSlider(value=position, min=0, max=max_sequence_length - 1,
                                          description="position", style=style)
        self.dimension = widgets.IntSlider(value=dimension, min=0, max=d_model - 1,
                                           description="dimension", style=style)
        self.view = widgets.ToggleButtons(options=VIEWS, value=view, description="view", style=style)
        self.compare_layouts = widgets.Checkbox(value=False, description="beside the concatenated [sin..., cos...] layout",
                                                indent=False, layout=widgets.Layout(width="auto"))
        self._watch(self.d_model, self.max_sequence_length, self.base, self.position, self.dimension, self.view,
                    self.compare_layouts)
        self.widget = widgets.VBox([
            widgets.HBox([self.d_model, self.max_sequence_length, self.base]),
            widgets.HBox([self.position, self.dimension]),
            widgets.HBox([self.view, self.compare_layouts]),
            self.image,
            self.message,
        ])
        self._table_key: tuple | None = None
        self._pictures: dict[str, _Picture] = {}
        self.redraw()

    # What the picture is computed from ------------------------------------------------

    @property
    def table(self) -> torch.Tensor:
        """The current table, recomputed only when its sizes or base change."""
        key = (self.max_sequence_length.value, self.d_model.value, float(self.base.value))
        if key != self._table_key:
            self._table = sinusoidal_encoding(max_sequence_length=key[0], d_model=key[1], base=key[2])
            self._table_key = key
        return self._table

    @property
    def picture(self) -> _Picture:
        """The current view's figure with what moves in it (built the first time it is needed)."""
        name = self.view.value
        if name == "heatmap" and self.compare_layouts.value:
            name = "heatmap_compare"
        if name not in self._pictures:
            marked = ["table", "position", "dimension"]
            builders = {
                "heatmap": lambda: (plots.explorer_heatmap(self.table), marked + ["title"]),
                "heatmap_compare": lambda: (plots.explorer_heatmap(self.table, compare_layouts=True),
                                            marked + ["concatenated_" + gid for gid in marked]),
                "curves": lambda: (plots.explorer_curves(self.max_sequence_length.value),
                                   [f"{gid}{k}" for k in (0, 1) for gid in ("curve", "dots", "marker", "position", "title")]),
                "wavelengths": lambda: (plots.explorer_wavelengths(), ["sin", "cos", "marker", "length", "title"]),
                "similarity": lambda: (plots.explorer_similarity(self.table), ["matrix", "row", "profile", "profile_title"]),
            }
            self._pictures[name] = _Picture(*builders[name]())
        return self._pictures[name]

    @property
    def figure(self) -> Figure:
        """The figure of the current view."""
        return self.picture.fig

    def _fit_sliders(self) -> None:
        # A position or dimension past the new end moves to the last one; no redraw per step.
        self._quiet = True
        try:
            self.position.max = self.max_sequence_length.value - 1
            self.dimension.max = self.d_model.value - 1
        finally:
            self._quiet = False

    def redraw(self) -> None:
        self._fit_sliders()
        picture = self.picture
        view = self.view.value
        update = {"heatmap": self._update_heatmap, "curves": self._update_curves,
                  "wavelengths": self._update_wavelengths, "similarity": self._update_similarity}[view]
        update(picture.fig)
        d_model, length, base = self.d_model.value, self.max_sequence_length.value, float(self.base.value)
        p, j = self.position.value, self.dimension.value
        # A caption that says what the picture shows: for every reader, and the static site's alt text.
        what = {
            "heatmap": f"Heatmap of the table, lines at position {p} and dimension {j}",
            "curves": f"Columns {j - j % 2} (sin) and {j - j % 2 + 1} (cos) as curves over the positions, position {p} marked",
            "wavelengths": f"The wavelength of every column on a log scale, dimension {j} marked",
            "similarity": f"PE[p] . PE[q] for every pair of positions, and row {p} against the offset q - p",
        }[view]
        self.message.value = (f"{what}. table shape ({length}, {d_model}), base {base:g}; position {p}, "
                              f"dimension {j} ({'sin' if j % 2 == 0 else 'cos'})")
        # What moves the axes' limits, ticks or colour bar in each view: then a full draw.
        layout = {"heatmap": (length, d_model), "curves": (length,), "wavelengths": (d_model, base, length),
                  "similarity": (length, d_model, base)}[view]
        self._show(picture, layout=layout, frame=(len(str(length)), len(str(d_model))))

    # The four views -----------------------------------------------------------------------

    def _update_heatmap(self, fig: Figure) -> None:
        table, p, j = self.table, self.position.value, self.dimension.value
        length, d_model = table.shape
        panels = [("", table, j)]
        if self.compare_layouts.value:
            # Column j of the interleaved table is column j/2 (sin) or ceil(d/2) + (j-1)/2 (cos) of the concatenated one.
            concatenated_j = j // 2 if j % 2 == 0 else (d_model + 1) // 2 + j // 2
            panels.append(("concatenated_", to_concatenated(table), concatenated_j))
        for prefix, values, column in panels:
            image = plots.artist(fig, prefix + "table")
            image.set_data(values.numpy())
            image.set_extent((-0.5, d_model - 0.5, length - 0.5, -0.5))
            image.axes.set_xlim(-0.5, d_model - 0.5)
            image.axes.set_ylim(length - 0.5, -0.5)
            plots.artist(fig, prefix + "position").set_ydata([p, p])
            plots.artist(fig, prefix + "dimension").set_xdata([column, column])
        if not self.compare_layouts.value:
            plots.artist(fig, "title").set_text(
                f"PE: {length} positions x d_model = {d_model}, base = {self.base.value:.6g}")

    def _update_curves(self, fig: Figure) -> None:
        length, d_model, base = self.max_sequence_length.value, self.d_model.value, float(self.base.value)
        p, j = self.position.value, self.dimension.value
        pair = [j - j % 2, j - j % 2 + 1]
        fine = torch.linspace(0, max(length - 1, 1), 400, dtype=torch.float64)
        positions = torch.arange(length, dtype=torch.float64)
        for k, column in enumerate(pair):
            curve, dots, marker = (plots.artist(fig, f"{name}{k}") for name in ("curve", "dots", "marker"))
            title = plots.artist(fig, f"title{k}")
            if column >= d_model:  # odd d_model: the last sine column has no cosine partner
                for line in (curve, dots, marker):
                    line.set_data([], [])
                title.set_text(f"column {column} does not exist: d_model = {d_model} is odd, column {column - 1} has no cos partner")
                continue
            denominator = base ** (2 * (column // 2) / d_model)
            wave = torch.sin if column % 2 == 0 else torch.cos
            colour = plots.SINE_COLOUR if column % 2 == 0 else plots.COSINE_COLOUR
            curve.set_data(fine.numpy(), wave(fine / denominator).numpy())
            dots.set_data(positions.numpy(), wave(positions / denominator).numpy())
            curve.set_color(colour)
            dots.set_color(colour)
            marker.set_data([p], [float(wave(torch.tensor(p / denominator, dtype=torch.float64)))])
            plots.artist(fig, f"position{k}").set_xdata([p, p])
            name = "sin" if column % 2 == 0 else "cos"
            chosen = "  (chosen)" if column == j else ""
            title.set_text(f"j = {column}: {name}(pos / {denominator:.4g}), wavelength {6.283185307 * denominator:.4g}{chosen}")
            curve.axes.set_xlim(-0.5, length - 0.5)

    def _update_wavelengths(self, fig: Figure) -> None:
        d_model, base, j = self.d_model.value, float(self.base.value), self.dimension.value
        lengths = wavelengths(d_model=d_model, base=base).numpy()
        columns = torch.arange(d_model).numpy()
        plots.artist(fig, "sin").set_data(columns[0::2], lengths[0::2])
        plots.artist(fig, "cos").set_data(columns[1::2], lengths[1::2])
        plots.artist(fig, "marker").set_data([j], [lengths[j]])
        plots.artist(fig, "length").set_ydata([self.max_sequence_length.value] * 2)
        ax = plots.artist(fig, "sin").axes
        ax.set_xlim(-0.5, d_model - 0.5)
        ax.set_ylim(3, max(base * 6.3 * 1.5, self.max_sequence_length.value * 2))
        plots.artist(fig, "title").set_text(
            f"wavelengths from 2 pi = 6.28 to {lengths[-1]:.4g} (base = {base:.6g}); column {j}: {lengths[j]:.4g} positions")

    def _update_similarity(self, fig: Figure) -> None:
        plots.update_similarity(fig, self.table, self.position.value)


def _token_list(words: list[str]) -> str:
    # <bdi> keeps each token's own direction: right-to-left words stay in sentence order in the list.
    return " | ".join(f"<code><bdi>{html.escape(plots.shorten(t, 20))}</bdi></code>" for t in words)


class PipelineExplorer(_Explorer):
    """Type a sentence; see its padded tokens, one-hot rows, X, PE and X + PE side by side.

    A sentence longer than max_sequence_length shows the error in the widget instead
    of raising into the notebook.
    """

    def __init__(self, *, sentence: str = tokens.EXAMPLE_SENTENCE, max_sequence_length: int = 10, d_model: int = 6,
                 vocabulary: tokens.Vocabulary | None = None, debounce: float = 0.05) -> None:
        max_sequence_length = check_size("max_sequence_length", max_sequence_length, maximum=MAX_SIZE)
        d_model = check_size("d_model", d_model, maximum=MAX_SIZE)
        if not isinstance(sentence, str):
            raise TypeError(f"sentence must be a str, got {type(sentence).__name__}")
        if vocabulary is not None and not isinstance(vocabulary, tokens.Vocabulary):
            raise TypeError(f"vocabulary must be a posenc.tokens.Vocabulary or None, got {_short(vocabulary)}")
        super().__init__(debounce=debounce)
        self.vocabulary = vocabulary or tokens.build_vocabulary(tokens.EXAMPLE_CORPUS)
        style = {"description_width": "initial"}
        self.sentence = widgets.Text(value=sentence, description="sentence", continuous_update=True, style=style,
                                     layout=widgets.Layout(width="60%"))
        self.max_sequence_length = widgets.IntSlider(value=max_sequence_length, min=1, max=max(32, max_sequence_length),
                                                     description="max_sequence_length", style=style)
        self.d_model = widgets.IntSlider(value=d_model, min=1, max=max(64, d_model), description="d_model", style=style)
        self.tokens_line = widgets.HTML()
        self.caption = widgets.HTML()
        self._watch(self.sentence, self.max_sequence_length, self.d_model)
        self.widget = widgets.VBox([
            self.sentence,
            widgets.HBox([self.max_sequence_length, self.d_model]),
            self.tokens_line,
            self.message,
            self.image,
            self.caption,
        ])
        self._picture: _Picture | None = None
        self.redraw()

    def redraw(self) -> None:
        length, d_model = self.max_sequence_length.value, self.d_model.value
        words = tokens.tokenize(self.sentence.value)
        try:
            padded = tokens.pad(words, max_sequence_length=length)
        except ValueError as error:
            self.message.value = (f'<span style="color:#B00020"><b>ValueError:</b> {html.escape(str(error))}</span>'
                                  "<br>The picture below is still the last sentence that fit.")
            self.tokens_line.value = f"{len(words)} tokens: " + _token_list(words[:length]) + " | ..."
            return
        self.message.value = "" if words else "The sentence is empty: every row is padding."
        self.caption.value = (f"The picture: one-hot rows, X = one_hot @ W_E, PE and X + PE for the padded tokens above, "
                              f"{length} rows each, d_model = {d_model}.")
        self.tokens_line.value = "padded tokens: " + _token_list(padded)
        ids = torch.tensor(self.vocabulary.ids(padded))
        one_hot_rows = tokens.one_hot(ids, vocab_size=self.vocabulary.vocab_size)
        X = project(one_hot_rows, embedding_matrix(vocab_size=self.vocabulary.vocab_size, d_model=d_model, seed=0))
        PE = sinusoidal_encoding(max_sequence_length=length, d_model=d_model)
        if self._picture is None:
            fig = plots.pipeline_panels(padded, one_hot_rows, X, PE, vocabulary_tokens=self.vocabulary.tokens)
            self._picture = _Picture(fig, moving=[])
        else:
            plots.update_pipeline_panels(self._picture.fig, padded, one_hot_rows, X, PE)
        # Every change moves some axis here, so every redraw is a full one; the layout is
        # recomputed only when the token labels or the sizes need more room.
        self._show(self._picture, layout=(tuple(padded), length, d_model),
                   frame=(max(len(plots.shorten(t)) for t in padded), len(str(length)), len(str(d_model))))

    @property
    def figure(self) -> Figure | None:
        return None if self._picture is None else self._picture.fig


SCHEME_VIEWS = ("rotary", "alibi", "learned")
# The rotary view: the word and weights of notebook 13's picture, keys up to this far from the query.
ROTARY_D_MODEL, ROTARY_REACH, MAX_QUERY_POSITION = 64, 60, 1000
MAX_HEADS, MAX_ALIBI_LENGTH = 16, 64


class SchemeExplorer(_Explorer):
    """One view per position scheme of notebook 13, each with its own sliders.

        rotary   one word's score with itself against the key's offset, RoPE beside the
                 added sinusoid. Move the query's position: RoPE's curve stays where it
                 is (it depends on the offset only), the added sinusoid's moves. Move the
                 base: both change.
        alibi    ALiBi's bias for one head as a matrix, and every head's bias along the
                 last query's row; the number of heads sets the slopes.
        learned  the tiny model of notebook 14's learned table, before and after training,
                 and how alike row `position` is to every row. Pass `trained`
                 (`experiment.train("learned")`'s result), or the view trains one (about a second).

    >>> explorer = SchemeExplorer(view="alibi", num_heads=8)
    >>> explorer.head.value = 7     # the picture updates
    """

    def __init__(self, *, view: str = "rotary", base: float = DEFAULT_BASE, query_position: int = 100,
                 num_heads: int = 8, head: int = 0, max_sequence_length: int = 16, causal: bool = True,
                 position: int = 0, trained: experiment.Result | None = None, debounce: float = 0.05) -> None:
        if not isinstance(view, str) or view not in SCHEME_VIEWS:
            raise ValueError(f"view must be one of {SCHEME_VIEWS}, got {_short(view)}")
        base = _check_slider_base(base)
        query_position = check_size("query_position", query_position, minimum=0, maximum=MAX_QUERY_POSITION)
        num_heads = check_size("num_heads", num_heads, maximum=MAX_HEADS)
        head = check_size("head", head, minimum=0, maximum=num_heads - 1)
        max_sequence_length = check_size("max_sequence_length", max_sequence_length, minimum=2, maximum=MAX_ALIBI_LENGTH)
        causal = check_flag("causal", causal)
        if trained is not None and not (isinstance(trained, experiment.Result) and trained.scheme == "learned"):
            raise TypeError(f"trained must be experiment.train('learned')'s result or None, got {_short(trained)}")
        self._trained = trained
        rows = trained.model.max_sequence_length if trained is not None else experiment.Settings().longest
        position = check_size("position", position, minimum=0, maximum=rows - 1)
        super().__init__(debounce=debounce)
        style = {"description_width": "initial"}
        self.view = widgets.ToggleButtons(options=SCHEME_VIEWS, value=view, description="scheme", style=style)
        self.base = _base_slider(base, style)
        self.query_position = widgets.IntSlider(value=query_position, min=0, max=MAX_QUERY_POSITION,
                                                description="query position p", style=style)
        self.num_heads = widgets.IntSlider(value=num_heads, min=1, max=MAX_HEADS, description="num_heads", style=style)
        self.head = widgets.IntSlider(value=head, min=0, max=num_heads - 1, description="head", style=style)
        self.max_sequence_length = widgets.IntSlider(value=max_sequence_length, min=2, max=MAX_ALIBI_LENGTH,
                                                     description="max_sequence_length", style=style)
        self.causal = widgets.Checkbox(value=causal, description="causal (keys after the query masked)", indent=False,
                                       layout=widgets.Layout(width="auto"))
        self.position = widgets.IntSlider(value=position, min=0, max=rows - 1, description="position p", style=style)
        self._controls = {
            "rotary": [widgets.HBox([self.query_position, self.base])],
            "alibi": [widgets.HBox([self.num_heads, self.head]), widgets.HBox([self.max_sequence_length, self.causal])],
            "learned": [self.position],
        }
        self.controls = widgets.VBox()
        self._watch(self.view, self.base, self.query_position, self.num_heads, self.head, self.max_sequence_length,
                    self.causal, self.position)
        self.widget = widgets.VBox([self.view, self.controls, self.image, self.message])
        self._pictures: dict[str, _Picture] = {}
        self._word = torch.randn(ROTARY_D_MODEL, generator=torch.Generator().manual_seed(1))
        self._weights = projection_weights(d_model=ROTARY_D_MODEL, seed=0)
        self.redraw()

    @property
    def trained(self) -> experiment.Result:
        """The learned-table model the learned view shows (trained the first time it is needed)."""
        if self._trained is None:
            self._trained = experiment.train("learned")
        return self._trained

    @property
    def figure(self) -> Figure:
        """The figure of the current view."""
        return self._picture().fig

    def _picture(self) -> _Picture:
        name = self.view.value
        if name not in self._pictures:
            if name == "rotary":
                built = plots.explorer_rotary(), []
            elif name == "alibi":
                built = plots.explorer_alibi(), []
            else:
                before, after = self._learned_tables()
                moving = ["before training_position", "after training_position", "before training_similarity",
                          "after training_similarity", "similarity_title"]
                built = plots.explorer_learned(before, after), moving
            self._pictures[name] = _Picture(*built)
        return self._pictures[name]

    def _learned_tables(self) -> tuple[torch.Tensor, torch.Tensor]:
        result = self.trained
        return result.initial_state["position.weight"], result.model.position.weight.detach()

    def _fit_sliders(self) -> None:
        self._quiet = True
        try:
            self.head.max = self.num_heads.value - 1  # a head past the new last one moves to it
        finally:
            self._quiet = False

    def redraw(self) -> None:
        self._fit_sliders()
        view = self.view.value
        self.controls.children = self._controls[view]
        if view == "learned" and self._trained is None:
            self.message.value = "Training the tiny model of notebook 14 with a learned table (about a second) ..."
        picture = self._picture()
        layout, frame, what = {"rotary": self._update_rotary, "alibi": self._update_alibi,
                               "learned": self._update_learned}[view](picture.fig)
        self.message.value = what
        self._show(picture, layout=layout, frame=frame)

    # The three views ----------------------------------------------------------------------

    def _update_rotary(self, fig: Figure) -> tuple:
        p, base = self.query_position.value, float(self.base.value)
        offsets = range(-min(p, ROTARY_REACH), ROTARY_REACH + 1)
        at_0 = range(0, ROTARY_REACH + 1)
        curves = {}
        for scheme in schemes.SCORE_SCHEMES:
            for gid, query, keys in ((scheme, p, offsets), (scheme + "_at_0", 0, at_0)):
                scores = schemes.same_word_scores(self._word, self._weights, scheme=scheme, query_position=query,
                                                  offsets=keys, base=base)
                plots.artist(fig, gid).set_data(list(keys), scores.numpy())
                curves[gid] = scores
        ax = plots.artist(fig, "rotary").axes
        everything = torch.cat(list(curves.values()))
        low, high = float(everything.min()), float(everything.max())
        margin = 0.05 * (high - low) or 1.0
        ax.set_xlim(-ROTARY_REACH - 1, ROTARY_REACH + 1)
        ax.set_ylim(low - margin, high + margin)
        plots.artist(fig, "title").set_text(
            f"One word, query at p = {p}, base = {base:.4g}\nRoPE's curve is the same for every p; the added sinusoid's is not")
        what = (f"Scores of one word with itself against the key's offset, query at position {p}, base {base:g} "
                f"(d_model = {ROTARY_D_MODEL}); faint: the query at position 0")
        return (p, base), None, what

    def _update_alibi(self, fig: Figure) -> tuple:
        num_heads, h = self.num_heads.value, self.head.value
        length, causal = self.max_sequence_length.value, self.causal.value
        bias = schemes.alibi_bias(num_heads=num_heads, max_sequence_length=length, causal=causal, dtype=torch.float64)
        slopes = schemes.alibi_slopes(num_heads=num_heads, dtype=torch.float64)
        image = plots.artist(fig, "bias")
        shown = bias[h].masked_fill(bias[h].isinf(), float("nan"))  # drawn grey, like a masked cell
        image.set_data(shown.numpy())
        image.set_clim(-float(slopes[h]) * (length - 1), 0.0)  # each head on its own scale: the right panel compares them
        image.set_extent((-0.5, length - 0.5, length - 0.5, -0.5))
        image.axes.set_xlim(-0.5, length - 0.5)
        image.axes.set_ylim(length - 0.5, -0.5)
        exponent = -math.log2(float(slopes[h]))
        plots.artist(fig, "bias_title").set_text(
            f"head {h} of {num_heads}: slope 2^-{exponent:.4g} = {float(slopes[h]):.4g}" + ("  (grey: masked, -inf)" if causal else ""))
        last = bias[:, -1, :]  # the last query sees every key, masked or not
        keys = list(range(length))
        plots.artist(fig, "heads").set_segments([list(zip(keys, row.tolist())) for row in last])
        plots.artist(fig, "head").set_data(keys, last[h].numpy())
        ax = plots.artist(fig, "head").axes
        ax.set_xlim(-0.5, length - 0.5)
        ax.set_ylim(float(last[0].min()) * 1.05 - 0.05, 0.05 * float(slopes[0]) * length + 0.05)
        plots.artist(fig, "row_title").set_text(f"the last query (i = {length - 1}): head {h} in colour, the other heads grey")
        what = (f"ALiBi's bias for head {h} of {num_heads} (slope {float(slopes[h]):.4g}), {length} positions, "
                f"{'causal' if causal else 'not causal'}; right: every head's bias along the last row")
        # The colour bar's tick labels change width with the head's slope: its room is recomputed then.
        return (num_heads, h, length, causal), (len(str(length)), num_heads, h), what

    def _update_learned(self, fig: Figure) -> tuple:
        before, after = self._learned_tables()
        p = self.position.value
        for name, table in (("before training", before), ("after training", after)):
            plots.artist(fig, f"{name}_position").set_ydata([p, p])
            similarity = torch.nn.functional.cosine_similarity(table[p : p + 1], table, dim=-1)
            plots.artist(fig, f"{name}_similarity").set_data(list(range(table.shape[0])), similarity.numpy())
        plots.artist(fig, "similarity_title").set_text(f"row p = {p} against every row q")
        what = (f"A learned table ({before.shape[0]} positions x d_model = {before.shape[1]}) before and after training "
                f"on the previous-token task; right: how alike row {p} is to every row")
        return (), None, what
