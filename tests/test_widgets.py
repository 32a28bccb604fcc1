"""The explorers, driven from Python: set slider values, check the figure's data and the picture."""

import asyncio

import pytest
import torch

from posenc import attention, experiment, plots, schemes
from posenc.encoding import sinusoidal_encoding, to_concatenated
from posenc.explorers import NO_FRONT_END_HINT, SCHEME_VIEWS, VIEWS, EncodingExplorer, PipelineExplorer, SchemeExplorer

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def explorer():
    return EncodingExplorer(d_model=16, max_sequence_length=20, position=3, dimension=2)


def test_starts_with_a_picture(explorer):
    assert bytes(explorer.image.value).startswith(PNG_SIGNATURE)
    assert explorer.redraws == 1


def test_heatmap_shows_the_current_table(explorer):
    before = explorer.image.value
    explorer.d_model.value = 7
    image = plots.artist(explorer.figure, "table")
    assert torch.equal(torch.as_tensor(image.get_array().data), sinusoidal_encoding(max_sequence_length=20, d_model=7))
    assert image.get_extent() == [-0.5, 6.5, 19.5, -0.5]
    assert explorer.image.value != before
    assert "table shape (20, 7)" in explorer.message.value


def test_position_and_dimension_move_the_marker_lines(explorer):
    explorer.position.value = 11
    explorer.dimension.value = 5
    assert list(plots.artist(explorer.figure, "position").get_ydata()) == [11, 11]
    assert list(plots.artist(explorer.figure, "dimension").get_xdata()) == [5, 5]


def test_the_table_is_recomputed_only_when_its_inputs_change(explorer):
    table = explorer.table
    explorer.position.value = 7
    explorer.view.value = "similarity"
    assert explorer.table is table
    explorer.base.value = 100
    assert explorer.table is not table
    torch.testing.assert_close(explorer.table, sinusoidal_encoding(max_sequence_length=20, d_model=16, base=100.0))


def test_sliders_follow_the_table_size(explorer):
    explorer.position.value = 19
    explorer.dimension.value = 15
    explorer.max_sequence_length.value = 5
    explorer.d_model.value = 3
    assert (explorer.position.max, explorer.position.value) == (4, 4)
    assert (explorer.dimension.max, explorer.dimension.value) == (2, 2)
    assert list(plots.artist(explorer.figure, "position").get_ydata()) == [4, 4]


def test_compare_layouts_shows_the_concatenated_table(explorer):
    explorer.dimension.value = 3  # cos column 1 -> concatenated column 8 + 1
    explorer.compare_layouts.value = True
    fig = explorer.figure
    concatenated = plots.artist(fig, "concatenated_table").get_array().data
    assert torch.equal(torch.as_tensor(concatenated), to_concatenated(explorer.table))
    assert list(plots.artist(fig, "concatenated_dimension").get_xdata()) == [9, 9]


def test_curves_show_the_chosen_column_and_its_partner(explorer):
    explorer.view.value = "curves"
    explorer.dimension.value = 5
    explorer.position.value = 4
    fig = explorer.figure
    _, sin_values = plots.artist(fig, "dots0").get_data()
    _, cos_values = plots.artist(fig, "dots1").get_data()
    torch.testing.assert_close(torch.as_tensor(sin_values).float(), explorer.table[:, 4])
    torch.testing.assert_close(torch.as_tensor(cos_values).float(), explorer.table[:, 5])
    assert "(chosen)" in plots.artist(fig, "title1").get_text()
    marker_x, marker_y = plots.artist(fig, "marker1").get_data()
    assert list(marker_x) == [4] and abs(marker_y[0] - float(explorer.table[4, 5])) < 1e-6


def test_curves_explain_a_missing_cosine_partner(explorer):
    explorer.view.value = "curves"
    explorer.d_model.value = 7
    explorer.dimension.value = 6
    assert "no cos partner" in plots.artist(explorer.figure, "title1").get_text()


def test_wavelengths_run_from_2_pi_to_nearly_base_times_2_pi(explorer):
    explorer.view.value = "wavelengths"
    explorer.dimension.value = 15
    _, sines = plots.artist(explorer.figure, "sin").get_data()
    assert abs(sines[0] - 2 * torch.pi) < 1e-9
    assert sines[-1] < 10000 * 2 * torch.pi
    assert list(plots.artist(explorer.figure, "length").get_ydata()) == [20, 20]


def test_similarity_profile_peaks_at_the_chosen_position(explorer):
    explorer.view.value = "similarity"
    explorer.position.value = 9
    offsets, values = plots.artist(explorer.figure, "profile").get_data()
    assert offsets[values.argmax()] == 0
    matrix = plots.artist(explorer.figure, "matrix").get_array().data
    torch.testing.assert_close(torch.as_tensor(matrix), explorer.table @ explorer.table.T)


