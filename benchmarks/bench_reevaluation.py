"""Continuous re-evaluation: its cost, against the same run without it and against a
straightforward implementation of the paper's Algorithm 1.

    python -m benchmarks.bench_reevaluation [--n 20000] [--delay 1000] [--bins 100]
        [--models gaussian-nb hoeffding-tree] [--k 1 10] [--log initial-final]
        [--naive-full] [--repeats 3] [--source file|synth]

For each model: the whole delayed-eval pipeline (DirectRunner) without re-evaluation
(`--repredict none`) and with `every_k_labels:K`, B bins; and `naive_replay` (a per-label scan
of the pending buffer with one `predict_one` per due instance, then bins item by item) over the
same events. The naive replay of K=1 takes tens of minutes (delay x labels predict_one calls),
so by default it is timed on two prefixes of the stream and extrapolated linearly (its cost
per label is constant once the buffer is full; the last `delay` labels, which arrive together
at the end with a shrinking buffer, make the estimate slightly high); `--naive-full` runs it
to the end and checks its binned accuracy equals the pipeline's. With `--repeats R` the pipeline
runs are repeated R times, interleaved (plain, K..., plain, K...), and the medians reported, so
load drift on a shared machine hits both sides alike; an untimed run first takes the one-off
costs (imports) off the first timed run.

Both sides start from the same input: by default the generated stream is written once to a
Parquet table (features and label per row; times and ids are the row numbers, as the generator
gives them), which the pipeline reads, and the naive replay's time includes reading its events
from that table. `--source synth` has the pipeline generate the stream itself instead (river's
Agrawal generator, ~1.3 s of 20 000 instances on the development machine) while the naive
replay gets the generated events ready.

`model_work` times what every implementation must do with the same river model whatever its
cleverness — `learn_one` per label, `predict_one` for each initial and final prediction, no
re-prediction, no bins, no output — over the whole stream: the naive replay's time divided by
it (`naive/work`) bounds the speed-up over the naive replay that any such implementation can reach.
`naive/plain` (the naive replay's time over this pipeline's without re-evaluation) is the
speed-up this pipeline would show if its re-evaluation cost nothing.
"""

from __future__ import annotations

import argparse
import math
import statistics
import tempfile
import time

import pandas as pd

from benchmarks.naive_reevaluation import model_work, naive_bin_accuracy, naive_replay
from pipelines.config import RunConfig
from pipelines.job import run
from transforms.models.specs import ModelSpec
from transforms.streams.delays import DelaySpec
from transforms.streams.generators import river_stream
from transforms.streams.sources import StreamSpec


def generated(n: int, seed: int) -> str:
    return f'synth:Agrawal{{"n": {n}, "seed": {seed}}}'


def write_table(spec: str, path: str) -> str:
    """The generated stream as a table the pipeline reads: one row per instance, its features
    and label (ids and times are the row numbers, as for the generator)."""
    rows = [dict(x, label=y) for x, y in river_stream(StreamSpec.parse(spec))]
    pd.DataFrame(rows).to_parquet(path, index=False)
    return f"agrawal={path}"


def read_events(source: str, delay: int) -> list:
    """The stream's events, sorted as the replay orders them."""
    return sorted(e for e in StreamSpec.parse(source).events(DelaySpec.parse(str(delay)))
                  if not isinstance(e, dict))


def pipeline(args, model: str, repredict: str) -> tuple[float, list[float]]:
    """Wall time of the whole run, and its binned accuracy Λ(T, 0..B+1)."""
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        summary = run(RunConfig(streams=[args.stream], models=[model],
                                delay=str(args.delay), out=out, runner="direct",
                                repredict=repredict,
                                **({} if repredict == "none" else {"bins": args.bins}),
                                log_predictions=args.log, quiet=True))
        seconds = time.perf_counter() - start
    binned = summary.query("category == 'binned' and metric == 'accuracy'").sort_values("bin")
    return seconds, binned["value"].tolist()


