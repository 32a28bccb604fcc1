"""The scheme explorer driven from Python: its settings checked where they are set, the numbers its state holds, and
the still picture where widgets cannot render.

Every explorer computes and draws in the page: their numbers, key presses and layout are tested in Chromium in
tests/test_page_explorers.py."""

import numpy as np
import pytest
import torch

from posenc import attention, plots, schemes
from posenc.explorers import NO_FRONT_END_HINT, SCHEME_VIEWS, SchemeExplorer
from posenc.models import training, transformer

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def trained():
    """A learned-table model trained for a few steps: what the learned view needs, in a fraction of a second."""
    return training.train("learned", settings=transformer.Settings(steps=5, d_model=8, num_heads=2, num_layers=1,
                                                                     batch_size=4, longest=12))


class TestSchemeExplorer:
    def test_the_state_holds_only_the_word_the_weights_and_the_learned_tables(self, trained):
        explorer = SchemeExplorer(view="learned", trained=trained, position=4)
        word = torch.randn(64, generator=torch.Generator().manual_seed(1))
        weights = attention.projection_weights(d_model=64, seed=0)
        assert np.array_equal(np.frombuffer(explorer._word, "<f4"), word.numpy())
        W = np.frombuffer(explorer._weights, "<f4").reshape(2, 64, 64)
        assert np.array_equal(W[0], weights.W_Q.numpy()) and np.array_equal(W[1], weights.W_K.numpy())
        assert explorer._table_shape == [12, 8]
        tables = np.frombuffer(explorer._tables, "<f4").reshape(2, 12, 8)
        assert np.array_equal(tables[0], trained.initial_state["position.weight"].numpy())
        assert np.array_equal(tables[1], trained.model.position.weight.detach().numpy())
        # The explorer never trains: without a model the learned view has nothing, and says what to pass (in the page).
        bare = SchemeExplorer()
        assert bare.trained is None and bare.learned_tables() is None and (bare._tables, bare._table_shape) == (b"", [])

    def test_settings_are_checked_where_they_are_set(self, trained):
        explorer = SchemeExplorer(view="alibi", num_heads=8, head=7, trained=trained)
        explorer.num_heads = 3
        assert explorer.head == 2  # a head past the new last one moves to it
        for name, value, error in [("view", "sinusoidal", ValueError), ("base", 1e9, ValueError), ("base", "1e4", TypeError),
                                   ("query_position", 1001, ValueError), ("query_position", 2.5, TypeError),
                                   ("num_heads", 17, ValueError), ("head", 3, ValueError),
                                   ("max_sequence_length", 1, ValueError), ("max_sequence_length", 65, ValueError),
                                   ("causal", "yes", TypeError), ("position", 12, ValueError)]:
            with pytest.raises(error, match=name):
                setattr(explorer, name, value)
        explorer.view, explorer.position, explorer.causal = "learned", 11, False
        assert (explorer.view, explorer.position, explorer.causal) == ("learned", 11, False)

    def test_bad_arguments_are_refused(self, trained):
        for arguments, error, message in [({"view": "sinusoidal"}, ValueError, "view must be one of"),
                                          ({"head": 8}, ValueError, "head must be an int from 0 to 7"),
                                          ({"base": 1e9}, ValueError, "base must be a finite number in"),
                                          ({"max_sequence_length": 1}, ValueError, "max_sequence_length"),
                                          ({"trained": "model"}, TypeError, "trained must be"),
                                          ({"trained": trained, "position": 12}, ValueError, "position"),
                                          ({"position": 16}, ValueError, "position")]:
            with pytest.raises(error, match=message):
                SchemeExplorer(**arguments)

    def test_where_widgets_cannot_render_a_still_picture_of_the_view_and_one_line(self, trained):
        explorer = SchemeExplorer(view="learned", position=4, trained=trained)  # notebook 13's call
        for view in SCHEME_VIEWS:
            explorer.view = view
            data, _ = explorer._repr_mimebundle_()
            assert data["text/plain"] == NO_FRONT_END_HINT and "application/vnd.jupyter.widget-view+json" in data
            assert data["image/png"].startswith(PNG_SIGNATURE), view
        data, _ = SchemeExplorer(view="learned")._repr_mimebundle_()
        assert data["text/plain"] == NO_FRONT_END_HINT and "image/png" not in data

    def test_the_still_pictures_are_the_packages_numbers(self, trained):
        explorer = SchemeExplorer(query_position=3, base=500.0)
        word = torch.randn(64, generator=torch.Generator().manual_seed(1))
        for ax, scheme in zip(explorer.figure().axes, ("rotary", "sinusoidal")):
            offsets, scores = ax.get_lines()[0].get_data()
            offsets = [int(k) for k in offsets]
            assert offsets == list(range(-3, 61))  # near position 0, only keys that exist
            expected = schemes.same_word_scores(word, attention.projection_weights(d_model=64, seed=0), scheme=scheme,
                                                query_position=3, offsets=offsets, base=500.0)
            torch.testing.assert_close(torch.as_tensor(scores), expected)
            assert ax.get_lines()[0].get_color() == plots.SCHEME_COLOURS[scheme]
        explorer.view, explorer.num_heads, explorer.head = "alibi", 6, 5
        lines = explorer.figure().axes[0].get_lines()
        expected = schemes.alibi_bias(num_heads=6, max_sequence_length=16, dtype=torch.float64)[:, -1]
        torch.testing.assert_close(torch.as_tensor(np.array([line.get_ydata() for line in lines])), expected)
        assert lines[5].get_color() == plots.SCHEME_COLOURS["alibi"]
        explorer.num_heads, explorer.head = 16, 12  # 8 lines at most: the first 7 heads and the chosen one
        assert [line.get_label() for line in explorer.figure().axes[0].get_lines()] == [f"head {h}" for h in [*range(7), 12]]
        explorer = SchemeExplorer(view="learned", trained=trained, position=4)
        for line, table in zip(explorer.figure().axes[0].get_lines(), explorer.learned_tables()):
            torch.testing.assert_close(torch.as_tensor(line.get_ydata(), dtype=torch.float32),
                                       torch.nn.functional.cosine_similarity(table[4:5], table, dim=-1))

    @pytest.mark.slow
    @pytest.mark.parametrize("view", SCHEME_VIEWS)
    def test_every_view_survives_every_setting_at_its_ends(self, view, trained):
        # Every setting at its low end at once, then every one at its high end (a view draws from only some of them).
        explorer = SchemeExplorer(view=view, trained=trained)
        for end in (0, 1):
            for name, ends in [("query_position", (0, 1000)), ("base", (10**0.3, 1e6)), ("num_heads", (1, 16)),
                               ("head", (0, 15)), ("max_sequence_length", (2, 64)), ("position", (0, 11))]:
                setattr(explorer, name, ends[end])
            assert plots.png_bytes(explorer.figure()).startswith(PNG_SIGNATURE), ("high" if end else "low")


def test_a_stale_slider_value_from_the_page_is_moved_to_the_table_end_but_python_is_still_refused():
    # Keys pressed fast can send a position chosen on a larger table just after a smaller size (a flaky
    # traceback in tests/test_browser.py's hostile-input test): the page's value is moved, as a size change moves it.
    from posenc.explorers import EncodingExplorer
    explorer = EncodingExplorer(d_model=128, max_sequence_length=64, position=63, dimension=127)
    explorer.set_state({"max_sequence_length": 1})
    explorer.set_state({"position": 63})
    assert explorer.position == 0
    explorer.set_state({"d_model": 1, "dimension": 127})
    assert explorer.dimension == 0
    with pytest.raises(ValueError, match="position"):
        explorer.position = 5
