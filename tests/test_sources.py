"""Reading streams: logs in three formats, two table shapes, ARFF, river streams, delays."""

import itertools
import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from river import datasets

from pipelines.config import RunConfig
from pipelines.plan import plan
from tests.helpers import brief, data, read, read_csv
from transforms.errors import InputError
from transforms.streams.delays import DelaySpec
from transforms.streams.sources import StreamSpec

T0 = pd.Timestamp("2026-01-01T00:00:00Z").value / 1e9

EVENT_LOG = [
    (T0 + 0, "instance", "a", None), (T0 + 10, "label", "a", "yes"),
    (T0 + 10, "instance", "b", None), (T0 + 20, "instance", "c", None),
    (T0 + 25, "update", "c", None), (T0 + 30, "label", "b", "no"),
    (T0 + 40, "label", "c", "yes"), (T0 + 50, "instance", "d", None)]


def _convert(tmp_path, name, fmt):
    df = read_csv(data(name))
    path = tmp_path / f"{name.split('.')[0]}.{fmt}"
    if fmt == "jsonl":
        df.to_json(path, orient="records", lines=True)
    else:
        df.to_parquet(path)
    return str(path)


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_event_log_with_iso_times(tmp_path, fmt):
    path = data("events.csv") if fmt == "csv" else _convert(tmp_path, "events.csv", fmt)
    events, dead = read(path)
    assert dead == []
    assert brief(events) == EVENT_LOG
    by_kind = {(e[3], e[4]): e for e in events}
    assert by_kind[("instance", "a")][5] == {"f1": 1.0, "f2": 0.5}
    assert by_kind[("update", "c")][5] == {"f1": 3.5, "f2": 2.0}
    assert by_kind[("label", "c")][5] == {"f1": 3.6, "f2": 2.1}  # a label carrying features
    assert by_kind[("label", "a")][5] is None


@pytest.mark.parametrize("suffix", [".gz", ".bz2"])
def test_compressed_tables_are_read_as_their_content(tmp_path, suffix):
    """events.csv.gz, a folder of .jsonl.bz2 partitions, and a .csv.gz through a non-local
    filesystem (Beam decompresses it): the same events as the plain files, named alike."""
    import bz2
    import gzip

    from tests.helpers import RemoteFileSystem  # noqa: F401 (registers remote://)

    pack = gzip.compress if suffix == ".gz" else bz2.compress
    plain = open(data("events.csv"), "rb").read()
    packed = tmp_path / f"events.csv{suffix}"
    packed.write_bytes(pack(plain))
    folder = tmp_path / "log" / "date=2026-01-01"
    folder.mkdir(parents=True)
    frame = read_csv(data("events.csv"))
    (folder / f"part-0.jsonl{suffix}").write_bytes(pack(frame.to_json(
        orient="records", lines=True).encode()))
    for source in (str(packed), str(tmp_path / "log"), f"remote://{packed}"):
        assert StreamSpec.parse(source).name in ("events", "log")
        events, dead = read(source)
        assert dead == [] and brief(events) == EVENT_LOG


def test_an_arff_file_on_another_filesystem_is_refused_as_such():
    """ARFF is read with Python's open, from this machine: an existing .arff behind a non-local
    filesystem (as gs:// would be) was 'no such file or folder'."""
    from tests.helpers import RemoteFileSystem  # noqa: F401 (registers remote://)

    remote = f"remote://{data('small.arff')}"
    for source in (remote, f'{remote}{{"format": "arff"}}'):
        with pytest.raises(InputError, match=r"^stream small: an ARFF file is read from this "
                                              r"machine, not from another filesystem \(remote://.*"
                                              r"small.arff\); copy it here, or write it as CSV or "
                                              r"Parquet, which are read from gs:// and s3:// too$"):
            StreamSpec.parse(source).check()
    StreamSpec.parse(data("small.arff")).check()

def test_a_tsv_file_is_read_as_tab_separated(tmp_path):
    """events.tsv (and events.tsv.gz) hold the events of events.csv, tabs for commas."""
    import gzip

    frame = read_csv(data("events.csv"))
    frame.to_csv(tmp_path / "events.tsv", sep="\t", index=False)
    (tmp_path / "z.tsv.gz").write_bytes(gzip.compress(frame.to_csv(sep="\t", index=False)
                                                      .encode()))
    for path in ("events.tsv", "z.tsv.gz"):
        events, dead = read(str(tmp_path / path))
        assert dead == [] and brief(events) == EVENT_LOG
    assert StreamSpec.parse(f'{tmp_path / "events.tsv"}{{"sep": ","}}').options["sep"] == ","


def test_an_event_logs_kinds_are_read_whatever_their_case(tmp_path):
    """A service that logs `Instance`, ` LABEL` or `Update` logs our three kinds."""
    spelled = {"instance": "Instance", "label": " LABEL", "update": "Update"}
    rows = data("events.csv")
    text = open(rows).read().splitlines()
    path = tmp_path / "events.csv"
    path.write_text("\n".join([text[0]] + [spelled[line.split(",")[0]] + line[
        line.index(","):] for line in text[1:]]) + "\n")
    events, dead = read(str(path))
    assert dead == [] and brief(events) == EVENT_LOG


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_instance_table_plus_label_table(tmp_path, fmt):
    if fmt == "csv":
        inst, lab = data("instances.csv"), data("labels.csv")
    else:
        inst, lab = _convert(tmp_path, "instances.csv", fmt), _convert(tmp_path, "labels.csv",
                                                                        fmt)
    events, dead = read(f'{inst}{{"labels": "{lab}"}}')
    assert dead == []
    assert brief(events) == [(0, "instance", "1", None), (1, "instance", "2", None),
                             (2, "label", "1", 0), (2, "label", "2", 1),
                             (2, "instance", "3", None), (3, "instance", "4", None),
                             (5, "label", "3", 0)]


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_a_label_tables_label_time_column_is_its_time_unless_it_has_the_instances(tmp_path,
                                                                                  fmt):
    """A label table whose time column is `label_time` (the option's name) is read so without
    the option; one that also has a column named as the instances' time keeps that one."""
    pd.DataFrame({"id": ["1", "2"], "time": [0, 1], "x": [0.5, 1.5]}).to_csv(
        tmp_path / "inst.csv", index=False)
    labels = pd.DataFrame({"id": ["1", "2"], "label_time": [4, 6], "label": ["a", "b"]})
    path = tmp_path / f"lab.{fmt}"
    def write(frame):
        (frame.to_csv if fmt == "csv" else frame.to_parquet)(path, index=False)

    write(labels)
    text = f'{tmp_path / "inst.csv"}{{"labels": "{path}"}}'
    spec = StreamSpec.parse(text)
    with pytest.raises(InputError, match=r"column 'time' \(option 'label_time'\) not found"):
        spec.check()
    assert plan(RunConfig(streams=[text], models=["majority"], out=str(tmp_path / "o"))
                ).streams[0].label_table_time == "label_time"  # (as a run reads it)
    spec = spec.with_label_table_time()
    spec.check()
    events = sorted(e for e in spec.events(DelaySpec.parse("0")) if not isinstance(e, dict))
    assert brief(events) == [(0, "instance", "1", None), (1, "instance", "2", None),
                             (4, "label", "1", "a"), (6, "label", "2", "b")]
    write(labels.assign(time=[2, 3]))
    spec = StreamSpec.parse(text)
    assert spec.with_label_table_time() == spec and spec.label_table_time == "time"


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
def test_integer_ids_beyond_a_floats_precision_stay_exact_beside_a_missing_one(tmp_path,
                                                                                fmt):
    """Ids 2**60 + i with one missing: pandas would make the column floats, 2**60 + 1 would be
    2**60 (every id one, a duplicate), and no label would meet its instance."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    ids = [2 ** 60 + i for i in range(4)]
    rows = [{"id": i, "time": t, "x": 0.5} for t, i in enumerate(ids)] + [
        {"id": None, "time": 4, "x": 0.5}]
    path = tmp_path / f"inst.{fmt}"
    if fmt == "parquet":
        pq.write_table(pa.Table.from_pylist(rows), path)
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    pq.write_table(pa.table({"id": pa.array(ids, pa.int64()), "time": [9, 9, 9, 9],
                             "label": ["a", "b", "a", "b"]}), tmp_path / "lab.parquet")
    events, dead = read(f'{path}{{"labels": "{tmp_path / "lab.parquet"}"}}')
    assert [e[4] for e in events if e[3] == "instance"] == [str(i) for i in ids]
    assert [e[4] for e in events if e[3] == "label"] == [str(i) for i in ids]
    assert [(d["row"], d["field"]) for d in dead] == [(5, "id")]


@pytest.mark.parametrize("label_fmt", ["jsonl", "parquet"])
def test_ids_are_text_so_tables_of_any_format_meet(tmp_path, label_fmt):
    """A CSV's ids 000017 keep their zeros and meet a JSON Lines table's "000017"; its ids 17
    meet a Parquet table's integers 17 (and a CSV id column with a gap, 18.0, is 18)."""
    for ids, written in ((["000017", "000018"], ["000017", "000018"]), (["17", ""], [17, 18])):
        (tmp_path / "inst.csv").write_text(
            "id,time,x\n" + "".join(f"{i},{t},1.5\n" for t, i in enumerate(ids)) + "18,2,1.0\n")
        labels = pd.DataFrame({"id": written, "time": [5, 6], "label": ["a", "b"]})
        path = tmp_path / f"lab.{label_fmt}"
        if label_fmt == "jsonl":
            labels.to_json(path, orient="records", lines=True)
        else:
            labels.to_parquet(path)
        events, dead = read(f'{tmp_path / "inst.csv"}{{"labels": "{path}"}}')
        named = [e[4] for e in events if e[3] == "label"]
        assert named == [str(i) for i in written] and not any(
            d["reason"].startswith("label for id") for d in dead)


