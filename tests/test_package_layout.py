"""The package names topics, not notebook numbers: renumbering a notebook must not touch src/posenc."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "posenc"
# The frozen copy of the notebooks' markdown that the subword tokenizer trains on: data, not prose about the
# notebooks, and frozen, so renumbering a notebook never changes it (and changing it would change the tokenizer).
FROZEN = {PACKAGE / "data" / "notebook_text.md"}
FILES = sorted(p for p in PACKAGE.rglob("*") if p.is_file() and p.suffix in {".py", ".js", ".md", ".txt", ".json", ".toml"}
               and "__pycache__" not in p.parts and p not in FROZEN)

NOTEBOOK_NUMBER = [
    r"(?i)\bnotebooks?\s+\d{1,2}\b",         # "notebook 07", "notebooks 13 and 14", "Notebook 16's"
    r"\b\d{2}_[a-z]+(?:_[a-z]+)*\.ipynb\b",  # "15_real_pipeline.ipynb"
    r"\b\d{2}_(?:[a-z]+_)+[a-z]+\b",         # "16_stretching_context" without its suffix
    r"\[\d{2}\s+[A-Za-z]",                   # "[07 Heads and the causal mask]"
    r"(?i)\bnb\s?\d{1,2}\b",                 # "nb14", "NB 16"
]


def mentions(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if any(re.search(p, line) for p in NOTEBOOK_NUMBER)]


@pytest.mark.parametrize("pattern, line", [
    (0, "Checkers for notebooks 08 and 10"), (0, "Notebook 16's task"), (1, "see 15_real_pipeline.ipynb"),
    (2, "as 16_stretching_context shows"), (3, "[07 Heads and the causal mask]"), (4, "nb14 trains it")])
def test_each_pattern_finds_a_notebook_number(pattern, line):
    assert re.search(NOTEBOOK_NUMBER[pattern], line)
    assert mentions(line) == [line]


@pytest.mark.parametrize("line", ["torch.Size([10, 6])", "positions [0, 10)", "base 10,000", "the notebook's bug",
                                  "d_model = 16 and 14,050", "GPT-2's table"])
def test_the_patterns_leave_other_numbers_alone(line):
    assert mentions(line) == []


def test_the_package_names_no_notebook_by_its_number():
    assert len(FILES) > 30  # the walk found the package
    found = {str(p.relative_to(ROOT)): hits for p in FILES if (hits := mentions(p.read_text(encoding="utf-8")))}
    assert not found, f"name the topic, not the notebook's number: {found}"

