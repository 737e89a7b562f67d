"""Both Beam replay paths give the same records as the plain engine, in batch and streaming."""

import dataclasses
import json
import logging
import os
import random

import apache_beam as beam
import numpy as np
import pandas as pd
import pytest
from apache_beam.testing.test_stream import TestStream as BeamTestStream
from apache_beam.testing.util import assert_that, equal_to
from apache_beam.transforms.window import TimestampedValue

from metrics.comparison import COMPARISON_METRICS
from pipelines.config import ConfigError, RunConfig
from pipelines.job import run
from pipelines.plan import plan
from runners import make_runner, pipeline_options
from tests.helpers import data, read, read_csv
from transforms.errors import InputError
from transforms.models.specs import ModelSpec
from transforms.replay import per_key
from transforms.replay.engine import ReplayEngine
from transforms.replay.keyed import KEYED_CHUNKS, EngineFactory, StatefulReplay
from transforms.replay.per_key import in_time_order
from transforms.streams.delays import DelaySpec
from transforms.streams.sources import StreamSpec
from transforms.streams.tables import rows_in_time_order

STREAM = 'sea=synth:SEA{"n": 1500, "seed": 3, "noise": 0.1}'
SHORT_N = 500
SHORT = f'sea=synth:SEA{{"n": {SHORT_N}, "seed": 3, "noise": 0.1}}'
MODELS = ["no-change", "gaussian-nb", 'ht=river.tree.HoeffdingTreeClassifier{"grace_period": 50}']


def _outputs(out, predictions=True):
    summary = read_csv(out / "summary.csv").drop(columns=["run_id"])
    curves = pd.read_parquet(out / "curves.parquet").sort_values(
        ["stream", "model", "category", "metric", "labels"]).reset_index(drop=True)
    manifest = json.loads((out / "manifest.json").read_text())
    counts = (manifest["counts"], {k: v["read"] for k, v in manifest["streams"].items()})
    if not predictions:
        return summary, curves, counts
    preds = pd.read_parquet(out / "predictions.parquet").sort_values(
        ["stream", "model", "id", "kind", "t"]).reset_index(drop=True)
    return preds, summary, curves, counts


def test_grouped_and_stateful_paths_give_identical_records(tmp_path, caplog):
    """Every replay path, with comparisons and drift: identical records; and no key crossing
    a shuffle needs Beam's fallback (pickling) coder, which is not deterministic (the views'
    keys are checked on a backfill, and the warning's capture, in `test_distribution`). A
    --timer-bucket under `auto` is the looping stateful replay."""
    results = []
    for name, replay, bucket in [("grouped", "grouped", None), ("stateful", "stateful", None),
                                 ("looping", "auto", 97.0), ("per-key", "per-key", None),
                                 ("per-stream", "per-stream", None)]:
        out = tmp_path / name
        with caplog.at_level(logging.WARNING):
            run(RunConfig(streams=[SHORT], models=MODELS, delay="random:20:200:4",
                          out=str(out), runner="direct", replay=replay, timer_bucket=bucket,
                          chunk_size=128, repredicted_probabilities=True, curve_every=100,
                          bins=10, quiet=True))
        results.append(_outputs(out))
    assert not [r for r in caplog.records if "deterministic" in r.getMessage()]
    assert json.loads((tmp_path / "looping" / "manifest.json").read_text())["replay"] == \
        "stateful"
    (p0, s0, c0, n0) = results[0]
    assert (p0["kind"] != "re-prediction").sum() == 3 * SHORT_N * 2
    assert (p0["kind"] == "re-prediction").sum() > 3 * 1000  # re-evaluation on (K=10)
    assert p0.loc[p0["kind"] == "re-prediction", "proba"].notna().mean() > 0.99
    assert ((s0["category"] == "binned") & (s0["metric"] == "log_loss")).sum() == 3 * 12
    assert n0[1]["sea"]["instance_events"] == SHORT_N
    # 3 pairs, initial and final, each pair's statistics
    assert (s0["category"] == "comparison").sum() == 3 * 2 * len(COMPARISON_METRICS)
    for p, s, c, n in results[1:]:
        assert n == n0
        pd.testing.assert_frame_equal(p, p0)
        pd.testing.assert_frame_equal(s, s0)
        pd.testing.assert_frame_equal(c, c0)


