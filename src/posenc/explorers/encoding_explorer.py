"""EncodingExplorer: sliders for the sinusoidal table and four ways of looking at it.

    views: heatmap (optionally with the concatenated layout beside it), curves (a column and
    its sin/cos partner over positions), wavelengths, similarity (PE[p] . PE[q])

The heatmap, curves and wavelengths figures are built here; the similarity figure is
`posenc.plots.similarity_figure`, which a notebook draws too.
"""

from __future__ import annotations

import math

import ipywidgets as widgets
import torch
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from .. import plots
from .._validate import check_size, short
from ..builder import DEFAULT_BASE, frequencies, sinusoidal_encoding
from ..encoding import to_concatenated, wavelengths
from ..plots import COSINE_COLOUR, DIVERGING, SINE_COLOUR, new_figure
from .engine import MAX_SIZE, Explorer, Picture, base_slider, check_slider_base

__all__ = ["VIEWS", "EncodingExplorer"]

VIEWS = ("heatmap", "curves", "wavelengths", "similarity")
# Every number the explorer writes (the base, a denominator, a wavelength) in one format: 4 significant digits, thousands
# separated, never an exponent: 10,000 and 14.13, as the base slider's readout (d3-format ",.4r") shows them.
READOUT_FORMAT = ",.4r"
# Each slider a fixed width, so that a row of them fits a notebook at 1280 x 720 (848 pixels wide with the file
# browser open) without wrapping; the long name max_sequence_length gets more, so that its track is not the shortest.
SLIDER_WIDTHS = {"d_model": "230px", "max_sequence_length": "330px", "base": "270px", "position": "270px",
                 "dimension": "270px"}


def _readable(value: float) -> str:
    """`value` as d3-format ",.4r" writes it: 4 significant digits, thousands separated (10,000, 14.13, 10.00, 54,410)."""
    if not math.isfinite(value) or value == 0:
        return f"{value:g}"
    rounded = float(f"{value:.4g}")
    return f"{rounded:,.{max(0, 3 - math.floor(math.log10(abs(rounded))))}f}"


