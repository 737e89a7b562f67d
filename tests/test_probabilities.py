"""The measures of class probabilities (log-loss, Brier, ROC-AUC, PR-AUC, ECE and the reliability
points) equal scikit-learn's on the stored probabilities, at the end and at curve points,
cumulative and over a sliding window; river's LogLoss under delayed progressive validation; and
a plain loop for the calibration error."""

import itertools
import json
import math
import os
import re

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from river import datasets, dummy, evaluate, metrics, naive_bayes, tree
from sklearn import metrics as sk

from metrics.probabilistic import ProbabilityScore
from pipelines.cli import main
from pipelines.config import RunConfig
from pipelines.job import run
from tests.helpers import read_csv, waveform_csv
from pipelines.local import evaluate_locally
from transforms.models.naive_bayes_batch import ManyClassesGaussianNB, predict_with_proba

N, DELAY, EVERY, WINDOW = 1200, 50, 200, 300


def _probabilities(n: int, k: int, seed: int, decimals: int = 2) -> tuple:
    """Labels and probability rows with many ties (rounded) and no zeros."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    p = np.round(rng.dirichlet(np.ones(k) * 2, n), decimals) + 0.01
    return y, p / p.sum(axis=1, keepdims=True)


def _sklearn(y, p) -> dict:
    """The measures by scikit-learn (binary: of class 1, as `roc_auc_score(y, p[:, 1])`)."""
    k = p.shape[1]
    onehot = np.eye(k)[y]
    return {"log_loss": sk.log_loss(y, p, labels=list(range(k))),
            "brier": sk.brier_score_loss(y, p[:, 1]) if k == 2 else
            sk.brier_score_loss(y, p, labels=list(range(k)), scale_by_half=True),
            "roc_auc": sk.roc_auc_score(y, p[:, 1]) if k == 2 else
            sk.roc_auc_score(y, p, multi_class="ovr", average="macro"),
            "pr_auc": sk.average_precision_score(onehot, p, average="macro")}


@pytest.mark.parametrize("k", [2, 4])
def test_probability_score_equals_sklearn_merged_in_any_order(k):
    y, p = _probabilities(900, k, seed=k)
    whole = ProbabilityScore(ranked=True)
    whole.update_many(y, p)
    parts = [ProbabilityScore(ranked=True) for _ in range(3)]
    for i, part in enumerate(parts):
        part.update_many(y[i::3], p[i::3])
    merged = parts[2].merge(parts[0]).merge(parts[1])
    expected = _sklearn(y, p)
    for score in (whole, merged):
        got = score.get()
        for name, value in expected.items():
            assert got[name] == pytest.approx(value, rel=1e-12), name
    for c in range(k):  # one against the rest
        assert whole.class_measures()[("roc_auc", c)] == pytest.approx(
            sk.roc_auc_score(y == c, p[:, c]), rel=1e-12)
        assert whole.class_measures()[("average_precision", c)] == pytest.approx(
            sk.average_precision_score(y == c, p[:, c]), rel=1e-12)
    assert merged.get() == whole.get()


def test_a_window_made_by_subtraction_equals_its_labels_scored_alone():
    y, p = _probabilities(600, 3, seed=7)
    everything, head, tail = (ProbabilityScore(ranked=True) for _ in range(3))
    everything.update_many(y, p)
    head.update_many(y[:250], p[:250])
    tail.update_many(y[250:], p[250:])
    window = everything.subtract(head)
    assert window.get() == tail.get()
    assert window.reliability() == tail.reliability()
    assert window.n == 350


def _late_class_rows(n: int, seed: int) -> tuple:
    """Labels of 3 classes, class 2 first a label two thirds in, and rows as a model gives
    them: a class it has not seen named in no row (so rows widen), as a list of rows."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    y[2 * n // 3:][rng.random(n - 2 * n // 3) < 0.4] = 2
    rows = []
    for i in range(n):
        seen = 1 + int(y[:i].max(initial=0))
        rows.append(np.round(rng.dirichlet(np.ones(seen)), 1).tolist())  # rounded: ties
    return y, rows


def test_a_class_named_late_ranks_every_label_before_it_as_a_negative_at_zero():
    """Rows give 0 to a class they do not name: a class first named in a later block (a
    streaming drain, a window's head) ranks the labels scored before it too, whatever the
    blocks and however they are merged or subtracted. Oracle: scikit-learn on the rows
    padded with zeros."""
    y, rows = _late_class_rows(300, seed=4)
    padded = np.array([row + [0.0] * (3 - len(row)) for row in rows])
    weights = np.random.default_rng(4).poisson(1.0, (300, 4))  # bootstrap replicates

    def scored(first, last, cut):
        score = ProbabilityScore(ranked=True)
        for a, b in itertools.pairwise([first, *cut, last]):
            width = max(len(r) for r in rows[a:b])
            score.update_many(y[a:b], [r + [0.0] * (width - len(r)) for r in rows[a:b]],
                              weights[a:b])
        return score

    def expected(first, last):
        yy, pp = y[first:last], padded[first:last]
        return {c: (sk.roc_auc_score(yy == c, pp[:, c]), sk.average_precision_score(
            yy == c, pp[:, c])) for c in range(3) if (yy == c).any() and (yy != c).any()}

    def replicate_roc_auc(first, last, r):
        yy, pp, w = y[first:last], padded[first:last], weights[first:last, r]
        return np.mean([sk.roc_auc_score(yy == c, pp[:, c], sample_weight=w) for c in range(3)
                        if w[yy == c].sum() and w[yy != c].sum()])

    cuts = [2, 150, 210, 250, 290]  # class 2 first named at 201
    for score, (first, last) in [
            (scored(0, 300, cuts), (0, 300)),
            (scored(210, 300, cuts[3:]).merge(scored(0, 210, cuts[:2])), (0, 300)),
            (scored(0, 210, []).merge(scored(210, 300, [])), (0, 300)),
            (scored(0, 300, cuts).subtract(scored(0, 150, cuts[:1])), (150, 300))]:
        got = score.class_measures()
        want = expected(first, last)
        assert sorted(c for _, c in got) == sorted(2 * list(want))
        for c, (auc, ap) in want.items():
            assert got[("roc_auc", c)] == pytest.approx(auc, rel=1e-12), c
            assert got[("average_precision", c)] == pytest.approx(ap, rel=1e-12), c
        assert score.replicates()["roc_auc"] == pytest.approx(
            [replicate_roc_auc(first, last, r) for r in range(weights.shape[1])], rel=1e-12)


@pytest.mark.parametrize("replay", [{"replay": "stateful", "timer_bucket": 50.0},
                                    {"replay": "grouped", "chunk_size": 64}])
