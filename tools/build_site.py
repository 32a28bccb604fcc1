"""Build the classroom outputs, offline: `make site` and `make slides`.

    python -m tools.build_site site   the teacher's site, build/site/, and the students', build/site-students/
    python -m tools.build_site slides   build/site/slides/*.slides.html (reveal.js)
    python -m tools.build_site all   both, in one process

The stored notebooks are converted as they are (no re-execution), widgets at their saved state, each
exercise's solution behind a closed "Show the solution" toggle on the pages (on a sub-slide of its own in the slides;
templates in tools/web/templates),
progress lines rewritten in place (`\\r`) shown as a terminal shows them: only their last state, without the Colab/Binder
install cell (tools/install_cell.py; the .ipynb to download keeps it), without the cells tagged `check` (a step checked
against the package, or a claim against its margin: the notebooks run them, a reader needs none of them), and each
figure with an alt text saying what it shows, read from the posenc.plots call that drew it (`figure_alts`). A page says
where it is by the notebooks' own numbers, as the contents do: "Notebook 05 of 00–17".

Two sites are built from the same pages: the teacher's (the stored notebooks, each solution behind its toggle, the
.ipynb to download is the stored one, slides beside) and the students' (tools/student_edition.py's learner's edition:
no solution anywhere in the HTML or the search index, the learner's notebook to download, no slides and no launch
links, which would open the teacher's notebooks). The students' pages show the teacher's stored outputs for the cells
both share, except a checker's, which reads a learner's answer (`student_edition.learner_with_outputs`).

The site reads like a book: a reading column beside a contents sidebar that stays in place (every
notebook, and the open page's own sections), a search over every page that works offline (its index,
_static/posenc/search-index.js, is written here; tools/web/posenc/site.js reads it), one typeface for text
and widgets. Each page leads to the previous and next notebook, gives its time (from the start page's
route), and links once to its .ipynb, its slides, and Binder and Colab (from the repository address in
pyproject.toml). On a narrow screen the contents fold behind a button; dark mode follows the reader's setting
(figures stay on a light card); a print style sheet leaves out the sidebar and navigation and wraps code; every code
cell has a copy button. The search (MiniSearch, from npm) forgives typos, ranks by BM25, moves with the arrow keys
and highlights the words on the page it opens; its index holds each section's prose and code apart (clean
snippets).

The slides are decks for a lecture, one horizontal slide per section (the title and each ## heading: `by_section`;
sub-slides only continue a section), 1280 x 720 and numbered ("12/40"; on a phone held upright the deck is 640 wide and
takes the screen's shape): code at a size where 100 characters fit on a line (longer lines wrap at spaces), figures
scaled to fit beside their code, a slide taller than the deck cut into sub-slides at cell boundaries (`fit_slides`,
from an estimate of each cell's height; a tall markdown cell between its blocks), and what is still taller scrolls.
Pages and decks carry the style and script that make them pass an axe-core audit (contrast of prompts and comments,
underlined links, named sliders).

A slide shows what a lecturer points at; what a reader needs and a listener does not goes to the slide's speaker
notes (`<aside class="notes">`, reveal.js's notes plugin: `S` opens the speaker view). `for_the_lecture` derives them
from the notebooks' prose by one convention, the same for every notebook:

- A markdown cell keeps on its slide: its headings; the first sentence of its first paragraph and of the first
  paragraph after each heading, and of any paragraph that opens with a bold lead-in (`**1. Periodicity.** ...`); its
  lists, each item cut to its first sentence; its pictures, display formulas ($$), tables and code blocks; and a
  one-sentence paragraph that ends with a colon right before one of those. The rest of the cell, in its order, goes
  to that slide's notes (`slide_and_notes`; every word is in one or the other). A sentence ends at . ! or ? before
  a capital, a digit or an opening mark, never inside code, a formula, a link or bold text, nor after e.g., i.e.,
  et al. and the like.
- A cell tagged `notes` goes to the notes whole; a cell tagged `slide-keep` stays whole; an exercise's prompt (the
  markdown cell before a cell tagged `exercise`) stays whole. A cell of slide type `notes` or `skip` is left as it is.
- An exercise: its prompt and its own cells on one slide; its solution (tag `solution`) on the next sub-slide, under a
  "Solution · <the exercise's heading>" label, shown whole (no toggle); the cells after the solution up to the next
  markdown cell (the run, the checker and its "✔ Correct ...") as fragments, one key press each: the checker's verdict
  is never on the screen before the solution.

Every script and style sheet a page loads (reveal.js, MathJax, require.js, jQuery, the Jupyter widgets
renderer) is copied from tools/web/node_modules, installed by npm from tools/web/package-lock.json, into
build/site/_static, with anywidget's front end from its wheel (the explorers' saved modules run with it, live
without a kernel): no page asks a CDN for anything.
"""

from __future__ import annotations

import argparse
import ast
import base64
import copy
import functools
import html
import json
import math
import re
import shutil
import sys
import time
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import quote

import nbformat
from nbconvert import HTMLExporter, SlidesExporter
from nbconvert.filters.markdown_mistune import markdown2html_mistune
from nbconvert.filters.strings import clean_html
from traitlets.config import Config

from tools import student_edition
from tools.install_cell import MARKER, OLD_MARKERS, repository
from tools.run_notebooks import NOTEBOOK_INPUTS

ROOT = Path(__file__).resolve().parent.parent
WEB = ROOT / "tools" / "web"
NODE_MODULES = WEB / "node_modules"
TEMPLATES = WEB / "templates"
OWN_ASSETS = WEB / "posenc"  # the site's own style and script
# anywidget's front end for static pages (from its wheel): an explorer's saved module renders with it, no kernel.
ANYWIDGET = Path(sys.prefix) / "share" / "jupyter" / "nbextensions" / "anywidget" / "index.js"
ANYWIDGET_CONFIG = '<script>require.config({paths: {anywidget: "../_static/anywidget"}});</script>'
# (source inside node_modules, destination inside _static); MathJax only with the parts CommonHTML output uses.
ASSETS = [
    ("requirejs/require.js", "require.js"),
    ("jquery/dist/jquery.min.js", "jquery.min.js"),
    ("@jupyter-widgets/html-manager/dist", "html-manager"),
    ("reveal.js/dist", "reveal.js/dist"),
    ("reveal.js/plugin", "reveal.js/plugin"),
    ("mathjax/MathJax.js", "mathjax/MathJax.js"),
    ("mathjax/config", "mathjax/config"),
    ("mathjax/extensions", "mathjax/extensions"),
    ("mathjax/jax/input", "mathjax/jax/input"),
    ("mathjax/jax/element", "mathjax/jax/element"),
    ("mathjax/jax/output/CommonHTML", "mathjax/jax/output/CommonHTML"),
    ("mathjax/fonts/HTML-CSS/TeX", "mathjax/fonts/HTML-CSS/TeX"),
    ("mathjax/localization/en", "mathjax/localization/en"),
]
# MiniSearch's browser build (UMD), run with require.js's `define` out of its sight: it sets window.MiniSearch.
MINISEARCH = "minisearch/dist/umd/index.js"
# The deck's size: a 1280 x 720 screen shows it whole.
SLIDE_WIDTH, SLIDE_HEIGHT = 1280, 720
PHONE_WIDTH = 640  # the deck's width on a phone held upright (its height follows the screen)