@pytest.mark.parametrize("layout", ["numbers, then text", "text, then numbers", "json lines"])
def test_a_label_written_as_a_number_in_one_place_and_as_text_in_another_is_one_class(
        tmp_path, layout):
    """Daily partitions whose label column is integers one day and text the next (or a JSON
    Lines file whose lines write 1 and "1") name two classes, not four: each label is written
    as the stream's first one. Oracle: river's progressive_val_score, delay 10, on the rows
    with integer labels."""
    from river import evaluate, metrics, naive_bayes

    from pipelines.job import run

    rows = list(itertools.islice(datasets.synth.Agrawal(seed=3), 600))
    frame = pd.DataFrame([x for x, _ in rows])[["salary", "age", "loan"]]
    frame.insert(0, "time", range(len(rows)))
    frame["label"] = [y for _, y in rows]
    text_first = layout == "text, then numbers"
    days = [frame[:300].copy(), frame[300:].copy()]
    days[0 if text_first else 1]["label"] = days[0 if text_first else 1]["label"].astype(str)
    if layout == "json lines":
        path = tmp_path / "mixed.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for day in days
                                for r in day.to_dict("records")))
    else:
        path = tmp_path / "partitions"
        for day, part in enumerate(days, 1):
            (path / f"day={day}").mkdir(parents=True)
            part.to_parquet(path / f"day={day}" / "part-0.parquet")
    run(RunConfig(streams=[f"s={path}"], models=["gaussian-nb"], delay="10", repredict="none",
                  out=str(tmp_path / "out"), quiet=True, runner="direct"))
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    classes = dict.fromkeys(y for _, y in rows)  # (in order of first appearance)
    assert manifest["classes"] == {"s / gaussian-nb": [str(y) if text_first else y
                                                        for y in classes]}
    summary = read_csv(tmp_path / "out" / "summary.csv")
    accuracy = summary.query("category == 'initial' and metric == 'accuracy' and "
                             "window == 'cumulative'")["value"].item()
    river = metrics.Accuracy()
    evaluate.progressive_val_score([({k: x[k] for k in ("salary", "age", "loan")}, y)
                                    for x, y in rows], naive_bayes.GaussianNB(), river, delay=10)
    assert accuracy == river.get()


@pytest.mark.parametrize("positive", [1, 1.0])
def test_a_label_column_of_integers_with_gaps_names_its_classes_as_written(tmp_path, capsys,
                                                                           positive):
    """A CSV label column of 1 and 0 with empty cells (labels not known yet) is read as
    floats: its classes were named 1.0 and 0.0 and `{"positive": 1}` named none of them. The
    classes are 1 and 0, as written, and either option names the positive class. Oracle:
    scikit-learn's precision of class 1 and accuracy over the logged initial predictions and
    the file's labels."""
    from sklearn.metrics import accuracy_score, precision_score

    from pipelines.job import run

    rows = list(itertools.islice(datasets.synth.SEA(seed=4), 400))
    frame = pd.DataFrame([x for x, _ in rows]).rename(columns=str)
    frame["label"] = [int(y) for _, y in rows]
    frame["label"] = frame["label"].where(frame.index % 37 != 5).astype("Int64")
    frame.to_csv(tmp_path / "gaps.csv", index=False)
    assert ",1.0\n" not in (tmp_path / "gaps.csv").read_text() and ",\n" in \
        (tmp_path / "gaps.csv").read_text()
    run(RunConfig(streams=[f'{tmp_path / "gaps.csv"}{{"positive": {positive}}}'],
                  models=["gaussian-nb"], delay="10", repredict="none", quiet=False,
                  out=str(tmp_path / "out"), runner="direct"))
    assert "is none of its classes" not in capsys.readouterr().out
    summary = read_csv(tmp_path / "out" / "summary.csv", dtype={"class": str,
                                                                   "predicted": str})
    cells = summary.query("metric == 'confusion'")
    assert set(cells["class"]) == set(cells["predicted"]) == {"0", "1"}
    initial = summary.query("category == 'initial' and window == 'cumulative'")
    precision = initial.query("metric == 'precision'").set_index("class")["value"]
    assert sorted(precision.index) == ["0", "1"]
    log = pd.read_parquet(tmp_path / "out" / "predictions.parquet")
    log = log[(log["kind"] == "initial") & log["y_pred"].notna()]
    truth = frame["label"].astype(float).set_axis(frame.index.astype(str)).reindex(
        log["id"]).to_numpy()
    scored = ~np.isnan(truth)
    truth, predicted = truth[scored].astype(int).astype(str), log["y_pred"][scored]
    assert precision["1"] == pytest.approx(
        precision_score(truth, predicted, pos_label="1"), abs=1e-12)
    assert initial.query("metric == 'accuracy'")["value"].item() == pytest.approx(
        accuracy_score(truth, predicted), abs=1e-12)


def test_labelled_rows_with_a_duration_column(tmp_path):
    events, dead = read(data("rows.csv") + '{"delay": "column:duration"}')
    assert dead == []
    assert brief(events) == [(0, "instance", 0, None), (1, "instance", 1, None),
                             (1.5, "label", 1, "b"), (2, "instance", 2, None),
                             (2.5, "label", 0, "a"), (3, "instance", 3, None),
                             (4, "label", 3, "b"), (12, "label", 2, "a")]
    assert "duration" not in events[0][5]  # the delay column is not a feature
    # The same durations in milliseconds: `column:NAME:ms` gives the same label times.
    frame = read_csv(data("rows.csv"))
    frame["duration"] *= 1000
    frame.to_csv(tmp_path / "ms.csv", index=False)
    in_ms, _ = read(str(tmp_path / "ms.csv") + '{"delay": "column:duration:ms"}')
    assert brief(in_ms) == brief(events)
    # In hours (`column:NAME:h`): each label 3 600 × the column's value after its instance.
    in_h, _ = read(data("rows.csv") + '{"delay": "column:duration:h"}')
    assert sorted(e[0] for e in in_h if e[3] == "label") == [
        1 + 0.5 * 3600, 3 + 1 * 3600, 0 + 2.5 * 3600, 2 + 10 * 3600]
    # Durations written as text (as pandas writes a timedelta column, ISO 8601, --delay's
    # own) or as a Parquet duration column: that much time, whatever the column's unit.
    seconds = frame["duration"] / 1000
    texts = ["0 days 00:00:02.500000", "PT0.5S", "10s", "00:00:01"]
    assert pd.to_timedelta(texts).total_seconds().tolist() == seconds.tolist()
    frame["duration"] = texts
    frame.to_csv(tmp_path / "texts.csv", index=False)
    frame.assign(duration=pd.to_timedelta(seconds, unit="s")).to_parquet(
        tmp_path / "typed.parquet")
    for path, unit in (("texts.csv", ""), ("texts.csv", ":ms"), ("typed.parquet", ":min")):
        got, dead = read(f'{tmp_path / path}{{"delay": "column:duration{unit}"}}')
        assert dead == [] and brief(got) == brief(events), (path, unit)
    # A column of events has no durations: each is a dead letter naming it.
    _, dead = read(f'{tmp_path / "texts.csv"}{{"delay": "column:duration:events"}}')
    assert [d["reason"] for d in dead][:1] == [
        "delay '0 days 00:00:02.500000' is a duration, where the delay column counts events"]


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_a_column_named_as_a_role_is_a_feature_where_its_option_is_null(tmp_path, fmt):
    """A table whose `time`, `id` or `kind` column is a feature (a chick's age in days, a
    product's kind): `{"time": null}` and the like name no such column, so it is a feature
    as any other, and the rows' order their times and ids, as for a table without them. A
    stream with a label table cannot go without its instances' ids or times: one line."""
    frame = pd.DataFrame({"time": [5.0, 0.0, 3.0], "id": [7.0, 7.0, 8.0],
                          "kind": [1.0, 2.0, 3.0], "label": ["a", "b", "a"]})
    path = tmp_path / f"rows.{fmt}"
    if fmt == "csv":
        frame.to_csv(path, index=False)
    elif fmt == "jsonl":
        frame.to_json(path, orient="records", lines=True)
    else:
        frame.to_parquet(path)
    spec = f'{path}{{"time": null, "id": null, "kind": null}}'
    StreamSpec.parse(spec).check()
    events, dead = read(spec, delay="1")
    assert dead == []
    assert brief(events) == [(0, "instance", 0, None), (1, "label", 0, "a"),
                             (1, "instance", 1, None), (2, "label", 1, "b"),
                             (2, "instance", 2, None), (2, "label", 2, "a")]
    assert [e[5] for e in events if e[3] == "instance"] == \
        frame.drop(columns="label").to_dict("records")
    for options, role in (('{"id": null}', "id"), ('{"time": null, "label_id": "id"}', "time")):
        split = f'{path}{{"labels": "{path}", {options[1:]}'
        with pytest.raises(InputError, match=f"^{path}: the stream option {role} is null, but "
                                             f"a stream with a label table needs its {role} "
                                             f"column; name that column$"):
            StreamSpec.parse(split).check()


def test_constant_delay_in_events_and_in_seconds():
    events, _ = read(data("rows.csv"), delay="2")
    # Label of row i arrives just before row i+2; the rest arrive at the end, in order.
    expected = [(0, "instance", 0), (1, "instance", 1), (2, "label", 0), (2, "instance", 2),
                (3, "label", 1), (3, "instance", 3), (3, "label", 2), (3, "label", 3)]
    assert [(e[0], e[3], e[4]) for e in events] == expected
    assert [(e[0], e[3], e[4]) for e in sorted(events)] == expected  # (the replay's order)
    events, _ = read(data("rows.csv"), delay="1.5s")
    assert [(e[0], e[4]) for e in events if e[3] == "label"] == [
        (1.5, 0), (2.5, 1), (3.5, 2), (4.5, 3)]
    # Delay 0 in seconds: the label comes right after its own instance, never before it.
    events, _ = read(data("rows.csv"), delay="0s")
    assert [(e[3], e[4]) for e in events][:3] == [("instance", 0), ("label", 0), ("instance", 1)]


def test_rows_that_share_a_time_keep_their_order_around_their_labels(tmp_path):
    """Rows whose times are whole seconds (or days) share them. A delay of k events reveals
    the label of row i just before row i + k's instance, whatever their times (as river's
    `progressive_val_score(delay=k)` does), and a delay of 0 s just after its own instance,
    before the next row's (river's, with the moment and a delay of 0). The labels used to
    come before every instance of their time, or after all of them where their own instance
    shared it, k events apart on neither side. Oracle: the rule, event by event, in the
    replay's order (sorted)."""
    times = [0, 0, 0, 1, 1, 2, 2, 2, 2, 3, 5, 5]
    n = len(times)
    path = tmp_path / "seconds.csv"
    path.write_text("time,x,label\n" + "".join(f"{t},{i / 10},{'ab'[i % 2]}\n"
                                               for i, t in enumerate(times)))
    for k in (1, 2, 3):
        events, dead = read(str(path), delay=str(k))
        expected = []
        for i in range(n):
            expected += [("label", i - k)] if i >= k else []
            expected.append(("instance", i))
        expected += [("label", i) for i in range(n - k, n)]  # (due after the last row)
        assert dead == [] and [(e[3], e[4]) for e in sorted(events)] == expected, k
        for e in events:  # each label at the time of the row it is due at
            assert e[3] == "instance" or e[0] == times[min(e[4] + k, n - 1)]
    events, _ = read(str(path), delay="0s")
    assert [(e[3], e[4]) for e in sorted(events)] == [
        (kind, i) for i in range(n) for kind in ("instance", "label")]


