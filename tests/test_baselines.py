"""The Persistent and Majority baselines behind κ_per and κ_m, per view, against a plain loop
written here from MOA's definition (BasicClassificationPerformanceEvaluator with its Window and
FadingFactor estimators): the Majority baseline of a label is the majority class of the view's
own class counts, counted including that label, ties to the class first seen as a label."""

import math

import numpy as np
import pandas as pd
import pytest

from pipelines.config import RunConfig
from pipelines.job import run

W, ALPHA, CURVE = 30, 0.9, 25
TIME_SIZE, TIME_PERIOD = 40.0, 20.0


def five_class_stream(path, n=400, seed=3):
    """Five classes whose frequencies shift every 50 rows, so a 30-label window's majority
    moves while the cumulative one lags behind."""
    rng = np.random.default_rng(seed)
    ys = []
    for i in range(n):
        p = np.full(5, 0.1)
        p[(i // 50) % 5] = 0.6
        ys.append(int(rng.choice(5, p=p)))
    x = np.array(ys) + rng.normal(0, 1.2, n)
    pd.DataFrame({"time": np.arange(n), "x": x, "label": [f"c{y}" for y in ys]}) \
        .to_csv(path, index=False)
    return [f"c{y}" for y in ys]


def labelled_sequence(out, model, ys):
    """(label time, y, initial, final) in label-arrival order, from the prediction log: the
    final prediction is made at the label's arrival, just before the model learns it."""
    log = pd.read_parquet(out / "predictions.parquet")
    log = log[log["model"] == model]
    initial = dict(zip(log.loc[log["kind"] == "initial", "id"], log.loc[log["kind"] == "initial",
                                                                           "y_pred"]))
    final = log[log["kind"] == "final"].sort_values("t", kind="stable")
    return [(t, ys[int(i)], initial[i], p) for i, t, p in zip(final["id"], final["t"],
                                                              final["y_pred"])]


def first_max(counts: dict, order: list):
    best = order[0]
    for c in order:
        if counts.get(c, 0) > counts.get(best, 0):
            best = c
    return best


def baseline_loop(seq):
    """Per label: (Persistent, cumulative, window, faded, time-window Majority), a plain loop."""
    order, out, prev = [], [], None
    for n, (t, y, _, _) in enumerate(seq):
        if y not in order:
            order.append(y)
        window = [s[1] for s in seq[max(0, n - W + 1):n + 1]]
        faded = {}
        for _, y_old, _, _ in seq[:n + 1]:
            faded = {c: ALPHA * v for c, v in faded.items()}
            faded[y_old] = faded.get(y_old, 0.0) + 1.0
        recent = [s[1] for s in seq[:n + 1] if t - TIME_SIZE < s[0] <= t]
        count = lambda labels: {c: labels.count(c) for c in order}  # noqa: E731
        out.append((y if prev is None else prev,
                    first_max(count([s[1] for s in seq[:n + 1]]), order),
                    first_max(count(window), order), first_max(faded, order),
                    first_max(count(recent), order)))
        prev = y
    return out


def kappas(rows, column, weights=None):
    """accuracy, κ_per and κ_m of the labels in `rows` (index, prediction, baselines) — the
    scored ones: a label without a prediction counts in no score — optionally faded."""
    n = correct = per = maj = 0.0
    for w, (y, p, base) in zip(weights or [1.0] * len(rows), rows):
        if p is None or (isinstance(p, float) and math.isnan(p)):
            continue
        n, correct = n + w, correct + w * (p == y)
        per, maj = per + w * (base[0] == y), maj + w * (base[column] == y)
    if not n:
        return dict.fromkeys(("accuracy", "kappa_t", "kappa_m"), math.nan)
    acc = correct / n
    return {"accuracy": acc, "kappa_t": (acc - per / n) / (1 - per / n) if per != n else math.nan,
            "kappa_m": (acc - maj / n) / (1 - maj / n) if maj != n else math.nan}


def test_windowed_and_faded_majority_and_persistent_baselines_follow_moa(tmp_path):
    ys = five_class_stream(tmp_path / "s.csv")
    out = tmp_path / "out"
    run(RunConfig(streams=[f"s={tmp_path / 's.csv'}"], models=["gaussian-nb"], delay="5",
                  out=str(out), runner="direct", repredict="none", windows=[W], fadings=[ALPHA],
                  time_windows=[f"{TIME_SIZE:g}/{TIME_PERIOD:g}"], curve_every=CURVE,
                  log_predictions="initial-final", drift_on="none", quiet=True))
    seq = labelled_sequence(out, "gaussian-nb", ys)
    base = baseline_loop(seq)
    # The windowed majority really differs from the cumulative one on this stream.
    assert sum(b[1] != b[2] for b in base) > 50 and sum(b[1] != b[3] for b in base) > 50
    curves = pd.read_parquet(out / "curves.parquet")
    got = {(r.category, r.window, r.metric, r.labels): r.value for r in curves.itertuples()}
    checked = 0
    points = sorted({*range(CURVE, len(seq) + 1, CURVE), len(seq)})
    for category, pick in (("initial", 2), ("final", 3)):
        scored = [(s[1], s[pick], b) for s, b in zip(seq, base)]
        for p in points:
            upto = scored[:p]
            views = {"cumulative": kappas(upto, 1), f"w={W}": kappas(upto[-W:], 2),
                     f"fading={ALPHA!r}": kappas(upto, 3, [ALPHA ** (p - 1 - i)
                                                           for i in range(p)])}
            for view, expected in views.items():
                for metric, value in expected.items():
                    have = got[(category, view, metric, p)]
                    assert have == pytest.approx(value, rel=1e-9, abs=1e-12) or \
                        (math.isnan(have) and math.isnan(value)), (category, view, metric, p)
                    checked += 1
        label = f"time={TIME_SIZE:g}/{TIME_PERIOD:g}"
        for end in np.arange(TIME_PERIOD, seq[-1][0] + TIME_PERIOD, TIME_PERIOD):
            inside = [r for r, s in zip(scored, seq) if end - TIME_SIZE <= s[0] < end]
            labels = sum(s[0] < end for s in seq)
            for metric, value in kappas(inside, 4).items():
                have = got[(category, label, metric, labels)]
                assert have == pytest.approx(value, rel=1e-9, abs=1e-12) or \
                    (math.isnan(have) and math.isnan(value)), (category, label, metric, end)
                checked += 1
    assert checked > 250


def implied_baseline_accuracy(p, kappa):
    """The baseline's accuracy p_b behind κ = (p − p_b)/(1 − p_b)."""
    return (p - kappa) / (1 - kappa)


def test_a_class_only_predicted_changes_no_baseline(tmp_path):
    """Two logistic regressions that differ only in their intercept predict different classes
    before they learn: the Persistent and Majority baselines (from the labels alone) are the
    same for both, and equal to a plain loop over the labels."""
    stream = 'sea=synth:SEA{"n": 300, "seed": 2}'
    models = ['up=river.linear_model.LogisticRegression{"intercept_init": 3.0}',
              'down=river.linear_model.LogisticRegression{"intercept_init": -3.0}']
    out = tmp_path / "out"
    run(RunConfig(streams=[stream], models=models, delay="20", out=str(out), runner="direct",
                  repredict="none", curve_every=20, windows=[15], log_predictions="initial-final",
                  drift_on="none", quiet=True))
    from river.datasets import synth
    ys = [y for _, (_, y) in zip(range(300), synth.SEA(seed=2))]
    log = pd.read_parquet(out / "predictions.parquet")
    first = log[(log["kind"] == "initial")].groupby("model")["y_pred"].first()
    assert first["up"] != first["down"]  # the two models' first classes differ
    order = list(dict.fromkeys(ys))
    labels = ys[:len(log[(log["model"] == "up") & (log["kind"] == "final")])]
    curves = pd.read_parquet(out / "curves.parquet")
    curves = curves[curves["category"] == "initial"]
    for window, size in (("cumulative", None), ("w=15", 15)):
        for p in sorted(set(curves["labels"])):
            per = maj = 0
            seen = labels[max(0, p - size):p] if size else labels[:p]
            for n in range(p - len(seen), p):
                y = labels[n]
                per += (labels[n - 1] if n else labels[0]) == y
                counts = labels[max(0, n - size + 1) if size else 0:n + 1]
                maj += first_max({c: counts.count(c) for c in order}, order) == y
            for model in ("up", "down"):
                at = curves[(curves["model"] == model) & (curves["window"] == window)
                            & (curves["labels"] == p)].set_index("metric")["value"]
                for metric, hits in (("kappa_t", per), ("kappa_m", maj)):
                    if hits == len(seen) or at[metric] == 1:
                        continue  # 0/0: no baseline accuracy to read back
                    assert implied_baseline_accuracy(at["accuracy"], at[metric]) == \
                        pytest.approx(hits / len(seen), abs=1e-9), (model, window, metric, p)


def test_regression_baselines_predict_the_latest_label_and_the_mean_of_those_known(tmp_path):
    """no-change-regressor predicts the latest label that has arrived, mean-regressor the mean
    of the labels that have arrived, at arrival (initial) and just before the instance's own
    label (final). One instance a second, each label 2.5 s later: instance t is predicted
    knowing the labels of instances up to t − 3 (initial) and up to t − 1 (final). MAE, RMSE
    and n from a plain loop over the labels."""
    rng = np.random.default_rng(5)
    n = 200
    walk = np.cumsum(rng.normal(0, 1, n)) + rng.normal(0, 0.3, n)  # persistence has a say
    path = tmp_path / "walk.csv"
    pd.DataFrame({"time": np.arange(n), "x": rng.normal(size=n), "label": walk,
                  "lag": 2.5}).to_csv(path, index=False)
    ys = pd.read_csv(path)["label"].tolist()  # (the values as written)
    out = tmp_path / "out"
    run(RunConfig(streams=[f"walk={path}"], models=["no-change-regressor", "mean-regressor"],
                  delay="column:lag", out=str(out), runner="direct",
                  repredict="every_k_labels:1", drift_on="none", quiet=True))
    summary = pd.read_csv(out / "summary.csv")
    cumulative = summary[(summary["window"] == "cumulative") & summary["segment"].isna()]
    for model, predict in (("no-change-regressor", lambda known: known[-1]),
                           ("mean-regressor", lambda known: math.fsum(known) / len(known))):
        for category, seen in (("initial", lambda t: ys[:max(t - 2, 0)]),
                               ("final", lambda t: ys[:t])):
            errors = [ys[t] - predict(seen(t)) for t in range(n) if seen(t)]
            rows = cumulative[(cumulative["model"] == model)
                              & (cumulative["category"] == category)].set_index("metric")
            assert rows.loc["mae", "value"] == pytest.approx(
                sum(abs(e) for e in errors) / len(errors), rel=1e-12), (model, category)
            assert rows.loc["rmse", "value"] == pytest.approx(
                math.sqrt(sum(e * e for e in errors) / len(errors)), rel=1e-12)
            assert rows.loc["mae", "n"] == len(errors) == n - (3 if category == "initial" else 1)
    manifest = pd.read_json(out / "manifest.json", typ="series")
    unscored = {c["model"]: c["unscored_initial"] for c in manifest["counts"]}
    assert unscored == {"no-change-regressor": 3, "mean-regressor": 3}
