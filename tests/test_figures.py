"""Every figure the package draws, read from the figure objects: nothing a reader cannot decode.

Each axes with data says what it shows (a title or an axis label), every image has a colour bar
with a label (or shares the scale of one that has), and no text runs off the figure.
Every public function of posenc.plots that returns a Figure must be drawn here (a test checks
that none is missed), and each explorer view as the widgets draw it.
"""

import inspect
import json
from pathlib import Path

import pytest
import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.image import AxesImage

from posenc import experiment, plots, widgets

ROOT = Path(__file__).resolve().parent.parent
TINY = experiment.Settings(steps=2, d_model=8, num_heads=2, num_layers=1, batch_size=2)


def _matrix(rows, columns, seed=0):
    return torch.randn(rows, columns, generator=torch.Generator().manual_seed(seed))


def _benchmark_results():
    return json.loads((ROOT / "benchmarks" / "results" / "encoding.json").read_text())


FIGURES = {
    "pipeline_diagram": lambda: plots.pipeline_diagram(highlight=("X + PE",)),
    "transformer_diagram": lambda: plots.transformer_diagram(),
    "encoding_heatmap": lambda: plots.encoding_heatmap(max_sequence_length=64, d_model=128),
    "encoding_heatmap_10x6": lambda: plots.encoding_heatmap(max_sequence_length=10, d_model=6),
    "sine_cosine_curves": lambda: plots.sine_cosine_curves(d_model=6, columns=(0, 1, 2, 3, 4, 5), max_sequence_length=10),
    "interleave_diagram": lambda: plots.interleave_diagram(d_model=7, rows=3),
    "matrix_figure": lambda: plots.matrix_figure(_matrix(10, 6), title="X", xlabel="dimension", ylabel="token"),
    "matrix_figure_one_hot": lambda: plots.matrix_figure(torch.eye(11)[[2, 3, 4, 5, 0, 0]], title="one-hot", cmap="Greys",
                                                         symmetric=False, column_labels=[f"t{k}" for k in range(11)]),
    "matrices_figure": lambda: plots.matrices_figure({"X": _matrix(6, 6), "X + PE": _matrix(6, 6, 1)},
                                                     colorbar_label="value", xlabel="dimension", ylabel="token"),
    "denominators_figure": lambda: plots.denominators_figure(d_model=6),
    "bar_figure": lambda: plots.bar_figure({"X": 1.0, "PE": 2.0}, title="sizes", ylabel="norm"),
    "similarity_figure": lambda: plots.similarity_figure(plots.sinusoidal_encoding(max_sequence_length=128, d_model=64),
                                                         position=64),
    "error_by_position": lambda: plots.error_by_position([10, 100, 1000], {"a": [1e-7, 1e-6, 1e-5], "b": [0, 1e-7, 1e-7]},
                                                         title="error", reference_slope=2.0**-24),
    "lines_figure": lambda: plots.lines_figure([0, 1, 2], {"a": [0, 1, 2], "b": [2, 1, 0]}, title="t", xlabel="x", ylabel="y"),
    "accuracy_by_length": lambda: plots.accuracy_by_length({"none": {16: 0.2, 32: 0.1}, "learned": {16: 1.0, 32: None}},
                                                           trained=(8, 16), baseline={16: 0.25, 32: 0.2}),
    "pipeline_panels": lambda: plots.pipeline_panels(["my", "name", "<PAD>"], torch.eye(4)[[0, 1, 3]], _matrix(3, 6) * 3,
                                                     plots.sinusoidal_encoding(max_sequence_length=3, d_model=6),
                                                     vocabulary_tokens=["my", "name", "is", "<PAD>"]),
    "benchmark_figure": lambda: plots.benchmark_figure(_benchmark_results()),
}


def _encoding_explorer(view, **sizes):
    explorer = widgets.EncodingExplorer(**sizes)
    explorer.view.value = view
    return explorer.figure


EXPLORER_VIEWS = {
    **{f"EncodingExplorer/{view}": (lambda view=view: _encoding_explorer(view, d_model=64, max_sequence_length=64))
       for view in widgets.VIEWS},
    "EncodingExplorer/heatmap, both layouts": lambda: _both_layouts(),
    "PipelineExplorer": lambda: widgets.PipelineExplorer().figure,
    **{f"SchemeExplorer/{view}": (lambda view=view: widgets.SchemeExplorer(
        view=view, trained=experiment.train("learned", settings=TINY)).figure) for view in widgets.SCHEME_VIEWS},
}


def _both_layouts():
    explorer = widgets.EncodingExplorer(d_model=16, max_sequence_length=16)
    explorer.compare_layouts.value = True
    return explorer.figure


def test_every_figure_function_is_drawn_here():
    returns_a_figure = {name for name, function in inspect.getmembers(plots, inspect.isfunction)
                        if not name.startswith("_") and function.__module__ == plots.__name__
                        and inspect.signature(function).return_annotation in (Figure, "Figure")}
    # The explorer_* figures are drawn through the widgets (EXPLORER_VIEWS), which fill them with data.
    drawn = {name.split("_10x6")[0].split("_one_hot")[0] for name in FIGURES}
    assert returns_a_figure - {n for n in returns_a_figure if n.startswith("explorer_")} <= drawn


