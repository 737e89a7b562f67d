"""delayed-eval against MOA itself (its jar run as a program: tests/moa_peer.py) on one ARFF
file, with MOA's two models whose twins are built in: `functions.MajorityClass` (`majority`)
and `functions.NoChange` (`no-change`), both answering the first declared class before they
learn. A label arrives 20 instances after its instance.

- Initial predictions are MOA's `EvaluatePrequentialDelayed -k 20 -p 0` (no initial training
  window): MOA's row at instance i is ours at i labels. Final predictions (test-then-train) are
  MOA's `EvaluatePrequential`.
- Views: cumulative (`BasicClassificationPerformanceEvaluator`), a sliding window of 50
  (`WindowClassificationPerformanceEvaluator -w 50`) and a fading factor of 0.99
  (`FadingFactorClassificationPerformanceEvaluator`, in MOA's delayed loop written in Java:
  MOA's command line cannot build that evaluator).
- Accuracy, κ, κ_per (MOA's Kappa Temporal) and κ_m equal at every one of the 600 label counts
  (relative 1e-9), and so are the divisions by zero (a baseline right on every label so far):
  x/0 is ±∞ in both, 0/0 NaN (MOA's '?'). Per-class precision, recall and F1 and the micro F1
  are equal too, and the macro averages once every declared class has occurred: MOA averages
  over the classes its header declares, scoring a class not seen yet as 0, where delayed-eval
  (as scikit-learn and river) averages over the classes that have occurred.
- `--pretrain P` is MOA's initial training window learned (`-p P -m`): the κ family of both
  models, cumulative and windowed, and a regressor's MAE and RMSE, equal MOA's.
- ARFF as Weka writes it (quoted class values with a space, a comma or the other quote,
  comment lines between rows): MOA's reader and ours give the same labels.
- Temporally Augmented around naive Bayes at delay 1, against MOA's
  `TemporallyAugmentedClassifier` around its `NaiveBayes`: each follows a plain loop of its
  own rule (the two differ in the first lags and the Laplace correction's width).
- Regression, on an ARFF file whose class attribute is numeric: `mean-regressor` against
  `rules.functions.TargetMean` in `EvaluatePrequentialRegressionDelayed`, MAE and RMSE
  cumulative and over a sliding window. TargetMean answers 0 before it learns, where
  `mean-regressor` answers nothing (unscored), so MOA leaves out as many instances as ours
  cannot score (`-p`, its initial training window, without `-m`: those instances are learned
  with the delay, not tested).
"""

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from pipelines.config import RunConfig
from pipelines.job import run
from tests.moa_peer import moa_jar, moa_runs, moa_task

N, DELAY, WIDTH, ALPHA = 600, 20, 50, 0.99
CLASSES = "ABCDEF"
TWINS = {"functions.MajorityClass": "majority", "functions.NoChange": "no-change"}
KAPPAS = {"accuracy": "classifications correct (percent)", "kappa": "Kappa Statistic (percent)",
          "kappa_t": "Kappa Temporal Statistic (percent)", "kappa_m": "Kappa M Statistic (percent)"}


def random_walk(path):
    """A numeric target that wanders (a mean of past labels lags behind it)."""
    rng = np.random.default_rng(5)
    ys = np.cumsum(rng.normal(0, 1, N)) + rng.normal(0, 0.3, N)
    rows = "\n".join(f"{x:.4f},{y:.4f}" for x, y in zip(rng.random(N), ys))
    path.write_text(f"@relation walk\n@attribute x numeric\n@attribute target numeric\n"
                    f"@data\n{rows}\n")


def sticky_stream(path):
    """Six classes, each label keeping the previous one's class with probability 0.7, else
    drawn anew (so No-Change and κ_per have something to find), the last class rare and first
    seen late."""
    rng = np.random.default_rng(11)
    ys, y = [], 0
    for i in range(N):
        if rng.random() < 0.3:
            y = int(rng.choice(5, p=[0.3, 0.25, 0.2, 0.15, 0.1])) if i < 300 else \
                int(rng.choice(6, p=[0.25, 0.2, 0.2, 0.15, 0.1, 0.1]))
        ys.append(y)
    rows = "\n".join(f"{x:.4f},{CLASSES[y]}" for x, y in zip(rng.random(N), ys))
    path.write_text(f"@relation sticky\n@attribute x numeric\n"
                    f"@attribute class {{{','.join(CLASSES)}}}\n@data\n{rows}\n")


