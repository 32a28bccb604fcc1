"""Every figure the package draws, read from the figure objects: nothing a reader cannot decode.

Each axes with data says what it shows (a title or an axis label), every image has a colour bar
with a label (or shares the scale of one that has, or has two colours that its title names), and no text runs off
the figure.
Every public function of posenc.plots that returns a Figure must be drawn here (a test checks
that none is missed), and each explorer view as the explorers draw it.
"""

import importlib
import inspect
import json
import pkgutil
import re
from pathlib import Path

import pytest
import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure
from matplotlib.image import AxesImage

from posenc import explorers, plots
from posenc.builder import sinusoidal_encoding
from posenc.models import training, transformer

ROOT = Path(__file__).resolve().parent.parent
TINY = transformer.Settings(steps=2, d_model=8, num_heads=2, num_layers=1, batch_size=2)


def _matrix(rows, columns, seed=0):
    return torch.randn(rows, columns, generator=torch.Generator().manual_seed(seed))


def _benchmark_results():
    return json.loads((ROOT / "benchmarks" / "results" / "encoding.json").read_text())


FIGURES = {
    "pipeline_diagram": lambda: plots.pipeline_diagram(highlight=("X + PE",)),
    "transformer_diagram": lambda: plots.transformer_diagram(),
    "encoding_heatmap": lambda: plots.encoding_heatmap(max_sequence_length=64, d_model=128),
    "encoding_heatmap_10x6": lambda: plots.encoding_heatmap(max_sequence_length=10, d_model=6),
    "encoding_heatmap_10x6, both layouts": lambda: plots.encoding_heatmap(max_sequence_length=10, d_model=7,
                                                                         compare_layouts=True),
    "encoding_heatmap, both layouts": lambda: plots.encoding_heatmap(max_sequence_length=64, d_model=128,
                                                                    compare_layouts=True, column_ticks=(0, 32, 64, 96, 127)),
    "sine_cosine_curves": lambda: plots.sine_cosine_curves(d_model=6, columns=(0, 1, 2, 3, 4, 5),
                                                           max_sequence_length=10),
    "pair_rotation": lambda: plots.pair_rotation(d_model=6, max_sequence_length=10, start=1, shift=3),
    "interleave_diagram": lambda: plots.interleave_diagram(d_model=7, rows=3),
    "matrix_figure": lambda: plots.matrix_figure(_matrix(10, 6), title="X", xlabel="dimension", ylabel="token"),
    "matrix_figure_one_hot": lambda: plots.matrix_figure(torch.eye(11)[[2, 3, 4, 5, 0, 0]], title="one-hot",
                                                         cmap="Greys", symmetric=False,
                                                         column_labels=[f"t{k}" for k in range(11)]),
    "matrices_figure": lambda: plots.matrices_figure({"X": _matrix(6, 6), "X + PE": _matrix(6, 6, 1)},
                                                     colorbar_label="value", xlabel="dimension", ylabel="token"),
    "matrices_figure, clipped and masked": lambda: plots.matrices_figure(
        {"V": _matrix(10, 6) * 2, "output": torch.softmax(_matrix(10, 6, 1), dim=-1)}, value_range=(-2, 2), clip=True,
        hidden={"output": torch.arange(6) > 3 + torch.zeros(10, 1)}, colorbar_label="value (beyond ±2 clipped)",
        xlabel="dimension", ylabel="token"),
    "matrix_figure, masked": lambda: plots.matrix_figure(
        torch.softmax(_matrix(10, 10), dim=-1), title="weights", value_range=(0, 1), cmap="Blues", symmetric=False,
        hidden=torch.ones(10, 10, dtype=torch.bool).triu(diagonal=1)),
    "lookup_figure": lambda: plots.lookup_figure(_matrix(11, 6), _matrix(11, 6)[[2, 3, 4, 5, 0, 0]],
                                                 table_labels=[f"{k} t{k}" for k in range(11)],
                                                 row_labels=["t2", "t3", "t4", "t5", "t0", "t0"]),
    "one_hot_figure": lambda: plots.one_hot_figure(torch.eye(11)[[2, 3, 4, 5, 0, 0]], row_labels=list("abcdee"),
                                                   vocabulary=[f"t{k}" for k in range(11)]),
    "matrix_figure_one_hot, bare": lambda: plots.matrix_figure(torch.eye(11)[[2, 3, 4, 5, 0, 0]], title="one-hot",
                                                               cmap="Greys", symmetric=False, numbers=False),
    "similarity_figure": lambda: plots.similarity_figure(sinusoidal_encoding(max_sequence_length=128, d_model=64),
                                                         position=64),
    "error_by_position": lambda: plots.error_by_position({"a": [1e-7, 1e-6, 1e-5], "b": [0, 1e-7, 1e-7]},
                                                         positions=[10, 100, 1000], title="error",
                                                         reference_slope=2.0**-24),
    "lines_figure": lambda: plots.lines_figure([0, 1, 2], {"a": [0, 1, 2], "b": [2, 1, 0]}, title="t", xlabel="x",
                                               ylabel="y"),
    "lines_figure, marked on a log2 axis": lambda: plots.lines_figure(
        list(range(1, 256)), {"a": [1 / k for k in range(1, 256)], "b": [k / 255 for k in range(1, 256)]}, title="t",
        xlabel="x", ylabel="y", marks=[1, 2, 4, 8, 16, 32, 64, 128, 255], log2_x=True),
    "angle_reached": lambda: plots.angle_reached({"a": [1.0, 0.01, 1e-5], "b": [1.0, 0.1, 0.01]}, position=256),
    "accuracy_by_length": lambda: plots.accuracy_by_length({"none": {16: 0.2, 32: 0.1}, "learned": {16: 1.0, 32: None}},
                                                           trained=(8, 16), baseline={16: 0.25, 32: 0.2},
                                                           ceiling=("ceiling", {16: 0.6, 32: 0.55})),
    "benchmark_figure": lambda: plots.benchmark_figure(_benchmark_results()),
    "score_by_offset": lambda: plots.score_by_offset([-2, -1, 0, 1, 2], {
        "sinusoidal": {"query at 0": [0.1, 0.5, 1.0, 0.5, 0.1]}, "rotary": {"query at 0": [0.2, 0.6, 1.0, 0.6, 0.2]}},
        title="scores"),
    "attention_maps": lambda: plots.attention_maps(
        {"head 0": torch.softmax(_matrix(4, 6), dim=-1), "head 1": torch.softmax(_matrix(4, 6, 1), dim=-1)},
        tokens=list("abcd"), keys=list("abcdef"), hidden={"head 1": torch.tensor([False] * 4 + [True] * 2)},
        hidden_label="hidden"),
    "attention_maps, each panel its own order": lambda: plots.attention_maps(
        {"A": torch.softmax(_matrix(3, 3), dim=-1), "B": torch.softmax(_matrix(3, 3, 1), dim=-1)},
        tokens={"A": ["x", "y", "z"], "B": ["z", "x", "y"]}),
    "mask_maps": lambda: plots.mask_maps(
        {"padding": torch.tensor([True, True, False]).repeat(3, 1), "causal": torch.ones(3, 3, dtype=torch.bool).tril()},
        tokens=["a", "b", "<PAD>"], framed_rows=2),
    "previous_token_attention": lambda: plots.previous_token_attention(
        {scheme: torch.softmax(torch.randn(2, 6, 6, generator=torch.Generator().manual_seed(seed)), dim=-1)
         for seed, scheme in enumerate(("rotary", "sinusoidal"))}, trained_length=4,
        heads={"rotary": "layer 0, head 1", "sinusoidal": "layer 0, head 0"}),
}