def test_a_delay_in_events_counts_instances_in_time_order_in_a_file_out_of_order(tmp_path):
    """A table not in time order is replayed in time order, and a delay of k events means k
    instances later in that order, not k rows later in the file (the label of the row at 5 s
    was due at the next row of the file, at 3 s, before its own instance: an orphan, its
    instance never labelled). Oracle: the same rows written in time order."""
    rng = np.random.default_rng(4)
    times = rng.integers(0, 40, size=60)
    frame = pd.DataFrame({"id": [f"r{i}" for i in range(60)], "time": times,
                          "x": rng.normal(size=60), "label": rng.choice(["a", "b"], 60)})
    frame.to_csv(tmp_path / "shuffled.csv", index=False)
    frame.sort_values("time", kind="stable").to_csv(tmp_path / "sorted.csv", index=False)
    for delay in ("1", "3", "random:1:5:2"):
        shuffled, dead = read(str(tmp_path / "shuffled.csv"), delay=delay)
        in_order, _ = read(str(tmp_path / "sorted.csv"), delay=delay)
        assert dead == [] and [e[:2] + e[3:] for e in shuffled] == \
            [e[:2] + e[3:] for e in in_order], delay


def test_random_delay_is_seeded_and_bounded():
    spec = 'synth:SEA{"n": 200, "seed": 5}'
    a, _ = read(spec, delay="random:3:9:7")
    b, _ = read(spec, delay="random:3:9:7")
    c, _ = read(spec, delay="random:3:9:8")
    assert a == b and a != c
    arrival = {e[4]: e[0] for e in a if e[3] == "instance"}
    lags = [e[0] - arrival[e[4]] for e in a if e[3] == "label" and e[0] < 199]
    assert min(lags) >= 3 and max(lags) <= 9 and len(set(lags)) > 3


def test_arff_declares_classes_in_header_order():

    spec = StreamSpec.parse(data("small.arff"))
    assert spec.declared_classes() == ["yes", "no"]
    events, dead = read(data("small.arff"), delay="1")
    assert dead == []
    instances = [e for e in events if e[3] == "instance"]
    assert instances[0][5] == {"x1": 1.0, "colour": "red"}
    assert instances[2][5] == {"colour": "red"}  # ? is a missing value
    assert [e[6] for e in events if e[3] == "label"] == ["no", "yes", "yes", "no"]


def test_an_arff_numeric_class_is_a_regression_target(tmp_path):
    """MOA's regression files have a numeric class attribute: its labels are numbers, for
    the check of models against labels as for the replay (a regressor runs on it, a classifier
    is refused), and a segment column's first values are typed as the replay types them."""
    path = tmp_path / "walk.arff"
    path.write_text("@relation w\n@attribute x numeric\n@attribute zone {a,b}\n"
                    "@attribute target numeric\n@data\n"
                    + "".join(f"{i / 7:.3f},{'ab'[i % 2]},{i * 1.5 + 0.25}\n" for i in range(40)))
    spec = StreamSpec.parse(str(path))
    assert spec.label_kind() == "numbers" and spec.declared_classes() is None
    assert spec.first_values(rows=2) == [0.25, 1.75]
    assert spec.first_values("x", rows=2) == [0.0, 0.143]
    assert spec.first_values("zone", rows=2) == ["a", "b"]
    labels = [e[6] for e in read(str(path), delay="1")[0] if e[3] == "label"]
    assert labels[:2] == [0.25, 1.75]
    plan(RunConfig(streams=[str(path)], models=["mean-regressor"], out=str(tmp_path / "o"),
                   runner="direct"))
    with pytest.raises(Exception, match="is a classifier, but stream walk's labels are numbers"):
        plan(RunConfig(streams=[str(path)], models=["gaussian-nb"], out=str(tmp_path / "o"),
                       runner="direct"))


def test_an_arff_date_is_a_number_and_features_choose_attributes(tmp_path):
    path = tmp_path / "d.arff"
    path.write_text('@relation r\n@attribute when date "yyyy-MM-dd HH:mm:ss"\n'
                    "@attribute x numeric\n@attribute class {a,b}\n@data\n"
                    '"2026-01-01 10:00:00",1.0,a\n"soon",2.0,b\n?,3.0,a\n')
    events, dead = read(str(path), delay="1")
    # Seconds since the epoch, as Weka keeps a date (in ms) for a model to learn from.
    assert [e[5] for e in events if e[3] == "instance"] == [
        {"when": 1767261600.0, "x": 1.0}, {"x": 3.0}]
    assert [(d["row"], d["field"], d["reason"]) for d in dead] == [
        (7, "when", "'soon' is not a date written as '%Y-%m-%d %H:%M:%S' (its attribute's "
                    "format), nor an ISO date")]
    events, _ = read(f'{path}{{"features": ["x"]}}', delay="1")
    assert [e[5] for e in events if e[3] == "instance"] == [{"x": 1.0}, {"x": 2.0}, {"x": 3.0}]
    # A table's column options name nothing in an ARFF file: one line, not ignored.
    for options, message in (('{"label": "class"}', "leave out label"),
                             ('{"features": ["y"]}', r"feature attribute\(s\) \['y'\] not")):
        with pytest.raises(InputError, match=message):
            StreamSpec.parse(f"{path}{options}").check()


def test_an_arff_attribute_gives_each_rows_delay_and_is_no_feature(tmp_path):
    """`--delay column:NAME` on an ARFF file reads each row's delay from that attribute, as
    from a table's column (it was read as missing on every row: every label a dead letter);
    the attribute is no feature, a `?` or a value no delay sets only the label aside, and an
    attribute the file lacks stops the run naming those it has."""
    path = tmp_path / "w.arff"
    path.write_text("@relation r\n@attribute x numeric\n@attribute wait numeric\n"
                    "@attribute how string\n@attribute class {no,yes}\n@data\n"
                    "1.0,2.5,'5s',yes\n2.0,?,'1s',no\n3.0,-1,x,yes\n4.0,abc,'2s',no\n")
    events, dead = read(str(path), delay="column:wait")
    # Rows arrive one a second from 0; a label comes its row's wait later (seconds).
    assert brief(events) == [(0.0, "instance", 0, None), (1.0, "instance", 1, None),
                             (2.0, "instance", 2, None), (2.5, "label", 0, "yes"),
                             (3.0, "instance", 3, None)]
    assert [e[5] for e in events if e[3] == "instance"][0] == {"x": 1.0, "how": "5s"}
    assert [(d["row"], d["field"], d["reason"]) for d in dead] == [
        (8, "wait", "delay is empty"), (9, "wait", "delay -1.0 is not a non-negative number"),
        (10, "wait", "delay 'abc' is neither a non-negative number nor a duration (5min, "
                     "PT5M, 00:05:00)")]
    # Text is read as durations; `wait` is then a feature, and its 'abc' sets its row aside.
    events, dead = read(str(path), delay="column:how")
    assert [(e[0], e[4]) for e in events if e[3] == "label"] == [(2.0, 1), (5.0, 0)]
    assert [(d["row"], d["field"]) for d in dead] == [(9, "how"), (10, "wait")]
    with pytest.raises(InputError, match=r"^stream w: delay column 'wai' not found; attributes "
                                         r"are \['x', 'wait', 'how'\] \(did you mean "
                                         r"column:wait\?\)"):
        StreamSpec.parse(str(path)).check_delay(DelaySpec.parse("column:wai"))


@pytest.mark.parametrize("fmt", ["csv", "parquet", "jsonl"])
def test_epoch_nanoseconds_are_the_seconds_of_the_same_times_written_as_dates(tmp_path, fmt):
    """Epoch nanoseconds pass a double's 2**53: read as floats and divided they were an ulp
    off (1800000002.7500002), so instants in a file of nanoseconds fell on the other side of
    a time window's edge or a re-prediction time than the same instants written as dates.
    Oracles: the seconds written by hand, and the same instants as ISO dates."""
    seconds = [1_800_000_000.0, 1_800_000_002.75, 1_800_000_003.25, 1_800_000_005.5]
    ns = [int(s * 4) * 250_000_000 for s in seconds]  # (exact integers)
    iso = pd.to_datetime(ns, unit="ns", utc=True).strftime("%Y-%m-%dT%H:%M:%S.%fZ").tolist()
    times = {}
    for name, column, unit in (("ns", ns, ', "time_unit": "ns"'), ("iso", iso, "")):
        frame = pd.DataFrame({"kind": ["instance", "instance", "label", "label"],
                              "id": ["a", "b", "a", "b"], "time": column,
                              "x": [1.0, 2.0, None, None], "label": [None, None, "p", "q"]})
        path = tmp_path / f"{name}.{fmt}"
        if fmt == "csv":
            frame.to_csv(path, index=False)
        elif fmt == "parquet":
            frame.to_parquet(path, index=False)
        else:
            frame.to_json(path, orient="records", lines=True)
        events, dead = read(f'{path}{{"features": ["x"]{unit}}}')
        assert dead == []
        times[name] = [e[0] for e in events]
    assert times["ns"] == times["iso"] == seconds


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_a_partition_of_label_rows_alone_may_lack_the_feature_columns(tmp_path, fmt):
    """An event log in daily partitions whose last day holds label rows only, written without
    the feature columns (JSON Lines leaves out keys it has no value for): the stream is the
    one file of those rows (it was refused: feature column not found, in that day's file). A
    feature no file has stops the run, naming the folder and the columns of its files."""
    frame = pd.DataFrame({"kind": ["instance", "instance", "label", "instance", "label",
                                   "label"],
                          "id": ["a", "b", "a", "c", "b", "c"], "time": [0, 1, 2, 3, 4, 5],
                          "x": [1.0, 2.0, None, 3.0, None, None],
                          "label": [None, None, "p", None, "q", "p"]})

    def write(part, path):
        path.parent.mkdir(parents=True, exist_ok=True)
        if fmt == "jsonl":
            path.write_text("".join(json.dumps({k: v for k, v in row.items() if v == v and
                                                v is not None}) + "\n"
                                    for row in part.to_dict("records")))
        elif fmt == "csv":
            part.to_csv(path, index=False)
        else:
            part.to_parquet(path, index=False)

    write(frame, tmp_path / f"one.{fmt}")
    write(frame[:4], tmp_path / "log" / "date=2026-01-01" / f"part-0.{fmt}")
    write(frame[4:].drop(columns="x"), tmp_path / "log" / "date=2026-01-02" / f"part-0.{fmt}")
    options = '{"features": ["x"]}'
    StreamSpec.parse(f"{tmp_path}/log{options}").check()
    one, _ = read(f"{tmp_path}/one.{fmt}{options}")
    events, dead = read(f"{tmp_path}/log{options}")
    assert dead == [] and events == one and brief(events)[-1] == (5, "label", "c", "p")
    with pytest.raises(InputError, match=rf"^{tmp_path}/log: feature column 'y' not found; "
                                         r"columns are \['kind', 'id', 'time', 'x', 'label'\]"):
        StreamSpec.parse(f'{tmp_path}/log{{"features": ["x", "y"]}}').check()


