"""Explorers on the static site: the encoding explorer live in the page, the others as their saved picture with a note.

    page_html = embed_explorers(page_html, notebook, "../_static")   # what tools/build_site.py calls on each page
    page_html = live_explorers(page_html, "08_explore")             # the same, script and style written inline

A page exported by nbconvert keeps each explorer as a widget view (a model id) and the notebook's saved widget
state. Without a kernel those widgets' sliders move but nothing recomputes their picture. `live_explorers` looks at
each widget view of the page:

* an EncodingExplorer (its sliders d_model, max_sequence_length, base, position, dimension and its view buttons)
  becomes a live explorer (explorer.js, computed and drawn in the browser), starting from the saved settings;
* any other explorer (PipelineExplorer, SchemeExplorer: they need the package) becomes its saved picture, its
  saved settings as text, its caption, and one line: "run the notebook to move this explorer"; no control that does
  nothing.

The script and style go into a page only if it has a live explorer, once: linked from the site's static folder
(tools/build_site.py copies this folder to _static/explorer) or, without one, written into the page itself. Nothing
comes from a CDN. Calling either function again on its own output changes nothing.
"""

from __future__ import annotations

import functools
import html
import json
import math
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
# As posenc.explorers.encoding_explorer.VIEWS, posenc.plots.SINE_COLOUR / COSINE_COLOUR, OKABE_ITO[3] (the similarity
# profile) and DIVERGING / SEQUENTIAL: the site build needs no torch (tests/test_page_explorer.py checks they agree).
VIEWS = ("heatmap", "curves", "wavelengths", "similarity")
COLOURS = {"sin": "#E69F00", "cos": "#0072B2", "profile": "#0072B2"}
COLORMAPS = {"diverging": "RdBu_r", "sequential": "viridis"}
ENCODING_SLIDERS = ("d_model", "max_sequence_length", "position", "dimension")
LIVE_NOTE = ("Live in this page: computed in your browser from the formula, no kernel needed. "
             "The notebook's Python explorer is the reference.")
PICTURE_HEIGHT = 380  # CSS pixels: with the three rows of controls, the explorer fits a 1280 x 720 screen

STATE = re.compile(r'<script type="application/vnd\.jupyter\.widget-state\+json">\s*(.*?)\s*</script>', re.S)
VIEW = re.compile(r'<script type="application/vnd\.jupyter\.widget-view\+json">\s*(\{.*?\})\s*</script>', re.S)
ASSETS_ID = "posenc-explorer-script"


def embed_explorers(page: str, notebook: object = None, static: str | None = None) -> str:
    """The hook tools/build_site.py calls on each page: `live_explorers` with the script and style linked from `static`.

    `notebook` is the page's notebook (a NotebookNode: unused, its widget state is in the page already) or its name
    ("08_explore": the note then links to the notebook beside the page).
    """
    if static is not None and (not isinstance(static, str) or not static.strip() or '"' in static):
        raise ValueError(f"static must be the relative address of the site's static folder such as '../_static', got {static!r}")
    return live_explorers(page, notebook if isinstance(notebook, str) else None, static=static)


def live_explorers(page: str, notebook_name: str | None, *, static: str | None = None) -> str:
    """The page with every saved explorer replaced: the encoding explorer live, the others as picture and note.

    `notebook_name` is the notebook's stem ("08_explore"; a trailing ".ipynb" is dropped): the note links to the
    notebook beside the page (None: the note without a link). With `static` the script and style are linked from
    `static`/explorer/, else written into the page. Pages without widgets come back unchanged.
    """
    if not isinstance(page, str):
        raise TypeError(f"page must be the HTML of a page as a str, got {type(page).__name__}")
    if notebook_name is not None and (not isinstance(notebook_name, str) or not notebook_name.strip()):
        raise ValueError(f"notebook_name must be a notebook's name such as '08_explore' or None, got {notebook_name!r}")
    stem = notebook_name.strip().removesuffix(".ipynb") if notebook_name is not None else None
    found = STATE.search(page)
    if found is None or not VIEW.search(page):
        return page
    state = json.loads(found.group(1)).get("state", {})
    live = False

    def replace(match: re.Match) -> str:
        nonlocal live
        model_id = json.loads(match.group(1)).get("model_id", "")
        if model_id not in state:
            return match.group(0)
        models = list(_descendants(state, model_id))
        settings = _encoding_settings(models)
        if settings is None:
            return _saved_picture(models, stem)
        live = True
        settings = json.dumps(settings, separators=(",", ":"))
        return (f'<div class="posenc-live-explorer" data-posenc-explorer="{html.escape(settings)}">'
                f'{_saved_picture(models, stem)}</div>')

    page = VIEW.sub(replace, page)
    if live and ASSETS_ID not in page:
        assets = _assets() if static is None else (
            f'<link rel="stylesheet" id="posenc-explorer-style" href="{html.escape(static)}/explorer/explorer.css">\n'
            f'<script id="{ASSETS_ID}" src="{html.escape(static)}/explorer/explorer.js"></script>\n')
        page = page.replace("</body>", assets + "</body>", 1)
    return page