def test_the_prediction_log_is_written_in_one_order_by_every_replay_path(tmp_path):
    """The rows of predictions.parquet in the order of the events that wrote them (each
    drain's, drains in time order), whatever drains a replay path makes: the same file from
    one drain per key (per-key, grouped) and from a drain per 5 s of event time (the looping
    stateful replay), here where a drain's rows may all be older than the last of the drain
    before (no final predictions; a label's re-predictions, every 15 s while it waited, are
    written with it)."""
    rng = np.random.default_rng(7)
    n = 240
    t = np.cumsum(rng.exponential(1.0, n)).round(3)
    x = rng.normal(size=n).round(3)
    instances = pd.DataFrame({"id": np.arange(n), "time": t, "kind": "instance", "x": x})
    labels = pd.DataFrame({"id": np.arange(n), "time": t + rng.exponential(20.0, n).round(2),
                           "kind": "label", "label": (2 * x + rng.normal(size=n)).round(3)})
    pd.concat([instances, labels]).sort_values("time", kind="stable").to_parquet(
        tmp_path / "log.parquet", index=False)
    logs = []
    for name, replay, bucket in [("per-key", "per-key", None), ("grouped", "grouped", None),
                                 ("looping", "stateful", 5.0)]:
        out = tmp_path / name
        run(RunConfig(streams=[f"s={tmp_path / 'log.parquet'}"], models=["mean-regressor"],
                      out=str(out), runner="direct", replay=replay, timer_bucket=bucket,
                      final=False, repredict="every:15s", quiet=True))
        logs.append(pd.read_parquet(out / "predictions.parquet"))
    assert (logs[0]["kind"] == "re-prediction").sum() > n // 2
    for log in logs[1:]:
        pd.testing.assert_frame_equal(log, logs[0])


@pytest.mark.parametrize("task,every", [("classification", 100), ("regression", 100),
                                        ("classification", 2)])
def test_per_stream_scores_as_it_drains_what_the_pane_pipeline_scores(tmp_path, task, every):
    """per-stream scores and compares in the replay, in label order; grouped shuffles blocks:
    the same summary and curves with windows, fading factors, event-time windows and bins. A
    curve point every 2 labels scores a drain of more than 128 labels in slices
    (`StreamScoring.slices`): the second of 2 drains here."""
    if task == "classification" and every > 2:
        stream, models = SHORT, MODELS
    elif task == "classification":  # (a curve point every 2 labels: two models, one pair)
        stream, models = 'sea=synth:SEA{"n": 250, "seed": 3, "noise": 0.1}', MODELS[:2]
    else:
        stream = 'fried=synth:Friedman{"n": 1200, "seed": 2}'
        models = ["linear-regression", "htr=hoeffding-tree-regressor"]
    results = []
    for replay in ("grouped", "per-stream"):
        out = tmp_path / replay
        run(RunConfig(streams=[stream], models=models, delay="random:20:200:4", out=str(out),
                      runner="direct", replay=replay, task=task, bins=5, curve_every=every,
                      windows=[50, 300], fadings=[0.99], time_windows=["200/100"],
                      chunk_size=16, log_predictions="none", quiet=True,
                      repredicted_probabilities=task == "classification"))
        results.append(_outputs(out, predictions=False))
    (s0, c0, n0), (s1, c1, n1) = results
    assert set(s0["window"]) == {"cumulative", "w=50", "w=300", "fading=0.99", "time=200/100"}
    assert (s0["category"] == "comparison").sum() > 0 and (c0["labels"] == every).any()
    assert n1 == n0
    pd.testing.assert_frame_equal(s1, s0)
    pd.testing.assert_frame_equal(c1, c0)