def test_arff_values_in_single_or_double_quotes_hold_commas_and_spaces(tmp_path):
    """Weka quotes with ' or ": nominal values declared and given either way."""
    path = tmp_path / "q.arff"
    path.write_text("@relation q\n@attribute x numeric\n"
                    "@attribute colour {'light red', \"dark,blue\", green}\n"
                    "@attribute class {'yes please',\"no, thanks\"}\n@data\n"
                    "0.1,'light red','yes please'\n0.2, \"dark,blue\" ,'no, thanks'\n"
                    "0.3,green,\"yes please\"\n")
    assert StreamSpec.parse(str(path)).declared_classes() == ["yes please", "no, thanks"]
    events, dead = read(str(path), delay="1")
    assert dead == []
    assert [e[5]["colour"] for e in events if e[3] == "instance"] == [
        "light red", "dark,blue", "green"]
    assert [e[6] for e in events if e[3] == "label"] == ["yes please", "no, thanks",
                                                         "yes please"]


def test_a_quoted_question_mark_in_arff_is_text_and_a_bare_one_is_missing(tmp_path):
    """Weka reads '?' (quoted) as the value ?, and ? alone as missing: a survey's "?" answer
    is a category of its own, and a label '?' is a label (the file's events written out by
    hand)."""
    path = tmp_path / "q.arff"
    path.write_text("@relation q\n@attribute x numeric\n@attribute answer {yes,no,'?'}\n"
                    "@attribute class {a,'?'}\n@data\n"
                    "0.1,'?',a\n0.2,?,'?'\n?,yes,\"?\"\n")
    assert StreamSpec.parse(str(path)).first_values() == ["a", "?", "?"]
    events, dead = read(str(path), delay="1")
    assert dead == []
    assert [e[5] for e in events if e[3] == "instance"] == [
        {"x": 0.1, "answer": "?"}, {"x": 0.2}, {"answer": "yes"}]
    assert [e[6] for e in events if e[3] == "label"] == ["a", "?", "?"]


def test_a_sparse_arff_row_is_its_dense_row_with_zeros_and_first_values(tmp_path):
    """Weka's sparse rows: `{index value, ...}`, an omitted value 0 (a nominal attribute's
    first value), not missing; `?` is missing. The events are those of the dense file written
    out by hand; a malformed entry is one error naming its line."""
    header = ("@relation r\n@attribute a numeric\n@attribute b numeric\n"
              "@attribute colour {red,blue}\n@attribute class {x,y}\n@data\n")
    sparse, dense = tmp_path / "sparse.arff", tmp_path / "dense.arff"
    sparse.write_text(header + "{0 1.5, 3 y}\n{1 2.0,2 blue}\n% note\n{}\n{0 ?, 3 y}\n"
                      "1.0,2.0,blue,y\n")
    dense.write_text(header + "1.5,0,red,y\n0,2.0,blue,x\n% note\n0,0,red,x\n?,0,red,y\n"
                     "1.0,2.0,blue,y\n")
    assert read(str(sparse), delay="1") == read(str(dense), delay="1")
    events, _ = read(str(sparse), delay="1")
    assert [e[5] for e in events if e[3] == "instance"][-2] == {"b": 0.0, "colour": "red"}
    for row, entry in (("{0 1.5, 7 y}", "'7 y'"), ("{0 1.5 3 y", "a sparse row must end")):
        sparse.write_text(header + row + "\n")
        with pytest.raises(InputError, match=f"sparse.arff, line 7: .*{entry}"):
            read(str(sparse), delay="1")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.text(alphabet="ab1.5 \t,'\"?%{\\-", max_size=6), min_size=1,
                         max_size=5), min_size=1, max_size=6), st.randoms())
def test_arff_data_lines_give_back_the_values_they_were_written_from(tmp_path_factory, rows,
                                                                     rng):
    """Rows of values written as ARFF writes them: a value plain, or (when it must be: a
    comma, a quote, spaces around it, a `%`, which begins a comment, a `{` that would begin a
    sparse row) in single or double quotes, its quote and backslashes escaped by a backslash,
    with spaces around the commas; between them blank and comment lines, which are no rows.
    Each row is read back as its values, with its line number."""
    from transforms.streams.arff import arff_rows

    def written(value, first):
        plain = value == value.strip() and not any(c in value for c in ",'\"\\%") and not (
            first and (value[:1] == "{" or value == "")) and rng.random() < 0.7
        if plain:
            return value
        quote = rng.choice("'\"")
        return quote + value.replace("\\", "\\\\").replace(quote, "\\" + quote) + quote

    lines, expected = [], []
    for values in rows:
        if rng.random() < 0.3:
            lines.append(rng.choice(["", "   ", "% a comment, 'quoted'"]))
        lines.append(",".join(" " * rng.randint(0, 1) + written(v, i == 0) +
                              " " * rng.randint(0, 1) for i, v in enumerate(values)))
        expected.append((len(lines) + 3, values))
    path = tmp_path_factory.mktemp("arff") / "s.arff"
    path.write_text("@relation s\n@attribute a string\n@data\n" + "\n".join(lines) + "\n")
    assert list(arff_rows(str(path))) == expected


def test_an_arff_streams_row_numbers_are_its_ids_and_none_is_remembered():
    """A plain ARFF file's instances are numbered by row, unique by construction: the checks
    keep no set of ids (which grew with the file, ~70 MiB per million rows)."""
    from transforms.streams.arff import arff_events
    from transforms.streams.delays import DelaySpec
    from transforms.streams.rows import Checks

    spec = StreamSpec.parse(data("small.arff"))
    checks = Checks(spec)
    events = list(arff_events(spec, DelaySpec.parse("1"), checks))
    ids = [e[4] for e in events if e[3] == "instance"]
    assert ids == list(range(len(ids))) and checks.seen is None


def test_delayed_arff_uses_file_order_for_ties():
    events, dead = read(data("delayed.arff") + '{"delayed": true}')
    assert dead == []
    # Input order: at t=2 the file has label 1, instance 3, label 2, in that order.
    assert brief(events) == [(0, "instance", "1", None), (1, "instance", "2", None),
                             (2, "label", "1", "a"), (2, "instance", "3", None),
                             (2, "label", "2", "b"), (5, "label", "3", "b")]
    assert events[2][5] == {"x1": 1.1}  # the labelled row's features


def test_an_instance_and_a_label_table_in_input_order_put_the_instances_first_at_a_tie(
        tmp_path):
    """Two tables have no one file order: under `{"order": "input"}` (time, then file order)
    the instance table's rows at a time come before the label table's at that time, each
    table's in its file order; in time order (the default) a label comes before an instance
    arriving then, as in an event log."""
    pd.DataFrame({"id": ["a", "b", "c"], "time": [0, 2, 2], "x": [1.0, 2.0, 3.0]}).to_csv(
        tmp_path / "instances.csv", index=False)
    pd.DataFrame({"id": ["a", "b"], "time": [2, 5], "label": ["yes", "no"]}).to_csv(
        tmp_path / "labels.csv", index=False)
    tables = str(tmp_path / "instances.csv") + '{"labels": "%s"%s}'
    events, dead = read(tables % (tmp_path / "labels.csv", ', "order": "input"'))
    assert dead == []
    assert brief(events) == [(0, "instance", "a", None), (2, "instance", "b", None),
                             (2, "instance", "c", None), (2, "label", "a", "yes"),
                             (5, "label", "b", "no")]
    events, _ = read(tables % (tmp_path / "labels.csv", ""))
    assert brief(events)[1:4] == [(2, "label", "a", "yes"), (2, "instance", "b", None),
                                  (2, "instance", "c", None)]


def test_river_dataset_and_generators():
    events, _ = read('dataset:Phishing{"n": 50}', delay="5")
    first = next(iter(datasets.Phishing()))
    assert events[0][5] == first[0]
    assert sum(e[3] == "instance" for e in events) == 50
    for name in ["Agrawal", "SEA", "Hyperplane", "LED", "RandomRBF", "STAGGER", "Sine"]:
        events, dead = read(f'synth:{name}{{"n": 30, "seed": 3}}', delay="2")
        assert sum(e[3] == "label" for e in events) == 30 and not dead, name


def test_a_multi_output_dataset_is_read_as_the_target_its_label_option_names():
    events, dead = read('dataset:SolarFlare{"label": "m-class-flares", "n": 40}', delay="1")
    labels = [e[6] for e in events if e[3] == "label"]
    river_rows = list(itertools.islice(datasets.SolarFlare(), 40))
    assert labels == [y["m-class-flares"] for _, y in river_rows] and not dead
    assert [e[5] for e in events if e[3] == "instance"] == [x for x, _ in river_rows]


def test_generator_drift_chain_matches_river_concept_drift_stream():
    spec = ('synth:Agrawal{"n": 400, "seed": 1, "classification_function": 0, '
            '"drift": [{"at": 200, "width": 50, "classification_function": 3}]}')
    events, _ = read(spec)
    ours = [e[6] for e in events if e[3] == "label"]
    stream = datasets.synth.ConceptDriftStream(
        datasets.synth.Agrawal(classification_function=0, seed=1),
        datasets.synth.Agrawal(classification_function=3, seed=2), position=200, width=50,
        seed=1)
    assert ours == [y for _, y in itertools.islice(stream, 400)]


