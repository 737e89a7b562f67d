"""Backfill: a prediction log scored without a model gives what the replay gave."""

import gzip
import json
import math
import os
import re

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from river import datasets

from pipelines.cli import main
from pipelines.config import LOGGED, RunConfig
from pipelines.job import run
from pipelines.plan import plan
from tests.helpers import RemoteFileSystem, read_csv
from transforms.backfill import logs
from transforms.backfill.join import join_predictions, label_columns
from transforms.backfill.logs import PredictionLogSpec, TypesChanged
from transforms.errors import ConfigError, InputError
from transforms.records import Outcome

SEA = 'synth:SEA{"n": 1500, "seed": 3, "noise": 0.1}'


def _run_then_backfill(tmp_path, stream, models, name_models=False, **kw):
    """Run, then backfill the run's own prediction log: with no --model (every model in the
    log, in the run's order) unless `name_models`."""
    kw = dict(streams=[stream], quiet=True, run_id="same", runner="direct", **kw)
    replayed = run(RunConfig(models=models, out=str(tmp_path / "run"), **kw))
    names = [m for m in replayed["model"].unique() if " vs " not in m] if name_models else []
    run(RunConfig(models=names, out=str(tmp_path / "backfill"),
                  predictions=str(tmp_path / "run" / "predictions.parquet"), **kw))
    return [(tmp_path / d / "summary.csv").read_text() for d in ("run", "backfill")]


def test_backfill_of_a_runs_predictions_gives_the_identical_summary(tmp_path):
    # Re-evaluation (binned, Ψα), windows, fading, time windows, comparisons, drift; no
    # --model: the log's models in the run's order (not sorted), so the pairs keep their sign.
    replayed, backfilled = _run_then_backfill(
        tmp_path, SEA, ["no-change", "gaussian-nb", "hoeffding-tree"], delay="150", bins=10,
        repredict="every_k_labels:3", windows=[300], fadings=[0.99], time_windows=["500"],
        curve_every=250)
    assert "binned" in replayed and "comparison" in replayed and "fading" in replayed
    assert backfilled == replayed
    curves = [pd.read_parquet(tmp_path / d / "curves.parquet") for d in ("run", "backfill")]
    pd.testing.assert_frame_equal(*curves)
    counts = json.loads((tmp_path / "backfill" / "manifest.json").read_text())["counts"]
    logged = pd.read_parquet(tmp_path / "run" / "predictions.parquet")
    for c in counts:
        assert c["labelled"] == 1500 and c["unmatched_predictions"] == 0
        assert c["logged_predictions"] == (logged["model"] == c["model"]).sum()


def test_a_backfill_of_a_runs_log_under_another_delay_says_which_the_run_had(tmp_path,
                                                                              capsys):
    """The predictions of a run with --delay 40 backfilled with --delay 0: the final ones
    fall after their labels; a line names the run's delay (the log records it), and none is
    printed when the delays agree: given, or taken from the log when no --delay is given."""
    stream = 'sea=synth:SEA{"n": 300, "seed": 3}'
    assert main(["run", "--stream", stream, "--model", "gaussian-nb", "--delay", "40",
                 "--out", str(tmp_path / "run"), "--quiet", "--runner", "direct"]) == 0
    told = ("sea: the run that wrote the prediction log had delay=40, this backfill delay=0: "
            "its predictions are matched to other label times than the run's; give --delay 40 "
            "to score them as the run did")
    for delay, expected in ((["--delay", "0"], True), (["--delay", "40"], False),
                            ([], False)):
        assert main(["backfill", "--stream", stream, *delay, "--predictions",
                     str(tmp_path / "run"), "--out", str(tmp_path / "backfill"),
                     "--runner", "direct"]) == 0
        assert (told in capsys.readouterr().out.splitlines()) is expected


@pytest.mark.parametrize("delay", ["3", "2.5s"])
def test_rows_the_run_set_aside_for_their_features_are_set_aside_by_its_backfill(tmp_path,
                                                                                delay):
    """A row with a missing or infinite feature is a dead letter of the run, label and all; the
    backfill of the run's own log reads the stream's features as the run did, so it sets the
    same rows aside: the same labels in the baselines and, with a delay counted in instances,
    the same label times — the summary byte for byte, the manifest's counts alike."""
    rng = np.random.default_rng(11)
    lines = ["time,x1,x2,label"]
    for i in range(300):
        y = rng.choice(["a", "b", "c"], p=[0.5, 0.3, 0.2])
        x1 = "" if i % 23 == 5 else "inf" if i % 41 == 7 else f"{rng.normal('abc'.index(y)):.4f}"
        lines.append(f"{i},{x1},{rng.normal():.4f},{y}")
    path = tmp_path / "gaps.csv"
    path.write_text("\n".join(lines) + "\n")
    replayed, backfilled = _run_then_backfill(
        tmp_path, f"gaps={path}", ["no-change", "gaussian-nb"], delay=delay, bins=5,
        repredict="every_k_labels:2", windows=[50], curve_every=50)
    dead = [json.loads(line) for line in
            (tmp_path / "run" / "dead_letters.jsonl").read_text().splitlines()]
    assert sorted(d["row"] for d in dead) == [i + 1 for i in range(300)  # (rows from 1)
                                              if i % 23 == 5 or i % 41 == 7]
    assert ",kappa_m," in replayed and backfilled == replayed
    counts = [{c["model"]: {k: c[k] for k in ("instances", "labels", "labelled", "dead_letters",
                                              "pending_at_end")} for c in json.loads(
        (tmp_path / d / "manifest.json").read_text())["counts"]} for d in ("run", "backfill")]
    assert counts[0] == counts[1]


def test_a_class_first_labelled_late_gives_the_run_and_its_backfill_one_brier(tmp_path):
    # Classes a and b, then from row 120 c as well: the run's early probability rows name two
    # classes, the backfill's every class of the log. The early segment and the early curve
    # points see only a and b; their Brier must be the same number in both.
    rng = np.random.default_rng(5)
    lines = ["time,x1,x2,phase,label"]
    for i in range(240):
        y = rng.choice(["a", "b"] if i < 120 else ["a", "b", "c"])
        lines.append(f"{i},{rng.normal('abc'.index(y)):.4f},{rng.normal():.4f},"
                     f"{'early' if i < 100 else 'late'},{y}")
    path = tmp_path / "late.csv"
    path.write_text("\n".join(lines) + "\n")
    replayed, backfilled = _run_then_backfill(
        tmp_path, f'late={path}{{"features": ["x1", "x2"]}}', ["gaussian-nb"], delay="10",
        repredict="none", segments=["phase"], fadings=[0.9], curve_every=40)
    assert ",phase=early," in replayed and ",brier," in replayed
    assert backfilled == replayed
    curves = [pd.read_parquet(tmp_path / d / "curves.parquet") for d in ("run", "backfill")]
    pd.testing.assert_frame_equal(*curves)


@pytest.mark.parametrize("delay, options", [("40", []), ("40", ["--no-final"]), ("3", [])])
def test_the_commands_backfill_of_a_runs_folder_gives_its_summary_byte_for_byte(tmp_path,
                                                                                 delay, options):
    """As the README says, with the commands' defaults: no --delay (the run's, from the log),
    no --repredict (its protocol names how the run re-predicted, from the log), no --model. A
    run with --no-final has no final rows, and the backfill of its log, which names no final
    prediction, has none either (it gave them with n 0). With a delay of 3 each label comes
    before a tenth label could re-predict its instance: the run's binned rows repeat its
    initial ones, and so do the backfill's (the log holds every re-prediction: none)."""
    common = ["--stream", 'synth:SEA{"n": 400, "seed": 2}', "--run-id", "same", "--runner",
              "direct", "--quiet"]
    assert main(["run", *common, "--delay", delay, *options, "--model", "no-change",
                 "--model", "gaussian-nb", "--out", str(tmp_path / "run")]) == 0
    assert main(["backfill", *common, "--predictions", str(tmp_path / "run"), "--out",
                 str(tmp_path / "backfill")]) == 0
    replayed, backfilled = ((tmp_path / d / "summary.csv").read_text()
                            for d in ("run", "backfill"))
    assert f"delay={delay} repredict=every_k_labels:10,binned" in replayed
    assert backfilled == replayed
    log = pd.read_parquet(tmp_path / "run" / "predictions.parquet")
    assert ("re-prediction" in set(log["kind"])) == (delay == "40")


def test_without_delay_a_backfill_takes_the_runs_delay_where_a_stream_has_none_of_its_own(
        tmp_path):
    """Stream a has the run's --delay 40, stream b a delay option of its own (given again to
    the backfill): the backfill without --delay takes 40 for a from the log."""
    common = ["--stream", 'a=synth:SEA{"n": 300, "seed": 2}', "--stream",
              'b=synth:SEA{"n": 300, "seed": 3, "delay": "7"}', "--model", "gaussian-nb",
              "--run-id", "same", "--runner", "direct", "--quiet"]
    assert main(["run", *common, "--delay", "40", "--out", str(tmp_path / "run")]) == 0
    assert main(["backfill", *common[:4], "--run-id", "same", "--runner", "direct",
                 "--quiet", "--predictions", str(tmp_path / "run"), "--out",
                 str(tmp_path / "backfill")]) == 0
    replayed, backfilled = ((tmp_path / d / "summary.csv").read_text()
                            for d in ("run", "backfill"))
    assert "delay=40 " in replayed and "delay=7 " in replayed and backfilled == replayed


def test_a_backfill_of_a_holdout_runs_log_leaves_the_held_out_instances_out_too(tmp_path):
    """A run with --holdout 500:100 takes 100 instances after every 500 labels out of its
    prequential stream (their labels are in no baseline) and logs no prediction of them; the
    backfill of its log holds the same instances out of its label pass: the summary is the
    run's but for the holdout rows (the frozen models' predictions are not logged), and the
    counts are the run's."""
    common = ["--stream", 'synth:SEA{"n": 2000, "seed": 1}', "--run-id", "same", "--runner",
              "direct", "--quiet"]
    assert main(["run", *common, "--delay", "50", "--holdout", "500:100", "--model",
                 "gaussian-nb", "--model", "no-change", "--out", str(tmp_path / "run")]) == 0
    assert main(["backfill", *common, "--predictions", str(tmp_path / "run"), "--out",
                 str(tmp_path / "backfill")]) == 0
    replayed, backfilled = ((tmp_path / d / "summary.csv").read_text().splitlines()
                            for d in ("run", "backfill"))
    held = [line for line in replayed if ",holdout," in line]
    assert held and backfilled == [line for line in replayed if line not in held]
    counts = [{(c["model"], k): v for c in json.load(open(tmp_path / d / "manifest.json"))[
        "counts"] for k, v in c.items() if k in ("labelled", "held_out", "held_out_labels")}
        for d in ("run", "backfill")]
    assert counts[0] == counts[1] and counts[0]["gaussian-nb", "held_out"] == 300


def test_a_log_without_re_predictions_gives_no_binned_measures(tmp_path, capsys):
    """A log of initial and final predictions (`--log-predictions initial-final`): its binned
    and Ψα rows would each repeat the initial ones. The backfill scores it as a run without
    re-evaluation scores that stream: byte for byte the same summary."""
    stream = 'synth:SEA{"n": 500, "seed": 3}'
    kw = dict(streams=[stream], delay="50", quiet=True, run_id="same", runner="direct",
              curve_every=100)
    run(RunConfig(models=["gaussian-nb"], out=str(tmp_path / "logged"),
                  log_predictions="initial-final", **kw))
    run(RunConfig(models=["gaussian-nb"], out=str(tmp_path / "none"), repredict="none", **kw))
    log = str(tmp_path / "logged" / "predictions.parquet")
    run(RunConfig(models=[], predictions=log, out=str(tmp_path / "backfill"),
                  repredict="logged", **kw))
    summary = (tmp_path / "backfill" / "summary.csv").read_text()
    assert ",binned," not in summary and ",intermediate," not in summary
    assert summary == (tmp_path / "none" / "summary.csv").read_text()
    assert main(["backfill", "--stream", stream, "--delay", "50", "--predictions", log,
                 "--repredicted-probabilities", "--out", str(tmp_path / "x"), "--runner",
                 "direct"]) == 2
    assert "has no re-predictions" in capsys.readouterr().err


def test_a_model_predicting_before_the_first_label_indexes_classes_in_label_order(tmp_path):
    """river's LogisticRegression predicts from the first instance, before any label: its
    classes are still indexed in label order (the first label, 1, first), so its per-class rows
    and the bins' vote ties (to the lowest index) are those of the backfill of its log, whose
    classes come from the labels alone; it was indexed by its first prediction (0), and the
    binned accuracy at bin 100 differed in the third decimal. With the re-predictions' class
    probabilities binned too."""
    stream = 'synth:Agrawal{"n": 2000}'
    first_label = next(iter(datasets.synth.Agrawal(seed=42)))[1]
    replayed, backfilled = _run_then_backfill(
        tmp_path, stream, ["logistic-regression", "gaussian-nb"], delay="100", bins=100,
        curve_every=500, repredicted_probabilities=True)
    assert backfilled == replayed
    curves = [pd.read_parquet(tmp_path / d / "curves.parquet") for d in ("run", "backfill")]
    pd.testing.assert_frame_equal(*curves)
    logged = pd.read_parquet(tmp_path / "run" / "predictions.parquet")
    assert logged[logged["model"] == "logistic-regression"]["y_pred"].iloc[0] == "0"
    summary = read_csv(tmp_path / "run" / "summary.csv", dtype={"class": str})
    for model in ("logistic-regression", "gaussian-nb"):
        rows = summary[(summary["model"] == model) & (summary["metric"] == "precision")]
        assert rows["class"].iloc[0] == str(first_label) == "1", model


@pytest.mark.parametrize("again_at", [None, 4.5, 6.0])
def test_a_log_without_kinds_has_binned_measures_only_if_an_instance_is_predicted_again(
        tmp_path, again_at):
    """A deployed model's log of one decision per request, without a kind column (as most
    are): its binned and Ψα rows would repeat the initial ones, so there are none, nor final
    rows (the join would count no prediction final: each is its instance's first). Instance 4
    (arriving at 4, labelled at 8) predicted again half-way through its wait makes them; a
    prediction logged twice at the same time (a retry, here with another answer) is a repeat:
    the first counts, and it is counted."""
    labels = [i % 3 == 0 for i in range(30)]
    pd.DataFrame({"id": range(30), "time": range(30), "label": labels}).to_csv(
        tmp_path / "rows.csv", index=False)
    said = [i % 2 == 0 for i in range(30)]
    log = pd.DataFrame({"id": range(30), "t": [i + 0.5 for i in range(30)], "y_pred": said,
                        "model": ["v1"] * 15 + ["v2"] * 15})
    if again_at is not None:
        log = pd.concat([log, pd.DataFrame({"id": [4], "t": [again_at], "y_pred": [not said[4]],
                                            "model": ["v1"]})])
    log.to_csv(tmp_path / "log.csv", index=False)
    assert main(["backfill", "--stream", f"s={tmp_path / 'rows.csv'}", "--predictions",
                 str(tmp_path / "log.csv"), "--delay", "4s", "--out", str(tmp_path / "o"),
                 "--runner", "direct", "--quiet"]) == 0
    summary = read_csv(tmp_path / "o" / "summary.csv")
    assert ({"binned", "intermediate"} <= set(summary["category"])) == (again_at == 6.0)
    assert ("final" in set(summary["category"])) == (again_at == 6.0)
    initial = summary[(summary.metric == "accuracy") & (summary.category == "initial") &
                      (summary.window == "cumulative")].set_index("model")["value"]
    for model, rows in (("v1", range(15)), ("v2", range(15, 30))):
        assert initial[model] == np.mean([said[i] == labels[i] for i in rows])
    counts = {c["model"]: c for c in json.loads((tmp_path / "o" / "manifest.json").read_text())[
        "counts"]}
    assert counts["v1"]["repeated_predictions"] == (again_at == 4.5)


