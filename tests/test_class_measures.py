"""The measures of the per-class confusion counts (precision, recall and F1 averages, balanced
accuracy, G-mean, MCC) equal scikit-learn's on the stored predictions, at the end and at curve
points, cumulative and over a sliding window, and river's progressive_val_score on the same
stream."""

import itertools
import math
import os

import numpy as np
import pandas as pd
import pytest
from river import datasets, evaluate, metrics, naive_bayes
from sklearn import metrics as sk

from pipelines.config import RunConfig
from pipelines.job import run
from tests.helpers import read_csv, waveform_csv
from pipelines.local import evaluate_locally

N, DELAY, EVERY, WINDOW = 1200, 50, 200, 300

def _averaged(function, average):
    return lambda y, p: function(y, p, average=average, zero_division=0)


def _gmean(y, p, sample_weight=None):
    """The geometric mean of scikit-learn's recalls of the classes that occur as labels."""
    recalls = sk.recall_score(y, p, labels=sorted(set(y)), average=None,
                              sample_weight=sample_weight, zero_division=0)
    return float(np.prod(recalls) ** (1 / len(recalls)))


SKLEARN = {
    "balanced_accuracy": sk.balanced_accuracy_score,
    "gmean": _gmean,
    "mcc": sk.matthews_corrcoef,
    "micro_f1": lambda y, p: sk.f1_score(y, p, average="micro"),
    **{f"{average}_{name}": _averaged(function, average) for average in ("macro", "weighted")
       for name, function in (("precision", sk.precision_score), ("recall", sk.recall_score),
                              ("f1", sk.f1_score))},
}


@pytest.fixture(scope="session")  # (computed once per test process)
def waveform_run(tmp_path_factory):
    """A 3-class stream written to CSV, run with a fixed label delay, its results read back."""
    folder = tmp_path_factory.mktemp("waveform")
    path, labels = waveform_csv(folder, N, seed=3)
    out = os.path.join(folder, "out")
    run(RunConfig(streams=[f"w={path}"], models=["nb=gaussian-nb"], delay=str(DELAY),
                  repredict="none", windows=[WINDOW], curve_every=EVERY, out=out, quiet=True,
                  runner="direct"))
    return labels, pd.read_parquet(os.path.join(out, "predictions.parquet")), \
        read_csv(os.path.join(out, "summary.csv")), \
        pd.read_parquet(os.path.join(out, "curves.parquet"))


def _stored(predictions: pd.DataFrame, kind: str, labels: list, first: int, last: int):
    """(labels, predictions) of instances first..last−1 (labelled in that order: a fixed delay)
    that got a `kind` prediction, from the stored log."""
    logged = predictions[predictions["kind"] == kind].set_index("id")["y_pred"]
    pairs = [(labels[i], logged[str(i)]) for i in range(first, last)
             if str(i) in logged.index and pd.notna(logged[str(i)])]
    return [y for y, _ in pairs], [p for _, p in pairs]


@pytest.mark.parametrize("kind", ["initial", "final"])
def test_class_measures_equal_sklearn_on_stored_predictions(waveform_run, kind):
    labels, predictions, summary, curves = waveform_run
    rows = curves[(curves["category"] == kind) & curves["metric"].isin(list(SKLEARN))]
    points = sorted(set(rows["labels"]))
    assert points[-1] == N and len(points) >= N // EVERY
    checked = 0
    for window, first_of in (("cumulative", lambda end: 0),
                             (f"w={WINDOW}", lambda end: max(0, end - WINDOW))):
        for end in points:
            y, p = _stored(predictions, kind, labels, first_of(end), end)
            at = rows[(rows["window"] == window) & (rows["labels"] == end)]
            assert len(at) == len(SKLEARN), (window, end)
            for metric, value, n in zip(at["metric"], at["value"], at["n"]):
                assert n == len(y)
                assert value == pytest.approx(SKLEARN[metric](y, p), rel=1e-12, abs=1e-15), \
                    (window, end, metric)
                checked += 1
    assert checked == 2 * len(points) * len(SKLEARN)
    # The summary's end-of-stream rows are the last curve point's.
    y, p = _stored(predictions, kind, labels, 0, N)
    end = summary[(summary["category"] == kind) & (summary["window"] == "cumulative")]
    for metric, value in zip(end["metric"], end["value"]):
        if metric in SKLEARN:
            assert value == pytest.approx(SKLEARN[metric](y, p), rel=1e-12, abs=1e-15)


