"""The temporal wrappers under a label delay: how much each gains over the model it wraps.

    python -m benchmarks.bench_temporal_delay [--seeds 20] [--delay 20] [--n 3000]
        [--stays 0.9 0.97]

For each stay probability of the example's 3-class Markov stream (`examples.temporal_dependence`)
and each seed: the replay engine's initial accuracy at a constant delay of `--delay` events for
GaussianNB, Temporal Correction and Temporally Augmented (lags 1 and 2) around it; printed as
wrapper − GaussianNB, mean ± standard error over the seeds, with how many seeds are no worse.
`oracle TC` is a plain loop of Temporal Correction with the chain's true P(y_t | y_{t−d}) in
place of the counts, the same GaussianNB under it: what the correction gains when the relation
need not be estimated.
"""

from __future__ import annotations

import argparse
import tempfile

import numpy as np
import pandas as pd

from examples.temporal_dependence import make_streams
from transforms.models.specs import ModelSpec
from transforms.records import INSTANCE, LABEL, RANK_INSTANCE, RANK_LABEL, event
from transforms.replay.engine import ReplayEngine

WRAPPERS = {"TC": 'temporal-correction{"model": "gaussian-nb"}',
            "TA lags 1": 'temporally-augmented{"model": "gaussian-nb", "lags": 1}',
            "TA lags 2": 'temporally-augmented{"model": "gaussian-nb", "lags": 2}'}


def markov_rows(n: int, stay: float, seed: int) -> tuple[list, list]:
    with tempfile.TemporaryDirectory() as folder:
        frame = pd.read_csv(make_streams(folder, n, stay=stay, seed=seed)["markov"])
    return frame[["x1", "x2"]].to_dict("records"), frame["label"].tolist()


def initial_accuracy(model: str, xs: list, ys: list, delay: int) -> float:
    """The engine's initial accuracy: instance t arrives at t, its label at t + delay."""
    events = [event(t, RANK_INSTANCE, 2 * t, INSTANCE, t, x) for t, x in enumerate(xs)]
    events += [event(t + delay, RANK_LABEL, 2 * t + 1, LABEL, t, None, y)
               for t, y in enumerate(ys)]
    engine = ReplayEngine(ModelSpec.parse(model), "m")
    scored = [o.initial == o.y for o in engine.drain(events).outcomes if o.initial is not None]
    return sum(scored) / len(scored)


def oracle_correction(xs: list, ys: list, delay: int, stay: float) -> tuple[float, float]:
    """(GaussianNB's, Temporal Correction's with the chain's true transition) initial
    accuracy, in a plain loop at the same delay."""
    from river import naive_bayes

    # A 3-state chain that stays with p and moves to each other state with (1 − p)/2: its
    # second eigenvalue is p − (1 − p)/2, so P(y_t = y_{t−d}) = 1/3 + 2/3·λ^d.
    same = 1 / 3 + 2 / 3 * (stay - (1 - stay) / 2) ** delay
    nb, plain, corrected, n = naive_bayes.GaussianNB(), 0, 0, 0
    for t, x in enumerate(xs):
        if t - delay >= 0:
            nb.learn_one(xs[t - delay], ys[t - delay])
        proba = nb.predict_proba_one(x)
        if not proba:
            continue
        n += 1
        plain += max(proba, key=proba.get) == ys[t]
        if t - delay >= 0:
            known = ys[t - delay]
            proba = {c: p * (same if c == known else (1 - same) / 2) for c, p in proba.items()}
        corrected += max(proba, key=proba.get) == ys[t]
    return plain / n, corrected / n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--delay", type=int, default=20)
    parser.add_argument("--n", type=int, default=3000)
    parser.add_argument("--stays", type=float, nargs="+", default=[0.9, 0.97])
    args = parser.parse_args()
    print(f"{args.n} rows, delay {args.delay} events, seeds 0..{args.seeds - 1}: initial "
          f"accuracy, wrapper − GaussianNB (points), mean ± s.e. (seeds no worse)")
    for stay in args.stays:
        gains: dict = {name: [] for name in [*WRAPPERS, "oracle TC"]}
        for seed in range(args.seeds):
            xs, ys = markov_rows(args.n, stay, seed)
            nb = initial_accuracy("gaussian-nb", xs, ys, args.delay)
            for name, model in WRAPPERS.items():
                gains[name].append(initial_accuracy(model, xs, ys, args.delay) - nb)
            plain, oracle = oracle_correction(xs, ys, args.delay, stay)
            gains["oracle TC"].append(oracle - plain)
        cells = []
        for name, values in gains.items():
            v = 100 * np.array(values)
            se = v.std(ddof=1) / len(v) ** 0.5 if len(v) > 1 else float("nan")
            cells.append(f"{name} {v.mean():+.1f} ± {se:.1f} ({(v >= 0).sum()}/{len(v)})")
        print(f"stay {stay}: " + "; ".join(cells), flush=True)


if __name__ == "__main__":
    main()