def our_curves(folder, stream: str, models: list, delay: int, **options) -> pd.DataFrame:
    """The curve points (a point per label) of a run with re-evaluation off: whole-stream,
    unbinned rows."""
    run(RunConfig(streams=[stream], models=models, delay=str(delay), out=str(folder / "out"),
                  runner="direct", repredict="none", curve_every=1, log_predictions="none",
                  drift_on="none", quiet=True, **options))
    curves = pd.read_parquet(folder / "out" / "curves.parquet")
    return curves[curves["segment"].isna() & curves["bin"].isna()]


@pytest.fixture(scope="session")  # (computed once per test process)
def runs(tmp_path_factory):
    """(our curves, MOA's tables by (model, category, view)), computed once."""
    jar = moa_jar()
    folder = tmp_path_factory.mktemp("moa")
    arff = folder / "sticky.arff"
    sticky_stream(arff)
    curves = our_curves(folder, f"sticky={arff}", list(TWINS.values()), DELAY, windows=[WIDTH],
                        fadings=[ALPHA])
    stream = f"(ArffFileStream -f {arff})"
    jobs = {}
    for learner, model in TWINS.items():
        delayed = f"EvaluatePrequentialDelayed -l {learner} -s {stream} -k {DELAY} -p 0"
        prequential = f"EvaluatePrequential -l {learner} -s {stream}"
        jobs.update({
            (model, "initial", "cumulative"):
                ("task", f"{delayed} -e (BasicClassificationPerformanceEvaluator -o -p -r -f)"),
            (model, "initial", f"w={WIDTH}"):
                ("task", f"{delayed} -e (WindowClassificationPerformanceEvaluator -w {WIDTH})"),
            (model, "initial", f"fading={ALPHA}"): ("faded", arff, DELAY, ALPHA, learner),
            (model, "final", "cumulative"):
                ("task", f"{prequential} -e BasicClassificationPerformanceEvaluator"),
            (model, "final", f"w={WIDTH}"):
                ("task", f"{prequential} -e (WindowClassificationPerformanceEvaluator "
                         f"-w {WIDTH})"),
            (model, "basic"): ("faded", arff, DELAY, 0.0, learner)})
    moa = dict(zip(jobs, moa_runs(jar, folder, list(jobs.values()))))
    # The driver's loop is MOA's task's: with the basic evaluator both give the same rows.
    for model in TWINS.values():
        basic = moa.pop((model, "basic"))
        task = moa[model, "initial", "cumulative"][basic.columns]
        pd.testing.assert_frame_equal(basic, task, check_exact=False, rtol=1e-12)
    return curves, moa


def ours(curves, model, category, view, metric, klass=None) -> pd.Series:
    rows = curves[(curves["model"] == model) & (curves["category"] == category)
                  & (curves["window"] == view) & (curves["metric"] == metric)
                  & ((curves["class"] == klass) if klass else curves["class"].isna())]
    return rows.set_index("labels")["value"]


def assert_equal_to_moa(got: pd.Series, expected: pd.Series, what, start=1, end=N):
    """Equal at every label count from `start` to `end`, MOA's ±∞ (x/0) and '?' (0/0, NaN)
    too."""
    points = range(start, end + 1)
    assert set(points) <= set(got.index) and set(points) <= set(expected.index), what
    for labels in points:
        have, want = got[labels], expected[labels]
        if math.isnan(want):
            assert math.isnan(have), (what, labels, have, want)
        elif math.isinf(want):
            assert have == want, (what, labels, have, want)
        else:
            assert have == pytest.approx(want, rel=1e-9, abs=1e-12), (what, labels, have, want)


@pytest.mark.parametrize("model", TWINS.values())
def test_the_kappa_family_equals_moa_in_every_view(runs, model):
    curves, moa = runs
    for (name, category, view), table in moa.items():
        if name != model:
            continue
        for metric, column in KAPPAS.items():
            assert_equal_to_moa(ours(curves, model, category, view, metric), table[column],
                                (model, category, view, metric))
    # The views really differ from one another on this stream, and κ_per from κ_m.
    initial = {view: moa[model, "initial", view]["Kappa M Statistic (percent)"]
               for view in ("cumulative", f"w={WIDTH}", f"fading={ALPHA}")}
    assert (initial["cumulative"] - initial[f"w={WIDTH}"]).abs().max() > 0.1
    assert (initial["cumulative"] - initial[f"fading={ALPHA}"]).abs().max() > 0.1


