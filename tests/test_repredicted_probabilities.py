"""Class probabilities of re-predictions: each equals `predict_proba_one` of the model of its
time, a bin's probabilities follow the bin rule class by class, and the binned and prioritised
probability measures equal scikit-learn's on the stored log, binned by that rule."""

import math
import os

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from benchmarks.naive_reevaluation import naive_replay, reference_bins
from metrics import binning
from pipelines.cli import main
from pipelines.config import RunConfig
from pipelines.job import run
from tests.test_backfill import _run_then_backfill
from tests.helpers import read_csv, waveform_csv
from tests.test_probabilities import _reference
from tests.test_reevaluation import random_stream
from transforms.models.specs import ModelSpec
from transforms.replay.engine import ReplayEngine
from transforms.replay.repredict import RepredictPolicy

MODELS = ["river.naive_bayes.GaussianNB",
          'river.tree.HoeffdingTreeClassifier{"grace_period": 50}',
          'river.tree.HoeffdingTreeClassifier{"grace_period": 50, "leaf_prediction": "mc"}',
          "knn", "river.linear_model.LogisticRegression",
          'river.tree.HoeffdingAdaptiveTreeClassifier{"grace_period": 50, "seed": 1}',
          'adaptive-random-forest{"n_models": 3, "grace_period": 50}']


class _WithProbabilities:
    """A model whose `predict_one` answers (class, predict_proba_one): what the straightforward
    replay records at every prediction."""

    def __init__(self, model):
        self.model = model

    def predict_one(self, x):
        return self.model.predict_one(x), dict(self.model.predict_proba_one(x))

    def learn_one(self, x, y):
        self.model.learn_one(x, y)


def _vector(proba: dict, classes: list) -> list | None:
    return [proba.get(c, 0.0) for c in classes] if proba else None


def _replays(model: str, k: int, bins: int = 0):
    events = random_stream(n=500)
    spec = ModelSpec.parse(model)
    engine = ReplayEngine(spec, "s", [0, 1], repredict=RepredictPolicy("every_k_labels", k),
                          bins=bins, repredicted_probabilities=True)
    ours = engine.drain(events).outcomes
    naive = naive_replay(events, _WithProbabilities(spec.build([0, 1])), k)
    assert len(ours) == len(naive) > 400
    return engine, ours, naive


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("k", [1, 3])
def test_every_repredictions_probabilities_are_predict_proba_one_of_its_time(model, k):
    """Against a scan of the whole buffer at every label with one predict_proba_one per
    pending instance (feature updates and orphan labels included)."""
    engine, ours, naive = _replays(model, k)
    classes = engine.classes
    compared = 0
    for o, (key, _, _, _, initial, reps, final) in zip(ours, naive):
        assert o.id == key
        for theirs, mine in ((initial, o.initial_proba), (final, o.final_proba)):
            expected = _vector(theirs[1], classes)
            assert (mine and list(mine)[:len(expected or ())]) == pytest.approx(expected,
                                                                                abs=1e-12)
        assert len(reps) == (0 if o.rep_times is None else len(o.rep_times))
        for (t, (_, proba)), t_ours, row in zip(reps, o.rep_times if reps else (),
                                                     o.rep_proba if reps else ()):
            assert t == t_ours
            expected = _vector(proba, classes)
            if expected is None:
                assert np.isnan(row).all()
            else:
                assert row[:len(expected)] == pytest.approx(expected, abs=1e-9), (key, t)
                compared += 1
    assert compared > 4000 // k


