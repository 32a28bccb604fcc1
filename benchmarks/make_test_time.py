"""How long `make test` takes from a fresh clone, and where the time goes.

Run with `.venv/bin/python benchmarks/make_test_time.py` (about 10 minutes a run; `--runs 2` for two,
`--ci` with CI=1 set, as in CI, which then runs `make test-setup` too, not timed here; `--warm-caches` keeps
this machine's download caches). Each run clones the repository's HEAD (committed work only) into a new temporary
folder and runs `make test` there, with pytest's `--durations=0`. By default the downloads start
cold, as on a fresh machine: uv, pip, npm and matplotlib get empty cache folders.

Recorded for each run:
- seconds in all, of the setup (until make starts ruff) and of pytest, and the tests that passed;
- the busy CPU-seconds of the whole machine during the run, and the share of its time it was busy
  (Linux: /proc/stat; None elsewhere), and the CPU-seconds of make test's own processes (what other work on the
  machine does not add to);
- the machine's speed that day: the seconds a fixed one-thread workload takes in this process, just
  before and just after the run. This machine's speed varies from day to day (the same `make test`
  has taken 509 and 696 busy CPU-seconds on two days), so compare runs through it;
- the parts: the seconds of each part's tests, summed (`parts`). Tests run on several workers at once,
  so these add up to more than pytest's wall time; they say which part costs what.

Writes benchmarks/results/make_test.json (with --ci, make_test_ci.json). No timestamps, no paths.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
# Where the notebooks' second run, their learner's edition under the oldest CPU, is collected from (tests/notebook_runs.py).
OLDEST_CPU = "build/learners-edition/notebooks/"
# The notebooks that train models live (their training cells are most of their time).
TRAINING_NOTEBOOKS = ("14_does_position_matter", "16_stretching_context")
DURATION = re.compile(r"^(\d+\.\d+)s (setup|call|teardown)\s+(\S.*)$")
SUMMARY = re.compile(r"=+ (.*) in (\d+\.\d+)s")


def reference_seconds(rounds: int = 3) -> float:
    """The median seconds of a fixed one-thread workload: Python bytecode and small float32 matrix products."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        a = torch.randn(256, 256, generator=torch.Generator().manual_seed(0))
        times = []
        for _ in range(rounds):
            start = time.perf_counter()
            total = 0
            for k in range(8_000_000):
                total += k * k
            for _ in range(2_000):
                a = torch.tanh(a @ a / 16)
            times.append(time.perf_counter() - start)
        return statistics.median(times)
    finally:
        torch.set_num_threads(threads)


def own_cpu_seconds() -> float:
    """CPU-seconds of this process's finished children and theirs (make test's own work, whatever else the machine
    runs at the same time)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def busy_and_idle() -> tuple[float, float] | None:
    """CPU-seconds the machine has been busy and idle since it started (Linux), or None."""
    try:
        fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    except (OSError, ValueError, IndexError):
        return None
    ticks = os.sysconf("SC_CLK_TCK")
    user, nice, system, idle, iowait, irq, softirq = fields[:7]
    return (user + nice + system + irq + softirq) / ticks, (idle + iowait) / ticks


def node_id(text: str) -> str:
    """A test's node id from a durations line, without the "@group" that xdist's groups add."""
    at = text.rfind("@")
    return text[:at] if at > 0 and "]" not in text[at:] and "::" not in text[at:] else text


def part_of(node: str, quick: set[str]) -> str:
    """The part of the suite a test belongs to; `quick` holds the node ids of `make check`'s tests."""
    if node.startswith(("notebooks/", OLDEST_CPU)):
        setting = "oldest_cpu" if node.startswith(OLDEST_CPU) else "this machine's setting"
        training = any(name in node for name in TRAINING_NOTEBOOKS)
        return f"nbval, {setting}, " + ("notebooks 14 and 16" if training else "the other notebooks")
    if node in quick:
        return "unit, property and contract tests (make check's)"
    if node.startswith("tests/test_site.py::"):
        return "site and slides in Chromium, with axe"
    if node.startswith("tests/test_browser.py::"):
        return "JupyterLab in Chromium"
    return "other slow tests (servers, kernels, fresh environments)"