def test_a_log_of_finals_for_some_instances_says_how_few_the_final_measures_rest_on(tmp_path,
                                                                                   capsys):
    """A service that logs a decision at arrival and, for some requests, again when the label
    comes: the final measures rest on those alone, which the table does not show; one line
    per kind says on how many, counted here from the log as written."""
    labels = [i % 3 == 0 for i in range(30)]
    pd.DataFrame({"id": range(30), "time": range(30), "label": labels}).to_csv(
        tmp_path / "rows.csv", index=False)
    initial = [(i, i + 0.5, i % 2 == 0) for i in range(30) if i != 5]  # (5: never logged)
    final = [(i, i + 4.0, labels[i]) for i in range(0, 30, 4)]  # at the label's time
    pd.DataFrame(initial + final, columns=["id", "t", "y_pred"]).to_csv(tmp_path / "log.csv",
                                                                         index=False)
    assert main(["backfill", "--stream", f"s={tmp_path / 'rows.csv'}", "--predictions",
                 str(tmp_path / "log.csv"), "--delay", "4s", "--out", str(tmp_path / "o"),
                 "--runner", "direct"]) == 0
    told = [line for line in capsys.readouterr().out.splitlines() if "rest on" in line]
    assert told == [
        f"s / log: the initial measures rest on {len(initial)} of its 30 labelled instances: for "
        f"the other {30 - len(initial)} the log holds no initial prediction (the first in the "
        f"latency period, or of kind initial), or an empty one",
        f"s / log: the final measures rest on {len(final)} of its 30 labelled instances: for the "
        f"other {30 - len(final)} the log holds no final prediction (at the label's time, or "
        f"of kind final), or an empty one"]
    summary = read_csv(tmp_path / "o" / "summary.csv")
    accuracy = summary[(summary.metric == "accuracy") & (summary.window == "cumulative") &
                       summary.category.isin(["initial", "final"])]
    assert accuracy.set_index("category")["n"].to_dict() == {"initial": 29, "final": 8}


def test_a_log_without_kinds_is_read_once_to_tell_its_finals_and_re_predictions(tmp_path,
                                                                                  monkeypatch):
    """Both questions come down to whether an instance was predicted twice: a night's log
    without a kind column is read for it once, not once per question."""
    pd.DataFrame({"id": [1, 1, 2], "t": [0.0, 1.0, 2.0], "y_pred": ["a", "a", "b"]}).to_csv(
        tmp_path / "log.csv", index=False)
    reads = []
    read = PredictionLogSpec._read_predicted_twice
    monkeypatch.setattr(PredictionLogSpec, "_read_predicted_twice",
                        lambda self, paths: reads.append(paths) or read(self, paths))
    spec = PredictionLogSpec.parse(str(tmp_path / "log.csv"))
    assert spec.has_finals() and spec.has_repredictions() and len(reads) == 1


def test_a_backfill_from_python_scores_a_log_as_the_command_does(tmp_path):
    """`evaluate(..., predictions=LOG)` took the run's default policy, every_k_labels:10:
    a log of one prediction per instance got binned rows repeating the initial ones and a
    protocol naming a policy that never made it; the command's backfill has none. And its
    default delay was 0, not the delay recorded in a run's log."""
    from pipelines import evaluate

    t, stream, labels = _three_days(tmp_path)
    pd.DataFrame({"id": [str(i) for i in range(5)], "t": t[:5], "y_pred": list("abbba"),
                  "model": "v1"}).to_csv(tmp_path / "log.csv", index=False)
    spec = f'{stream}{{"labels": "{labels}"}}'
    assert main(["backfill", "--stream", spec, "--predictions", str(tmp_path / "log.csv"),
                 "--out", str(tmp_path / "cli"), "--runner", "direct", "--quiet",
                 "--run-id", "same"]) == 0
    summary = evaluate([spec], [], predictions=str(tmp_path / "log.csv"), run_id="same",
                       out=str(tmp_path / "api"))
    command = read_csv(tmp_path / "cli" / "summary.csv")
    assert "binned" not in set(summary["category"])
    assert set(summary["protocol"]) == set(command["protocol"])
    assert (tmp_path / "api" / "summary.csv").read_bytes() == \
        (tmp_path / "cli" / "summary.csv").read_bytes()
    # And without a delay, a run's log is scored under the run's own, as by the command.
    sea = 'synth:SEA{"n": 300, "seed": 4}'
    evaluate([sea], ["gaussian-nb"], delay="40", run_id="same", out=str(tmp_path / "run"))
    evaluate([sea], [], predictions=str(tmp_path / "run"), run_id="same",
             out=str(tmp_path / "again"))
    assert (tmp_path / "again" / "summary.csv").read_bytes() == \
        (tmp_path / "run" / "summary.csv").read_bytes()


def test_a_backfill_from_python_takes_its_log_as_a_dataframe(tmp_path):
    """A log at hand in Python is a DataFrame: `evaluate(..., predictions=frame)` scores it as
    the same rows in a file (before, the frame's text was taken for a path), with the log's
    options through `stream_spec_of`, its named index a column, and without a model column
    the model `predictions`. Oracles: a plain loop over the rows for the accuracy, the file's
    backfill for the whole summary."""
    from pipelines import evaluate, stream_spec_of

    t, stream, labels = _three_days(tmp_path)
    spec = f'{stream}{{"labels": "{labels}"}}'
    frame = pd.DataFrame({"id": [str(i) for i in range(5)], "decision": list("abbba"),
                          "scored_at": pd.to_datetime(t[:5], unit="s", utc=True)
                          + pd.Timedelta(minutes=1), "model": "v1"})
    options = {"time": "scored_at", "prediction": "decision"}
    frame.to_parquet(tmp_path / "log.parquet")
    evaluate([spec], [], predictions=f"{tmp_path / 'log.parquet'}{json.dumps(options)}",
             run_id="same", out=str(tmp_path / "file"))
    for given, out in ((frame, "frame"), (frame.set_index("id"), "indexed")):
        summary = evaluate([spec], [], predictions=stream_spec_of(given, **options),
                           run_id="same", out=str(tmp_path / out))
        assert (tmp_path / out / "summary.csv").read_bytes() == \
            (tmp_path / "file" / "summary.csv").read_bytes()
    hits = sum(p == y for p, y in zip(frame["decision"], "ababa"))
    accuracy = summary.query("category == 'initial' and metric == 'accuracy' and "
                             "window == 'cumulative'")
    assert accuracy[["model", "value", "n"]].values.tolist() == [["v1", hits / 5, 5]]
    summary = evaluate([spec], [], predictions=stream_spec_of(frame.drop(columns="model"),
                                                              **options))
    assert set(summary["model"]) == {"predictions"}
    with pytest.raises(ConfigError, match="predictions: a list given; give the log's path"):
        evaluate([spec], [], predictions=[("1", "a")])


def test_a_backfill_lists_its_logs_files_once(tmp_path, monkeypatch):
    """Planning asks the log's files many questions; on `gs://` each listing is a round trip,
    so the files are listed once for the whole backfill."""
    t, stream, labels = _three_days(tmp_path)
    pd.DataFrame({"id": ["0", "1", "0"], "t": [t[0], t[1], t[2]], "y_pred": ["a", "b", "a"],
                  "model": "v1"}).to_csv(tmp_path / "log.csv", index=False)
    listings = []
    listed = logs.table_files
    monkeypatch.setattr(logs, "table_files",
                        lambda *a, **k: listings.append(a) or listed(*a, **k))
    code = main(["backfill", "--stream", f'{stream}{{"labels": "{labels}"}}', "--predictions",
                 str(tmp_path / "log.csv"), "--out", str(tmp_path / "o"), "--runner",
                 "direct", "--quiet"])
    assert code == 0 and len(listings) == 1


def test_backfill_of_a_regression_run(tmp_path):
    # No --task: the labels, numbers with fractions, say the predictions are a regressor's.
    replayed, backfilled = _run_then_backfill(
        tmp_path, 'synth:Friedman{"n": 800, "seed": 3}', ["linear-regression"], delay="50",
        bins=4, repredict="every_k_labels:5", name_models=True)
    assert "rmse" in replayed and backfilled == replayed


def test_whole_number_labels_with_fractional_predictions_are_a_regression(tmp_path):
    """Counts as labels (0, 3, 5, ...) and a log of 2.5, 4.1, ...: without --task the
    predictions are scored as a regressor's (MAE by hand), not as classes none of which match."""
    y = [0, 3, 5, 2, 7, 1]
    pd.DataFrame({"time": range(6), "x": 1.0, "label": y}).to_csv(tmp_path / "counts.csv",
                                                                   index=False)
    predicted = [0.5, 2.5, 4.1, 2.0, 6.0, 1.5]
    pd.DataFrame({"id": range(6), "t": range(6), "kind": "initial", "y_pred": predicted}) \
        .to_csv(tmp_path / "log.csv", index=False)
    assert main(["backfill", "--stream", str(tmp_path / "counts.csv"), "--predictions",
                 str(tmp_path / "log.csv"), "--out", str(tmp_path / "out"),
                 "--quiet", "--runner", "direct"]) == 0
    summary = read_csv(tmp_path / "out" / "summary.csv")
    mae = summary[(summary["metric"] == "mae") & (summary["category"] == "initial")
                  & (summary["window"] == "cumulative")]
    assert mae["value"].item() == pytest.approx(np.mean(np.abs(np.subtract(y, predicted))))


@pytest.mark.parametrize("log_fmt", ["csv", "jsonl"])
def test_ids_with_leading_zeros_meet_in_every_file(tmp_path, log_fmt):
    """Account numbers 000001, 000002, ... in CSV instance and label tables and in a CSV or
    JSON Lines log: every prediction is matched (as 1, 2, ... none was) and scored. (The JSON
    Lines log is gzipped, and spells its kinds ' Initial': it is read as 'initial'.)"""
    ids = [f"{i:06d}" for i in range(1, 9)]
    labels = ["a", "b", "a", "a", "b", "b", "a", "b"]
    predicted = ["a", "a", "a", "b", "b", "b", "a", "a"]
    (tmp_path / "inst.csv").write_text("id,time,x\n" + "".join(
        f"{i},{t},1.0\n" for t, i in enumerate(ids)))
    (tmp_path / "lab.csv").write_text("id,time,label\n" + "".join(
        f"{i},{t + 3},{y}\n" for t, (i, y) in enumerate(zip(ids, labels))))
    log = pd.DataFrame({"id": ids, "t": range(8), "y_pred": predicted,
                        "kind": "initial" if log_fmt == "csv" else " Initial"})
    path = tmp_path / ("log.csv" if log_fmt == "csv" else "log.jsonl.gz")
    if log_fmt == "csv":
        log.to_csv(path, index=False)
    else:
        log.to_json(path, orient="records", lines=True, compression="gzip")
    assert main(["backfill", "--stream", f'{tmp_path / "inst.csv"}{{"labels": '
                 f'"{tmp_path / "lab.csv"}"}}', "--predictions", str(path), "--out",
                 str(tmp_path / "out"), "--quiet", "--runner", "direct"]) == 0
    summary = read_csv(tmp_path / "out" / "summary.csv")
    accuracy = summary[(summary["metric"] == "accuracy") & (summary["category"] == "initial")
                       & (summary["window"] == "cumulative")]
    assert (accuracy["value"].item(), accuracy["n"].item()) == (
        np.mean(np.array(labels) == np.array(predicted)), 8)


def _labels():
    # Instance 7 waits from t=0 to its label at t=100 (true class b = 1); instance 8 from 50
    # to 60 (class a = 0).
    return label_columns([Outcome(1, 8, 50.0, 60.0, 0, 0, 0, None, None),
                          Outcome(2, 7, 0.0, 100.0, 1, 0, 1, None, None)])


def _log(rows, kinds=True):
    ids, kind, t, y = zip(*rows)
    cols = {"id": np.array(ids, dtype=object), "t": np.array(t, dtype=float),
            "y_pred": np.array(y, dtype=object)}
    if kinds:
        cols["kind"] = np.array(kind, dtype=object)
    return cols


# DESIGN's worked example for instance 7 (B=4): bins [a, b, a, b, b, a].
WORKED = [("7", "initial", 0.0, "a"), ("7", "re-prediction", 20.0, "b"),
          ("7", "re-prediction", 30.0, "a"), ("7", "re-prediction", 40.0, "a"),
          ("7", "re-prediction", 45.0, "b"), ("7", "re-prediction", 80.0, "b"),
          ("7", "final", 100.0, "a")]


def test_join_by_hand_with_and_without_kinds():
    for kinds in (True, False):
        # Shuffled log order: the join sorts by time.
        rows = WORKED[::-1] + [("8", "initial", 50.0, "b"), ("8", "final", 60.0, "a")]
        outcomes, counts = join_predictions(_labels(), _log(rows, kinds), ["a", "b"], bins=4)
        assert [o.id for o in outcomes] == [8, 7]
        assert outcomes[1].bins.tolist() == [0, 1, 0, 1, 1, 0]
        assert outcomes[0].bins.tolist() == [1, 1, 1, 1, 1, 0]
        assert (outcomes[0].initial, outcomes[0].final) == (1, 0)
        assert counts == {"logged_predictions": 9, "unmatched_predictions": 0,
                          "unmatched_pending": 0, "unmatched_outside_range": 0,
                          "unmatched_no_instance": 0,
                          "unmatched_before_arrival": 0, "unmatched_after_label": 0,
                          "unmatched_unreadable_time": 0, "repeated_predictions": 0,
                          "probabilities_not_summing_to_1": 0,
                          "unscored_initial": 0, "unscored_final": 0,
                          "repredicted": 1}  # (7 was re-predicted, 8 was not)


def test_unmatched_and_missing_predictions_are_counted():
    rows = [("7", "initial", 0.0, "a"),
            ("8", "re-prediction", 40.0, "a"),   # before 8 arrived
            ("8", "re-prediction", 61.0, "a"),   # after 8's label
            ("9", "initial", 5.0, "b"),          # no such labelled instance (pending)
            ("7", "re-prediction", 50.0, None),  # the model could not predict
            ("7", "re-prediction", math.nan, "b")]  # a time the log's reader could not read
    outcomes, counts = join_predictions(_labels(), _log(rows), ["a", "b"], bins=2)
    assert counts == {"logged_predictions": 6, "unmatched_predictions": 4,
                      "unmatched_pending": 0, "unmatched_outside_range": 0,
                      "unmatched_no_instance": 1, "unmatched_before_arrival": 1,
                      "unmatched_after_label": 1,
                      "unmatched_unreadable_time": 1, "repeated_predictions": 0,
                      "probabilities_not_summing_to_1": 0,
                      "unscored_initial": 1, "unscored_final": 2,
                      "repredicted": 1}  # (7's at 50, which answered nothing)
    assert outcomes[0].initial is None and outcomes[0].bins.tolist() == [-1, -1, -1, -1]
    # 7 (B=2): bin 1 [0, 50) carries the initial a; bin 2 [50, 100) takes its one
    # re-prediction, "none"; no final.
    assert outcomes[1].bins.tolist() == [0, 0, -1, -1]