@pytest.mark.parametrize("model", MODELS[:2])
def test_a_bins_probabilities_follow_the_bin_rule_class_by_class(model):
    """Bins 0..B+1 of each class's probability equal the item-by-item rule (carry forward,
    a single re-prediction, else the time-weighted mean of the standing one and the bin's)
    applied to the straightforward replay's probabilities."""
    bins = 7
    engine, ours, naive = _replays(model, 2, bins=bins)
    classes = engine.classes
    mapped = 0
    for o, (_, t0, t_label, _, initial, reps, final) in zip(ours, naive):
        if o.bins_proba is None:  # labelled before any re-prediction: scored from `initial`
            assert not reps
            continue
        mapped += 1
        for c, name in enumerate(classes):
            def p(proba, name=name):
                return proba.get(name, 0.0) if proba else None
            expected = reference_bins(t0, t_label, p(initial[1]),
                                      [(t, p(proba)) for t, (_, proba) in reps],
                                      p(final[1]), bins, classification=False)
            got = [None if math.isnan(v) else v for v in o.bins_proba[:, c].tolist()]
            assert got == pytest.approx(expected, abs=1e-9)
    assert mapped > 400


N, DELAY, K, BINS, WINDOW = 600, 40, 4, 5, 200


@pytest.fixture(scope="session")  # (computed once per test process)
def binned_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("waveform")
    path, labels = waveform_csv(folder, N, seed=5)
    out = os.path.join(folder, "out")
    run(RunConfig(streams=[f"w={path}"], models=["nb=gaussian-nb"], delay=str(DELAY),
                  repredict=f"every_k_labels:{K}", bins=BINS, windows=[WINDOW], auc=True,
                  repredicted_probabilities=True, out=out, quiet=True, runner="direct"))
    return labels, pd.read_parquet(os.path.join(out, "predictions.parquet")), \
        read_csv(os.path.join(out, "summary.csv"))


def _missing(value) -> bool:
    return value is None or isinstance(value, float) and math.isnan(value)


def _binned_from_log(predictions: pd.DataFrame, labels: list, bins: int = BINS):
    """Per labelled instance (label order = row order: a fixed delay) its class index and its
    bins' class and probability rows, binned item by item from the stored log."""
    classes = sorted(set(labels))
    y, bin_class, bin_proba = [], [], []
    for i, rows in predictions.groupby("id", sort=False):
        rows = rows.sort_values("t", kind="stable")
        by_kind = {kind: part for kind, part in rows.groupby("kind")}
        first, last = by_kind["initial"].iloc[0], by_kind["final"].iloc[-1]
        reps = by_kind.get("re-prediction", rows.iloc[:0])

        def index(label):
            return None if _missing(label) else classes.index(label)

        def p(proba, c):
            return None if _missing(proba) else dict(proba).get(classes[c], 0.0)

        bin_class.append(reference_bins(
            first.t, last.t, index(first.y_pred),
            [(t, index(v)) for t, v in zip(reps.t, reps.y_pred)], index(last.y_pred), bins))
        bin_proba.append(np.array([[np.nan if v is None else v for v in reference_bins(
            first.t, last.t, p(first.proba, c), [(t, p(v, c)) for t, v in zip(reps.t, reps.proba)],
            p(last.proba, c), bins, classification=False)] for c in range(len(classes))]).T)
        y.append(classes.index(labels[int(i)]))
    return np.array(y), bin_class, np.array(bin_proba)


def test_binned_and_prioritised_probability_measures_equal_sklearn_on_the_log(binned_run):
    labels, predictions, summary = binned_run
    y, bin_class, bin_proba = _binned_from_log(predictions, labels)
    assert len(y) == N
    assert (predictions["kind"] == "re-prediction").sum() > N * DELAY // K // 2
    names = ("log_loss", "brier", "roc_auc", "pr_auc")
    binned = summary[(summary["category"] == "binned") & summary["class"].isna()]
    per_bin = {}
    for window, rows in (("cumulative", slice(0, N)), (f"w={WINDOW}", slice(N - WINDOW, N))):
        for b in range(BINS + 2):
            scored = [i for i in range(N)[rows] if bin_class[i][b] is not None
                      and not np.isnan(bin_proba[i, b]).any()]
            expected = _reference(y[scored], bin_proba[scored, b])
            at = binned[(binned["window"] == window) & (binned["bin"] == b)].set_index("metric")
            for metric in names:
                assert at.loc[metric, "value"] == pytest.approx(expected[metric], rel=1e-9), \
                    (window, b, metric)
            per_bin[window, b] = expected
    # Ψα over bins 0..B, weights (1/α)^(b/B), by hand.
    psi = summary[(summary["category"] == "intermediate") & summary["class"].isna()]
    for window in ("cumulative", f"w={WINDOW}"):
        for alpha in (1.0, 2.0, 10.0):
            weights = [(1 / alpha) ** (b / BINS) for b in range(BINS + 1)]
            for metric in names:
                expected = sum(w * per_bin[window, b][metric] for b, w in enumerate(weights)) \
                    / sum(weights)
                value = psi[(psi["window"] == window) & (psi["alpha"] == alpha)
                            & (psi["metric"] == metric)]["value"]
                assert value.item() == pytest.approx(expected, rel=1e-9), (window, alpha, metric)