EXPLORER_VIEWS = {
    # The still picture each view shows where widgets cannot render (the page draws the live one).
    **{f"EncodingExplorer/{view}": (lambda view=view: explorers.EncodingExplorer(view=view).figure())
       for view in explorers.encoding_explorer.VIEWS},
    "EncodingExplorer/heatmap, both layouts": lambda: explorers.EncodingExplorer(compare_layouts=True).figure(),
    **{f"SchemeExplorer/{view}": (lambda view=view: explorers.SchemeExplorer(
        view=view, trained=training.train("learned", settings=TINY)).figure()) for view in explorers.SCHEME_VIEWS},
}


def test_every_figure_function_is_drawn_here():
    # Every public function of posenc.plots and its modules; the explorers' own figures are drawn through the
    # explorers (EXPLORER_VIEWS), which fill them with data. new_figure (the empty figure all of them start
    # from) draws nothing.
    modules = [importlib.import_module(f"posenc.plots.{found.name}") for found in pkgutil.iter_modules(plots.__path__)]
    public = [name for module in modules for name in module.__all__]
    returns_a_figure = {name for name in public if inspect.isfunction(getattr(plots, name))
                        and inspect.signature(getattr(plots, name)).return_annotation in (Figure, "Figure")}
    assert {"encoding_heatmap", "accuracy_by_length", "pipeline_diagram"} <= returns_a_figure  # the search finds them
    # Notebooks 15 and 16 draw their figures beside their own tests, through this file's check_figure.
    from test_real_pipeline_notebook import FIGURES as REAL_PIPELINE_FIGURES
    from test_stretching import FIGURES as STRETCHING_FIGURES

    drawn = {name.split("_10x6")[0].split("_one_hot")[0] for name in [*FIGURES, *REAL_PIPELINE_FIGURES, *STRETCHING_FIGURES]}
    assert returns_a_figure - {"new_figure"} <= drawn


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
        # Two colours whose key the title gives instead, such as "black = 1, white = 0".
        keyed = image.get_cmap().N == 2 and re.search(r"\w+ = \S+, \w+ = \S+", image.axes.get_title())
        if not (shares or keyed):
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