@pytest.mark.parametrize("replay", ["grouped", "per-stream", "per-key"])
def test_each_stream_has_its_own_curve_step_whatever_streams_run_beside_it(tmp_path, replay):
    """By default each stream's curve has a point every `curve_step` of its own length (at
    least 25 points): a short stream beside a long one made the long one's curve as fine as
    its own (a point every 5 labels instead of every 50: ten times the rows and the time).
    Each stream's summary and curves, windows, fading factors, comparisons and --resources'
    points included, equal its run alone; its points are at the multiples of its own step
    (counted by hand: 1 500 labelled events, a step of 50 = the largest 1, 2, 5 × 10^k that
    gives 25 points; 150 events, a step of 5)."""
    long = 'long=synth:SEA{"n": 1500, "seed": 1}'
    short = 'short=synth:SEA{"n": 150, "seed": 2}'

    def outputs(streams, name):
        out = tmp_path / name
        run(RunConfig(streams=streams, models=MODELS[:2], delay="20", out=str(out),
                      runner="direct", replay=replay, bins=5, windows=[40], fadings=[0.99],
                      resources=True, log_predictions="none", quiet=True))
        summary, curves, _ = _outputs(out, predictions=False)
        manifest = json.loads((out / "manifest.json").read_text())
        costs = curves[curves["category"] == "resources"]
        return (summary[summary["category"] != "resources"].reset_index(drop=True),
                curves[curves["category"] != "resources"].reset_index(drop=True),
                costs, manifest["curve_every"])

    both = outputs([long, short], "both")
    assert both[3] == {"long": 50, "short": 5}
    for stream, step, labels in (("long", 50, 1500), ("short", 5, 150)):
        alone = outputs([long if stream == "long" else short], stream)
        assert alone[3] == step
        for mine, own in zip(both[:2], alone[:2]):
            pd.testing.assert_frame_equal(
                mine[mine["stream"] == stream].reset_index(drop=True), own)
        points = sorted(set(both[1].loc[both[1]["stream"] == stream, "labels"]))
        assert points == list(range(step, labels + 1, step))
        for costs in (both[2], alone[2]):  # (measured at the stream's own points)
            assert sorted(set(costs.loc[costs["stream"] == stream, "labels"])) == points


def test_bin_boundaries_schedules_do_not_depend_on_the_replay_path_or_chunk_size(tmp_path):
    """A delay of 150 events, far beyond what 20 batches of 2 events read ahead: every
    instance's label time is still known when it arrives, on every path, so every instance
    gets its re-predictions at bin boundaries (none `unscheduled`), and the records agree."""
    results = []
    for replay, chunk in [("grouped", 1000), ("per-stream", 2), ("per-key", 1000)]:
        out = tmp_path / f"{replay}-{chunk}"
        run(RunConfig(streams=[SHORT], models=["no-change", "gaussian-nb"], delay="150",
                      repredict="bin_boundaries:5", bins=5, out=str(out), runner="direct",
                      replay=replay, chunk_size=chunk, quiet=True))
        results.append(_outputs(out))
    (p0, s0, c0, n0) = results[0]
    # (the last 150 instances' labels come when the stream ends: their time is known then too)
    assert [c["unscheduled"] for c in n0[0]] == [0, 0]
    assert (p0["kind"] == "re-prediction").sum() > 2 * 300 * 3
    for p, s, c, n in results[1:]:
        assert n == n0
        pd.testing.assert_frame_equal(p, p0)
        pd.testing.assert_frame_equal(s, s0)
        pd.testing.assert_frame_equal(c, c0)


def test_bin_boundaries_on_labels_that_come_anywhere_later_is_replayed_grouped(tmp_path):
    def config(replay):
        return RunConfig(streams=[data("events.csv")], models=["no-change"], delay="0",
                         repredict="bin_boundaries:4", out=str(tmp_path / replay),
                         runner="direct", replay=replay, quiet=True)

    assert plan(config("auto")).replay == "grouped"
    assert plan(dataclasses.replace(config("auto"), repredict="none")).replay == "per-stream"
    with pytest.raises(ConfigError, match=r"stream events: --repredict bin_boundaries:4 needs "
                                          r"each label time .* anywhere later, beyond what "
                                          r"--replay per-stream reads ahead; use --replay "
                                          r"grouped"):
        plan(config("per-stream"))