def test_a_reused_id_belongs_to_the_instance_waiting_at_that_time():
    labels = label_columns([Outcome(1, "x", 0.0, 10.0, 0, 0, 0, None, None),
                            Outcome(2, "x", 20.0, 30.0, 1, 0, 0, None, None)])
    rows = [("x", "initial", 0.0, "a"), ("x", "initial", 20.0, "b"),
            ("x", "final", 10.0, "b"), ("x", "final", 30.0, "a"),
            ("x", "initial", 1.0, "b")]  # a second initial: the first one counts
    outcomes, _ = join_predictions(labels, _log(rows), ["a", "b"], bins=0)
    assert [(o.initial, o.final) for o in outcomes] == [(0, 1), (1, 0)]


def test_csv_log_in_partitions_with_renamed_columns(tmp_path):
    # A deployed model's log: one model, no stream or model column, hive partitions.
    stream = tmp_path / "stream.csv"
    pd.DataFrame({"id": range(6), "time": [0., 1, 2, 3, 4, 5], "f": [0.] * 6,
                  "label": list("ababab"), "label_time": [2.5, 3.5, 4.5, 5.5, 6.5, 7.5]}
                 ).to_csv(stream, index=False)
    for day, rows in (("2026-11-01", range(0, 3)), ("2026-11-02", range(3, 6))):
        part = tmp_path / "log" / f"date={day}"
        part.mkdir(parents=True)
        # Times as ISO datetimes (the stream's are seconds since the epoch).
        pd.DataFrame({"request": [str(i) for i in rows],
                      "ts": [f"1970-01-01T00:00:0{i}Z" for i in rows],
                      "score": ["a"] * len(rows)}).to_csv(part / "p.csv", index=False)
    spec = f'{tmp_path / "log"}{{"id": "request", "time": "ts", "prediction": "score"}}'
    assert [os.path.basename(os.path.dirname(f)) for f in PredictionLogSpec.parse(spec).files()] \
        == ["date=2026-11-01", "date=2026-11-02"]
    out = tmp_path / "out"
    summary = run(RunConfig(streams=[f"{stream}{{\"classes\": [\"a\", \"b\"]}}"],
                            models=["prod"], predictions=spec, out=str(out), quiet=True,
                            runner="direct", repredict="none", final=False))
    initial = summary.query("category == 'initial' and metric == 'accuracy'")
    assert initial[["value", "n"]].values.tolist() == [[0.5, 6]]  # a, b, a, b, a, b vs all a


def test_a_stream_named_otherwise_than_in_the_log_is_told_by_the_names_in_it(tmp_path, capsys):
    """A run's log names its stream `sea`; backfilled as stream `s`, none of its rows
    matched, and the error blamed --from/--to, which was not given."""
    stream = 'synth:SEA{"n": 200, "seed": 3}'
    assert main(["run", "--stream", f"sea={stream}", "--model", "gaussian-nb", "--delay", "20",
                 "--out", str(tmp_path / "run"), "--runner", "direct", "--quiet"]) == 0
    argv = ["backfill", "--predictions", str(tmp_path / "run"), "--delay", "20", "--out",
            str(tmp_path / "backfill"), "--runner", "direct", "--quiet"]
    assert main([*argv, "--stream", f"s={stream}"]) == 2
    assert capsys.readouterr().err == (
        f"delayed-eval: error: prediction log {tmp_path / 'run'}: no predictions of stream(s) "
        f"['s']; the streams in its 'stream' column are ['sea']; name the stream as the log "
        f"does, --stream 'sea=...'\n")
    assert main([*argv, "--stream", f"sea={stream}"]) == 0


def test_a_csv_log_with_semicolons_and_decimal_commas_reads_as_its_plain_twin(tmp_path):
    (tmp_path / "plain.csv").write_text("id,t,y_pred,p\na,1.5,x,0.25\nb,12,y,\n")
    (tmp_path / "semi.csv").write_text("id;t;y_pred;p\na;1,5;x;0,25\nb;12;y;\n")
    score = '"score": "p", "positive": "x"'

    def rows(path, more=""):
        log = PredictionLogSpec.parse(f"{tmp_path / path}{{{score}{more}}}")
        return [r for batch in log.read(log.files()[0]) for r in batch.to_pylist()]

    with pytest.raises(InputError, match=r"semi\.csv: not a readable CSV file .*; the file "
                                         r"seems separated by ';': give the option "
                                         r'\{"sep": ";"\}'):
        rows("semi.csv")
    with pytest.raises(InputError, match=r"column 'p' holds numbers written with a decimal "
                                         r"comma \('0,25'\); give the option "
                                         r'\{"decimal": ","\}'):
        rows("semi.csv", ', "sep": ";"')
    assert rows("semi.csv", ', "sep": ";", "decimal": ","') == rows("plain.csv") == [
        {"id": "a", "time": 1.5, "prediction": "x", "p": 0.25, "proba": [("x", 0.25)]},
        {"id": "b", "time": 12.0, "prediction": "y", "p": None, "proba": None}]
    # A regressor's predictions with decimal commas are numbers with fractions, as its twin's.
    (tmp_path / "plain.csv").write_text("id,t,y_pred\na,1,2.5\nb,2,3\n")
    (tmp_path / "semi.csv").write_text("id;t;y_pred\na;1;2,5\nb;2;3\n")
    assert PredictionLogSpec.parse(f'{tmp_path / "semi.csv"}{{"sep": ";", "decimal": ","}}'
                                   ).predicts_numbers() is True
    assert PredictionLogSpec.parse(str(tmp_path / "plain.csv")).predicts_numbers() is True


@pytest.mark.parametrize("options, told", [
    ({"id": 3}, "option id names a column, so it is a text, not 3"),
    ({"prediction": ["a"]}, "option prediction names a column, so it is a text, not ['a']"),
    ({"score": "p", "positive": ["a"]}, "option positive is a class (a text or a number)"),
    ({"time_unit": []}, "time_unit must be one of s, ms, us, ns")])
def test_a_log_option_of_the_wrong_kind_is_an_input_error(options, told):
    """Each was accepted, then failed as a TypeError wherever it was first used."""
    with pytest.raises(InputError, match=re.escape(f"prediction log p.csv: {told}")):
        PredictionLogSpec.parse(f"p.csv{json.dumps(options)}")


def test_a_damaged_log_is_one_line_naming_it(tmp_path, capfd):
    """Found by corrupting logs byte by byte: a Parquet log whose pages (or footer) are damaged
    was an internal error; a Latin-1 row in a CSV log that also had a field too many printed
    Arrow's 'Exception ignored' tracebacks before a parse error that did not say why."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    n = 5000
    log = pa.table({"id": [str(i) for i in range(n)], "t": np.arange(n, dtype=float),
                    "y_pred": ["a", "b"] * (n // 2)})
    pq.write_table(log, tmp_path / "log.parquet")
    data = bytearray((tmp_path / "log.parquet").read_bytes())
    data[len(data) // 4:len(data) // 4 + 64] = b"\xff" * 64
    (tmp_path / "pages.parquet").write_bytes(bytes(data))
    (tmp_path / "footer.parquet").write_bytes(bytes(data[:-40]) + b"\x00" * 32 + data[-8:])
    text = "id,t,y_pred\n" + "".join(f"{i},{i},a\n" for i in range(200))
    (tmp_path / "latin.csv").write_bytes(text.replace("150,150,a", "150,150,\xe9,x")
                                         .encode("latin-1"))
    stream = tmp_path / "s.csv"
    pd.DataFrame({"id": [str(i) for i in range(n)], "t": np.arange(n, dtype=float), "f": 1.0,
                  "label": ["a", "b"] * (n // 2)}).to_csv(stream, index=False)
    for name, told in [("pages.parquet", "not a readable parquet file"),
                       ("footer.parquet", "not a readable parquet file"),
                       ("latin.csv", "line 152: not utf-8 text")]:
        code = main(["backfill", "--stream", f'{stream}{{"id": "id", "time": "t"}}',
                     "--predictions", f'{tmp_path / name}{{"id": "id", "time": "t"}}',
                     "--out", str(tmp_path / "out"), "--runner", "direct", "--quiet"])
        err = capfd.readouterr().err
        assert code == 2 and err.startswith(f"delayed-eval: error: {tmp_path / name}") and \
            told in err and err.count("\n") == 1, err


def test_a_json_lines_log_reads_its_probability_objects_as_maps(tmp_path):
    (tmp_path / "log.jsonl").write_text(
        '{"id": "a", "t": "2026-11-01T10:00:00Z", "y_pred": "x", "proba": {"x": 0.25, "y": 0.75}}'
        '\n{"id": "b", "t": "2026-11-01T10:00:01Z", "y_pred": "y", "proba": null}\n'
        '{"id": "c", "t": "2026-11-01T10:00:02Z", "y_pred": "y", "proba": {"y": 1.0}}\n')
    log = PredictionLogSpec.parse(str(tmp_path))
    assert log.files() == [str(tmp_path / "log.jsonl")]
    [batch] = log.read(log.files()[0])
    assert batch.column(batch.schema.names.index("proba")).to_pylist() == [
        [("x", 0.25), ("y", 0.75)], None, [("y", 1.0)]]
    (tmp_path / "log.jsonl").write_text('\ufeff{"id": "a", "t": 1, "y_pred": "x"}\n\n'
                                        '{"id": "b", t: 2, "y_pred": "x"}\n[3]\n')  # BOM
    bad: list = []
    [batch] = log.read(log.files()[0], bad_rows=bad)
    assert batch.column(0).to_pylist() == ["a"]
    assert [(row, reason[:9], text[:9]) for row, reason, text in bad] == [
        (3, "not JSON:", '{"id": "b'), (4, "not a JSO", "[3]")]
    (tmp_path / "log.jsonl").write_text('{"id": "a", "t": 1}\n\n{"id": "b", "t": {"s": 2}}\n')
    with pytest.raises(InputError, match=r"log\.jsonl: not a readable JSON Lines file \(JSON "
                       r"parse error: Column\(/t\) changed from number to object on line 3\)"):
        list(log.read(log.files()[0]))


def test_predicted_classes_are_matched_to_the_labels_by_number_or_refused(tmp_path, capsys):
    """Agrawal's labels are the integers 0 and 1: a log whose predictions went through a float
    column (0.0, 1.0; NaN for none), or are booleans, scores as the run's own log does; a log
    whose predictions share no class with the labels is refused in one line, not scored 0."""
    kw = dict(streams=['synth:Agrawal{"n": 600, "seed": 2}'], delay="30", curve_every=100,
              quiet=True, run_id="same", runner="direct")
    run(RunConfig(models=["gaussian-nb"], out=str(tmp_path / "run"), **kw))
    import pyarrow as pa
    import pyarrow.parquet as pq

    log = pq.read_table(tmp_path / "run" / "predictions.parquet")
    at = log.schema.get_field_index("y_pred")

    def write(values, name):
        pq.write_table(log.set_column(at, "y_pred", pa.array(values)), tmp_path / name)

    predicted = log["y_pred"].to_pylist()
    assert set(predicted) == {"0", "1", None}
    write([None if v is None else float(v) for v in predicted], "floats.parquet")
    write([None if v is None else v == "1" for v in predicted], "booleans.parquet")
    for name in ("floats.parquet", "booleans.parquet"):  # (1.0, True: the label 1)
        run(RunConfig(models=[], out=str(tmp_path / "backfill"),
                      predictions=str(tmp_path / name), **kw))
        assert (tmp_path / "backfill" / "summary.csv").read_text() == \
            (tmp_path / "run" / "summary.csv").read_text()
    # Python's json writes a float column's missing value as NaN: no prediction, not a class.
    with open(tmp_path / "nans.jsonl", "w") as f:
        for row in log.drop(columns="proba").to_pylist():
            f.write(json.dumps({**row, "y_pred": math.nan if row["y_pred"] is None
                                else float(row["y_pred"])}) + "\n")
    # (not a run's Parquet log: the policy that made it is named, as with --repredict)
    run(RunConfig(models=[], out=str(tmp_path / "backfill"), repredict="every_k_labels:10",
                  predictions=str(tmp_path / "nans.jsonl"), probabilities=False, **kw))
    run(RunConfig(models=["gaussian-nb"], out=str(tmp_path / "run_without"),
                  probabilities=False, **kw))
    assert (tmp_path / "backfill" / "summary.csv").read_text() == \
        (tmp_path / "run_without" / "summary.csv").read_text()
    write([{"0": "ok", "1": "fraud", None: None}[v] for v in predicted], "words.parquet")
    capsys.readouterr()  # (the backfills' notices above)
    code = main(["backfill", "--stream", kw["streams"][0], "--delay", "30", "--predictions",
                 str(tmp_path / "words.parquet"), "--out", str(tmp_path / "o"), "--quiet",
                 "--runner", "direct"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.count("\n") == 0
    assert "model gaussian-nb" in err and "the predictions name none of the label classes " \
        "(predicted: 'fraud', 'ok'; labels: '0', '1')" in err


def _block_by_block_as_the_run(folder, name: str, types_change: bool, kw: dict) -> None:
    """The log `folder/name`, read block by block, raises `TypesChanged` when its predictions'
    type changes (else it comes in many blocks), and backfills to the summary of the run in
    `folder/run`."""
    path = str(folder / name)
    spec = PredictionLogSpec.parse(path)
    if types_change:
        with pytest.raises(TypesChanged):
            list(spec.read(path, streamed=True))
    else:
        assert len(list(spec.read(path, streamed=True))) > 10
    run(RunConfig(models=[], out=str(folder / "backfill"), predictions=path, **kw))
    assert (folder / "backfill" / "summary.csv").read_text() == \
        (folder / "run" / "summary.csv").read_text()


@pytest.mark.parametrize("second_half", ["as the first", "as floats"])
def test_a_csv_log_read_block_by_block_scores_as_the_runs_own_log(tmp_path, monkeypatch,
                                                                 second_half):
    """A CSV log is read a block at a time (here 4 KiB). Its predictions 0/1 written as 0.0/1.0
    from half-way on no longer fit the integers the first block read: the file is read again
    whole, nothing counted twice, and both score as the run's own Parquet log."""
    kw = dict(streams=['synth:Agrawal{"n": 600, "seed": 2}'], delay="30", curve_every=100,
              quiet=True, run_id="same", runner="direct", probabilities=False,
              repredict="every_k_labels:7", bins=5)
    run(RunConfig(models=["gaussian-nb", "no-change"], out=str(tmp_path / "run"), **kw))
    log = pd.read_parquet(tmp_path / "run" / "predictions.parquet")
    if second_half == "as floats":
        later = np.arange(len(log)) >= len(log) // 2
        log["y_pred"] = log["y_pred"].where(~later, log["y_pred"].astype(float).astype(str))
    log.to_csv(tmp_path / "log.csv", index=False)
    monkeypatch.setattr("transforms.backfill.log_text.LOG_BLOCK", 4096)
    _block_by_block_as_the_run(tmp_path, "log.csv", second_half == "as floats", kw)
    counts = json.loads((tmp_path / "backfill" / "manifest.json").read_text())["counts"]
    assert [c["logged_predictions"] for c in counts] == \
        [(log["model"] == c["model"]).sum() for c in counts]


