"""delayed-eval on the DirectRunner vs river's progressive_val_score, same model/stream/delay.

    python benchmarks/bench_replay.py [--n 100000] [--delay 1000] [--repeats 3]

Re-evaluation (re-predictions while labels are pending) is off here: river has no such thing.
Both sides generate the same Agrawal stream (river's generator, same seed), replay it with the
same constant delay through GaussianNB and compute initial accuracy (river: Accuracy metric;
delayed-eval: the whole pipeline, including predictions.parquet, curves and the manifest).
Prints the median wall time of each and their ratio; checks the accuracies are equal.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import tempfile
import time

from river import datasets, evaluate, metrics, naive_bayes

from pipelines.config import RunConfig
from pipelines.job import run


def river_run(n: int, delay: int, seed: int) -> float:
    dataset = itertools.islice(datasets.synth.Agrawal(seed=seed), n)
    acc = metrics.Accuracy()
    evaluate.progressive_val_score(dataset, naive_bayes.GaussianNB(), acc, delay=delay)
    return acc.get()


def ours_run(n: int, delay: int, seed: int, runner: str, replay: str, final: bool) -> float:
    with tempfile.TemporaryDirectory() as out:
        summary = run(RunConfig(streams=[f'synth:Agrawal{{"n": {n}, "seed": {seed}}}'],
                                models=["river.naive_bayes.GaussianNB"], delay=str(delay),
                                out=out, runner=runner, replay=replay, final=final,
                                repredict="none", quiet=True))
    row = summary.query("category == 'initial' and metric == 'accuracy'")
    return row["value"].item()


def timed(fn, *args):
    start = time.perf_counter()
    value = fn(*args)
    return time.perf_counter() - start, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--delay", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--runner", default="direct")
    parser.add_argument("--replay", default="auto")
    args = parser.parse_args()
    times: dict[str, list[float]] = {"river": [], "initial": [], "full": []}
    for _ in range(args.repeats):  # interleaved, so drift in machine load hits all alike
        t, river_acc = timed(river_run, args.n, args.delay, args.seed)
        times["river"].append(t)
        for name, final in (("initial", False), ("full", True)):
            t, acc = timed(ours_run, args.n, args.delay, args.seed, args.runner, args.replay,
                           final)
            times[name].append(t)
            assert acc == river_acc, (name, acc, river_acc)
    r, i, f = (statistics.median(times[k]) for k in ("river", "initial", "full"))
    print(f"GaussianNB on Agrawal, {args.n} events, delay {args.delay}, runner {args.runner}, "
          f"median of {args.repeats}; initial accuracy {river_acc:.6f} on both sides")
    print(f"  river progressive_val_score            : {r:7.2f} s")
    print(f"  delayed-eval, initial only (--no-final): {i:7.2f} s   ratio {i / r:.3f}  "
          f"(same work as river; target <= 1.25)")
    print(f"  delayed-eval, initial + final          : {f:7.2f} s   ratio {f / r:.3f}  "
          f"(twice the predict calls)")


if __name__ == "__main__":
    main()