def test_a_large_table_is_ticked_at_the_columns_the_text_names():
    # 04's text speaks of "columns 64 to 127" of a d_model = 128 table, in both layouts.
    fig = plots.encoding_heatmap(max_sequence_length=64, d_model=128, compare_layouts=True,
                                 column_ticks=(0, 32, 64, 96, 127))
    for ax in fig.axes[:2]:
        assert list(ax.get_xticks()) == [0, 32, 64, 96, 127]


def test_one_hot_cells_read_0_and_1():
    fig = plots.matrix_figure(torch.eye(3), title="one-hot", cmap="Greys", symmetric=False)
    written = {text.get_text() for text in fig.axes[0].texts}
    assert written == {"0", "1"}


def test_small_numbers_can_be_left_blank_and_the_colours_stay():
    weights = torch.tensor([[0.93, 0.036, 0.001], [0.004, 0.5, 0.496], [0.0, 0.0, 1.0]])
    fig = plots.matrix_figure(weights, title="head", value_range=(0, 1), symmetric=False, blank_below=0.005)
    assert sorted(text.get_text() for text in fig.axes[0].texts) == ["0.04", "0.50", "0.50", "0.93", "1.00"]
    assert fig.axes[0].images[0].get_array().shape == (3, 3)
    assert len(plots.matrix_figure(weights, title="head", value_range=(0, 1), symmetric=False).axes[0].texts) == 9


def test_each_panel_can_carry_its_own_word_order_and_outline():
    # One sentence in two word orders: each attention map labelled with its own words, its own row framed.
    first, second = torch.softmax(_matrix(4, 4), dim=-1), torch.softmax(_matrix(4, 4, 1), dim=-1)
    words, shuffled = ["my", "name", "is", "john"], ["john", "is", "my", "name"]
    fig = plots.matrices_figure({"a": first, "b": second}, value_range=(0, 1), labels={"a": words, "b": shuffled},
                                outline_rows={"a": [3], "b": [0]})
    left, right = fig.axes[:2]
    for ax, labels in ((left, words), (right, shuffled)):
        assert [t.get_text() for t in ax.get_yticklabels()] == labels
        assert [t.get_text() for t in ax.get_xticklabels()] == labels
        assert all(t.get_rotation() == 0 for t in ax.get_xticklabels())  # four short words fit level
    assert [p.get_y() for p in left.patches] == [2.5] and [p.get_y() for p in right.patches] == [-0.5]
    with pytest.raises(ValueError, match="same panels"):
        plots.matrices_figure({"a": first, "b": second}, labels={"a": words})