class EncodingExplorer(Explorer):
    """Sliders for the sinusoidal table and four ways of looking at it.

    >>> explorer = EncodingExplorer(d_model=16, max_sequence_length=20)
    >>> explorer.d_model.value = 15     # the picture updates
    >>> explorer.view.value = "curves"
    """

    def __init__(self, *, d_model: int = 128, max_sequence_length: int = 64, base: float = DEFAULT_BASE,
                 position: int = 10, dimension: int = 0, view: str = "heatmap", debounce: float = 0.05) -> None:
        d_model = check_size("d_model", d_model, maximum=MAX_SIZE)
        max_sequence_length = check_size("max_sequence_length", max_sequence_length, maximum=MAX_SIZE)
        base = check_slider_base(base)
        # A position or dimension past the table's end is moved to its last row or column.
        position = min(check_size("position", position, minimum=0), max_sequence_length - 1)
        dimension = min(check_size("dimension", dimension, minimum=0), d_model - 1)
        if not isinstance(view, str) or view not in VIEWS:
            raise ValueError(f"view must be one of {VIEWS}, got {short(view)}")
        super().__init__(debounce=debounce)
        style = {"description_width": "initial"}
        self.d_model = widgets.IntSlider(value=d_model, min=1, max=max(256, d_model), description="d_model", style=style)
        self.max_sequence_length = widgets.IntSlider(value=max_sequence_length, min=1, max=max(256, max_sequence_length),
                                                     description="max_sequence_length", style=style)
        self.base = base_slider(base)
        self.base.readout_format = READOUT_FORMAT
        self.position = widgets.IntSlider(value=position, min=0, max=max_sequence_length - 1,
                                          description="position", style=style)
        self.dimension = widgets.IntSlider(value=dimension, min=0, max=d_model - 1,
                                           description="dimension", style=style)
        for name, width in SLIDER_WIDTHS.items():
            getattr(self, name).layout.width = width
        self.view = widgets.ToggleButtons(options=VIEWS, value=view, description="view",
                                          style={**style, "button_width": "104px"})
        self.compare_layouts = widgets.Checkbox(value=False, description="add the concatenated layout",
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
        self._pictures: dict[str, Picture] = {}
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
    def picture(self) -> Picture:
        """The current view's figure with what moves in it (built the first time it is needed)."""
        name = self.view.value
        if name == "heatmap" and self.compare_layouts.value:
            name = "heatmap_compare"
        if name not in self._pictures:
            marked = ["table", "position", "dimension"]
            builders = {
                "heatmap": lambda: (_heatmap_figure(self.table), marked + ["title"]),
                "heatmap_compare": lambda: (_heatmap_figure(self.table, compare_layouts=True),
                                            marked + ["concatenated_" + gid for gid in marked]),
                "curves": lambda: (_curves_figure(self.max_sequence_length.value),
                                   [f"{gid}{k}" for k in (0, 1) for gid in ("curve", "dots", "marker", "position", "title")]),
                "wavelengths": lambda: (_wavelengths_figure(), ["sin", "cos", "marker", "length", "title"]),
            }
            if name == "similarity":
                fig = plots.similarity_figure(self.table, position=self.position.value)
                moving = plots.update_similarity(fig, self.table, position=self.position.value)
            else:
                fig, gids = builders[name]()
                moving = [plots.artist(fig, gid) for gid in gids]
            self._pictures[name] = Picture(fig, moving)
        return self._pictures[name]

    @property
    def figure(self) -> Figure:
        """The figure of the current view."""
        return self.picture.fig

    def _fit_sliders(self) -> None:
        # A position or dimension past the new end moves to the last one; no redraw per step.
        with self._quietly():
            self.position.max = self.max_sequence_length.value - 1
            self.dimension.max = self.d_model.value - 1

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
        self.message.value = (f"{what}. table shape ({length}, {d_model}), base {_readable(base)}; position {p}, "
                              f"dimension {j} ({'sin' if j % 2 == 0 else 'cos'})")
        # What moves the axes' limits, ticks or colour bar in each view: then a full draw.
        layout = {"heatmap": (length, d_model), "curves": (length,), "wavelengths": (d_model, base, length),
                  "similarity": (length, d_model, base)}[view]
        # What moves the axes' places: the width of the tick labels. In the similarity view the colour bar's and the
        # profile's labels follow the range of PE[p] . PE[q], which the base moves too (negative values at a small base).
        frame = (len(str(length)), len(str(d_model)))
        if view == "similarity":
            frame += (_y_tick_labels(picture.fig),)
        self._show(picture, layout=layout, frame=frame)

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
                f"PE: {length} positions x d_model = {d_model}, base = {_readable(float(self.base.value))}")

    def _update_curves(self, fig: Figure) -> None:
        length, d_model, base = self.max_sequence_length.value, self.d_model.value, float(self.base.value)
        p, j = self.position.value, self.dimension.value
        pair = [j - j % 2, j - j % 2 + 1]
        fine = torch.linspace(0, max(length - 1, 1), 400, dtype=torch.float64)
        positions = torch.arange(length, dtype=torch.float64)
        angle_per_position = frequencies(d_model=d_model, base=base)
        for k, column in enumerate(pair):
            curve, dots, marker = (plots.artist(fig, f"{name}{k}") for name in ("curve", "dots", "marker"))
            title = plots.artist(fig, f"title{k}")
            if column >= d_model:  # odd d_model: the last sine column has no cosine partner
                for line in (curve, dots, marker):
                    line.set_data([], [])
                title.set_text(f"column {column} does not exist: d_model = {d_model} is odd, "
                               f"column {column - 1} has no cos partner")
                continue
            denominator = 1 / float(angle_per_position[column // 2])
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
            title.set_text(f"j = {column}: {name}(pos / {_readable(denominator)}), "
                           f"wavelength {_readable(2 * math.pi * denominator)}{chosen}")
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
            f"wavelengths from 2 pi = 6.283 to {_readable(float(lengths[-1]))} (base = {_readable(base)}); "
            f"column {j}: {_readable(float(lengths[j]))} positions")

    def _update_similarity(self, fig: Figure) -> None:
        plots.update_similarity(fig, self.table, position=self.position.value)


# The figures of the heatmap, curves and wavelengths views (the explorer sets their data) ------

# Inches at 100 dpi: with the three rows of controls above it, the picture fits under JupyterLab's toolbar at 1280 x 720.
PICTURE_HEIGHT = 3.6


def _y_tick_labels(fig: Figure) -> tuple:
    """The text of every axes' y tick labels, as the next draw will write them."""
    return tuple(tuple(ax.yaxis.get_major_formatter().format_ticks(ax.yaxis.get_majorticklocs())) for ax in fig.axes)


def _whole_number_ticks(*axes) -> None:
    # Positions and columns are whole numbers: no tick at 2.5.
    for axis in axes:
        axis.set_major_locator(MaxNLocator(integer=True))


def _marked_heatmap(ax, table: torch.Tensor, title: str, prefix: str = ""):
    image = ax.imshow(table.numpy(), cmap=DIVERGING, vmin=-1, vmax=1, aspect="auto", interpolation="nearest")
    image.set_gid(prefix + "table")
    ax.axhline(0, color="black", linewidth=1.2).set_gid(prefix + "position")
    ax.axvline(0, color="black", linewidth=1.2, linestyle="--").set_gid(prefix + "dimension")
    ax.set_xlabel("dimension (column) j")
    ax.set_ylabel("position pos")
    ax.set_title(title, fontsize=10).set_gid(prefix + "title")
    _whole_number_ticks(ax.xaxis, ax.yaxis)
    return image


def _heatmap_figure(table: torch.Tensor, *, compare_layouts: bool = False) -> Figure:
    """The table with a line at one position and one dimension; optionally beside its concatenated layout."""
    fig = new_figure(11 if compare_layouts else 8, PICTURE_HEIGHT)
    if compare_layouts:
        left, right = fig.subplots(1, 2, sharey=True)
        image = _marked_heatmap(left, table, "interleaved: sin, cos, sin, cos, ...")
        _marked_heatmap(right, to_concatenated(table), "concatenated: all sin, then all cos", prefix="concatenated_")
        # Column k of the concatenated table is not dimension k: say what its columns are.
        right.set_xlabel("column: all sines, then all cosines")
        right.set_ylabel("")
    else:
        image = _marked_heatmap(fig.add_subplot(), table, "")
    fig.colorbar(image, ax=fig.axes, shrink=0.9, label="PE(pos, j)")
    return fig


def _curves_figure(max_sequence_length: int) -> Figure:
    """Two panels, the chosen column and its sin/cos partner over positions (data set by the explorer)."""
    fig = new_figure(8, PICTURE_HEIGHT)
    axes = fig.subplots(2, 1, sharex=True)
    for k, ax in enumerate(axes):
        ax.plot([], [], linewidth=1.4)[0].set_gid(f"curve{k}")
        ax.plot([], [], "o", markersize=3)[0].set_gid(f"dots{k}")
        ax.plot([], [], "o", color="black", markersize=6)[0].set_gid(f"marker{k}")
        ax.axvline(0, color="#555555", linewidth=1, linestyle="--").set_gid(f"position{k}")
        ax.set_ylim(-1.15, 1.15)
        ax.set_xlim(-0.5, max_sequence_length - 0.5)
        ax.set_ylabel("PE(pos, j)")
        ax.set_title("", fontsize=10).set_gid(f"title{k}")
    axes[1].set_xlabel("position pos")
    _whole_number_ticks(axes[1].xaxis)
    return fig


def _wavelengths_figure() -> Figure:
    """The wavelength of every column on a log scale (data set by the explorer)."""
    fig = new_figure(8, PICTURE_HEIGHT)
    ax = fig.add_subplot()
    ax.semilogy([], [], "o", color=SINE_COLOUR, markersize=3, label="sin columns (even j)")[0].set_gid("sin")
    ax.semilogy([], [], "o", color=COSINE_COLOUR, markersize=3, label="cos columns (odd j)")[0].set_gid("cos")
    ax.semilogy([], [], "o", color="black", markersize=8, fillstyle="none", label="chosen dimension")[0].set_gid("marker")
    ax.axhline(1, color="#555555", linewidth=1, linestyle=":", label="max_sequence_length").set_gid("length")
    ax.set_xlabel("dimension (column) j")
    ax.set_ylabel("wavelength (positions)")
    ax.set_title("", fontsize=10).set_gid("title")
    _whole_number_ticks(ax.xaxis)
    # Outside the axes: the max_sequence_length line runs across the whole width, through any legend inside.
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)
    return fig
