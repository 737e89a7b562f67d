"""The same stream from each file format, and river on the same file: whole processes, as a user
runs them.

    python -m benchmarks.bench_files [--n 100000] [--delay 1000] [--repeats 3]
        [--model gaussian-nb] [--formats csv parquet jsonl arff event-log tables]

SEA (river's generator, seed 7, 10 % noise) is written once, in a separate step, as CSV,
Parquet, JSON Lines and ARFF (`time`, three features, `label`), and, as logs, as a Parquet event
log (an instance row at each time, its label row `delay` − 0.5 s later: the label arrives just
before the instance `delay` places on, as the delay in events has it) and as a Parquet instance
table with a label table. Then each run is its own process:

- `delayed-eval run` on each file, re-evaluation off (`--repredict none`: river has none), label
  delay in events, every default output (summary, curves, prediction log, drift, profile,
  manifest): initial and final predictions (the default) and, for CSV, initial only
  (`--no-final`, river's work) and without class probabilities (`--no-probabilities`: no
  log-loss, Brier, AUC or calibration; the default run's cost of them, target ≤ 1.2);
- river's `evaluate.progressive_val_score` (initial predictions only) on the CSV file, read
  with `river.stream.iter_csv`.

Prints the median wall time of each, the ratio of each format to CSV (target 1 of the
performance issue: ≤ 1.05) and of delayed-eval to river (target 2: ≤ 1.0 for GaussianNB with
initial and final). Runs are interleaved so that load drift hits all sides alike. Then the
model's own work, river's calls alone in this process (`predict_one` at arrival and, for the
default run, before each label; `learn_one` at each label), and each run's time beside it
against river's: what each tool adds to the same model calls.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import pandas as pd

RIVER = """
import sys
from river import evaluate, metrics, stream
from transforms.models.specs import ModelSpec
path, delay, model = sys.argv[1], int(sys.argv[2]), sys.argv[3]
data = stream.iter_csv(path, target="label", drop=["time"],
                       converters={"x1": float, "x2": float, "x3": float, "label": int})
