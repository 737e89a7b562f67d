"""Peak memory of a long run against the stream's length, at a constant delay.

    python -m benchmarks.bench_memory [--sizes 125000 250000 500000 1000000] [--delay 1000]
        [--models no-change majority] [--replays auto grouped] [--curve-every 1000]
        [--fading 0.999] [--source synth|csv|parquet|jsonl|arff] [--defaults]

Each (replay path, size) runs in a fresh child process (the `direct` runner, SEA, the models
given — two or more are compared, Q and McNemar —, a window of the last 1000 labels, a fading
factor, Page-Hinkley and the stream profile on; re-evaluation and the prediction log — an
output as long as the stream — off) and its own peak resident memory (`VmHWM`, see
`own_peak_mib`) is reported,
with the growth per million events between the smallest and the largest size. `auto` is what
a run gets without `--replay` (per-stream for a generated stream). The pending buffer of a
constant delay is constant; what still grows is reported as it is. `--source
csv|parquet|jsonl|arff` writes the same SEA events to a file first (columns time, features,
label; not timed) and reads the stream from it; `--ids stream|pending` adds an `id` column of
text ids, checked for duplicates over the whole stream (a set of every id) or only while
pending; `--label-table` puts the labels in a label table (an instance + label table, joined
by id). `--defaults` turns re-evaluation (every 10 labels, B = 100) and the prediction log of
every prediction on, as a run without options has them.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

CHILD = """
import json, sys, time
from benchmarks.bench_memory import own_peak_mib
from pipelines.config import RunConfig
from pipelines.job import run
stream, delay, models, replay, curve_every, fading, outputs, out = sys.argv[1:]
start = time.perf_counter()
defaults = outputs == "defaults"  # re-evaluation and the prediction log as a run has them
run(RunConfig(streams=[stream], models=models.split(","),
              delay=delay, repredict="every_k_labels:10" if defaults else "none",
              windows=[1000], fadings=[float(fading)] if fading != "none" else [],
              log_predictions="all" if defaults else "none",
              replay=replay, curve_every=int(curve_every), out=out, runner="direct",
              quiet=True))
print(json.dumps({"seconds": time.perf_counter() - start,
                  "peak_mib": own_peak_mib()}))