def parts(log: str, quick: set[str]) -> dict[str, float]:
    """Summed seconds (setup, call and teardown) of each part's tests, from pytest's --durations=0 lines."""
    seconds: dict[str, float] = {}
    for line in log.splitlines():
        match = DURATION.match(line.strip())
        if match:
            part = part_of(node_id(match.group(3)), quick)
            seconds[part] = seconds.get(part, 0.0) + float(match.group(1))
    return {part: round(s, 1) for part, s in sorted(seconds.items(), key=lambda item: -item[1])}


def one_run(*, ci: bool, cold_caches: bool) -> dict:
    with tempfile.TemporaryDirectory(prefix="posenc-make-test-") as folder:
        clone = Path(folder) / "posenc"
        subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
        env = {key: value for key, value in os.environ.items() if key not in ("CI", "VIRTUAL_ENV")}
        if ci:
            env["CI"] = "1"
        if cold_caches:
            for variable in ("UV_CACHE_DIR", "PIP_CACHE_DIR", "npm_config_cache", "MPLCONFIGDIR"):
                env[variable] = str(Path(folder) / "caches" / variable.lower())
        before = reference_seconds()
        cpu_before = busy_and_idle()
        own_before = own_cpu_seconds()
        start = time.perf_counter()
        process = subprocess.Popen(["make", "test", "PYTEST_EXTRA=--durations=0"], cwd=clone, env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        lines, setup = [], None
        for line in process.stdout:
            lines.append(line)
            if setup is None and line.startswith(".venv/bin/ruff check"):
                setup = time.perf_counter() - start
        returncode = process.wait()
        total = time.perf_counter() - start
        cpu_after = busy_and_idle()
        own = own_cpu_seconds() - own_before
        after = reference_seconds()
        log = "".join(lines)
        # The whole log, with every test's duration, for a look (build/ is not committed).
        (ROOT / "build").mkdir(exist_ok=True)
        (ROOT / "build" / "make_test_time.log").write_text(log)
        if returncode:
            sys.stdout.write(log[-5000:])
            raise SystemExit(f"make test failed (exit {returncode}) in the fresh clone: nothing recorded")
        quick = subprocess.run([str(clone / ".venv" / "bin" / "python"), "-m", "pytest", "--collect-only", "-q",
                                "-m", "not slow", "tests"], cwd=clone, env=env, capture_output=True, text=True)
        quick_ids = {line for line in quick.stdout.splitlines() if "::" in line}
    summary = [SUMMARY.search(line) for line in lines if SUMMARY.search(line)][-1]
    run = {"seconds": round(total, 1), "setup_seconds": round(setup, 1), "pytest_seconds": float(summary.group(2)),
           "tests": summary.group(1), "reference_seconds_before": round(before, 3),
           "reference_seconds_after": round(after, 3)}
    run["make_test_cpu_seconds"] = round(own, 1)
    if cpu_before and cpu_after:
        busy, idle = cpu_after[0] - cpu_before[0], cpu_after[1] - cpu_before[1]
        run["busy_cpu_seconds"], run["busy_share"] = round(busy, 1), round(busy / (busy + idle), 3)
    run["parts"] = parts(log, quick_ids)
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1, help="fresh clones to run make test in, one after the other")
    parser.add_argument("--ci", action="store_true", help="with CI=1 set, as CI runs it")
    parser.add_argument("--warm-caches", action="store_true", help="keep this machine's uv, pip, npm and "
                                                                    "matplotlib caches")
    args = parser.parse_args()
    runs = []
    for k in range(args.runs):
        runs.append(one_run(ci=args.ci, cold_caches=not args.warm_caches))
        print(f"run {k + 1}: {json.dumps(runs[-1], indent=1)}", flush=True)
    result = {"machine": {"python": platform.python_version(), "processor": platform.machine(),
                          "cpus": os.cpu_count()},
              "ci": args.ci, "cold_caches": not args.warm_caches,
              "median_seconds": round(statistics.median(run["seconds"] for run in runs), 1), "runs": runs}
    output = RESULTS / ("make_test_ci.json" if args.ci else "make_test.json")
    output.write_text(json.dumps(result, indent=2) + "\n")
    print(f"median {result['median_seconds']} s over {len(runs)} run(s); written to {output.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
