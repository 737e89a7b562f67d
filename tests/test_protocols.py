"""The periodic holdout and delayed cross-validation: each equals a straightforward loop over
the same events (a river model, a dict of what waits for its label), and the holdout shows
paper 004's convergence on a stationary stream."""

import copy
import json
import statistics

import pandas as pd
import pytest
from river import naive_bayes

from metrics.bootstrap import poisson_weights
from pipelines.config import RunConfig
from pipelines.job import run
from transforms.replay.protocols import CV_SEED
from transforms.streams.delays import DelaySpec
from transforms.streams.sources import StreamSpec
from tests.helpers import read_csv

SEA = 'sea=synth:SEA{"n": 3000, "seed": 3}'
DELAY = "40"


def events():
    """(kind, id, x, y) in replay order, as the stream reader gives them."""
    return [(e[3], e[4], e[5], e[6]) for e in
            StreamSpec.parse(SEA).events(DelaySpec.parse(DELAY)) if not isinstance(e, dict)]


def holdout_loop(every: int, size: int) -> dict:
    """Holdout point -> (labels scored, hits), by hand: after every `every` labels learned, a
    frozen copy of the model predicts the next `size` instances, which are never learned."""
    model, waiting, held = naive_bayes.GaussianNB(), {}, {}
    learned, frozen, point, left = 0, None, 0, 0
    scores: dict = {}
    for kind, key, x, y in events():
        if kind == "instance":
            if left:
                held[key] = (point, frozen.predict_one(x))
                left -= 1
            else:
                waiting[key] = x
        elif key in held:
            at, predicted = held.pop(key)
            n, hits = scores.get(at, (0, 0))
            scores[at] = (n + (predicted is not None), hits + (predicted == y))
        else:
            model.learn_one(waiting.pop(key), y)
            learned += 1
            if learned % every == 0:
                frozen, point, left = copy.deepcopy(model), learned, size
    return scores


def test_holdout_sets_equal_a_loop_that_freezes_the_model_and_never_learns_them(tmp_path):
    run(RunConfig(streams=[SEA], models=["nb=gaussian-nb"], delay=DELAY, repredict="none",
                  holdout="400:150", out=str(tmp_path), quiet=True, runner="direct"))
    curves = pd.read_parquet(tmp_path / "curves.parquet")
    got = curves[(curves["category"] == "holdout") & (curves["metric"] == "accuracy")]
    expected = holdout_loop(400, 150)
    assert got["labels"].tolist() == sorted(expected)
    for point, n, value in zip(got["labels"], got["n"], got["value"]):
        assert (n, value) == (expected[point][0], expected[point][1] / expected[point][0])
    counts = json.loads((tmp_path / "manifest.json").read_text())["counts"][0]
    held = len(expected) * 150
    assert counts["held_out"] == held and counts["labelled"] == 3000 - held
    assert counts["instances"] == counts["labelled"] + counts["held_out"]
    summary = read_csv(tmp_path / "summary.csv")
    last = summary[(summary["category"] == "holdout") & (summary["metric"] == "accuracy")]
    assert float(last["value"].iloc[0]) == expected[max(expected)][1] / expected[max(expected)][0]


def test_a_holdout_that_scored_no_set_says_so(tmp_path, capsys):
    """Labels 250 events late on a stream of 300: no instance arrives after the model has
    learned 60 labels, so no set is taken, which the table (no holdout row) does not say."""
    from pipelines.cli import main

    assert main(["run", "--stream", 'sea=synth:SEA{"n": 300, "seed": 3}', "--model",
                 "gaussian-nb", "--delay", "250", "--holdout", "60:10", "--runner", "direct",
                 "--out", str(tmp_path)]) == 0
    assert "sea: --holdout 60:10 scored no holdout set: no instance arrived after the model " \
        "had learned 60 labels" in capsys.readouterr().out
    counts = json.loads((tmp_path / "manifest.json").read_text())["counts"][0]
    assert counts["held_out"] == 0 and counts["labelled"] == 300


def test_on_a_stationary_stream_the_forgetting_estimates_approach_the_holdout_error(tmp_path):
    # Gama et al. 2009, Fig. 3: a learner that keeps improving (a Hoeffding tree on a
    # stationary RandomRBF stream): the cumulative prequential error stays pessimistic, the
    # error over a window or with a fading factor converges to the holdout error (generous
    # bounds; measured 0.2235 and 0.2226 against 0.2250, the cumulative error 0.2676).
    run(RunConfig(streams=['synth:RandomRBF{"n": 20000, "seed": 2}'], models=["hoeffding-tree"],
                  delay="100", repredict="none", holdout="4000:2000", windows=[2000],
                  fadings=[0.999], out=str(tmp_path), quiet=True, runner="direct"))
    summary = read_csv(tmp_path / "summary.csv")
    accuracy = summary[summary["metric"] == "accuracy"]

    def error(category, window):
        rows = accuracy[(accuracy["category"] == category) & (accuracy["window"] == window)]
        return 1 - float(rows["value"].iloc[0])

    holdout = error("holdout", "cumulative")
    assert abs(error("initial", "w=2000") - holdout) < 0.02
    assert abs(error("initial", "fading=0.999") - holdout) < 0.02
    assert error("initial", "cumulative") > holdout + 0.03


