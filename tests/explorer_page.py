"""One site page with its explorers made live, built apart from the site: for the explorer's test and benchmark.

    path = build_page(out_dir)            # out_dir/notebooks/08_explore.html (and out_dir/_static)

tools/build_site.py builds the whole site; this builds the page of one notebook with it and passes the page
through `live_explorers` (a no-op when the site build has already done so).
"""

from __future__ import annotations

import sys
from pathlib import Path

from tools import build_site
from tools.web.explorer.embed import live_explorers

ROOT = Path(__file__).resolve().parent.parent

# Arms one measurement: resolves with {total, paint} in ms, total from the next keydown on slider `name` to the first
# animation frame after the explorer repainted (the frame that shows the new picture), paint the repaint itself.
# The same measure as benchmarks/browser_latency.py uses for the kernel-bound explorer in JupyterLab.
ARM_JS = """(name) => {
    const explorer = window.posencExplorer.explorer;
    const input = explorer.sliders[name].input;
    input.focus();
    window.__latency = new Promise(resolve => {
        let start = null;
        input.addEventListener('keydown', () => { start = performance.now(); }, {once: true, capture: true});
        const painted = event => {
            if (start === null) return;
            explorer.root.removeEventListener('posenc:painted', painted);
            const paint = event.detail.ms;
            requestAnimationFrame(() => resolve({total: performance.now() - start, paint}));
        };
        explorer.root.addEventListener('posenc:painted', painted);
    });
}"""


def press_and_time(page, name: str, presses: int, *, warm_up: int = 2) -> list[dict]:
    """Press ArrowRight and ArrowLeft in turn on slider `name` and time each; the first `warm_up` presses are dropped."""
    samples = []
    for press in range(presses + warm_up):
        page.evaluate(ARM_JS, name)
        page.keyboard.press("ArrowRight" if press % 2 == 0 else "ArrowLeft")
        sample = page.evaluate("window.__latency")
        if press >= warm_up:
            samples.append(sample)
    return samples


def build_page(out: Path, stem: str = "08_explore") -> Path:
    """Build the site page of notebook `stem` into out/notebooks/ (assets into out/_static) and make it live."""
    every = build_site.notebooks
    build_site.notebooks = lambda: [ROOT / "notebooks" / f"{stem}.ipynb"]
    try:
        build_site.build_site(out)
    finally:
        build_site.notebooks = every
    path = out / "notebooks" / f"{stem}.html"
    path.write_text(live_explorers(path.read_text(), stem))
    return path


if __name__ == "__main__":
    print(build_page(Path(sys.argv[1]), *sys.argv[2:]))