@pytest.mark.slow  # a smoke test of every slider end (no value compared): `make test`, not the quick loop
@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("compare", [False, True])
def test_every_view_survives_every_slider_end(view, compare):
    explorer = EncodingExplorer(d_model=8, max_sequence_length=8, view=view)
    explorer.compare_layouts.value = compare
    for slider in (explorer.d_model, explorer.max_sequence_length, explorer.base, explorer.position, explorer.dimension):
        for end in (slider.min, slider.max):
            before, moved = explorer.redraws, slider.value != end
            slider.value = end
            assert bytes(explorer.image.value).startswith(PNG_SIGNATURE)
            assert explorer.redraws == before + moved  # one picture per change made by code, none for no change
    assert explorer.d_model.value == 256 and explorer.max_sequence_length.value == 256


def test_a_burst_of_changes_is_debounced_into_few_redraws():
    explorer = EncodingExplorer(d_model=16, max_sequence_length=32, debounce=0.2)

    async def drag():
        for position in range(1, 21):  # the browser sends 20 values in a few ms
            explorer.position.set_state({"value": position})
        await asyncio.sleep(0.5)

    before = explorer.redraws
    asyncio.run(drag())
    assert 1 <= explorer.redraws - before <= 2  # the first change at once, then one trailing redraw
    assert list(plots.artist(explorer.figure, "position").get_ydata()) == [20, 20]


def test_changes_made_by_code_are_drawn_at_once():
    explorer = EncodingExplorer(d_model=16, max_sequence_length=32, debounce=10.0)

    async def cell():
        explorer.base.value = 10
        explorer.view.value = "wavelengths"  # within the debounce interval, yet drawn now
        assert list(plots.artist(explorer.figure, "length").get_ydata()) == [32, 32]

    before = explorer.redraws
    asyncio.run(cell())
    assert explorer.redraws - before == 2


def test_without_widget_support_a_static_picture_and_a_hint():
    explorer = EncodingExplorer(d_model=8, max_sequence_length=8)
    bundle = explorer._repr_mimebundle_()
    assert bundle["text/plain"] == NO_FRONT_END_HINT
    assert bundle["image/png"] == bytes(explorer.image.value)
    assert "application/vnd.jupyter.widget-view+json" in bundle


def test_bad_explorer_arguments_are_refused():
    with pytest.raises(ValueError, match="view"):
        EncodingExplorer(view="table")
    with pytest.raises(ValueError, match="d_model"):
        EncodingExplorer(d_model=0)
    with pytest.raises(TypeError, match="sentence"):
        PipelineExplorer(sentence=42)


class TestPipelineExplorer:
    def test_shows_shapes_and_padded_tokens(self):
        explorer = PipelineExplorer(sentence="My name is John", max_sequence_length=10, d_model=6)
        assert "<code><bdi>john</bdi></code>" in explorer.tokens_line.value
        assert explorer.tokens_line.value.count("&lt;PAD&gt;") == 6
        titles = [plots.artist(explorer.figure, f"{name}_title").get_text() for name in ("one_hot", "X", "PE", "X_plus_PE")]
        assert titles[0].endswith("(10, 11)") and titles[1].endswith("(10, 6)") and titles[3].endswith("(10, 6)")

    def test_sizes_follow_the_sliders(self):
        explorer = PipelineExplorer()
        explorer.max_sequence_length.value = 12
        explorer.d_model.value = 9
        pe = plots.artist(explorer.figure, "PE").get_array().data
        assert torch.equal(torch.as_tensor(pe), sinusoidal_encoding(max_sequence_length=12, d_model=9))

    def test_a_too_long_sentence_shows_the_error_and_keeps_the_picture(self):
        explorer = PipelineExplorer(max_sequence_length=4)
        picture = explorer.image.value
        explorer.sentence.value = "one two three four five"  # does not raise
        assert "5 tokens, more than max_sequence_length=4" in explorer.message.value
        assert explorer.image.value == picture
        explorer.max_sequence_length.value = 5
        assert explorer.message.value == ""
        assert explorer.image.value != picture

    def test_unknown_words_light_up_the_unk_column(self):
        explorer = PipelineExplorer(sentence="hello John", max_sequence_length=3)
        one_hot = torch.as_tensor(plots.artist(explorer.figure, "one_hot").get_array().data)
        assert one_hot[0].argmax().item() == explorer.vocabulary.unk_id
        assert one_hot[1].argmax().item() == explorer.vocabulary.id_of("john")