def test_masked_cells_are_grey_hatched_and_carry_no_number():
    # A weight the mask set to 0 must not read like a weight that rounds to 0.00.
    weights = torch.softmax(_matrix(4, 4), dim=-1)
    hidden = torch.ones(4, 4, dtype=torch.bool).triu(diagonal=1)
    fig = plots.matrices_figure({"a": weights, "b": weights}, value_range=(0, 1), hidden={"b": hidden})
    left, right = fig.axes[:2]
    assert len(left.texts) == 16 and len(right.texts) == 16 - int(hidden.sum())
    assert len([p for p in right.patches if p.get_hatch()]) == int(hidden.sum()) and not left.patches
    legend = fig.axes[-1].get_legend()  # the key sits under the colour bar
    assert legend is not None and [t.get_text() for t in legend.get_texts()] == ["masked"]


def test_outlines_and_the_hidden_key_are_drawn_where_asked():
    values = _matrix(4, 3)
    hidden = torch.zeros(4, 3, dtype=torch.bool)
    hidden[3] = True
    fig = plots.matrices_figure({"a": values, "b": values}, hidden={"b": hidden}, hidden_label="not used",
                                outline_rows=[0, 2], outline_columns=[1])
    left, right = fig.axes[:2]
    frames = [p for p in left.patches if not p.get_fill()]
    assert sorted((p.get_x(), p.get_y(), p.get_width(), p.get_height()) for p in frames) == \
        [(-0.5, -0.5, 3, 1), (-0.5, 1.5, 3, 1), (0.5, -0.5, 1, 4)]
    assert len([p for p in right.patches if not p.get_fill()]) == 3  # every panel gets the frames
    assert [t.get_text() for t in fig.axes[-1].get_legend().get_texts()] == ["not used"]
    # Each panel its own rows and columns: one word in two word orders.
    fig = plots.matrices_figure({"a": values, "b": values}, outline_rows={"a": [3], "b": [0]},
                                outline_columns={"a": [0], "b": [2]})
    left, right = fig.axes[:2]
    assert sorted((p.get_x(), p.get_y()) for p in left.patches if not p.get_fill()) == [(-0.5, -0.5), (-0.5, 2.5)]
    assert sorted((p.get_x(), p.get_y()) for p in right.patches if not p.get_fill()) == [(-0.5, -0.5), (1.5, -0.5)]
    assert all(p.get_edgecolor() == to_rgba("black") for p in right.patches)  # black unless asked
    # Adjacent rows share one frame: rows 0 to 2 read as one block, row 3 of another panel stays apart.
    fig = plots.matrices_figure({"a": values, "b": values}, outline_rows={"a": range(3), "b": [0, 2, 3]})
    left, right = fig.axes[:2]
    assert [(p.get_y(), p.get_height()) for p in left.patches if not p.get_fill()] == [(-0.5, 3)]
    assert [(p.get_y(), p.get_height()) for p in right.patches if not p.get_fill()] == [(-0.5, 1), (1.5, 2)]
    fig = plots.matrices_figure({"a": values}, outline_rows=[1], outline_colour="#E69F00")
    assert [p.get_edgecolor() for p in fig.axes[0].patches] == [to_rgba("#E69F00")]


def test_a_mask_can_be_keyed_by_name_and_the_hidden_key_can_sit_under_its_panel():
    # 07's masks: one named swatch per value instead of a 0-to-1 gradient, and no digits in the cells.
    mask = torch.ones(4, 4).tril()
    fig = plots.matrices_figure({"a": mask, "b": mask}, value_range=(0, 1), cmap="Blues",
                                categories={1: "may look", 0: "hidden"}, colorbar_label="mask")
    left = fig.axes[0]
    assert not left.texts and left.images[0].get_cmap().N == 2
    bar = fig.axes[1].images[0].colorbar  # the last panel's image carries the bar
    assert [t.get_text() for t in bar.ax.get_yticklabels()] == ["hidden", "may look"]
    assert not check_figure(fig)
    # 07's weights: the key to the hatched cells under the panel that has them, not under the colour bar.
    hidden = torch.ones(4, 4, dtype=torch.bool).triu(diagonal=1)
    weights = torch.softmax(_matrix(4, 4), dim=-1)
    fig = plots.matrices_figure({"a": weights, "b": weights}, value_range=(0, 1), hidden={"b": hidden},
                                hidden_label="hidden", hidden_key_under_panel=True, xlabel="key")
    left, right = fig.axes[:2]
    assert left.get_legend() is None and [t.get_text() for t in right.get_legend().get_texts()] == ["hidden"]
    assert fig.axes[-1].get_legend() is None
    assert not check_figure(fig)


