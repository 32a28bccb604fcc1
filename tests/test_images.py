"""images/ holds exactly what `make images` draws, byte for byte."""

from pathlib import Path

import pytest

from tools.draw_images import FIGURES
from tools.draw_images import main as draw_images

ROOT = Path(__file__).resolve().parent.parent


def test_make_images_reproduces_the_committed_pngs(tmp_path):
    draw_images(str(tmp_path))
    # Compared as booleans: a diff of two PNGs' bytes would take pytest minutes to print.
    differ = [name for name in FIGURES if (tmp_path / name).read_bytes() != (ROOT / "images" / name).read_bytes()]
    assert not differ, f"run `make images`: {differ} differ"


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_every_figure_is_a_reasonably_sized_png(name):
    data = (ROOT / "images" / name).read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    assert 5_000 < len(data) < 500_000


def test_the_pipeline_figure_shows_the_numbers_the_notebooks_print():
    import json

    from matplotlib.text import Text

    from posenc import plots, tokens

    length, d_model = tokens.EXAMPLE_MAX_SEQUENCE_LENGTH, tokens.EXAMPLE_D_MODEL
    vocab_size = tokens.example_vocabulary().vocab_size
    texts = {t.get_text() for t in plots.pipeline_diagram().findobj(Text)}
    assert {f"({length}, {vocab_size})", f"W_E: ({vocab_size}, {d_model})\nlearned", f"({length}, {d_model})"} <= texts
    notebook = json.loads((ROOT / "notebooks" / "01_padding_and_one_hot.ipynb").read_text())
    printed = "".join("".join(o.get("text", "")) for c in notebook["cells"] for o in c.get("outputs", []))
    assert f"vocab_size = {vocab_size}" in printed and f"torch.Size([{length}, {vocab_size}])" in printed


def test_the_pipeline_caption_says_what_the_notebook_does_with_its_steps():
    from matplotlib.text import Text

    from posenc import plots

    def caption(**kwargs):
        return next(t.get_text() for t in plots.pipeline_diagram(**kwargs).findobj(Text) if "this notebook" in t.get_text())

    assert caption(highlight=("X + PE", "Q, K, V")).endswith("this notebook: X + PE, Q, K, V")
    assert caption(highlight=("Q, K, V", "attention"), note="cut into heads").endswith("this notebook: cut into heads")