def test_a_class_first_seen_in_a_later_block_is_scored_on_every_label(tmp_path, replay):
    """Streaming (`--replay stateful` with a timer bucket) scores each drain as it comes, the
    grouped replay blocks of labels: a class first a label in a later block ranks the labels
    before it too. Oracle: scikit-learn on the stored probabilities (0 for a class a row does
    not name) at every curve point, cumulative and windowed."""
    n, window, classes = 900, 300, ["a", "b", "c"]
    y, _ = _late_class_rows(n, seed=1)
    rng = np.random.default_rng(1)
    path = tmp_path / "late.csv"
    pd.DataFrame({"time": np.arange(n), "x": rng.normal(size=n) + y,
                  "label": [classes[c] for c in y]}).to_csv(path, index=False)
    out = tmp_path / "out"
    run(RunConfig(streams=[f"s={path}"], models=["nb=gaussian-nb"], delay="20",
                  repredict="none", final=False, curve_every=50, windows=[window], auc=True,
                  out=str(out), quiet=True, runner="direct", **replay))
    logged = pd.read_parquet(out / "predictions.parquet").set_index("id")["proba"]
    curves = pd.read_parquet(out / "curves.parquet")
    rows = curves[(curves["category"] == "initial") & (curves["metric"] == "roc_auc")]
    assert set(rows["class"].dropna()) == set(classes)
    for window_name, labels, c, value in zip(rows["window"], rows["labels"], rows["class"],
                                             rows["value"]):
        first = 0 if window_name == "cumulative" else max(0, labels - window)
        ids = [i for i in range(first, labels) if logged.get(str(i)) is not None]
        yy = y[ids]  # a fixed delay: labels arrive in instance order
        pp = np.array([[dict(logged[str(i)]).get(name, 0.0) for name in classes] for i in ids])
        present = [k for k in range(3) if (yy == k).any() and (yy != k).any()]
        aucs = {k: sk.roc_auc_score(yy == k, pp[:, k]) for k in present}
        want = np.mean(list(aucs.values())) if pd.isna(c) else aucs[classes.index(c)]
        assert value == pytest.approx(want, rel=1e-9), (window_name, labels, c)


def test_a_copy_of_a_score_keeps_its_labels_measures_while_the_score_takes_more():
    """Curves keep a copy of every bin's score at each block (a window is a difference of two):
    a copy that shared a count with its score moved with it."""
    import copy

    y, p = _probabilities(600, 3, seed=5)
    score = ProbabilityScore(ranked=True)
    score.update_many(y[:250], p[:250])
    kept = copy.deepcopy(score)
    score.update_many(y[250:], p[250:])
    expected = _sklearn(y[:250], p[:250])
    got = kept.get()
    for name, value in expected.items():
        assert got[name] == pytest.approx(value, rel=1e-12), name
    confidence = p[:250].max(axis=1)
    assert sum(count for _, _, count in kept.reliability().values()) == kept.n == 250
    assert sum(c * count for c, _, count in kept.reliability().values()) == \
        pytest.approx(confidence.sum(), rel=1e-12)
    assert sum(a * count for _, a, count in kept.reliability().values()) == \
        pytest.approx((p[:250].argmax(axis=1) == y[:250]).sum(), rel=1e-12)


def test_calibration_error_equals_a_plain_loop():
    y, p = _probabilities(500, 3, seed=11, decimals=3)
    score = ProbabilityScore(ranked=True)
    score.update_many(y, p)
    bins = {m: [] for m in range(10)}
    for label, row in zip(y.tolist(), p.tolist()):
        confidence = max(row)
        top = row.index(confidence)
        m = min(max(math.ceil(confidence * 10) - 1, 0), 9)  # (m/10, (m+1)/10]
        bins[m].append((confidence, top == label))
    expected = sum(abs(sum(h for _, h in b) - sum(c for c, _ in b)) for b in bins.values()) / 500
    assert score.ece == pytest.approx(expected, rel=1e-12)
    points = {m + 1: (sum(c for c, _ in b) / len(b), sum(h for _, h in b) / len(b), len(b))
              for m, b in bins.items() if b}
    assert score.reliability().keys() == points.keys()
    for m, (confidence, accuracy, count) in score.reliability().items():
        assert confidence == pytest.approx(points[m][0], rel=1e-12)
        assert (accuracy, count) == pytest.approx(points[m][1:])


def test_log_loss_clamps_as_river_and_a_missing_class_has_probability_zero():
    score = ProbabilityScore(ranked=True)
    score.update_many([2, 0], [[1.0, 0.0], [1.0, 0.0]])  # class 2 never named: p = 0
    assert score.log_loss == pytest.approx((-math.log(1e-15) - math.log(1 - 1e-15)) / 2)
    assert score.width == 3


def test_brier_has_one_scale_whatever_classes_a_score_has_seen():
    # One prediction, P(a) = 0.7, P(b) = 0.3, label b, in a stream of classes a, b, c: by hand
    # ½ · ((0.7 − 0)² + (0.3 − 1)² + 0²) = 0.49, whether the row names c or not yet, and whether
    # a score saw a label of c (the first labels of a stream, or a segment, may see two of three).
    two_wide, three_wide, with_c = ProbabilityScore(), ProbabilityScore(), ProbabilityScore()
    two_wide.update_many([1], [[0.7, 0.3]])
    three_wide.update_many([1], [[0.7, 0.3, 0.0]])
    with_c.update_many([1, 2], [[0.7, 0.3, 0.0], [0.0, 0.0, 1.0]])
    assert two_wide.brier == three_wide.brier == pytest.approx(0.49, abs=1e-15)
    assert with_c.brier == pytest.approx(0.49 / 2, abs=1e-15)
    assert two_wide.merge(three_wide).brier == pytest.approx(0.49, abs=1e-15)


@pytest.mark.parametrize("model", [naive_bayes.GaussianNB, tree.HoeffdingTreeClassifier])
def test_class_and_probabilities_equal_predict_one_and_predict_proba_one(model):
    """At every stage of learning, on a 3-class stream of 21 features: the class is
    predict_one's, the probabilities predict_proba_one's (naive Bayes: normalised without
    scipy, to 1e-12; the 63 classes × features are past where GaussianNB is read as arrays)."""
    m = model()
    predict = predict_with_proba(m)
    if model is naive_bayes.GaussianNB:
        assert type(predict) is ManyClassesGaussianNB and 3 * 21 >= predict.MANY
    for x, y in itertools.islice(datasets.synth.Waveform(seed=1), 400):
        label, proba = predict(x)
        assert label == m.predict_one(x)
        expected = m.predict_proba_one(x)
        assert (proba or {}).keys() == expected.keys()
        for c, value in expected.items():
            assert proba[c] == pytest.approx(value, rel=1e-12, abs=1e-300)
        m.learn_one(x, y)