def test_a_file_out_of_time_order_is_sorted_as_it_is_read_and_replayed_per_stream(tmp_path):
    rows = ["time,f1,f2,label"] + [f"{t},{t % 7 / 7:.3f},{t % 3},{'ab'[t % 2]}"
                                   for t in range(3000)]
    ordered, shuffled = tmp_path / "ordered.csv", tmp_path / "shuffled.csv"
    ordered.write_text("\n".join(rows) + "\n")
    body = rows[1:]
    random.Random(1).shuffle(body)
    shuffled.write_text("\n".join(rows[:1] + body) + "\n")

    def config(stream, replay, options=""):
        return RunConfig(streams=[f"s={stream}{options}"], models=["no-change"], delay="100s",
                         out=str(tmp_path / f"{stream.stem}-{replay}{len(options)}"),
                         runner="direct", replay=replay, chunk_size=10, quiet=True)

    assert plan(config(ordered, "auto")).replay == "per-stream"
    assert plan(config(shuffled, "auto")).replay == "per-stream"
    summaries = [run(config(stream, replay)).drop(columns="run_id")
                 for stream, replay in ((ordered, "auto"), (shuffled, "auto"),
                                        (shuffled, "grouped"))]
    pd.testing.assert_frame_equal(summaries[0], summaries[1])  # the same events, in time order
    pd.testing.assert_frame_equal(summaries[0], summaries[2])
    # In the file's order, the rows are read as they are: the grouped replay sorts them.
    assert plan(config(shuffled, "auto", '{"order": "input"}')).replay == "grouped"
    with pytest.raises(InputError, match=r"stream 's': event at t=.*passed t=.*use --replay "
                                         r"grouped"):
        run(config(shuffled, "per-stream", '{"order": "input"}'))