@pytest.mark.parametrize("model", TWINS.values())
def test_pretraining_equals_moas_initial_training_window_learned_at_once(tmp_path, model):
    """--pretrain P is MOA's `-p P -m`: the first P instances learned as they arrive, none
    tested; MOA's row after its k-th tested instance is ours at k labels. The κ family equals
    MOA's, cumulative and windowed, at every label count (its baselines too start after the
    window)."""
    jar = moa_jar()
    arff = tmp_path / "sticky.arff"
    sticky_stream(arff)
    pretrain = 100
    curves = our_curves(tmp_path, f"sticky={arff}", [model], DELAY, windows=[WIDTH],
                        pretrain=pretrain)
    learner = next(name for name, twin in TWINS.items() if twin == model)
    delayed = (f"EvaluatePrequentialDelayed -l {learner} -s (ArffFileStream -f {arff}) "
               f"-k {DELAY} -p {pretrain} -m")
    views = {"cumulative": "BasicClassificationPerformanceEvaluator",
             f"w={WIDTH}": f"(WindowClassificationPerformanceEvaluator -w {WIDTH})"}
    tables = moa_runs(jar, tmp_path, [("task", f"{delayed} -e {evaluator}")
                                      for evaluator in views.values()])
    for view, table in zip(views, tables):
        table.index = table["classified instances"].astype(int)
        for metric, column in KAPPAS.items():
            assert_equal_to_moa(ours(curves, model, "initial", view, metric), table[column],
                                (model, view, metric), end=N - pretrain)


@pytest.mark.parametrize("model", TWINS.values())
def test_class_measures_equal_moa_and_macro_averages_once_every_class_has_occurred(runs, model):
    curves, moa = runs
    table = moa[model, "initial", "cumulative"]
    assert_equal_to_moa(ours(curves, model, "initial", "cumulative", "micro_f1"),
                        table["F1 Score (percent)"], (model, "micro_f1"))
    for index, klass in enumerate(CLASSES):
        for metric, name in (("precision", "Precision"), ("recall", "Recall"), ("f1", "F1 Score")):
            got = ours(curves, model, "initial", "cumulative", metric, klass)
            first = got.index.min()  # a class has rows once it has occurred
            assert_equal_to_moa(got, table[f"{name} for class {index} (percent)"],
                                (model, metric, klass), start=first)
    # Every declared class has occurred (as a label or a prediction) by the first label count
    # at which the last class has a row: from there the macro averages agree.
    everyone = max(ours(curves, model, "initial", "cumulative", "recall", klass).index.min()
                   for klass in CLASSES)
    assert 300 < everyone < N
    for metric, name in (("macro_precision", "Precision"), ("macro_recall", "Recall"),
                         ("macro_f1", "F1 Score")):
        got = ours(curves, model, "initial", "cumulative", metric)
        want = table[f"{name} macro (percent)"]
        assert_equal_to_moa(got, want, (model, metric), start=everyone)
        # Before that, MOA's mean counts the classes not seen yet as 0: lower than ours.
        assert (got[everyone - 1] - want[everyone - 1]) > 0.01


def test_regression_errors_equal_moa_in_every_view(tmp_path):
    jar = moa_jar()
    arff = tmp_path / "walk.arff"
    random_walk(arff)
    curves = our_curves(tmp_path, f"walk={arff}", ["mean-regressor"], DELAY, windows=[WIDTH])
    stream = f"(ArffFileStream -f {arff})"
    # Initial: instances 1..DELAY come before any label. Final: the first label's comes before
    # any other; MOA's delay 1 predicts instance i after learning i − 1, as a final prediction.
    views = {"cumulative": "BasicRegressionPerformanceEvaluator",
             f"w={WIDTH}": f"(WindowRegressionPerformanceEvaluator -w {WIDTH})"}
    runs = {(category, delay, view): (
        "task", f"EvaluatePrequentialRegressionDelayed -l rules.functions.TargetMean "
                f"-s {stream} -k {delay} -p {delay} -e {evaluator}")
        for category, delay in (("initial", DELAY), ("final", 1))
        for view, evaluator in views.items()}
    tables = moa_runs(jar, tmp_path, list(runs.values()))
    for (category, delay, view), table in zip(runs, tables):
        for metric, column in (("mae", "mean absolute error"),
                               ("rmse", "root mean squared error")):
            got = ours(curves, "mean-regressor", category, view, metric)
            assert got.dropna().index.min() == delay + 1  # (none scored before)
            assert_equal_to_moa(got, table[column], (category, view, metric),
                                start=delay + 1)