def _descendants(state: dict, model_id: str):
    """(model_name, state, buffers) of a widget and everything inside it, depth first, in the order shown."""
    entry = state.get(model_id)
    if entry is None:
        return
    yield entry["model_name"], entry["state"], entry.get("buffers", [])
    for child in entry["state"].get("children", []):
        yield from _descendants(state, child.removeprefix("IPY_MODEL_"))


def _encoding_settings(models: list) -> dict | None:
    """The saved settings of an EncodingExplorer, or None if these widgets are another explorer."""
    sliders = {s.get("description"): s for name, s, _ in models if name == "IntSliderModel"}
    bases = [s for name, s, _ in models if name == "FloatLogSliderModel" and s.get("description") == "base"]
    views = [s for name, s, _ in models if name == "ToggleButtonsModel" and s.get("description") == "view"]
    if not (set(ENCODING_SLIDERS) <= set(sliders) and bases and views
            and tuple(views[0].get("_options_labels", ())) == VIEWS):
        return None
    compare = [s for name, s, _ in models if name == "CheckboxModel"]
    base = bases[0]
    value = {name: int(sliders[name]["value"]) for name in ENCODING_SLIDERS}
    return {**value, "d_model_max": int(sliders["d_model"]["max"]),
            "max_sequence_length_max": int(sliders["max_sequence_length"]["max"]),
            "base": float(base["value"]),
            "base_exponents": [float(base.get("min", 0.3)), float(base.get("max", 6)), float(base.get("step", 0.05))],
            "view": VIEWS[int(views[0].get("index", 0))], "compare_layouts": bool(compare and compare[0].get("value")),
            "colours": COLOURS, "colormaps": _colormaps(), "height": PICTURE_HEIGHT, "note": LIVE_NOTE}


def _saved_picture(models: list, stem: str | None) -> str:
    """The explorer's saved picture, its settings as text and its caption, with the one-line note."""
    pictures = [buffer["data"] for name, s, buffers in models if name == "ImageModel"
                for buffer in buffers if buffer.get("path") == ["value"] and buffer.get("encoding") == "base64"]
    captions = [s["value"] for name, s, _ in models if name == "HTMLModel" and s.get("value", "").strip()]
    alt = " ".join(re.sub(r"<[^>]+>", "", html.unescape(c)) for c in captions[-1:]) or "The explorer's saved picture"
    picture = f'<img src="data:image/png;base64,{pictures[0]}" alt="{html.escape(alt)}">' if pictures else ""
    settings = _settings_text(models)
    return (f'<figure class="posenc-saved-explorer">{picture}<figcaption>'
            + (f'<p class="posenc-x-settings">Saved at {html.escape(settings)}.</p>' if settings else "")
            + "".join(f'<p class="posenc-x-caption">{c}</p>' for c in captions)
            + '<p class="posenc-x-note">A saved picture: '
            + (f'<a href="{html.escape(stem)}.ipynb">run the notebook</a>' if stem else "run the notebook")
            + " to move this explorer.</p></figcaption></figure>")


def _settings_text(models: list) -> str:
    """"sentence "My name is John", max_sequence_length 10, d_model 6": every control's saved value, in order."""
    parts = []
    for name, s, _ in models:
        label = s.get("description", "")
        if name in ("TextModel", "TextareaModel"):
            parts.append(f'{label} "{s.get("value", "")}"')
        elif name in ("IntSliderModel", "FloatSliderModel", "FloatLogSliderModel"):
            parts.append(f"{label} {_readable(float(s['value'])) if name != 'IntSliderModel' else s['value']}")
        elif name in ("ToggleButtonsModel", "DropdownModel", "RadioButtonsModel") and s.get("_options_labels"):
            parts.append(f"{label} {s['_options_labels'][int(s.get('index') or 0)]}")
        elif name == "CheckboxModel":
            parts.append(f"{label}: {'on' if s.get('value') else 'off'}")
    return ", ".join(p.strip() for p in parts if p.strip())


def _readable(value: float) -> str:
    """As the explorers' readouts (d3-format ",.4r"): 4 significant digits, thousands separated: 10,000, 14.13."""
    if not math.isfinite(value) or value == 0:
        return f"{value:g}"
    rounded = float(f"{value:.4g}")
    return f"{rounded:,.{max(0, 3 - math.floor(math.log10(abs(rounded))))}f}"


@functools.cache
def _colormaps() -> dict[str, str]:
    # The colours of matplotlib's maps, as the package's figures use them: 256 entries of "rrggbb" each.
    import matplotlib
    import numpy as np

    tables = {}
    for key, name in COLORMAPS.items():
        rgba = matplotlib.colormaps[name].resampled(256)(np.arange(256), bytes=True)
        tables[key] = "".join(f"{r:02x}{g:02x}{b:02x}" for r, g, b, _ in rgba)
    return tables


@functools.cache
def _assets() -> str:
    script = (HERE / "explorer.js").read_text()
    style = (HERE / "explorer.css").read_text()
    if "</script" in script.lower() or "</style" in style.lower():
        raise ValueError("explorer.js or explorer.css contains a closing tag: it cannot be written into a page")
    return f'<style id="posenc-explorer-style">\n{style}</style>\n<script id="{ASSETS_ID}">\n{script}</script>\n'