def copy_assets(site: Path, *, reveal: bool = True) -> None:
    """Every script and style sheet the pages load into site/_static (reveal.js only where there are slides)."""
    if not NODE_MODULES.is_dir():
        raise SystemExit("tools/web/node_modules is missing: run `make site` (it runs npm ci first)")
    for source, target in ASSETS:
        if not reveal and source.startswith("reveal.js/"):
            continue
        src, dst = NODE_MODULES / source, site / "_static" / target
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dst, dirs_exist_ok=True)
        else:
            shutil.copy2(src, dst)
    shutil.copytree(OWN_ASSETS, site / "_static" / "posenc", dirs_exist_ok=True)
    umd = (NODE_MODULES / MINISEARCH).read_text()
    (site / "_static" / "minisearch.js").write_text(
        "/* MiniSearch (MIT), from npm; require.js's define hidden, so it sets window.MiniSearch. */\n"
        f"(function (define, exports, module) {{\n{umd}\n}}).call(window);\n")
    shutil.copy2(ANYWIDGET, site / "_static" / "anywidget.js")
    for folder in NOTEBOOK_INPUTS:
        shutil.copytree(ROOT / folder, site / folder, dirs_exist_ok=True)


# The teacher's site, the students' and the slides sanitise the same cells' HTML: each piece once per build process.
_clean_html = functools.lru_cache(maxsize=None)(clean_html)


def _offline(exporter: HTMLExporter, static: str) -> HTMLExporter:
    exporter.register_filter("clean_html", _clean_html)
    exporter.require_js_url = f"{static}/require.js"
    exporter.mathjax_url = f"{static}/mathjax/MathJax.js?config=TeX-AMS_CHTML-full,Safe"
    exporter.widget_renderer_url = f"{static}/html-manager/embed-amd.js"
    exporter.jquery_url = f"{static}/jquery.min.js"
    return exporter


def _link_html(body: str, suffix: str) -> str:
    # Links between notebooks point at .ipynb files; on the site they are pages.
    return re.sub(r'href="([0-9A-Za-z_]+)\.ipynb(#[^"]*)?"', rf'href="\1{suffix}\2"', body)


def notebooks() -> list[Path]:
    return sorted((ROOT / "notebooks").glob("*.ipynb"))


def title(notebook: nbformat.NotebookNode) -> str:
    for cell in notebook.cells:
        if cell.cell_type == "markdown" and cell.source.startswith("# "):
            return cell.source.splitlines()[0][2:].strip()
    return "notebook"


def goal(notebook: nbformat.NotebookNode, prefix: str = "notebooks/") -> str:
    """The notebook's goal, the paragraph of its first cell that starts with **Goal, as HTML (its markdown rendered,
    links to other notebooks made links to their pages, from a page `prefix` away)."""
    for paragraph in notebook.cells[0].source.split("\n\n"):
        if paragraph.startswith("**Goal"):
            text = re.sub(r"^\*\*Goal[^*]*\*\*\s*", "", paragraph.replace("\n", " "))
            rendered = markdown2html_mistune(text).strip()
            rendered = re.sub(r"^<p>(.*)</p>$", r"\1", rendered, flags=re.S)
            return re.sub(r'href="([0-9A-Za-z_]+)\.ipynb(#[^"]*)?"', rf'href="{prefix}\1.html\2"', rendered)
    return ""


def route_times() -> dict[str, str]:
    """stem -> "15 min", from the route tables of the start page (the one place the times are written)."""
    start = (ROOT / "notebooks" / "00_start_here.ipynb").read_text()
    return dict(re.findall(r"\]\(([0-9A-Za-z_]+)\.ipynb\) \|[^|]*\| (\d+ min) \|", start))


def collapse_progress(text: str) -> str:
    """What a terminal shows of text with carriage returns: of each line, only what follows its last `\\r`."""
    lines = text.replace("\r\n", "\n").split("\n")
    return "\n".join(line.rstrip("\r").rsplit("\r", 1)[-1] for line in lines)


def is_install_cell(cell: nbformat.NotebookNode) -> bool:
    """The Colab/Binder install cell (tools/install_cell.py writes it, recognised by its first line): the downloadable
    notebooks keep it, pages and slides do not show it."""
    return cell.cell_type == "code" and cell.source.startswith((MARKER, *OLD_MARKERS))


# A code cell that only checks: a step against the package, or a claim against its margin (asserts, or a print of
# True). The notebooks keep it and run it, in both editions; the pages and the slides leave it out.
CHECK_TAG = "check"


def is_check_cell(cell: nbformat.NotebookNode) -> bool:
    return cell.cell_type == "code" and CHECK_TAG in cell.metadata.get("tags", [])


def for_the_page(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy of the notebook as pages and slides show it: without the install cell and the cells tagged `check`,
    progress lines collapsed to their last state."""
    notebook = copy.deepcopy(notebook)
    notebook.cells = [cell for cell in notebook.cells if not is_install_cell(cell) and not is_check_cell(cell)]
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream" and "\r" in output.get("text", ""):
                output["text"] = collapse_progress(output["text"])
    return notebook


# nbconvert's alt text for a picture without one; each figure gets its own instead (describe_figures).
DEFAULT_ALT = "No description has been provided for this image"
FIGURE_FALLBACK = "Figure drawn by the code cell above"


def _literal(node: ast.AST | None) -> str:
    """A string literal's text; an f-string's with each {expression} as "…"; "" for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(part.value if isinstance(part, ast.Constant) else "…" for part in node.values)
    return ""


def _plot_description(call: ast.Call) -> str:
    """What a call of posenc.plots draws, from its source: the function, its title (or the first line of its
    docstring), what it highlights, its panels and its axes."""
    from posenc import plots

    keywords = {k.arg: k.value for k in call.keywords if k.arg}
    squeeze = lambda text: re.sub(r"\s+", " ", text).strip()  # noqa: E731
    words = [f"Figure ({call.func.attr.replace('_', ' ')})"]
    if title := squeeze(_literal(keywords.get("title"))):
        words[0] += f": {title}"
    elif (drawn := getattr(plots, call.func.attr, None)) and drawn.__doc__:
        words[0] += ": " + drawn.__doc__.strip().splitlines()[0].rstrip(".")  # what the function says it draws
    if isinstance(highlight := keywords.get("highlight"), ast.Tuple | ast.List):
        words.append("Highlighted: " + ", ".join(_literal(e) for e in highlight.elts))
    if note := squeeze(_literal(keywords.get("note"))):
        words.append(f"This notebook: {note}")
    panels = []
    for node in [*call.args[:1], keywords.get("titles")]:
        if isinstance(node, ast.Dict):
            panels += [squeeze(_literal(v if node is keywords.get("titles") else k)) for k, v in
                       zip(node.keys, node.values)]
    if panels := [p for p in panels if p]:
        words.append("Labelled: " + "; ".join(panels))
    axes = [f"{name}: {text}" for name, key in [("horizontal axis", "xlabel"), ("vertical axis", "ylabel"),
                                                ("colour", "colorbar_label")]
            if (text := squeeze(_literal(keywords.get(key))))]
    if axes:
        words.append("; ".join(axes).capitalize()[:1] + "; ".join(axes)[1:])
    return " ".join(w if w.endswith((".", "?", "!")) else w + "." for w in words)


def figure_alts(notebook: nbformat.NotebookNode) -> dict[str, str]:
    """PNG data -> alt text for each stored figure: what the code cell's call of posenc.plots says it draws (the
    function, title, panels, axes), else that the code cell above drew it. The n-th picture of a cell is described by
    the n-th such call in it (the last call for any beyond)."""
    alts = {}
    for cell in notebook.cells:
        pictures = [o["data"]["image/png"] for o in cell.get("outputs", []) if "image/png" in o.get("data", {})]
        if not pictures:
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:  # a cell with IPython magics
            tree = ast.Module(body=[], type_ignores=[])
        calls = sorted((node for node in ast.walk(tree) if isinstance(node, ast.Call)
                        and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name)
                        and node.func.value.id == "plots" and node.func.attr != "show"),
                       key=lambda node: (node.lineno, node.col_offset))
        for n, picture in enumerate(pictures):
            alts["".join(picture.split())] = _plot_description(calls[min(n, len(calls) - 1)]) if calls \
                else FIGURE_FALLBACK
    return alts


