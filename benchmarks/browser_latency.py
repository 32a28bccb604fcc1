"""Key press to picture on screen, in a real JupyterLab in headless Chromium.

Run with `make bench`. Opens notebooks/08_explore.ipynb (on a temporary copy),
runs it, and for each explorer presses an arrow key on a slider, timing in the page
from the keydown event to the moment the new picture has been decoded and the next
frame painted. Presses are spaced so that each one is a fresh change (not folded
into the previous one by the explorers' debounce).

Writes benchmarks/results/browser_latency.json with the median and 90th percentile.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # the browser comes from the tests' support
import lab_browser  # noqa: E402

# Resolves with the milliseconds from the next keydown on the handle to the new picture on screen.
ARM_JS = """([selector, index, label]) => {
    const root = document.querySelectorAll(selector)[index];
    const img = root.querySelector('img');
    const slider = Array.from(root.querySelectorAll('.widget-slider'))
        .find(s => s.querySelector('.widget-label').textContent.trim() === label);
    const handle = slider.querySelector('.noUi-handle');
    handle.focus();
    window.__latency = new Promise(resolve => {
        let start = null;
        const old = img.src;
        handle.addEventListener('keydown', () => { start = performance.now(); }, {once: true, capture: true});
        const observer = new MutationObserver(() => {
            if (img.src === old || start === null) return;
            observer.disconnect();
            img.decode().then(() => requestAnimationFrame(() => resolve(performance.now() - start)));
        });
        observer.observe(img, {attributes: true, attributeFilter: ['src']});
    });
}"""

CASES = [
    # (name, explorer output index, slider label, what the change costs the kernel)
    ("encoding explorer, heatmap, position", 0, "position", "blit: moving artists only"),
    ("encoding explorer, heatmap, d_model", 0, "d_model", "new table, full draw"),
    ("pipeline explorer, d_model", 1, "d_model", "new X and PE, full draw"),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=30)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "browser_latency.json")
    args = parser.parse_args()

    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        with lab_browser.running_lab(workdir) as lab, lab_browser.chromium(workdir) as browser:
            page = lab_browser.open_notebook(browser, lab, "08_explore.ipynb")
            lab_browser.run_all(page)
            # The notebook leaves the encoding explorer on "wavelengths"; measure the heatmap.
            page.locator(lab_browser.WIDGET_OUTPUT).nth(0).get_by_role("button", name="heatmap").click()
            for name, index, label, cost in CASES:
                samples = []
                for press in range(args.presses + 2):
                    page.evaluate(ARM_JS, [lab_browser.WIDGET_OUTPUT, index, label])
                    page.keyboard.press("ArrowRight" if press % 2 == 0 else "ArrowLeft")
                    elapsed = page.evaluate("window.__latency")
                    if press >= 2:  # the first presses warm up the kernel and the browser
                        samples.append(elapsed)
                    page.wait_for_timeout(150)  # longer than the debounce interval: each press is fresh
                samples.sort()
                results[name] = {"median_ms": statistics.median(samples), "p90_ms": samples[int(0.9 * len(samples))],
                                 "presses": len(samples), "kernel_work": cost}
                print(f"{name:<40} median {results[name]['median_ms']:6.1f} ms   p90 {results[name]['p90_ms']:6.1f} ms",
                      flush=True)
    report = {"what": "keydown on a slider handle to the new picture decoded and painted, JupyterLab in headless "
                      "Chromium, server, kernel and browser on this machine", "target_median_ms": 150, "cases": results}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
