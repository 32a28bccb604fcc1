"""Key press to repainted picture, for every control of the encoding, pipeline and scheme explorers, in headless Chromium.

Run with `make bench`. The explorers are anywidgets that compute and draw in the page, so the same module is measured
in two places:

    site      the site's pages of notebooks/08_explore.ipynb (encoding, pipeline) and 13_position_schemes.ipynb
              (scheme) (tools/build_site.py, those notebooks only): the saved explorers rendered by the vendored
              widget renderer, no kernel
    lab       the same notebooks in a real JupyterLab (tools/lab_browser.py, a temporary copy), after Run All

For each case it focuses one control and presses a key (arrows on sliders and view buttons, Space on the checkbox, a
letter in the sentence), timing in the page from the keydown event to the first animation frame after the explorer
repainted its canvas, and the repaint itself (compute and draw). It also counts the lines of explorer code before
(the matplotlib explorers and the site's JavaScript twin, at the commit given) and now, and the scheme explorer's
alone before it became an anywidget (its matplotlib file and the redraw engine, at --scheme-before).

Writes benchmarks/results/explorer_latency.json: medians and 90th percentiles; the target is a median of at most
16 ms for every control and at most 50 ms for switching views.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # the browser helpers the tests use
import lab_browser  # noqa: E402
from test_page_explorers import ARM_JS, open_page, served, site_page  # noqa: E402

ENCODING, PIPELINE, SCHEME = ".posenc-encoding-explorer", ".posenc-pipeline-explorer", ".posenc-scheme-explorer"
START = {"max_sequence_length": 64, "d_model": 128, "base": 4, "position": 10, "dimension": 20}
# The scheme explorer's start (checkbox: causal), and each view's controls.
SCHEME_START = {"query_position": 100, "base": 4, "num_heads": 8, "head": 3, "max_sequence_length": 16, "position": 5,
                "checkbox": 1}
SCHEME_CONTROLS = {"rotary": ["query_position", "base"], "alibi": ["num_heads", "head", "max_sequence_length"],
                   "learned": ["position"]}
# (name, explorer, view, control (a CSS selector inside the explorer), key, settings to start from)
CASES = [
    *[(f"encoding, heatmap, {name}", ENCODING, "heatmap", f"input[name={name}]", "Arrow", {}) for name in START],
    ("encoding, heatmap and concatenated layout, base", ENCODING, "heatmap", "input[name=base]", "Arrow", {"checkbox": 1}),
    ("encoding, heatmap, checkbox: concatenated layout", ENCODING, "heatmap", "input[type=checkbox]", "Space", {}),
    ("encoding, heatmap 256 x 256, d_model", ENCODING, "heatmap", "input[name=d_model]", "Arrow",
     {"max_sequence_length": 256, "d_model": 255}),
    ("encoding, curves, dimension", ENCODING, "curves", "input[name=dimension]", "Arrow", {}),
    ("encoding, curves, position", ENCODING, "curves", "input[name=position]", "Arrow", {}),
    ("encoding, wavelengths, base", ENCODING, "wavelengths", "input[name=base]", "Arrow", {}),
    ("encoding, similarity, position", ENCODING, "similarity", "input[name=position]", "Arrow", {}),
    ("encoding, similarity, d_model", ENCODING, "similarity", "input[name=d_model]", "Arrow", {}),
    ("encoding, similarity 256 x 256, d_model", ENCODING, "similarity", "input[name=d_model]", "Arrow",
     {"max_sequence_length": 256, "d_model": 255}),
    ("encoding, switching views (arrow on the view buttons)", ENCODING, "curves", "input[type=radio]:checked", "Arrow", {}),
    ("pipeline, max_sequence_length", PIPELINE, None, "input[name=max_sequence_length]", "Arrow", {}),
    ("pipeline, d_model", PIPELINE, None, "input[name=d_model]", "Arrow", {}),
    ("pipeline, typing in the sentence", PIPELINE, None, "input[name=sentence]", "Type", {}),
    *[(f"scheme, {view}, {name}", SCHEME, view, f"input[name={name}]", "Arrow", {})
      for view, names in SCHEME_CONTROLS.items() for name in names],
    ("scheme, alibi 16 heads x 64 positions, head", SCHEME, "alibi", "input[name=head]", "Arrow",
     {"num_heads": 16, "max_sequence_length": 64}),
    ("scheme, rotary at query position 1000, base", SCHEME, "rotary", "input[name=base]", "Arrow", {"query_position": 999}),
    ("scheme, alibi, checkbox: causal", SCHEME, "alibi", "input[type=checkbox]", "Space", {}),
    ("scheme, switching views (arrow on the view buttons)", SCHEME, "alibi", "input[type=radio]:checked", "Arrow", {}),
]
PAGES = {"08_explore": (ENCODING, PIPELINE), "13_position_schemes": (SCHEME,)}  # which explorers each notebook shows

PREPARE_JS = """([root, view, settings]) => {
    const explorer = document.querySelector(root);
    const set = (name, value) => {
        const input = explorer.querySelector(`input[name=${name}]`);
        input.value = value;
        input.dispatchEvent(new Event('input', {bubbles: true}));
    };
    if (view) explorer.querySelector(`input[value=${view}]`).click();
    const box = explorer.querySelector('input[type=checkbox]');
    if (box && box.checked !== Boolean(settings.checkbox)) box.click();
    for (const [name, value] of Object.entries(settings)) if (name !== 'checkbox') set(name, value);
    explorer.scrollIntoView({block: 'start'});
}"""



def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure(page, presses: int, explorers: tuple[str, ...], *, warm_up: int = 2) -> dict:
    results = {}
    for name, root, view, control, key, settings in CASES:
        if root not in explorers:
            continue
        start = {ENCODING: {**START, **settings}, SCHEME: {**SCHEME_START, **settings},
                 PIPELINE: {"max_sequence_length": 10, "d_model": 6}}[root]
        page.evaluate(PREPARE_JS, [root, view, start])
        if root == PIPELINE:
            page.locator(f"{PIPELINE} input[name=sentence]").fill("my name is")
        samples = []
        for press in range(presses + warm_up):
            page.evaluate(ARM_JS, [root, control])
            if key == "Arrow":
                page.keyboard.press("ArrowRight" if press % 2 == 0 else "ArrowLeft")
            elif key == "Space":
                page.keyboard.press("Space")
            else:  # a letter, then (next press) Backspace: the sentence stays short
                page.keyboard.press("x" if press % 2 == 0 else "Backspace")
            sample = page.evaluate("window.__latency")
            if press >= warm_up:
                samples.append(sample)
        totals, paints = [s["total"] for s in samples], [s["paint"] for s in samples]
        results[name] = {"median_ms": round(statistics.median(totals), 2), "p90_ms": round(percentile(totals, 0.9), 2),
                         "repaint_median_ms": round(statistics.median(paints), 2), "presses": len(samples)}
        print(f"  {name:<55} median {results[name]['median_ms']:5.1f} ms  p90 {results[name]['p90_ms']:5.1f} ms  "
              f"(repaint {results[name]['repaint_median_ms']:4.1f} ms)", flush=True)
    return results


EXPLORERS = "src/posenc/explorers/"
BEFORE_FILES = [EXPLORERS + f for f in ("encoding_explorer.py", "pipeline_explorer.py", "scheme_explorer.py", "engine.py")] + [
    "tools/web/explorer/explorer.js", "tools/web/explorer/embed.py", "tools/web/explorer/page.py",
    "tools/web/explorer/explorer.css"]
AFTER_FILES = [EXPLORERS + f for f in ("encoding_explorer.py", "encoding_explorer.js", "pipeline_explorer.py",
                                       "pipeline_explorer.js", "scheme_explorer.py", "scheme_explorer.js",
                                       "explorer_common.js", "_front_end.py")]
# The scheme explorer alone: its matplotlib file and the redraw engine only it still used, then its anywidget.
SCHEME_BEFORE = [EXPLORERS + "scheme_explorer.py", EXPLORERS + "engine.py"]
SCHEME_AFTER = [EXPLORERS + "scheme_explorer.py", EXPLORERS + "scheme_explorer.js"]


def lines_of_code(before: str, before_files: list[str], after_files: list[str]) -> dict:
    """Lines of explorer code (Python, JavaScript, glue; tests aside) at commit `before` and now."""
    def count(text: str) -> int:
        return len(text.splitlines())

    was = {f: count(subprocess.run(["git", "show", f"{before}:{f}"], cwd=ROOT, capture_output=True, text=True,
                                   check=True).stdout) for f in before_files}
    now = {f: count((ROOT / f).read_text()) for f in after_files}
    return {"before_commit": before, "before": was, "before_total": sum(was.values()), "after": now,
            "after_total": sum(now.values()), "ratio": round(sum(now.values()) / sum(was.values()), 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=30)
    parser.add_argument("--before", default="c55f55a", help="the commit before the explorers became anywidgets")
    parser.add_argument("--scheme-before", default="0a4bc89", help="the commit before the scheme explorer became one")
    parser.add_argument("--no-lab", action="store_true", help="measure the site page only")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "explorer_latency.json")
    args = parser.parse_args()

    report = {"what": "keydown on a control to the first animation frame after the explorer repainted its canvas, "
                      "headless Chromium at 1280 x 720; repaint = computing and drawing in the page",
              "target_median_ms": 16, "target_switching_views_ms": 50,
              "lines": lines_of_code(args.before, BEFORE_FILES, AFTER_FILES),
              "scheme_lines": lines_of_code(args.scheme_before, SCHEME_BEFORE, SCHEME_AFTER)}
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        for stem in PAGES:
            site_page(workdir / "site", stem)
        ready = {stem: " && ".join(f"document.querySelector('{root} canvas')" for root in roots)
                 for stem, roots in PAGES.items()}
        print("site pages (no kernel):", flush=True)
        with served(workdir / "site") as base, lab_browser.chromium(workdir / "site-browser") as browser:
            report["site"] = {}
            for stem, roots in PAGES.items():
                page = open_page(browser, base, f"notebooks/{stem}.html", ready=ready[stem])
                report["site"].update(measure(page, args.presses, roots))
        if not args.no_lab:
            print("JupyterLab:", flush=True)
            with lab_browser.running_lab(workdir / "lab") as lab, lab_browser.chromium(workdir / "lab") as browser:
                report["lab"] = {}
                for stem, roots in PAGES.items():
                    page = lab_browser.open_notebook(browser, lab, f"{stem}.ipynb")
                    page.set_viewport_size({"width": 1280, "height": 720})
                    lab_browser.run_all(page)
                    page.wait_for_function(ready[stem])
                    report["lab"].update(measure(page, args.presses, roots))
                    page.close()
    report["machine"] = f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end"
    worst = max(v["median_ms"] for place in ("site", "lab") if place in report for v in report[place].values())
    report["worst_median_ms"] = worst
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"worst median {worst} ms; lines {report['lines']['before_total']} -> {report['lines']['after_total']}, "
          f"the scheme explorer's {report['scheme_lines']['before_total']} -> {report['scheme_lines']['after_total']}; "
          f"wrote {args.out}")


if __name__ == "__main__":
    main()