def test_a_pretrained_regressors_errors_equal_moa(tmp_path):
    """--pretrain for a regressor: `mean-regressor` against TargetMean in MOA's
    `EvaluatePrequentialRegressionDelayed -p 100 -m`, MAE and RMSE at every label count (both
    answer from the first tested instance on)."""
    jar = moa_jar()
    arff = tmp_path / "walk.arff"
    random_walk(arff)
    pretrain = 100
    curves = our_curves(tmp_path, f"walk={arff}", ["mean-regressor"], DELAY, pretrain=pretrain)
    table = moa_task(jar, f"EvaluatePrequentialRegressionDelayed -l rules.functions.TargetMean "
                          f"-s (ArffFileStream -f {arff}) -k {DELAY} -p {pretrain} -m "
                          f"-e BasicRegressionPerformanceEvaluator", tmp_path)
    table.index = table.index - pretrain  # (MOA counts the window's instances)
    for metric, column in (("mae", "mean absolute error"), ("rmse", "root mean squared error")):
        assert_equal_to_moa(ours(curves, "mean-regressor", "initial", "cumulative", metric),
                            table[column], metric, end=N - pretrain)


def test_moa_and_delayed_eval_read_the_same_classes_from_a_weka_written_arff(tmp_path):
    """Quoted class values holding a space, a comma or the other quote, keywords in capitals,
    comment lines between rows: MOA's reader and ours give the same label sequence (No-Change's
    accuracy and κ_per, which follow each label, equal at every label count)."""
    jar = moa_jar()
    written = ["'a b'", "'c,d'", "e", "\"f'g\""]
    rng = np.random.default_rng(7)
    lines, y = ["% written as Weka writes", "@RELATION quoted", "@ATTRIBUTE x NUMERIC",
                "@attribute colour {red,'dark blue'}",
                f"@attribute class {{{','.join(written)}}}", "", "@DATA"], 0
    for i in range(300):
        if rng.random() < 0.3:
            y = int(rng.integers(4))
        colour = "red" if rng.random() < 0.5 else "'dark blue'"
        lines.append(f"{rng.random():.3f},{colour},{written[y]}")
        if i % 17 == 0:
            lines.append("% a comment between rows")
    arff = tmp_path / "quoted.arff"
    arff.write_text("\n".join(lines) + "\n")
    curves = our_curves(tmp_path, f"quoted={arff}", ["no-change"], 5)
    table = moa_task(jar, f"EvaluatePrequentialDelayed -l functions.NoChange -s (ArffFileStream "
                          f"-f {arff}) -k 5 -p 0 -e BasicClassificationPerformanceEvaluator",
                     tmp_path)
    assert len(table) == 300
    for metric in ("accuracy", "kappa_t", "kappa"):
        got = ours(curves, "no-change", "initial", "cumulative", metric)
        assert_equal_to_moa(got, table[KAPPAS[metric]], metric, end=300)


def naive_bayes_of_lags(labels: list, moa: bool) -> list:
    """Per instance, the class scores of a naive Bayes over the last label (delay 1) and
    nothing else, in exact arithmetic, normalised: P(y) · P(lag | y), P(v | y) = (n(v, y) + 1)
    / (n(y) + V). delayed-eval's rule: the first instance's lag is "no label yet", V = the
    classes learned and that value. MOA's: the first lag is the first class, V = per class, one
    more than the highest class index seen as a lag of y. None before anything is learned."""
    classes = sorted(set(labels))
    pairs, out = [], []
    for i, y in enumerate(labels):
        lag = labels[i - 1] if i else (classes[0] if moa else None)
        scores = {}
        seen = sorted({c for _, c in pairs})
        for c in seen:
            lags = [v for v, label in pairs if label == c]
            width = (max(classes.index(v) for v in lags) + 1) if moa else len(seen) + 1
            scores[c] = Fraction(len(lags), len(pairs)) * \
                Fraction(lags.count(lag) + 1, len(lags) + width)
        total = sum(scores.values())
        out.append({c: v / total for c, v in scores.items()} if pairs else None)
        pairs.append((lag, y))
    return out


