"""A nightly backfill at scale: `delayed-eval backfill` over a generated production log, time and
peak memory at several sizes, each run its own process as a scheduler runs it.

    python -m benchmarks.bench_backfill [--instances 100000 1000000] [--per-instance 10]
        [--bins 100] [--runner direct] [--log-format parquet|csv|jsonl] [--one-file]
        [--keep DIR]

The log of N instances, one arriving per second with a text id, each labelled 600–3 600 s
later (seeded): an instance table (id, time, one feature), a label table (id, time, label;
rows in label-time order) and a prediction log of `--per-instance` predictions per instance
(initial at arrival, re-predictions evenly spread while pending, final at the label time),
each table a Parquet file per day (`date=YYYY-MM-DD/part-0.parquet`, hive style; the
prediction log as CSV or JSON Lines with `--log-format`, in one file with `--one-file`), as a
deployed service writes them.
The backfill scores every logged prediction with every default measure (B bins, curves,
windows, fading, drift). Printed: wall time, the time per million
predictions, and the process's own peak resident memory (`bench_memory.own_peak_mib`: not
the generating parent's).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import pandas as pd

DAY = 86_400

# The backfill's process: the CLI, then its own peak memory on the last line.
CHILD = """
import sys
from benchmarks.bench_memory import own_peak_mib
from pipelines.cli import main
code = main(sys.argv[1:])
print(own_peak_mib())
sys.exit(code)
"""


def write_log(folder: str, n: int, per_instance: int, classes: int = 2, seed: int = 7,
              log_format: str = "parquet", one_file: bool = False) -> dict:
    """Instance, label and prediction tables of n instances, partitioned by day (the prediction
    log in one file with `one_file`); their paths."""
    rng = np.random.default_rng(seed)
    t0 = np.arange(n, dtype=np.float64)
    t_label = t0 + rng.integers(600, 3600, n)
    ids = np.char.add("tx-", np.arange(n).astype(str)).astype(object)
    y = rng.integers(0, classes, n)
    names = np.array([f"c{k}" for k in range(classes)], dtype=object)
    instances = pd.DataFrame({"id": ids, "time": t0, "amount": rng.random(n)})
    order = np.argsort(t_label, kind="stable")
    labels = pd.DataFrame({"id": ids[order], "time": t_label[order], "label": names[y[order]]})
    # Initial at arrival, re-predictions spread over the latency period, final at the label.
    steps = np.linspace(0.0, 1.0, per_instance)
    t = (t0[:, None] + (t_label - t0)[:, None] * steps[None, :]).ravel()
    kind = np.array(["initial"] + ["re-prediction"] * (per_instance - 2) + ["final"],
                    dtype=object)
    right = rng.random(n * per_instance) < 0.8
    pred = np.where(right, np.repeat(y, per_instance),
                    rng.integers(0, classes, n * per_instance))
    preds = pd.DataFrame({"id": np.repeat(ids, per_instance), "t": t,
                          "kind": np.tile(kind, n), "y_pred": names[pred],
                          "model": "prod"})
    preds = preds.iloc[np.argsort(t, kind="stable")]
    paths = {}
    for name, table, column in (("instances", instances, "time"), ("labels", labels, "time"),
                                ("predictions", preds, "t")):
        paths[name] = os.path.join(folder, name)
        fmt = log_format if name == "predictions" else "parquet"
        if name == "predictions" and one_file:
            os.makedirs(paths[name])
            _write(table, os.path.join(paths[name], "part-0"), fmt)
            continue
        day = (table[column].to_numpy() // DAY).astype(np.int64)
        for d in np.unique(day):
            part = os.path.join(paths[name], f"date=2026-11-{d + 1:02d}")
            os.makedirs(part)
            _write(table[day == d], os.path.join(part, "part-0"), fmt)
    return paths


def _write(table: pd.DataFrame, stem: str, fmt: str) -> None:
    if fmt == "csv":
        table.to_csv(stem + ".csv", index=False)
    elif fmt == "jsonl":
        table.to_json(stem + ".jsonl", orient="records", lines=True)
    else:
        table.to_parquet(stem + ".parquet", index=False)


def backfill(paths: dict, bins: int, runner: str, out: str) -> dict:
    """One backfill process: wall time and its peak resident memory, in MiB."""
    stream = f'prod={paths["instances"]}{json.dumps({"labels": paths["labels"]})}'
    command = [sys.executable, "-c", CHILD, "backfill", "--quiet", "--stream", stream,
               "--predictions", paths["predictions"], "--bins", str(bins),
               "--runner", runner, "--out", out]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode:
        raise SystemExit(f"backfill failed ({done.returncode}): {done.stderr.strip()}")
    return {"seconds": seconds, "peak_mib": float(done.stdout.strip().splitlines()[-1])}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--per-instance", type=int, default=10,
                        help="logged predictions per instance: initial, re-predictions, final")
    parser.add_argument("--bins", type=int, default=100)
    parser.add_argument("--runner", default="direct")
    parser.add_argument("--log-format", choices=("parquet", "csv", "jsonl"), default="parquet",
                        help="the prediction log's files (the instance and label tables are "
                             "Parquet)")
    parser.add_argument("--one-file", action="store_true",
                        help="the prediction log in one file, not a file per day")
    parser.add_argument("--keep", help="write the logs and results here, or use the logs "
                                       "already there (default: a temporary folder, removed)")
    args = parser.parse_args(argv)
    print(f"backfill, {args.per_instance} logged predictions per instance, B = {args.bins}, "
          f"every default measure, --runner {args.runner}, partitioned by day, the prediction "
          f"log as {args.log_format}" + (" in one file" if args.one_file else ""))
    print("| instances | predictions | wall time | per million predictions | peak memory |")
    print("|---|---|---|---|---|")
    for n in sorted(args.instances):
        folder = args.keep or tempfile.mkdtemp()
        root = os.path.join(folder, f"n{n}-{args.log_format}" + "-one-file" * args.one_file)
        paths = {name: os.path.join(root, name) for name in ("instances", "labels",
                                                              "predictions")}
        if not os.path.isdir(paths["predictions"]):  # a kept log is used again
            paths = write_log(root, n, args.per_instance, log_format=args.log_format,
                              one_file=args.one_file)
        result = backfill(paths, args.bins, args.runner, os.path.join(root, "results"))
        predictions = n * args.per_instance
        print(f"| {n:,} | {predictions:,} | {result['seconds']:.1f} s | "
              f"{result['seconds'] / predictions * 1e6:.1f} s | {result['peak_mib']:,.0f} MiB |",
              flush=True)
        if not args.keep:
            subprocess.run(["rm", "-rf", folder], check=True)


if __name__ == "__main__":
    main()
