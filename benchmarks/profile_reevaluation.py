"""Where the time of continuous re-evaluation goes, in the replay engine alone.

    python -m benchmarks.profile_reevaluation [--model hoeffding-tree] [--k 10] [--n 20000]

Agrawal (seed 1), one instance per second, each labelled `--delay` seconds later, B = 100: the
`ReplayEngine` (no Beam, no reading, no scoring downstream) with `--repredict none` and with
`every_k_labels:K`, then the parts of the second run, each timed by a wrapper around the step
(wall seconds, the step's own calls included in its total: `defer_round` includes the windows it
closes, `learned` the leaf snapshots). The wrappers add a little to every call.
"""

from __future__ import annotations

import argparse
import time

from river.datasets import synth

from transforms.models import tree_batch
from transforms.models.specs import ModelSpec
from transforms.records import INSTANCE, LABEL, RANK_INSTANCE, RANK_LABEL, event
from transforms.replay import engine as replay_engine
from transforms.replay.repredict import PendingRows, RepredictPolicy

# (class, method) pairs timed, in the order printed.
PARTS = [(PendingRows, "add"), (PendingRows, "take"), (PendingRows, "defer_round"),
         (PendingRows, "learned"), (tree_batch.HoeffdingTreeBatch, "_refresh"),
         (tree_batch.HoeffdingTreeBatch, "_snapshot"), (PendingRows, "resolve"),
         (tree_batch.HoeffdingTreeBatch, "window_block"), (PendingRows, "repredict"),
         (replay_engine.ReplayEngine, "_map_bins")]


def events(n: int, delay: float) -> list:
    out = []
    for i, (x, y) in enumerate(synth.Agrawal(seed=1).take(n)):
        out.append(event(float(i), RANK_INSTANCE, 2 * i, INSTANCE, i, x))
        out.append(event(float(i) + delay, RANK_LABEL, 2 * i + 1, LABEL, i, None, y))
    return out


def timed(totals: dict, cls, name: str) -> None:
    method = getattr(cls, name)

    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return method(*args, **kwargs)
        finally:
            totals[name] = totals.get(name, 0.0) + time.perf_counter() - start

    setattr(cls, name, wrapper)


def drain_seconds(spec: ModelSpec, policy: str, stream: list) -> float:
    engine = replay_engine.ReplayEngine(spec, "s", None, repredict=RepredictPolicy.parse(policy),
                                        bins=100, log_predictions="initial-final")
    start = time.perf_counter()
    engine.drain(stream)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="hoeffding-tree")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--n", type=int, default=20000)
    parser.add_argument("--delay", type=float, default=1000)
    args = parser.parse_args()
    spec, stream = ModelSpec.parse(args.model), events(args.n, args.delay)
    drain_seconds(spec, "none", stream[:2000])  # untimed: imports, first calls
    without = drain_seconds(spec, "none", stream)
    totals: dict = {}
    for cls, name in PARTS:
        timed(totals, cls, name)
    with_k = drain_seconds(spec, f"every_k_labels:{args.k}", stream)
    print(f"{args.model}, Agrawal {args.n}, delay {args.delay:g}, B=100, K={args.k}: engine "
          f"without re-evaluation {without:.2f} s, with {with_k:.2f} s (adds "
          f"{with_k - without:.2f} s)")
    for _, name in PARTS:
        if name in totals:
            print(f"  {name:14} {totals[name]:6.2f} s")


if __name__ == "__main__":
    main()