def test_manifest_friendly_dead_letter_fields():
    _, dead = read(data("bad.csv") + '{"classes": ["yes", "no"]}')
    assert all(set(d) >= {"stream", "file", "row", "field", "reason"} for d in dead)
    json.dumps(dead)


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_tables_read_in_chunks_give_the_events_of_one_read(tmp_path, monkeypatch, fmt):
    """Tables are read a chunk at a time: in chunks of 7 rows, the events, dead letters (row
    numbers, fields), ids of a table without an id column and text read as numbers are those
    of one read — also where a column's type differs between chunks (CSV)."""
    import numpy as np

    from transforms.streams import table_files

    n = 50
    df = pd.DataFrame({"time": np.arange(n, dtype=float), "f1": np.linspace(0, 1, n),
                       "f2": [str(i / 4) for i in range(n)], "label": ["a", "b"] * (n // 2)})
    df.loc[22, "f2"] = "abc"  # row 23: text in a column of numbers
    df.loc[39, "f1"] = np.inf  # row 40
    df["time"] = df["time"].astype(object)
    df.loc[30, "time"] = "yesterday"  # row 31
    df["time"] = df["time"].astype(str)
    path = tmp_path / f"rows.{fmt}"
    df.to_csv(path, index=False) if fmt == "csv" else df.to_parquet(path)
    whole = read(str(path), delay="3")
    monkeypatch.setattr(table_files, "CHUNK_ROWS", 7)
    assert len(list(table_files.table_chunks([str(path)], None))) == 8
    chunked = read(str(path), delay="3")
    assert chunked == whole
    events, dead = chunked
    assert [(d["row"], d["field"]) for d in dead] == [(23, "f2"), (31, "time"), (40, "f1")]
    instances = [e for e in events if e[3] == "instance"]
    assert [e[4] for e in instances] == [i for i in range(n) if i not in (22, 30, 39)]
    assert instances[-1][5] == {"f1": 1.0, "f2": 12.25}  # "12.25" read as a number


def test_csv_read_in_chunks_keeps_one_type_per_column(tmp_path, monkeypatch):
    """A column that is text in one chunk only (an id "x9") is text in every chunk, as in one
    read: ids stay "3", not 3; the labels, a column of integers with a gap (floats to the
    reader), are the integers written in every chunk."""
    from transforms.streams import table_files

    rows = [f"{i},{i},{'' if i == 4 else i % 2}" for i in range(12)]
    rows[9] = "x9,9,1"
    path = tmp_path / "ids.csv"
    path.write_text("id,time,label\n" + "\n".join(rows) + "\n")
    whole = read(str(path), delay="1")
    monkeypatch.setattr(table_files, "CHUNK_ROWS", 5)
    chunked = read(str(path), delay="1")
    assert chunked == whole
    labels = [(e[4], e[6]) for e in chunked[0] if e[3] == "label"]
    assert labels[:2] == [("0", 0), ("1", 1)] and ("x9", 1) in labels
    assert all(type(y) is int for _, y in labels)


def test_json_lines_are_parsed_once_before_the_run_and_their_time_order_told(tmp_path,
                                                                              monkeypatch):
    """The checks before a run parse a JSON Lines file once (columns, head, times' order),
    chunk by chunk (here chunks of 7 lines: they hold a chunk, not the file):
    `rows_in_time_order` agrees with a plain loop over the files' times in path order, and
    the columns are every line's keys."""
    from pipelines.config import RunConfig
    from pipelines.plan import plan
    from transforms.streams import table_files
    from transforms.streams.tables import rows_in_time_order

    def write(name, times):
        late = ', "late": 1'  # a key of one line only
        (tmp_path / name).write_text("".join(
            f'{{"time": {t}, "x": {t / 10}, "label": {t % 2}{late * (t == 93)}}}\n'
            for t in times))

    def in_order_by_loop():
        times = [json.loads(line)["time"] for path in sorted(tmp_path.glob("*.jsonl"))
                 for line in path.read_text().splitlines()]
        return all(a <= b for a, b in zip(times, times[1:]))

    parsed = []
    chunks = table_files._jsonl_chunks
    monkeypatch.setattr(table_files, "CHUNK_ROWS", 7)
    monkeypatch.setattr(table_files, "_jsonl_chunks",
                        lambda path, *args: parsed.append(path) or chunks(path, *args))
    stream = f"{tmp_path}/*.jsonl"
    write("a.jsonl", range(0, 50))
    write("b.jsonl", range(50, 100))
    assert plan(RunConfig(streams=[stream], models=["majority"], out=str(tmp_path / "o"),
                          delay="5")).replay == "per-stream"
    assert sorted(parsed) == sorted(str(p) for p in tmp_path.glob("*.jsonl"))  # once each
    assert table_files.columns_of(str(tmp_path / "b.jsonl"), "jsonl") == \
        ["time", "x", "label", "late"]  # a key of line 44 only
    cases = [("b.jsonl", [*range(50, 60), 55, *range(61, 100)]),  # one time back
             ("b.jsonl", [*range(50, 57), 49, *range(57, 100)]),  # a chunk's first line
             ("b.jsonl", range(50, 100)), ("c.jsonl", range(10, 20))]  # a file starting early
    for name, times in cases:
        write(name, times)
        assert rows_in_time_order(StreamSpec.parse(stream)) == in_order_by_loop(), name


SHADES = ("dark", "light")


@pytest.mark.parametrize("missing", ["dead-letter", "drop"])
def test_a_tables_features_are_the_columns_of_all_its_rows_however_it_is_read(
        tmp_path, monkeypatch, missing):
    """A table's features are every column of every file — for JSON Lines every line's keys,
    for partitions every partition's columns — and a row without a value for one of them has a
    missing value (the `missing` option), whatever chunks the read takes: here a key that only
    line 21 of 30 has (after the first chunk of 7), a key line 4 lacks, and a second partition
    with a text column and a number column the first lacks. Oracle: a loop over the lines,
    as the option describes."""
    from transforms.streams import table_files

    jsonl = tmp_path / "sparse.jsonl"
    lines = [{"time": i, "x": i / 10, "label": i % 2, **({} if i == 3 else {"w": 1.0}),
              **({"z": 5.0} if i == 20 else {})} for i in range(30)]
    jsonl.write_text("".join(json.dumps(line) + "\n" for line in lines))
    (tmp_path / "parts").mkdir()
    (tmp_path / "parts" / "a.csv").write_text(
        "time,x,label\n" + "".join(f"{i},{i / 10},{i % 2}\n" for i in range(10)))
    (tmp_path / "parts" / "b.csv").write_text(
        "time,x,extra,shade,label\n" + "".join(f"{i},{i / 10},{i},{SHADES[i % 2]},{i % 2}\n"
                                               for i in range(10, 20)))
    parts = [{"time": i, "x": i / 10, "label": i % 2,
              **({"extra": i, "shade": SHADES[i % 2]} if i >= 10 else {})} for i in range(20)]

    def by_loop(rows, columns):
        kept, dead = {}, []
        for i, row in enumerate(rows):
            absent = [c for c in columns if c not in row]
            if absent and missing == "dead-letter":
                dead.append((i + 1 if rows is lines else i % 10 + 1, absent[0]))
            else:
                kept[i] = {c: row[c] for c in columns if c in row}
        return kept, dead

    options = json.dumps({"missing": missing})
    cases = [(str(jsonl) + options, lines, ["x", "w", "z"]),
             (f"{tmp_path}/parts/*.csv" + options, parts, ["x", "extra", "shade"])]
    for spec, rows, columns in cases:
        for chunk_rows in (65_536, 7):
            monkeypatch.setattr(table_files, "CHUNK_ROWS", chunk_rows)
            events, dead = read(spec, delay="1")
            kept = {e[4]: e[5] for e in events if e[3] == "instance"}
            assert (kept, [(d["row"], d["field"]) for d in dead]) == by_loop(rows, columns), \
                (spec, chunk_rows)


def test_a_planned_table_is_read_without_reading_its_columns_again(tmp_path, monkeypatch):
    """The plan finds a table's columns (for JSON Lines, a pass over the file); where the
    table is read — on a worker, in another process — no file is read again for them, and
    the events are those of a read that finds them itself."""
    from pipelines.config import RunConfig
    from pipelines.plan import plan
    from transforms.streams import tables
    from transforms.streams.delays import DelaySpec

    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps({"time": i, "x": i / 10, "label": i % 2,
                                        **({"late": 1.0} if i > 5 else {})}) + "\n"
                            for i in range(10)))
    expected = list(StreamSpec.parse(str(path)).events(DelaySpec.parse("1")))
    planned = plan(RunConfig(streams=[str(path)], models=["majority"], delay="1",
                             out=str(tmp_path / "o"))).streams[0]
    monkeypatch.setattr(tables, "columns_of", lambda *args: pytest.fail("columns read again"))
    assert list(planned.events(DelaySpec.parse("1"))) == expected


def test_a_text_table_is_parsed_whole_once_before_its_rows_are_read(tmp_path, monkeypatch):
    """A CSV or JSON Lines file is parsed whole by one pass before its rows are read (its
    columns, types and times' order, for the checks and for the replay to choose its path);
    a CSV file's rows are parsed once more, a JSON Lines file's come from what that pass kept.
    The rest reads first lines only. The results are those of a run that keeps nothing."""
    from pipelines.config import RunConfig
    from pipelines.job import run
    from transforms.streams import table_files

    frame = pd.DataFrame({"time": range(300), "x": [i % 7 / 7 for i in range(300)],
                          "label": [i % 3 for i in range(300)]})
    frame.to_csv(tmp_path / "s.csv", index=False)
    frame.to_json(tmp_path / "s.jsonl", orient="records", lines=True)
    whole: list = []
    read_csv, jsonl_chunks = pd.read_csv, table_files._jsonl_chunks

    def counted_read_csv(source, *args, **kw):
        if kw.get("chunksize"):
            whole.append(str(source))
        return read_csv(source, *args, **kw)

    def counted_jsonl_chunks(path, *args):
        whole.append(str(path))
        return jsonl_chunks(path, *args)

    monkeypatch.setattr(pd, "read_csv", counted_read_csv)
    monkeypatch.setattr(table_files, "_jsonl_chunks", counted_jsonl_chunks)
    def evaluate(name, out):
        return run(RunConfig(streams=[str(tmp_path / name)], models=["gaussian-nb"],
                             delay="5", repredict="none", out=str(tmp_path / out), quiet=True,
                             runner="direct", run_id="same"))

    for name, times in (("s.csv", 2), ("s.jsonl", 1)):
        whole.clear()
        evaluate(name, name.replace(".", "_"))
        assert whole == [str(tmp_path / name)] * times, name
    kept = read_csv(tmp_path / "s_jsonl" / "summary.csv")

    def full_disk(spool, item):
        raise OSError(28, "No space left on device")

    for what, target, name, value in (("no spool", table_files, "_spool", lambda: None),
                                      ("a full disk", table_files.Spool, "add", full_disk)):
        with monkeypatch.context() as m:
            m.setattr(target, name, value)
            table_files._text_facts_of.cache_clear()
            whole.clear()
            evaluate("s.jsonl", "parsed_again")
        assert whole == [str(tmp_path / "s.jsonl")] * 2, what
        pd.testing.assert_frame_equal(kept,
                                      read_csv(tmp_path / "parsed_again" / "summary.csv"))


def test_a_csv_cell_is_missing_as_pandas_reads_it_unless_the_stream_names_the_texts(tmp_path):
    """By default a CSV cell is missing when pandas reads it so (empty, NA, null, None, ...);
    with `na_values` only an empty cell and the listed texts are missing and any other text is
    a value: a country "NA", a class "None". Oracle: the cells as written, read by hand."""
    path = tmp_path / "t.csv"
    path.write_text("time,x,country,label\n0,1.0,NA,a\n1,2.0,DE,None\n2,,PL,a\n3,4.0,?,b\n"
                    "4,5.0,null,b\n")

    def seen(options):
        events, dead = read(str(path) + json.dumps(options), delay="1")
        return ({e[4]: e[5] for e in events if e[3] == "instance"},
                {e[4]: e[6] for e in events if e[3] == "label"},
                [(d["row"], d["field"]) for d in dead])

    every = {0: {"x": 1.0, "country": "NA"}, 1: {"x": 2.0, "country": "DE"},
             3: {"x": 4.0, "country": "?"}, 4: {"x": 5.0, "country": "null"}}
    assert seen({}) == ({1: every[1], 3: every[3]}, {3: "b"},
                        [(1, "country"), (3, "x"), (5, "country")])
    assert seen({"na_values": []}) == (every, {0: "a", 1: "None", 3: "b", 4: "b"}, [(3, "x")])
    assert seen({"na_values": ["?"]}) == ({i: every[i] for i in (0, 1, 4)},
                                          {0: "a", 1: "None", 4: "b"}, [(3, "x"), (4, "country")])
    with pytest.raises(InputError, match=r'stream t: option na_values must be a list of texts, '
                                         r'not \'NA\'; e\.g\. \{"na_values": \["NA", "\?"\]\}'):
        StreamSpec.parse(str(path) + '{"na_values": "NA"}').check()
    path.with_suffix(".jsonl").write_text('{"time": 0, "x": 1.0, "label": "a"}\n')
    with pytest.raises(InputError, match=r"t\.jsonl: na_values is for CSV files"):
        StreamSpec.parse(str(path.with_suffix(".jsonl")) + '{"na_values": []}').check()
    with pytest.raises(InputError, match=r"small\.arff: missing, na_values, time_unit is for "
                                         r"table files"):
        StreamSpec.parse(data("small.arff") + '{"na_values": [], "time_unit": "ms", '
                                              '"missing": "drop"}').check()
    # river's iter_csv names the label column `target`; for a table it is `label`.
    with pytest.raises(InputError, match=r't\.jsonl: target is for ARFF files; a table\'s label '
                                         r'column is named by the option \{"label": "x"\}'):
        StreamSpec.parse(str(path.with_suffix(".jsonl")) + '{"target": "x"}').check()


def test_a_parquet_file_of_pandas_nullable_types_reads_as_the_same_table_in_csv(tmp_path):
    """pandas' nullable types (`Int64`, `boolean`, `string`, as `convert_dtypes()` gives them)
    are written to Parquet with their missing value, pd.NA, which is no missing value to a
    reader: a gap in the labels would be a class, a gap in a feature a value. Oracle: the same
    table written as CSV, its gaps empty cells."""
    n = 40
    frame = pd.DataFrame({
        "time": pd.array(range(n), dtype="Int64"),
        "x": pd.array([i / 4 if i % 6 else None for i in range(n)], dtype="Float64"),
        "flag": pd.array([bool(i % 2) if i % 5 else None for i in range(n)], dtype="boolean"),
        "city": pd.array(["a" if i % 3 else None for i in range(n)], dtype="string"),
        "label": pd.array([i % 3 if i % 7 else None for i in range(n)], dtype="Int64")})
    frame.to_parquet(tmp_path / "t.parquet")
    frame.to_csv(tmp_path / "t.csv", index=False)
    for options in ({}, {"missing": "drop"}):
        parquet = read(str(tmp_path / "t.parquet") + json.dumps(options), delay="2")
        csv = read(str(tmp_path / "t.csv") + json.dumps(options), delay="2")
        assert brief(parquet[0]) == brief(csv[0])
        assert [e[5] for e in parquet[0]] == [e[5] for e in csv[0]]  # the features
        assert [(d["row"], d["field"]) for d in parquet[1]] == \
            [(d["row"], d["field"]) for d in csv[1]]
    labels = [e[6] for e in parquet[0] if e[3] == "label"]
    # Six gaps (i % 7 == 0), and row 30's label goes with its row: its every feature is empty.
    assert len(labels) == n - 7 and set(labels) == {0, 1, 2}


def test_a_parquet_file_of_a_pandas_frame_with_an_index_reads_its_columns(tmp_path):
    """A filtered frame written with `to_parquet()` keeps its row labels in a column of
    pandas' own (`__index_level_0__`): no feature (it made every row a dead letter, a feature
    missing). A named index (`set_index("key")`) is a column the options name, an id column
    of nullable integers (`Int64`) included. Oracle: the frame's columns written as CSV."""
    frame = pd.DataFrame({"key": pd.array(range(60), dtype="Int64"),
                          "x": [i / 7 for i in range(60)],
                          "label": [i % 3 == 0 for i in range(60)]})
    kept = frame[frame.index % 7 != 0]
    kept.drop(columns="key").to_parquet(tmp_path / "filtered.parquet")
    kept.set_index("key").to_parquet(tmp_path / "indexed.parquet")
    kept.to_csv(tmp_path / "t.csv", index=False)
    csv = read(str(tmp_path / "t.csv") + '{"features": ["x"]}', delay="3")
    filtered = read(str(tmp_path / "filtered.parquet"), delay="3")
    assert filtered[1] == [] and filtered[0] == csv[0]
    by_key = read(str(tmp_path / "t.csv") + '{"id": "key"}', delay="3")
    indexed = read(str(tmp_path / "indexed.parquet") + '{"id": "key"}', delay="3")
    assert indexed[1] == [] and indexed[0] == by_key[0]
    assert {e[4] for e in indexed[0]} == {str(k) for k in kept["key"]}


def test_a_csv_export_with_an_index_or_a_separator_ending_each_line_reads_as_the_plain_file(
        tmp_path):
    """`DataFrame.to_csv()` writes the index first, under an empty header cell; some exports
    end every line (or every line but the header, or only the header) with the separator.
    Neither is a feature, nor shifts the columns (pandas took a row's first field for an index
    when its lines had one field more than the header: labels read from the empty last field,
    none found; a header one field longer made every row a line cut short). A value beyond
    the header's names is one line. Oracle: the plain file."""
    frame = pd.DataFrame({"time": [1, 2, 3, 4, 5, 6], "x": [0.1, 0.4, 0.2, 0.9, 0.3, 0.8],
                          "label": list("abaaba")})
    frame.to_csv(tmp_path / "plain.csv", index=False)
    frame.to_csv(tmp_path / "indexed.csv")
    lines = (tmp_path / "plain.csv").read_text().splitlines()
    (tmp_path / "ends.csv").write_text("".join(line + ",\n" for line in lines))
    (tmp_path / "rows_end.csv").write_text(lines[0] + "\n" + "".join(
        line + ",\n" for line in lines[1:]))
    (tmp_path / "header_ends.csv").write_text(lines[0] + ",\n" + "".join(
        line + "\n" for line in lines[1:]))
    plain = read(str(tmp_path / "plain.csv"), delay="2")
    assert plain[1] == [] and len(plain[0]) == 12
    for name in ("indexed", "ends", "rows_end", "header_ends"):
        assert read(str(tmp_path / f"{name}.csv"), delay="2") == plain, name
        StreamSpec.parse(str(tmp_path / f"{name}.csv")).check()
    # A line cut short is still one, under a header that ends with the separator.
    (tmp_path / "short.csv").write_text(lines[0] + ",\n" + lines[1] + "\n2,0.4\n")
    assert [(d["row"], d["reason"]) for d in read(str(tmp_path / "short.csv"))[1]] == [
        (2, "the line is cut short: 2 of 3 fields")]
    (tmp_path / "extra.csv").write_text(lines[0] + "\n" + lines[1] + ",\n" + lines[2] +
                                        ",7\n")
    with pytest.raises(InputError, match=r"extra\.csv, row 2: 4 fields where the header names "
                                         r"3 columns, and \['7'\] has no column; name every "
                                         r"column in the header"):
        StreamSpec.parse(str(tmp_path / "extra.csv")).check()


def test_a_stream_from_a_folder_or_a_glob_is_named_after_the_folder():
    # A glob's `date=*` is a hive partition, not NAME=SPEC.
    assert [StreamSpec.parse(p).name for p in (
        "logs/Instances/", "logs/instances/date=*/*.parquet", "gs://bucket/tx/*.csv",
        "*.csv")] == ["instances", "instances", "tx", "stream"]


def test_times_written_as_the_time_format_says_are_read_so(tmp_path):
    """Dates written day first, as a spreadsheet exports them, in an instance table's time
    column, its labels' `label_time`, and a label table, with `time_format`. Oracle: each
    time's seconds from Python's datetime in UTC. The days cross a month, so the text's order
    (01/12 before 30/11) is not the times' order; the per-stream replay still takes the file
    (its time order is read with the format)."""
    import datetime as dt

    from transforms.streams.tables import rows_in_time_order

    start = dt.datetime(2026, 11, 29, 22, 0, tzinfo=dt.timezone.utc)
    times = [start + dt.timedelta(hours=7 * i) for i in range(8)]
    day_first = "%d/%m/%Y %H:%M"
    arrived = [f"{t:{day_first}}" for t in times]
    labelled = [f"{t + dt.timedelta(hours=3):{day_first}}" for t in times]
    labels = ["ab"[i % 2] for i in range(len(times))]
    pd.DataFrame({"when": arrived, "x": range(8), "label": labels, "done": labelled}).to_csv(
        tmp_path / "rows.csv", index=False)
    spec = f'{tmp_path}/rows.csv{{"time": "when", "label_time": "done", ' \
           f'"time_format": "{day_first}"}}'
    events, dead = read(spec)
    assert dead == []
    assert [(e[0], e[3]) for e in events] == sorted(
        [(t.timestamp(), "instance") for t in times]
        + [((t + dt.timedelta(hours=3)).timestamp(), "label") for t in times])
    assert rows_in_time_order(StreamSpec.parse(spec))
    # An instance table and its label table, the labels' times written alike.
    pd.DataFrame({"id": range(8), "when": arrived, "x": range(8)}).to_csv(
        tmp_path / "inst.csv", index=False)
    pd.DataFrame({"id": range(8), "when": labelled, "label": labels}).to_csv(
        tmp_path / "lab.csv", index=False)
    tables = f'{tmp_path}/inst.csv{{"time": "when", "labels": "{tmp_path}/lab.csv", ' \
             f'"time_format": "{day_first}"}}'
    table_events, dead = read(tables)
    assert dead == [] and [(e[0], e[3]) for e in table_events] == [(e[0], e[3]) for e in events]
    assert rows_in_time_order(StreamSpec.parse(tables))
    # Out of time order, told so; a time not written so is a dead letter that says how.
    rows = (tmp_path / "rows.csv").read_text().splitlines()
    (tmp_path / "rows.csv").write_text("\n".join([rows[0], rows[2], rows[1], *rows[3:]]) + "\n")
    assert not rows_in_time_order(StreamSpec.parse(spec))
    (tmp_path / "rows.csv").write_text("\n".join([*rows, "30/11/2026,9,a,"]) + "\n")
    _, dead = read(spec)
    assert [(d["row"], d["field"], d["reason"]) for d in dead] == [
        (9, "when", "time '30/11/2026' is not written as the time_format '%d/%m/%Y %H:%M' "
                    "says, nor a number or an ISO datetime")]


def test_a_time_format_reads_compact_dates_and_leaves_numbers_and_iso_times_as_they_are(
        tmp_path):
    """`{"time_format": "%Y%m%d"}` on a column pandas reads as numbers (with a gap: floats)
    reads 20261101 as that day; a cell the format does not read is a number of seconds or an
    ISO datetime, as without it. Oracle: datetime's seconds, and the numbers as written."""
    import datetime as dt

    day = dt.datetime(2026, 11, 1, tzinfo=dt.timezone.utc).timestamp()
    pd.DataFrame({"t": [20261101, None, 20261102], "x": [1.0, 2.0, 3.0], "label": ["a"] * 3}
                 ).to_parquet(tmp_path / "days.parquet")
    events, dead = read(f'{tmp_path}/days.parquet{{"time": "t", "time_format": "%Y%m%d"}}')
    assert [e[0] for e in events if e[3] == "instance"] == [day, day + 86400]
    assert [(d["row"], d["field"]) for d in dead] == [(2, "t")]
    (tmp_path / "mixed.csv").write_text(
        "t,x,label\n01/11/2026,1,a\n1793491300,2,b\n2026-11-01T12:00:00+01:00,3,a\n")
    events, dead = read(f'{tmp_path}/mixed.csv{{"time": "t", "time_format": "%d/%m/%Y"}}')
    assert dead == [] and [e[0] for e in events if e[3] == "instance"] == [
        day, 1793491300.0, day + 11 * 3600]


@pytest.mark.parametrize("pattern, strftime, written, expected", [
    ("dd/MM/yyyy HH:mm", "%d/%m/%Y %H:%M", "02/11/2026 08:30", (2026, 11, 2, 8, 30)),
    ("MM/dd/yy", "%m/%d/%y", "11/02/26", (2026, 11, 2, 0, 0)),
    ("d MMM yyyy, h:mm a", "%d %b %Y, %I:%M %p", "2 Nov 2026, 8:30 PM", (2026, 11, 2, 20, 30)),
    ("yyyy-MM-dd'T'HH:mm:ss", None, "2026-11-02T08:30:00", (2026, 11, 2, 8, 30)),
])
def test_an_arff_date_is_read_as_its_attribute_format_says(tmp_path, pattern, strftime,
                                                            written, expected):
    """Weka writes a date attribute's format as Java's SimpleDateFormat (`dd/MM/yyyy`). A date
    written otherwise is a dead letter that names the format: before, 01/11/2026 was read as
    the 11th of January and 13/11/2026 as the 13th of November, in one file. Oracle:
    datetime's seconds."""
    import datetime as dt

    path = tmp_path / "d.arff"
    path.write_text(f"@relation r\n@attribute when date '{pattern}'\n@attribute x numeric\n"
                    f"@attribute class {{a,b}}\n@data\n'{written}',1,a\n'soon',2,b\n")
    events, dead = read(str(path), delay="1")
    seconds = dt.datetime(*expected, tzinfo=dt.timezone.utc).timestamp()
    assert [e[5] for e in events if e[3] == "instance"] == [{"when": seconds, "x": 1.0}]
    assert [(d["row"], d["field"]) for d in dead] == [(7, "when")]
    assert dead[0]["reason"] == ("'soon' is not an ISO date" if "'T'" in pattern else
                                 f"'soon' is not a date written as '{strftime}' (its "
                                 f"attribute's format), nor an ISO date")
    # A letter not read here (day of the year) is one line naming the attribute.
    path.write_text("@relation r\n@attribute when date 'D/yyyy'\n@attribute class {a,b}\n"
                    "@data\n'1/2026',a\n")
    with pytest.raises(InputError, match=r"line 2: the date format of attribute 'when': 'D' in "
                                         r"'D/yyyy' is not read here; write its dates as ISO"):
        StreamSpec.parse(str(path)).check()


def test_dates_written_day_or_month_first_are_not_guessed_where_no_format_is_given(tmp_path):
    """Without a format, an ARFF date, a MOA-style delayed ARFF timestamp and --from take ISO
    8601 (or a number) only: 01/11/2026 is a dead letter or an error, not the 11th of
    January."""
    from transforms.streams.read import TimeRange

    path = tmp_path / "d.arff"
    path.write_text("@relation r\n@attribute when date\n@attribute x numeric\n"
                    "@attribute class {a,b}\n@data\n'01/11/2026',1,a\n'2026-11-01',2,b\n")
    events, dead = read(str(path), delay="1")
    assert [e[5]["when"] for e in events if e[3] == "instance"] == [1793491200.0]
    assert [(d["row"], d["reason"]) for d in dead] == [(6, "'01/11/2026' is not an ISO date")]
    with pytest.raises(ValueError, match="--from '01/11/2026': not an ISO date"):
        TimeRange.parse("01/11/2026", None)
    assert TimeRange.parse("2026-11-01", None).start == 1793491200.0


def test_times_without_an_offset_are_read_in_the_streams_time_zone(tmp_path):
    """`{"time_zone": "Europe/Berlin"}`: an instance table kept in Berlin's wall-clock time
    (text and a typed Parquet column) meets a label table written in UTC with offsets. Across
    the night the clocks go back, 02:30 names two moments: a dead letter that says so, as is
    03-29 02:30, which names none. Oracle: Python's zoneinfo."""
    import datetime as dt
    import zoneinfo

    berlin = zoneinfo.ZoneInfo("Europe/Berlin")
    walls = [dt.datetime(2026, 10, 24, 22, 0) + dt.timedelta(hours=h) for h in range(8)]
    (tmp_path / "inst.csv").write_text("id,when,x\n" + "".join(
        f"{i},{w:%Y-%m-%d %H:%M},{i}\n" for i, w in enumerate(walls))
        + "8,2026-03-29 02:30,8\n")
    labels = [(i, w.replace(tzinfo=berlin, fold=0).astimezone(dt.timezone.utc)
               + dt.timedelta(minutes=30)) for i, w in enumerate(walls) if w.hour != 2]
    (tmp_path / "lab.csv").write_text("id,when,label\n" + "".join(
        f"{i},{t:%Y-%m-%dT%H:%M}Z,{'ab'[i % 2]}\n" for i, t in labels))
    spec = f'{tmp_path}/inst.csv{{"time": "when", "labels": "{tmp_path}/lab.csv", ' \
           f'"time_zone": "Europe/Berlin"}}'
    events, dead = read(spec)
    expected = [w.replace(tzinfo=berlin).timestamp() for w in walls if w.hour != 2]
    assert [e[0] for e in events if e[3] == "instance"] == expected
    assert [e[0] for e in events if e[3] == "label"] == [t.timestamp() for _, t in labels]
    assert [(d["row"], d["reason"]) for d in dead] == [
        (5, "time '2026-10-25 02:00' is in the hour the clocks go back in Europe/Berlin, so it "
            "names two moments; write it with its UTC offset (2026-10-25T02:00+02:00, or "
            "+01:00 an hour later)"),
        (9, "time '2026-03-29 02:30' is in the hour the clocks skip in Europe/Berlin, so it "
            "names no moment there; write it with its UTC offset, or give the zone it was "
            "kept in")]
    # A typed Parquet column without a zone, read in the stream's zone.
    pd.DataFrame({"when": pd.to_datetime([f"{w:%Y-%m-%d %H:%M}" for w in walls]),
                  "x": range(8), "label": ["a"] * 8}).to_parquet(tmp_path / "typed.parquet")
    events, dead = read(f'{tmp_path}/typed.parquet{{"time": "when", '
                        f'"time_zone": "Europe/Berlin"}}')
    assert [e[0] for e in events if e[3] == "instance"] == expected and len(dead) == 1
    with pytest.raises(InputError, match=r"stream inst: no time zone 'Europe/Berln' \(did you "
                                         r"mean 'Europe/Berlin'\?\); name an IANA zone"):
        StreamSpec.parse(spec.replace("Europe/Berlin", "Europe/Berln")).check()


@pytest.mark.parametrize("instances", ["text", "typed"])
def test_times_without_an_offset_next_to_times_with_one_need_their_zone_named(tmp_path,
                                                                            instances):
    """An instance table of wall-clock times (text, or a Parquet column without a zone) and a
    label table whose times carry their offset: read as UTC, Berlin's times would be an hour
    late and every latency an hour short. One line names both columns, unless the stream's
    `time_zone` says where the first were kept ("UTC" included)."""
    if instances == "text":
        (tmp_path / "inst.csv").write_text("id,when,x\na,2026-11-01 10:00,1\n"
                                           "b,2026-11-01 10:30,2\n")
        source = f"{tmp_path}/inst.csv"
    else:
        pd.DataFrame({"id": ["a", "b"], "when": pd.to_datetime(["2026-11-01 10:00",
                                                                 "2026-11-01 10:30"]),
                      "x": [1, 2]}).to_parquet(tmp_path / "inst.parquet")
        source = f"{tmp_path}/inst.parquet"
    (tmp_path / "lab.csv").write_text("id,when,label\na,2026-11-01T09:20Z,x\n"
                                      "b,2026-11-01T10:45+01:00,y\n")
    spec = f'{source}{{"time": "when", "labels": "{tmp_path}/lab.csv"'
    with pytest.raises(InputError) as refused:
        StreamSpec.parse(spec + "}").check()
    assert str(refused.value) == (
        f"stream inst: the times in {source}, column when, name no UTC offset and those in "
        f"{tmp_path}/lab.csv, column when, do, so the two are compared as if the first were "
        f'UTC; name the zone they were kept in with the stream option {{"time_zone": '
        f'"Europe/Berlin"}} (for times without an offset), or {{"time_zone": "UTC"}} if they '
        f"are UTC")
    ten = 1793527200.0  # 2026-11-01 10:00 UTC, by hand; Berlin is at UTC+1 in November
    events, dead = read(spec + ', "time_zone": "Europe/Berlin"}')
    assert [(e[0], e[3], e[4]) for e in events] == [
        (ten - 3600, "instance", "a"), (ten - 2400, "label", "a"),
        (ten - 1800, "instance", "b"), (ten - 900, "label", "b")] and dead == []
    events, dead = read(spec + ', "time_zone": "UTC"}')  # (so each label comes too early)
    assert [(e[0], e[3], e[4]) for e in events] == [
        (ten, "instance", "a"), (ten + 1800, "instance", "b")]
    assert [d["reason"] for d in dead] == [
        "label at 2026-11-01 09:20:00 UTC is earlier than its instance at 2026-11-01 "
        "10:00:00 UTC", "label at 2026-11-01 09:45:00 UTC is earlier than its instance at "
        "2026-11-01 10:30:00 UTC"]
    StreamSpec.parse(spec + ', "time_zone": "UTC"}').check()


@pytest.mark.parametrize("sep", [",", ";"])
def test_a_csv_files_numbers_are_read_as_the_floats_written(tmp_path, sep):
    """Every number of a CSV file is the float its text names, to the last bit (pandas 2's C
    reader, by default, parses to within an ulp: 0.14285714285714285 became
    0.1428571428571428), so a file gives a model what river's CSV reader would. Oracle:
    Python's float() of each text."""
    rng = np.random.default_rng(5)
    texts = [repr(float(v)) for v in rng.normal(scale=1e3, size=(400, 2)).ravel()]
    texts[:2] = ["0.14285714285714285", "123456.78901234567"]
    rows = [f"{i}{sep}{texts[2 * i]}{sep}{texts[2 * i + 1]}{sep}{'ab'[i % 2]}\n"
            for i in range(400)]
    path = tmp_path / "s.csv"
    path.write_text(f"t{sep}a{sep}b{sep}label\n" + "".join(rows))
    events, _ = read(f'{path}{{"time": "t", "sep": "{sep}"}}', delay="1")
    features = [e[5] for e in events if e[3] == "instance"]
    assert [v for x in features for v in (x["a"], x["b"])] == [float(t) for t in texts]


def test_numbers_in_a_column_read_as_text_are_the_floats_written(tmp_path):
    """A column that the reader takes as text (here for one cell that is no number, a dead
    letter) has its numbers parsed by us: each the float its text names (pandas 2's
    `to_numeric` parses text to within an ulp). Oracle: Python's float() of each text."""
    rng = np.random.default_rng(6)
    texts = [repr(float(v)) for v in rng.normal(scale=10.0, size=300)]
    texts[0] = "?"
    path = tmp_path / "s.csv"
    path.write_text("t,a,label\n" + "".join(f"{i},{a},{'ab'[i % 2]}\n"
                                            for i, a in enumerate(texts)))
    events, dead = read(f'{path}{{"time": "t"}}', delay="1")
    assert [d["row"] for d in dead] == [1]
    assert [e[5]["a"] for e in events if e[3] == "instance"] == [float(t) for t in texts[1:]]


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_a_null_feature_is_missing_like_an_absent_key_in_a_column_of_text_and_numbers(tmp_path,
                                                                                      fmt):
    """A null (JSON null; None in a Parquet column of text) is a missing feature in any column:
    a dead letter naming it, or (`{"missing": "drop"}`) the row without it — it was dropped
    from the row unsaid where a column held text and numbers. Oracle: a loop over the written
    records applying the documented rule."""
    records = [{"t": 1, "x": 1.0, "city": "a"}, {"t": 2, "x": 2.0, "city": None},
               {"t": 3, "x": 3.0}, {"t": 4, "x": 4.0, "city": 5 if fmt == "jsonl" else "c"},
               {"t": 5, "x": 5.0, "city": "b"}]
    for i, r in enumerate(records):
        r["label"] = "pq"[i % 2]
    path = tmp_path / f"s.{fmt}"
    if fmt == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
    else:
        pd.DataFrame(records).astype({"city": object}).to_parquet(path)
    gaps = [i + 1 for i, r in enumerate(records) if r.get("city") is None]
    for policy in ("dead-letter", "drop"):
        events, dead = read(f'{path}{{"time": "t", "missing": "{policy}"}}', delay="1")
        kept = [i for i in range(len(records)) if policy == "drop" or i + 1 not in gaps]
        assert [e[5] for e in events if e[3] == "instance"] == [
            {k: v for k, v in records[i].items() if k not in ("t", "label") and v is not None}
            for i in kept]
        assert [(d["row"], d["field"]) for d in dead] == \
            ([(row, "city") for row in gaps] if policy == "dead-letter" else [])


def test_a_parquet_column_of_pandas_periods_is_dates(tmp_path):
    """pandas writes a Period column as its ordinals (days since 1970 here), marked
    `pandas.period` in the field's metadata; a reader that has not registered pandas' type (a
    fresh process) saw those counts: a time of 20 454 s for 2026-01-01, and a feature of
    days. Read as the periods' start times, the stream is the one whose times are those days
    as ISO dates, and as a feature the column is refused as dates are."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    days = pd.period_range("2026-01-01", periods=40, freq="D")
    x = np.linspace(-1, 1, 40)
    labels = np.where(np.sin(7 * x) > 0, "a", "b")
    ordinals = pa.array(days.asi8, type=pa.int64())
    marked = pa.field("day", pa.int64(), metadata={b"ARROW:extension:name": b"pandas.period",
                                                   b"ARROW:extension:metadata": b'{"freq": "D"}'})
    pq.write_table(pa.Table.from_arrays([ordinals, pa.array(x), pa.array(labels)],
                                        schema=pa.schema([marked, ("x", pa.float64()),
                                                          ("label", pa.string())])),
                   tmp_path / "periods.parquet")
    pd.DataFrame({"day": [str(d) for d in days], "x": x, "label": labels}).to_csv(
        tmp_path / "dates.csv", index=False)
    options = '{"time": "day"}'
    assert read(f"{tmp_path / 'periods.parquet'}{options}", delay="2d") == \
        read(f"{tmp_path / 'dates.csv'}{options}", delay="2d")
    assert read(f"{tmp_path / 'periods.parquet'}{options}", delay="2d")[0][0][0] == \
        1767225600.0  # 2026-01-01T00:00:00Z
    with pytest.raises(InputError, match="column 'day' holds dates"):
        StreamSpec.parse(str(tmp_path / "periods.parquet")).check()
    # A prediction log's time column of periods keeps its mark as the log is read.
    from transforms.backfill.logs import PredictionLogSpec
    from transforms.streams.table_files import as_pandas

    pq.write_table(pa.Table.from_arrays([pa.array(["1", "2"]), ordinals[:2], pa.array(["a", "b"])],
                                        schema=pa.schema([("id", pa.string()), marked,
                                                          ("y_pred", pa.string())])),
                   tmp_path / "log.parquet")
    batch = next(PredictionLogSpec.parse(f'{tmp_path / "log.parquet"}{{"time": "day"}}').read(
        str(tmp_path / "log.parquet")))
    assert as_pandas(batch)["time"].astype(str).tolist() == ["2026-01-01", "2026-01-02"]


def test_parquet_decimals_read_as_the_numbers_a_csv_file_writes(tmp_path):
    """SQL's DECIMAL columns, as Spark and DuckDB write amounts, times and ids, reached the
    model as Python Decimals ('unsupported operand type(s) for -: float and Decimal'). They
    are the numbers the same values written in a CSV file are, and an id beyond 2**53 keeps
    every digit. Oracle: the CSV file of the same text."""
    import decimal

    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(2)
    x = [f"{v:.3f}" for v in rng.normal(size=50)]
    rows = {"id": [str(2**53 + i) for i in range(50)],
            "time": [f"{1767225600 + 1.5 * i:.3f}" for i in range(50)], "x": x,
            "label": [f"{2 * float(v) + 0.25:.4f}" for v in x]}
    pd.DataFrame(rows).to_csv(tmp_path / "amounts.csv", index=False)
    kinds = {"id": pa.decimal128(20, 0), "time": pa.decimal128(20, 3), "x": pa.decimal128(9, 3),
             "label": pa.decimal256(12, 4)}
    pq.write_table(pa.table({name: pa.array([decimal.Decimal(v) for v in values], kinds[name])
                             for name, values in rows.items()}), tmp_path / "amounts.parquet")
    parquet = read(str(tmp_path / "amounts.parquet"), delay="3s")
    assert parquet == read(str(tmp_path / "amounts.csv"), delay="3s")
    assert parquet[0][0][4] == str(2**53) and parquet[0][0][5] == {"x": float(x[0])}


def test_a_time_column_of_durations_is_their_seconds(tmp_path):
    """A time kept as the duration since a recording began (Arrow's duration type, pandas'
    timedelta) stopped the run with an internal error (a tz-naive difference); its seconds
    are the times, as numbers are. Oracle: the same seconds as numbers in a CSV file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    x = np.linspace(-1, 1, 30)
    millis = np.arange(30) * 1500
    labels = np.where(np.cos(5 * x) > 0, "a", "b")
    pq.write_table(pa.table({"time": pa.array(millis, pa.duration("ms")),
                             "label_time": pa.array(millis + 4000, pa.duration("ms")),
                             "x": x, "label": labels}), tmp_path / "elapsed.parquet")
    pd.DataFrame({"time": millis / 1000, "label_time": (millis + 4000) / 1000, "x": x,
                  "label": labels}).to_csv(tmp_path / "seconds.csv", index=False)
    events = read(str(tmp_path / "elapsed.parquet"))
    assert events == read(str(tmp_path / "seconds.csv"))
    assert [e[0] for e in events[0][:3]] == [0.0, 1.5, 3.0]


def test_arff_comments_after_values_and_instance_weights_read_as_weka_reads_them(tmp_path):
    """Weka's reader ends a line at a '%' outside quotes, and takes `{w}` after a row's values
    as its instance weight. A comment after the values made the class 'b % checked' (every
    row a dead letter; after a header line, an unsupported type), and a weight made '4 values
    for 3 attributes'. Now a comment is left out and a weight of 1 means nothing: the file
    reads as the plain one. A row of another weight is a dead letter that says why (the
    evaluation weighs every instance alike)."""
    header = "@relation r\n@attribute x numeric\n@attribute note string\n" \
             "@attribute class {a,b}\n@data\n"
    rows = [f"{i / 10:.1f},'{i}% off',{'ab'[i % 3 == 0]}" for i in range(30)]
    marked = [f"{r} % checked" if i % 2 else f"{r}, {{1}}" for i, r in enumerate(rows)]
    marked += ["{0 9.5, 2 b}, {1.0}"]  # (a sparse row with its weight)
    noted = header.replace("numeric", "numeric % in metres").replace("@data", "@data % rows")
    (tmp_path / "marked.arff").write_text(noted + "\n".join(marked) + "\n")
    sparse = "{0 9.5, 1 '', 2 b}"
    (tmp_path / "plain.arff").write_text(header + "\n".join(rows + [sparse]) + "\n")
    options = '{"features": ["x"]}'
    assert read(f"{tmp_path / 'marked.arff'}{options}", delay="2")[0] == \
        read(f"{tmp_path / 'plain.arff'}{options}", delay="2")[0]
    weighted = [f"{r}, {{{1 + i % 2}}}" for i, r in enumerate(rows)]
    (tmp_path / "weighted.arff").write_text(header + "\n".join(weighted) + "\n")
    events, dead = read(f"{tmp_path / 'weighted.arff'}{options}", delay="2")
    assert [d["row"] for d in dead] == list(range(7, 36, 2))  # (data from line 6)
    assert dead[0]["reason"] == "instance weight 2 (Weka's weighted instances): every " \
        "instance weighs 1 here; remove the weights to evaluate such rows unweighted"
    assert len([e for e in events if e[3] == "instance"]) == 15
