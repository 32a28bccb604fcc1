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


def test_the_pipeline_figure_shows_the_running_examples_sizes():
    from matplotlib.text import Text

    from posenc import example, plots

    length, d_model = example.MAX_SEQUENCE_LENGTH, example.D_MODEL
    vocab_size = example.vocabulary().vocab_size
    texts = {t.get_text() for t in plots.pipeline_diagram().findobj(Text)}
    assert {f"({length}, {vocab_size})", f"W_E: ({vocab_size}, {d_model})\nlearned", f"({length}, {d_model})"} <= texts



def test_the_pipeline_of_a_batch_puts_the_batch_axis_first_and_looks_up_x():
    from matplotlib.text import Text

    from posenc import plots

    texts = {t.get_text() for t in plots.pipeline_diagram(max_sequence_length=10, vocab_size=11, d_model=6,
                                                          batch_size=3).findobj(Text)}
    assert {"(3, 10, 11)", "(3, 10, 6)", "3 x (3, 10, 6)", "X = W_E[ids]", "W_E: (11, 6)\nlearned"} <= texts
    assert "(10, 6)" not in texts
    assert {"3 sentences,\nof up to 10 tokens", "(3, 10)"} <= texts and "10 tokens" not in texts  # longer ones are refused
    heads = {t.get_text() for t in plots.pipeline_diagram(max_sequence_length=10, vocab_size=11, d_model=6, batch_size=3,
                                                          num_heads=2).findobj(Text)}
    assert "each (3, 2, 10, 3)" in heads  # not "3 x (3, ...)", where each 3 would mean something else


def test_the_pipeline_of_one_sentence_can_look_up_x_as_its_code_does():
    from matplotlib.text import Text

    from posenc import plots

    def texts(**lookup):
        return {t.get_text() for t in plots.pipeline_diagram(max_sequence_length=10, vocab_size=11, d_model=6,
                                                             **lookup).findobj(Text)}
    assert "X = one_hot @ W_E" in texts() and "X = W_E[ids]" not in texts()
    assert "X = W_E[ids]" in texts(lookup=True) and "(10, 6)" in texts(lookup=True)

WALKTHROUGH = sorted((ROOT / "notebooks").glob("0[0-7]_*.ipynb"))
DIAGRAMS = ("pipeline_diagram", "interleave_diagram")


def drawn_pictures(path):
    """(cell index, the call's source, the stored PNG) for each diagram a code cell of the notebook draws."""
    import ast
    import base64
    import json

    found = []
    for k, cell in enumerate(json.loads(path.read_text())["cells"]):
        source = "".join(cell["source"])
        if cell["cell_type"] != "code" or not any(f"plots.{name}(" in source for name in DIAGRAMS):
            continue
        calls = [node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Call)
                 and isinstance(node.func, ast.Attribute) and node.func.attr in DIAGRAMS]
        pictures = [base64.b64decode(o["data"]["image/png"]) for o in cell.get("outputs", []) if "image/png" in o.get("data", {})]
        assert len(calls) == len(pictures), f"{path.name} cell {k}: {len(calls)} diagrams drawn, {len(pictures)} stored"
        found += [(k, ast.get_source_segment(source, call), png) for call, png in zip(calls, pictures)]
    return found


# 04 builds the whole table of the step 03 has just placed in the pipeline: a second picture of it would repeat 03's.
SAME_STEP_AS_BEFORE = {"04"}


def test_each_walkthrough_notebook_draws_where_it_sits():
    for path in WALKTHROUGH:
        calls = [call for _, call, _ in drawn_pictures(path) if "pipeline_diagram" in call]
        expected = 0 if path.name[:2] in SAME_STEP_AS_BEFORE else 1
        assert len(calls) == expected, f"{path.name} draws the pipeline {len(calls)} times"
        if not calls:
            continue
        if path.name[:2] not in ("00", "01"):  # 00 and 01 draw it before they have a vocabulary, from the running example's
            assert "max_sequence_length=" in calls[0] and "d_model=" in calls[0], calls[0]


@pytest.mark.parametrize("path", WALKTHROUGH, ids=lambda p: p.name[:2])
def test_the_stored_pictures_show_the_running_examples_values(path):
    """Each diagram stored in 00-07 is, byte for byte, what its call draws from `posenc.example`'s values.

    After a teacher changes the example and runs `make notebooks`, this holds again: the pictures follow the example.
    """
    from posenc import example, plots

    vocabulary = example.vocabulary()
    values = {"plots": plots, "example": example, "sentence": example.SENTENCE, "vocabulary": vocabulary,
              "vocab_size": vocabulary.vocab_size, "max_sequence_length": example.MAX_SEQUENCE_LENGTH,
              "d_model": example.D_MODEL, "d_odd": 7, "num_heads": 2,  # 04's own odd d_model, 07's own heads
              "batch": 3}  # 06's and 07's batch of three sentences
    for k, call, png in drawn_pictures(path):
        assert plots.png_bytes(eval(call, values)) == png, f"{path.name} cell {k}: {call} shows other values"


def test_the_pipeline_caption_says_what_the_notebook_does_with_its_steps():
    from matplotlib.text import Text

    from posenc import plots

    def caption(**kwargs):
        return next(t.get_text() for t in plots.pipeline_diagram(**kwargs).findobj(Text) if "this notebook" in t.get_text())

    assert caption(highlight=("X + PE", "Q, K, V")).endswith("this notebook: X + PE, Q, K, V")
    assert caption(highlight=("Q, K, V", "attention"), note="cut into heads").endswith("this notebook: cut into heads")