@pytest.mark.parametrize("view", VIEWS)
def test_a_blitted_redraw_looks_like_a_full_draw(view):
    # Moving the position only redraws the moving artists over a saved background;
    # the picture must be the one a fresh explorer draws in full.
    moved = EncodingExplorer(d_model=32, max_sequence_length=40, position=5, view=view)
    moved.position.value = 17
    moved.base.value = 1000
    fresh = EncodingExplorer(d_model=32, max_sequence_length=40, position=17, base=1000, view=view)
    assert bytes(moved.image.value) == bytes(fresh.image.value)


def test_the_similarity_view_is_laid_out_again_when_the_base_widens_its_tick_labels():
    # At base 10 PE[p] . PE[q] turns negative and the colour bar's ticks read "−60": wider than at base 10,000. With
    # the axes left where the old labels put them, the colour bar's label lands inside the right panel.
    explorer = EncodingExplorer(d_model=128, max_sequence_length=64, position=10, view="similarity")
    explorer.base.value = 10
    fig, renderer = explorer.figure, explorer.picture.canvas.get_renderer()
    colour_bar = next(ax for ax in fig.axes if ax.get_label() == "<colorbar>")
    right = plots.artist(fig, "profile").axes
    assert "−60" in [label.get_text() for label in colour_bar.get_yticklabels()]
    assert not colour_bar.yaxis.label.get_window_extent(renderer).overlaps(right.get_window_extent(renderer))
    for ax in fig.axes:  # nothing cut off at the figure's edge (the right panel's label, at its right)
        box = ax.get_tightbbox(renderer)
        assert fig.bbox.x0 <= box.x0 and box.x1 <= fig.bbox.x1 + 1e-6
    # Where a fresh explorer at base 10 puts its axes, within a pixel (the constrained layout starts from where they were).
    fresh = EncodingExplorer(d_model=128, max_sequence_length=64, position=10, base=10, view="similarity").figure
    for ax, fresh_ax in zip(fig.axes, fresh.axes, strict=True):
        assert abs(ax.get_window_extent(renderer).x0 - fresh_ax.get_window_extent().x0) < 1


def test_pipeline_explains_what_it_cannot_show():
    import warnings

    explorer = PipelineExplorer(max_sequence_length=10, d_model=6)
    explorer.sentence.value = ""
    assert "The sentence is empty" in explorer.message.value
    explorer.sentence.value = "word " * 1000
    assert "1000 tokens, more than max_sequence_length=10" in explorer.message.value
    assert explorer.tokens_line.value.startswith("1000 tokens: ")  # not the last sentence's tokens
    explorer.sentence.value = "x" * 5000
    labels = [label.get_text() for label in plots.artist(explorer.figure, "one_hot").axes.get_yticklabels()]
    assert labels[0] == "x" * 11 + "…"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the glyph warning is turned into the message, not raised
        explorer.sentence.value = "I ❤️ 🐍 code"
    assert "no glyph for 1 character(s)" in explorer.message.value
    explorer.sentence.value = "שלום עולם"
    assert "<bdi>שלום</bdi>" in explorer.tokens_line.value and explorer.message.value == ""


@pytest.fixture(scope="module")
def trained():
    """A learned-table model trained for a few steps: what the learned view needs, in a fraction of a second."""
    return experiment.train("learned", settings=experiment.Settings(steps=5, d_model=8, num_heads=2, num_layers=1,
                                                                     batch_size=4, longest=12))


