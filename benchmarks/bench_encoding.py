"""Speed, precision and memory of sinusoidal-encoding builders, measured side by side.

Run with `make bench`. For each size, every implementation is timed in the same
process, interleaved round by round (so a noisy neighbour slows all of them alike),
and reported as a median and as ratios:

    posenc              posenc.sinusoidal_encoding (float64 small tables, complex rotation)
    stack_flatten       the source material's even/odd halves + torch.stack(dim=2) + flatten
    slice_assignment    pe[:, 0::2] = sin, pe[:, 1::2] = cos, as in the well-known annotated tutorial
    positional_encodings  the `positional-encodings` package's PositionalEncoding1D, cache cleared
    floor               allocate the output and fill it with a constant: no implementation can beat it

Precision is the max abs error over every entry against a float64 evaluation of the
formula. Peak extra memory is measured in a fresh subprocess per implementation, as
the peak resident memory beyond what was resident before, minus the output itself.

Writes benchmarks/results/encoding.json and images/benchmark_encoding.png.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
SIZES = [(10, 6), (512, 512), (2048, 768), (8192, 1024), (32768, 1024), (131072, 1024)]
MEMORY_SIZE = (131072, 1024)


# The implementations --------------------------------------------------------------


def posenc(length: int, d_model: int) -> torch.Tensor:
    from posenc.builder import sinusoidal_encoding

    return sinusoidal_encoding(max_sequence_length=length, d_model=d_model)


def stack_flatten(length: int, d_model: int) -> torch.Tensor:
    even_i = torch.arange(0, d_model, 2).float()
    denominator = torch.pow(10000, even_i / d_model)
    position = torch.arange(length, dtype=torch.float32).reshape(length, 1)
    stacked = torch.stack([torch.sin(position / denominator), torch.cos(position / denominator)], dim=2)
    return torch.flatten(stacked, start_dim=1, end_dim=2)


def slice_assignment(length: int, d_model: int) -> torch.Tensor:
    pe = torch.zeros(length, d_model)
    position = torch.arange(0, length, dtype=torch.float32).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe


_PE1D: dict[int, torch.nn.Module] = {}


def positional_encodings(length: int, d_model: int) -> torch.Tensor:
    from positional_encodings.torch_encodings import PositionalEncoding1D

    module = _PE1D.setdefault(d_model, PositionalEncoding1D(d_model))
    module.cached_penc = None  # measure the computation, not the cache
    return module(torch.empty(1, length, d_model))[0]


def floor(length: int, d_model: int) -> torch.Tensor:
    return torch.empty(length, d_model).fill_(0.5)


IMPLEMENTATIONS = {f.__name__: f for f in (posenc, stack_flatten, slice_assignment, positional_encodings, floor)}


# Measurements ---------------------------------------------------------------------


def reference_rows(start: int, stop: int, d_model: int) -> torch.Tensor:
    position = torch.arange(start, stop, dtype=torch.float64)[:, None]
    column = torch.arange(d_model, dtype=torch.float64)
    angle = position / 10000.0 ** (2 * torch.div(column, 2, rounding_mode="floor") / d_model)
    return torch.where(column % 2 == 0, torch.sin(angle), torch.cos(angle))


def max_abs_error(table: torch.Tensor) -> float:
    length, d_model = table.shape
    worst = 0.0
    for start in range(0, length, 4096):
        stop = min(length, start + 4096)
        worst = max(worst, (table[start:stop].double() - reference_rows(start, stop, d_model)).abs().max().item())
    return worst


def time_once(function, length: int, d_model: int, repeat: int) -> float:
    start = time.perf_counter()
    for _ in range(repeat):
        table = function(length, d_model)
        del table
    return (time.perf_counter() - start) / repeat


def measure_times(length: int, d_model: int, rounds: int) -> dict[str, float]:
    # Small tables are timed over an inner loop long enough to dwarf the clock's resolution.
    repeat = max(1, min(2000, int(2e7 // (length * d_model))))
    names = list(IMPLEMENTATIONS)
    for name in names:  # warm up: first calls pay for imports and lazy initialisation
        time_once(IMPLEMENTATIONS[name], length, d_model, 1)
    samples: dict[str, list[float]] = {name: [] for name in names}
    shuffle = random.Random(0)
    for _ in range(rounds):
        shuffle.shuffle(names)
        for name in names:
            samples[name].append(time_once(IMPLEMENTATIONS[name], length, d_model, repeat))
    return {name: statistics.median(values) for name, values in samples.items()}


_MEMORY_PROBE = """
import sys, torch
sys.path.insert(0, {bench_dir!r})
import bench_encoding as b
name, length, d_model = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
torch.set_num_threads({threads})
b.IMPLEMENTATIONS[name](64, 64); b.IMPLEMENTATIONS[name](512, 512)  # imports and lazy state
def rss(field):
    for line in open("/proc/self/status"):
        if line.startswith(field):
            return int(line.split()[1]) * 1024