def _data_axes(fig):
    # Colour bars are axes too; they are checked with their image.
    colorbar_axes = {image.colorbar.ax for ax in fig.axes for image in ax.images if image.colorbar is not None}
    colorbar_axes |= {ax for ax in fig.axes if ax.get_label() == "<colorbar>"}
    return [ax for ax in fig.axes if ax not in colorbar_axes and ax.axison]


def check_figure(fig):
    assert isinstance(fig, Figure)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    problems = []
    data_axes = _data_axes(fig)
    for ax in data_axes:
        if not (ax.get_title() or ax.get_xlabel() or ax.get_ylabel()):
            problems.append(f"an axes without a title or a label: {ax}")
    images = [image for ax in fig.axes for image in ax.images if isinstance(image, AxesImage)]
    labelled = [image for image in images if image.colorbar is not None
                and (image.colorbar.ax.get_ylabel() or image.colorbar.ax.get_xlabel())]
    for image in images:
        if image.axes not in data_axes:
            continue
        shares = any(other.get_cmap().name == image.get_cmap().name and other.get_clim() == image.get_clim()
                     for other in labelled)
        if not shares:
            problems.append(f"an image without a labelled colour bar in {image.axes.get_title()!r}")
    box = fig.bbox
    # What is drawn: each axes' tight box holds its tick labels, labels, title, texts and legend.
    drawn = [(ax.get_title() or ax.get_xlabel() or ax.get_ylabel() or "an axes", ax.get_tightbbox(renderer))
             for ax in fig.axes if ax.get_visible()]
    drawn += [(text.get_text(), text.get_window_extent(renderer)) for text in fig.texts if text.get_text().strip()]
    if fig._suptitle is not None and fig._suptitle.get_text():
        drawn.append((fig._suptitle.get_text(), fig._suptitle.get_window_extent(renderer)))
    drawn += [("a legend", legend.get_window_extent(renderer)) for legend in fig.legends]
    for what, extent in drawn:
        if extent is None:
            continue
        if extent.x0 < box.x0 - 1 or extent.y0 < box.y0 - 1 or extent.x1 > box.x1 + 1 or extent.y1 > box.y1 + 1:
            problems.append(f"runs off the figure: {str(what)[:50]!r} at {tuple(round(v) for v in extent.extents)}, "
                            f"figure {tuple(round(v) for v in box.extents)}")
    return problems


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_a_figure_can_be_read(name):
    problems = check_figure(FIGURES[name]())
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", sorted(EXPLORER_VIEWS))
def test_an_explorer_view_can_be_read(name):
    problems = check_figure(EXPLORER_VIEWS[name]())
    assert not problems, "\n".join(problems)


def test_one_hot_cells_read_0_and_1():
    fig = plots.matrix_figure(torch.eye(3), title="one-hot", cmap="Greys", symmetric=False)
    written = {text.get_text() for text in fig.axes[0].texts}
    assert written == {"0", "1"}


def test_pipeline_panels_share_one_scale_for_x_pe_and_their_sum():
    X = _matrix(3, 6) * 3
    PE = plots.sinusoidal_encoding(max_sequence_length=3, d_model=6)
    fig = plots.pipeline_panels(["a", "b", "c"], torch.eye(3), X, PE)
    limits = {gid: plots.artist(fig, gid).get_clim() for gid in ("X", "PE", "X_plus_PE")}
    assert len(set(limits.values())) == 1
    assert limits["PE"][1] >= float((X + PE).abs().max()) - 1e-6


def test_similarity_uses_a_sequential_map_for_non_negative_data():
    table = plots.sinusoidal_encoding(max_sequence_length=64, d_model=64)
    assert float((table @ table.T).min()) >= 0
    image = plots.artist(plots.similarity_figure(table, position=10), "matrix")
    assert image.get_cmap().name == plots.SEQUENTIAL and image.get_clim()[0] == 0
    signed = plots.sinusoidal_encoding(max_sequence_length=64, d_model=64, base=10.0)
    image = plots.artist(plots.similarity_figure(signed, position=10), "matrix")
    low, high = image.get_clim()
    assert image.get_cmap().name == plots.DIVERGING and low == -high


def test_similarity_profile_is_fitted_to_its_data():
    table = plots.sinusoidal_encoding(max_sequence_length=64, d_model=64)
    fig = plots.similarity_figure(table, position=10)
    profile = plots.artist(fig, "profile")
    offsets = profile.get_xdata()
    assert tuple(profile.axes.get_xlim()) == (offsets.min() - 0.5, offsets.max() + 0.5)


def test_benchmark_series_differ_in_colour_marker_and_line_style():
    fig = plots.benchmark_figure(_benchmark_results())
    lines = [line for line in fig.axes[0].get_lines() if line.get_label() and not line.get_label().startswith("_")]
    assert len(lines) == 5
    for attribute in ("get_color", "get_marker", "get_linestyle"):
        values = [getattr(line, attribute)() for line in lines]
        assert len(set(values)) >= 4, (attribute, values)
    # Hollow markers of different shapes and sizes: where two series coincide, both stay visible.
    assert len({line.get_marker() for line in lines}) == 5 and {line.get_fillstyle() for line in lines} == {"none"}
    assert len({line.get_markersize() for line in lines}) == 5