"""


def own_peak_mib() -> float:
    """This process's peak resident memory in MiB, not counting its parent's.

    `ru_maxrss` will not do for a child: Linux carries the high-water mark of the memory a
    process had when it exec'd into the new program (with subprocess's vfork, the parent's),
    so a child of a parent that once held 500 MB reports at least 500 MB. `VmHWM` in
    /proc/self/status is the new program's own; `ru_maxrss` is the fallback off Linux.
    """
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def sea_stream(n: int, source: str, folder: str, ids: str | None = None,
               delay: int | None = None) -> str:
    """The stream spec of n SEA events (seed 1): generated, or written to a file first (with
    an `id` column of text ids and the stream option `unique_ids: <ids>` if `ids` is given; with
    `delay`, the labels go to a label table instead, each just before instance i + delay)."""
    if source == "synth":
        return f'synth:SEA{{"n": {n}, "seed": 1}}'
    import itertools

    import pandas as pd
    from river import datasets

    rows = [{**{str(k): v for k, v in x.items()}, "label": y}  # Parquet wants text names
            for x, y in itertools.islice(datasets.synth.SEA(seed=1), n)]
    df = pd.DataFrame(rows)
    df.insert(0, "time", range(n))
    if ids or delay:
        df.insert(0, "id", [f"tx-{i:09d}" for i in range(n)])
    tables = {"sea": df}
    if delay:
        tables["labels"] = pd.DataFrame({"id": df["id"], "time": df["time"] + delay - 0.5,
                                         "label": df.pop("label")})
    paths = {}
    for name, table in tables.items():
        paths[name] = os.path.join(folder, f"{name}.{source}")
        _write(table, paths[name], source)
    options = {**({"unique_ids": ids} if ids else {}),
               **({"labels": paths["labels"]} if delay else {})}
    return paths["sea"] + (json.dumps(options) if options else "")


def _write(table, path: str, source: str) -> None:
    """A table as CSV, Parquet, JSON Lines or ARFF (an ARFF file's rows: its features and the
    label, their times being their numbers)."""
    if source == "csv":
        table.to_csv(path, index=False)
    elif source == "parquet":
        table.to_parquet(path)
    elif source == "jsonl":
        table.to_json(path, orient="records", lines=True)
    else:
        if "id" in table.columns:
            raise SystemExit("an ARFF stream has no ids or label table: leave out --ids and "
                             "--label-table")
        features = [c for c in table.columns if c not in ("time", "label")]
        with open(path, "w", encoding="utf-8") as f:
            f.write("@relation sea\n" + "".join(f"@attribute {c} numeric\n" for c in features)
                    + "@attribute label {0,1}\n@data\n")
            table[features].assign(label=table["label"].astype(int)).to_csv(
                f, index=False, header=False)


def measure(stream: str, delay: int, models: list[str], replay: str, curve_every: int,
            fading: str, defaults: bool = False) -> dict:
    out = tempfile.mkdtemp()
    done = subprocess.run([sys.executable, "-c", CHILD, stream, str(delay), ",".join(models),
                           replay, str(curve_every), fading,
                           "defaults" if defaults else "lean", out],
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+",
                        default=[125_000, 250_000, 500_000, 1_000_000])
    parser.add_argument("--delay", type=int, default=1000)
    parser.add_argument("--models", nargs="+", default=["no-change", "majority"])
    parser.add_argument("--replays", nargs="+", default=["auto", "grouped"])
    parser.add_argument("--fading", default="0.999", help="a fading factor, or none")
    parser.add_argument("--curve-every", type=int, default=1000,
                        help="labels between curve points (the curves grow with the stream)")
    parser.add_argument("--source", choices=["synth", "csv", "parquet", "jsonl", "arff"],
                        default="synth",
                        help="generate the stream, or read it from a file written first")
    parser.add_argument("--label-table", action="store_true",
                        help="the file's labels go to a label table (id, time, label), each "
                             "just before instance i + delay: an instance + label table")
    parser.add_argument("--ids", choices=["stream", "pending"],
                        help="the file gets an id column of text ids, unique over the stream "
                             "or only while pending (its unique_ids option)")
    parser.add_argument("--defaults", action="store_true",
                        help="with a run's default re-evaluation (every 10 labels, B = 100) "
                             "and its prediction log of every prediction")
    args = parser.parse_args(argv)
    source = args.source + {None: "", "stream": ", text ids unique over the stream",
                            "pending": ", text ids unique while pending"}[args.ids] + (
        ", an instance + label table" if args.label_table else "")
    print(f"SEA ({source}), {' + '.join(args.models)}, delay {args.delay} events, a curve "
          f"point every {args.curve_every} labels, fading {args.fading}, "
          + ("re-evaluation every 10 labels and every prediction logged, " if args.defaults
             else "") + "direct runner; peak RSS of a fresh process per run")
    print("| replay | events | wall time | peak memory |")
    print("|---|---|---|---|")
    for replay in args.replays:
        peaks = []
        for n in args.sizes:
            with tempfile.TemporaryDirectory() as folder:
                stream = sea_stream(n, args.source, folder, args.ids,
                                    args.delay if args.label_table else None)
                started = time.perf_counter()
                r = measure(stream, args.delay, args.models, replay, args.curve_every,
                            args.fading, args.defaults)
            peaks.append(r["peak_mib"])
            print(f"| {replay} | {n:,} | {time.perf_counter() - started:.0f} s | "
                  f"{r['peak_mib']:.0f} MiB |", flush=True)
        if args.sizes[-1] != args.sizes[0]:  # (one size: no growth to tell)
            per_million = (peaks[-1] - peaks[0]) / (args.sizes[-1] - args.sizes[0]) * 1e6
            print(f"| {replay} | growth | | {per_million:.0f} MiB per million events |",
                  flush=True)


if __name__ == "__main__":
    main()