def describe_figures(body: str, notebook: nbformat.NotebookNode) -> str:
    """The page's HTML with nbconvert's default alt text of each figure replaced by what the figure shows."""
    alts = figure_alts(notebook)

    def describe(match: re.Match) -> str:
        tag = match.group(0)
        if DEFAULT_ALT not in tag:
            return tag
        source = re.search(r'src="data:image/png;base64,([^"]*)"', tag)
        alt = alts.get("".join(source.group(1).split()), FIGURE_FALLBACK) if source else FIGURE_FALLBACK
        return tag.replace(f'alt="{DEFAULT_ALT}"', f'alt="{html.escape(alt)}"')

    return re.sub(r"<img\b[^>]*>", describe, body)


def pages(*, students: bool = False) -> list[dict]:
    """Every notebook as a page: the teacher's stored notebook, or (students) its learner's edition with the stored
    outputs it shares (`download`: the notebook a student gets, the handout: the learner's edition without outputs,
    its pictures in it)."""
    times = route_times()
    found = []
    for path in notebooks():
        teacher = nbformat.read(path, as_version=4)
        shown = student_edition.learner_with_outputs(teacher) if students else teacher
        found.append({"stem": path.stem, "title": title(teacher), "goal": goal(teacher),
                      "time": times.get(path.stem, "5 min"), "notebook": for_the_page(shown),
                      "download": student_edition.handout(teacher, path.name) if students else None})
    return found


# --- Slides for a lecture ------------------------------------------------------------------------------------------
# What a lecturer points at stays on the slide; what a reader needs and a listener does not goes to the slide's
# speaker notes (the module docstring and docs/teaching.md state the convention). Derived from the notebooks' prose as it
# stands, cell by cell, with no per-notebook rule.
NOTES_TAG, KEEP_TAG = "notes", "slide-keep"
# Blocks a lecturer points at: they stay on the slide whole.
SHOWN = {"heading", "picture", "math", "table", "code", "html"}
_ABBREVIATIONS = {"e.g", "i.e", "al", "etc", "vs", "cf", "fig", "eq", "approx", "no", "sec", "ch", "resp"}
# Spans a sentence never ends inside: code, formulas, links and pictures, bold and italic text.
_PROTECTED = re.compile(r"`[^`]*`|\$\$.+?\$\$|\$[^$\n]+\$|!?\[[^\]]*\]\([^)]*\)|\*\*.+?\*\*|(?<![\w*])\*[^*\n]+\*(?!\w)",
                        re.S)
_PICTURE_LINE = re.compile(r"(!\[[^\]]*\]\([^)]*\)\s*)+")
_SENTENCE_END = re.compile(r"[.!?][\"')\]*_]*(?=\s+[\"'(\[*_`$A-Z0-9\x00])")


def markdown_blocks(source: str) -> list[tuple[str, str]]:
    """A markdown cell as its blocks, (kind, text): heading, paragraph, list, table, picture (a paragraph of pictures
    only), math (a $$ display), code (a fenced block), quote, html."""
    lines, blocks, i = source.split("\n"), [], 0
    item = re.compile(r" {0,3}([*+-]|\d{1,9}[.)]) ")
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        start = i
        if re.match(r" {0,3}(```|~~~)", line):
            fence = line.strip()[:3]
            i += 1
            while i < len(lines) and not lines[i].strip().startswith(fence):
                i += 1
            kind, i = "code", i + 1
        elif line.strip().startswith("$$"):
            rest = line.strip()[2:]
            while "$$" not in rest and i + 1 < len(lines):
                i += 1
                rest = lines[i]
            kind, i = "math", i + 1
        elif re.match(r" {0,3}#{1,6}(\s|$)", line):
            kind, i = "heading", i + 1
        elif line.lstrip().startswith("|"):
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                i += 1
            kind = "table"
        elif item.match(line):
            i += 1
            while i < len(lines):
                if lines[i].strip() and (item.match(lines[i]) or lines[i].startswith((" ", "\t"))):
                    i += 1
                elif not lines[i].strip() and i + 1 < len(lines) and (
                        item.match(lines[i + 1]) or lines[i + 1].startswith(("  ", "\t"))):
                    i += 1  # a blank line inside the list (a loose list, or an item's second paragraph)
                else:
                    break
            kind = "list"
        else:
            kind = "quote" if line.lstrip().startswith(">") else "html" if line.lstrip().startswith("<") else "paragraph"
            i += 1
            while i < len(lines) and lines[i].strip() and not re.match(r" {0,3}(#{1,6}\s|```|~~~|\$\$)", lines[i]) \
                    and not (_PICTURE_LINE.fullmatch(lines[i].strip()) or _PICTURE_LINE.fullmatch(line.strip())):
                i += 1  # a line of pictures only is a block of its own, even right under a paragraph
        text = "\n".join(lines[start:i]).rstrip()
        if kind == "paragraph" and not re.sub(r"!\[[^\]]*\]\([^)]*\)", "", text).strip():
            kind = "picture"
        blocks.append((kind, text))
    return blocks


def first_sentence(text: str) -> tuple[str, str]:
    """(the first sentence, the rest) of a paragraph; a bold lead-in (**1. Periodicity.**) goes with the sentence
    after it. A sentence ends at . ! or ? followed by a capital, a digit or an opening mark, never inside code, a
    formula, a link or bold text, nor after an abbreviation (e.g., et al.)."""
    spans: list[str] = []

    def hide(match: re.Match) -> str:
        spans.append(match.group(0))
        return f"\x00{len(spans) - 1}\x00"

    hidden = _PROTECTED.sub(hide, text)
    lead = re.match(r"\s*\x00(\d+)\x00\s*", hidden)
    begin = lead.end() if lead and spans[int(lead.group(1))].startswith("**") else 0
    cut = None
    for end in _SENTENCE_END.finditer(hidden, begin):
        word = re.search(r"([\w.]+)[.!?]\W*$", hidden[:end.end()])
        if hidden[end.start()] == "." and word and word.group(1).lower().rstrip(".") in _ABBREVIATIONS:
            continue
        cut = end.end()
        break
    if cut is None:
        return text, ""
    show = lambda part: re.sub(r"\x00(\d+)\x00", lambda m: spans[int(m.group(1))], part)  # noqa: E731
    return show(hidden[:cut]).strip(), show(hidden[cut:]).strip()


def _list_items(text: str) -> list[str]:
    return re.split(r"\n(?= {0,3}(?:[*+-]|\d{1,9}[.)]) )", text)