@pytest.mark.parametrize("model", ["gaussian-nb", "majority"])
def test_faded_binned_probability_measures_equal_a_loop_on_the_log(tmp_path, model):
    """Re-predictions at the bins' boundaries come before the first label: a model that has
    learned none gives no probabilities (as the log says), and those bins count in no faded
    measure (they counted, as vectors of zeros, where no class was known). A plain loop in
    label order over the log's binned vectors: S = α·S + log-loss, W = α·W + 1 for a label
    with probabilities in the bin, α·S and α·W for one without."""
    n, delay, bins, alpha = 300, 40, 4, 0.99
    path, labels = waveform_csv(tmp_path, n, seed=5)
    out = str(tmp_path / "out")
    run(RunConfig(streams=[f"w={path}"], models=[model], delay=str(delay),
                  repredict="bin_boundaries", bins=bins, fadings=[alpha],
                  repredicted_probabilities=True, out=out, quiet=True, runner="direct"))
    predictions = pd.read_parquet(os.path.join(out, "predictions.parquet"))
    summary = read_csv(os.path.join(out, "summary.csv"))
    # river's models answer predict_proba_one with {} until they have learned a label, and
    # predict no class: the log holds no probabilities there (it held maps of zeros).
    reps = predictions[predictions["kind"] == "re-prediction"]
    assert reps["y_pred"].isna().sum() > bins and \
        reps.loc[reps["y_pred"].isna(), "proba"].isna().all()
    y, _, bin_proba = _binned_from_log(predictions, labels, bins)
    none = np.isnan(bin_proba).any(axis=2)  # labels × bins
    assert none[:, 1].any() and not none[:, 1].all()  # some bins had no probabilities
    faded = summary[(summary["category"] == "binned") & (summary["window"] == f"fading={alpha}")
                    & summary["class"].isna()]
    for b in range(bins + 2):
        s = w = brier = 0.0
        for i in range(len(y)):
            p = bin_proba[i, b]
            s, w, brier = alpha * s, alpha * w, alpha * brier
            if not none[i, b]:
                s += -math.log(min(max(p[y[i]], 1e-15), 1 - 1e-15))
                brier += sum((p[c] - (c == y[i])) ** 2 for c in range(len(p))) / 2
                w += 1
        at = faded[faded["bin"] == b].set_index("metric")["value"]
        assert at["log_loss"] == pytest.approx(s / w, rel=1e-9), b
        assert at["brier"] == pytest.approx(brier / w, rel=1e-9), b


def test_vectors_are_binned_as_each_column_alone_bit_for_bit():
    """`binned_proba` bins all classes at once; each column equals the float rule applied to
    that column alone (NaN rows: no probabilities), to the bit."""
    rng = np.random.default_rng(11)
    n, width, bins = 300, 3, 9
    t0 = rng.uniform(0, 100, n)
    t_label = t0 + rng.choice([0.0, 0.5, 7.0, 40.0], n)
    sizes = rng.integers(0, 12, n)
    t = np.concatenate([np.sort(rng.uniform(a, b, k)) for a, b, k in zip(t0, t_label, sizes)])
    v = rng.dirichlet(np.ones(width), len(t))
    v[rng.random(len(t)) < 0.1] = np.nan
    initial, final = rng.dirichlet(np.ones(width), n), rng.dirichlet(np.ones(width), n)
    initial[rng.random(n) < 0.1] = np.nan
    together = binning.binned_proba(t0, t_label, initial, final, sizes, t, v, bins)
    for c in range(width):
        alone = binning.binned_flat(t0, t_label, initial[:, c], final[:, c], sizes, t, v[:, c],
                                    bins, classification=False)
        np.testing.assert_array_equal(together[:, :, c], alone)