class _LogLossOfTheLabel(metrics.base.MeanMetric, metrics.base.MultiClassMetric):
    """−log p_y, p_y clamped with river's own clamp to [1e-15, 1 − 1e-15] (river's LogLoss
    clamps P(True) and takes 1 − P(True) for a False label; its CrossEntropy counts 0 for a
    class the prediction does not name): the definition documented in docs/semantics.md."""

    def _eval(self, y_true, y_pred):
        return -math.log(self._clamp_proba(y_pred.get(y_true, 0.0)))

    @property
    def bigger_is_better(self):
        return False

    @property
    def requires_labels(self):
        return False


@pytest.mark.parametrize("stream, spec", [
    (lambda n: datasets.synth.Agrawal(classification_function=2, seed=4),
     'synth:Agrawal{{"n": {n}, "seed": 4, "classification_function": 2}}'),
    (lambda n: datasets.synth.Waveform(seed=4), 'synth:Waveform{{"n": {n}, "seed": 4}}')])
def test_log_loss_equals_river_progressive_val_score(stream, spec):
    """river's delayed progressive validation (which predictions are made when, and an
    untrained model's empty prediction skipped by both) with the log-loss of the label."""
    n, delay = 2000, 30
    log_loss = _LogLossOfTheLabel()
    evaluate.progressive_val_score(itertools.islice(stream(n), n), naive_bayes.GaussianNB(),
                                   log_loss, delay=delay)
    summary = evaluate_locally(spec.format(n=n), "gaussian-nb", str(delay), final=False).summary
    ours = summary[(summary["category"] == "initial") & (summary["window"] == "cumulative")
                   & (summary["metric"] == "log_loss")]
    assert float(ours["value"].iloc[0]) == pytest.approx(log_loss.get(), rel=1e-12)


def test_majority_gives_the_prior_as_river_and_moa_do():
    """The majority baseline's probabilities are the classes' shares of the labels learned so
    far (MOA's MajorityClass votes its class counts; river's PriorClassifier): its log-loss
    under delay is river's PriorClassifier's in delayed progressive validation."""
    n, delay = 2000, 30
    log_loss = _LogLossOfTheLabel()
    evaluate.progressive_val_score(
        itertools.islice(datasets.synth.Waveform(seed=4), n), dummy.PriorClassifier(),
        log_loss, delay=delay)
    summary = evaluate_locally(f'synth:Waveform{{"n": {n}, "seed": 4}}', "majority",
                               str(delay), final=False).summary
    ours = summary[(summary["category"] == "initial") & (summary["window"] == "cumulative")
                   & (summary["metric"] == "log_loss")]
    assert float(ours["value"].iloc[0]) == pytest.approx(log_loss.get(), rel=1e-12)
    # (about the entropy of three ~equal classes, ln 3; a sure prediction's would be ~20)
    assert 1 < log_loss.get() < 1.2


@pytest.fixture(scope="session")  # (computed once per test process)
def waveform_run(tmp_path_factory):
    """A 3-class stream written to CSV, run with a fixed label delay, its results read back."""
    folder = tmp_path_factory.mktemp("waveform")
    path, labels = waveform_csv(folder, N, seed=3)
    out = os.path.join(folder, "out")
    run(RunConfig(streams=[f"w={path}"], models=["nb=gaussian-nb"], delay=str(DELAY),
                  repredict="none", windows=[WINDOW], curve_every=EVERY, out=out, quiet=True,
                  runner="direct", auc=True))
    return labels, pd.read_parquet(os.path.join(out, "predictions.parquet")), \
        read_csv(os.path.join(out, "summary.csv")), \
        pd.read_parquet(os.path.join(out, "curves.parquet"))


def _stored(predictions: pd.DataFrame, kind: str, labels: list, first: int, last: int):
    """(class indices, probability rows) of instances first..last−1 (labelled in that order:
    a fixed delay) whose `kind` prediction kept probabilities, from the stored log."""
    classes = sorted(set(labels))
    logged = predictions[predictions["kind"] == kind].set_index("id")["proba"]
    y, p = [], []
    for i in range(first, last):
        proba = logged.get(str(i))
        if proba is None:
            continue
        proba = dict(proba)
        y.append(classes.index(labels[i]))
        p.append([proba.get(c, 0.0) for c in classes])
    return np.array(y), np.array(p)


def _reference(y, p) -> dict:
    """scikit-learn's measures; the log-loss by a plain loop: a model's probabilities reach
    10⁻³⁰⁰, where scikit-learn clips to float64's ε and renormalises, we to 10⁻¹⁵ (river's)."""
    return {**_sklearn(y, p), "log_loss": sum(
        -math.log(min(max(row[label], 1e-15), 1 - 1e-15)) for label, row in zip(y, p)) / len(y)}


@pytest.mark.parametrize("kind", ["initial", "final"])
def test_probability_measures_equal_sklearn_on_stored_probabilities(waveform_run, kind):
    labels, predictions, summary, curves = waveform_run
    names = ("log_loss", "brier", "roc_auc", "pr_auc")
    rows = curves[(curves["category"] == kind) & curves["metric"].isin(names)
                  & curves["class"].isna()]
    points = sorted(set(rows["labels"]))
    assert points[-1] == N and len(points) >= N // EVERY
    checked = 0
    for window, first_of in (("cumulative", lambda end: 0),
                             (f"w={WINDOW}", lambda end: max(0, end - WINDOW))):
        for end in points:
            y, p = _stored(predictions, kind, labels, first_of(end), end)
            at = rows[(rows["window"] == window) & (rows["labels"] == end)]
            assert len(at) == len(names), (window, end)
            expected = _reference(y, p)
            for metric, value, n in zip(at["metric"], at["value"], at["n"]):
                assert n == len(y)
                assert value == pytest.approx(expected[metric], rel=1e-9), (window, end, metric)
                checked += 1
    assert checked == 2 * len(points) * len(names)
    y, p = _stored(predictions, kind, labels, 0, N)
    end = summary[(summary["category"] == kind) & (summary["window"] == "cumulative")]
    per_class = end[end["metric"] == "average_precision"]
    for c, value in zip(per_class["class"], per_class["value"]):
        c = sorted(set(labels)).index(c)
        assert value == pytest.approx(sk.average_precision_score(y == c, p[:, c]), rel=1e-9)
    overall = end[end["class"].isna()].set_index("metric")["value"]
    for metric, value in _reference(y, p).items():
        assert overall[metric] == pytest.approx(value, rel=1e-9), metric


def test_rank_measures_only_with_auc():
    plain, ranked = ProbabilityScore(), ProbabilityScore(ranked=True)
    for s in (plain, ranked):
        s.update_many([1, 0, 1], [[0.2, 0.8], [0.6, 0.4], [0.3, 0.7]])
    assert plain.ranks is None and plain.class_measures() == {}
    assert set(plain.get()) == {"log_loss", "brier", "ece"}
    assert {k: v for k, v in ranked.get().items() if k in plain.get()} == plain.get()
    assert ranked.get()["roc_auc"] == 1.0