def test_clipping_is_shown_on_the_colour_bar():
    values = torch.tensor([[0.5, -4.0], [1.0, 0.2]])
    fig = plots.matrices_figure({"a": values}, value_range=(-2, 2), clip=True)
    assert fig.axes[0].images[0].get_clim() == (-2.0, 2.0)
    assert fig.axes[0].images[0].colorbar.extend == "min"  # an arrow at the end a value lies beyond
    assert "-4.00" in {t.get_text() for t in fig.axes[0].texts}  # the cell still says its own number


def test_similarity_has_one_diverging_scale_for_every_base():
    # Base 10,000 (never negative) and base 10 (negative too) on one colour map, from -max to +max, so that a learner
    # can compare the two pictures by their colours, as the live explorer draws them.
    for base in (10_000.0, 10.0):
        table = sinusoidal_encoding(max_sequence_length=64, d_model=64, base=base)
        fig = plots.similarity_figure(table, position=10)
        image, profile = plots.artist(fig, "matrix"), plots.artist(fig, "profile")
        low, high = image.get_clim()
        assert image.get_cmap().name == plots.DIVERGING and low == -high == -float((table @ table.T).abs().max())
        # The profile: from 0, or the row's lowest value below it, to the peak.
        assert profile.axes.get_ylim() == pytest.approx((min(0.0, float(profile.get_ydata().min())) - 0.05 * high,
                                                         1.05 * high))
    assert profile.axes.get_ylim()[0] < -0.05 * high  # base 10: the row dips below 0


def test_similarity_profile_is_fitted_to_its_data():
    table = sinusoidal_encoding(max_sequence_length=64, d_model=64)
    fig = plots.similarity_figure(table, position=10)
    profile = plots.artist(fig, "profile")
    offsets = profile.get_xdata()
    assert tuple(profile.axes.get_xlim()) == (offsets.min() - 0.5, offsets.max() + 0.5)


def test_the_similarity_colour_bar_lies_under_the_matrix_not_beside_the_profile():
    # Beside the matrix, the bar's label stood right next to the profile's axis and read as the profile's label.
    fig = plots.similarity_figure(sinusoidal_encoding(max_sequence_length=64, d_model=64), position=10)
    FigureCanvasAgg(fig).draw()
    image, profile = plots.artist(fig, "matrix"), plots.artist(fig, "profile")
    bar = image.colorbar
    assert bar.orientation == "horizontal" and bar.ax.get_xlabel() == "PE[p] . PE[q]"
    assert bar.ax.get_position().y1 < image.axes.get_position().y0
    assert profile.axes.yaxis.get_label_position() == "left" and profile.axes.get_xlabel() == "offset q - p"


def test_lines_put_their_markers_at_the_marks_and_a_log2_axis_reads_plain_numbers():
    x = list(range(1, 256))
    marks = [1, 2, 4, 8, 16, 32, 64, 128, 255]
    fig = plots.lines_figure(x, {"a": [1 / k for k in x], "b": [k / 255 for k in x]}, title="t", xlabel="x",
                             ylabel="y", marks=marks, log2_x=True)
    FigureCanvasAgg(fig).draw()
    ax = fig.axes[0]
    for line in ax.get_lines():
        assert [x[i] for i in line.get_markevery()] == marks
    assert ax.get_xscale() == "log" and "16" in [t.get_text() for t in ax.get_xticklabels()]