def test_a_backfill_of_the_runs_log_gives_the_same_binned_probability_measures(tmp_path):
    replayed, backfilled = _run_then_backfill(
        tmp_path, 'synth:SEA{"n": 1200, "seed": 3, "noise": 0.1}',
        ["no-change", "gaussian-nb", "hoeffding-tree"], delay="120", bins=10,
        repredict="every_k_labels:3", windows=[300], fadings=[0.99], curve_every=250,
        repredicted_probabilities=True)
    summary = read_csv(tmp_path / "run" / "summary.csv")
    binned = summary[(summary["category"] == "binned") & (summary["metric"] == "log_loss")]
    assert len(binned) == 3 * 12 * 3 and binned["value"].notna().all()
    assert backfilled == replayed
    curves = [pd.read_parquet(tmp_path / d / "curves.parquet") for d in ("run", "backfill")]
    pd.testing.assert_frame_equal(*curves)


def test_a_backfill_of_a_log_with_no_re_prediction_takes_the_option_as_its_run_did(tmp_path):
    """A label due before the policy's first round (delay 5 events, every 20 labels): the run
    made no re-prediction, so none lacks its probabilities; its backfill with the option gives
    the run's summary, each bin of log-loss but the last being the initial one."""
    replayed, backfilled = _run_then_backfill(
        tmp_path, 'synth:SEA{"n": 600, "seed": 3, "noise": 0.1}', ["gaussian-nb"], delay="5",
        bins=4, repredict="every_k_labels:20", repredicted_probabilities=True)
    assert backfilled == replayed
    summary = read_csv(tmp_path / "run" / "summary.csv")
    log_loss = summary[(summary["metric"] == "log_loss") & (summary["window"] == "cumulative")]
    initial = log_loss.loc[log_loss["category"] == "initial", "value"].item()
    binned = log_loss[log_loss["category"] == "binned"].sort_values("bin")["value"].tolist()
    assert binned[:5] == [initial] * 5 and len(binned) == 6


def test_by_default_only_initial_and_final_predictions_keep_probabilities(tmp_path):
    out = tmp_path / "o"
    run(RunConfig(streams=['synth:SEA{"n": 600, "seed": 3}'], models=["gaussian-nb"],
                  delay="60", bins=10, out=str(out), quiet=True, runner="direct"))
    summary = read_csv(out / "summary.csv")
    probability = summary[summary["metric"].isin(["log_loss", "brier", "ece"])]
    assert set(probability["category"]) == {"initial", "final"}
    log = pd.read_parquet(out / "predictions.parquet")
    reps = log[log["kind"] == "re-prediction"]
    assert len(reps) > 1000 and reps["proba"].isna().all()
    assert log[log["kind"] == "final"]["proba"].notna().sum() == 599  # not the untrained one


@pytest.mark.parametrize("other", ["--no-probabilities", "--repredict=none"])
def test_repredicted_probabilities_without_probabilities_or_repredictions_is_one_line(
        tmp_path, capsys, other):
    status = main(["run", "--stream", 'synth:SEA{"n": 50}', "--model", "gaussian-nb",
                   "--repredicted-probabilities", other, "--out", str(tmp_path / "o"),
                   "--runner", "direct"])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1
    assert err[0].startswith("delayed-eval: error: --repredicted-probabilities means nothing")


