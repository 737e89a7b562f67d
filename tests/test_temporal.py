"""Temporal dependence (paper 003): the stream profile, and the baselines it predicts."""

import json
import random

import pandas as pd

from metrics.temporal import stream_profile
from pipelines.config import RunConfig
from pipelines.evaluate import run


def markov_labels(n, stay, seed=0):
    rng = random.Random(seed)
    y = [0]
    for _ in range(n - 1):
        y.append(y[-1] if rng.random() < stay else rng.choice([c for c in (0, 1, 2)
                                                               if c != y[-1]]))
    return y


def test_profile_by_hand():
    p = stream_profile([1, 1, 0, 1], max_lag=2)
    assert p["p_majority"] == 0.75 and p["p_same"] == 1 / 3
    # Δ(2) for class 1: P(1|1) = 1/2 (t=1 stays, t=2 leaves), P(1|11) = 0/1.
    assert p["delta"]["2"]["1"] != p["delta"]["2"]["1"]  # P(1|111): never seen -> NaN
    assert p["delta"]["1"]["1"] == 1 / 2 - 0 / 1


def test_a_run_writes_the_profile_of_its_label_sequence(tmp_path):
    y = markov_labels(3000, stay=0.9)
    rng = random.Random(1)
    path = tmp_path / "markov.csv"
    pd.DataFrame({"time": range(len(y)), "x": [rng.random() for _ in y],
                  "label": y}).to_csv(path, index=False)
    out = tmp_path / "out"
    summary = run(RunConfig(streams=[f"m={path}"], models=["no-change", "majority"], delay="1",
                            out=str(out), runner="direct", repredict="none",
                            log_predictions="none", quiet=True))
    profile = json.loads((out / "profile.json").read_text())["m"]
    assert profile == json.loads(json.dumps(stream_profile(y)))
    assert profile["p_same"] > profile["p_majority"]  # strong temporal dependence
    final = summary[(summary["category"] == "final") & (summary["window"] == "cumulative")]
    by = {(r.model, r.metric): r.value for r in final.itertuples()}
    # Persistent (no-change) beats Majority, and Majority's κ_per is negative (Prop. 7).
    assert by[("no-change", "accuracy")] > by[("majority", "accuracy")]
    assert by[("majority", "kappa_t")] < 0
