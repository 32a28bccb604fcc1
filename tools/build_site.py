"""Build the classroom outputs, offline: `make site` and `make slides`.

    python tools/build_site.py site     build/site/index.html and build/site/notebooks/*.html
    python tools/build_site.py slides   build/site/slides/*.slides.html (reveal.js)

The stored notebooks are converted as they are (no re-execution), widgets at their
saved state, each exercise's solution behind a closed "Show the solution" toggle
(templates in tools/web/templates). Every page leads to the previous and next notebook and to all of them,
gives its time (from the start page's route; the goal opens the notebook), and links to its
.ipynb, its slides, and Binder and Colab, built from the repository address in
pyproject.toml. Pages and decks carry the style and script that make them pass an
axe-core audit (contrast of prompts and comments, underlined links, named sliders).

Every script and style sheet a page loads (reveal.js, MathJax,
require.js, jQuery, the Jupyter widgets renderer) is copied from tools/web/node_modules,
installed by npm from tools/web/package-lock.json, into build/site/_static: no page
asks a CDN for anything.
"""

from __future__ import annotations

import argparse
import html
import re
import shutil
import time
from pathlib import Path

import nbformat
from nbconvert import HTMLExporter, SlidesExporter

from install_cell import repository
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


def goal(notebook: nbformat.NotebookNode) -> str:
    """The notebook's goal, the paragraph of its first cell that starts with **Goal, as HTML."""
    for paragraph in notebook.cells[0].source.split("\n\n"):
        if paragraph.startswith("**Goal"):
            text = re.sub(r"^\*\*Goal[^*]*\*\*\s*", "", paragraph.replace("\n", " "))
            text = re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text))
            text = re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", text)
            return re.sub(r"\*([^*]+)\*", r"<em>\1</em>", text)
    return ""


def route_times() -> dict[str, str]:
    """stem -> "15 min", from the route tables of the start page (the one place the times are written)."""
    start = (ROOT / "notebooks" / "00_start_here.ipynb").read_text()
    return dict(re.findall(r"\]\(([0-9A-Za-z_]+)\.ipynb\) \|[^|]*\| (\d+ min) \|", start))


def pages() -> list[dict]:
    times = route_times()
    found = []
    for path in notebooks():
        notebook = nbformat.read(path, as_version=4)
        found.append({"stem": path.stem, "title": title(notebook), "goal": goal(notebook),
                      "time": times.get(path.stem, "5 min"), "notebook": notebook})
    return found


def launch_links(stem: str) -> str:
    """Binder and Colab for one notebook, from the repository address in pyproject.toml."""
    owner_repo = repository().removeprefix("https://github.com/").strip("/")
    binder = f"https://mybinder.org/v2/gh/{owner_repo}/HEAD?urlpath=lab/tree/notebooks/{stem}.ipynb"
    colab = f"https://colab.research.google.com/github/{owner_repo}/blob/main/notebooks/{stem}.ipynb"
    return f'<a href="{binder}">launch on Binder</a> · <a href="{colab}">open in Colab</a>'


def navigation(all_pages: list[dict], k: int) -> tuple[str, str]:
    """The header and footer of page k: where it is in the suite, its time, and the ways out."""
    here = all_pages[k]
    previous = all_pages[k - 1] if k else None
    following = all_pages[k + 1] if k + 1 < len(all_pages) else None
    steps = " · ".join(filter(None, [
        previous and f'<a href="{previous["stem"]}.html" rel="prev">← {html.escape(previous["title"])}</a>',
        '<a href="../index.html">all notebooks</a>',
        following and f'<a href="{following["stem"]}.html" rel="next">{html.escape(following["title"])} →</a>']))
    contents = "".join(f'<li>{"<strong>" if p is here else ""}<a href="{p["stem"]}.html">{html.escape(p["title"])}</a>'
                       f'{"</strong>" if p is here else ""} ({p["time"]})</li>' for p in all_pages)
    header = (f'<nav class="posenc-nav" aria-label="the suite"><p>{steps}</p>'
              # The goal itself opens the notebook, just below.
              f'<p class="posenc-time">Notebook {k} of {len(all_pages) - 1}, about {here["time"]}.</p>'
              f'<p><a href="{here["stem"]}.ipynb" download>download the notebook (.ipynb)</a> · '
              f'<a href="../slides/{here["stem"]}.slides.html">slides</a> · {launch_links(here["stem"])}</p>'
              f'<details><summary>Contents of the suite</summary><ol start="0">{contents}</ol></details></nav>')
    footer = f'<nav class="posenc-nav" aria-label="previous and next"><p>{steps}</p></nav>'
    return header, footer