accuracy = metrics.Accuracy()
evaluate.progressive_val_score(data, ModelSpec.parse(model).build(), accuracy, delay=delay)
print(accuracy.get())
"""


def write_files(folder: str, n: int, delay: int = 1000) -> dict[str, str]:
    """SEA as CSV, Parquet, JSON Lines and ARFF, a Parquet event log and a Parquet instance
    table with a label table (labels `delay` − 0.5 s after their instances) in `folder`;
    returns {format: path or stream spec}."""
    from river.datasets import synth

    rows = list(itertools.islice(synth.SEA(seed=7, noise=0.1), n))
    frame = pd.DataFrame([x for x, _ in rows]).rename(columns={0: "x1", 1: "x2", 2: "x3"})
    frame.insert(0, "time", np.arange(n))
    frame["label"] = [int(y) for _, y in rows]
    paths = {fmt: os.path.join(folder, f"sea.{ext}") for fmt, ext in
             (("csv", "csv"), ("parquet", "parquet"), ("jsonl", "jsonl"), ("arff", "arff"))}
    frame.to_csv(paths["csv"], index=False)
    frame.to_parquet(paths["parquet"], index=False)
    frame.to_json(paths["jsonl"], orient="records", lines=True)
    instances = frame.drop(columns="label").assign(id=np.arange(n), kind="instance")
    labels = pd.DataFrame({"id": np.arange(n), "time": np.arange(n) + delay - 0.5,
                           "kind": "label", "label": frame["label"]})
    paths["event-log"] = os.path.join(folder, "log.parquet")
    pd.concat([instances, labels]).sort_values("time", kind="stable").to_parquet(
        paths["event-log"], index=False)
    paths["tables"] = os.path.join(folder, "instances.parquet") + json.dumps(
        {"labels": os.path.join(folder, "labels.parquet")})
    instances.drop(columns="kind").to_parquet(os.path.join(folder, "instances.parquet"),
                                              index=False)
    labels.drop(columns="kind").to_parquet(os.path.join(folder, "labels.parquet"), index=False)
    with open(paths["arff"], "w", encoding="utf-8") as f:
        f.write("@relation sea\n@attribute x1 numeric\n@attribute x2 numeric\n"
                "@attribute x3 numeric\n@attribute label {0,1}\n@data\n")
        frame[["x1", "x2", "x3", "label"]].to_csv(f, index=False, header=False)
    return paths


def timed(command: list[str], cwd: str) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr[-2000:]}")
    return elapsed, done.stdout


def ours(path: str, args, out: str, *extra: str, logged: bool = False) -> list[str]:
    """A `delayed-eval run` on `path`; a log (`logged`) has its own label times: no --delay."""
    delay = [] if logged else ["--delay", str(args.delay)]
    return [sys.executable, "-m", "pipelines.cli", "run", "--stream", f"sea={path}", "--model",
            args.model, *delay, "--repredict", "none", "--runner", "direct", "--quiet",
            "--out", out, *extra]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--delay", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--model", default="gaussian-nb")
    parser.add_argument("--formats", nargs="+", default=["csv", "parquet", "jsonl", "arff"],
                        choices=["csv", "parquet", "jsonl", "arff", "event-log", "tables"])
    args = parser.parse_args(argv)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with tempfile.TemporaryDirectory() as folder:
        paths = write_files(folder, args.n, args.delay)
        runs = {"river (initial only, CSV)": [sys.executable, "-c", RIVER, paths["csv"],
                                              str(args.delay), args.model],
                "csv, initial only": ours(paths["csv"], args, os.path.join(folder, "o0"),
                                          "--no-final"),
                "csv, no probabilities": ours(paths["csv"], args, os.path.join(folder, "o1"),
                                              "--no-probabilities")}
        for fmt in args.formats:
            runs[fmt] = ours(paths[fmt], args, os.path.join(folder, f"o-{fmt}"),
                             logged=fmt in ("event-log", "tables"))
        times: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(args.repeats):
            for name, command in runs.items():
                times[name].append(timed(command, root)[0])
        work = model_work_seconds(paths["csv"], args) if "csv" in args.formats else None
    median = {name: statistics.median(t) for name, t in times.items()}
    river = median["river (initial only, CSV)"]
    print(f"{args.model}, SEA {args.n} events, delay {args.delay}, re-evaluation off, "
          f"median of {args.repeats} (whole processes)")
    print(f"{'run':32} {'time':>8} {'/ csv':>7} {'/ river':>8}")
    for name, t in median.items():
        to_csv = f"{t / median['csv']:7.3f}" if name in args.formats and "csv" in median \
            else " " * 7
        print(f"{name:32} {t:7.2f}s {to_csv} {t / river:8.3f}")
    if "csv" in median:
        print(f"class probabilities and their measures: csv / csv without them = "
              f"{median['csv'] / median['csv, no probabilities']:.3f}")
        beside_the_model(median, work)


def model_work_seconds(path: str, args) -> dict[bool, float]:
    """The model's own work on the stream, in this process: river's `predict_one` at each
    arrival, with (True) or without (False) the one before each label, and `learn_one` at each
    label (`naive_reevaluation.model_work`), nothing else."""
    from benchmarks.bench_reevaluation import read_events
    from benchmarks.naive_reevaluation import model_work
    from transforms.models.specs import ModelSpec

    events = read_events(f"sea={path}", args.delay)
    seconds = {}
    for final in (False, True):
        started = time.perf_counter()
        model_work(events, ModelSpec.parse(args.model).build(None), final)
        seconds[final] = time.perf_counter() - started
    return seconds


def beside_the_model(median: dict, work: dict) -> None:
    """Each run's time less the model's own work (`model_work_seconds`), against river's: what
    the tools add to the same model calls. Where a run takes less than river's calls alone (a
    prediction path of ours that skips river's arithmetic, as for naive Bayes), there is
    nothing to set beside it."""
    river = median["river (initial only, CSV)"] - work[False]
    print(f"model work (river's calls alone): {work[False]:.2f}s initial only, "
          f"{work[True]:.2f}s initial + final; river beside it {river:.2f}s")
    for name, final in (("csv, initial only", False), ("csv", True)):
        rest = median[name] - work[final]
        print(f"  {name:30} " + (f"beside it {rest:6.2f}s, / river's {rest / river:6.3f}"
                                 if rest > 0 else "less than the model work alone"))


if __name__ == "__main__":
    main()
