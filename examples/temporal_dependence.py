"""Temporal dependence (Žliobaitė et al. 2015) on a Markov-switching label stream.

    python -m examples.temporal_dependence [--out out/temporal] [--n 20000] [--delay 1]
        [--stay 0.9] [--category final]

The labels follow a Markov chain over 3 classes that keeps its class with probability 0.9; the two
features are weakly informative (class means 1 apart, unit noise). The same rows shuffled keep the
class balance and the features but lose the temporal dependence. Models: No-Change (Persistent),
Majority, GaussianNB, and GaussianNB wrapped by Temporal Correction and by Temporally Augmented
(last 2 labels); label delay 1 (`--delay`), test-then-train scores (`--category initial` for the
predictions at arrival). Printed and written to `temporal.csv`: accuracy, κ, κ_per, κ+ and the
stream profile P(M), P(T).
"""

from __future__ import annotations

import argparse
import json
import logging
import os

import numpy as np
import pandas as pd

logging.basicConfig(level=logging.ERROR)  # Beam's import-time notices about cloud clients

from pipelines.config import RunConfig  # noqa: E402
from pipelines.job import run  # noqa: E402

MODELS = {"NC": "no-change", "MC": "majority", "NB": "gaussian-nb",
          "TC(NB)": 'temporal-correction{"model": "gaussian-nb"}',
          "TA(NB)": 'temporally-augmented{"model": "gaussian-nb", "lags": 2}'}
METRICS = ("accuracy", "kappa", "kappa_t", "kappa_plus")


def make_streams(folder: str, n: int, stay: float = 0.9, seed: int = 7) -> dict[str, str]:
    """Write the Markov stream and its shuffled copy as CSV; returns {name: path}."""
    rng = np.random.default_rng(seed)
    y = np.empty(n, dtype=np.int64)
    y[0] = 0
    for t in range(1, n):
        y[t] = y[t - 1] if rng.random() < stay else rng.choice([c for c in range(3)
                                                                if c != y[t - 1]])
    means = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    x = means[y] + rng.normal(size=(n, 2))
    markov = pd.DataFrame({"time": np.arange(n), "x1": x[:, 0], "x2": x[:, 1], "label": y})
    shuffled = markov.iloc[rng.permutation(n)].assign(time=np.arange(n))
    os.makedirs(folder, exist_ok=True)
    paths = {}
    for name, frame in (("markov", markov), ("shuffled", shuffled)):
        paths[name] = os.path.join(folder, f"{name}.csv")
        frame.to_csv(paths[name], index=False)
    return paths


def evaluate(paths: dict, out: str, runner: str = "direct", delay: int = 1,
             category: str = "final") -> pd.DataFrame:
    """Scores of one category (final: test-then-train) per stream and model, with the stream
    profiles."""
    config = RunConfig(streams=[f"{name}={path}" for name, path in paths.items()],
                       models=[f"{k}={v}" for k, v in MODELS.items()], delay=str(delay), out=out,
                       runner=runner, repredict="none", log_predictions="none",
                       drift_on="none", quiet=True)
    summary = run(config)
    with open(os.path.join(out, "profile.json"), encoding="utf-8") as f:
        profiles = json.load(f)
    rows = summary[(summary["category"] == category) & (summary["window"] == "cumulative")
                   & summary["metric"].isin(METRICS)]
    table = rows.pivot_table(index=["stream", "metric"], columns="model", values="value",
                             sort=False)[list(MODELS)].reset_index()
    for key in ("p_majority", "p_same"):
        table[key] = table["stream"].map(lambda s, k=key: profiles[s][k])
    return table


def main(argv=None) -> pd.DataFrame:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="out/temporal")
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--runner", default="direct")
    parser.add_argument("--delay", type=int, default=1, help="label delay in events")
    parser.add_argument("--stay", type=float, default=0.9,
                        help="probability that the Markov chain keeps its class")
    parser.add_argument("--category", choices=["initial", "final"], default="final")
    args = parser.parse_args(argv)
    table = evaluate(make_streams(os.path.join(args.out, "data"), args.n, args.stay), args.out,
                     args.runner, args.delay, args.category)
    table.to_csv(os.path.join(args.out, "temporal.csv"), index=False)
    print(table.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    return table


if __name__ == "__main__":
    main()
