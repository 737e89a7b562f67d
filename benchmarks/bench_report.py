"""What a report of many streams costs, drawn by one process and by several, whole processes.

    python -m benchmarks.bench_report [--streams 30] [--n 200] [--repeats 2]

One run of `--streams` SEA streams (seeds 1, 2, ...; n events each) with GaussianNB and a
Hoeffding tree, delay 20 events, every default output (B = 100), is made once; then its report
is written again and again in a process of its own, interleaved: `delayed-eval report DIR` (its
figures shared among the processes `figures.processes_for` gives: one per core, at most 4,
from 8 panels) and the same command with one process. Prints the median wall time of each,
the peak memory of the command's own process, and whether both wrote the same figure files
(byte for byte).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

CHILD = """
import json, sys
from benchmarks.bench_memory import own_peak_mib
from pipelines import report
from pipelines.cli import main
if sys.argv[1] == "one":
    report.processes_for = lambda run: 1
code = main(["report", sys.argv[2]])
print(json.dumps({"code": code, "peak_mib": own_peak_mib()}))
"""


def made_run(out: str, streams: int, n: int, root: str) -> None:
    specs = [arg for i in range(1, streams + 1)
             for arg in ("--stream", f's{i}=synth:SEA{{"n": {n}, "seed": {i}}}')]
    done = subprocess.run([sys.executable, "-m", "pipelines.cli", "run", *specs, "--model",
                           "gaussian-nb", "--model", "hoeffding-tree", "--delay", "20",
                           "--runner", "direct", "--quiet", "--out", out], cwd=root,
                          capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"the run failed:\n{done.stderr[-2000:]}")


def timed_report(out: str, processes: str, root: str) -> dict:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", CHILD, processes, out], cwd=root,
                          capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode:
        raise SystemExit(f"the report failed:\n{done.stderr[-2000:]}")
    figures = os.path.join(out, "figures")
    digest = hashlib.sha256()
    for name in sorted(os.listdir(figures)):
        with open(os.path.join(figures, name), "rb") as f:
            digest.update(name.encode() + f.read())
    return {"seconds": seconds, "peak_mib": json.loads(done.stdout.splitlines()[-1])["peak_mib"],
            "figures": digest.hexdigest()}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=30)
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args(argv)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    variants = {"one process": "one", "default": "default"}
    results: dict = {name: [] for name in variants}
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "run")
        made_run(out, args.streams, args.n, root)
        for _ in range(args.repeats):  # (interleaved: the machine's drift hits both alike)
            for name, processes in variants.items():
                results[name].append(timed_report(out, processes, root))
    from runners import cores

    print(f"report of {args.streams} streams × 2 models ({args.n} events each, delay 20, "
          f"B = 100) on {cores()} cores, median of {args.repeats} (whole processes)")
    print(f"{'report':14} {'time':>8} {'peak memory (its process)':>26}")
    median = {}
    for name, found in results.items():
        median[name] = statistics.median(r["seconds"] for r in found)
        peak = max(r["peak_mib"] for r in found)
        print(f"{name:14} {median[name]:7.2f}s {peak:22.0f} MiB")
    print(f"ratio default / one process: {median['default'] / median['one process']:.2f}")
    same = len({r["figures"] for found in results.values() for r in found}) == 1
    print("figure files: " + ("the same, byte for byte" if same else "DIFFERENT"))


if __name__ == "__main__":
    main()
