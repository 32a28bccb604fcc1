"""Build the classroom outputs, offline: `make site` and `make slides`.

    python tools/build_site.py site     build/site/index.html and build/site/notebooks/*.html
    python tools/build_site.py slides   build/site/slides/*.slides.html (reveal.js)

The stored notebooks are converted as they are (no re-execution), widgets at their
saved state. Every script and style sheet a page loads (reveal.js, MathJax,
require.js, jQuery, the Jupyter widgets renderer) is copied from tools/web/node_modules,
installed by npm from tools/web/package-lock.json, into build/site/_static: no page
asks a CDN for anything.
"""

from __future__ import annotations

import argparse
import html
import json
import re
import shutil
import time
from pathlib import Path

import nbformat
from nbconvert import HTMLExporter, SlidesExporter

from run_notebooks import NOTEBOOK_INPUTS

ROOT = Path(__file__).resolve().parent.parent
NODE_MODULES = ROOT / "tools" / "web" / "node_modules"
TEMPLATES = ROOT / "tools" / "web" / "templates"
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


def copy_assets(site: Path) -> None:
    if not NODE_MODULES.is_dir():
        raise SystemExit("tools/web/node_modules is missing: run `make site` (it runs npm ci first)")
    for source, target in ASSETS:
        src, dst = NODE_MODULES / source, site / "_static" / target
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dst, dirs_exist_ok=True)
        else:
            shutil.copy2(src, dst)
    for folder in NOTEBOOK_INPUTS:
        shutil.copytree(ROOT / folder, site / folder, dirs_exist_ok=True)


def _offline(exporter: HTMLExporter, static: str) -> HTMLExporter:
    exporter.require_js_url = f"{static}/require.js"
    exporter.mathjax_url = f"{static}/mathjax/MathJax.js?config=TeX-AMS_CHTML-full,Safe"
    exporter.widget_renderer_url = f"{static}/html-manager/embed-amd.js"
    exporter.jquery_url = f"{static}/jquery.min.js"
    return exporter


def _link_html(body: str, suffix: str) -> str:
    # Links between notebooks point at .ipynb files; on the site they are pages.
    return re.sub(r'href="([0-9A-Za-z_]+)\.ipynb"', rf'href="\1{suffix}"', body)


def notebooks() -> list[Path]:
    return sorted((ROOT / "notebooks").glob("*.ipynb"))


def title(notebook: nbformat.NotebookNode) -> str:
    for cell in notebook.cells:
        if cell.cell_type == "markdown" and cell.source.startswith("# "):
            return cell.source.splitlines()[0][2:].strip()
    return "notebook"


def export_all(exporter: HTMLExporter, folder: Path, suffix: str) -> list[tuple[str, str]]:
    """Convert every notebook into folder/<stem><suffix>; return (stem, title) for each."""
    folder.mkdir(parents=True, exist_ok=True)
    converted = []
    for path in notebooks():
        notebook = nbformat.read(path, as_version=4)
        body, _ = exporter.from_notebook_node(notebook, resources={"metadata": {"name": title(notebook)}})
        (folder / f"{path.stem}{suffix}").write_text(_link_html(body, suffix))
        converted.append((path.stem, title(notebook)))
    return converted


def build_site(site: Path) -> None:
    copy_assets(site)
    rows = []
    for stem, name in export_all(_offline(HTMLExporter(template_name="lab"), "../_static"), site / "notebooks", ".html"):
        deck = site / "slides" / f"{stem}.slides.html"
        slides = f'<a href="slides/{stem}.slides.html">slides</a>' if deck.exists() else ""
        rows.append(f'<tr><td><a href="notebooks/{stem}.html">{html.escape(name)}</a></td><td>{slides}</td></tr>')
    (site / "index.html").write_text(INDEX.format(rows="\n".join(rows)))


def build_slides(site: Path) -> None:
    copy_assets(site)
    exporter = _offline(SlidesExporter(template_name="posenc_slides", extra_template_basedirs=[str(TEMPLATES)]),
                        "../_static")
    exporter.reveal_url_prefix = "../_static/reveal.js"
    exporter.reveal_theme = "white"  # its fonts ship with reveal.js; "simple" fetches them from Google
    export_all(exporter, site / "slides", ".slides.html")


INDEX = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>posenc: from a sentence to the matrix attention reads</title>
<style>
body {{ font-family: system-ui, sans-serif; max-width: 52rem; margin: 2rem auto; padding: 0 1rem; color: #222; }}
table {{ border-collapse: collapse; width: 100%; }} td {{ padding: 0.4rem 0.6rem; border-bottom: 1px solid #ddd; }}
img {{ max-width: 100%; }}
</style>
</head>
<body>
<h1>posenc</h1>
<p>From a sentence to the matrix a Transformer's attention reads, with the sinusoidal positional encoding at its centre.
These pages are the notebooks as stored, widgets at their saved state; run them live with <code>make lab</code>.</p>
<p><img src="images/pipeline.png" alt="The input pipeline: sentence, padding, one-hot, X = one_hot @ W_E, X + PE, then Q, K, V."></p>
<table>
{rows}
</table>
</body>
</html>
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["site", "slides"])
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "site")
    args = parser.parse_args()
    start = time.perf_counter()
    (build_site if args.what == "site" else build_slides)(args.out)
    print(f"{args.what}: {args.out} in {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