def test_without_probabilities_the_class_measures_stay_and_the_others_go(tmp_path):
    common = dict(streams=['synth:SEA{"n": 600, "seed": 2}'], models=["gaussian-nb"],
                  delay="20", repredict="none", quiet=True, runner="direct")
    run(RunConfig(**common, out=str(tmp_path / "with")))
    run(RunConfig(**common, out=str(tmp_path / "without"), probabilities=False))
    with_p = read_csv(tmp_path / "with" / "summary.csv")
    without = read_csv(tmp_path / "without" / "summary.csv")
    probability_rows = with_p["metric"].isin(["log_loss", "brier", "roc_auc", "pr_auc", "ece",
                                              "average_precision", "reliability_confidence",
                                              "reliability_accuracy"])
    assert probability_rows.any() and not without["metric"].isin(with_p.loc[
        probability_rows, "metric"]).any()
    keep = ["category", "window", "metric", "class", "predicted", "value", "n"]
    pd.testing.assert_frame_equal(with_p.loc[~probability_rows, keep].reset_index(drop=True),
                                  without[keep].reset_index(drop=True))
    logged = pd.read_parquet(tmp_path / "without" / "predictions.parquet")
    assert logged["proba"].isna().all()


@pytest.mark.parametrize("source", ["score", "score of True/False labels", "proba_columns"])
def test_backfill_reads_a_score_or_per_class_columns_and_gives_runs_numbers(tmp_path, source):
    """A user's log with the positive class's probability (the other class: 1 − it; with labels
    True/False, True's without saying so), or one column per class, scored by backfill: the
    run's probability measures."""
    stream = 's=synth:SEA{"n": 800, "seed": 5}'
    common = dict(streams=[stream], delay="40", repredict="none", quiet=True, runner="direct",
                  auc=True)
    run(RunConfig(**common, models=["nb=gaussian-nb"], out=str(tmp_path / "run")))
    logged = pd.read_parquet(tmp_path / "run" / "predictions.parquet")
    for c in ("True", "False"):
        logged[f"p_{c}"] = [dict(p).get(c, 0.0) if p is not None else None
                            for p in logged["proba"]]
    log = tmp_path / "log.csv"
    logged.drop(columns=["proba"]).to_csv(log, index=False)
    options = {"score": "p_True", "positive": "True"} if source == "score" else \
        {"score": "p_True"} if source.startswith("score") else \
        {"proba_columns": {"True": "p_True", "False": "p_False"}}
    run(RunConfig(**common, models=[], predictions=f"{log}{json.dumps(options)}",
                  out=str(tmp_path / "backfill")))
    replayed, backfilled = (read_csv(tmp_path / d / "summary.csv") for d in ("run", "backfill"))
    names = ["log_loss", "brier", "roc_auc", "pr_auc", "ece", "average_precision"]
    keys = ["category", "window", "metric", "class"]
    a, b = (df[df["metric"].isin(names)].set_index(keys)["value"] for df in (replayed, backfilled))
    assert len(a) == len(b) > 0 and set(a.index) == set(b.index)
    if source != "proba_columns":  # 1 − p(True) rounds where p(False) did not: ranks differ
        a = a[[k[2] in ("log_loss", "brier", "ece") or k[3] == "True" for k in a.index]]
    for key, value in a.items():
        assert b[key] == pytest.approx(value, rel=1e-9, abs=1e-12), key


def test_logged_probabilities_that_do_not_sum_to_1_are_counted_and_scored_as_given(
        tmp_path, capsys):
    """Three classes, one column each: every 4th prediction's columns are one-vs-rest scores
    (summing to 1.5), every 5th's rounded to two decimals (0.99: within the slack)."""
    labels = ["a", "b", "c"] * 10
    pd.DataFrame({"id": range(30), "time": range(30), "label": labels}).to_csv(
        tmp_path / "rows.csv", index=False)
    probabilities = []
    for i in range(30):
        p = [0.5, 0.3, 0.2] if i % 2 else [0.2, 0.2, 0.6]
        if i % 4 == 0:
            p = [0.9, 0.4, 0.2]
        elif i % 5 == 0:
            p = [0.33, 0.33, 0.33]
        probabilities.append(p)
    pd.DataFrame({"id": range(30), "t": [i + 0.5 for i in range(30)], "y_pred": "a",
                  **{f"p_{c}": [p[k] for p in probabilities] for k, c in enumerate("abc")}}
                 ).to_csv(tmp_path / "log.csv", index=False)
    options = {"proba_columns": {c: f"p_{c}" for c in "abc"}}
    code = main(["backfill", "--stream", f"s={tmp_path / 'rows.csv'}", "--predictions",
                 f"{tmp_path / 'log.csv'}{json.dumps(options)}", "--delay", "3s",
                 "--out", str(tmp_path / "o"), "--runner", "direct"])
    out = capsys.readouterr().out
    off = sum(abs(sum(p) - 1) > 0.02 for p in probabilities)
    assert code == 0 and off == 8
    assert "s / log: the class probabilities of 8 scored initial and final predictions do not " \
        "sum to 1" in out
    counts = json.loads((tmp_path / "o" / "manifest.json").read_text())["counts"][0]
    assert counts["probabilities_not_summing_to_1"] == 8
    summary = read_csv(tmp_path / "o" / "summary.csv")
    log_loss = summary[(summary.metric == "log_loss") & (summary.category == "initial") &
                       (summary.window == "cumulative")]["value"].item()
    assert log_loss == pytest.approx(np.mean([-math.log(p["abc".index(y)])
                                              for p, y in zip(probabilities, labels)]), rel=1e-12)


