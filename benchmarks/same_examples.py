"""Does `make check` test the same examples every time? Run it N times on one commit and compare what was drawn.

The contract test (tests/test_contract.py) writes, per xdist worker, a digest of every argument each public callable
was called with (test-artifacts/contract_calls_<worker>.json). Merged over the workers, the digests of two runs must be
equal, whichever worker ran which callable. Usage: `python benchmarks/same_examples.py [--runs 3]`; the result goes to
benchmarks/results/same_examples.json and the exit status is 1 if any run drew other examples.
"""

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"


def one_run() -> dict:
    for stale in ARTIFACTS.glob("contract_calls_*.json"):
        stale.unlink()
    start = time.perf_counter()
    finished = subprocess.run(["make", "check"], cwd=ROOT, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if finished.returncode != 0:
        sys.exit(f"make check failed:\n{finished.stdout[-3000:]}{finished.stderr[-3000:]}")
    drawn, workers = {}, {}
    for path in sorted(ARTIFACTS.glob("contract_calls_*.json")):
        record = json.loads(path.read_text())
        drawn.update(record["drawn"])
        workers[path.stem.removeprefix("contract_calls_")] = len(record["drawn"])
    return {"seconds": round(seconds, 1), "callables": len(drawn), "callables_per_worker": workers, "drawn": drawn}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    runs = [one_run() for _ in range(parser.parse_args().runs)]
    first = runs[0]["drawn"]
    differing = sorted({name for run in runs[1:] for name in set(first) | set(run["drawn"])
                        if run["drawn"].get(name) != first.get(name)})
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    result = {"commit": commit.stdout.strip(), "runs": [{k: v for k, v in run.items() if k != "drawn"} for run in runs],
              "callables": len(first), "callables_with_other_examples": differing}
    out = ROOT / "benchmarks" / "results" / "same_examples.json"
    out.write_text(json.dumps(result, indent=1) + "\n")
    for k, run in enumerate(result["runs"], 1):
        print(f"run {k}: {run['seconds']} s, {run['callables']} callables, per worker {run['callables_per_worker']}")
    print(f"callables whose examples differ between runs: {differing or 'none'}")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
