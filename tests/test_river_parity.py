"""Initial (delayed-prequential) scores equal river's progressive_val_score on the same input."""

import itertools
from types import SimpleNamespace

import pytest
from river import datasets, evaluate, linear_model, metrics, naive_bayes, preprocessing

from pipelines.config import RunConfig
from pipelines.job import run
from pipelines.local import evaluate_locally

N = 3000
DELAYS = (0, 1, 100, 1000)


def river_score(dataset, model, metric, delay):
    evaluate.progressive_val_score(dataset, model, metric, delay=delay)
    return metric.get()


def replay_score(stream: str, model: str, delay) -> SimpleNamespace:
    """Our initial (delayed-prequential) scores, cumulative: n and each metric by name."""
    summary = evaluate_locally(stream, model, str(delay), final=False).summary
    rows = summary[(summary["category"] == "initial") & (summary["window"] == "cumulative")]
    return SimpleNamespace(n=int(rows["n"].iloc[0]), **dict(zip(rows["metric"], rows["value"])))


@pytest.mark.parametrize("delay", DELAYS)
def test_gaussian_nb_on_agrawal_equals_river(delay):
    dataset = itertools.islice(datasets.synth.Agrawal(classification_function=2, seed=7), N)
    acc, kappa = metrics.Accuracy(), metrics.CohenKappa()
    evaluate.progressive_val_score(dataset, naive_bayes.GaussianNB(), acc + kappa, delay=delay)
    ours = replay_score(f'synth:Agrawal{{"n": {N}, "seed": 7, "classification_function": 2}}',
                        "river.naive_bayes.GaussianNB", delay)
    assert ours.n == acc.cm.total_weight  # untrained predictions skipped as river does
    assert ours.accuracy == acc.get()
    # p_ran is summed term by term in float, as MOA and river do: equal to the last bit.
    assert ours.kappa == kappa.get()


def test_multiclass_kappa_is_summed_in_class_order_and_equals_river_to_rounding():
    """With more than two classes, p_ran = Σ_i P(true=i)·P(pred=i) is summed in class-index
    order (declared, else first appearance as a label): equal to the bit to a loop in that
    order. river sums over a set of classes, whose order follows the hash seed, so it agrees to
    rounding only."""
    n, delay = 3000, 50
    rows = list(itertools.islice(datasets.synth.Waveform(seed=5), n))
    model, pairs = naive_bayes.GaussianNB(), []
    for j, (x, y) in enumerate(rows):  # river's delayed progressive validation, by hand
        if j >= delay:
            model.learn_one(*rows[j - delay])
        p = model.predict_one(x)
        if p is not None:
            pairs.append((y, p))
    classes = list(dict.fromkeys(y for _, y in rows))  # first appearance as a label
    assert len(classes) == 3
    total = len(pairs)
    p = sum(y == q for y, q in pairs) / total
    p_ran = 0.0
    for c in classes:
        p_ran += (sum(y == c for y, _ in pairs) / total) * (sum(q == c for _, q in pairs) / total)
    ours = replay_score(f'synth:Waveform{{"n": {n}, "seed": 5}}', "gaussian-nb", delay)
    assert ours.kappa == (p - p_ran) / (1 - p_ran)
    kappa = metrics.CohenKappa()
    evaluate.progressive_val_score(iter(rows), naive_bayes.GaussianNB(), kappa, delay=delay)
    assert ours.kappa == pytest.approx(kappa.get(), rel=1e-12)


@pytest.mark.parametrize("delay", (0, 100))
def test_regression_on_friedman_equals_river(delay):
    def model():
        return preprocessing.StandardScaler() | linear_model.LinearRegression()

    dataset = itertools.islice(datasets.synth.Friedman(seed=3), 2000)
    mae, rmse = metrics.MAE(), metrics.RMSE()
    evaluate.progressive_val_score(dataset, model(), mae + rmse, delay=delay)
    ours = replay_score('synth:Friedman{"n": 2000, "seed": 3}',
                        "river.preprocessing.StandardScaler | river.linear_model.LinearRegression",
                        delay)
    assert ours.n == 2000
    # Exact sums here, running means in river: equal to rounding (1.2e-15 at most here).
    assert ours.mae == pytest.approx(mae.get(), rel=1e-14)
    assert ours.rmse == pytest.approx(rmse.get(), rel=1e-14)