@pytest.mark.parametrize("second_half", ["as the first", "as floats"])
def test_a_csv_log_line_of_the_wrong_width_is_a_dead_letter(tmp_path, monkeypatch, capsys,
                                                            second_half):
    """Two malformed lines added to the run's own log written as CSV (one field too many near
    the start, one cut short near the end), read a 4 KiB block at a time, the second half
    possibly re-read whole: each is a dead letter naming its file, data row and line, and the
    rest scores as the run's own Parquet log."""
    kw, log, header, rows = _run_log_as_csv_lines(tmp_path, second_half)
    width = header.count(",") + 1
    extra, short = ",".join(["9"] * (width + 1)), "cut,short"
    rows.insert(len(rows) - 3, short)
    rows.insert(2, extra)  # data rows 3 and len(rows) - 3 (counted from 1, after the header)
    (tmp_path / "log.csv").write_text("\n".join([header, *rows]) + "\n")
    monkeypatch.setattr("transforms.backfill.log_text.LOG_BLOCK", 4096)
    capsys.readouterr()
    dead = _backfill_of_the_csv_log_is_the_run(tmp_path, kw)
    assert [(d["stream"], d["row"], d["reason"], d["record"]) for d in dead] == [
        (None, 3, f"expected {width} fields, saw {width + 1} (more fields than the header)",
         extra),
        (None, len(rows) - 3, f"the line is cut short: 2 of {width} fields", short)]
    assert {d["file"] for d in dead} == {str(tmp_path / "log.csv")}
    manifest = json.loads((tmp_path / "backfill" / "manifest.json").read_text())
    assert manifest["log_dead_letters"] == manifest["dead_letters"] == 2
    assert manifest["counts"][0]["logged_predictions"] == len(log)
    assert "prediction log: 2 dead letters in " in capsys.readouterr().out


@pytest.mark.parametrize("second_half", ["as the first", "as floats"])
def test_a_csv_log_whose_lines_end_with_the_separator_is_read_under_its_header(
        tmp_path, monkeypatch, second_half):
    """Some exports end every line with the separator (`a,1,x,`): each line was one field
    longer than the header, so each was a dead letter ("none of its predictions was made for
    an instance arriving in --from/--to", with no range given). Read a 4 KiB block at a time
    (or whole, when the second half's predictions are floats), the log scores as the run's
    own; a line written without the separator at its end is a dead letter that says so."""
    kw, _, header, rows = _run_log_as_csv_lines(tmp_path, second_half)
    rows = [row + "," for row in rows]
    rows.insert(5, rows[4][:-1])  # a repeat of data row 5, without the separator at its end
    (tmp_path / "log.csv").write_text("\n".join([header, *rows]) + "\n")
    monkeypatch.setattr("transforms.backfill.log_text.LOG_BLOCK", 4096)
    dead = _backfill_of_the_csv_log_is_the_run(tmp_path, kw)
    assert [(d["row"], d["reason"]) for d in dead] == [
        (6, "the line does not end with the separator, as the log's first line does")]


def _run_log_as_csv_lines(folder, second_half: str) -> tuple:
    """GaussianNB on Agrawal into `folder/run`, its log written as CSV (the second half's
    predictions as floats, "1.0", if `second_half` says so): (the run's options, the log, its
    header line, its data lines)."""
    kw = dict(streams=['synth:Agrawal{"n": 600, "seed": 2}'], delay="30", curve_every=100,
              run_id="same", runner="direct", probabilities=False,
              repredict="every_k_labels:7", bins=5)
    run(RunConfig(models=["gaussian-nb"], out=str(folder / "run"), quiet=True, **kw))
    log = pd.read_parquet(folder / "run" / "predictions.parquet")
    if second_half == "as floats":
        later = np.arange(len(log)) >= len(log) // 2
        log["y_pred"] = log["y_pred"].where(~later, log["y_pred"].astype(float).astype(str))
    header, *rows = log.to_csv(index=False).splitlines()
    return kw, log, header, rows


def _backfill_of_the_csv_log_is_the_run(folder, kw: dict) -> list[dict]:
    """The backfill of `folder/log.csv` gives the run's summary byte for byte; its dead
    letters."""
    run(RunConfig(models=[], out=str(folder / "backfill"), predictions=str(folder / "log.csv"),
                  **kw))
    assert (folder / "backfill" / "summary.csv").read_text() == \
        (folder / "run" / "summary.csv").read_text()
    return [json.loads(line) for line in
            (folder / "backfill" / "dead_letters.jsonl").read_text().splitlines()]


def test_a_csv_log_none_of_whose_lines_can_be_read_says_so(tmp_path, capsys):
    """Every line one field longer than the header, and no model column (so the model is
    named after the file): the backfill blamed a --from/--to it was not given."""
    (tmp_path / "instances.csv").write_text("id,time,a,label,label_time\n" + "".join(
        f"{i},{i},{i % 3},{'xy'[i % 2]},{i + 5}\n" for i in range(20)))
    (tmp_path / "log.csv").write_text("id,t,y_pred\n" + "".join(
        f"{i},{i},x,{i}\n" for i in range(20)))
    assert main(["backfill", "--stream", str(tmp_path / "instances.csv"), "--predictions",
                 str(tmp_path / "log.csv"), "--out", str(tmp_path / "out"), "--runner",
                 "direct", "--quiet"]) == 2
    assert capsys.readouterr().err.strip().endswith(
        "log.csv, row 1: expected 3 fields, saw 4 (more fields than the header); no line of "
        "the prediction log can be read (check its separator and quotes)")


# A run whose own log the JSON Lines tests rewrite.
AGRAWAL_RUN = dict(streams=['synth:Agrawal{"n": 600, "seed": 2}'], delay="30", curve_every=100,
                   quiet=True, run_id="same", runner="direct", probabilities=False,
                   repredict="every_k_labels:7", bins=5)


def _agrawal_log_rows(folder) -> list[dict]:
    """`AGRAWAL_RUN` of GaussianNB and No-Change into `folder/run`: its log's rows (missing
    values None)."""
    run(RunConfig(models=["gaussian-nb", "no-change"], out=str(folder / "run"), **AGRAWAL_RUN))
    log = pd.read_parquet(folder / "run" / "predictions.parquet").drop(columns="proba",
                                                                       errors="ignore")
    return log.astype(object).where(log.notna(), None).to_dict("records")


@pytest.mark.parametrize("second_half", ["as the first", "as floats"])
def test_a_json_lines_log_is_read_block_by_block_its_bad_lines_dead_letters(
        tmp_path, monkeypatch, second_half):
    """The run's own log as JSON Lines, its predictions numbers (0/1; from half-way on 0.0/1.0,
    which no longer fit the integers the first blocks gave: read again whole), read 4 KiB at a
    time, with a line that is not JSON and one that is no object added: it scores as the run's
    own Parquet log, and the two lines are dead letters at their line numbers."""
    log = _agrawal_log_rows(tmp_path)
    lines = []
    for i, row in enumerate(log):
        if row["y_pred"] is not None:
            as_float = second_half == "as floats" and i >= len(log) // 2
            row["y_pred"] = float(row["y_pred"]) if as_float else int(row["y_pred"])
        lines.append(json.dumps(row))
    lines.insert(len(lines) - 3, "[1, 2]")
    lines.insert(2, '{"id": "7", t: 1}')  # lines 3 and len(lines) - 3
    (tmp_path / "log.jsonl").write_text("\n".join(lines) + "\n")
    monkeypatch.setattr("transforms.backfill.log_text.LOG_BLOCK", 4096)
    _block_by_block_as_the_run(tmp_path, "log.jsonl", second_half == "as floats", AGRAWAL_RUN)
    dead = [json.loads(line) for line in
            (tmp_path / "backfill" / "dead_letters.jsonl").read_text().splitlines()]
    assert [(d["row"], d["reason"][:9], d["record"]) for d in dead] == [
        (3, "not JSON:", '{"id": "7", t: 1}'),
        (len(lines) - 3, "not a JSO", "[1, 2]")]
    counts = json.loads((tmp_path / "backfill" / "manifest.json").read_text())["counts"]
    assert [c["logged_predictions"] for c in counts] == \
        [sum(row["model"] == c["model"] for row in log) for c in counts]


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_a_log_of_nested_objects_names_its_columns_by_path(tmp_path, monkeypatch, fmt):
    """A service's log nests its fields: {"request": {"id"}, "model": {"version"}, "output":
    {"label", "proba": {class: p}}}. Options name them by path (`output.label`); the object
    named as the probabilities stays a map. It scores as the run's own log, read 4 KiB at a
    time (JSON Lines)."""
    kw = dict(streams=['synth:Agrawal{"n": 600, "seed": 2}'], delay="30", curve_every=100,
              quiet=True, run_id="same", runner="direct", repredict="every_k_labels:7",
              bins=5)
    run(RunConfig(models=["gaussian-nb", "no-change"], out=str(tmp_path / "run"), **kw))
    log = pd.read_parquet(tmp_path / "run" / "predictions.parquet")
    records = [{"stream": r["stream"], "kind": r["kind"], "ts": r["t"],
                "request": {"id": r["id"]}, "model": {"version": r["model"]},
                "output": {"label": None if pd.isna(r["y_pred"]) else int(r["y_pred"]),
                           "proba": None if r["proba"] is None else dict(r["proba"])}}
               for r in log.to_dict("records")]
    path = tmp_path / f"nested.{fmt}"
    if fmt == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
        monkeypatch.setattr("transforms.backfill.log_text.LOG_BLOCK", 4096)
    else:
        pd.DataFrame(records).to_parquet(path)
    options = {"time": "ts", "id": "request.id", "model": "model.version",
               "prediction": "output.label", "proba": "output.proba"}
    run(RunConfig(models=["gaussian-nb", "no-change"], out=str(tmp_path / "backfill"),
                  predictions=f"{path}{json.dumps(options)}", **kw))
    assert (tmp_path / "backfill" / "summary.csv").read_text() == \
        (tmp_path / "run" / "summary.csv").read_text()


@pytest.mark.parametrize("block", [4096, 8 << 20])
def test_a_json_lines_log_writing_a_field_as_number_and_as_text_scores_as_one(
        tmp_path, monkeypatch, block):
    """Two services log to one file, one writing the prediction 1 and the id 17, the other
    "1" and "17": one class, one id, read whole or 4 KiB at a time. It scores as the run's own
    log."""
    lines = []
    for i, row in enumerate(_agrawal_log_rows(tmp_path)):
        as_text = i % 3 == 1
        if row["y_pred"] is not None:
            row["y_pred"] = str(int(row["y_pred"])) if as_text else int(row["y_pred"])
        row["id"] = row["id"] if as_text else int(row["id"])
        lines.append(json.dumps(row))
    (tmp_path / "log.jsonl").write_text("\n".join(lines) + "\n")
    monkeypatch.setattr("transforms.backfill.log_text.LOG_BLOCK", block)
    run(RunConfig(models=[], out=str(tmp_path / "backfill"),
                  predictions=str(tmp_path / "log.jsonl"), **AGRAWAL_RUN))
    assert (tmp_path / "backfill" / "summary.csv").read_text() == \
        (tmp_path / "run" / "summary.csv").read_text()