def naive(args, model: str, k: int, n_instances: int | None = None):
    """Wall time (and bin accuracies) of the straightforward replay over the first
    `n_instances` instances' events (all events if None), reading them included unless the
    pipeline generates the stream."""
    spec = ModelSpec.parse(model)
    start = time.perf_counter()
    events = args.events if args.ready else read_events(args.stream, args.delay)
    if n_instances is not None:
        events = [e for e in events if e[0] < n_instances]
    results = naive_replay(events, spec.build(None), k)
    accuracy = naive_bin_accuracy(results, args.bins)
    return time.perf_counter() - start, accuracy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=20000)
    parser.add_argument("--delay", type=int, default=1000)
    parser.add_argument("--bins", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--models", nargs="+", default=["gaussian-nb", "hoeffding-tree"])
    parser.add_argument("--k", nargs="+", type=int, default=[1, 10])
    parser.add_argument("--log", default="initial-final",
                        help="--log-predictions of the pipeline runs (the naive replay logs "
                             "nothing; 'all' adds writing every re-prediction)")
    parser.add_argument("--naive-full", action="store_true")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--source", choices=["file", "synth"], default="file",
                        help="the pipeline reads the stream from a Parquet table both sides "
                             "read (file), or generates it (synth)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tables:
        spec = generated(args.n, args.seed)
        args.ready = args.source == "synth"
        args.stream = spec if args.ready else write_table(spec, f"{tables}/agrawal.parquet")
        args.events = read_events(args.stream, args.delay)
        print(f"Agrawal {args.n} instances, delay {args.delay}, B={args.bins}, "
              f"--log-predictions {args.log}, stream from "
              f"{'the generator' if args.ready else 'a Parquet table'}, pipeline times: "
              f"median of {args.repeats}")
        compare(args)


def compare(args) -> None:
    events = args.events
    print(f"{'model':16} {'K':>3} {'plain s':>8} {'re-eval s':>10} {'ratio':>6} "
          f"{'naive s':>9} {'speed-up':>9} {'naive/plain':>12} {'model work s':>13} "
          f"{'added/work':>11} {'naive/work':>11}")
    pipeline(args, args.models[0], "none")  # untimed: imports and other one-off costs
    for model in args.models:
        times: dict = {}
        binned_of: dict = {}
        for _ in range(args.repeats):
            for policy in ["none", *(f"every_k_labels:{k}" for k in args.k)]:
                seconds, binned_of[policy] = pipeline(args, model, policy)
                times.setdefault(policy, []).append(seconds)
        plain = statistics.median(times["none"])
        started = time.perf_counter()
        model_work(events, ModelSpec.parse(model).build(None))
        work_s = time.perf_counter() - started
        for k in args.k:
            ours = statistics.median(times[f"every_k_labels:{k}"])
            binned = binned_of[f"every_k_labels:{k}"]
            if args.naive_full:
                naive_s, naive_acc = naive(args, model, k)
                same = all((math.isnan(a) and math.isnan(b)) or a == b
                           for a, b in zip(binned, naive_acc))
                note = "full, binned accuracy " + ("equal" if same else "DIFFERS")
            else:
                n1, n2 = 2 * args.delay, 3 * args.delay
                t1, _ = naive(args, model, k, n1)
                t2, _ = naive(args, model, k, n2)
                naive_s = t2 + (t2 - t1) * (args.n - n2) / (n2 - n1)
                note = f"estimated from {n1}/{n2}-instance prefixes"
            print(f"{model:16} {k:>3} {plain:>8.1f} {ours:>10.1f} {ours / plain:>5.2f}x "
                  f"{naive_s:>9.1f} {naive_s / ours:>8.1f}x {naive_s / plain:>11.1f}x "
                  f"{work_s:>13.2f} {(ours - plain) / work_s:>10.2f}x "
                  f"{naive_s / work_s:>10.1f}x  {note}", flush=True)


if __name__ == "__main__":
    main()