before = rss("VmRSS:")
open("/proc/self/clear_refs", "w").write("5")  # reset the peak to the current size
table = b.IMPLEMENTATIONS[name](length, d_model)
print(rss("VmHWM:") - before - table.numel() * table.element_size())
"""


def measure_extra_memory(name: str, length: int, d_model: int) -> int:
    code = _MEMORY_PROBE.format(bench_dir=str(Path(__file__).parent), threads=torch.get_num_threads())
    result = subprocess.run([sys.executable, "-c", code, name, str(length), str(d_model)],
                            capture_output=True, text=True, check=True)
    return int(result.stdout.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--quick", action="store_true", help="small sizes and 3 rounds, for a smoke test")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "encoding.json")
    parser.add_argument("--plot", type=Path, default=ROOT / "images" / "benchmark_encoding.png")
    args = parser.parse_args()
    sizes = SIZES[:3] if args.quick else SIZES
    rounds = 3 if args.quick else args.rounds

    results = []
    for length, d_model in sizes:
        times = measure_times(length, d_model, rounds)
        errors = {name: max_abs_error(IMPLEMENTATIONS[name](length, d_model))
                  for name in IMPLEMENTATIONS if name != "floor"}
        row = {
            "length": length,
            "d_model": d_model,
            "median_seconds": times,
            "posenc_over_floor": times["posenc"] / times["floor"],
            "peer_over_posenc": {name: times[name] / times["posenc"]
                                 for name in IMPLEMENTATIONS if name not in ("posenc", "floor")},
            "max_abs_error": errors,
        }
        results.append(row)
        peers = ", ".join(f"{n} {r:.2f}x" for n, r in row["peer_over_posenc"].items())
        print(f"{length:>6} x {d_model:<4}  posenc {times['posenc'] * 1e3:9.3f} ms = "
              f"{row['posenc_over_floor']:.2f}x floor; peers slower by: {peers}; error {errors['posenc']:.1e}",
              flush=True)

    memory = {}
    if not args.quick:
        length, d_model = MEMORY_SIZE
        output_bytes = length * d_model * 4
        for name in IMPLEMENTATIONS:
            extra = measure_extra_memory(name, length, d_model)
            memory[name] = {"extra_bytes": extra, "fraction_of_output": extra / output_bytes}
            print(f"peak memory beyond the output, {length} x {d_model}: {name:<22} {extra / 2**20:8.1f} MiB "
                  f"({100 * extra / output_bytes:.1f}% of the output)", flush=True)

    report = {
        "machine": {"python": platform.python_version(), "torch": torch.__version__, "threads": torch.get_num_threads(),
                    "processor": platform.processor() or platform.machine(), "cpus": __import__("os").cpu_count()},
        "rounds": rounds,
        "sizes": results,
        "peak_extra_memory": {"size": list(MEMORY_SIZE), **memory},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    # Imported here: the memory probe imports this module in a process of its own, which needs no matplotlib.
    from posenc.plots import benchmark_figure, save_png

    save_png(benchmark_figure(report), args.plot)
    print(f"wrote {args.out} and {args.plot}")


if __name__ == "__main__":
    main()