def fold_loop(method: str, folds: int, fold: int) -> tuple[int, int]:
    """(scored, hits) of fold `fold`'s initial predictions, by hand: every instance predicted
    at arrival; instance m learned by the fold when MOA's rule says so."""
    model, waiting = naive_bayes.GaussianNB(), {}
    n = hits = m = 0
    for kind, key, x, y in events():
        if kind == "instance":
            m += 1
            if method == "k-fold":
                learns = m % folds != fold
            elif method == "split":
                learns = m % folds == fold
            else:
                learns = poisson_weights([m], folds, CV_SEED)[0, fold] > 0
            waiting[key] = (x, model.predict_one(x), learns)
        else:
            x, predicted, learns = waiting.pop(key)
            if predicted is not None:
                n, hits = n + 1, hits + (predicted == y)
            if learns:
                model.learn_one(x, y)
    return n, hits


@pytest.mark.parametrize("method", ["k-fold", "split", "bootstrap"])
def test_each_fold_equals_its_own_replay_and_the_means_and_sds_are_the_folds(tmp_path, method):
    k = 3
    run(RunConfig(streams=[SEA], models=["nb=gaussian-nb"], delay=DELAY, repredict="none",
                  cv=f"{method}:{k}", final=False, out=str(tmp_path), quiet=True,
                  runner="direct"))
    summary = read_csv(tmp_path / "summary.csv")
    accuracy = summary[(summary["category"] == "initial") & (summary["window"] == "cumulative")
                       & summary["class"].isna()]
    values = []
    for fold in range(k):
        n, hits = fold_loop(method, k, fold)
        row = accuracy[(accuracy["model"] == f"nb#{fold + 1}")
                       & (accuracy["metric"] == "accuracy")]
        assert (int(row["n"].iloc[0]), float(row["value"].iloc[0])) == (n, hits / n)
        values.append(hits / n)
    mean = accuracy[(accuracy["model"] == "nb") & (accuracy["metric"] == "accuracy")]
    sd = accuracy[(accuracy["model"] == "nb") & (accuracy["metric"] == "accuracy_sd")]
    assert float(mean["value"].iloc[0]) == pytest.approx(statistics.mean(values), abs=1e-15)
    assert float(sd["value"].iloc[0]) == pytest.approx(statistics.stdev(values), abs=1e-15)
    assert len(set(values)) == k  # the folds learned different labels


def test_every_replay_path_gives_the_same_holdout_and_folds(tmp_path):
    tables = []
    for replay in ("per-stream", "per-key", "grouped", "stateful"):
        run(RunConfig(streams=[SEA], models=["nb=gaussian-nb", "nc=no-change"], delay=DELAY,
                      repredict="none", holdout="500:100", cv="k-fold:2", replay=replay,
                      out=str(tmp_path / replay), quiet=True, runner="direct"))
        tables.append(pd.read_parquet(tmp_path / replay / "summary.parquet")
                      .drop(columns="run_id"))
    assert {"holdout"} <= set(tables[0]["category"])
    assert {"nb#1 vs nc#1", "nb#2 vs nc#2"} == set(
        tables[0].loc[tables[0]["category"] == "comparison", "model"])
    for other in tables[1:]:
        pd.testing.assert_frame_equal(tables[0], other)


def test_a_threshold_holds_for_each_models_mean_over_its_folds(tmp_path, capsys):
    from pipelines.cli import main

    args = ["run", "--stream", SEA, "--model", "nb=gaussian-nb", "--delay", DELAY,
            "--repredict", "none", "--cv", "k-fold:2", "--out", str(tmp_path), "--quiet",
            "--runner", "direct", "--fail-if", "initial accuracy > 0.5",
            "--fail-if", "nb#2: initial accuracy > 0.5"]
    assert main(args) == 3
    lines = capsys.readouterr().err.strip().splitlines()
    assert [line.split(": ")[1] for line in lines] == ["threshold crossed", "threshold crossed"]
    assert [line.split(": ")[2] for line in lines] == ["sea / nb", "sea / nb#2"]
