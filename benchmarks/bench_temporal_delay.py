"""The temporal wrappers under a label delay: how much each gains over the model it wraps.

    python -m benchmarks.bench_temporal_delay [--seeds 20] [--delay 20] [--n 3000]
        [--stays 0.9 0.97]

For each stay probability of the example's 3-class Markov stream (`examples.temporal_dependence`)
and each seed: the replay engine's initial accuracy at a constant delay of `--delay` events for
GaussianNB, Temporal Correction and Temporally Augmented (lags 1 and 2) around it, each as the
paper has it and guarded (`"guard": 3`: the labels used only while that has paid, by 3 standard
errors); printed as wrapper − GaussianNB, mean ± standard error over the seeds, with how many
seeds are no worse.
`TC ...` are Temporal Correction in a plain loop (`correction_variants`), against the loop's
GaussianNB: `counts` as the wrapper estimates it (the same numbers as `TC`), `oracle` with the
chain's true P(y_t | y_{t−d}) in place of the counts (what the correction gains when the
relation need not be estimated), `+1` and `+5` with smoothed counts, `switched` corrected only
while that has hit more often than GaussianNB so far.
"""

from __future__ import annotations

import argparse
import tempfile
from collections import Counter

import numpy as np
import pandas as pd

from examples.temporal_dependence import make_streams
from transforms.models.specs import ModelSpec
from transforms.records import INSTANCE, LABEL, RANK_INSTANCE, RANK_LABEL, event
from transforms.replay.engine import ReplayEngine

WRAPPERS = {"TC": 'temporal-correction{"model": "gaussian-nb"}',
            "TA lags 1": 'temporally-augmented{"model": "gaussian-nb", "lags": 1}',
            "TA lags 2": 'temporally-augmented{"model": "gaussian-nb", "lags": 2}'}
WRAPPERS |= {f"{name} guarded": spec[:-1] + ', "guard": 3}' for name, spec in WRAPPERS.items()}

# Temporal Correction in a plain loop (`correction_variants`), each against the loop's GaussianNB.
VARIANTS = ("counts", "oracle", "+1", "+5", "switched")


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


def correction_variants(xs: list, ys: list, delay: int, stay: float) -> dict[str, float]:
    """Initial accuracy of GaussianNB and of Temporal Correction variants around it, in one
    plain loop at the same delay (label of t − delay learned before instance t is predicted;
    the label known at arrival is that one):

    - `counts`: P(y | known) / P(y) from the pairs (known at arrival, label) and labels so far,
      as `temporal-correction` estimates them (equal to it, a check of the loop);
    - `oracle`: the chain's true P(y_t | y_{t−d}) in place of the counts (its prior is even);
    - `+1`, `+5`: the counts with k added to each (additive smoothing, as MOA's Laplace
      correction of nominal attributes with k = 1);
    - `switched`: the counts' correction only while its initial predictions so far, of the
      labels that have arrived, hit more often than the plain model's (a naive-Bayes-adaptive
      leaf's rule between naive Bayes and the majority class).
    """
    from river import naive_bayes

    # A 3-state chain that stays with p and moves to each other state with (1 − p)/2: its
    # second eigenvalue is p − (1 − p)/2, so P(y_t = y_{t−d}) = 1/3 + 2/3·λ^d.
    same = 1 / 3 + 2 / 3 * (stay - (1 - stay) / 2) ** delay
    nb = naive_bayes.GaussianNB()
    pairs: Counter = Counter()
    counts: Counter = Counter()
    hits: Counter = Counter()
    arrived: dict = {}  # t -> (plain, counts) predictions, until t's label comes
    switch_hits = {"plain": 0, "counts": 0}
    n = 0

    def corrected(proba, known, k=0):
        row = sum(pairs[known, c] for c in counts)
        if not row:  # (as the wrapper: nothing learned after this label yet)
            return proba
        total = sum(counts.values())
        out = {c: p * (pairs[known, c] + k) / (row + k * len(counts))
               / ((counts[c] + k) / (total + k * len(counts)))
               for c, p in proba.items() if counts[c] > 0}
        return out if sum(out.values()) > 0 else proba

    for t, x in enumerate(xs):
        if t >= delay:
            s = t - delay
            nb.learn_one(xs[s], ys[s])
            if s >= delay:
                pairs[ys[s - delay], ys[s]] += 1
            counts[ys[s]] += 1
            for name, guess in zip(("plain", "counts"), arrived.pop(s, ())):
                switch_hits[name] += guess == ys[s]
        proba = nb.predict_proba_one(x)
        if not proba:
            continue
        n += 1
        guesses = {"GaussianNB": proba}
        if t >= delay:
            known = ys[t - delay]
            guesses["oracle"] = {c: p * (same if c == known else (1 - same) / 2)
                                 for c, p in proba.items()}
            guesses["counts"] = corrected(proba, known)
            guesses["+1"], guesses["+5"] = corrected(proba, known, 1), corrected(proba, known, 5)
        answers = {name: max(p, key=p.get) for name, p in guesses.items()}
        plain = answers["GaussianNB"]
        with_counts = answers.get("counts", plain)
        arrived[t] = (plain, with_counts)
        answers["switched"] = with_counts if switch_hits["counts"] > switch_hits["plain"] \
            else plain
        for name in ("GaussianNB", *VARIANTS):
            hits[name] += answers.get(name, plain) == ys[t]
    return {name: hits[name] / n for name in ("GaussianNB", *VARIANTS)}


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
        gains: dict = {name: [] for name in [*WRAPPERS, *(f"TC {v}" for v in VARIANTS)]}
        for seed in range(args.seeds):
            xs, ys = markov_rows(args.n, stay, seed)
            nb = initial_accuracy("gaussian-nb", xs, ys, args.delay)
            for name, model in WRAPPERS.items():
                gains[name].append(initial_accuracy(model, xs, ys, args.delay) - nb)
            loop = correction_variants(xs, ys, args.delay, stay)
            for v in VARIANTS:
                gains[f"TC {v}"].append(loop[v] - loop["GaussianNB"])
        cells = []
        for name, values in gains.items():
            v = 100 * np.array(values)
            se = v.std(ddof=1) / len(v) ** 0.5 if len(v) > 1 else float("nan")
            cells.append(f"{name} {v.mean():+.2f} ± {se:.2f} ({(v >= 0).sum()}/{len(v)})")
        print(f"stay {stay}: " + "; ".join(cells), flush=True)


if __name__ == "__main__":
    main()