def test_pipeline_equals_river_for_every_delay(tmp_path):
    """The full Beam pipeline (DirectRunner preset) on one stream per delay."""
    base = '"n": 2500, "seed": 11, "classification_function": 4'
    streams = [f'd{d}=synth:Agrawal{{{base}, "delay": "{d}"}}' for d in DELAYS]
    summary = run(RunConfig(streams=streams, models=["river.naive_bayes.GaussianNB"],
                            out=str(tmp_path), runner="direct", repredict="none", quiet=True))
    for d in DELAYS:
        dataset = itertools.islice(datasets.synth.Agrawal(classification_function=4, seed=11),
                                   2500)
        expected = river_score(dataset, naive_bayes.GaussianNB(), metrics.Accuracy(), d)
        row = summary.query(f"stream == 'd{d}' and category == 'initial' and "
                            f"metric == 'accuracy'")
        assert row["value"].item() == expected, d
        assert row["n"].item() == 2500 - max(d, 1)


@pytest.mark.parametrize("final,repredict", [(True, "none"), (False, "every_k_labels:5"),
                                             (True, "every_k_labels:3")])
def test_a_model_that_draws_random_numbers_to_predict_scores_as_in_river(final, repredict):
    """river's kNN searches with SWINN, which draws where each search starts: the final
    predictions and re-predictions the evaluation adds draw nothing from it, so the initial
    scores equal river's delayed progressive validation whatever they are (had they drawn, the
    accuracy here would move by up to 2 points)."""
    from river import neighbors

    def initial(spec, stream):
        summary = evaluate_locally(stream, spec, "40", final=final, repredict=repredict).summary
        rows = summary.query("category == 'initial' and window == 'cumulative'")
        return dict(zip(rows["metric"], rows["value"]))

    def swinn(kind):
        return kind(engine=neighbors.SWINN(dist_func=kind().engine.dist_func, seed=42))

    accuracy, mae = metrics.Accuracy(), metrics.MAE()
    evaluate.progressive_val_score(itertools.islice(datasets.synth.LED(seed=5), 1000),
                                   swinn(neighbors.KNNClassifier), accuracy, delay=40)
    assert initial("river.neighbors.KNNClassifier",
                   'synth:LED{"n": 1000, "seed": 5}')["accuracy"] == accuracy.get()
    evaluate.progressive_val_score(itertools.islice(datasets.synth.Friedman(seed=5), 800),
                                   swinn(neighbors.KNNRegressor), mae, delay=40)
    # (exact sums here, a running mean in river)
    assert initial("river.neighbors.KNNRegressor", 'synth:Friedman{"n": 800, "seed": 5}')[
        "mae"] == pytest.approx(mae.get(), rel=1e-14)


def test_a_file_whose_rows_share_times_scores_as_river_with_a_delay_in_events_or_time(tmp_path):
    """Rows stamped to the second, several per second: the time column orders the stream, and
    the delay still means what river's means, for a number of events (river reveals the label
    of row i just before row i + k) and for a duration (river's `moment` and a timedelta: a
    label due at t before the rows arriving at t, after its own; 0 s: just after it). Scored
    through the Beam pipeline and river alike, accuracy to the bit."""
    import datetime as dt

    import numpy as np
    import pandas as pd
    from river import compose

    rng = np.random.default_rng(5)
    n = 1500
    seconds = np.sort(rng.integers(0, 300, n))  # ~5 rows a second
    x = rng.normal(size=n)
    labels = np.where(x + rng.normal(scale=0.7, size=n) > 0, "a", "b")
    start = dt.datetime(2026, 1, 1)
    times = [start + dt.timedelta(seconds=int(s)) for s in seconds]
    pd.DataFrame({"time": times, "x": x, "label": labels}).to_csv(tmp_path / "t.csv",
                                                                   index=False)
    delays = {"1": 1, "5": 5, "50": 50, "0s": dt.timedelta(0), "1s": dt.timedelta(seconds=1),
              "5s": dt.timedelta(seconds=5)}
    streams = [f'd{i}={tmp_path / "t.csv"}{{"delay": "{d}"}}' for i, d in enumerate(delays)]
    summary = run(RunConfig(streams=streams, models=["gaussian-nb"], out=str(tmp_path / "out"),
                            runner="direct", repredict="none", quiet=True))
    for i, delay in enumerate(delays.values()):
        rows = [({"x": v, "time": t}, y) for v, t, y in zip(x.tolist(), times, labels)]
        accuracy = metrics.Accuracy()
        by_time = {} if isinstance(delay, int) else {"moment": "time"}
        evaluate.progressive_val_score(rows, compose.Select("x") | naive_bayes.GaussianNB(),
                                       accuracy, delay=delay, **by_time)
        row = summary.query(f"stream == 'd{i}' and category == 'initial' and "
                            f"window == 'cumulative' and metric == 'accuracy'")
        assert (row["n"].item(), row["value"].item()) == (
            accuracy.cm.total_weight, accuracy.get()), list(delays)[i]
