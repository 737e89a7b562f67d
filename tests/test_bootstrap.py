"""Poisson bootstrap intervals: each replicate's statistic equals scikit-learn's with the labels'
Poisson weights as sample weights (on the stored predictions, cumulative and a sliding window),
the weights are Poisson(1) and do not depend on how labels are batched."""

import os

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn import metrics as sk

from metrics.bootstrap import poisson_weights
from pipelines.config import RunConfig
from pipelines.job import run
from tests.helpers import read_csv, waveform_csv

N, DELAY, WINDOW, R = 1500, 40, 400, 300


def test_weights_are_poisson_one_and_a_function_of_the_label_number_alone():
    w = poisson_weights(np.arange(1, 4001), 50)
    counts = np.bincount(w.ravel(), minlength=8)[:8]
    expected = stats.poisson(1).pmf(np.arange(8)) * w.size
    expected[-1] += w.size - expected.sum()  # the tail in the last cell
    counts[-1] += w.size - counts.sum()
    assert stats.chisquare(counts, expected).pvalue > 0.001
    shuffled = np.random.default_rng(0).permutation(4000) + 1
    assert (poisson_weights(shuffled, 50) == w[shuffled - 1]).all()


@pytest.fixture(scope="session")  # (computed once per test process)
def waveform_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("boot")
    path, labels = waveform_csv(folder, N, seed=8)
    out = os.path.join(folder, "out")
    run(RunConfig(streams=[f"w={path}"], models=["nb=gaussian-nb"], delay=str(DELAY),
                  repredict="none", windows=[WINDOW], bootstrap=R, out=out, quiet=True,
                  runner="direct"))
    curves = pd.read_parquet(os.path.join(out, "curves.parquet"))
    return (labels, pd.read_parquet(os.path.join(out, "predictions.parquet")),
            curves[curves["labels"].isin([1000, N])])


def _interval(values):
    values = np.asarray(values)
    return np.percentile(values[~np.isnan(values)], [2.5, 97.5])


@pytest.mark.parametrize("kind", ["initial", "final"])
def test_intervals_are_percentiles_of_sklearn_on_weighted_stored_predictions(waveform_run, kind):
    labels, predictions, curves = waveform_run
    logged = predictions[predictions["kind"] == kind].set_index("id")["y_pred"]
    # At the end and at an earlier curve point (there a window is a difference of cumulative
    # counts): instance i is the (i + 1)th label (a fixed delay), weighted as label i + 1.
    for end, window, first in ((N, "cumulative", 0), (N, f"w={WINDOW}", N - WINDOW),
                               (1000, "cumulative", 0), (1000, f"w={WINDOW}", 1000 - WINDOW)):
        ids = [i for i in range(first, end) if pd.notna(logged.get(str(i)))]
        y = [labels[i] for i in ids]
        p = [logged[str(i)] for i in ids]
        weights = poisson_weights(np.array(ids) + 1, R)
        replicates = {"accuracy": [], "kappa": [], "macro_f1": []}
        for r in range(R):
            w = weights[:, r]
            keep = w > 0
            yr, pr, wr = np.array(y)[keep], np.array(p)[keep], w[keep]
            replicates["accuracy"].append(sk.accuracy_score(yr, pr, sample_weight=wr))
            replicates["kappa"].append(sk.cohen_kappa_score(yr, pr, sample_weight=wr))
            replicates["macro_f1"].append(sk.f1_score(yr, pr, average="macro",
                                                      sample_weight=wr, zero_division=0))
        rows = curves[(curves["category"] == kind) & (curves["window"] == window)
                      & (curves["labels"] == end) & curves["class"].isna()]
        got = dict(zip(rows["metric"], rows["value"]))
        for name, values in replicates.items():
            low, high = _interval(values)
            assert got[f"{name}_bootstrap_low"] == pytest.approx(low, rel=1e-9), (end, window)
            assert got[f"{name}_bootstrap_high"] == pytest.approx(high, rel=1e-9)
            assert low <= got[name] <= high


def test_fading_views_have_no_bootstrap_rows(tmp_path):
    summary = run(RunConfig(streams=['synth:SEA{"n": 400, "seed": 1}'], models=["gaussian-nb"],
                            delay="10", repredict="none", fadings=[0.99], bootstrap=20,
                            out=str(tmp_path), quiet=True, runner="direct"))
    boot = summary[summary["metric"].str.contains("bootstrap")]
    assert len(boot) and not boot["window"].str.startswith("fading").any()


def test_auc_intervals_are_percentiles_of_sklearn_with_the_poisson_weights(tmp_path):
    n, replicates = 800, 100
    path, labels = waveform_csv(tmp_path, n, seed=5)
    out = os.path.join(tmp_path, "out")
    run(RunConfig(streams=[f"w={path}"], models=["nb=gaussian-nb"], delay="20",
                  repredict="none", auc=True, bootstrap=replicates, windows=[300], out=out,
                  quiet=True, runner="direct"))
    summary = read_csv(os.path.join(out, "summary.csv"))
    logged = pd.read_parquet(os.path.join(out, "predictions.parquet"))
    classes = sorted(set(labels))
    for kind, window, first in (("initial", "cumulative", 0), ("final", "cumulative", 0),
                                ("initial", "w=300", n - 300)):
        stored = logged[logged["kind"] == kind].set_index("id")["proba"]
        ids = [i for i in range(first, n) if stored.get(str(i)) is not None]
        y = np.array([classes.index(labels[i]) for i in ids])
        p = np.array([[dict(stored[str(i)]).get(c, 0.0) for c in classes] for i in ids])
        weights = poisson_weights(np.array(ids) + 1, replicates)  # instance i: label i + 1
        roc, pr = [], []
        for r in range(replicates):
            w = weights[:, r]
            roc.append(sk.roc_auc_score(y, p, multi_class="ovr", average="macro",
                                        sample_weight=w))
            pr.append(sk.average_precision_score(np.eye(len(classes))[y], p, average="macro",
                                                 sample_weight=w))
        rows = summary[(summary["category"] == kind) & (summary["window"] == window)
                       & summary["class"].isna()].set_index("metric")["value"]
        for name, values in (("roc_auc", roc), ("pr_auc", pr)):
            low, high = _interval(values)
            assert rows[f"{name}_bootstrap_low"] == pytest.approx(low, rel=1e-9), (kind, name)
            assert rows[f"{name}_bootstrap_high"] == pytest.approx(high, rel=1e-9)
            assert low <= rows[name] <= high