def test_a_log_whose_re_predictions_carry_no_probabilities(tmp_path, capsys):
    """--repredicted-probabilities over a log without them was an internal KeyError (Ψα of
    bins without log-loss): with none in the log, one line; with one model's only, that
    model's binned measures are the run's, and the other's are those of the prediction standing
    in each bin: from the first re-prediction on (every label: bin 1), one without them."""
    stream = 'synth:SEA{"n": 600, "seed": 3}'
    kw = dict(streams=[stream], delay="60", bins=5, repredict="every_k_labels:1", quiet=True,
              runner="direct", run_id="r")
    replayed = run(RunConfig(models=["gaussian-nb", "hoeffding-tree"], out=str(tmp_path / "run"),
                             repredicted_probabilities=True, **kw))
    log = pq.read_table(tmp_path / "run" / "predictions.parquet")
    reps = pc.equal(log["kind"], "re-prediction")
    for name, stripped in (("none", reps), ("tree's", pc.and_(reps, pc.equal(
            log["model"], "hoeffding-tree")))):
        proba = pc.if_else(stripped, pa.scalar(None, log["proba"].type), log["proba"])
        pq.write_table(log.set_column(log.schema.get_field_index("proba"), "proba", proba),
                       tmp_path / f"{name}.parquet")
    assert main(["backfill", "--stream", stream, "--delay", "60", "--bins", "5",
                 "--repredict", "every_k_labels:1", "--predictions",
                 str(tmp_path / "none.parquet"), "--repredicted-probabilities", "--out",
                 str(tmp_path / "o"), "--runner", "direct"]) == 2
    assert capsys.readouterr().err == (
        f"delayed-eval: error: --repredicted-probabilities: the re-predictions in the prediction "
        f"log {tmp_path / 'none.parquet'} carry no class probabilities (a run logs them only "
        f"when run with it); leave it out\n")
    backfilled = run(RunConfig(models=[], predictions=str(tmp_path / "tree's.parquet"),
                               out=str(tmp_path / "b"), repredicted_probabilities=True, **kw))
    key = ["model", "category", "bin", "alpha", "window", "metric", "class"]
    both = replayed.merge(backfilled, on=key, how="outer", suffixes=("_run", "_log"))
    nb = both[(both["model"] == "gaussian-nb") & both["metric"].isin(["log_loss", "brier"])]
    assert len(nb) > 20 and (nb["value_run"] == nb["value_log"]).all()
    tree = both[(both["model"] == "hoeffding-tree") & (both["metric"] == "log_loss")
                & (both["window"] == "cumulative") & both["class"].isna()]
    binned = tree[tree["category"] == "binned"].set_index("bin")
    assert (binned.loc[[0, 6], "value_log"] == binned.loc[[0, 6], "value_run"]).all()
    # A bin's prediction has probabilities when it is the initial one standing (no
    # re-prediction before the bin; in the bin none, or several: their mean leaves out those
    # without). Counted in a loop over the log: bin b = 1 + ⌊(t − t0)/Δ · B⌋ (at most B; Δ
    # from the initial prediction to the final one, made as the label came: the stream's end
    # for the last 60).
    has = np.zeros(5, dtype=int)
    logged = log.to_pandas()
    for _, rows in logged[logged["model"] == "hoeffding-tree"].groupby("id"):
        first = rows[rows["kind"] == "initial"].iloc[0]
        delta = rows.loc[rows["kind"] == "final", "t"].iloc[0] - first["t"]
        if first["proba"] is None:
            continue
        seen = [min(5, 1 + int((t - first["t"]) / delta * 5)) if delta else 5
                for t in rows.loc[rows["kind"] == "re-prediction", "t"]]
        for b in range(1, 6):
            before, inside = sum(s < b for s in seen), seen.count(b)
            has[b - 1] += before == 0 and inside != 1
    assert has.tolist() == binned.loc[1:5, "n_log"].tolist() and has[1:].max() < 10
    assert (tree.loc[tree["category"] == "intermediate", "n_log"] == has[-1]).all()