def test_class_measures_equal_river_progressive_val_score():
    """river's delayed progressive validation with its multiclass metrics, on the same stream."""
    n, delay = 2000, 30
    river_metrics = {"macro_f1": metrics.MacroF1(), "macro_precision": metrics.MacroPrecision(),
                     "macro_recall": metrics.MacroRecall(), "weighted_f1": metrics.WeightedF1(),
                     "weighted_precision": metrics.WeightedPrecision(),
                     "weighted_recall": metrics.WeightedRecall(), "micro_f1": metrics.MicroF1(),
                     "balanced_accuracy": metrics.BalancedAccuracy(),
                     "gmean": metrics.GeometricMean()}
    evaluate.progressive_val_score(itertools.islice(datasets.synth.Waveform(seed=5), n),
                                   naive_bayes.GaussianNB(),
                                   metrics.base.Metrics(list(river_metrics.values())), delay=delay)
    summary = evaluate_locally(f'synth:Waveform{{"n": {n}, "seed": 5}}', "gaussian-nb",
                               str(delay), final=False).summary
    ours = summary[(summary["category"] == "initial") & (summary["window"] == "cumulative")]
    ours = dict(zip(ours["metric"], ours["value"]))
    for name, metric in river_metrics.items():
        assert ours[name] == pytest.approx(metric.get(), rel=1e-12), name


def test_mcc_equals_river_on_a_binary_stream():
    """river's MCC is the binary one (of its positive class); for two classes it is the
    K-class MCC, whichever class is positive."""
    n, delay = 2000, 30
    mcc = metrics.MCC()
    stream = itertools.islice(datasets.synth.Agrawal(classification_function=4, seed=3), n)
    evaluate.progressive_val_score(stream, naive_bayes.GaussianNB(), mcc, delay=delay)
    summary = evaluate_locally(
        f'synth:Agrawal{{"n": {n}, "seed": 3, "classification_function": 4}}', "gaussian-nb",
        str(delay), final=False).summary
    ours = summary[(summary["category"] == "initial") & (summary["window"] == "cumulative")
                   & (summary["metric"] == "mcc")]
    assert float(ours["value"].iloc[0]) == pytest.approx(mcc.get(), rel=1e-12)


def test_faded_class_measures_weigh_each_label_by_its_age():
    """With a fading factor α, every count is Σ α^(age) over its labels: the measures of those
    weighted counts, by a plain loop here (sklearn with sample weights α^age)."""
    n, delay, alpha = 600, 20, 0.99
    result = evaluate_locally(f'synth:Waveform{{"n": {n}, "seed": 2}}', "gaussian-nb",
                              str(delay), final=False, fadings=(alpha,))
    rows = result.summary[(result.summary["category"] == "initial")
                          & (result.summary["window"] == f"fading={alpha!r}")]
    ours = dict(zip(rows["metric"], rows["value"]))
    data = list(itertools.islice(datasets.synth.Waveform(seed=2), n))
    model, pairs = naive_bayes.GaussianNB(), []
    for j, (x, y) in enumerate(data):
        if j >= delay:
            model.learn_one(*data[j - delay])
        pairs.append((y, model.predict_one(x)))
    # Label order: instance order (a fixed delay; the last labels come after the stream ends).
    labelled = pairs
    weights = np.array([alpha ** (len(labelled) - 1 - i) for i in range(len(labelled))])
    scored = [i for i, (_, p) in enumerate(labelled) if p is not None]
    y = [labelled[i][0] for i in scored]
    p = [labelled[i][1] for i in scored]
    w = weights[scored]
    assert ours["macro_f1"] == pytest.approx(
        sk.f1_score(y, p, average="macro", sample_weight=w, zero_division=0), rel=1e-9)
    assert ours["weighted_recall"] == pytest.approx(
        sk.recall_score(y, p, average="weighted", sample_weight=w, zero_division=0), rel=1e-9)
    assert ours["balanced_accuracy"] == pytest.approx(
        sk.balanced_accuracy_score(y, p, sample_weight=w), rel=1e-9)
    assert ours["gmean"] == pytest.approx(_gmean(y, p, sample_weight=w), rel=1e-9)
    assert ours["mcc"] == pytest.approx(sk.matthews_corrcoef(y, p, sample_weight=w), rel=1e-9)