def test_lines_draw_a_reference_named_in_the_legend():
    fig = plots.lines_figure([0, 1, 2], {"a": [0.5, 0.2, 0.1]}, title="t", xlabel="x", ylabel="y",
                             reference=("1/16, an even spread", 1 / 16))
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["a", "1/16, an even spread"]
    assert [line.get_ydata()[0] for line in ax.get_lines() if line.get_label() == "1/16, an even spread"] == [1 / 16]
    # 13's head 3 lies almost on the reference, with the dotted style: the reference must look different.
    reference = next(line for line in ax.get_lines() if line.get_label() == "1/16, an even spread")
    assert reference.get_linestyle() == "-" and reference.get_linewidth() > 2 and reference.get_zorder() < 2


def test_lines_on_a_log_y_axis_with_a_thin_reference_thin_in_the_legend_too():
    fig = plots.lines_figure([0, 1, 2], {"a": [100, 1, 0.01]}, title="t", xlabel="x", ylabel="y",
                             reference=("0.1", 0.1), thin_reference=True, log_y=(1e-4, 1e3))
    ax = fig.axes[0]
    assert ax.get_yscale() == "log" and ax.get_ylim() == (1e-4, 1e3)
    assert ax.get_lines()[-1].get_linewidth() == 1 and ax.get_legend().get_lines()[-1].get_linewidth() == 1


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


def test_error_lines_differ_in_hue_and_marker_and_the_reference_line_says_what_it_is():
    # 12's figures: the ways to build the table. Two lines that lie on each other (both casts to bfloat16 near 2^-9)
    # show their markers at other positions; the dotted line is named.
    errors = {name: [2e-3] * 10 for name in ("a", "b", "c", "d", "e")}
    fig = plots.error_by_position(errors, positions=list(range(10, 110, 10)), title="t", reference_slope=2.0**-24,
                                  reference_label="2^-24 x position: float32's rounding")
    ax = fig.axes[0]
    lines = [line for line in ax.get_lines() if line.get_label() in errors]
    assert len({line.get_color() for line in lines}) == 5 and len({line.get_marker() for line in lines}) == 5
    assert len({str(line.get_markevery()) for line in lines}) == 5
    assert not {":", "-."} & {line.get_linestyle() for line in lines}  # the reference line's and the second level's
    assert "2^-24 x position: float32's rounding" in [text.get_text() for text in ax.get_legend().get_texts()]


def test_a_second_error_figure_keeps_the_first_ones_looks_and_can_be_linear_with_a_named_level():
    # 12's ratio figure: two of the five lines again, over 2^-9 on a linear axis, with f64→bf16's level at 1.
    errors = {name: [2e-3] * 10 for name in ("a", "b", "c", "d", "e")}
    first = plots.error_by_position(errors, positions=list(range(10, 110, 10)), title="t")
    second = plots.error_by_position({"d": [1.5] * 10, "a": [0.5] * 10}, positions=list(range(10, 110, 10)), title="t",
                                     like=first, linear_max=2, level=(1, "level"), ylabel="error / level")
    looks = {line.get_label(): line for line in first.axes[0].get_lines()}
    ax = second.axes[0]
    for line in ax.get_lines():
        if line.get_label() in ("a", "d"):
            look = looks[line.get_label()]
            assert (line.get_color(), line.get_marker(), line.get_linestyle()) == (
                look.get_color(), look.get_marker(), look.get_linestyle())
    assert ax.get_yscale() == "linear" and ax.get_ylim() == (0, 2) and ax.get_ylabel() == "error / level"
    assert "level" in [text.get_text() for text in ax.get_legend().get_texts()]
    # The level is drawn over the lines: 12's f32→bf16 lies on it up to position 1,000 and must not hide it.
    level = next(line for line in ax.get_lines() if line.get_label() == "level")
    assert all(level.get_zorder() > line.get_zorder() for line in ax.get_lines() if line is not level)


def test_a_list_of_levels_draws_one_named_line_each():
    # 12's ratio figure: the level 1 (f64→bf16) and the level 2 (half a gap plus a drift of 2^-9).
    fig = plots.error_by_position({"a": [0.5] * 10}, positions=list(range(10, 110, 10)), title="t", linear_max=3,
                                  level=[(1, "one"), (2, "two")])
    lines = {line.get_label(): line for line in fig.axes[0].get_lines()}
    assert list(lines["one"].get_ydata()) == [1, 1] and list(lines["two"].get_ydata()) == [2, 2]
    assert {"one", "two"} <= {text.get_text() for text in fig.axes[0].get_legend().get_texts()}
    assert lines["one"].get_linestyle() != lines["two"].get_linestyle()  # the legend tells them apart


