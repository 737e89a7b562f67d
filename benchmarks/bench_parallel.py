"""Parallelism across (stream, model) keys: a grid on 1 worker versus on 2.

    python -m benchmarks.bench_parallel [--streams 4] [--models gaussian-nb hoeffding-tree]
        [--n 6000] [--delay 500] [--workers 1 2] [--replays grouped per-key]
        [--runner direct-mp] [--repeats 3]

The grid is `--streams` SEA streams (seeds 0, 1, ...) × `--models`, with re-evaluation
(every_k_labels:10, B=10) and no prediction log, so the replay dominates. Each arrangement
(replay path × worker count) runs `--repeats` times, interleaved, and the median is reported
with the speed-up of each worker count over the first. Workers are
`--direct_num_workers` of the multi-processing DirectRunner (`direct-mp`) or
`--sdk_worker_parallelism` of a portable SDK worker pool (`portable-pool`).

`--stages` instead runs each arrangement once and prints where its time goes: from the start
to the first stage, each stage of 0.05 s or more as the FnApiRunner runs it (in the runner's
process, its workers' share included), and from the last stage to the end.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

from pipelines.config import RunConfig
from pipelines.job import run

WORKER_FLAG = {"direct-mp": "--direct_num_workers", "portable-pool": "--sdk_worker_parallelism"}


def one_run(args, replay: str, workers: int) -> float:
    streams = [f's{i}=synth:SEA{{"n": {args.n}, "seed": {i}}}' for i in range(args.streams)]
    config = RunConfig(streams=streams, models=args.models, delay=str(args.delay), bins=10,
                       repredict="every_k_labels:10", out=tempfile.mkdtemp(),
                       runner=args.runner, replay=replay, log_predictions="none", quiet=True,
                       beam_args=[f"{WORKER_FLAG[args.runner]}={workers}"])
    start = time.perf_counter()
    run(config)
    return time.perf_counter() - start


def timed_stages(args, replay: str, workers: int) -> None:
    """One run, with the time of each stage the FnApiRunner runs printed as it ends."""
    from apache_beam.runners.portability.fn_api_runner import fn_runner

    execute = fn_runner.FnApiRunner._execute_bundle
    start = time.perf_counter()
    last = [start]

    def timed(self, context, bundle, *rest, **kw):
        began = time.perf_counter()
        try:
            return execute(self, context, bundle, *rest, **kw)
        finally:
            if time.perf_counter() - began >= 0.05:
                print(f"  {began - start:6.2f} s  +{time.perf_counter() - began:5.2f} s  "
                      f"{bundle.stage.name[:90]}")
            last[0] = time.perf_counter()

    fn_runner.FnApiRunner._execute_bundle = timed
    try:
        total = one_run(args, replay, workers)
    finally:
        fn_runner.FnApiRunner._execute_bundle = execute
    print(f"  total {total:.2f} s, of which {start + total - last[0]:.2f} s after the last "
          f"stage (closing the workers, publishing)")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=4)
    parser.add_argument("--models", nargs="+", default=["gaussian-nb", "hoeffding-tree"])
    parser.add_argument("--n", type=int, default=6000)
    parser.add_argument("--delay", type=int, default=500)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--replays", nargs="+", default=["grouped", "per-key"])
    parser.add_argument("--runner", choices=sorted(WORKER_FLAG), default="direct-mp")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--stages", action="store_true",
                        help="one run of each arrangement, its stages timed")
    args = parser.parse_args(argv)
    if args.stages:
        one_run(argparse.Namespace(**{**vars(args), "n": args.delay + 100}), args.replays[0],
                1)  # imports
        for replay in args.replays:
            for w in args.workers:
                print(f"{replay}, {w} worker(s):")
                timed_stages(args, replay, w)
        return
    keys = args.streams * len(args.models)
    print(f"{keys} keys ({args.streams} streams x {len(args.models)} models), {args.n} events "
          f"each, delay {args.delay}; {args.runner}; medians of {args.repeats}")
    times: dict = {}
    for _ in range(args.repeats):
        for replay in args.replays:
            for w in args.workers:
                times.setdefault((replay, w), []).append(one_run(args, replay, w))
    print(f"| replay | workers | wall time | speed-up vs {args.workers[0]} worker(s) |")
    print("|---|---|---|---|")
    for replay in args.replays:
        base = statistics.median(times[(replay, args.workers[0])])
        for w in args.workers:
            t = statistics.median(times[(replay, w)])
            print(f"| {replay} | {w} | {t:.1f} s | {base / t:.2f} |")


if __name__ == "__main__":
    main()