@pytest.mark.parametrize("kind", ["initial", "final"])
def test_per_class_measures_and_confusion_matrix_equal_sklearn(waveform_run, kind):
    """Each class's precision, recall and F1 (named as the log names classes), at every curve
    point of the cumulative and windowed views, and the confusion matrix at the end."""
    labels, predictions, summary, curves = waveform_run
    rows = curves[(curves["category"] == kind) & curves["metric"].isin(["precision", "recall",
                                                                          "f1"])]
    functions = {"precision": sk.precision_score, "recall": sk.recall_score, "f1": sk.f1_score}
    checked = 0
    for window, first_of in (("cumulative", lambda end: 0),
                             (f"w={WINDOW}", lambda end: max(0, end - WINDOW))):
        for end in sorted(set(rows["labels"])):
            y, p = _stored(predictions, kind, labels, first_of(end), end)
            classes = sorted(set(y) | set(p))
            at = rows[(rows["window"] == window) & (rows["labels"] == end)]
            assert sorted(set(at["class"])) == classes
            for metric, function in functions.items():
                expected = function(y, p, labels=classes, average=None, zero_division=0)
                got = at[at["metric"] == metric].set_index("class")["value"]
                assert got[classes].tolist() == pytest.approx(expected.tolist(), rel=1e-12)
                checked += 1
    assert checked >= 2 * 3 * (N // EVERY)
    y, p = _stored(predictions, kind, labels, 0, N)
    classes = sorted(set(y) | set(p))
    from scipy.stats import binomtest

    end = summary[(summary["category"] == kind) & (summary["window"] == "cumulative")]
    for c in classes:  # Wilson intervals of each class's precision (of its predictions) and recall
        hits = sum(a == b == c for a, b in zip(y, p))
        for measure, trials in (("precision", p.count(c)), ("recall", y.count(c))):
            want = binomtest(hits, trials).proportion_ci(method="wilson")
            got = end[end["class"] == c].set_index("metric")["value"]
            assert got[f"{measure}_wilson_low"] == pytest.approx(want.low, rel=1e-9)
            assert got[f"{measure}_wilson_high"] == pytest.approx(want.high, rel=1e-9)
    cells = summary[(summary["category"] == kind) & (summary["metric"] == "confusion")]
    expected = sk.confusion_matrix(y, p, labels=classes)
    # Written: every diagonal cell and each other cell with a count; one left out is a zero.
    written = {(classes[i], classes[j]) for i, j in zip(*np.nonzero(expected))} | \
        {(c, c) for c in classes}
    assert set(zip(cells["class"], cells["predicted"])) == written
    assert len(cells) == len(written)
    matrix = cells.pivot(index="class", columns="predicted", values="value")
    assert matrix.loc[classes, classes].fillna(0).to_numpy().tolist() == expected.tolist()
    assert set(cells["n"]) == {len(y)}


def test_wilson_interval_of_the_accuracy_equals_scipys(waveform_run):
    """At every curve point, cumulative and windowed: scipy's Wilson interval of the correct
    predictions among the stored ones."""
    from scipy.stats import binomtest

    labels, predictions, _, curves = waveform_run
    rows = curves[(curves["category"] == "initial")]
    checked = 0
    for window, first_of in (("cumulative", lambda end: 0),
                             (f"w={WINDOW}", lambda end: max(0, end - WINDOW))):
        for end in sorted(set(rows["labels"])):
            y, p = _stored(predictions, "initial", labels, first_of(end), end)
            want = binomtest(sum(a == b for a, b in zip(y, p)), len(y)).proportion_ci(
                method="wilson")
            at = rows[(rows["window"] == window) & (rows["labels"] == end)]
            got = dict(zip(at["metric"], at["value"]))
            assert got["accuracy_wilson_low"] == pytest.approx(want.low, rel=1e-9)
            assert got["accuracy_wilson_high"] == pytest.approx(want.high, rel=1e-9)
            checked += 1
    assert checked == 2 * len(set(rows["labels"]))


def test_r2_and_mape_equal_sklearn_and_river():
    """A regressor's R² and MAPE: scikit-learn's on its predictions (cumulative, and a sliding
    window at the end), river's R2 and MAPE (in percent there) on the same stream."""
    n, delay, window = 1500, 40, 400
    spec = "river.preprocessing.StandardScaler | river.linear_model.LinearRegression"
    result = evaluate_locally(f'synth:Friedman{{"n": {n}, "seed": 4}}', spec, str(delay),
                              final=False, windows=(window,))
    rows = result.summary[result.summary["category"] == "initial"]
    ours = {(w, m): v for w, m, v in zip(rows["window"], rows["metric"], rows["value"])}
    from river import compose, linear_model, preprocessing

    model = compose.Pipeline(preprocessing.StandardScaler(), linear_model.LinearRegression())
    data = list(itertools.islice(datasets.synth.Friedman(seed=4), n))
    pairs = []
    for j, (x, y) in enumerate(data):  # river's delayed progressive validation, by hand
        if j >= delay:
            model.learn_one(*data[j - delay])
        pairs.append((y, model.predict_one(x)))
    assert all(y != 0 for y, _ in pairs)  # MAPE's zero targets: none here
    for view, part in (("cumulative", pairs), (f"w={window}", pairs[-window:])):
        y, p = zip(*part)
        assert ours[(view, "r2")] == pytest.approx(sk.r2_score(y, p), rel=1e-10)
        assert ours[(view, "mape")] == pytest.approx(
            sk.mean_absolute_percentage_error(y, p), rel=1e-12)
        errors = np.abs(np.subtract(y, p))
        for name, q in (("abs_error_p50", 0.5), ("abs_error_p90", 0.9), ("abs_error_p99", 0.99)):
            # The sketch's promise: within 0.5 % of the value at rank ⌊q(n − 1)⌋.
            assert ours[(view, name)] == pytest.approx(np.quantile(errors, q, method="lower"),
                                                       rel=0.005), (view, name)
    r2, mape = metrics.R2(), metrics.MAPE()
    evaluate.progressive_val_score(iter(data), compose.Pipeline(
        preprocessing.StandardScaler(), linear_model.LinearRegression()), r2 + mape,
        delay=delay)
    assert ours[("cumulative", "r2")] == pytest.approx(r2.get(), rel=1e-10)
    assert 100 * ours[("cumulative", "mape")] == pytest.approx(mape.get(), rel=1e-12)


def test_faded_r2_of_targets_far_from_zero_equals_sklearns_weighted_r2(tmp_path):
    """Faded sums are floats: Σy² − (Σy)²/n of targets near 10⁹ that vary by a few units
    cancels to rounding noise (read as a constant target's 0, or as an arbitrary R²), and one
    label's spread is rounding noise rather than 0. At every label, the faded R² is
    scikit-learn's R² with weights α^age (its two-pass spread), and with one label or a
    constant target its rule: 1 if every prediction is right, else 0."""
    alpha, n = 0.9, 60
    y = [1e9 + (7 * i % 5) + 0.25 * (i % 3) for i in range(n)]
    path = tmp_path / "prices.csv"
    pd.DataFrame({"x": np.zeros(n), "label": y}).to_csv(path, index=False)
    result = evaluate_locally(str(path), "no-change-regressor", "1",
                              final=False, fadings=(alpha,), curve_every=1)
    curves = result.curves
    r2 = curves[(curves["category"] == "initial") & (curves["window"] == f"fading={alpha!r}")
                & (curves["metric"] == "r2")].set_index("labels")["value"]
    # no-change predicts the label before (none before the first: unscored)
    pairs = [(y[i], y[i - 1]) for i in range(1, n)]
    checked = 0
    for labels in range(2, n + 1):
        yt, yp = map(np.array, zip(*pairs[:labels - 1]))
        weights = alpha ** np.arange(len(yt) - 1, -1, -1.0)
        expected = (1.0 if (yt == yp).all() else 0.0) if len(set(yt)) == 1 else \
            sk.r2_score(yt, yp, sample_weight=weights)
        assert r2[labels] == pytest.approx(expected, rel=1e-6, abs=1e-9), labels
        checked += 1
    assert checked == n - 1 and r2[2] == 0.0 and r2[n] < 0  # one label, wrong; then a spread


def test_an_error_whose_square_overflows_leaves_the_faded_rmse_infinite(tmp_path):
    """A regressor's error of 10²⁰⁰ squares beyond the floats: from that label on, the RMSE is
    ∞ in every view, as α^k·∞ is, and the faded MAE stays the weighted mean of the errors
    (scikit-learn's with weights α^age); the faded sums neither stop the run nor turn NaN."""
    alpha, y = 0.9, [1.0, 2.0, 1e200, 3.0, 4.0, 5.0, 6.0]
    path = tmp_path / "diverging.csv"
    pd.DataFrame({"x": np.zeros(len(y)), "label": y}).to_csv(path, index=False)
    result = evaluate_locally(str(path), "no-change-regressor", "1", final=False,
                              fadings=(alpha,), curve_every=1)
    curves = result.curves[result.curves["category"] == "initial"]

    def at(window, metric):
        rows = curves[(curves["window"] == window) & (curves["metric"] == metric)]
        return rows.set_index("labels")["value"]

    faded = f"fading={alpha!r}"
    pairs = [(y[i], y[i - 1]) for i in range(1, len(y))]  # the label before (none at first)
    for labels in range(2, len(y) + 1):
        yt, yp = map(np.array, zip(*pairs[:labels - 1]))
        weights = alpha ** np.arange(len(yt) - 1, -1, -1.0)
        assert at(faded, "mae")[labels] == pytest.approx(
            sk.mean_absolute_error(yt, yp, sample_weight=weights), rel=1e-12)
        for window in ("cumulative", faded):
            rmse = at(window, "rmse")[labels]
            assert rmse == math.inf if labels >= 3 else rmse == pytest.approx(1.0), \
                (window, labels, rmse)


def test_errors_beyond_the_floats_are_infinite_in_every_measure_and_left_out_of_figures(
        tmp_path):
    """Targets near ±10³⁰⁸ that a baseline misses by more than the floats hold: each such
    error is ∞ (not an internal error), so MAE, RMSE and the error quantiles the loop below
    finds are ∞ or the value of that rank; two models are compared (their loss differences
    ∞ − ∞: undefined); the report is written, its figures leaving ∞ out."""
    from pipelines.report import write_report

    y = [1.0, 1e308, -1e308, 2.0, 3.0, -1.7e308, 1.7e308, 4.0] * 5
    path = tmp_path / "extreme.csv"
    pd.DataFrame({"x": np.zeros(len(y)), "label": y}).to_csv(path, index=False)
    out = tmp_path / "out"
    summary = run(RunConfig(streams=[f"s={path}"], models=["no-change-regressor",
                                                             "mean-regressor"],
                            delay="1", fadings=[0.9], windows=[3], out=str(out), quiet=True,
                            runner="direct"))
    rows = summary[(summary["model"] == "no-change-regressor") & (summary["category"] ==
                                                                  "initial")]
    with np.errstate(over="ignore"):
        errors = np.abs(np.subtract(y[1:], y[:-1]))  # no-change: the label before
    assert np.isinf(errors).any() and np.isfinite(errors).any()
    for window, part in (("cumulative", errors), ("w=3", errors[-3:])):
        ours = rows[rows["window"] == window].set_index("metric")["value"]
        assert np.isinf(part).any() and ours["mae"] == math.inf
        assert ours["rmse"] == math.inf
        for name, q in (("abs_error_p50", 0.5), ("abs_error_p90", 0.9), ("abs_error_p99", 0.99)):
            expected = np.quantile(part, q, method="lower")
            assert ours[name] == expected if math.isinf(expected) else \
                ours[name] == pytest.approx(expected, rel=0.005), (window, name)
    faded = rows[rows["window"] == "fading=0.9"].set_index("metric")["value"]
    assert faded["rmse"] == faded["mae"] == math.inf
    pair = summary[(summary["category"] == "comparison") & (summary["window"] == "cumulative")
                   & (summary["metric"] == "diebold_mariano")]
    assert len(pair) and pair["value"].isna().all()
    assert os.path.exists(write_report(str(out)))


def test_error_quantiles_merge_in_any_order_and_windows_subtract_exactly():
    from metrics.quantiles import QuantileSketch

    rng = np.random.default_rng(3)
    errors = np.concatenate([np.abs(rng.standard_cauchy(3000)), np.zeros(40)])
    whole, parts = QuantileSketch(), [QuantileSketch() for _ in range(4)]
    whole.add_many(errors)
    for i, part in enumerate(parts):
        part.add_many(errors[i::4])
    merged = parts[3].merge(parts[1]).merge(parts[0]).merge(parts[2])
    assert merged.to_dict() == whole.to_dict()
    for q in (0.0, 0.01, 0.25, 0.5, 0.9, 0.99, 1.0):
        exact = np.quantile(errors, q, method="lower")
        assert whole.quantile(q) == pytest.approx(exact, rel=0.005, abs=0.0), q
    head, tail = QuantileSketch(), QuantileSketch()
    head.add_many(errors[:1000])
    tail.add_many(errors[1000:])
    assert whole.subtract(head).to_dict() == tail.to_dict()


def test_mape_leaves_out_zero_targets():
    from metrics import RegressionScore

    s = RegressionScore()
    s.update_many([2.0, 0.0, 4.0], [1.0, 3.0, 5.0])  # |e|/|y|: 1/2, (none), 1/4
    assert s.mape == (0.5 + 0.25) / 2 and s.mae == (1 + 3 + 1) / 3


def test_terminal_table_shows_the_positive_class_of_a_binary_task(tmp_path, capsys):
    """A rare class is the default positive one; `{"positive": ...}` names another; a class
    that is not declared is refused before the run."""
    from pipelines.cli import main

    rng = np.random.default_rng(5)
    x = rng.normal(size=3000)
    fraud = (x + rng.normal(scale=0.5, size=3000)) > 2.0  # ~3 % positives
    path = tmp_path / "tx.csv"
    pd.DataFrame({"x": x, "label": np.where(fraud, "fraud", "ok")}).to_csv(path, index=False)

    def table(stream):
        out = tmp_path / f"out{len(list(tmp_path.iterdir()))}"
        assert main(["run", "--stream", stream, "--model", "gaussian-nb", "--delay", "20",
                     "--repredict", "none", "--out", str(out), "--runner", "direct"]) == 0
        printed = capsys.readouterr().out
        summary = read_csv(out / "summary.csv", dtype={"class": str, "predicted": str})
        return printed, summary

    printed, summary = table(f"tx={path}")
    row = summary[(summary["category"] == "initial") & (summary["window"] == "cumulative")
                  & (summary["metric"] == "recall") & (summary["class"] == "fraud")]
    value = float(row["value"].iloc[0])
    line = next(x for x in printed.splitlines() if "initial recall (fraud)" in x)
    assert f"{value:.4f}" in line
    assert "initial precision (fraud)" in printed and "final f1 (fraud)" in printed
    printed, _ = table(f'tx={path}{{"positive": "ok"}}')
    assert "initial recall (ok)" in printed and "(fraud)" not in printed
    assert main(["run", "--stream", f'tx={path}{{"classes": ["ok", "fraud"], '
                                    f'"positive": "yes"}}', "--model", "gaussian-nb",
                 "--out", str(tmp_path / "refused"), "--runner", "direct"]) == 2
    assert "the positive class 'yes' is not one of the declared classes" in \
        capsys.readouterr().err
    # Labels written 1.0/0.0 (as a label column with an empty cell is written and read): the
    # class 1 is the positive one, though 0 is the rarer one here (it took the rarer one).
    floats = tmp_path / "floats.csv"
    labels = np.where(fraud, 0.0, 1.0)
    pd.DataFrame({"x": x, "label": labels}).to_csv(floats, index=False)
    printed, _ = table(f"tx={floats}")
    assert "initial recall (1)" in printed and "(0)" not in printed


def test_wilson_interval_of_a_faded_count_near_zero_is_the_whole_range():
    """A class no longer predicted keeps a faded count that decays towards 0 (0.999^700 000 is
    ~1e-304): its interval tends to [0, 1] — by hand, the centre (s + z²/2) / (n + z²) tends to
    1/2 and the half-width z·√(s(n − s)/n + z²/4) / (n + z²) to z·(z/2)/z² = 1/2 — and is never
    an error."""
    from metrics.classification import wilson_interval

    for n in (1e-300, 1e-310, 5e-324):
        for successes in (n, 0.0):
            assert wilson_interval(successes, n) == pytest.approx((0.0, 1.0))


def test_curves_keep_the_first_twenty_classes_and_the_summary_every_class(tmp_path):
    """With 30 classes, per-class rows and confusion cells at every curve point would be
    ~7·30 rows and 900 cells a point and view: the curves keep those of the first 20 classes
    (index order: the order their labels first came), whole; the summary keeps every class,
    and its values are the curves' last point's."""
    from pipelines.config import RunConfig
    from pipelines.job import run

    rng = np.random.default_rng(2)
    n, k = 3000, 30
    codes = np.concatenate([np.arange(k), rng.integers(0, k, n - k)])
    x = codes + rng.normal(0, 2, n)
    labels = [f"c{c:02d}" for c in codes]
    pd.DataFrame({"time": np.arange(n), "x": x, "label": labels}).to_csv(
        tmp_path / "many.csv", index=False)
    kw = dict(streams=[str(tmp_path / "many.csv")], delay="50", repredict="none", windows=[500],
              quiet=True, runner="direct", run_id="same")
    run(RunConfig(models=["gaussian-nb"], out=str(tmp_path / "o"), **kw))
    summary = read_csv(tmp_path / "o" / "summary.csv", dtype={"class": str, "predicted": str})
    curves = pd.read_parquet(tmp_path / "o" / "curves.parquet")
    first = list(dict.fromkeys(labels))[:20]
    assert set(curves["class"].dropna()) == set(first)
    assert set(curves["predicted"].dropna()) <= set(first)
    recall = summary[(summary["metric"] == "recall") & (summary["category"] == "initial")
                     & (summary["window"] == "cumulative")]
    assert set(recall["class"]) == set(labels)
    cells = summary[(summary["metric"] == "confusion") & (summary["category"] == "initial")]
    assert set(cells["class"]) == set(cells["predicted"]) == set(labels)
    assert ((cells["value"] > 0) | (cells["class"] == cells["predicted"])).all()
    assert cells["value"].sum() == recall["n"].iloc[0]
    at_end = curves[(curves["labels"] == curves["labels"].max()) & curves["class"].notna()]
    both = at_end.merge(summary, on=["category", "window", "metric", "class", "predicted"],
                        suffixes=("", "_summary"))
    assert len(both) == len(at_end) > 20
    assert np.array_equal(both["value"], both["value_summary"], equal_nan=True)
    # A point before the end has every kept class's rows (their series are whole).
    early = curves[(curves["labels"] == 1000) & (curves["metric"] == "recall")
                   & (curves["category"] == "initial") & (curves["window"] == "cumulative")]
    assert sorted(early["class"]) == sorted(first)
    # The backfill of the run's log keeps the same classes' rows: the same curves.
    run(RunConfig(models=[], predictions=str(tmp_path / "o"), out=str(tmp_path / "b"), **kw))
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "b" / "curves.parquet"), curves)