@pytest.mark.parametrize("log_format", ["jsonl", "parquet", "csv", "fixed order"])
@pytest.mark.parametrize("with_prediction", [False, True])
def test_listed_classes_and_scores_give_the_probabilities_and_the_highest_the_class(
        tmp_path, log_format, with_prediction):
    """A service answering {"classes": [...], "scores": [...]} (TensorFlow Serving, Vertex
    AI), logged as it answered: nested lists in JSON Lines, list columns in Parquet, lists
    as pandas' to_csv writes them in a CSV log (as text, which was refused), the classes in
    any order, ties and a missing answer among them; or scores alone, in one order
    of classes the option lists (scikit-learn's `predict_proba` in `classes_` order). Its
    prediction is the class of the highest score (the first listed of equals) unless the log
    has a prediction column. Oracle: a plain loop over the same rows."""
    rng = np.random.default_rng(5)
    n, classes = 60, ["a", "b", "c"]
    labels = [classes[i] for i in rng.integers(0, 3, n)]
    pd.DataFrame({"id": range(n), "time": range(n), "label": labels}).to_csv(
        tmp_path / "rows.csv", index=False)
    rows, truth = [], []
    for i in range(n):
        order = [classes[k] for k in rng.permutation(3)] if log_format != "fixed order" \
            else ["c", "a", "b"]
        scores = rng.dirichlet([1, 1, 1]).round(3).tolist()
        if i % 7 == 0:  # a tie of the two highest: the first listed
            scores = [0.4, 0.4, 0.2]
        answer = None if i == 11 else {"classes": order, "scores": scores}
        row = {"id": str(i), "t": i + 0.5, "output": answer}
        if with_prediction:
            row["y_pred"] = "c"
        rows.append(row)
        if answer is not None:
            p = dict(zip(order, scores))
            decided = "c" if with_prediction else order[scores.index(max(scores))]
            truth.append((labels[i], decided, p))
    log = tmp_path / {"parquet": "log.parquet", "csv": "log.csv"}.get(log_format, "log.jsonl")
    if log_format == "jsonl":
        log.write_text("".join(json.dumps(r) + "\n" for r in rows))
        options = {"score_classes": "output.classes", "scores": "output.scores"}
    elif log_format == "fixed order":
        log.write_text("".join(json.dumps({**r, "output": r["output"] and r["output"]["scores"]})
                               + "\n" for r in rows))
        options = {"score_classes": ["c", "a", "b"], "scores": "output"}
    else:
        frame = pd.DataFrame({"id": [r["id"] for r in rows], "t": [r["t"] for r in rows],
                              "classes": [r["output"] and r["output"]["classes"] for r in rows],
                              "scores": [r["output"] and r["output"]["scores"] for r in rows],
                              **({"y_pred": "c"} if with_prediction else {})})
        frame.to_parquet(log) if log_format == "parquet" else frame.to_csv(log, index=False)
        options = {"score_classes": "classes", "scores": "scores"}
    assert main(["backfill", "--stream", f"s={tmp_path / 'rows.csv'}", "--predictions",
                 f"{log}{json.dumps(options)}", "--delay", "3s", "--out", str(tmp_path / "o"),
                 "--runner", "direct", "--quiet"]) == 0
    summary = read_csv(tmp_path / "o" / "summary.csv")
    initial = summary[(summary.category == "initial") & (summary.window == "cumulative")
                      & summary["class"].isna()].set_index("metric")
    # (the missing answer is no prediction, unless the log's prediction column gives one)
    assert initial.loc["accuracy", "n"] == n - (not with_prediction)
    assert initial.loc["log_loss", "n"] == n - 1
    assert initial.loc["accuracy", "value"] == pytest.approx(
        np.mean([y == decided for y, decided, _ in truth] + [labels[11] == "c"] * (
            with_prediction)), abs=1e-12)
    assert initial.loc["log_loss", "value"] == pytest.approx(
        np.mean([-math.log(max(p[y], 1e-15)) for y, _, p in truth]), rel=1e-12)
    assert initial.loc["brier", "value"] == pytest.approx(np.mean(  # (½ Σ_c, as documented)
        [sum((p[c] - (c == y)) ** 2 for c in classes) / 2 for y, _, p in truth]), rel=1e-12)


def _initial_of_backfill(tmp_path, options: dict, log: str = "log.csv"):
    """The initial predictions' cumulative measures of a backfill of `tmp_path`/`log`
    (`options`) against `tmp_path`/rows.csv, delay 3 s, by metric."""
    assert main(["backfill", "--stream", f"s={tmp_path / 'rows.csv'}", "--predictions",
                 f"{tmp_path / log}{json.dumps(options)}", "--delay", "3s", "--out",
                 str(tmp_path / "o"), "--runner", "direct", "--quiet"]) == 0
    summary = read_csv(tmp_path / "o" / "summary.csv")
    return summary[(summary.category == "initial") & (summary.window == "cumulative")
                   & summary["class"].isna()].set_index("metric")


