"""The kernel-drawn explorers, driven from Python: set slider values, check the figure's data and the picture.

The encoding and pipeline explorers draw in the page: tests/test_page_explorers.py."""


import pytest
import torch

from posenc import attention, models, plots, schemes
from posenc.explorers import SCHEME_VIEWS, SchemeExplorer

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def trained():
    """A learned-table model trained for a few steps: what the learned view needs, in a fraction of a second."""
    return models.train("learned", settings=models.Settings(steps=5, d_model=8, num_heads=2, num_layers=1,
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
        assert explorer.trained is None and 'trained=models.train("learned")' in explorer.message.value

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