class TestSchemeExplorer:
    def test_rotary_curve_stays_put_when_the_query_moves_and_the_added_sinusoid_does_not(self):
        explorer = SchemeExplorer(query_position=100)
        before = {gid: plots.artist(explorer.figure, gid).get_ydata().copy() for gid in ("rotary", "sinusoidal")}
        explorer.query_position.value = 400
        after = {gid: plots.artist(explorer.figure, gid).get_ydata() for gid in ("rotary", "sinusoidal")}
        torch.testing.assert_close(torch.as_tensor(after["rotary"]), torch.as_tensor(before["rotary"]))
        assert abs(after["sinusoidal"] - before["sinusoidal"]).max() > 1.0
        # The curves are the package's scores for notebook 13's word and weights.
        offsets, scores = plots.artist(explorer.figure, "sinusoidal").get_data()
        word = torch.randn(64, generator=torch.Generator().manual_seed(1))
        expected = schemes.same_word_scores(word, attention.projection_weights(d_model=64, seed=0), scheme="sinusoidal",
                                            query_position=400, offsets=list(offsets))
        torch.testing.assert_close(torch.as_tensor(scores), expected)
        assert "query at position 400" in explorer.message.value

    def test_rotary_near_position_0_shows_only_keys_that_exist(self):
        explorer = SchemeExplorer(query_position=3)
        offsets, _ = plots.artist(explorer.figure, "rotary").get_data()
        assert min(offsets) == -3

    def test_alibi_shows_the_chosen_heads_bias(self):
        explorer = SchemeExplorer(view="alibi", num_heads=8, max_sequence_length=10)
        explorer.head.value = 3
        shown = torch.as_tensor(plots.artist(explorer.figure, "bias").get_array().data)
        expected = schemes.alibi_bias(num_heads=8, max_sequence_length=10, dtype=torch.float64)[3]
        assert torch.equal(shown.isnan(), expected.isinf())  # masked keys drawn grey
        torch.testing.assert_close(shown.nan_to_num(), expected.masked_fill(expected.isinf(), 0.0))
        assert "slope 2^-4 = 0.0625" in plots.artist(explorer.figure, "bias_title").get_text()
        explorer.causal.value = False
        shown = torch.as_tensor(plots.artist(explorer.figure, "bias").get_array().data)
        assert not shown.isnan().any() and torch.equal(shown, shown.T)

    def test_alibi_head_slider_follows_the_number_of_heads(self):
        explorer = SchemeExplorer(view="alibi", num_heads=8, head=7)
        explorer.num_heads.value = 3
        assert explorer.head.max == 2 and explorer.head.value == 2
        assert "head 2 of 3" in explorer.message.value

    def test_learned_shows_the_table_before_and_after_training(self, trained):
        explorer = SchemeExplorer(view="learned", trained=trained, position=4)
        for name, table in (("before training", trained.initial_state["position.weight"]),
                            ("after training", trained.model.position.weight.detach())):
            q, similarity = plots.artist(explorer.figure, f"{name}_similarity").get_data()
            assert list(q) == list(range(12)) and similarity[4] == pytest.approx(1.0)
            torch.testing.assert_close(torch.as_tensor(similarity),
                                       torch.nn.functional.cosine_similarity(table[4:5], table, dim=-1))
        assert explorer.position.max == 11

    def test_the_explorer_never_trains_the_learned_view_asks_for_a_trained_model(self):
        explorer = SchemeExplorer()
        explorer.view.value = "learned"
        assert explorer.trained is None and 'trained=experiment.train("learned")' in explorer.message.value

    def test_each_view_shows_its_own_controls(self, trained):
        explorer = SchemeExplorer(trained=trained)
        shown = {}
        for view in SCHEME_VIEWS:
            explorer.view.value = view
            shown[view] = {c.description for box in explorer.controls.children
                           for c in getattr(box, "children", [box])}
        assert shown == {"rotary": {"query position p", "base"},
                         "alibi": {"num_heads", "head", "max_sequence_length", "causal (keys after the query masked)"},
                         "learned": {"position p"}}

    @pytest.mark.slow
    @pytest.mark.parametrize("view", SCHEME_VIEWS)
    def test_every_view_survives_every_slider_end(self, view, trained):
        explorer = SchemeExplorer(view=view, trained=trained)
        for slider in (explorer.query_position, explorer.base, explorer.num_heads, explorer.head,
                       explorer.max_sequence_length, explorer.position):
            for end in (slider.min, slider.max):
                slider.value = end
                assert bytes(explorer.image.value).startswith(PNG_SIGNATURE)

    def test_bad_arguments_are_refused(self, trained):
        for arguments, error, message in [({"view": "sinusoidal"}, ValueError, "view must be one of"),
                                          ({"head": 8}, ValueError, "head must be an int from 0 to 7"),
                                          ({"base": 1e9}, ValueError, "slider's range"),
                                          ({"max_sequence_length": 1}, ValueError, "max_sequence_length"),
                                          ({"trained": "model"}, TypeError, "trained must be"),
                                          ({"trained": trained, "position": 12}, ValueError, "position")]:
            with pytest.raises(error, match=message):
                SchemeExplorer(**arguments)

    def test_each_view_draws_a_scheme_in_its_colour(self, trained):
        explorer = SchemeExplorer(trained=trained)
        for gid in ("rotary", "sinusoidal", "rotary_at_0", "sinusoidal_at_0"):
            assert plots.artist(explorer.figure, gid).get_color() == plots.SCHEME_COLOURS[gid.removesuffix("_at_0")]
        explorer.view.value = "alibi"
        assert plots.artist(explorer.figure, "head").get_color() == plots.SCHEME_COLOURS["alibi"]
        explorer.view.value = "learned"
        assert plots.artist(explorer.figure, "after training_similarity").get_color() == plots.SCHEME_COLOURS["learned"]