def test_tables_in_time_order_are_told_from_their_times_alone(tmp_path, monkeypatch):
    """A time column (Parquet, CSV, JSON Lines), or row numbers, tell a table's order without
    building its events (numbers and datetimes in one CSV column are read as the whole read
    takes them), an event log's too, and an instance table's with its label table's; what
    they cannot tell the stream is read for."""
    rng = random.Random(2)
    times = sorted(rng.choice([0.0, 1.5, 3.0]) + 3 * i for i in range(200))
    frame = pd.DataFrame({"time": times, "f": [rng.random() for _ in times],
                          "label": [rng.choice("ab") for _ in times]})
    tables = {"ordered.parquet": frame, "ties.parquet": frame.assign(time=frame["time"] // 30),
              "shuffled.parquet": frame.sample(frac=1.0, random_state=1),
              "numbered.parquet": frame.drop(columns="time").sample(frac=1.0, random_state=1)}
    for name, table in tables.items():
        table.to_parquet(tmp_path / name, index=False)
    dated = frame.assign(time=pd.Timestamp("2026-11-01") + pd.to_timedelta(frame["time"], "s"))
    csvs = {"ordered.csv": frame, "shuffled.csv": tables["shuffled.parquet"], "dated.csv": dated,
            "mixed.csv": frame.assign(time=frame["time"].where(frame.index < 150, dated["time"])),
            "log.csv": _event_log(frame, 40.0), "late-label-log.csv": _event_log(frame, 40.0, 7),
            "labels.csv": _event_log(frame, 40.0).query("kind == 'label'")[["time", "label"]]
            .assign(id=lambda f: f.index), "late-labels.csv": _event_log(frame, 40.0, 7)
            .query("kind == 'label'")[["time", "label"]].assign(id=lambda f: f.index)}
    for name, table in csvs.items():
        table.to_csv(tmp_path / name, index=False)
    tables["shuffled.parquet"].to_json(tmp_path / "shuffled.jsonl", orient="records", lines=True)
    frame.assign(id=frame.index).drop(columns="label").to_parquet(tmp_path / "instances.parquet")
    streams = {name: str(tmp_path / name) for name in [*tables, *csvs, "shuffled.jsonl"]
               if "labels" not in name}
    for name in ("labels.csv", "late-labels.csv"):
        streams[f"instances+{name}"] = \
            f'{tmp_path / "instances.parquet"}{{"labels": "{tmp_path / name}"}}'
    delay = DelaySpec.parse("random:0s:40s:3")
    told = {name: rows_in_time_order(StreamSpec.parse(stream)) for name, stream in streams.items()}
    assert told == {"ordered.parquet": True, "ties.parquet": True, "shuffled.parquet": False,
                    "numbered.parquet": True, "ordered.csv": True, "shuffled.csv": False,
                    "dated.csv": True, "mixed.csv": True, "log.csv": True,
                    "late-label-log.csv": False, "shuffled.jsonl": False,
                    "instances+labels.csv": True, "instances+late-labels.csv": False}
    # A table out of time order is sorted as it is read: its events come in time order (each
    # stream read whole, as for any other source, a batch of 5 events at a time).
    for delayed in (delay, DelaySpec.parse("random:1:40:3")):
        with monkeypatch.context() as m:
            m.setattr(per_key, "read_in_time_order", lambda spec: False)
            read_whole = {name: in_time_order(StreamSpec.parse(stream), delayed, batch_size=5)
                          for name, stream in streams.items()}
        assert read_whole == dict.fromkeys(streams, True)
    # In the file's order (`{"order": "input"}`), a table is read as it is.
    for name, stream in streams.items():
        spec = StreamSpec.parse(stream)
        spec = dataclasses.replace(spec, options={**spec.options, "order": "input"})
        assert in_time_order(spec, delay, batch_size=5) == told[name], name
    # Told without reading the stream's events: the check is all there is. An ARFF file's
    # rows are numbered (read whole only by the replay), a delayed ARFF file is read.
    monkeypatch.setattr(per_key, "stream_items", None)
    for name in streams:
        assert in_time_order(StreamSpec.parse(streams[name]), delay)
    assert in_time_order(StreamSpec.parse(data("small.arff")), delay)
    assert not rows_in_time_order(StreamSpec.parse(data("delayed.arff") + '{"delayed": true}'))


def _event_log(frame: pd.DataFrame, delay: float, late: int | None = None) -> pd.DataFrame:
    """`frame`'s rows as an event log in time order (ids: row numbers), each label `delay`
    after its instance; `late`: that row's label written last (a log out of order)."""
    instances = frame.assign(id=frame.index, kind="instance", label=None)
    labels = frame[["time", "label"]].assign(id=frame.index, kind="label",
                                             time=frame["time"] + delay)
    log = pd.concat([instances, labels]).sort_values("time", kind="stable")
    if late is not None:
        moved = (log["kind"] == "label") & (log["id"] == late)
        log = pd.concat([log[~moved], log[moved]])
    return log


def test_streaming_watermark_drains_step_by_step():
    """TestStream: chunks arrive with the watermark advancing; each timer firing drains only
    what the watermark has passed, and the records equal one drain over the whole stream."""
    events, _ = read('synth:SEA{"n": 400, "seed": 9}', delay="30")
    key = ("sea", "gaussian-nb")
    models = {"gaussian-nb": ModelSpec.parse("gaussian-nb")}
    expected = ReplayEngine(models["gaussian-nb"], "sea").drain(events)

    stream = BeamTestStream()
    for start in range(0, 430, 50):
        chunk = [e for e in events if start <= e[0] < start + 50]
        if chunk:
            stream = stream.add_elements(
                [TimestampedValue((key, chunk), min(e[0] for e in chunk))])
        stream = stream.advance_watermark_to(start + 50)
    stream = stream.advance_watermark_to_infinity()

    options = pipeline_options("bundle", ["--streaming"])
    with beam.Pipeline(runner=make_runner("bundle"), options=options) as p:
        out = (p | stream.with_output_types(KEYED_CHUNKS)
               | StatefulReplay(EngineFactory(models, {"sea": None},
                                              {"gaussian-nb": "classification"}),
                                batch_size=10_000, bucket=25.0))
        outcomes = out.outcomes | "Flatten" >> beam.FlatMap(lambda kv: kv[1])
        assert_that(outcomes, equal_to(expected.outcomes), label="SameOutcomes")
        batches = out.outcomes | "Sizes" >> beam.Map(lambda kv: len(kv[1]))
        # One batch per firing that saw labels: many firings, not one drain at the end.
        assert_that(batches, _at_least_batches(10), label="ManyFirings")
        # Intermediate results: each firing's outcomes come out stamped with the firing's time
        # and hold only labels the watermark had passed by then.
        stamped = out.outcomes | "Stamps" >> beam.Map(
            lambda kv, ts=beam.DoFn.TimestampParam: (float(ts),
                                                     max(o.t_label for o in kv[1])))
        assert_that(stamped, _drained_before_firing, label="IntermediateResults")


def _drained_before_firing(pairs):
    fired = sorted({ts for ts, _ in pairs})
    assert len(fired) >= 10 and fired[0] <= 100, fired  # results long before the end
    assert all(t_label < ts for ts, t_label in pairs), pairs


def _at_least_batches(k):
    def check(sizes):
        assert len(sizes) >= k, sizes
    return check


def test_instance_and_label_tables_in_time_order_replay_per_stream(tmp_path):
    """The label table is merged in time with the instance table, so `auto` replays a log in
    time order per stream (holding what is pending), with the grouped replay's results: a bad
    row, a repeated id, an orphan label, a label earlier than its instance and labels at their
    instance's time included."""
    rng = random.Random(7)
    instances = [(i, 10.0 * i, rng.random(), rng.random()) for i in range(400)]
    labels = sorted((t + rng.choice([0.0, 5.0, 35.0, 120.0]), i, "ab"[x0 > x1])
                    for i, t, x0, x1 in instances if i % 9)
    labels += [(4000.0 + 1, 999, "a"),  # an orphan
               (instances[50][1] - 1, 50, "a")]  # earlier than its instance
    labels.sort()
    instances.insert(201, (3, 2005.0, 0.5, 0.5))  # id 3 again (after id 200 at t=2000)
    (tmp_path / "instances.csv").write_text("id,time,x0,x1\n" + "".join(
        f"{i},{t},{'oops' if i == 77 else x0},{x1}\n" for i, t, x0, x1 in instances))
    (tmp_path / "labels.csv").write_text("time,id,label\n" + "".join(
        f"{t},{i},{y}\n" for t, i, y in labels))
    stream = (f's={tmp_path / "instances.csv"}{{"labels": "{tmp_path / "labels.csv"}", '
              f'"classes": ["a", "b"]}}')
    config = RunConfig(streams=[stream], models=["no-change", "gaussian-nb"], quiet=True,
                       runner="direct", bins=4, repredict="every_k_labels:3", out="",
                       chunk_size=4)  # drains of 80 events: many, for 800 events
    assert plan(config).replay == "per-stream"
    results = {}
    for replay in ("auto", "grouped"):
        out = tmp_path / replay
        run(RunConfig(**{**config.__dict__, "replay": replay, "out": str(out)}))
        dead = sorted((out / "dead_letters.jsonl").read_text().splitlines())
        results[replay] = (*_outputs(out), dead)
    for got, expected in zip(results["auto"], results["grouped"]):
        if isinstance(got, pd.DataFrame):
            pd.testing.assert_frame_equal(got, expected)
        else:
            assert got == expected
    dead = [json.loads(line) for line in results["auto"][-1]]
    label_row = {i: k + 1 for k, (_, i, _) in enumerate(labels)}  # (ids 50 and 77: one label)
    not_pending = "label for id '{}', which is not pending (no instance had it, or its " \
        "instance was labelled already)"
    assert {(os.path.basename(d["file"]), d["row"], d["reason"].split(" at ")[0])
            for d in dead} == {
        ("instances.csv", 78, "value 'oops' is not a number"),
        ("instances.csv", 202, "duplicate instance id '3'"),
        ("labels.csv", labels.index((499.0, 50, "a")) + 1, "label"),
        # Its instance, the bad row, was set aside: so is the label, when it is read.
        ("labels.csv", label_row[77], "label of instance '77', which was set aside as a dead "
                                      "letter when it was read"),
        ("labels.csv", label_row[999], not_pending.format(999))}


def _messy_event_log(seed: int, n: int = 90) -> list[list]:
    """An event log's rows (kind, id, time, x1, x2, label), shuffled: times with many ties,
    labels at their instance's time and later, and mistakes: labels earlier than their
    instance, second labels, repeated instance ids, labels of no instance, updates of
    instances pending, labelled or never seen."""
    rng = random.Random(seed)
    rows = []
    for k in range(n):
        t = rng.randrange(25)
        x1, x2 = round(rng.gauss(0, 1), 3), round(rng.gauss(0, 1), 3)
        y = "a" if x1 + 0.5 * rng.gauss(0, 1) > 0 else "b"
        rows.append(["instance", f"i{k}", t, x1, x2, ""])
        r = rng.random()
        if r < 0.06:
            rows.append(["label", f"i{k}", t - rng.randint(1, 3), "", "", y])
        elif r > 0.1:
            d = rng.choice([0, 0, 1, 2, 5, 17])
            rows.append(["label", f"i{k}", t + d, "", "", y])
            if rng.random() < 0.06:
                rows.append(["label", f"i{k}", t + d + rng.randint(0, 3), "", "", "ab"[y == "a"]])
        if rng.random() < 0.05:
            rows.append(["instance", f"i{k}", t + rng.randint(0, 4), x2, x1, ""])
        if rng.random() < 0.05:
            rows.append(["label", f"nobody{k}", rng.randrange(25), "", "", "a"])
        if rng.random() < 0.15:
            rows.append(["update", f"i{k}", t + rng.randint(0, 6), round(rng.gauss(0, 1), 3),
                         x2, ""])
    rng.shuffle(rows)
    return rows


def _replayed_by_the_rules(rows: list[list]) -> dict:
    """docs/semantics.md's order written plainly, around river's GaussianNB: rows sorted by
    time (ties in file order); a repeated instance id, a label earlier than its instance and
    a second label are set aside as read; then events in (t, rank, seq) order, a label
    before the instances of its time unless it is its own instance's time; an update or a
    label for an id not pending is set aside by the replay."""
    from river import naive_bayes

    in_time = sorted(enumerate(rows), key=lambda seq_row: (seq_row[1][2], seq_row[0]))
    first_time = {}
    for _, (kind, key, t, *_) in in_time:
        if kind == "instance":
            first_time.setdefault(key, t)
    events, instances, labels, read_aside = [], set(), set(), 0
    for seq, (kind, key, t, x1, x2, y) in in_time:
        if kind == "instance" and key in instances or kind == "label" and (
                key in labels or t < first_time.get(key, t)):
            read_aside += 1
            continue
        (instances if kind == "instance" else labels if kind == "label" else set()).add(key)
        rank = 1 if kind != "label" else 2 if first_time.get(key) == t else 0
        events.append((t, rank, seq, kind, key, {"x1": x1, "x2": x2}, y))
    model, pending, initial, final, replay_aside = naive_bayes.GaussianNB(), {}, {}, {}, 0
    for *_, kind, key, x, y in sorted(events, key=lambda e: e[:3]):
        if kind == "instance":
            initial[key], pending[key] = model.predict_one(x), x
        elif key not in pending:
            replay_aside += 1
        elif kind == "update":
            pending[key] = x
        else:
            x = pending.pop(key)
            final[key] = model.predict_one(x)
            model.learn_one(x, y)
    return {"initial": {key: initial[key] for key in final}, "final": final,
            "read_aside": read_aside, "replay_aside": replay_aside, "pending": len(pending)}


@pytest.mark.parametrize("replay", ["grouped", "per-key", "per-stream", "stateful"])
def test_an_event_log_with_ties_and_mistakes_replays_as_a_plain_loop_of_the_rules(tmp_path,
                                                                                  replay):
    """Every replay of a shuffled event log with tied times, updates and every kind of
    mistake predicts (initial and final) and sets aside what the plain loop of the documented
    order does; oracle: `_replayed_by_the_rules`."""
    rows = _messy_event_log(4)
    kinds = [(kind, key.startswith("nobody")) for kind, key, *_ in rows]
    assert ("update", False) in kinds and ("label", True) in kinds  # (the mistakes are there)
    path = tmp_path / "log.csv"
    pd.DataFrame(rows, columns=["kind", "id", "time", "x1", "x2", "label"]).to_csv(path,
                                                                                  index=False)
    out = tmp_path / "out"
    run(RunConfig(streams=[f"s={path}"], models=["gaussian-nb"], repredict="none",
                  log_predictions="initial-final", out=str(out), runner="direct",
                  replay=replay, quiet=True))
    want = _replayed_by_the_rules(rows)
    logged = pd.read_parquet(out / "predictions.parquet")
    manifest = json.loads((out / "manifest.json").read_text())
    counts = manifest["counts"][0]
    for kind in ("initial", "final"):
        mine = logged[logged["kind"] == kind]
        got = {key: None if pd.isna(y) else y for key, y in zip(mine["id"], mine["y_pred"])}
        assert {key: got.get(key) for key in want[kind]} == want[kind]
    assert want["read_aside"] >= 3 and want["replay_aside"] >= 3
    assert manifest["streams"]["s"]["read"]["dead_letters"] == want["read_aside"]
    assert counts["dead_letters"] == want["replay_aside"]
    assert counts["pending_at_end"] == want["pending"]
    assert counts["labelled"] == len(want["final"])


@pytest.mark.parametrize("replay", ["auto", "grouped"])
def test_labelled_rows_with_tied_label_times_replay_as_a_plain_loop_of_the_rules(tmp_path,
                                                                                replay):
    """Shuffled labelled rows whose label_time ties with other rows' times and labels: sorted
    by time (ties in file order), a label due at t comes before the instances of t, but
    after its own instance at its own time, and labels due at one time in their rows' order;
    an empty or earlier label time is set aside. Oracle: a plain loop of those rules around
    river's GaussianNB."""
    from river import naive_bayes

    rng = random.Random(52)
    rows = []
    for k in range(60):
        t = rng.randrange(5)
        x1, x2 = round(rng.gauss(0, 1), 3), round(rng.gauss(0, 1), 3)
        label_time = rng.choice(["", t - 1, t, t, t + 1, t + 3])
        rows.append([f"r{k}", t, x1, x2, "a" if x1 + rng.gauss(0, 0.5) > 0 else "b",
                     label_time])
    rng.shuffle(rows)
    path = tmp_path / "rows.csv"
    pd.DataFrame(rows, columns=["id", "time", "x1", "x2", "label", "label_time"]).to_csv(
        path, index=False)
    out = tmp_path / "out"
    run(RunConfig(streams=[f"s={path}"], models=["gaussian-nb"], repredict="none",
                  log_predictions="initial-final", out=str(out), runner="direct",
                  replay=replay, quiet=True))

    events, set_aside = [], 0
    in_time = sorted(range(len(rows)), key=lambda s: (rows[s][1], s))
    for i, s in enumerate(in_time):
        key, t, x1, x2, y, label_time = rows[s]
        events.append((t, 1 + i, i, key, {"x1": x1, "x2": x2}, None))
        if label_time == "" or label_time < t:
            set_aside += 1
        else:
            events.append((label_time, 1 + i + 0.5 if label_time == t else 0, i, key, None, y))
    model, pending, initial, final = naive_bayes.GaussianNB(), {}, {}, {}
    for *_, key, x, y in sorted(events, key=lambda e: e[:3]):
        if x is not None:
            initial[key], pending[key] = model.predict_one(x), x
        else:
            x = pending.pop(key)
            final[key] = model.predict_one(x)
            model.learn_one(x, y)

    logged = pd.read_parquet(out / "predictions.parquet")
    for kind, want in (("initial", {key: initial[key] for key in final}), ("final", final)):
        mine = logged[logged["kind"] == kind]
        got = {key: None if pd.isna(y) else y for key, y in zip(mine["id"], mine["y_pred"])}
        assert {key: got.get(key) for key in want} == want
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["streams"]["s"]["read"]["dead_letters"] == set_aside > 0
    assert manifest["counts"][0]["pending_at_end"] == len(pending) == set_aside