def slide_and_notes(source: str) -> tuple[str, str]:
    """A markdown cell's source split into what stays on its slide and what goes to its speaker notes (the
    convention of the module docstring). Every word of the cell is in one of the two, in the cell's order."""
    blocks = markdown_blocks(source)
    slide, notes = [], []
    lead = True  # at the cell's start and after each heading: the next paragraph leads
    for k, (kind, text) in enumerate(blocks):
        following = blocks[k + 1][0] if k + 1 < len(blocks) else None
        if kind == "heading":
            slide.append(text)
            lead = True
        elif kind in SHOWN:
            slide.append(text)
        elif kind == "list":
            lead = False
            kept, told = [], []
            for entry in _list_items(text):
                marker = re.match(r"\s*(?:[*+-]|\d{1,9}[.)])\s+", entry)
                first, rest = first_sentence(entry[marker.end():])
                kept.append(entry[:marker.end()] + first)
                if rest:
                    told.append("* " + rest)
            slide.append("\n".join(kept))
            notes.extend(["\n".join(told)] if told else [])
        else:  # a paragraph or a quote
            bold_lead = re.match(r"\s*\*\*[^*]+\*\*", text)
            first, rest = first_sentence(text)
            if lead or bold_lead:
                slide.append(first)
                notes.extend([rest] if rest else [])
            elif not rest and first.endswith(":") and following in SHOWN | {"list"}:
                slide.append(first)  # one sentence that introduces what follows it: a table, a list, a formula
            else:
                notes.append(text)
            lead = False
    return "\n\n".join(slide), "\n\n".join(notes)


def _tags(cell: nbformat.NotebookNode) -> list[str]:
    return cell.metadata.get("tags", [])


def _heading(source: str) -> str:
    found = re.search(r"^#{1,6}\s+(.*)$", source, re.M)
    return found.group(1).strip() if found else ""


# A heading that starts a part of the notebook: its title (#) or a section (##).
SECTION = re.compile(r" {0,3}#{1,2}(\s|$)")


def _section_parts(source: str) -> list[str]:
    """A markdown cell's source cut before each title or section heading (# or ##) below its first block: the parts,
    each but the first starting with its heading. A line in a fenced code block or a $$ display is not a heading."""
    parts: list[list[str]] = [[]]
    fence, math = "", False
    for line in source.split("\n"):
        stripped = line.strip()
        if fence:
            fence = "" if stripped.startswith(fence) else fence
        elif math:
            math = "$$" not in stripped
        elif re.match(r" {0,3}(```|~~~)", line):
            fence = stripped[:3]
        elif stripped.startswith("$$"):
            math = "$$" not in stripped[2:]
        elif SECTION.match(line) and any(text.strip() for text in parts[-1]):
            parts.append([])
        parts[-1].append(line)
    return ["\n".join(part).strip("\n") for part in parts]