def test_a_level_and_a_reference_slope_in_one_figure_look_different():
    # 12's float32 figure: the dotted bound and the rounding level are both grey; the legend tells them apart by style.
    fig = plots.error_by_position({"a": [1e-7] * 3}, positions=[10, 100, 1000], title="t", reference_slope=1e-9,
                                  reference_label="bound", level=(3e-8, "level"))
    lines = {line.get_label(): line for line in fig.axes[0].get_lines()}
    assert lines["bound"].get_linestyle() != lines["level"].get_linestyle()
    assert lines["level"].get_zorder() > lines["a"].get_zorder()


def test_a_figure_of_other_lines_can_start_at_a_later_look():
    # 12's float32 figure draws two recipes, its bfloat16 figure three others: no look is drawn twice.
    positions = list(range(10, 110, 10))
    first = plots.error_by_position({"a": [1e-3] * 10, "b": [1e-4] * 10}, positions=positions, title="t")
    second = plots.error_by_position({"c": [1e-3] * 10, "d": [1e-4] * 10, "e": [1e-5] * 10}, positions=positions,
                                     title="t", first_look=2)
    lines = [*first.axes[0].get_lines(), *second.axes[0].get_lines()]
    assert len({line.get_color() for line in lines}) == 5 and len({line.get_marker() for line in lines}) == 5
    assert len({str(line.get_markevery()) for line in second.axes[0].get_lines()}) == 3
    for bad in (-1, 8, 1.5):
        with pytest.raises((TypeError, ValueError), match="first_look"):
            plots.error_by_position({"a": [1e-3] * 10}, positions=positions, title="t", first_look=bad)


def test_error_by_position_bins_per_position_errors_into_the_worst_up_to_each_end():
    # 12's figure: one error per position 0 .. 99,999, drawn as the worst up to 8 positions a decade from 10 on.
    errors = {"grows": torch.arange(100_000, dtype=torch.float64) * 1e-9}
    line = plots.error_by_position(errors, title="t").axes[0].get_lines()[0]
    x, y = line.get_xdata(), line.get_ydata()
    assert len(x) == 33 and x[0] == 10 and x[-1] == 100_000
    assert all(abs(value - (end - 1) * 1e-9) < 1e-15 for end, value in zip(x, y))


def test_each_scheme_has_one_distinct_colour_used_by_accuracy_by_length():
    assert set(plots.SCHEME_COLOURS) == {"none", "learned", "sinusoidal", "rotary", "alibi", "pi", "ntk", "yarn",
                                         "llama3"}
    assert len(set(plots.SCHEME_COLOURS.values())) == len(plots.SCHEME_COLOURS)
    schemes = list(transformer.SCHEMES)
    fig = plots.accuracy_by_length({s: {16: 0.5, 32: 0.25} for s in schemes}, trained=(8, 16))
    drawn = {line.get_label(): line.get_color() for line in fig.axes[0].get_lines() if line.get_label() in schemes}
    assert drawn == {s: plots.SCHEME_COLOURS[s] for s in schemes}


