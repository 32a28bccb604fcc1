"""Numbers in the walkthrough's prose match what the notebook computes: nothing goes stale unseen.

Notebooks 00-08 follow the running example (`src/posenc/example.py`). After a teacher changes it and runs
`make notebooks`, each sentence of their prose (markdown, and comments in code) that still gives an old number is
named here, with the cell and the number. A sentence passes when each of its numbers is

- shown by the notebook: in a stored output, or written in its code (a literal such as `base = 10000`, not a comment);
  a number with fewer decimals passes when a shown one rounds to it ("464" for 464.1590);
- a size named in the prose (`d_model = 6`, `max_sequence_length = 10`, `vocab_size = 11`) equal to the running
  example's, or to one the notebook's code sets for that name (04's `d_model = 7`);
- or one of the few numbers below that no example changes, each with its reason.

A shape or list written in the prose, such as `(10, 6)`, passes only when a shown shape or list has the same numbers
in the same order. A quoted sentence of two words or more passes only when the notebook shows it.
The Sources list, link targets, citation marks and a notebook's own number in its title are not prose numbers.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from posenc import example

ROOT = Path(__file__).resolve().parent.parent
WALKTHROUGH = sorted(path for path in (ROOT / "notebooks").glob("0[0-8]_*.ipynb"))

# Numbers no running example changes: the formula's, the paper's, and counting words written as digits.
FIXED = {
    "0", "1", "2", "3", "10000", "10,000",  # the formula's 2i, 2i+1 and its base; the first positions and columns
    "512", "64", "8", "37,000", "2017",  # the paper's d_model, d_k and heads, vocabulary size, year
    "[-1, 1]",  # where a sine lies
}
# Per notebook, numbers of an example of its own, which the running example does not set, with the reason.
FIXED_IN = {
    # 03's longest wavelength at the paper's d_model, 2π · 10000^(510/512), against 10000 · 2π
    "03": {"60,600", "62,832"},
    "00": {'"The dog bit the man"', '"The man bit the dog"'},  # the hook's pair of sentences, not the running example
    # 04's odd d_model, 7, and its table of 64 positions by 128; the longest wavelength at the paper's d_model, and 10000 · 2π
    "04": {"(0, 2, 4, 6)", "(1, 3, 5)", "60,600", "62,832"},
    # 08's own explorer settings (d_model 33 and its last column, 32; 2π), its exercise at the paper's d_model,
    # sentences to type in, the pipeline explorer's steps 4 and 5, and column 80 of the heatmap's 128, from which
    # each sine stays within 0.2 of 0 over its 64 positions; Exercise 2's option "b", within 20 positions of 10;
    # the encoding explorer's largest d_model, 256 (SLIDER_MAX), which Exercise 1 names
    "08": {"33", "32", "6.28", "0.30", "152", "77", '"What is your name?"', '"What is his name?"', '"the cat sat on the mat"',
           "4", "5", "80",
           "20", "256"},
}
# A number that names a place, not a quantity: "section 3.4", "Table 3", "torch 2.13", a notebook in the route's
# table, "20 min".
NOTEBOOK_NUMBER = re.compile(r"0\d")  # "01 Padding and one-hot": a notebook, by its number
REFERENCE = re.compile(r"(?:section|Section|Table|table|figure|Figure|arXiv|chapter|torch|transformers)\s+$|\|\s*$")
AFTER_REFERENCE = re.compile(r"^\s*min\b")

NUMBER = re.compile(r"(?<![\w.^/-])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w])|(?<![\w.^/-])\d+(?:\.\d+)?(?![\w])")
SEQUENCE = re.compile(r"[(\[]\s*(-?\d+(?:\.\d+)?(?:\s*,\s*-?\d+(?:\.\d+)?)+)\s*,?\s*[)\]]")
NAMED_SIZE = re.compile(r"\b(d_model|max_sequence_length|vocab_size)`?\s*(?:=|is|of)?\s*`?(\d+)\b")
# A quoted or italic phrase of two to eight words, such as *"My name is John"*, is checked as the example's words;
# a quotation of a source is told apart by its citation mark in the same sentence.
QUOTED = re.compile(r'"([A-Za-z][^"\n]*?)"|(?<![*\w])\*([A-Za-z][^*\n]*?)\*(?![*\w])')
FENCE = re.compile(r"```.*?```", re.S)
LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
CITATION = re.compile(r"\[\d+(?:,\s*\d+)*\]")


def _text(output: dict) -> str:
    if "text" in output:
        return "".join(output["text"])
    data = output.get("data", {})
    return "".join(data.get("text/plain", "")) + "".join(data.get("text/html", ""))


def _code_without_comments(source: str) -> str:
    return "\n".join(line.split("#", 1)[0] if not line.lstrip().startswith("%") else "" for line in source.splitlines())


def _comments(source: str) -> list[str]:
    return [line.split("#", 1)[1] for line in source.splitlines() if "#" in line]


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?:;])\s+(?=[A-Z*`(\[])|\n\s*\n|\n\s*[*-] ", text) if s.strip()]


def _as_float(number: str) -> float:
    return float(number.replace(",", ""))


def _shown_numbers(shown: str) -> set[float]:
    return {_as_float(n) for n in NUMBER.findall(shown)}


def _rounds_to(number: str, shown: set[float]) -> bool:
    value = _as_float(number)
    decimals = len(number.split(".")[1]) if "." in number else 0
    return any(round(s, decimals) == value or s == value for s in shown)


def _sequences(text: str) -> set[tuple[float, ...]]:
    return {tuple(_as_float(x) for x in re.split(r"\s*,\s*", m)) for m in SEQUENCE.findall(text)}


def stale_sentences(path: Path) -> list[str]:
    """Each sentence of the notebook's prose with a number it does not show, as "NN cell k: ... (says X)"."""
    notebook = json.loads(path.read_text())
    number = path.name[:2]
    cells = notebook["cells"]
    shown_text = []
    prose = []  # (cell index, text)
    for k, cell in enumerate(cells):
        source = "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            if source.lstrip().startswith("## Sources"):
                continue
            lines = source.splitlines()
            if lines and lines[0].startswith("# "):
                lines[0] = re.sub(r"^# \d+\.", "#", lines[0])
            text = LINK.sub(lambda m: "" if re.fullmatch(r"[\d.]+", m.group(1)) else m.group(1), "\n".join(lines))
            prose.append((k, FENCE.sub(lambda m: m.group().replace('"', "'"), text)))
        elif cell["cell_type"] == "code":
            shown_text.append(_code_without_comments(source))
            shown_text.extend(_text(output) for output in cell.get("outputs", []))
            prose.extend((k, comment) for comment in _comments(source))
    shown = "\n".join(shown_text)
    numbers = _shown_numbers(shown)
    sequences = _sequences(shown) | _sequences(shown.replace("torch.Size([", "("))
    shown_words = " ".join(re.findall(r"[a-z0-9']+", shown.lower()))
    sizes = {"d_model": {example.D_MODEL}, "max_sequence_length": {example.MAX_SEQUENCE_LENGTH},
             "vocab_size": {example.vocabulary().vocab_size}}
    for name, value in re.findall(r"\b(d_model|max_sequence_length|vocab_size|d_odd)\s*=\s*(\d+)\b", shown):
        sizes.setdefault("d_model" if name == "d_odd" else name, set()).add(int(value))
    fixed = FIXED | FIXED_IN.get(number, set())
    found = []
    for k, text in prose:
        for sentence in _sentences(text):
            cites = bool(CITATION.search(sentence))
            sentence = CITATION.sub("", sentence)
            said = []
            named = {m.start(2) for m in NAMED_SIZE.finditer(sentence)}
            for m in NAMED_SIZE.finditer(sentence):
                if int(m.group(2)) not in sizes.get(m.group(1), set()) and m.group(2) not in fixed:
                    said.append(f"{m.group(1)} {m.group(2)}")
            for m in SEQUENCE.finditer(sentence):
                sequence = tuple(_as_float(x) for x in re.split(r"\s*,\s*", m.group(1)))
                if m.group(0) not in fixed and not any(
                        len(s) == len(sequence) and all(abs(a - b) < 5e-5 for a, b in zip(s, sequence)) for s in sequences):
                    said.append(m.group(0))
            in_sequences = [range(m.start(), m.end()) for m in SEQUENCE.finditer(sentence)]
            for m in NUMBER.finditer(sentence):
                place = REFERENCE.search(sentence[:m.start()]) or AFTER_REFERENCE.match(sentence[m.end():])
                if m.start() in named or any(m.start() in r for r in in_sequences) or m.group() in fixed \
                        or NOTEBOOK_NUMBER.fullmatch(m.group()) or place:
                    continue
                if not _rounds_to(m.group(), numbers):
                    said.append(m.group())
            for quote in ([] if cites else [a or b for a, b in QUOTED.findall(sentence)]):
                words = " ".join(re.findall(r"[a-z0-9']+", quote.lower()))
                if 2 <= len(words.split()) <= 8 and words not in shown_words and f'"{quote}"' not in fixed:
                    said.append(f'"{quote}"')
            if said:
                found.append(f"{number} cell {k}: {sentence[:120]!r} says {', '.join(said)}")
    return found