@pytest.mark.parametrize("block", [1 << 20, 256])
def test_a_json_lines_logs_odd_text_among_numbers_is_read_as_a_csv_logs_is(tmp_path,
                                                                            monkeypatch, block):
    """A regression log whose time is once "n/a" and whose prediction is once "err" among
    numbers (a service's fallback values) stopped the backfill as a file "not readable"
    (Arrow: changed from number to string "in row 12", no line of the file). Read as a CSV
    log reads such cells: the time unreadable (its prediction counted as such), the
    prediction none (unscored). Oracle: a plain loop over the rows."""
    n = 30
    rng = np.random.default_rng(2)
    y = rng.normal(size=n).round(3)
    pd.DataFrame({"id": range(n), "time": range(n), "label": y}).to_csv(
        tmp_path / "rows.csv", index=False)
    pred = (y + rng.normal(scale=0.5, size=n)).round(3)
    lines = [{"id": i, "t": i + 0.5, "y_pred": float(pred[i])} for i in range(n)]
    lines[12]["t"], lines[20]["y_pred"] = "n/a", "err"
    (tmp_path / "log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    monkeypatch.setattr("transforms.backfill.log_text.LOG_BLOCK", block)  # (whole; in blocks)
    assert main(["backfill", "--stream", f"s={tmp_path / 'rows.csv'}", "--predictions",
                 str(tmp_path / "log.jsonl"), "--delay", "3s", "--task", "regression",
                 "--out", str(tmp_path / "o"), "--runner", "direct", "--quiet"]) == 0
    counts = json.loads((tmp_path / "o" / "manifest.json").read_text())["counts"][0]
    assert counts["unmatched_unreadable_time"] == 1
    assert counts["unscored_initial"] == 2  # (12: no prediction it could use; 20: none)
    summary = read_csv(tmp_path / "o" / "summary.csv")
    mae = summary.query("category == 'initial' and metric == 'mae' and window == "
                        "'cumulative'").iloc[0]
    scored = [i for i in range(n) if i not in (12, 20)]
    assert mae["n"] == len(scored)
    assert mae["value"] == pytest.approx(np.mean([abs(y[i] - pred[i]) for i in scored]),
                                         rel=1e-12)


def test_a_tsv_log_is_read_as_its_csv_twin(tmp_path):
    """Tabs, the separator of a .tsv file unless the sep option names another."""
    frame = pd.DataFrame({"id": ["a", "b"], "t": [1.5, 2.0], "y_pred": ["x", "y, z"]})
    frame.to_csv(tmp_path / "log.csv", index=False)
    frame.to_csv(tmp_path / "log.tsv", sep="\t", index=False)
    rows = {name: [r for b in PredictionLogSpec.parse(str(tmp_path)).read(
        str(tmp_path / name)) for r in b.to_pylist()] for name in ("log.csv", "log.tsv")}
    assert rows["log.tsv"] == rows["log.csv"] == frame.rename(
        columns={"t": "time", "y_pred": "prediction"}).to_dict("records")
    assert PredictionLogSpec.parse(str(tmp_path)).files() == [str(tmp_path / "log.csv"),
                                                              str(tmp_path / "log.tsv")]


@pytest.mark.parametrize("column", ["id", "y_pred"])  # (read as text; types inferred)
@pytest.mark.parametrize("suffix", ["csv", "jsonl"])
def test_a_log_in_latin_1_is_named_by_line_and_read_with_its_encoding(tmp_path, column,
                                                                        suffix):
    frame = pd.DataFrame({"id": ["a", "b", "c"], "t": [1.0, 2.0, 3.0], "y_pred": ["x", "y", "z"]})
    frame.loc[2, column] = "caf\xe9"  # (in latin-1, a byte that is not UTF-8)
    path = tmp_path / f"log.{suffix}"
    text = frame.to_csv(index=False) if suffix == "csv" else \
        frame.to_json(orient="records", lines=True, force_ascii=False)
    path.write_bytes(text.encode("latin-1"))
    line = 4 if suffix == "csv" else 3  # (the CSV header is line 1)

    def rows(options="", **kw):
        spec = PredictionLogSpec.parse(str(path) + options)
        return [r for b in spec.read(str(path), **kw) for r in b.to_pylist()]

    for kw in ({}, {"streamed": True}, {"columns": ["id", "prediction"]}):
        with pytest.raises(InputError, match=rf"log\.{suffix}, line {line}: not utf-8 text "
                                             r".*; give the file's encoding with the "
                                             r'--predictions option \{"encoding": "latin-1"\}'):
            rows(**kw)
        expected = frame.rename(columns={"t": "time", "y_pred": "prediction"})
        if "columns" in kw:
            expected = expected[["id", "prediction"]]
        assert rows('{"encoding": "latin-1"}', **kw) == expected.to_dict("records")
    with pytest.raises(InputError, match=r"unknown encoding 'latin-9x'"):
        rows('{"encoding": "latin-9x"}')
    # Its line found through Beam's FileSystems, decompressed.
    (tmp_path / f"log.{suffix}.gz").write_bytes(gzip.compress(path.read_bytes()))
    remote = f"{RemoteFileSystem.PREFIX}{path}.gz"
    with pytest.raises(InputError, match=rf"log\.{suffix}\.gz, line {line}: not utf-8 text"):
        list(PredictionLogSpec.parse(remote).read(remote))


def test_a_csv_log_line_with_an_unclosed_quote_says_how_many_lines_it_took(tmp_path):
    (tmp_path / "log.csv").write_text('id,t,y_pred\na,1,x\nb,"2,y\nc,3,z\n\nd,4,w\n')
    bad: list = []
    spec = PredictionLogSpec.parse(str(tmp_path / "log.csv"))
    assert sum(b.num_rows for b in spec.read(str(tmp_path / "log.csv"), bad_rows=bad)) == 1
    assert bad == [(2, "the line is cut short: 2 of 3 fields (a quote opened in it is not "
                       "closed on its line: it runs over 4 lines)", 'b,"2,y\nc,3,z\n\nd,4,w')]
    assert spec.has_rows()
    (tmp_path / "log.csv").write_text("id,t,y_pred\na,1,x,0\nb,2,y,0\n")
    with pytest.raises(InputError, match=r"log\.csv, row 1: expected 3 fields, saw 4 \(more "
                                         r"fields than the header\); no line of the log can "
                                         r"be read"):
        spec.has_rows()


def _run_on_text_classes(tmp_path, **options) -> tuple[dict, pd.DataFrame]:
    """GaussianNB run at delay 20 on 300 rows of three text classes (in `tmp_path / "run"`):
    its configuration (`options` added) and its prediction log."""
    rng = np.random.default_rng(4)
    x = rng.normal(size=300)
    stream = tmp_path / "s.csv"
    pd.DataFrame({"x": x, "label": np.where(x > 0.3, "fraud", np.where(x < -0.3, "ok", "check"))
                  }).to_csv(stream, index=False)
    kw = dict(streams=[f"s={stream}"], delay="20", quiet=True, run_id="same", runner="direct",
              **options)
    run(RunConfig(models=["gaussian-nb"], out=str(tmp_path / "run"), **kw))
    return kw, pd.read_parquet(tmp_path / "run" / "predictions.parquet")


def test_an_empty_prediction_cell_is_no_prediction(tmp_path):
    """Text classes: the run's first instances, predicted before any label, have no prediction;
    in its log written as CSV they are empty cells, unscored as in the run, not a class ''."""
    kw, log = _run_on_text_classes(tmp_path, probabilities=False, repredict="none")
    assert log["y_pred"].isna().sum() >= 20  # initial, before the first label
    log.to_csv(tmp_path / "log.csv", index=False)
    run(RunConfig(models=[], out=str(tmp_path / "backfill"),
                  predictions=str(tmp_path / "log.csv"), **kw))
    assert (tmp_path / "backfill" / "summary.csv").read_text() == \
        (tmp_path / "run" / "summary.csv").read_text()


def test_a_json_lines_log_with_nan_for_no_prediction_scores_as_the_run(tmp_path, monkeypatch):
    """Python's json writes a missing value of a pandas column as NaN, which is not JSON: among
    text classes, NaN is no prediction, as null is (the run's first instances, predicted before
    any label), read whole and block by block."""
    kw, log = _run_on_text_classes(tmp_path, repredict="every_k_labels:5", bins=4)
    log["y_pred"] = log["y_pred"].where(log["y_pred"].notna(), np.nan)
    log["proba"] = [dict(p) if p is not None else math.nan for p in log["proba"]]
    lines = [json.dumps(row) for row in log.to_dict("records")]
    assert sum("NaN" in line for line in lines) >= 20
    (tmp_path / "log.jsonl").write_text("\n".join(lines) + "\n")
    for block in (1 << 20, 4096):  # (the file in one block; many blocks)
        monkeypatch.setattr("transforms.backfill.log_text.LOG_BLOCK", block)
        run(RunConfig(models=[], out=str(tmp_path / "backfill"),
                      predictions=str(tmp_path / "log.jsonl"), **kw))
        assert (tmp_path / "backfill" / "summary.csv").read_text() == \
            (tmp_path / "run" / "summary.csv").read_text()


def test_probabilities_written_as_nan_are_no_probabilities(tmp_path):
    """A JSON Lines log written with Python's json, every 7th prediction's probabilities NaN:
    scored as its twin with null there (it scored each as p = 0, log-loss ~34.5)."""
    stream = 'synth:Agrawal{"n": 600, "seed": 2}'
    kw = dict(streams=[stream], delay="30", quiet=True, run_id="same", runner="direct",
              log_predictions="initial-final")
    run(RunConfig(models=["gaussian-nb"], out=str(tmp_path / "run"), **kw))
    rows = pd.read_parquet(tmp_path / "run" / "predictions.parquet").to_dict("records")
    for name, gone in (("null", lambda p: None), ("nan", lambda p: dict.fromkeys(p, math.nan))):
        with open(tmp_path / f"{name}.jsonl", "w") as f:
            for i, row in enumerate(rows):
                proba = None if row["proba"] is None else dict(row["proba"])
                if i % 7 == 0 and proba is not None:
                    proba = gone(proba)
                f.write(json.dumps({**row, "proba": proba}) + "\n")
        run(RunConfig(models=[], out=str(tmp_path / name),
                      predictions=str(tmp_path / f"{name}.jsonl"), **kw))
    summaries = [(tmp_path / name / "summary.csv").read_text() for name in ("null", "nan")]
    assert "log_loss" in summaries[0] and summaries[1] == summaries[0]


def test_probabilities_logged_as_json_text_score_as_the_runs_maps(tmp_path, capsys):
    """A log whose probabilities are JSON text ('{"a": 0.2, "b": 0.8}'), as CSV holds a map and
    many Parquet logs do, or dicts as pandas' to_csv writes them ("{'a': 0.2}"): scored as the
    run's own log, whose maps they are (it was refused as 'not a map'); text that is no such
    object is one line naming its prediction."""
    stream = 'synth:Agrawal{"n": 600, "seed": 2}'
    kw = dict(streams=[stream], delay="30", quiet=True, run_id="same", runner="direct",
              log_predictions="initial-final")
    run(RunConfig(models=["gaussian-nb"], out=str(tmp_path / "run"), **kw))
    log = pd.read_parquet(tmp_path / "run" / "predictions.parquet")
    texts = [None if p is None else json.dumps(dict(p)) for p in log["proba"]]
    log.assign(proba=texts).to_csv(tmp_path / "text.csv", index=False)
    log.assign(proba=texts).to_parquet(tmp_path / "text.parquet", index=False)
    # (pandas' to_csv of a column of dicts, as river's predict_proba_one gives them)
    log.assign(proba=[None if p is None else dict(p) for p in log["proba"]]).to_csv(
        tmp_path / "dicts.csv", index=False)
    assert "{'" in (tmp_path / "dicts.csv").read_text()
    run(RunConfig(models=[], out=str(tmp_path / "own"),
                  predictions=str(tmp_path / "run" / "predictions.parquet"), **kw))
    own = (tmp_path / "own" / "summary.csv").read_text()
    assert "log_loss" in own
    for name in ("text.csv", "text.parquet", "dicts.csv"):
        run(RunConfig(models=[], out=str(tmp_path / f"of-{name}"), predictions=str(tmp_path / name),
                      **kw))
        assert (tmp_path / f"of-{name}" / "summary.csv").read_text() == own, name
    texts[5] = "0.7"
    log.assign(proba=texts).to_csv(tmp_path / "bad.csv", index=False)
    capsys.readouterr()  # (the backfills' notices above)
    assert main(["backfill", "--stream", stream, "--predictions", str(tmp_path / "bad.csv"),
                 "--delay", "30", "--out", str(tmp_path / "bad"), "--runner", "direct",
                 "--quiet"]) == 2
    assert capsys.readouterr().err == (
        f"delayed-eval: error: {tmp_path / 'bad.csv'}: prediction {log['id'][5]}: proba '0.7' "
        f"is not a JSON object {{class: probability}}; log each prediction's probabilities as "
        f'one, e.g. {{"fraud": 0.2, "ok": 0.8}}, or name a score with {{"score": ...}}\n')


def _four_labels(tmp_path) -> str:
    """The spec of a stream of four instances without features, ids and times 0..3, labelled
    a, b, a, b."""
    path = tmp_path / "s.csv"
    pd.DataFrame({"id": range(4), "time": range(4), "label": list("abab")}).to_csv(
        path, index=False)
    return f'{path}{{"features": []}}'


def test_every_log_row_is_counted_scored_dead_lettered_or_not_configured(tmp_path):
    """Rows of models not named with --model, of no model, and of another stream are counted
    per "stream / model" in `log_rows_not_scored`; with `logged_predictions` and the log's dead
    letters they add up to the log's lines (they were counted nowhere)."""
    stream = _four_labels(tmp_path)
    rows = [("s", "a"), ("s", "b"), ("s", ""), ("other", "a"), ("s", "a"), ("s", "b"),
            ("other", "c"), ("s", "a"), ("s", "b")]
    lines = [f"{s},{m},{i % 4},{i % 4},a" for i, (s, m) in enumerate(rows)]
    lines.insert(3, "s,a,1,1,a,extra")  # a line of more fields than the header: a dead letter
    log = tmp_path / "log.csv"
    log.write_text("stream,model,id,t,y_pred\n" + "\n".join(lines) + "\n")
    out = tmp_path / "o"
    run(RunConfig(streams=[stream], models=["a"],
                  predictions=str(log), delay="1", out=str(out), quiet=True, runner="direct",
                  repredict="none"))
    manifest = json.loads((out / "manifest.json").read_text())
    expected: dict = {}
    for s, m in rows:
        if (s, m) != ("s", "a"):
            key = f"{s} / {m or '(none)'}"
            expected[key] = expected.get(key, 0) + 1
    assert manifest["log_rows_not_scored"] == dict(sorted(expected.items()))
    (counts,) = manifest["counts"]
    assert counts["logged_predictions"] == rows.count(("s", "a")) == 3
    assert manifest["log_dead_letters"] == 1
    assert counts["logged_predictions"] + manifest["log_dead_letters"] + sum(
        manifest["log_rows_not_scored"].values()) == len(lines)
    assert main(["report", str(out)]) == 0  # (and the report says so)
    assert "log rows not scored (stream / model not configured)</b>: other / a 1, other / c " \
           "1, s / (none) 1, s / b 3" in (out / "report.html").read_text(encoding="utf-8")


def test_a_log_without_a_model_column_is_one_model_named_after_it(tmp_path):
    stream = _four_labels(tmp_path)
    log = tmp_path / "fraud_v3.csv"
    pd.DataFrame({"id": range(4), "t": range(4), "y_pred": list("aaab")}).to_csv(
        log, index=False)
    summary = run(RunConfig(streams=[stream], models=[],
                            predictions=str(log), delay="1", out=str(tmp_path / "o"),
                            quiet=True, runner="direct", repredict="none"))
    initial = summary.query("category == 'initial' and metric == 'accuracy'")
    # Labels a, b, a, b against a, a, a, b: ids 0, 2 and 3 right.
    assert initial[["model", "value", "n"]].values.tolist() == [["fraud_v3", 0.75, 4]]


def test_a_log_without_its_columns_is_one_error_line(tmp_path, capsys):
    log = tmp_path / "p.parquet"
    pd.DataFrame({"id": ["1"], "when": [0.0], "y_pred": ["a"]}).to_parquet(log)
    code = main(["backfill", "--stream", 'synth:SEA{"n": 20}', "--predictions", str(log),
                 "--model", "m", "--out", str(tmp_path / "o"), "--quiet", "--runner", "direct"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.count("\n") == 0
    assert str(log) in err and "'t'" in err and "when" in err
    # Told while the run is planned, before the stream is read (a night's labels can take
    # minutes): a CSV log as a service exports it, with its own names.
    pd.DataFrame({"id": ["1"], "time": [0.0], "prediction": ["a"]}).to_csv(
        tmp_path / "p.csv", index=False)
    with pytest.raises(InputError, match="name them with the --predictions option"):
        plan(RunConfig(streams=['synth:SEA{"n": 20}'], models=[], delay="5",
                       predictions=str(tmp_path / "p.csv"), out=str(tmp_path / "o")))


def test_kinds_spelled_as_other_loggers_spell_them_are_read(tmp_path):
    """`re_prediction` (snake case, as Python and SQL loggers write it), `reprediction` and
    `Re Prediction` stopped the backfill as no kind; they are a re-prediction, and the log
    scores as the run's own spelling does."""
    out = tmp_path / "run"
    run(RunConfig(streams=['synth:SEA{"n": 400, "seed": 1}'], models=["gaussian-nb"],
                  delay="30", bins=10, out=str(out), quiet=True, runner="direct"))
    log = pd.read_parquet(out / "predictions.parquet")
    assert (log["kind"] == "re-prediction").sum() > 100
    spellings = ["re_prediction", "RE_PREDICTION", "reprediction", "Re Prediction"]
    respelled = log.assign(kind=[spellings[i % 4] if k == "re-prediction" else k.upper()
                                 for i, k in enumerate(log["kind"])])
    summaries = []
    for name, frame in (("as-run", log), ("respelled", respelled)):
        frame.drop(columns=["proba"]).to_csv(tmp_path / f"{name}.csv", index=False)
        summaries.append(run(RunConfig(
            streams=['synth:SEA{"n": 400, "seed": 1}'], models=["gaussian-nb"], delay="30",
            bins=10, predictions=str(tmp_path / f"{name}.csv"), repredict="logged",
            out=str(tmp_path / name), quiet=True, runner="direct", probabilities=False)))
    assert summaries[0].drop(columns="run_id").equals(summaries[1].drop(columns="run_id"))
    binned = summaries[0].query("category == 'binned'")
    assert len(binned) and binned["n"].gt(0).all()


@pytest.mark.parametrize("kind,told", [("inital", "kind 'inital'"), (None, "no kind")])
def test_a_prediction_of_no_known_kind_is_named_by_id_and_time(tmp_path, capsys, kind, told):
    stream = _four_labels(tmp_path)
    log = tmp_path / "log.csv"
    pd.DataFrame({"id": [0, 0, 1, 1], "at": [0, 1, 1, 2.5], "type": ["Initial", " FINAL", kind,
                                                                       "final"],
                  "y_pred": list("aaab")}).to_csv(log, index=False)
    code = main(["backfill", "--stream", stream, "--predictions",
                 f'{log}{{"kind": "type", "time": "at"}}', "--out", str(tmp_path / "o"),
                 "--quiet", "--runner", "direct"])
    err = capsys.readouterr().err
    assert code == 2 and err == (
        f"delayed-eval: error: {log}: the prediction of id '1' at at = 1.0 has {told}; write "
        f"each prediction's kind in column 'type' as initial, re-prediction or final (in any "
        f"case)\n")


def test_a_dated_prediction_of_no_known_kind_is_named_by_its_time_as_written(tmp_path,
                                                                               capsys):
    stream = _four_labels(tmp_path)
    log = tmp_path / "log.csv"
    pd.DataFrame({"id": [0, 0, 1], "at": ["1970-01-01T00:00:00Z", "1970-01-01T00:00:01Z",
                                          "1970-01-01T00:00:01.5Z"],
                  "kind": ["initial", "final", "inital"], "y_pred": list("aaa")}).to_csv(
        log, index=False)
    code = main(["backfill", "--stream", stream, "--predictions", f'{log}{{"time": "at"}}',
                 "--out", str(tmp_path / "o"), "--quiet", "--runner", "direct"])
    assert code == 2 and capsys.readouterr().err.startswith(
        f"delayed-eval: error: {log}: the prediction of id '1' at at = 1970-01-01 "
        f"00:00:01.500000+00:00 has kind 'inital'; write")


def test_a_logged_probability_outside_0_1_is_refused_naming_its_prediction(tmp_path, capsys):
    """A score or logit logged as a probability would make every probability measure wrong;
    a probability past 1 by rounding is one."""
    stream = _four_labels(tmp_path)
    log = tmp_path / "log.csv"

    def backfill(scores):
        pd.DataFrame({"id": [0, 1, 2, 3], "t": [0, 1, 2, 3], "y_pred": list("aaab"),
                      "p_a": scores}).to_csv(log, index=False)
        return main(["backfill", "--stream", stream, "--predictions",
                     f'{log}{{"score": "p_a", "positive": "a"}}', "--out",
                     str(tmp_path / "o"), "--quiet", "--runner", "direct"])

    assert backfill([0.9, 0.7, 1 + 1e-12, 0.2]) == 0
    capsys.readouterr()
    assert backfill([0.9, 0.7, 2.5, -0.5]) == 2
    assert capsys.readouterr().err == (
        f"delayed-eval: error: {log}: the prediction of id '2' gives class 'a' the probability "
        f"2.5, not one in [0, 1]; log probabilities (a score, margin or logit is none), or "
        f"leave them out with --no-probabilities\n")


@pytest.mark.parametrize("rows,message", [
    ([], "no prediction in it (its files have no rows; a run with --log-predictions none "
         "writes such files)"),
    ([None, None], "no model names in its model column"),
    (["m#1", "m#2"], "model 'm#1' is a fold of a --cv run (its name ends in #N); a backfill "
                     "scores logged models, not --cv folds: score them with run --cv"),
])
def test_a_log_with_no_model_to_score_says_why(tmp_path, capsys, rows, message):
    log = tmp_path / "p.parquet"
    pd.DataFrame({"model": pd.Series(rows, dtype=object), "id": [str(i) for i in range(len(rows))],
                  "t": [0.0] * len(rows), "y_pred": ["a"] * len(rows)}).to_parquet(log)
    code = main(["backfill", "--stream", 'synth:SEA{"n": 20}', "--predictions", str(log),
                 "--out", str(tmp_path / "o"), "--quiet", "--runner", "direct"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.count("\n") == 0
    assert err == f"delayed-eval: error: prediction log {log}: {message}"


@pytest.mark.parametrize("argv,message", [
    (["--model", "m"], "--predictions LOG is required"),
    (["--predictions", "nowhere/*.parquet", "--model", "m"],
     "no .parquet, .csv, .tsv or .jsonl file"),
])
def test_backfill_argument_errors(tmp_path, capsys, argv, message):
    code = main(["backfill", "--stream", 'synth:SEA{"n": 20}', "--out", str(tmp_path), *argv])
    assert code == 2 and message in capsys.readouterr().err


def _three_days(tmp_path):
    """Instances 0-5 at 06:00 and 18:00 of Nov 1, 2, 3 2026 (UTC); labels a, b, a, b, a 20 h
    after instances 0-4 (5's never comes) -> (their times, instance table, label table)."""
    day, base = 86400.0, 1793491200.0  # 2026-11-01T00:00:00Z
    t = [base + d * day + h * 3600 for d in range(3) for h in (6, 18)]
    stream = tmp_path / "instances.csv"
    pd.DataFrame({"id": range(6), "time": t, "f": [0.0] * 6}).to_csv(stream, index=False)
    labels = tmp_path / "labels.csv"
    pd.DataFrame({"id": range(5), "time": [x + 20 * 3600 for x in t[:5]],
                  "label": list("ababa")}).to_csv(labels, index=False)
    return t, stream, labels


def test_a_date_range_reads_later_labels_reports_pending_and_skips_older_partitions(tmp_path):
    t, stream, labels = _three_days(tmp_path)
    log = tmp_path / "log"
    for d, rows in enumerate(([0, 1], [2, 3], [4, 5])):
        part = log / f"date=2026-11-0{d + 1}"
        part.mkdir(parents=True)
        frame = pd.DataFrame({"id": [str(i) for i in rows], "t": [t[i] for i in rows],
                              "y_pred": ["a", "b"]})
        if d == 0:  # a partition the range must not even open
            frame = frame.rename(columns={"t": "broken"})
        frame.to_csv(part / "p.csv", index=False)
    out = tmp_path / "out"
    summary = run(RunConfig(
        streams=[f'{stream}{{"labels": "{labels}", "classes": ["a", "b"]}}'], models=["m"],
        predictions=str(log), out=str(out), start="2026-11-02", end="2026-11-03", quiet=True,
        runner="direct", repredict="none", final=False))
    # Instances 2, 3 (Nov 2) and 4, 5 (Nov 3); 4's label comes on Nov 4, 5's never.
    assert summary.query("category == 'initial' and metric == 'accuracy'")[
        ["value", "n"]].values.tolist() == [[1.0, 3]]  # a/b/a predicted for a/b/a
    manifest = json.loads((out / "manifest.json").read_text())
    (counts,) = manifest["counts"]
    assert (counts["instances"], counts["labelled"], counts["pending_at_end"]) == (4, 3, 1)
    assert counts["orphan_labels"] == 0
    read = manifest["streams"]["instances"]["read"]
    assert read["outside_range"] == 4  # instances 0, 1 and their labels


def test_a_date_range_takes_its_models_and_kinds_from_the_partitions_it_reads(tmp_path,
                                                                              capsys):
    """Models and whether there are re-predictions come from the partitions the range reads:
    v0, retired on Nov 1, with re-predictions, is not a model of the Nov 2-3 backfill, whose
    log holds initial predictions only (so no binned rows); a nightly run does not read the
    whole history of the log before its day."""
    t, stream, labels = _three_days(tmp_path)
    log = tmp_path / "log"
    for d, rows in enumerate(([0, 1], [2, 3], [4, 5])):
        part = log / f"date=2026-11-0{d + 1}"
        part.mkdir(parents=True)
        pd.DataFrame({"id": [str(i) for i in rows], "t": [t[i] for i in rows],
                      "y_pred": ["a", "b"], "model": "v1" if d else "v0",
                      "kind": ["initial", "initial"] if d else ["initial", "re-prediction"]}
                     ).to_csv(part / "p.csv", index=False)
    summary = run(RunConfig(
        streams=[f'{stream}{{"labels": "{labels}", "classes": ["a", "b"]}}'], models=[],
        predictions=str(log), out=str(tmp_path / "out"), start="2026-11-02", end="2026-11-03",
        quiet=True, runner="direct", final=False, repredict=LOGGED))
    assert set(summary["model"]) == {"v1"}
    assert "binned" not in set(summary["category"])
    assert summary.query("category == 'initial' and metric == 'accuracy'")[
        ["value", "n"]].values.tolist() == [[1.0, 3]]
    # Named, the retired version has nothing there to score, and says so; it is no error.
    code = main(["backfill", "--stream", f'{stream}{{"labels": "{labels}"}}', "--predictions",
                 str(log), "--model", "v0", "--model", "v1", "--from", "2026-11-02", "--to",
                 "2026-11-03", "--out", str(tmp_path / "named"), "--runner", "direct"])
    assert code == 0
    assert "instances / v0: no logged prediction in the log's files from --from on" in \
        capsys.readouterr().out
    scores = read_csv(tmp_path / "named" / "summary.csv").query(
        "category == 'initial' and metric == 'accuracy'")
    assert dict(zip(scores["model"], scores["n"])) == {"v0": 0, "v1": 3}


def test_a_model_version_without_predictions_in_the_range_leaves_the_others_scored(
        tmp_path, capsys):
    """v1 served Nov 1 and 2, v2 from Nov 3: a day's backfill scores the version that served
    it and says the other had nothing there; a day neither served is one error line."""
    t, stream, labels = _three_days(tmp_path)
    log = tmp_path / "log.csv"
    pd.DataFrame({"id": [str(i) for i in range(2, 6)], "t": t[2:], "y_pred": list("aaaa"),
                  "model": ["v1", "v1", "v2", "v2"]}).to_csv(log, index=False)

    def backfill(date):
        out = tmp_path / date
        code = main(["backfill", "--stream", f'{stream}{{"labels": "{labels}"}}',
                     "--predictions", str(log), "--model", "v1", "--model", "v2",
                     "--from", date, "--to", date, "--out", str(out), "--runner", "direct"])
        printed = capsys.readouterr()
        err = printed.out + printed.err
        if code:
            return code, err, None
        summary = read_csv(out / "summary.csv").query(
            "category == 'initial' and metric == 'accuracy'")
        return code, err, {m: (v, n) for m, v, n in summary[["model", "value", "n"]].values}

    # Nov 2: ids 2 (a, right) and 3 (b, predicted a); Nov 3: id 4 (a, right), 5 pending.
    code, err, scores = backfill("2026-11-02")
    assert code == 0 and scores["v1"] == (0.5, 2) and scores["v2"][1] == 0
    assert "v2: none of its 2 logged predictions was made for an instance arriving in " \
           "--from/--to" in err
    assert "no prediction to score" not in err  # (its predictions were not none)
    code, err, scores = backfill("2026-11-03")
    assert code == 0 and scores["v2"] == (1.0, 1) and scores["v1"][1] == 0
    code, err, _ = backfill("2026-11-01")
    assert code == 2 and err.count("error:") == 1 and "none of its predictions was made " \
        "for an instance arriving in --from/--to" in err


def test_a_version_deployed_late_whose_instances_all_wait_is_no_error(tmp_path, capsys):
    """v2 went live at 20:00 on Nov 1: it predicted instance 1 (arrived 18:00, labelled Nov 2
    14:00) and re-predicted it at 21:00. The night's backfill of Nov 1, its label table read
    up to Nov 2 02:30, scores v1 and counts v2's predictions as waiting, not as naming no
    instance (a mistake, exit 2): it says so and exits 0, a threshold not checked on v2, which
    has nothing to check yet (no alert every night a version is not live). Once 1's label has
    come, v2 is scored and checked."""
    t, stream, labels = _three_days(tmp_path)
    night = tmp_path / "labels_by_night.csv"
    table = read_csv(labels)
    table[table["time"] < t[0] + 20.5 * 3600].to_csv(night, index=False)  # (0's label only)
    log = tmp_path / "log.csv"
    pd.DataFrame({"id": ["0", "1", "1", "1"], "t": [t[0], t[1], t[1] + 2 * 3600,
                                                    t[1] + 3 * 3600],
                  "y_pred": list("aaba"), "model": ["v1", "v1", "v2", "v2"]}
                 ).to_csv(log, index=False)

    def backfill(label_table, out):
        code = main(["backfill", "--stream", f'{stream}{{"labels": "{label_table}"}}',
                     "--predictions", str(log), "--from", "2026-11-01", "--to", "2026-11-01",
                     "--out", str(tmp_path / out), "--runner", "direct",
                     "--fail-if", "initial accuracy < 0.9"])
        printed = capsys.readouterr()
        counts = {c["model"]: c for c in json.loads(
            (tmp_path / out / "manifest.json").read_text())["counts"]} if code in (0, 3) else {}
        return code, printed.out + printed.err, counts

    code, said, counts = backfill(night, "night")
    assert code == 0, said
    assert "instances / v2: none of its 2 logged predictions belongs to a labelled instance " \
        "(2 of an instance still waiting for its label): nothing of it to score yet" in said
    assert "no prediction to score" not in said  # (its predictions were not none)
    assert "instances / v2: --fail-if not checked: no prediction of it is of a labelled " \
        "instance of the range" in said and "threshold crossed" not in said
    assert (counts["v2"]["unmatched_pending"], counts["v2"]["unmatched_no_instance"]) == (2, 0)
    assert (counts["v1"]["unmatched_pending"], counts["v1"]["scored_initial"]) == (1, 1)
    for c in counts.values():  # (the reasons add up)
        assert sum(v for k, v in c.items() if k.startswith("unmatched_")) == \
            2 * c["unmatched_predictions"]
    code, said, counts = backfill(labels, "later")  # (1 is b: v2 right, v1 wrong)
    assert code == 3 and "instances / v1: initial accuracy < 0.9 (it is 0.5)" in said
    assert counts["v2"]["scored_initial"] == 1 and "not checked" not in said


def test_a_night_whose_labels_have_not_come_says_so(tmp_path, capsys):
    """The label table stopped on Nov 2 (a late label export): the backfill of Nov 3 has no
    label for its instances; the error says the range's labels have not come, not only that
    ids may differ."""
    t, stream, labels = _three_days(tmp_path)
    stale = tmp_path / "stale.csv"
    table = read_csv(labels)
    table[table["time"] < t[4]].to_csv(stale, index=False)  # (labels of instances 0-2)
    log = tmp_path / "log.csv"
    pd.DataFrame({"id": ["4", "5"], "t": t[4:], "y_pred": ["a", "a"]}).to_csv(log, index=False)
    assert main(["backfill", "--stream", f'{stream}{{"labels": "{stale}"}}', "--predictions",
                 str(log), "--from", "2026-11-03", "--to", "2026-11-03", "--out",
                 str(tmp_path / "o"), "--runner", "direct", "--quiet"]) == 2
    assert capsys.readouterr().err.strip() == (
        "delayed-eval: error: stream instances: none of the 2 instances arriving from "
        "2026-11-03 00:00:00 UTC to 2026-11-04 00:00:00 UTC (--from/--to) has its label in the "
        "labels read (3, of instances outside the range or of unknown ids); evaluate the range "
        "once its labels have come (a label table that reaches past it), or check that "
        "instances and labels share ids (option id)")


def _daily_tables(tmp_path):
    """Instance and label tables of 6 instances over 3 days (a label in a later partition than
    its instance, a bad value in the third instance partition): in one file each (`single`) and
    in daily partitions (`parts`: instances CSV, labels Parquet)."""
    day, base = 86400.0, 1793491200.0  # 2026-11-01T00:00:00Z
    t = [base + d * day + h * 3600 for d in range(3) for h in (6, 18)]
    instances = pd.DataFrame({"id": range(6), "time": t, "f": ["0", "1", "2", "3", "x", "5"]})
    labels = pd.DataFrame({"id": range(5), "time": [x + 20 * 3600 for x in t[:5]],
                           "label": list("ababa")})
    single, parts = tmp_path / "single", tmp_path / "parts"
    single.mkdir()
    instances.to_csv(single / "instances.csv", index=False)
    labels.to_csv(single / "labels.csv", index=False)
    for name, table in (("instances", instances), ("labels", labels)):
        days = pd.to_datetime(table["time"], unit="s").dt.strftime("%Y-%m-%d")
        for d, rows in table.groupby(days):
            folder = parts / name / f"date={d}"
            folder.mkdir(parents=True)
            if name == "labels":
                rows.to_parquet(folder / "part-0.parquet", index=False)
            else:
                rows.to_csv(folder / "part-0.csv", index=False)
    return single, parts


def _run_over_range(out, instances, labels):
    summary = run(RunConfig(
        streams=[f's={instances}{{"labels": "{labels}", "classes": ["a", "b"]}}'],
        models=["no-change"], out=str(out), start="2026-11-02", end="2026-11-03", quiet=True,
        runner="direct", repredict="none"))
    manifest = json.loads((out / "manifest.json").read_text())
    dead = [json.loads(line) for line in (out / "dead_letters.jsonl").read_text().splitlines()]
    return summary.drop(columns="run_id"), manifest["counts"], manifest["streams"]["s"]["read"], \
        dead


def test_streams_in_date_partitions_read_as_one_file_each(tmp_path):
    """A run over a range of daily partitions gives the summary and counts of the same tables
    in one file each, and the dead letters name the partition's file and their row there: the
    instance whose feature is no number, and then its label, which meets no instance."""
    single, parts = _daily_tables(tmp_path)
    runs = {how: _run_over_range(tmp_path / f"out-{how}", f"{folder}/instances{ext}",
                                 f"{folder}/labels{ext}")
            for how, folder, ext in (("single", single, ".csv"), ("parts", parts, ""))}
    pd.testing.assert_frame_equal(runs["parts"][0], runs["single"][0])
    assert runs["parts"][1:3] == runs["single"][1:3]
    (counts,) = runs["parts"][1]
    assert (counts["instances"], counts["labelled"], counts["pending_at_end"]) == (3, 2, 1)
    where = {how: [(d["file"], d["row"], d["field"]) for d in r[3]] for how, r in runs.items()}
    assert where["parts"] == [
        (str(parts / "instances" / "date=2026-11-03" / "part-0.csv"), 1, "f"),
        (str(parts / "labels" / "date=2026-11-04" / "part-0.parquet"), 1, "id")]
    assert where["single"] == [(str(single / "instances.csv"), 5, "f"),
                               (str(single / "labels.csv"), 5, "id")]


def test_partition_files_of_no_bytes_are_days_without_rows(tmp_path):
    """A writer that leaves a file of no bytes for a day without events (before the first day,
    after the last) changes nothing: not a table 'empty' for want of a header, the same results.
    A table whose every file is such is still empty."""
    _, parts = _daily_tables(tmp_path)
    before = _run_over_range(tmp_path / "out-before", parts / "instances", parts / "labels")
    for empty in ("instances/date=2026-10-31/part-0.csv", "instances/date=2026-11-05/part-0.csv",
                  "labels/date=2026-10-31/part-0.parquet"):
        (parts / empty).parent.mkdir()
        (parts / empty).write_bytes(b"")
    after = _run_over_range(tmp_path / "out-after", parts / "instances", parts / "labels")
    pd.testing.assert_frame_equal(after[0], before[0])
    assert after[1:] == before[1:]
    nothing = tmp_path / "nothing" / "date=2026-11-01"
    nothing.mkdir(parents=True)
    (nothing / "part-0.csv").write_bytes(b"")
    with pytest.raises(InputError, match="part-0.csv: the stream is empty"):
        _run_over_range(tmp_path / "out-nothing", nothing.parent, parts / "labels")


def test_partitioned_tables_on_a_remote_filesystem_read_as_local_ones(tmp_path):
    """The same partitions behind a non-local Beam filesystem (as gs:// or s3:// would be):
    listed, opened and read through FileSystems, with the local run's results; dead letters
    name the remote file."""
    _, parts = _daily_tables(tmp_path)
    local = _run_over_range(tmp_path / "out-local", parts / "instances", parts / "labels")
    RemoteFileSystem.opened.clear()
    remote = _run_over_range(tmp_path / "out-remote", f"remote://{parts}/instances",
                             f"remote://{parts}/labels")
    pd.testing.assert_frame_equal(remote[0], local[0])
    assert remote[1:3] == local[1:3]
    assert {(d["file"], d["row"]) for d in remote[3]} == {
        (f"remote://{parts}/instances/date=2026-11-03/part-0.csv", 1),
        (f"remote://{parts}/labels/date=2026-11-04/part-0.parquet", 1)}
    assert any(p.endswith("labels/date=2026-11-02/part-0.parquet")
               for p in RemoteFileSystem.opened)


def test_a_run_and_its_backfill_write_to_a_remote_out_as_to_a_local_one(tmp_path, monkeypatch):
    """--out on a non-local Beam filesystem (as gs:// or s3:// would be): the run writes there
    the files and summary it writes locally, and leaves no staging folder; a backfill reads
    the log from there and writes there too; nothing is written where the command was started
    (a remote path taken for a local one would make a folder `remote:` there)."""
    started = tmp_path / "started-here"
    started.mkdir()
    monkeypatch.chdir(started)
    common = dict(streams=['sea=synth:SEA{"n": 400, "seed": 1}'], delay="10", runner="direct",
                  quiet=True)
    summaries = {}
    for where, root in (("local", str(tmp_path)), ("remote", f"remote://{tmp_path}")):
        run_summary = run(RunConfig(models=["nb=gaussian-nb", "no-change"],
                                    out=f"{root}/run-{where}", **common))
        backfill_summary = run(RunConfig(models=[], out=f"{root}/backfill-{where}",
                                         predictions=f"{root}/run-{where}/predictions.parquet",
                                         **common))
        summaries[where] = [s.drop(columns="run_id") for s in (run_summary, backfill_summary)]
    for kind in ("run", "backfill"):
        assert sorted(p.name for p in (tmp_path / f"{kind}-remote").iterdir()) == \
            sorted(p.name for p in (tmp_path / f"{kind}-local").iterdir())
    for remote, local in zip(summaries["remote"], summaries["local"]):
        pd.testing.assert_frame_equal(remote, local)
    assert list(started.iterdir()) == []


def _fraud_logs(folder, n=60):
    """A deployed model's logs: instances (created_at, features a model would choke on: NA
    cells, a different merchant text in every row), labels (labelled_at), predictions."""
    rng = np.random.default_rng(3)
    t = 1793491200.0 + 37.0 * np.arange(n)
    country = rng.choice(["FR", "DE", "NA"], n)
    amount = rng.gamma(2, 50, n)
    amount[::7] = np.nan
    pd.DataFrame({"txn": [f"T{i}" for i in range(n)], "created_at": t, "amount": amount,
                  "country": country, "merchant": [f"shop {i}" for i in range(n)]}
                 ).to_csv(folder / "instances.csv", index=False)
    y = rng.choice(["fraud", "ok"], n, p=[0.3, 0.7])
    pd.DataFrame({"txn": [f"T{i}" for i in range(n)], "labelled_at": t + 900 + 60 * (n - 1 -
                  np.arange(n)), "is_fraud": y}).iloc[: n - 5].to_csv(folder / "labels.csv",
                                                                       index=False)
    pd.DataFrame({"txn": [f"T{i}" for i in range(n)], "scored_at": t + 1,
                  "decision": rng.choice(["fraud", "ok"], n)}).to_csv(folder / "log.csv",
                                                                      index=False)
    return country, y


def _fraud_backfill(folder, instances, out, label_time="labelled_at", **kw):
    stream = (f'fraud={instances}{{"labels": "{folder / "labels.csv"}", "id": "txn", '
              f'"time": "created_at", "label_time": "{label_time}", "label": "is_fraud"}}')
    log = f'{folder / "log.csv"}{{"id": "txn", "time": "scored_at", "prediction": "decision"}}'
    summary = run(RunConfig(streams=[stream], models=["v3"], predictions=log, out=str(out),
                            runner="direct", quiet=True, **kw))
    return summary.drop(columns="run_id"), json.loads((out / "manifest.json").read_text())


def test_a_backfill_reads_no_features_so_none_is_dead_lettered_or_refused(tmp_path):
    """No model sees the features of a backfill: NA cells and an id-like text column neither
    set instances aside nor stop the run, and the scores equal those of the same logs without
    any feature column; a --segment column is read as it is (NA: missing)."""
    country, y = _fraud_logs(tmp_path)
    bare = tmp_path / "bare.csv"
    read_csv(tmp_path / "instances.csv")[["txn", "created_at"]].to_csv(bare, index=False)
    segmented, manifest = _fraud_backfill(tmp_path, tmp_path / "instances.csv", tmp_path / "a",
                                          segments=["country"])
    expected, _ = _fraud_backfill(tmp_path, bare, tmp_path / "b")
    whole = segmented[segmented["segment"].isna()].reset_index(drop=True)
    columns = [c for c in expected.columns if c != "segment"]  # (all None)
    assert whole[columns].equals(expected[columns].reset_index(drop=True))
    counts = manifest["counts"][0]
    assert (counts["instances"], counts["labelled"], counts["dead_letters"]) == (60, 55, 0)
    rows = segmented.query("category == 'initial' and metric == 'accuracy' and "
                           "window == 'cumulative'")
    n = {None if pd.isna(s) else s: count for s, count in zip(rows["segment"], rows["n"])}
    assert n == {None: 55, **{f"country={v}": int((country[:55] == v).sum()) for v in ("FR", "DE")},
                 "country=(missing)": int((country[:55] == "NA").sum())}


def test_a_label_table_names_its_own_time_and_id_columns(tmp_path, capsys):
    """Instances timed by `created_at`, labels by `labelled_at` (`label_time`), and labels with
    their id in `transaction` (`label_id`): the same scores as the tables with both time
    columns named `time` and both ids `txn`; without the options, one line naming them."""
    _fraud_logs(tmp_path)
    summary, _ = _fraud_backfill(tmp_path, tmp_path / "instances.csv", tmp_path / "a")
    renamed = tmp_path / "renamed"
    renamed.mkdir()
    read_csv(tmp_path / "instances.csv").rename(columns={"created_at": "time"}).to_csv(
        renamed / "instances.csv", index=False)
    read_csv(tmp_path / "labels.csv").rename(columns={"labelled_at": "time"}).to_csv(
        renamed / "labels.csv", index=False)
    (renamed / "log.csv").write_bytes((tmp_path / "log.csv").read_bytes())
    log = f'{renamed / "log.csv"}{{"id": "txn", "time": "scored_at", "prediction": "decision"}}'
    stream = (f'fraud={renamed / "instances.csv"}{{"labels": "{renamed / "labels.csv"}", '
              f'"id": "txn", "label": "is_fraud"}}')
    expected = run(RunConfig(streams=[stream], models=["v3"], predictions=log, quiet=True,
                             out=str(tmp_path / "b"), runner="direct")).drop(columns="run_id")
    assert summary.equals(expected) and summary["n"].max() == 55
    # Label times from the input, not a delay model (--delay's default 0 means nothing here).
    assert summary["protocol"].str.startswith("delayed-prequential delay=input ").all()
    code = main(["backfill", "--stream", f'{tmp_path / "instances.csv"}{{"labels": '
                 f'"{tmp_path / "labels.csv"}", "id": "txn", "time": "created_at", '
                 f'"label": "is_fraud"}}', "--predictions", log, "--model", "v3", "--out",
                 str(tmp_path / "c"), "--quiet", "--runner", "direct"])
    err = capsys.readouterr().err
    assert code == 2 and "labels.csv: column 'created_at'" in err and '{"label_time": ' in err
    own = tmp_path / "own"
    own.mkdir()
    read_csv(tmp_path / "labels.csv").rename(columns={"txn": "transaction"}).to_csv(
        own / "labels.csv", index=False)
    options = (f'"labels": "{own / "labels.csv"}", "id": "txn", "time": "created_at", '
               f'"label_time": "labelled_at", "label": "is_fraud"')
    by_own_id = run(RunConfig(
        streams=[f'fraud={tmp_path / "instances.csv"}{{{options}, "label_id": "transaction"}}'],
        models=["v3"], predictions=log, quiet=True, out=str(tmp_path / "d"), runner="direct"))
    assert by_own_id.drop(columns="run_id").equals(expected)
    code = main(["backfill", "--stream", f'{tmp_path / "instances.csv"}{{{options}}}',
                 "--predictions", log, "--model", "v3", "--out", str(tmp_path / "e"),
                 "--quiet", "--runner", "direct"])
    err = capsys.readouterr().err
    assert code == 2 and "labels.csv: column 'txn'" in err and '{"label_id": ' in err


def test_a_backfill_says_why_logged_predictions_belong_to_no_instance(tmp_path, capsys):
    """Ten predictions logged a second before their instance (another clock), five after its
    label, two with no readable time, five for instances still waiting: counted apart in the
    manifest, and said."""
    _fraud_logs(tmp_path)
    log = read_csv(tmp_path / "log.csv")
    instances, labels = read_csv(tmp_path / "instances.csv"), read_csv(tmp_path /
                                                                               "labels.csv")
    log.loc[:9, "scored_at"] = instances["created_at"][:10] - 1.0
    log.loc[10:14, "scored_at"] = labels["labelled_at"][10:15].to_numpy() + 10.0
    log = log.astype({"scored_at": object})
    log.loc[15:16, "scored_at"] = [None, "soon"]
    log.to_csv(tmp_path / "log.csv", index=False)
    code = main(["backfill", "--stream", f'fraud={tmp_path / "instances.csv"}{{"labels": '
                 f'"{tmp_path / "labels.csv"}", "id": "txn", "time": "created_at", '
                 f'"label_time": "labelled_at", "label": "is_fraud"}}', "--predictions",
                 f'{tmp_path / "log.csv"}{{"id": "txn", "time": "scored_at", '
                 f'"prediction": "decision"}}', "--model", "v3", "--out", str(tmp_path / "o"),
                 "--runner", "direct"])
    counts = json.loads((tmp_path / "o" / "manifest.json").read_text())["counts"][0]
    assert code == 0 and {k: v for k, v in counts.items() if "matched" in k} == {
        "unmatched_predictions": 22, "unmatched_outside_range": 0, "unmatched_pending": 5,
        "unmatched_no_instance": 0, "unmatched_before_arrival": 10, "unmatched_after_label": 5,
        "unmatched_unreadable_time": 2}
    assert "fraud / v3: 22 of 60 logged predictions belong to no labelled instance: 10 made " \
        "before their instance arrived, 5 after its label (do the log and the stream keep the " \
        "same clock?), 2 with no readable time (seconds, or an ISO datetime), 5 of an " \
        "instance still waiting for its label" in capsys.readouterr().out
    # Over the second half of the arrivals only: the first half's predictions (made before
    # --from, their instances outside the range) are counted apart, and nothing is said of
    # the log's five that were pending.
    log["scored_at"] = instances["created_at"] + 1.0
    log.to_csv(tmp_path / "log.csv", index=False)
    start = str(instances["created_at"][30])
    assert main(["backfill", "--stream", f'fraud={tmp_path / "instances.csv"}{{"labels": '
                 f'"{tmp_path / "labels.csv"}", "id": "txn", "time": "created_at", '
                 f'"label_time": "labelled_at", "label": "is_fraud"}}', "--predictions",
                 f'{tmp_path / "log.csv"}{{"id": "txn", "time": "scored_at", '
                 f'"prediction": "decision"}}', "--model", "v3", "--out", str(tmp_path / "r"),
                 "--runner", "direct", "--from", start]) == 0
    counts = json.loads((tmp_path / "r" / "manifest.json").read_text())["counts"][0]
    assert {k: v for k, v in counts.items() if "matched" in k} == {
        "unmatched_predictions": 35, "unmatched_outside_range": 30, "unmatched_pending": 5,
        "unmatched_no_instance": 0, "unmatched_before_arrival": 0, "unmatched_after_label": 0,
        "unmatched_unreadable_time": 0}
    assert "logged predictions belong" not in capsys.readouterr().out


def test_predictions_at_one_time_keep_log_order_whatever_order_the_runner_groups_them(
        tmp_path):
    """Two files log instance 7 at the same time, 'b' in a.csv and 'a' in b.csv, and 'a' then
    'b' at its label: the log's order (files in path order, rows in file order) makes 'b' its
    initial prediction and 'b' its final one, however the runner's grouping orders the parts
    of the bucket."""
    from transforms.backfill.outcomes import LABELS, _Join, _key_labels, _KeyLogBatches

    (tmp_path / "log").mkdir()
    (tmp_path / "log" / "a.csv").write_text("id,t,y_pred\n7,0,b\n7,100,a\n")
    (tmp_path / "log" / "b.csv").write_text("id,t,y_pred\n7,0,a\n7,100,b\n")
    log = PredictionLogSpec.parse(str(tmp_path / "log"))
    reader = _KeyLogBatches(log, ["s"], ["m"], classification=True, buckets=1)
    parts = [out[1] for path in log.files() for out in reader.process(path)
             if isinstance(out, tuple)]  # (not the tagged outputs: classes, dead letters)
    label_part = next(_key_labels((("s", LABELS), [Outcome(1, 7, 0.0, 100.0, "a", None, None,
                                                       None, None)]), 1))[1]
    join = _Join(["m"], classification=True, bins=0, final=True, span=100)
    seen = []
    for order in (parts, parts[::-1]):
        out = list(join.process((("s", 0), [label_part, *order]), {("s", LABELS): ["a"]},
                                {("s", "m"): {"a", "b"}}))
        columns = out[0][1]
        seen.append((columns["initial"].tolist(), columns["final"].tolist()))
    assert seen == [([1], [1]), ([1], [1])]  # classes a, b: 'b' is 1


def test_predictions_logged_twice_are_counted_and_the_first_initial_and_last_final_count(
        tmp_path, capsys):
    """Each instance's initial prediction logged twice (the copy says otherwise) and its final
    one twice: the first initial and the last final are scored, the 40 repeats counted."""
    labels = ["a", "b", "b", "a"] * 5
    pd.DataFrame({"id": range(20), "time": range(20), "label": labels}).to_csv(
        tmp_path / "rows.csv", index=False)
    rows = []
    for i in range(20):
        first, other = ("a", "b") if i % 3 else ("b", "a")
        rows += [(i, i + 1, "initial", first), (i, i + 1, "initial", other),
                 (i, i + 5, "final", first), (i, i + 5, "final", other)]
    pd.DataFrame(rows, columns=["id", "t", "kind", "y_pred"]).to_csv(tmp_path / "log.csv",
                                                                     index=False)
    code = main(["backfill", "--stream", f"s={tmp_path / 'rows.csv'}", "--predictions",
                 str(tmp_path / "log.csv"), "--delay", "5s", "--out", str(tmp_path / "o"),
                 "--runner", "direct", "--report"])
    out = capsys.readouterr().out
    notice = "s / log: 40 of 80 logged predictions repeat their instance's initial or final " \
        "prediction (logged twice?): the first initial and the last final one count"
    assert code == 0 and notice in out
    assert notice.replace("'", "&#x27;") in (tmp_path / "o" / "report.html").read_text()
    counts = json.loads((tmp_path / "o" / "manifest.json").read_text())["counts"][0]
    assert counts["repeated_predictions"] == 40 and counts["unmatched_predictions"] == 0
    summary = read_csv(tmp_path / "o" / "summary.csv")
    accuracy = summary[(summary.metric == "accuracy") & (summary.window == "cumulative")
                       ].set_index("category")["value"]
    first = ["a" if i % 3 else "b" for i in range(20)]
    last = ["b" if i % 3 else "a" for i in range(20)]
    assert accuracy["initial"] == sum(p == y for p, y in zip(first, labels)) / 20
    assert accuracy["final"] == sum(p == y for p, y in zip(last, labels)) / 20


def test_a_log_whose_times_are_written_day_first_backfills_with_its_time_format(tmp_path,
                                                                                capsys):
    """The run's own log with its times written day first (02/01/1970 00:00:07.500000): with
    `{"time_format": ...}` it backfills to the run's summary; without, no prediction's time
    reads, and the line names the option. Written as Berlin's clocks showed them (ISO, no
    offset), `{"time_zone": "Europe/Berlin"}` reads them."""
    kw = dict(streams=['synth:Agrawal{"n": 400, "seed": 2}'], delay="30", curve_every=100,
              run_id="same", runner="direct", probabilities=False, quiet=True,
              repredict="every_k_labels:7", bins=5)
    run(RunConfig(models=["gaussian-nb"], out=str(tmp_path / "run"), **kw))
    log = pd.read_parquet(tmp_path / "run" / "predictions.parquet")
    written = "%d/%m/%Y %H:%M:%S.%f"
    log["t"] = pd.to_datetime(log["t"], unit="s").dt.strftime(written)
    log.to_csv(tmp_path / "log.csv", index=False)
    run(RunConfig(models=[], out=str(tmp_path / "backfill"), **kw,
                  predictions=f'{tmp_path}/log.csv{{"time_format": "{written}"}}'))
    assert (tmp_path / "backfill" / "summary.csv").read_text() == \
        (tmp_path / "run" / "summary.csv").read_text()
    seconds = pd.read_parquet(tmp_path / "run" / "predictions.parquet")["t"]
    log["t"] = pd.to_datetime(seconds, unit="s").dt.tz_localize("UTC").dt.tz_convert(
        "Europe/Berlin").dt.strftime("%Y-%m-%d %H:%M:%S.%f")
    log.to_csv(tmp_path / "local.csv", index=False)
    run(RunConfig(models=[], out=str(tmp_path / "local"), **kw,
                  predictions=f'{tmp_path}/local.csv{{"time_zone": "Europe/Berlin"}}'))
    assert (tmp_path / "local" / "summary.csv").read_text() == \
        (tmp_path / "run" / "summary.csv").read_text()
    assert main(["backfill", "--stream", kw["streams"][0], "--delay", "30", "--predictions",
                 f"{tmp_path}/log.csv", "--out", str(tmp_path / "b2"), "--runner", "direct",
                 "--quiet"]) == 2
    assert capsys.readouterr().err.endswith(
        " with no readable time (seconds, or an ISO datetime)); give the log option "
        '{"time_format": "%d/%m/%Y %H:%M:%S.%f"} if the day comes first, {"time_format": '
        '"%m/%d/%Y %H:%M:%S.%f"} if the month does (or write dates year first, as ISO 8601 '
        "does: 1970-01-01 00:00:00.000000)\n")


def _score_log(folder, n: int = 300, seed: int = 3, extra: dict | None = None):
    """Instances, their labels an hour later (fraud / ok) and a log of scores a second after
    arrival, P(fraud), with `extra` columns."""
    rng = np.random.default_rng(seed)
    t = np.arange(n) * 60.0
    x = rng.normal(size=n)
    y = np.where(x + rng.normal(size=n) > 0.8, "fraud", "ok")
    score = np.round(1 / (1 + np.exp(-(2 * x - 1.6))), 4)
    pd.DataFrame({"id": range(n), "time": t, "x": x}).to_csv(folder / "inst.csv", index=False)
    pd.DataFrame({"id": range(n), "time": t + 3600, "label": y}).to_csv(folder / "lab.csv",
                                                                        index=False)
    pd.DataFrame({"id": range(n), "t": t + 1, "p_fraud": score, **(extra or {})}).to_csv(
        folder / "scores.csv", index=False)
    return y, score


def test_a_log_of_scores_alone_is_decided_at_its_threshold(tmp_path, capsys):
    """A deployed model that logs P(fraud) only: its prediction is fraud where the score is at
    least 0.5 (or the `threshold` given), else the other class the labels name; a missing
    score is no prediction. A `threshold` also re-decides a log that has predictions. Oracle:
    numpy on the same scores and labels."""
    y, score = _score_log(tmp_path)
    score[7] = np.nan
    frame = read_csv(tmp_path / "scores.csv").assign(p_fraud=score, y_pred="ok")
    frame.drop(columns="y_pred").to_csv(tmp_path / "scores.csv", index=False)
    frame.to_csv(tmp_path / "with_predictions.csv", index=False)
    stream = f'{tmp_path}/inst.csv{{"labels": "{tmp_path}/lab.csv"}}'
    for log, threshold in (("scores.csv", None), ("scores.csv", 0.3),
                           ("with_predictions.csv", 0.3)):
        options = {"score": "p_fraud", "positive": "fraud"} | (
            {} if threshold is None else {"threshold": threshold})
        out = tmp_path / f"{log}-{threshold}"
        run(RunConfig(streams=[stream], models=[], out=str(out), runner="direct", quiet=True,
                      predictions=f"{tmp_path}/{log}{json.dumps(options)}", delay="0"))
        summary = pd.read_parquet(out / "summary.parquet")
        initial = summary[(summary["category"] == "initial") & (summary["window"] ==
                                                                "cumulative")]

        def value(metric, cls=None, initial=initial):
            rows = initial[(initial["metric"] == metric) & (
                initial["class"].isna() if cls is None else initial["class"] == cls)]
            return rows["value"].item(), rows["n"].item()

        made = ~np.isnan(score)
        decided = np.where(score >= (threshold or 0.5), "fraud", "ok")[made]
        truth = y[made]
        assert value("accuracy") == (pytest.approx(np.mean(decided == truth), abs=1e-12),
                                     made.sum())
        hits = np.sum((decided == "fraud") & (truth == "fraud"))
        assert value("recall", "fraud")[0] == pytest.approx(hits / np.sum(truth == "fraud"))
        assert value("precision", "fraud")[0] == pytest.approx(hits / np.sum(decided == "fraud"))
        counts = json.loads((out / "manifest.json").read_text())["counts"][0]
        assert counts["unscored_initial"] == 1


def test_a_score_that_cannot_decide_is_one_line(tmp_path, capsys):
    """A threshold without a score, or outside [0, 1]; a score alone where the labels name
    three classes (a score decides between two); a log of scores whose score is not named."""
    _score_log(tmp_path)
    labels = read_csv(tmp_path / "lab.csv")
    labels.loc[::3, "label"] = "review"
    labels.to_csv(tmp_path / "lab3.csv", index=False)
    argv = ["backfill", "--out", str(tmp_path / "o"), "--runner", "direct", "--quiet"]
    for labels, options, line in (
            ("lab.csv", {"threshold": 0.3}, "threshold is a number in [0, 1] that decides"),
            ("lab.csv", {"score": "p_fraud", "positive": "fraud", "threshold": 2},
             "threshold is a number in [0, 1] that decides"),
            ("lab3.csv", {"score": "p_fraud", "positive": "fraud"},
             "its predictions are decided from the score 'p_fraud', the probability of "
             "'fraud', or else the other class, which the labels do not name as the only "
             'one: declare the two classes with the stream option {"classes": ["fraud", '
             '"..."]}, or log the predictions (the option prediction)'),
            ("lab.csv", {"time": "t"},
             'name it with the --predictions option {"prediction": "..."}; or, a log of '
             'scores, {"score": "p_fraud", "positive": "..."} (the class it is the '
             "probability of: decided at 0.5)")):
        stream = f'{tmp_path}/inst.csv{{"labels": "{tmp_path}/{labels}"}}'
        assert main([*argv, "--stream", stream, "--predictions",
                     f"{tmp_path}/scores.csv{json.dumps(options)}"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and line in err, err


def test_a_log_of_scores_alone_against_labels_0_and_1_is_classification(tmp_path):
    """Labels 1 and 0 and a log of P(1) alone: the score is of class 1 (told by the labels),
    the predictions decided from it are classes, not the score read as a regression.
    Oracle: numpy on the same scores and labels."""
    y, score = _score_log(tmp_path)
    labels = read_csv(tmp_path / "lab.csv")
    labels["label"] = (labels["label"] == "fraud").astype(int)
    labels.to_csv(tmp_path / "lab.csv", index=False)
    run(RunConfig(streams=[f'{tmp_path}/inst.csv{{"labels": "{tmp_path}/lab.csv"}}'],
                  models=[], out=str(tmp_path / "out"), runner="direct", quiet=True,
                  predictions=f'{tmp_path}/scores.csv{{"score": "p_fraud"}}', delay="0"))
    summary = pd.read_parquet(tmp_path / "out" / "summary.parquet")
    accuracy = summary.query("category == 'initial' and window == 'cumulative' and "
                             "metric == 'accuracy'")["value"].item()
    assert "mae" not in set(summary["metric"])
    assert accuracy == pytest.approx(np.mean((score >= 0.5) == (y == "fraud")), abs=1e-12)


def test_a_probability_measures_n_counts_the_predictions_that_had_probabilities(tmp_path):
    """A log whose rows give some initial predictions no probabilities: log-loss and Brier are
    over the others, and their `n` says how many (it said the classes' count)."""
    rng = np.random.default_rng(5)
    x = rng.normal(size=400)
    label = np.where(x + rng.normal(scale=0.8, size=400) > 0, "fraud", "ok")
    stream = f"{tmp_path / 'tx.csv'}" + '{"positive": "fraud"}'
    pd.DataFrame({"x": x, "label": label}).to_csv(tmp_path / "tx.csv", index=False)
    kw = dict(streams=[stream], delay="20", repredict="none", fadings=[0.99], quiet=True,
              runner="direct")
    run(RunConfig(models=["gaussian-nb"], out=str(tmp_path / "run"), **kw))
    log = pd.read_parquet(tmp_path / "run" / "predictions.parquet")
    initial = log[(log["kind"] == "initial") & log["proba"].notna()]
    stripped = initial.index[::7]
    table = pq.read_table(tmp_path / "run" / "predictions.parquet")
    proba = pc.if_else(pa.array(log.index.isin(stripped)),
                       pa.scalar(None, table["proba"].type), table["proba"])
    pq.write_table(table.set_column(table.schema.get_field_index("proba"), "proba", proba),
                   tmp_path / "log.parquet")
    summary = run(RunConfig(models=[], predictions=str(tmp_path / "log.parquet"),
                            out=str(tmp_path / "b"), **kw))
    kept = initial.drop(stripped)
    for window in ("cumulative", "fading=0.99"):  # (a faded view's n: its labels, unfaded)
        rows = summary[(summary["category"] == "initial") & (summary["window"] == window)
                       & summary["class"].isna()].set_index("metric")
        assert rows.loc["accuracy", "n"] == len(initial)
        assert rows.loc["log_loss", "n"] == rows.loc["brier", "n"] == len(kept) < len(initial)
    rows = summary[(summary["category"] == "initial") & (summary["window"] == "cumulative")
                   & summary["class"].isna()].set_index("metric")
    losses = [-math.log(max(dict(p)[label[int(i)]], 1e-15)) for i, p in zip(kept["id"],
                                                                          kept["proba"])]
    assert rows.loc["log_loss", "value"] == pytest.approx(np.mean(losses), rel=1e-12)


def test_a_backfill_imports_none_of_rivers_model_packages(tmp_path):
    """A backfill replays no model, so river's naive Bayes, trees and linear models (which
    import scipy.stats: ~0.5 s of a short backfill) stay unimported; the checks for their fast
    paths look only among the classes already imported."""
    import subprocess
    import sys

    rows = pd.DataFrame({"id": range(40), "time": range(40), "a": np.linspace(0, 1, 40),
                         "label": ["x", "y"] * 20})
    rows.to_csv(tmp_path / "rows.csv", index=False)
    rows.assign(t=rows["time"], y_pred="x")[["id", "t", "y_pred"]].to_csv(
        tmp_path / "log.csv", index=False)
    packages = ["river.naive_bayes", "river.tree", "river.linear_model", "scipy.stats"]
    code = (f"import sys; from pipelines.cli import main; code = main(['backfill', '--stream', "
            f"{str(tmp_path / 'rows.csv')!r}, '--predictions', {str(tmp_path / 'log.csv')!r}, "
            f"'--delay', '3', '--out', {str(tmp_path / 'o')!r}, '--runner', 'direct', "
            f"'--quiet']); print(code, [p for p in {packages!r} if p in sys.modules])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert done.stdout.strip().splitlines()[-1] == "0 []", done.stderr[-2000:]
