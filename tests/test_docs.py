"""The README is one page for a newcomer, and it and the guides in docs/ link only to files that exist."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
# The guides the README sends its readers to.
GUIDES = [ROOT / "docs" / name for name in ("teaching.md", "developing.md", "testing.md", "adapting.md")]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _without_code(text: str) -> str:
    return re.sub(r"`[^`\n]*`", "", re.sub(r"```.*?```", "", text, flags=re.S))


def _relative_links(path: Path) -> list[str]:
    targets = LINK.findall(_without_code(path.read_text()))
    return [target for target in targets if not re.match(r"[a-z][a-z0-9+.-]*:|#", target)]


def test_the_readme_is_one_page():
    assert len(README.read_text().splitlines()) <= 100


@pytest.mark.parametrize("guide", GUIDES, ids=lambda p: p.name)
def test_the_readme_links_each_guide_and_it_exists(guide):
    assert guide.relative_to(ROOT).as_posix() in _relative_links(README)
    assert guide.is_file(), f"{guide.relative_to(ROOT)} is linked from the README but missing"


@pytest.mark.parametrize("page", [README, *sorted((ROOT / "docs").glob("*.md"))], ids=lambda p: p.name)
def test_every_relative_link_points_at_a_file(page):
    for target in _relative_links(page):
        file = target.split("#", 1)[0]
        assert (page.parent / file).exists(), f"{page.relative_to(ROOT)} links to {target}, which is missing"


def test_the_readme_table_names_every_notebook():
    table = [line for line in README.read_text().splitlines() if line.startswith("| `")]
    named = {re.match(r"\| `([^`]+)`", line).group(1) for line in table}
    notebooks = {path.stem for path in (ROOT / "notebooks").glob("*.ipynb")}
    assert notebooks and notebooks <= named, sorted(notebooks - named)
