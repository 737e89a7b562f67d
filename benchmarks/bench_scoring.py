"""Vectorised scoring of a prediction log (what a backfill does per id bucket) against a plain
Python loop that takes one prediction at a time, in the same run, on the same log.

    python -m benchmarks.bench_scoring [--instances 20000] [--delay 200] [--every 5]
        [--bins 100] [--classes 3] [--repeats 3] [--gc]

The log: instances arriving one per second, each labelled `--delay` s later, with an initial
prediction, a re-prediction every `--every` s while pending and a final one (classification,
`--classes` classes, seeded), in time order as a deployed model writes it, with the columns the
log reader hands to the join (ids and predictions as Arrow strings, kinds as codes; the loop
turns them into Python lists first, inside its timing). Both sides turn
it into the scores of bins 0..B+1 (accuracy, κ, κ_m, κ_per, κ+ accumulators):

- vectorised: `transforms.backfill.join.join_predictions` (pandas/numpy join, `binned_flat`) and
  `transforms.scoring.columns.block_scores` (every bin's counts at once, `update_columns`) — one
  core, no Beam;
- loop: predictions grouped by instance in a dict one row at a time, each instance's bins by
  the item-by-item rule (`benchmarks.naive_reevaluation.reference_bins`), then
  `ClassificationScore.update` per bin.

It checks that both give the same scores, then reports predictions scored per second per
core and the ratio (target ≥ 10). Each side is timed as `timeit` does: garbage collected
before, the collector off while it runs (`--gc` leaves it on).
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time

import numpy as np
import pyarrow as pa

from benchmarks.naive_reevaluation import reference_bins
from metrics import ClassificationScore
from transforms.backfill.join import join_predictions, kind_codes, label_columns
from transforms.records import Outcome
from transforms.scoring.columns import block_scores
from transforms.scoring.plan import ScoringPlan
from transforms.vocabulary import BINNED, FINAL, INITIAL, PREDICTION_KINDS, REPREDICTION


def make_log(n: int, delay: float, every: float, classes: int, seed: int = 7):
    """Labelled instances (as the label pass gives them) and their prediction log."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, classes, n)
    prev = np.r_[0, y[:-1]]
    outcomes = [Outcome(i + 1, i, float(i), float(i + delay), int(y[i]), int(prev[i]), 0,
                        None, None) for i in range(n)]
    reps = np.arange(every, delay, every)
    per = 2 + len(reps)
    ids = np.repeat(np.arange(n), per)
    t = (np.arange(n)[:, None] + np.r_[0.0, reps, delay][None, :]).ravel()
    kind = np.tile(np.array([INITIAL] + [REPREDICTION] * len(reps) + [FINAL], dtype=object), n)
    # Mostly right, sometimes changing its mind.
    right = rng.random(n * per) < 0.7
    pred = np.where(right, np.repeat(y, per), rng.integers(0, classes, n * per))
    names = [f"c{k}" for k in range(classes)]
    # In time order, as a deployed model writes it; kinds as codes, as the log reader gives.
    order = np.argsort(t, kind="stable")
    log = {"id": pa.array(ids.astype(str)[order]), "kind": kind_codes(kind)[order],
           "t": t[order], "y_pred": pa.array(np.array(names)[pred][order])}
    return outcomes, log, names


def vectorised(outcomes, log, names, bins: int) -> list:
    joined, _ = join_predictions(label_columns(outcomes), log, names, bins)
    plan = ScoringPlan(bins=bins, curve_every=len(outcomes))
    blocks = block_scores(joined, "classification", plan)
    (block,) = [p for (category, _, _), p in blocks.items() if category == BINNED]
    return [block.scores[b].score for b in range(bins + 2)]


def loop(outcomes, log, names, bins: int) -> list:
    index = {name: k for k, name in enumerate(names)}
    by_id: dict = {}
    for i, code, t, y in zip(log["id"].to_pylist(), log["kind"].tolist(), log["t"].tolist(),
                             log["y_pred"].to_pylist()):
        entry = by_id.setdefault(i, {INITIAL: None, FINAL: None, "reps": []})
        value = index.get(y, -1)
        kind = PREDICTION_KINDS[code]
        if kind == REPREDICTION:
            entry["reps"].append((t, value))
        else:
            entry[kind] = value
    scores = [ClassificationScore() for _ in range(bins + 2)]
    for o in outcomes:
        entry = by_id[str(o.id)]
        reps = sorted(entry["reps"])
        row = reference_bins(o.t_arrival, o.t_label, entry[INITIAL], reps, entry[FINAL], bins)
        for b, pred in enumerate(row):
            scores[b].update(o.y, pred, o.y_prev, o.y_majority)
    return scores


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=int, default=20000)
    parser.add_argument("--delay", type=float, default=200.0)
    parser.add_argument("--every", type=float, default=5.0)
    parser.add_argument("--bins", type=int, default=100)
    parser.add_argument("--classes", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--gc", action="store_true",
                        help="leave the garbage collector on while timing")
    args = parser.parse_args(argv)
    outcomes, log, names = make_log(args.instances, args.delay, args.every, args.classes)
    rows = len(log["t"])
    times: dict = {"vectorised": [], "loop": []}
    for _ in range(args.repeats):
        for name, score in (("vectorised", vectorised), ("loop", loop)):
            # As timeit does: collect before, no garbage collection while timing (either
            # side's pauses would otherwise land on whichever side runs when they fall due).
            gc.collect()
            if not args.gc:
                gc.disable()
            start = time.perf_counter()
            result = score(outcomes, log, names, args.bins)
            times[name].append(time.perf_counter() - start)
            gc.enable()
            if name == "vectorised":
                fast = result
            elif [s.to_dict() for s in result] != [s.to_dict() for s in fast]:
                raise SystemExit("the two scorers disagree")
    print(f"{rows:,} logged predictions ({args.instances:,} instances, "
          f"{rows // args.instances} each), B={args.bins}; medians of {args.repeats}; "
          f"identical scores on both sides")
    print("| scorer | time | predictions / s / core |")
    print("|---|---|---|")
    medians = {k: statistics.median(v) for k, v in times.items()}
    for name, t in medians.items():
        print(f"| {name} | {t:.2f} s | {rows / t:,.0f} |")
    print(f"speed-up: {medians['loop'] / medians['vectorised']:.1f}x")


if __name__ == "__main__":
    main()