@pytest.mark.parametrize("path", WALKTHROUGH, ids=lambda p: p.name[:2])
def test_every_number_in_the_prose_is_one_the_notebook_shows(path):
    """Fails after a change of the running example until each sentence it names is brought up to date."""
    stale = stale_sentences(path)
    assert not stale, "prose that no longer matches what the notebook computes:\n" + "\n".join(stale)


def test_the_check_names_a_sentence_whose_number_went_stale(tmp_path):
    notebook = {"cells": [
        {"cell_type": "markdown", "source": "With `d_model = 6` the second pair turns as sin(pos / 21.5443), and "
                                            "the sentence *\"My name is John\"* has shape `(10, 6)`.", "metadata": {}},
        {"cell_type": "code", "source": "d_model = 8  # the width\nprint(denominators)", "metadata": {},
         "outputs": [{"output_type": "stream", "name": "stdout", "text": "tensor([ 1., 10., 100., 1000.])\n"
                                                                         "torch.Size([10, 8]) i like my name\n"}]},
    ]}
    path = tmp_path / "03_x.ipynb"
    path.write_text(json.dumps(notebook))
    (stale,) = stale_sentences(path)
    assert stale.startswith("03 cell 0:")
    assert "21.5443" in stale and "(10, 6)" in stale and '"My name is John"' in stale
    notebook["cells"][0]["source"] = "The second pair turns as sin(pos / 10.0) on a `(10, 8)` table, `d_model = 8`."
    path.write_text(json.dumps(notebook))
    assert stale_sentences(path) == []