def test_accuracy_by_length_keeps_equal_scores_visible_and_no_rows_off_the_scale():
    # learned and rotary both score 1.0 at 8 and 16: hollow markers side by side keep both visible. Only the
    # measured lengths are drawn: markers, no line between them.
    accuracies = {"none": {8: 0.3, 16: 0.2, 32: 0.2}, "learned": {8: 1.0, 16: 1.0, 32: None},
                  "rotary": {8: 1.0, 16: 1.0, 32: 1.0}}
    fig = plots.accuracy_by_length(accuracies, trained=(8, 16), labels={"rotary": "rotary (RoPE)"})
    ax = fig.axes[0]
    lines = {line.get_label(): line for line in ax.get_lines() if line.get_label() in (*accuracies, "rotary (RoPE)")}
    assert set(lines) == {"none", "learned", "rotary (RoPE)"}  # a label replaces the scheme's name in the legend
    assert {line.get_fillstyle() for line in lines.values()} == {"none"}
    assert {line.get_linestyle() for line in lines.values()} == {"None"}
    at_8 = sorted(float(line.get_xdata()[0]) for line in lines.values())
    assert len(set(at_8)) == 3 and at_8[0] < 8 < at_8[-1] and at_8[-1] / at_8[0] < 2**0.5  # beside 8, not at 16
    assert lines["rotary (RoPE)"].get_color() == plots.SCHEME_COLOURS["rotary"]
    # A learned table without rows is a cross below the accuracy scale, not a point at accuracy 0.
    crosses = [line for line in ax.get_lines() if line.get_marker() == "x"]
    assert crosses and all(y < 0 for line in crosses for y in line.get_ydata())
    assert min(ax.get_yticks()) == 0 and ax.get_ylim()[0] < 0
    assert "log" in ax.get_xlabel() and ax.get_xscale() == "log"
    # Without a missing answer the scale starts at 0.
    assert plots.accuracy_by_length({"rotary": {16: 1.0, 32: 1.0}}, trained=(8, 16)).axes[0].get_ylim()[0] == 0


def test_accuracy_by_length_draws_a_ceiling_named_in_the_legend():
    fig = plots.accuracy_by_length({"alibi": {8: 0.58, 16: 0.54}}, trained=(8, 16), baseline={8: 0.3, 16: 0.2},
                                   ceiling=("ceiling of symmetric ALiBi", {8: 0.61, 16: 0.58}))
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()][-3:] == ["order-blind guess", "ceiling of symmetric ALiBi",
                                                                        "alibi"]
    bars = [c for c in ax.collections if c.get_label() == "ceiling of symmetric ALiBi"][0]
    assert sorted(round(float(seg[0][1]), 2) for seg in bars.get_segments()) == [0.58, 0.61]


def test_lines_take_the_colours_they_are_given_and_keep_their_own_markers():
    fig = plots.lines_figure([0, 1], {"RoPE": [0, 1], "added sinusoid": [1, 0]}, title="t", xlabel="x", ylabel="y",
                             colours={"RoPE": plots.SCHEME_COLOURS["rotary"]})
    lines = {line.get_label(): line for line in fig.axes[0].get_lines()}
    assert lines["RoPE"].get_color() == plots.SCHEME_COLOURS["rotary"]
    assert lines["added sinusoid"].get_color() != plots.SCHEME_COLOURS["rotary"]
    assert lines["RoPE"].get_marker() != lines["added sinusoid"].get_marker()


def test_the_lookup_figure_joins_each_row_to_the_table_row_it_equals():
    from matplotlib.patches import ConnectionPatch

    table = _matrix(11, 6)
    rows = torch.cat([table[[2, 0, 0]], _matrix(1, 6, seed=7)])  # the last row is in no row of the table
    fig = plots.lookup_figure(table, rows, table_labels=[str(k) for k in range(11)], row_labels=list("abcd"))
    lines = [a for a in fig.artists if isinstance(a, ConnectionPatch)]
    assert [(line.xy1[1], line.xy2[1]) for line in lines] == [(2, 0), (0, 1), (0, 2)]  # (table row, row), none for d
    assert lines[1].get_edgecolor() == lines[2].get_edgecolor() != lines[0].get_edgecolor()  # one colour per table row


def test_attention_maps_label_queries_and_keys_and_pass_any_option_on():
    weights = torch.softmax(_matrix(2, 3), dim=-1)
    fig = plots.attention_maps({"w": weights}, tokens=["a", "b"], keys=["a", "b", "<PAD>"])
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "b", "<PAD>"]
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("key (looked at)", "query (looking)")
    assert ax.images[0].get_clim() == (0.0, 1.0)
    mask = plots.attention_maps({"m": torch.ones(2, 2)}, tokens=["a", "b"], colorbar_label="mask")
    assert mask.axes[-1].get_ylabel() == "mask"  # an option overrides the look