def by_section(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy of the notebook whose deck follows its sections, whatever its cells' slide types say: its title (#) and
    each section (a ## heading) start a horizontal slide, and nothing else does, so → walks the sections and ↓ only
    continues one. A markdown cell with such a heading below its first line is cut before it; a cell marked to start
    a horizontal slide inside a section starts a sub-slide instead. Cells of slide type `skip` or `notes` stay."""
    notebook = copy.deepcopy(notebook)
    cells = []
    for cell in notebook.cells:
        if _slide_type(cell) in ("skip", "notes") or cell.cell_type != "markdown":
            pieces = [cell]
        else:
            pieces = []
            for k, part in enumerate(_section_parts(cell.source)):
                piece = copy.deepcopy(cell)
                piece.source = part
                if k:
                    piece["id"] = f"{cell.get('id', 'cell')}-section-{k}"
                pieces.append(piece)
        for piece in pieces:
            kind = _slide_type(piece)
            if kind in ("skip", "notes"):
                pass
            elif piece.cell_type == "markdown" and SECTION.match(piece.source.lstrip("\n")):
                piece.metadata["slideshow"] = {"slide_type": "slide"}
            elif kind == "slide":
                piece.metadata["slideshow"] = {"slide_type": "subslide"}
            cells.append(piece)
    notebook.cells = cells
    return notebook


def for_the_lecture(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy of the notebook laid out for a lecture: its slides by its sections (`by_section`), each markdown cell
    split into its slide and its speaker notes
    (a cell of slide type `notes` right after it), and each exercise as the class meets it: its prompt, whole, with
    the exercise's own cells on one slide; its solution on the next sub-slide; then, one fragment each, the cells
    after the solution (the run, the checker and its "✔ Correct"), so the answer shows only after the solution."""
    notebook = by_section(notebook)
    cells = notebook.cells
    prompts = set()  # the markdown cell before each exercise: its prompt, which the class reads whole
    for k, cell in enumerate(cells):
        if "exercise" in _tags(cell):
            j = k - 1
            while j >= 0 and cells[j].cell_type != "markdown":
                j -= 1
            prompts.add(j)
    out, after_solution, prompt, opens, held = [], False, "", None, []
    for k, cell in enumerate(cells):
        kind = _slide_type(cell)
        if kind in ("skip", "notes"):
            out.append(cell)
            continue
        if cell.cell_type == "markdown":
            after_solution = False
            if k in prompts:
                prompt = _heading(cell.source)
            if NOTES_TAG in _tags(cell):
                shown, told = "", cell.source
            elif k in prompts or KEEP_TAG in _tags(cell):
                shown, told = cell.source, ""
            else:
                shown, told = slide_and_notes(cell.source)
            notes = []
            if told:
                notes = [nbformat.v4.new_markdown_cell(told, metadata={"slideshow": {"slide_type": "notes"}})]
                notes[0]["id"] = f"{cell.get('id', 'cell')}-notes"
            if not shown:  # all of it goes to the notes: the next shown cell opens the slide this one opened
                if kind in ("slide", "subslide"):
                    opens, held = (kind if opens != "slide" else opens), held + notes
                else:
                    out.extend(notes)
                continue
            cell.source = shown
        elif "solution" in _tags(cell):
            label = nbformat.v4.new_markdown_cell(f"#### Solution{' · ' + prompt if prompt else ''}",
                                                  metadata={"slideshow": {"slide_type": "subslide"},
                                                            "tags": ["posenc-solution-label"]})
            label["id"] = f"{cell.get('id', 'cell')}-label"
            if opens == "slide":
                label.metadata["slideshow"] = {"slide_type": "slide"}
            out.extend([label] + held)
            cell.metadata["slideshow"] = {"slide_type": "-"}
            after_solution, notes, opens, held = True, [], None, []
        else:
            if after_solution and kind in ("-", "fragment"):
                cell.metadata["slideshow"] = {"slide_type": "fragment"}
            notes = []
        if opens and _slide_type(cell) != "slide":
            cell.metadata["slideshow"] = {"slide_type": opens}
        out.append(cell)
        out.extend(held + notes)
        opens, held = None, []
    out.extend(held)
    notebook.cells = out
    return notebook


# --- Slides that fit ------------------------------------------------------------------------------------------------
# Estimated heights in deck pixels (1280 x 720, the slide CSS in tools/web/posenc/slides.css), measured on the built
# decks in Chromium: a line of code, of text output, of markdown text; the characters per line of each; the space
# around a cell. Markdown: a line of its text and the characters on it (a character of code counts 1.3), a heading,
# the space each block adds, a display formula, a row of a table (fitted to the cells of the built decks; about 23 px
# off for a typical cell). Only an estimate: what it misjudges scrolls, and tests/test_site.py measures every slide.
CODE_LINE, CODE_CHARS, OUTPUT_CHARS = 23.4, 115, 105
TEXT_LINE, TEXT_CHARS = 30.0, 115
MARKDOWN_LINE, MARKDOWN_CHARS, HEADING, BLOCK_GAP, FORMULA = 39.0, 100, 35.0, 17.0, 60.0
TABLE_ROW, TABLE_LINE = 20.0, 30.0  # a table's row: its padding, and each line of its text
CELL_GAP, SLIDE_BUDGET = 28.0, SLIDE_HEIGHT - 50
# The tallest a figure (an output's picture) and a markdown cell's picture are drawn (tools/web/posenc/slides.css),
# so that a figure fits its slide beside the code that draws it.
FIGURE_MAX, PICTURE_MAX = 480.0, 440.0


def _wrapped(text: str, width: int) -> int:
    return sum(max(1, -(-len(line) // width)) for line in text.splitlines())


def _png_size(encoded: str) -> tuple[int, int]:
    header = base64.b64decode(encoded[:44])  # the IHDR chunk: width and height at bytes 16-24
    return int.from_bytes(header[16:20], "big") or 1, int.from_bytes(header[20:24], "big")


def _picture_height(path: str) -> float:
    """A picture in a markdown cell (../images/x.png), shown at its own size or scaled to the slide's width."""
    file = (ROOT / "notebooks" / path).resolve()
    if file.suffix != ".png" or not file.is_file():
        return 400.0
    width, height = _png_size(base64.b64encode(file.read_bytes()[:33]).decode())
    return min(PICTURE_MAX, height * min(1.0, (SLIDE_WIDTH - 16) / width))


def _output_height(output: nbformat.NotebookNode) -> float:
    data = output.get("data", {})
    if output.get("output_type") == "stream":
        return _wrapped(output.get("text", ""), OUTPUT_CHARS) * CODE_LINE
    if output.get("output_type") == "error":
        return 10 * CODE_LINE
    if "application/vnd.jupyter.widget-view+json" in data:
        return 600.0
    if "image/png" in data:  # shown at its own size, or scaled down to the slide's width
        width, height = _png_size(data["image/png"])
        return min(FIGURE_MAX, height * min(1.0, (SLIDE_WIDTH - 16) / width)) + 30
    if "text/html" in data:
        return (data["text/html"].count("<tr") or 4) * TEXT_LINE
    if "text/latex" in data or "text/markdown" in data:
        return 3 * TEXT_LINE
    return _wrapped(data.get("text/plain", ""), OUTPUT_CHARS) * CODE_LINE


def _text_lines(text: str, width: int) -> int:
    """The lines a run of markdown text takes on a slide: its characters as shown (links without their targets, no
    markup), a character of code counting 1.3 (monospaced, in a box)."""
    text = re.sub(r"\]\([^)]*\)", "]", " ".join(text.split()))
    code = sum(len(span) for span in re.findall(r"`([^`]*)`", text))
    return max(1, math.ceil((len(re.sub(r"[*`$\[\]]", "", text)) + 0.3 * code) / width))


def _block_height(kind: str, text: str) -> float:
    if kind == "heading":
        height = HEADING
    elif kind == "picture":
        height = sum(_picture_height(path) for path in re.findall(r"!\[[^\]]*\]\(([^)\s]+)", text))
    elif kind == "table":
        rows = [row for row in text.splitlines() if not re.fullmatch(r"[\s|:-]+", row)]
        height = sum(TABLE_ROW + _text_lines(row, 120) * TABLE_LINE for row in rows)
    elif kind == "math":
        height = FORMULA
    elif kind == "code":
        height = max(1, text.count("\n") - 1) * CODE_LINE
    elif kind == "list":
        height = sum(_text_lines(item, MARKDOWN_CHARS - 4) for item in _list_items(text)) * MARKDOWN_LINE
    else:
        height = _text_lines(text, MARKDOWN_CHARS) * MARKDOWN_LINE
    return BLOCK_GAP + height


def cell_height(cell: nbformat.NotebookNode) -> float:
    """The estimated height of a cell on a slide, in deck pixels."""
    if cell.cell_type == "markdown":
        return 10.0 + sum(_block_height(kind, text) for kind, text in markdown_blocks(cell.source))
    source = 0.0 if "remove_input" in cell.metadata.get("tags", []) else _wrapped(cell.source, CODE_CHARS) * CODE_LINE
    return CELL_GAP + source + sum(_output_height(output) for output in cell.get("outputs", []))


def _slide_type(cell: nbformat.NotebookNode) -> str:
    return cell.metadata.get("slideshow", {}).get("slide_type", "-")


def _markdown_parts(cell: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    """A markdown cell taller than the deck, cut between its blocks into cells that each fit, and a list or a table
    too tall for a slide of its own between its items or rows (a table's header repeated). A heading, and a sentence
    ending with a colon, stay with the block after them. The parts after the first start sub-slides."""
    units = []  # (text, the list or table it belongs to or None, glued to the next unit, the table's header)
    for k, (kind, text) in enumerate(markdown_blocks(cell.source)):
        glued = kind == "heading" or (kind == "paragraph" and text.rstrip().endswith(":"))
        whole = _block_height(kind, text) <= SLIDE_BUDGET * 0.75  # a list or table cut only if it needs to be
        if kind == "list" and not whole:
            units += [(item, k, False, "") for item in _list_items(text)]
        elif kind == "table" and not whole and text.count("\n") > 2:
            lines = text.split("\n")
            header = "\n".join(lines[:2]) + "\n"
            units += [((header if j == 0 else "") + row, k, False, header) for j, row in enumerate(lines[2:])]
        else:
            units.append((text, None, glued, ""))
    parts, text, last, glue = [], "", None, False
    for unit, group, glued, header in units:
        joined = text + ("\n" if group is not None and group == last else "\n\n") + unit if text else unit
        if text and not glue and cell_height(nbformat.v4.new_markdown_cell(joined)) > SLIDE_BUDGET:
            parts.append(text)
            joined = (header if group == last else "") + unit  # a table cut between its rows: its header again
        text, last, glue = joined, group, glued
    parts.append(text)
    cells = []
    for k, part in enumerate(parts):
        piece = copy.deepcopy(cell)
        piece.source = part
        if k:
            piece.metadata["slideshow"] = {"slide_type": "subslide"}
            piece["id"] = f"{cell.get('id', 'cell')}-{k}"
        cells.append(piece)
    return cells


def fit_slides(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy of the notebook whose (sub-)slides fit the deck: where the cells of one slide add up to more than
    the deck's height, the next cell starts a sub-slide; a code cell too tall with its output is cut in two,
    its code on one sub-slide and its output on the next; a markdown cell too tall is cut between its blocks (a
    list between its items). A code cell or a block taller than the deck on its own scrolls."""
    notebook = copy.deepcopy(notebook)
    cells, used = [], 0.0
    shown = [cell for cell in notebook.cells if _slide_type(cell) not in ("skip", "notes")]
    opens_next = {id(cell): _slide_type(after) in ("slide", "subslide") for cell, after in zip(shown, shown[1:])}
    for cell in notebook.cells:
        kind = _slide_type(cell)
        if kind in ("skip", "notes"):
            cells.append(cell)
            continue
        height = cell_height(cell)
        if "exercise" in cell.metadata.get("tags", []) or (
                opens_next.get(id(cell), True) and kind == "-" and used and used + height <= SLIDE_HEIGHT - 40):
            # An exercise's own cell stays with its prompt; a short last cell would stand alone on a sub-slide of
            # its own: it stays, in the deck's margin.
            used += height
            cells.append(cell)
            continue
        if (cell.cell_type == "code" and cell.get("outputs") and height > SLIDE_BUDGET
                and _wrapped(cell.source, CODE_CHARS) * CODE_LINE > SLIDE_BUDGET / 6):
            code_only = copy.deepcopy(cell)
            code_only.outputs = []
            output_only = copy.deepcopy(cell)
            output_only.metadata.setdefault("tags", []).append("remove_input")
            output_only.metadata["slideshow"] = {"slide_type": "subslide"}
            output_only["id"] = f"{cell.get('id', 'cell')}-output"
            parts = [code_only, output_only]
        elif cell.cell_type == "markdown" and height > SLIDE_BUDGET:
            parts = _markdown_parts(cell)
        else:
            parts = [cell]
        for part in parts:
            height = cell_height(part)
            if _slide_type(part) in ("slide", "subslide"):
                used = 0.0
            elif used and used + height > SLIDE_BUDGET:
                # A sentence that introduces this cell ("... over 64 positions:") goes with it to the next sub-slide.
                shown = [c for c in cells if _slide_type(c) not in ("skip", "notes")]
                intro = shown[-1] if shown else None
                if (intro is not None and intro.cell_type == "markdown" and _slide_type(intro) == "-"
                        and intro.source.rstrip().endswith(":")
                        and cell_height(intro) + height <= SLIDE_BUDGET):
                    intro.metadata["slideshow"] = {"slide_type": "subslide"}
                    used = cell_height(intro)
                else:
                    part.metadata["slideshow"] = {"slide_type": "subslide"}
                    used = 0.0
            used += height
            cells.append(part)
    notebook.cells = cells
    return notebook


# --- The site's layout ----------------------------------------------------------------------------------------------
def launch_links(stem: str) -> str:
    """Binder and Colab for one notebook, from the repository address in pyproject.toml."""
    owner_repo = repository().removeprefix("https://github.com/").strip("/")
    binder = f"https://mybinder.org/v2/gh/{owner_repo}/HEAD?urlpath=lab/tree/notebooks/{stem}.ipynb"
    colab = f"https://colab.research.google.com/github/{owner_repo}/blob/main/notebooks/{stem}.ipynb"
    return f'<a href="{binder}">launch on Binder</a> · <a href="{colab}">open in Colab</a>'


_SAFE = "-_.~!$&'()*+,;=:@/"  # what a URL's fragment may hold as it is
# TeX in a page's markdown, as the search shows it in a snippet: $$...$$ left out, $...$ without its commands.
DISPLAY_MATH = re.compile(r"\$\$.+?\$\$|\\\[.+?\\\]", re.S)
INLINE_MATH = re.compile(r"\$([^$]+)\$")
TEX_WORDS = {"sin", "cos", "exp", "log", "max", "min", "softmax", "sqrt"}


def _untex(text: str) -> str:
    def inline(match: re.Match) -> str:
        # \sin x -> sin x, \mathrm{softmax}(x) -> softmax(x), \frac{a}{b} -> a b, x^{2i} -> x 2i, d_{model} -> d_model
        tex = re.sub(r"\\([A-Za-z]+)\s*", lambda m: m.group(1) + " " if m.group(1) in TEX_WORDS else "", match.group(1))
        tex = re.sub(r"[{}]", "", tex.replace("}{", " ")).replace("^", " ").replace("\\", " ")
        return re.sub(r"\s+", " ", tex).strip()
    return INLINE_MATH.sub(inline, DISPLAY_MATH.sub(" ", text))


class _SectionText(HTMLParser):
    """A page's <main> as the search reads it: each heading (levels 1-3, with an id) opens a section; a section holds
    its prose (markdown, math without TeX commands) and its code (each code cell's source, as written) apart. Outputs,
    prompts, heading anchors, scripts and the solution toggle's summary are left out."""

    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
    BLOCK = {"p", "div", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "td", "th", "pre", "table",
             "blockquote", "details", "summary", "dt", "dd", "section", "br", "hr", "img"}
    SKIPPED = {"anchor-link", "jp-InputPrompt", "jp-OutputPrompt", "jp-OutputArea", "jp-Collapser"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, str]] = []  # (tag, kind): kind is prose, code, heading or skip
        self.found: list[dict] = []

    def _kind(self) -> str:
        return self.stack[-1][1] if self.stack else "prose"

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        classes = set((attrs.get("class") or "").split())
        kind = self._kind()
        if kind != "skip":
            if tag in ("script", "style", "summary") or classes & self.SKIPPED:
                kind = "skip"
            elif "jp-InputArea-editor" in classes:
                kind = "code"
            elif re.fullmatch(r"h[1-3]", tag) and attrs.get("id"):
                self.found.append({"level": int(tag[1]), "id": attrs["id"], "heading": [], "prose": [], "code": []})
                kind = "heading"
        if tag in self.BLOCK and kind != "code":  # code keeps its own lines and indentation
            self._add(" ", kind)
        if tag not in self.VOID:
            self.stack.append((tag, kind))

    def handle_startendtag(self, tag, attrs):
        if tag in self.BLOCK:
            self._add(" ", self._kind())

    def handle_endtag(self, tag):
        if tag in self.VOID or all(open_tag != tag for open_tag, _ in self.stack):
            return
        while self.stack:
            open_tag, kind = self.stack.pop()
            if open_tag == tag:
                break
        if tag in self.BLOCK and kind != "code":
            self._add(" ", kind)
        if tag == "pre" and kind == "code":
            self._add("\n", "code")

    def handle_data(self, data):
        self._add(data, self._kind())

    def _add(self, text: str, kind: str) -> None:
        if kind == "skip" or not self.found:
            return
        self.found[-1][{"heading": "heading", "code": "code"}.get(kind, "prose")].append(text)


def sections(body: str) -> list[dict]:
    """The page's headings (levels 1-3), each with its id, its prose up to the next heading, and its code."""
    parser = _SectionText()
    parser.feed(body[body.find("<main"):])
    parser.close()
    squeeze = lambda text: re.sub(r"\s+", " ", text).strip()  # noqa: E731
    return [{"level": s["level"], "id": s["id"], "heading": squeeze("".join(s["heading"])),
             "text": squeeze(_untex("".join(s["prose"])))[:6000],
             "code": "\n".join(line.rstrip() for line in "".join(s["code"]).splitlines() if line.strip())[:4000]}
            for s in parser.found]


def sidebar(all_pages: list[dict], here: dict | None, prefix: str, *, students: bool = False) -> str:
    """The contents that stay beside the text: the search, every notebook, and the open page's own sections. On a
    narrow screen they fold behind the top bar's button (tools/web/posenc/site.js)."""
    items = []
    for page in all_pages:
        current = page is here
        mark = ' aria-current="page"' if current else ""
        link = f'<a href="{prefix}notebooks/{page["stem"]}.html"{mark}>{html.escape(page["title"])}</a>'
        own = ""
        if current:
            own = "".join(f'<li><a href="#{html.escape(quote(s["id"], safe=_SAFE))}">{html.escape(s["heading"])}</a></li>'
                          for s in page["sections"] if s["level"] == 2)
            own = own and f'<ol class="posenc-sections" aria-label="on this page">{own}</ol>'
        items.append(f'<li class="posenc-current">{link}{own}</li>' if current else f"<li>{link}</li>")
    edition = "Students' edition" if students else "Teacher's edition"
    return (f'<header class="posenc-topbar"><a class="posenc-topbar-home" href="{prefix}index.html">posenc</a>'
            f'<button type="button" class="posenc-contents-button" aria-controls="posenc-sidebar" aria-expanded="false">'
            f'Contents and search</button></header>'
            f'<aside class="posenc-sidebar" id="posenc-sidebar" aria-label="contents">'
            f'<p class="posenc-home"><a href="{prefix}index.html">posenc</a>'
            f' <span class="posenc-edition">{edition}</span></p>'
            f'<div class="posenc-search" role="search"><label for="posenc-search-box">Search every notebook</label>'
            f'<input id="posenc-search-box" type="search" autocomplete="off" placeholder="e.g. equivariant"'
            f' aria-describedby="posenc-search-help">'
            f'<p id="posenc-search-help" class="posenc-help">↓ and ↑ move through the results, Enter opens one.</p>'
            f'<p id="posenc-search-status" class="posenc-help" role="status"></p>'
            f'<ol id="posenc-search-results"></ol></div>'
            f'<nav aria-label="notebooks"><ol start="0">{"".join(items)}</ol></nav></aside>')


def page_head(prefix: str) -> str:
    static = f"{prefix}_static"
    # The class says the script runs (the narrow screen's folded contents need it) before the first paint.
    return (f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<meta name="color-scheme" content="light dark">'
            f'<script>document.documentElement.classList.add("posenc-js");</script>'
            # A formula stays whole and scrolls in its own box on a narrow screen (site.css), rather than being
            # broken across lines by MathJax at places that split a function from its argument.
            '<script type="text/x-mathjax-config">MathJax.Hub.Config({CommonHTML: {linebreaks: {automatic: false}}});'
            '</script>'
            f'<link rel="stylesheet" href="{static}/posenc/site.css">'
            f'<script src="{static}/posenc/search-index.js" defer></script>'
            f'<script src="{static}/minisearch.js" defer></script>'
            f'<script src="{static}/posenc/site.js" data-root="{prefix}" defer></script>')


def position(all_pages: list[dict], k: int) -> str:
    """Where page k is in the suite, by the notebooks' own numbers (the contents number them the same way, from 00):
    "Notebook 05 of 00–17"."""
    number = lambda page: page["stem"].split("_", 1)[0]  # noqa: E731
    return f"Notebook {number(all_pages[k])} of {number(all_pages[0])}–{number(all_pages[-1])}"


def navigation(all_pages: list[dict], k: int, *, students: bool = False) -> tuple[str, str]:
    """The header and footer of page k: where it is in the suite, its time, and the ways out."""
    here = all_pages[k]
    previous = all_pages[k - 1] if k else None
    following = all_pages[k + 1] if k + 1 < len(all_pages) else None
    steps = " · ".join(filter(None, [
        previous and f'<a href="{previous["stem"]}.html" rel="prev">← {html.escape(previous["title"])}</a>',
        '<a href="../index.html">all notebooks</a>',
        following and f'<a href="{following["stem"]}.html" rel="next">{html.escape(following["title"])} →</a>']))
    if students:  # the learner's notebook; no slides, and no launch links (they open the teacher's notebook)
        ways = f'<a href="{here["stem"]}.ipynb" download>download the notebook (.ipynb), exercises without solutions</a>'
    else:
        ways = (f'<a href="{here["stem"]}.ipynb" download>download the notebook (.ipynb)</a> · '
                f'<a href="../slides/{here["stem"]}.slides.html">slides</a> · {launch_links(here["stem"])}')
    header = (f'<nav class="posenc-nav" aria-label="the suite"><p>{steps}</p>'
              # The goal itself opens the notebook, just below.
              f'<p class="posenc-time">{position(all_pages, k)}, about {here["time"]}.</p>'
              f'<p class="posenc-ways">{ways}</p></nav>')
    footer = f'<nav class="posenc-nav" aria-label="previous and next"><p>{steps}</p></nav>'
    return header, footer


# Style and script every page and deck gets, for an axe-core audit without serious or critical findings:
# darker prompts and comments (JupyterLab's light greys fail WCAG AA contrast on white), links in text
# underlined (not told apart by colour alone), and a box that scrolls made focusable. (The explorers label their own
# controls and describe their pictures: they are anywidgets.)
ACCESSIBILITY = """<style id="posenc-accessibility">
.jp-InputPrompt, .jp-OutputPrompt { color: #1f4e79 !important; opacity: 1 !important; }
.highlight .c, .highlight .c1, .highlight .cm, .highlight .ch, .highlight .cs, .highlight .cp, .highlight .cpf,
.highlight .sd { color: #3a6a3a !important; }
.highlight .m, .highlight .mi, .highlight .mf, .highlight .mh, .highlight .mo, .highlight .il, .highlight .mb,
.highlight .k, .highlight .kc, .highlight .kd, .highlight .kn, .highlight .kp, .highlight .kr, .highlight .nb,
.highlight .bp { color: #006400 !important; }
.highlight .ow, .highlight .nd, .highlight .si, .highlight .sx { color: #7417b8 !important; }
.highlight .se, .highlight .ne, .highlight .nl, .highlight .ni { color: #8a4a12 !important; }
.jp-RenderedHTMLCommon a, .jp-RenderedHTMLCommon a:link, .jp-RenderedHTMLCommon a:visited, .posenc-nav a, .reveal a {
  text-decoration: underline !important; }
.posenc-solution { margin: 0.4rem 0; } .posenc-solution > summary { cursor: pointer; color: #0b4f8a; font-weight: 600;
  font-family: var(--posenc-font, system-ui, sans-serif); padding: 0.2rem 0; }
.reveal .posenc-solution > summary { font-size: 0.6em; }
</style>
<script>
window.addEventListener("load", () => {
  // A box that scrolls (a long code line, a wide table, a tall slide) takes the keyboard's focus, to scroll it.
  const focusable = () => document.querySelectorAll(
    ".jp-InputArea-editor, .jp-OutputArea-output, .jp-RenderedHTMLCommon, .reveal .slides section:not(.stack)"
  ).forEach(box => {
    const style = getComputedStyle(box);
    const scrolls = ["auto", "scroll"].includes(style.overflowX) || ["auto", "scroll"].includes(style.overflowY);
    if (!box.hasAttribute("tabindex") && scrolls
        && (box.scrollWidth > box.clientWidth + 1 || box.scrollHeight > box.clientHeight + 1)) box.tabIndex = 0;
  });
  window.posencFocusable = focusable;
  focusable();
  new MutationObserver(focusable).observe(document.body, {childList: true, subtree: true});
  document.addEventListener("slidechanged", focusable);  // reveal.js: a slide is measured once it is shown
});
</script>
"""


# reveal.js centres a slide once, when it is shown; an explorer draws (and changes height) later. Each slide is laid
# out again whenever its size changes, so no blank band is left above it and nothing is cut below. On a phone held
# upright the deck takes the screen's shape.
RELAYOUT = """<script>
window.addEventListener("load", () => require(["../_static/reveal.js/dist/reveal.js"], Reveal => {
  const relayout = new ResizeObserver(() => { if (Reveal.isReady()) Reveal.layout(); });
  document.querySelectorAll(".reveal .slides section:not(.stack)").forEach(slide => relayout.observe(slide));
  // On a phone held upright a 1280 x 720 deck would shrink to a third of its size: the deck becomes 640 wide and as
  // tall as the screen's shape allows, so its text reads at about 60% of its size (slides.css: --posenc-deck-height).
  const fit = () => {
    const upright = window.innerWidth < 800 && window.innerHeight > 1.2 * window.innerWidth;
    const width = upright ? PHONE_WIDTH : SLIDE_WIDTH;
    const height = upright ? Math.round(PHONE_WIDTH * window.innerHeight / window.innerWidth) : SLIDE_HEIGHT;
    const config = Reveal.getConfig();
    if (config.width === width && config.height === height) return;
    document.documentElement.style.setProperty("--posenc-deck-height", `${height}px`);
    Reveal.configure({width, height});
  };
  if (Reveal.isReady()) fit(); else Reveal.on("ready", fit);
  window.addEventListener("resize", fit);
}));
</script>
"""
for _name, _value in [("PHONE_WIDTH", PHONE_WIDTH), ("SLIDE_WIDTH", SLIDE_WIDTH), ("SLIDE_HEIGHT", SLIDE_HEIGHT)]:
    RELAYOUT = RELAYOUT.replace(_name, str(_value))


def _with(body: str, *, head: str = "", top: str = "", bottom: str = "") -> str:
    body = body.replace("</head>", head + "</head>", 1)
    body = re.sub(r"(<body[^>]*>)", lambda m: m.group(1) + top, body, count=1)
    return body.replace("</body>", bottom + "</body>", 1)


def build_site(site: Path, *, students: bool = False) -> None:
    """The teacher's site in `site`, or (students) the students' (see the module's docstring)."""
    copy_assets(site, reveal=not students)
    folder = site / "notebooks"
    folder.mkdir(parents=True, exist_ok=True)
    exporter = _offline(HTMLExporter(template_name="posenc_lab", extra_template_basedirs=[str(TEMPLATES)]),
                        "../_static")
    all_pages, bodies = pages(students=students), []
    for page in all_pages:
        body, _ = exporter.from_notebook_node(page["notebook"], resources={"metadata": {"name": page["title"]}})
        body = describe_figures(body, page["notebook"])
        page["sections"] = sections(body)
        bodies.append(_link_html(body, ".html"))
    for k, (page, body) in enumerate(zip(all_pages, bodies)):
        header, footer = navigation(all_pages, k, students=students)
        top = (f'<div class="posenc-layout">{sidebar(all_pages, page, "../", students=students)}'
               f'<div class="posenc-page">{header}')
        body = _with(body, head=ACCESSIBILITY + ANYWIDGET_CONFIG + page_head("../"), top=top,
                     bottom=f"{footer}</div></div>")
        (folder / f"{page['stem']}.html").write_text(body)
        if students:  # to download: the learner's edition
            nbformat.write(page["download"], folder / f"{page['stem']}.ipynb")
        else:
            shutil.copy2(ROOT / "notebooks" / f"{page['stem']}.ipynb", folder / f"{page['stem']}.ipynb")
    write_search_index(site, all_pages)
    owner_repo = repository().removeprefix("https://github.com/").strip("/")
    binder = f"https://mybinder.org/v2/gh/{owner_repo}/HEAD?urlpath=lab/tree/notebooks/00_start_here.ipynb"
    if students:
        last = '<td><a href="notebooks/{stem}.ipynb" download aria-label="download {stem}.ipynb">.ipynb</a></td>'
        heading = "notebook"
        intro = STUDENTS_INTRO
    else:
        last, heading = '<td><a href="slides/{stem}.slides.html">slides</a></td>', "slides"
        intro = TEACHERS_INTRO.format(repository=html.escape(repository()), binder=binder)
    rows = "\n".join(f'<tr><td><a href="notebooks/{p["stem"]}.html">{html.escape(p["title"])}</a></td>'
                     f'<td>{p["goal"]}</td><td>{p["time"]}</td>{last.format(stem=p["stem"])}</tr>' for p in all_pages)
    (site / "index.html").write_text(INDEX.format(
        rows=rows, intro=intro, last=heading, head=page_head(""),
        sidebar=sidebar(all_pages, None, "", students=students)))


def write_search_index(site: Path, all_pages: list[dict]) -> None:
    """Every section of every page, for the search in the sidebar (a script, so it loads from disk too): its heading,
    its prose and its code apart (tools/web/posenc/site.js indexes them with MiniSearch)."""
    index = {"pages": [{"title": p["title"], "url": f"notebooks/{p['stem']}.html"} for p in all_pages],
             "sections": [{"page": k, "id": s["id"], "heading": s["heading"], "text": s["text"], "code": s["code"]}
                          for k, p in enumerate(all_pages) for s in p["sections"]]}
    target = site / "_static" / "posenc" / "search-index.js"
    target.write_text("window.POSENC_SEARCH_INDEX = " + json.dumps(index, ensure_ascii=False) + ";\n")


def build_slides(site: Path) -> None:
    copy_assets(site)
    folder = site / "slides"
    folder.mkdir(parents=True, exist_ok=True)
    # A code cell cut in two by fit_slides shows its output alone on the second part.
    config = Config({"TagRemovePreprocessor": {"enabled": True, "remove_input_tags": {"remove_input"}}})
    exporter = _offline(SlidesExporter(template_name="posenc_slides", extra_template_basedirs=[str(TEMPLATES)],
                                       config=config), "../_static")
    exporter.reveal_url_prefix = "../_static/reveal.js"
    exporter.reveal_theme = "white"  # its fonts ship with reveal.js; "simple" fetches them from Google
    exporter.reveal_number = "c/t"  # every slide numbered, sub-slides included: "12/40"
    exporter.reveal_width, exporter.reveal_height = str(SLIDE_WIDTH), str(SLIDE_HEIGHT)
    slides_css = '<link rel="stylesheet" href="../_static/posenc/slides.css">'
    for page in pages():
        body, _ = exporter.from_notebook_node(fit_slides(for_the_lecture(page["notebook"])),
                                              resources={"metadata": {"name": page["title"]}})
        body = describe_figures(body, page["notebook"])
        body = _with(_link_html(body, ".slides.html"), head=ACCESSIBILITY + ANYWIDGET_CONFIG + slides_css + RELAYOUT)
        (folder / f"{page['stem']}.slides.html").write_text(body)


TEACHERS_INTRO = """<p>From a sentence to the matrix a Transformer's attention reads, with the sinusoidal positional encoding at
its centre. These pages are the notebooks as stored (the teacher's edition: each exercise's solution behind a closed
toggle), widgets at their saved state; run them live with <code>make lab</code>, or
<a href="{binder}">launch the suite on Binder</a> (from <a href="{repository}">{repository}</a>; every page also
opens its own notebook on Binder or Colab).</p>"""
STUDENTS_INTRO = """<p>From a sentence to the matrix a Transformer's attention reads, with the sinusoidal positional encoding at
its centre. These pages are the students' edition: the exercises are there, their solutions are not. Each page shows
the outputs of a full run, widgets at their saved state; an exercise's checker shows nothing until you run it
yourself. Download a notebook from its page or from the table below and run it in Jupyter (with the suite set up:
<code>make lab</code>), or upload it to Colab: its first cell installs what it needs.</p>"""
INDEX = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>posenc: from a sentence to the matrix attention reads</title>
{head}
</head>
<body>
<div class="posenc-layout">
{sidebar}
<div class="posenc-page">
<main class="posenc-index">
<h1>posenc</h1>
{intro}
<p><img src="images/pipeline.png" alt="The input pipeline with the running example's sizes: a sentence padded to
10 tokens, one-hot rows (10, 11), X = one_hot @ W_E (10, 6), X + PE, the projections Q, K, V, and the attention
output (10, 6)."></p>
<div class="posenc-table">
<table>
<thead><tr><th scope="col">page</th><th scope="col">goal</th><th scope="col">time</th><th scope="col">{last}</th></tr>
</thead>
<tbody>
{rows}
</tbody>
</table>
</div>
</main>
</div>
</div>
</body>
</html>
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["site", "slides", "all"])
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "site", help="the teacher's site (and slides)")
    parser.add_argument("--students-out", type=Path, default=ROOT / "build" / "site-students",
                        help="the students' site")
    args = parser.parse_args()
    start = time.perf_counter()
    if args.what in ("slides", "all"):
        build_slides(args.out)
    if args.what in ("site", "all"):
        build_site(args.out)
        build_site(args.students_out, students=True)
    print(f"{args.what}: {args.out}{' and ' + str(args.students_out) if args.what != 'slides' else ''}"
          f" in {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
