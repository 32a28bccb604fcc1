"""images/ holds exactly what `make images` draws, byte for byte."""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
from draw_images import FIGURES, main as draw_images  # noqa: E402


def test_make_images_reproduces_the_committed_pngs(tmp_path):
    draw_images(str(tmp_path))
    for name in FIGURES:
        assert (tmp_path / name).read_bytes() == (ROOT / "images" / name).read_bytes(), f"run `make images` ({name})"


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_every_figure_is_a_reasonably_sized_png(name):
    data = (ROOT / "images" / name).read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    assert 5_000 < len(data) < 500_000
