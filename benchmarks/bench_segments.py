"""What `--segment` costs: the same run with and without slices, whole processes.

    python -m benchmarks.bench_segments [--n 2000] [--segments 40] [--repeats 3]

A CSV stream of n rows (seed 3: two Gaussian features, a label from their sum, a `seg` column
of `--segments` values that is no feature) is written once; then GaussianNB, delay 20 events,
every default output, runs on it in its own process, with `--segment seg` and without. Prints
the median wall time and the process's own peak memory of each, and the time each slice adds.
Each slice carries every measure of a stream (B + 2 bins of each, ~3 600 summary rows for one
model at B = 100), so its cost is mostly in making, gathering and writing those rows.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import pandas as pd

CHILD = """
import json, sys, time
start = time.perf_counter()
from benchmarks.bench_memory import own_peak_mib
from pipelines.cli import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "seconds": time.perf_counter() - start,
                  "peak_mib": own_peak_mib()}))
"""


def write_stream(path: str, n: int, segments: int) -> None:
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=n), rng.normal(size=n)
    pd.DataFrame({"time": np.arange(n), "a": a, "b": b,
                  "seg": rng.choice([f"s{i}" for i in range(segments)], n),
                  "label": np.where(a + b > 0, "pos", "neg")}).to_csv(path, index=False)


def timed_run(path: str, out: str, root: str, *extra: str) -> dict:
    """A `delayed-eval run` in its own process -> its wall time (from the command's start, imports
    included) and peak memory."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", CHILD, "run", "--stream",
                           f'{path}{{"features": ["a", "b"]}}', "--model", "gaussian-nb",
                           "--delay", "20", "--runner", "direct", "--quiet", "--out", out,
                           *extra], cwd=root, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"the run failed:\n{done.stderr[-2000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return {"seconds": time.perf_counter() - start, "peak_mib": result["peak_mib"]}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--segments", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "seg.csv")
        write_stream(path, args.n, args.segments)
        runs = {"without --segment": (), "--segment seg": ("--segment", "seg")}
        results: dict = {name: [] for name in runs}
        for _ in range(args.repeats):  # (interleaved: the machine's drift hits both alike)
            for name, extra in runs.items():
                results[name].append(timed_run(path, os.path.join(folder, "out"), root, *extra))
    print(f"GaussianNB on {args.n:,} rows, delay 20, {args.segments} segments, median of "
          f"{args.repeats} (whole processes)")
    print(f"{'run':20} {'time':>8} {'peak memory':>12}")
    median = {}
    for name, found in results.items():
        median[name] = statistics.median(r["seconds"] for r in found)
        peak = statistics.median(r["peak_mib"] for r in found)
        print(f"{name:20} {median[name]:7.2f}s {peak:9,.0f} MiB")
    added = median["--segment seg"] - median["without --segment"]
    print(f"each slice adds {added / args.segments:.3f} s")


if __name__ == "__main__":
    main()