def top_class(scores: dict | None, first):
    """The class of the highest score, `first` before anything is learned, "tie" where two
    share it (then rounding decides)."""
    if scores is None:
        return first
    top = [c for c, v in scores.items() if v == max(scores.values())]
    return top[0] if len(top) == 1 else "tie"


def naive_bayes_answers_without_features() -> bool:
    """Whether river's GaussianNB predicts from its class counts alone for an instance with no
    features (river 0.26 does; river 0.22, the last for Python 3.10, answers nothing)."""
    from river.naive_bayes import GaussianNB

    model = GaussianNB()
    model.learn_one({}, "a")
    return bool(model.predict_proba_one({}))


@pytest.mark.skipif(not naive_bayes_answers_without_features(),
                    reason="this river's GaussianNB answers nothing without features")
def test_temporally_augmented_naive_bayes_is_moas_rule_but_for_its_first_lag_and_laplace(
        tmp_path):
    """MOA's `TemporallyAugmentedClassifier` around its `NaiveBayes` and delayed-eval's
    `temporally-augmented{"model": "gaussian-nb"}` at delay 1, on a stream whose one attribute
    is constant (MOA's Gaussian estimator gives it 1; delayed-eval reads no feature), each
    against a plain loop of its own rule (docs/semantics.md says where the two differ): MOA's
    class at every instance without a tie, delayed-eval's class probabilities at every
    instance; the two answer alike but at a few instances."""
    jar = moa_jar()
    rng = np.random.default_rng(8)
    labels, y = [], 0
    for _ in range(800):
        if rng.random() < 0.35:
            y = int(rng.choice(3, p=[0.5, 0.3, 0.2]))
        labels.append("abc"[y])
    arff = tmp_path / "sticky.arff"
    arff.write_text("@relation sticky\n@attribute x numeric\n@attribute class {a,b,c}\n@data\n"
                    + "".join(f"0.5,{label}\n" for label in labels))
    predictions = tmp_path / "moa.pred"
    table = moa_task(jar, f"EvaluatePrequentialDelayed -l (meta.TemporallyAugmentedClassifier "
                          f"-l bayes.NaiveBayes -n 1) -s (ArffFileStream -f {arff}) -k 1 -p 0 "
                          f"-o {predictions}", tmp_path)
    assert len(table) == 800
    moa = ["abc"[int(line.split(",")[0])] for line in predictions.read_text().splitlines()]
    rule = [top_class(s, "a") for s in naive_bayes_of_lags(labels, moa=True)]
    assert sum(r == "tie" for r in rule) < 10
    assert [a for a, r in zip(moa, rule) if r != "tie"] == [r for r in rule if r != "tie"]
    run(RunConfig(streams=[f'sticky={arff}{{"features": []}}'],
                  models=['temporally-augmented{"model": "gaussian-nb"}'], delay="1",
                  out=str(tmp_path / "out"), runner="direct", repredict="none",
                  log_predictions="initial-final", drift_on="none", quiet=True))
    log = pd.read_parquet(tmp_path / "out" / "predictions.parquet")
    initial = log[log["kind"] == "initial"].assign(id=lambda f: f["id"].astype(int))
    ours = initial.sort_values("id")
    for proba, expected in zip(ours["proba"], naive_bayes_of_lags(labels, moa=False)):
        got = dict(proba) if proba is not None else None
        assert (got is None) == (expected is None)
        if expected is not None:
            assert set(got) >= set(expected) and all(
                got[c] == pytest.approx(float(v), rel=1e-9, abs=1e-15)
                for c, v in expected.items())
    classes = [None if pd.isna(p) else p for p in ours["y_pred"]]
    assert 1 <= sum(a != b for a, b in zip(moa, classes)) <= 10  # untrained, and near ties
