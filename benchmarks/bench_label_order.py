"""Folding a key's labels in label order when they arrive one id bucket at a time, as a
backfill's join emits them: Page-Hinkley over n labels hashed into 16 buckets, each bucket one
batch of scattered label numbers (nearly every label its own run, held until the labels before
it have come).

    python -m benchmarks.bench_label_order [--labels 25000 50000 100000 400000] [--buckets 16]

Prints the seconds per size and the ratio of each to the smallest size's, per label: ~1 when
the fold is linear in the labels (it was quadratic while it re-sorted its held runs on every
batch and popped them from the front of a list).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from transforms.scoring.drift import DriftPlan, PageHinkleyFold
from transforms.scoring.label_order import InLabelOrder


def fold_in_buckets(n: int, buckets: int, seed: int = 0) -> tuple[float, int]:
    """Seconds to fold n labels fed bucket by bucket, and the losses the fold monitored."""
    rng = np.random.default_rng(seed)
    labels = np.arange(1, n + 1)
    bucket = rng.integers(0, buckets, n)
    batches = []
    for b in range(buckets):
        mine = labels[bucket == b]
        batches.append((mine, np.column_stack([mine, mine - 1.0, mine + 0.5,
                                               rng.random(len(mine)) < 0.2]).astype(float)))
    fold = InLabelOrder(PageHinkleyFold(DriftPlan()))
    start = time.perf_counter()
    acc = fold.create_accumulator()
    for batch in batches:
        acc = fold.add_input(acc, batch)
    _, monitored = fold.extract_output(acc)
    return time.perf_counter() - start, monitored


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", type=int, nargs="+", default=[25_000, 50_000, 100_000,
                                                                    400_000])
    parser.add_argument("--buckets", type=int, default=16)
    args = parser.parse_args(argv)
    base = None
    print("labels   seconds   per-label time / smallest size's")
    for n in args.labels:
        seconds, monitored = fold_in_buckets(n, args.buckets)
        assert monitored == n  # every label folded once
        base = base or seconds / n
        print(f"{n:>7,}  {seconds:8.2f}  {seconds / n / base:6.2f}")


if __name__ == "__main__":
    main()