# Style and script every page and deck gets, for an axe-core audit without serious or critical findings:
# darker prompts and comments (JupyterLab's light greys fail WCAG AA contrast on white), links in text
# underlined (not told apart by colour alone), the widget renderer's slider handles named after their labels, and
# each widget picture described by its explorer's caption (ipywidgets' Image has no alt text; its tooltip breaks
# the static widget renderer).
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
.posenc-nav { font-family: system-ui, sans-serif; max-width: 70rem; margin: 0.8rem auto; padding: 0.6rem 1rem;
  background: #f4f7fb; border: 1px solid #c8d6e5; border-radius: 6px; font-size: 0.95rem; color: #1b1b1b; }
.posenc-nav p { margin: 0.3rem 0; } .posenc-nav a { color: #0b4f8a; }
.posenc-solution { margin: 0.4rem 0; } .posenc-solution > summary { cursor: pointer; color: #0b4f8a; font-weight: 600;
  font-family: system-ui, sans-serif; padding: 0.2rem 0; }
.reveal .posenc-solution > summary { font-size: 0.6em; }
</style>
<script>
window.addEventListener("load", () => {
  const name = () => document.querySelectorAll(".widget-slider").forEach(slider => {
    const label = slider.querySelector(".widget-label");
    slider.querySelectorAll("[role=slider]").forEach(handle => {
      if (!handle.getAttribute("aria-label")) handle.setAttribute("aria-label", label ? label.textContent : "slider");
    });
  });
  // A widget's picture gets, as alt text, the caption its explorer writes beside it (the text of the explorer).
  const describe = () => document.querySelectorAll(".widget-image:not([alt])").forEach(image => {
    const explorer = image.closest(".widget-vbox");
    const caption = explorer
      ? Array.from(explorer.querySelectorAll(".widget-html")).map(n => n.innerText.trim()).join(" ") : "";
    image.setAttribute("alt", caption || "Picture drawn by the explorer at its saved state");
  });
  const both = () => { name(); describe(); };
  both();
  new MutationObserver(both).observe(document.body, {childList: true, subtree: true});
});
</script>
"""


def _with(body: str, *, head: str = "", top: str = "", bottom: str = "") -> str:
    body = body.replace("</head>", head + "</head>", 1)
    body = re.sub(r"(<body[^>]*>)", lambda m: m.group(1) + top, body, count=1)
    return body.replace("</body>", bottom + "</body>", 1)


def export_all(exporter: HTMLExporter, folder: Path, suffix: str, *, with_navigation: bool) -> list[dict]:
    """Convert every notebook into folder/<stem><suffix>; return the pages."""
    folder.mkdir(parents=True, exist_ok=True)
    all_pages = pages()
    for k, page in enumerate(all_pages):
        body, _ = exporter.from_notebook_node(page["notebook"], resources={"metadata": {"name": page["title"]}})
        header, footer = navigation(all_pages, k) if with_navigation else ("", "")
        body = _with(_link_html(body, suffix), head=ACCESSIBILITY, top=header, bottom=footer)
        (folder / f"{page['stem']}{suffix}").write_text(body)
        if with_navigation:  # the download link's target
            shutil.copy2(ROOT / "notebooks" / f"{page['stem']}.ipynb", folder / f"{page['stem']}.ipynb")
    return all_pages


def build_site(site: Path) -> None:
    copy_assets(site)
    rows = []
    exporter = _offline(HTMLExporter(template_name="posenc_lab", extra_template_basedirs=[str(TEMPLATES)]),
                        "../_static")
    for page in export_all(exporter, site / "notebooks", ".html", with_navigation=True):
        stem = page["stem"]
        rows.append(f'<tr><td><a href="notebooks/{stem}.html">{html.escape(page["title"])}</a></td>'
                    f'<td>{page["goal"]}</td>'
                    f'<td>{page["time"]}</td><td><a href="slides/{stem}.slides.html">slides</a></td>'
                    f'<td>{launch_links(stem)}</td></tr>')
    (site / "index.html").write_text(INDEX.format(rows="\n".join(rows), repository=html.escape(repository())))


def build_slides(site: Path) -> None:
    copy_assets(site)
    exporter = _offline(SlidesExporter(template_name="posenc_slides", extra_template_basedirs=[str(TEMPLATES)]),
                        "../_static")
    exporter.reveal_url_prefix = "../_static/reveal.js"
    exporter.reveal_theme = "white"  # its fonts ship with reveal.js; "simple" fetches them from Google
    export_all(exporter, site / "slides", ".slides.html", with_navigation=False)


INDEX = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>posenc: from a sentence to the matrix attention reads</title>
<style>
body {{ font-family: system-ui, sans-serif; max-width: 70rem; margin: 2rem auto; padding: 0 1rem; color: #222; }}
table {{ border-collapse: collapse; width: 100%; }} td, th {{ padding: 0.4rem 0.6rem; border-bottom: 1px solid #ddd;
  text-align: left; vertical-align: top; }}
img {{ max-width: 100%; }} a {{ color: #0b4f8a; }}
</style>
</head>
<body>
<main>
<h1>posenc</h1>
<p>From a sentence to the matrix a Transformer's attention reads, with the sinusoidal positional encoding at its centre.
These pages are the notebooks as stored, widgets at their saved state; run them live with <code>make lab</code>, or
launch one on Binder or Colab (from <a href="{repository}">{repository}</a>).</p>
<p><img src="images/pipeline.png" alt="The input pipeline with the running example's sizes: a sentence padded to
10 tokens, one-hot rows (10, 11), X = one_hot @ W_E (10, 6), X + PE, the projections Q, K, V, and the attention
output (10, 6)."></p>
<table>
<thead><tr><th scope="col">notebook</th><th scope="col">goal</th><th scope="col">time</th><th scope="col">slides</th>
<th scope="col">launch</th></tr></thead>
<tbody>
{rows}
</tbody>
</table>
</main>
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