@pytest.mark.parametrize("written", ["pandas", "json"])
@pytest.mark.parametrize("shape", ["map", "lists"])
def test_a_csv_logs_nan_probability_leaves_its_prediction_without_probabilities(
        tmp_path, written, shape):
    """A model's NaN probability, logged as a dict or lists and exported to CSV, as pandas'
    to_csv writes it ({'a': nan, 'b': 0.7}: Python's names, which were refused as no list) or
    as JSON text (NaN, which Python's json writes): that prediction has no probabilities, as
    documented, and is still scored for its class; so is one whose whole map or list is
    NaN ('nan', 'NaN': it was refused as no map or list) or an empty cell (scores without
    their list of classes were refused as lists of unequal lengths). Oracle: a plain loop
    over the rows."""
    n, nan_rows, gone_rows = 24, {0, 5, 13}, {2, 17}
    labels = ["a", "b", "a"] * (n // 3)
    pd.DataFrame({"id": range(n), "time": range(n), "label": labels}).to_csv(
        tmp_path / "rows.csv", index=False)
    p_a = [math.nan if i in nan_rows | gone_rows else 0.1 + 0.8 * (i % 4) / 3
           for i in range(n)]
    y_pred = ["a" if i % 3 else "b" for i in range(n)]
    encode = str if written == "pandas" else json.dumps

    def logged(i, value):  # (row 17: an empty cell)
        return None if i == 17 else encode(math.nan if i in gone_rows else value)

    frame = pd.DataFrame({"id": range(n), "t": np.arange(n) + 0.5, "y_pred": y_pred})
    if shape == "map":
        frame["proba"] = [logged(i, {"a": p, "b": 0.5 if p != p else 1 - p})
                          for i, p in enumerate(p_a)]
        options = {"proba": "proba"}
    else:
        frame["classes"] = [encode(["a", "b"])] * n
        frame["scores"] = [logged(i, [p, 0.5 if p != p else 1 - p]) for i, p in enumerate(p_a)]
        options = {"score_classes": "classes", "scores": "scores"}
    frame.to_csv(tmp_path / "log.csv", index=False)
    assert ("nan" if written == "pandas" else "NaN") in (tmp_path / "log.csv").read_text()
    initial = _initial_of_backfill(tmp_path, options)
    scored = [i for i in range(n) if i not in nan_rows | gone_rows]
    assert initial.loc["accuracy", "n"] == n
    assert initial.loc["accuracy", "value"] == pytest.approx(
        np.mean([y_pred[i] == labels[i] for i in range(n)]), abs=1e-12)
    assert initial.loc["log_loss", "n"] == len(scored)
    assert initial.loc["log_loss", "value"] == pytest.approx(np.mean(
        [-math.log(p_a[i] if labels[i] == "a" else 1 - p_a[i]) for i in scored]), rel=1e-12)


@pytest.mark.parametrize("log", ["jsonl", "jsonl with a bad line", "jsonl of text and objects",
                                 "parquet of structs", "parquet of maps"])
def test_a_nan_in_a_logged_map_of_probabilities_leaves_its_prediction_without_them(
        tmp_path, log):
    """A map of probabilities holding a NaN, in a JSON Lines log (as Python's json writes it)
    or a Parquet log (a struct of every class, as Arrow writes dicts, or a map), is a
    prediction without probabilities, as in a CSV log: a JSON Lines or struct NaN was read as
    a class the map leaves out, its probability taken as 1 - the other's. So it is in a JSON
    Lines log whose maps are objects on some lines and JSON text on others (which was refused
    as a column changing type). Oracle: a plain loop over the rows."""
    n, nan_rows = 24, {0, 5, 13}
    labels = ["a", "b", "a"] * (n // 3)
    pd.DataFrame({"id": range(n), "time": range(n), "label": labels}).to_csv(
        tmp_path / "rows.csv", index=False)
    p_a = [math.nan if i in nan_rows else 0.1 + 0.8 * (i % 4) / 3 for i in range(n)]
    y_pred = ["a" if i % 3 else "b" for i in range(n)]
    proba = [{"a": p, "b": 0.5 if p != p else 1 - p} for p in p_a]
    frame = pd.DataFrame({"id": range(n), "t": np.arange(n) + 0.5, "y_pred": y_pred})
    if log.startswith("jsonl"):
        lines = [json.dumps({**row, "proba": p}) for row, p in
                 zip(frame.to_dict("records"), proba)]
        if log == "jsonl with a bad line":  # (read line by line, each value rewritten)
            lines.insert(9, "{oops")
        if log == "jsonl of text and objects":  # (a service writing JSON text from line 12)
            lines[12:] = [json.dumps({**row, "proba": json.dumps(p)}) for row, p in
                          zip(frame.to_dict("records")[12:], proba[12:])]
        (tmp_path / "log.jsonl").write_text("\n".join(lines) + "\n")
        name = "log.jsonl"
    else:
        column = pa.array(proba) if log == "parquet of structs" else pa.array(
            [list(p.items()) for p in proba], pa.map_(pa.string(), pa.float64()))
        pq.write_table(pa.Table.from_pandas(frame).append_column("proba", column),
                       tmp_path / "log.parquet")
        name = "log.parquet"
    initial = _initial_of_backfill(tmp_path, {"proba": "proba"}, name)
    scored = [i for i in range(n) if i not in nan_rows]
    assert initial.loc["accuracy", "n"] == n
    assert initial.loc["log_loss", "n"] == len(scored)
    assert initial.loc["log_loss", "value"] == pytest.approx(np.mean(
        [-math.log(p_a[i] if labels[i] == "a" else 1 - p_a[i]) for i in scored]), rel=1e-12)


@pytest.mark.parametrize("shape", ["map", "lists", "arrays"])
def test_a_csv_log_of_numpy_values_as_pandas_writes_them_is_scored(tmp_path, shape):
    """scikit-learn's answers logged as they come, `dict(zip(clf.classes_, proba))`,
    `list(proba)` or the arrays themselves, hold numpy scalars, which pandas' to_csv writes as
    numpy 2's repr does ({np.str_('a'): np.float64(0.2)}, [np.float64(nan), ...]), or arrays,
    which it writes as numpy's str does ([0.2 0.8], lines wrapped); they were refused as no
    list or map. They are read as the values they name, nothing run; a NaN leaves its
    prediction without probabilities. Oracle: scikit-learn's log_loss and accuracy on the
    rows (as written: numpy's str rounds an array's values to 8 digits)."""
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(3)
    n, nan_row = 40, 7
    x = rng.normal(size=(n, 2))
    labels = np.where(x[:, 0] + rng.normal(scale=0.8, size=n) > 0, "fraud", "ok")
    pd.DataFrame({"id": range(n), "time": range(n), "label": labels}).to_csv(
        tmp_path / "rows.csv", index=False)
    clf = LogisticRegression().fit(x, labels)
    proba = clf.predict_proba(x)
    proba[nan_row, 0] = np.nan  # (a model's failed answer)
    frame = pd.DataFrame({"id": range(n), "t": np.arange(n) + 0.5,
                          "y_pred": clf.predict(x)})
    if shape == "map":
        frame["proba"] = [dict(zip(clf.classes_, row)) for row in proba]
        options = {"proba": "proba"}
    else:
        arrays = shape == "arrays"
        frame["classes"] = [clf.classes_ if arrays else list(clf.classes_)] * n
        frame["scores"] = [row if arrays else list(row) for row in proba]
        options = {"score_classes": "classes", "scores": "scores"}
    frame.to_csv(tmp_path / "log.csv", index=False)
    if shape == "arrays":
        assert "['fraud' 'ok']" in (tmp_path / "log.csv").read_text()
        proba = np.array([[float(v) for v in str(row)[1:-1].split()] for row in proba])
    elif np.lib.NumpyVersion(np.__version__) >= "2.0.0":
        assert "np.float64(" in (tmp_path / "log.csv").read_text()
    initial = _initial_of_backfill(tmp_path, options)
    scored = np.arange(n) != nan_row
    assert initial.loc["accuracy", "value"] == pytest.approx(
        sk.accuracy_score(labels, clf.predict(x)), abs=1e-12)
    assert initial.loc["log_loss", "n"] == n - 1
    assert initial.loc["log_loss", "value"] == pytest.approx(
        sk.log_loss(labels[scored], proba[scored], labels=clf.classes_), rel=1e-9)


def test_a_csv_log_of_numpy_arrays_numpy_cut_short_is_one_line_saying_so(tmp_path, capsys):
    """pandas' to_csv writes a numpy array of more than 1 000 scores as numpy's str does,
    '[0.001 0.001 ... 0.001]': the values in between are not in the file. That was refused as
    "lists of mixed kinds" (Python reads '...' as Ellipsis); one line says what happened."""
    n, k = 4, 1200
    classes = [f"c{j}" for j in range(k)]
    pd.DataFrame({"id": range(n), "time": range(n), "label": ["c0"] * n}).to_csv(
        tmp_path / "rows.csv", index=False)
    pd.DataFrame({"id": range(n), "t": np.arange(n) + 0.5, "y_pred": ["c0"] * n,
                  "classes": [json.dumps(classes)] * n,
                  "scores": [np.full(k, 1 / k)] * n}).to_csv(tmp_path / "log.csv", index=False)
    assert "..." in (tmp_path / "log.csv").read_text()
    code = main(["backfill", "--stream", f"s={tmp_path / 'rows.csv'}", "--predictions",
                 f'{tmp_path / "log.csv"}{{"score_classes": "classes", "scores": "scores"}}',
                 "--delay", "3s", "--out", str(tmp_path / "o"), "--runner", "direct",
                 "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert err.startswith(f"delayed-eval: error: {tmp_path / 'log.csv'}: prediction 0: column "
                          f"'scores' (option scores) holds '[0.00083333 ")
    assert err.endswith("a numpy array of more than 1 000 scores that numpy's text cut short "
                        "with '...'; log each as a list (`list(array)`), or the log as Parquet\n")


def test_listed_classes_taken_for_predictions_or_unequal_lists_are_one_line(tmp_path, capsys):
    """A log whose prediction column holds each answer's list of classes was scored as one
    unknown class per prediction, all wrong, with a notice and status 0; lists of classes and
    scores of two lengths name the prediction."""
    pd.DataFrame({"id": range(4), "time": range(4), "label": ["a", "b"] * 2}).to_csv(
        tmp_path / "rows.csv", index=False)
    rows = [{"id": str(i), "t": i + 0.5, "out": {"classes": ["a", "b"], "scores": [0.3, 0.7]}}
            for i in range(4)]
    rows[2]["out"]["scores"] = [1.0]
    (tmp_path / "log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    for options, line in (
            ({"prediction": "out.classes"}, "log.jsonl: column 'out.classes' (option "
             "prediction) holds lists, not one class per prediction; name a list of classes "
             "and one of their scores with the --predictions option {\"score_classes\": ..., "
             "\"scores\": ...} (the prediction: the class of the highest score)"),
            ({"score_classes": "out.classes", "scores": "out.scores"}, "log.jsonl: the "
             "prediction of id '2' lists 2 classes ('out.classes') and 1 scores "
             "('out.scores'); each class has its score"),
            ({"score_classes": ["a", "b"], "scores": "out.scores"}, "log.jsonl: the "
             "prediction of id '2' lists 2 classes (score_classes) and 1 scores "
             "('out.scores'); each class has its score")):
        assert main(["backfill", "--stream", f"s={tmp_path / 'rows.csv'}", "--predictions",
                     f"{tmp_path / 'log.jsonl'}{json.dumps(options)}", "--delay", "3s",
                     "--out", str(tmp_path / "o"), "--runner", "direct", "--quiet"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.endswith(line + "\n"), err


def test_a_models_probabilities_that_do_not_sum_to_1_are_counted_as_a_logs_are(tmp_path,
                                                                                capsys):
    """A model's predict_proba_one whose answers from its 50th on are halved: a run scored
    them as given and said nothing (a log's were counted and named)."""
    spec = 'tests.helpers.ScaledProbabilities{"scale": 0.5, "after": 50}'
    assert main(["run", "--stream", 'synth:SEA{"n": 300}', "--model", f"half={spec}", "--delay",
                 "10", "--repredict", "none", "--out", str(tmp_path), "--runner", "direct"]) == 0
    log = pd.read_parquet(tmp_path / "predictions.parquet")
    scored = log[log["kind"].isin(["initial", "final"]) & log["proba"].notna()]
    halved = sum(abs(sum(dict(p).values()) - 1) > 0.02 for p in scored["proba"])
    assert 400 < halved < len(scored)
    counts = json.loads((tmp_path / "manifest.json").read_text())["counts"][0]
    assert counts["probabilities_not_summing_to_1"] == halved
    assert f"sea / half: the class probabilities of {halved} scored initial and final " \
        "predictions do not sum to 1" in capsys.readouterr().out


@pytest.mark.parametrize("on_error", ["fail", "dead-letter"])
def test_a_model_giving_probabilities_outside_0_1_is_named_as_a_log_is(tmp_path, capsys,
                                                                       on_error):
    """Scores taken for probabilities (here 3 × them, from the 20th answer): log-loss, Brier
    and calibration came out of their ranges (an ECE of 1.75) without a word."""
    spec = 'tests.helpers.ScaledProbabilities{"scale": 3, "after": 20}'
    status = main(["run", "--stream", 'synth:SEA{"n": 100}', "--model", f"x3={spec}",
                   "--delay", "5", "--repredict", "none", "--on-model-error", on_error,
                   "--out", str(tmp_path), "--runner", "direct", "--quiet"])
    err = capsys.readouterr().err
    if on_error == "fail":
        assert status == 2 and re.fullmatch(
            r"delayed-eval: error: model x3, stream sea, instance \d+: predict_proba_one gives "
            r"class (True|False) the probability [0-9.]+, not one in \[0, 1\] \(a score, margin "
            r"or logit is none\); use a model whose predict_proba_one returns probabilities, or "
            r"run with --no-probabilities\n", err), err
    else:  # every instance it answered so, set aside with its reason
        counts = json.loads((tmp_path / "manifest.json").read_text())["counts"][0]
        assert status == 0 and counts["model_errors"] > 50
        dead = [json.loads(line) for line in open(tmp_path / "dead_letters.jsonl")]
        assert any("not one in [0, 1]" in d["reason"] for d in dead)


@pytest.mark.parametrize("options, message", [
    ({"positive": "True"}, "positive names the class of a score column"),
    ({"score": "p", "positive": "True", "proba_columns": {"True": "p"}}, "not both"),
    ({"proba_columns": ["p"]}, "proba_columns must map each class to its column"),
    ({"score": "nowhere", "positive": "True"}, "'nowhere'"),
    ({"scores": "p"}, "score_classes and scores name two list columns, each prediction's "
                      "classes and their scores: give both"),
    ({"score_classes": "id", "scores": "p"}, "prediction 1: column 'id' (option "
     "score_classes) holds '1', not a list: score_classes names a column of each prediction's "
     "list of classes"),
    ({"score": "p", "positive": "True", "score_classes": "c", "scores": "s"},
     "give score or scores, not both"),
    ({"score_classes": ["True", "True"], "scores": "p"}, "score_classes names the column of "
     "each prediction's classes, or lists the classes, each once"),
])
def test_a_log_whose_probability_options_are_wrong_is_one_error_line(tmp_path, capsys, options,
                                                                      message):
    log = tmp_path / "p.csv"
    pd.DataFrame({"id": ["1"], "t": [0.0], "y_pred": ["True"], "p": [0.4]}).to_csv(log)
    code = main(["backfill", "--stream", 'synth:SEA{"n": 20}', "--predictions",
                 f"{log}{json.dumps(options)}", "--model", "m", "--out", str(tmp_path / "o"),
                 "--quiet", "--runner", "direct"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.count("\n") == 0 and err.startswith("delayed-eval: error: ")
    assert message in err


@pytest.mark.parametrize("labels, options, positive", [
    ([0] * 1000 + [1, 0] * 20, "", 1),
    ([2] * 10 + [1, 2] * 500, "", 1),  # 1, as the summary's positive class
    (["ok"] * 1000 + ["fraud", "ok"] * 20, '{"positive": "fraud"}', "fraud"),
    (["ok"] * 20 + ["fraud", "ok"] * 20, "", None)])
def test_a_score_without_its_class_is_the_probability_of_1(tmp_path, capsys, labels, options,
                                                            positive):
    """Labels 1/0 (the first 1 000, all a run reads ahead, all 0, as a rare fraud's are): the
    score is P(1), log-loss by hand; so it is P(fraud) where the stream names fraud positive.
    Labels 2/1: P(1) too. Labels ok/fraud: which class the score is of is not guessed; one line
    asks."""
    n = len(labels)
    p = [round(0.1 + 0.8 * ((i * 7) % 11) / 10, 3) for i in range(n)]
    pd.DataFrame({"id": range(n), "time": range(n), "label": labels}).to_csv(
        tmp_path / "rows.csv", index=False)
    pd.DataFrame({"id": range(n), "t": [i + 0.5 for i in range(n)], "y_pred": labels,
                  "p_fraud": p}).to_csv(tmp_path / "log.csv", index=False)
    code = main(["backfill", "--stream", f"s={tmp_path / 'rows.csv'}{options}", "--predictions",
                 f'{tmp_path / "log.csv"}{{"score": "p_fraud"}}', "--delay", "3s",
                 "--out", str(tmp_path / "o"), "--runner", "direct", "--quiet"])
    if positive is None:
        assert code == 2 and capsys.readouterr().err == (
            f"delayed-eval: error: prediction log {tmp_path / 'log.csv'}: score 'p_fraud' needs "
            f"the class whose probability it is (told by itself only where a class is 1 or "
            f"True, or by a stream's positive or two declared classes): give it, e.g. "
            f'{{"score": "p_fraud", "positive": "fraud"}}\n')
        return
    assert code == 0
    summary = read_csv(tmp_path / "o" / "summary.csv")
    log_loss = summary[(summary.metric == "log_loss") & (summary.category == "initial") &
                       (summary.window == "cumulative")]["value"].item()
    assert log_loss == pytest.approx(np.mean([-math.log(q if y == positive else 1 - q)
                                              for q, y in zip(p, labels)]), rel=1e-12)


def test_roc_and_precision_recall_curve_points_are_scikit_learns(waveform_run):
    # Few distinct probabilities: every threshold is a point, as scikit-learn's curves.
    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, 300)
    p1 = np.round(np.clip(0.3 * y + rng.uniform(0, 0.7, 300), 0, 1), 1)
    whole = ProbabilityScore(ranked=True)
    whole.update_many(y, np.column_stack([1 - p1, p1]))
    points = np.array(whole.curves()[1])
    fpr, tpr, _ = sk.roc_curve(y, p1, drop_intermediate=False)
    assert np.allclose(points[:, 0], fpr, rtol=0, atol=1e-15)
    assert np.allclose(points[:, 1], tpr, rtol=0, atol=1e-15)
    precision, recall, _ = sk.precision_recall_curve(y, p1, drop_intermediate=False)
    assert np.allclose(points[1:, 3], precision[:-1][::-1], rtol=0, atol=1e-15)
    assert np.allclose(points[1:, 2], recall[:-1][::-1], rtol=0, atol=1e-15)
    # A run's summary holds each class's curve, thinned to 101 points of scikit-learn's.
    labels, predictions, summary, _ = waveform_run
    y, p = _stored(predictions, "final", labels, 0, N)
    rows = summary[(summary["category"] == "final") & (summary["window"] == "cumulative")]
    for name in sorted(set(labels)):
        c = sorted(set(labels)).index(name)
        mine = rows[rows["class"] == name]
        fpr_got = mine[mine["metric"] == "roc_fpr"].sort_values("bin")["value"].to_numpy()
        tpr_got = mine[mine["metric"] == "roc_tpr"].sort_values("bin")["value"].to_numpy()
        fpr, tpr, _ = sk.roc_curve(y == c, p[:, c], drop_intermediate=False)
        assert len(fpr_got) == min(101, len(fpr))
        full = set(zip(fpr.round(12), tpr.round(12)))
        assert set(zip(fpr_got.round(12), tpr_got.round(12))) <= full
        assert (fpr_got[0], tpr_got[0], fpr_got[-1], tpr_got[-1]) == (0, 0, 1, 1)


def test_faded_probability_measures_equal_a_weighted_loop(tmp_path):
    # Gama's fading factor on each label's log-loss, Brier and calibration terms: weights
    # α^age over the labels with probabilities, at every curve point (a plain loop here).
    alpha, n = 0.99, 900
    path, labels = waveform_csv(tmp_path, n, seed=6)
    out = os.path.join(tmp_path, "out")
    run(RunConfig(streams=[f"w={path}"], models=["nb=gaussian-nb"], delay=str(DELAY),
                  repredict="none", fadings=[alpha], curve_every=300, out=out, quiet=True,
                  runner="direct"))
    curves = pd.read_parquet(os.path.join(out, "curves.parquet"))
    predictions = pd.read_parquet(os.path.join(out, "predictions.parquet"))
    classes = sorted(set(labels))
    for kind in ("initial", "final"):
        stored = predictions[predictions["kind"] == kind].set_index("id")["proba"]
        rows = curves[(curves["category"] == kind) & (curves["window"] == f"fading={alpha}")
                      & curves["class"].isna()]
        for end in (300, 600, n):
            weight = num_ll = num_brier = 0.0
            hits, confidence = np.zeros(10), np.zeros(10)
            for i in range(end):  # instance i is label i + 1 (a fixed delay)
                proba = stored.get(str(i))
                if proba is None:
                    continue
                p = np.array([dict(proba).get(c, 0.0) for c in classes])
                y = classes.index(labels[i])
                w = alpha ** (end - 1 - i)
                weight += w
                num_ll += w * -math.log(min(max(p[y], 1e-15), 1 - 1e-15))
                num_brier += w * float(((p - np.eye(3)[y]) ** 2).sum()) / 2  # halved
                m = min(max(math.ceil(p.max() * 10) - 1, 0), 9)
                hits[m] += w * (p.argmax() == y)
                confidence[m] += w * p.max()
            expected = {"log_loss": num_ll / weight, "brier": num_brier / weight,
                        "ece": float(np.abs(hits - confidence).sum()) / weight}
            got = rows[rows["labels"] == end].set_index("metric")["value"]
            for metric, value in expected.items():
                assert got[metric] == pytest.approx(value, rel=1e-9), (kind, end, metric)
    assert not curves.loc[curves["window"] == f"fading={alpha}", "metric"].isin(
        ["roc_auc", "pr_auc"]).any()  # no faded ranks
