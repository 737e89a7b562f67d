"""Segments (`--segment COLUMN`): each slice's rows equal the measures computed on that slice's
predictions alone (a plain loop and scikit-learn on `predictions.parquet`), slices add up to the
whole, segmenting changes no overall number, and every replay path gives the same rows."""

import json
import os

import numpy as np
import pandas as pd
import pytest
from sklearn import metrics as sk

from pipelines.cli import main
from pipelines.config import RunConfig
from pipelines.job import run
from tests.helpers import read_csv, waveform_csv, without_notices

N, DELAY, WINDOW = 1500, 40, 200
SHARES = {"DE": 0.5, "FR": 0.35, "PL": 0.12, "LU": 0.03}


def segmented_csv(folder) -> tuple[str, list]:
    """Waveform rows with a `country` column that is not a feature -> (path, features)."""
    path, _ = waveform_csv(folder, N, seed=3)
    frame = read_csv(path)
    features = [c for c in frame.columns if c != "label"]
    rng = np.random.default_rng(11)
    frame["country"] = rng.choice(list(SHARES), size=N, p=list(SHARES.values()))
    frame.to_csv(path, index=False)
    return path, features


def evaluate(folder, name: str, segments=(), **options) -> str:
    out = os.path.join(folder, name)
    path, features = segmented_csv(folder)
    stream = f'w={path}{{"features": {features!r}}}'.replace("'", '"')
    run(RunConfig(streams=[stream], models=["nb=gaussian-nb", "nc=no-change"],
                  delay=str(DELAY), repredict="none", windows=[WINDOW], segments=list(segments),
                  out=out, quiet=True, runner="direct", **options))
    return out


@pytest.fixture(scope="session")  # (computed once per test process)
def segmented(tmp_path_factory):
    folder = tmp_path_factory.mktemp("segments")
    return folder, evaluate(folder, "by_country", ["country"])


def plain_measures(labels: list, predicted: list) -> dict:
    """Accuracy, κ, κ_per, κ_m, macro F1 of one slice's labels in their order, by a loop: the
    Persistent baseline is the slice's previous label (the first label itself at first), the
    Majority baseline the slice's most frequent label so far, this one included, ties to the
    label seen first in the slice; a label without a prediction counts in no score."""
    order: list = []
    counts: dict = {}
    prev = None
    hits = per = maj = 0
    ys, ps = [], []
    for y, p in zip(labels, predicted):
        if y not in counts:
            order.append(y)
        counts[y] = counts.get(y, 0) + 1
        persistent = y if prev is None else prev
        prev = y
        majority = max(order, key=lambda c: (counts[c], -order.index(c)))
        if p is None:
            continue
        ys.append(y)
        ps.append(p)
        hits, per, maj = hits + (p == y), per + (persistent == y), maj + (majority == y)
    n = len(ys)
    acc = hits / n
    return {"accuracy": acc, "kappa": sk.cohen_kappa_score(ys, ps),
            "kappa_t": (acc - per / n) / (1 - per / n), "kappa_m": (acc - maj / n) / (1 - maj / n),
            "macro_f1": sk.f1_score(ys, ps, average="macro", labels=sorted(set(ys) | set(ps))),
            "n": n}


def test_each_slice_equals_its_own_predictions_scored_alone(segmented):
    folder, out = segmented
    frame = read_csv(os.path.join(folder, "waveform.csv"))
    summary = read_csv(os.path.join(out, "summary.csv"))
    log = pd.read_parquet(os.path.join(out, "predictions.parquet"))
    assert set(summary["segment"].dropna()) == {f"country={c}" for c in SHARES}
    # Labels arrive DELAY after their instance, in row order: a slice's labels are its rows.
    for model in ("nb", "nc"):
        for kind in ("initial", "final"):
            rows = log[(log["model"] == model) & (log["kind"] == kind)]
            predicted = {i: None if pd.isna(p) else p
                         for i, p in zip(rows["id"].astype(int), rows["y_pred"])}
            for country in SHARES:
                mine = frame.index[frame["country"] == country]
                expected = plain_measures(list(frame["label"][mine]),
                                          [predicted.get(i) for i in mine])
                got = summary[(summary["segment"] == f"country={country}")
                              & (summary["model"] == model) & (summary["category"] == kind)
                              & (summary["window"] == "cumulative") & summary["class"].isna()]
                values = dict(zip(got["metric"], got["value"]))
                for metric in ("accuracy", "kappa", "kappa_t", "kappa_m", "macro_f1"):
                    assert values[metric] == pytest.approx(expected[metric], abs=1e-12), \
                        (model, kind, country, metric)
                assert set(got.loc[got["metric"].isin(["accuracy", "kappa_m"]), "n"]) == \
                    {expected["n"]}
                # The sliding window holds the slice's last WINDOW labels.
                last = mine[-WINDOW:]
                scored = [(y, predicted.get(i)) for i, y in zip(last, frame["label"][last])
                          if predicted.get(i) is not None]
                window = summary[(summary["segment"] == f"country={country}")
                                 & (summary["model"] == model) & (summary["category"] == kind)
                                 & (summary["window"] == f"w={WINDOW}")
                                 & (summary["metric"] == "accuracy")]
                assert float(window["value"].iloc[0]) == pytest.approx(
                    np.mean([y == p for y, p in scored]), abs=1e-12)


def test_slices_add_up_to_the_whole_and_change_no_overall_number(segmented, tmp_path):
    folder, out = segmented
    summary = read_csv(os.path.join(out, "summary.csv"))
    counted = summary[(summary["metric"] == "accuracy") & (summary["window"] == "cumulative")
                      & summary["category"].isin(["initial", "final"])]
    whole = counted[counted["segment"].isna()].set_index(["model", "category"])["n"]
    parts = counted[counted["segment"].notna()].groupby(["model", "category"])["n"].sum()
    assert (whole.sort_index() == parts.sort_index()).all() and whole.sum() > 0
    # The country column is read only to segment by: the models never see it.
    plain = read_csv(os.path.join(evaluate(tmp_path, "plain"), "summary.csv"))
    overall = summary[summary["segment"].isna()].reset_index(drop=True)
    pd.testing.assert_frame_equal(overall.drop(columns=["run_id", "segment"]),
                                  plain.drop(columns=["run_id", "segment"]))
    curves = pd.read_parquet(os.path.join(out, "curves.parquet"))
    curves_plain = pd.read_parquet(os.path.join(tmp_path, "plain", "curves.parquet"))
    pd.testing.assert_frame_equal(curves[curves["segment"].isna()].reset_index(drop=True),
                                  curves_plain)


@pytest.mark.parametrize("replay", ["per-key", "grouped", "stateful"])
def test_every_replay_path_gives_the_same_slices(segmented, tmp_path, replay):
    _, out = segmented  # auto: per-stream, scored as it drains
    other = evaluate(tmp_path, replay, ["country"], replay=replay)
    for name in ("summary.parquet", "curves.parquet"):
        a = pd.read_parquet(os.path.join(out, name)).drop(columns="run_id", errors="ignore")
        b = pd.read_parquet(os.path.join(other, name)).drop(columns="run_id", errors="ignore")
        pd.testing.assert_frame_equal(a, b)


def test_small_slices_are_left_out_but_still_count_overall(segmented, tmp_path):
    _, out = segmented
    small = evaluate(tmp_path, "small", ["country"], min_segment_size=100)
    summary = pd.read_parquet(os.path.join(small, "summary.parquet"))
    everything = pd.read_parquet(os.path.join(out, "summary.parquet"))
    assert set(summary["segment"].dropna()) == {"country=DE", "country=FR", "country=PL"}
    curves = pd.read_parquet(os.path.join(small, "curves.parquet"))
    assert set(curves["segment"].dropna()) == {"country=DE", "country=FR", "country=PL"}
    kept = everything[everything["segment"] != "country=LU"]
    pd.testing.assert_frame_equal(summary.drop(columns="run_id").reset_index(drop=True),
                                  kept.drop(columns="run_id").reset_index(drop=True))


def test_a_generators_feature_named_by_a_number_is_a_segment_column(tmp_path):
    """River's LED names its features 0..6; `--segment 0` slices by the first one. Oracle: the
    generator's own rows, each slice's labels and logged initial predictions by the loop."""
    import itertools

    from river.datasets import synth

    run(RunConfig(streams=['led=synth:LED{"n": 1200, "seed": 2, "noise_percentage": 0.1}'],
                  models=["gaussian-nb"], delay=str(DELAY), repredict="none", segments=["0"],
                  out=str(tmp_path), quiet=True, runner="direct"))
    rows = list(itertools.islice(synth.LED(seed=2, noise_percentage=0.1), 1200))
    summary = read_csv(tmp_path / "summary.csv")
    log = pd.read_parquet(tmp_path / "predictions.parquet")
    initial = log[log["kind"] == "initial"]
    predicted = dict(zip(initial["id"].astype(int), initial["y_pred"]))
    assert set(summary["segment"].dropna()) == {"0=0", "0=1"}
    for value in (0, 1):
        mine = [i for i, (x, _) in enumerate(rows) if x[0] == value]
        expected = plain_measures([rows[i][1] for i in mine],
                                  [None if pd.isna(predicted[i]) else int(predicted[i])
                                   for i in mine])
        got = summary[(summary["segment"] == f"0={value}") & (summary["category"] == "initial")
                      & (summary["window"] == "cumulative") & (summary["metric"] == "accuracy")
                      & summary["class"].isna()]
        assert got["value"].item() == pytest.approx(expected["accuracy"], abs=1e-12)
        assert got["n"].item() == expected["n"]


def test_a_regressors_slices_are_printed_with_their_mae_and_no_interval(tmp_path, capsys):
    rng = np.random.default_rng(5)
    x = rng.normal(size=200)
    country = rng.choice(["DE", "FR"], size=200)
    path = tmp_path / "r.csv"
    pd.DataFrame({"x": x, "country": country, "y": 2 * x + (country == "DE")}).to_csv(
        path, index=False)
    assert main(["run", "--stream", f'r={path}{{"label": "y", "features": ["x"]}}', "--model",
                 "linear-regression", "--delay", "5", "--repredict", "none", "--segment",
                 "country", "--out", str(tmp_path / "o"), "--runner", "direct"]) == 0
    lines = capsys.readouterr().out.splitlines()
    heading = lines.index("segments: initial and final scores")  # (an MAE has no Wilson interval)
    assert lines[heading + 1].split() == ["stream", "segment", "model", "scored", "labels",
                                          "initial", "mae", "final", "mae"]
    de = lines[heading + 2].split()
    frame = pd.read_parquet(tmp_path / "o" / "predictions.parquet")
    truth = pd.read_csv(path)
    initial = frame[frame["kind"] == "initial"]
    rows = initial["id"].astype(int).to_numpy()
    errors = initial["y_pred"].astype(float).to_numpy() - truth["y"].to_numpy()[rows]
    plain = np.abs(errors[truth["country"].to_numpy()[rows] == "DE"]).mean()
    assert de[:4] == ["r", "country=DE", "linear-regression", str((country == "DE").sum())]
    assert de[4] == f"{plain:.3f}"


def test_a_segment_column_the_stream_does_not_have_is_one_line(tmp_path, capsys):
    status = main(["run", "--stream", 'synth:SEA{"n": 50}', "--model", "no-change",
                   "--delay", "5", "--segment", "country", "--out", str(tmp_path / "o"),
                   "--runner", "direct"])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1
    assert "--segment country: stream sea has no instance column 'country'; its columns" in err[0]


def test_a_misspelt_segment_column_is_named_with_the_closest_column(tmp_path, capsys):
    path, _ = segmented_csv(tmp_path)
    status = main(["run", "--stream", path, "--model", "no-change", "--delay", "5",
                   "--segment", "contry", "--out", str(tmp_path / "o"), "--runner", "direct"])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1
    assert "has no instance column 'contry' (did you mean 'country'?); its columns" in err[0]


def test_a_column_of_fractional_numbers_is_refused_as_a_segment(tmp_path, capsys):
    """A slice per distinct value of a measurement: one line instead of thousands of slices."""
    path, features = segmented_csv(tmp_path)
    status = main(["run", "--stream", path, "--model", "no-change", "--delay", "5",
                   "--segment", features[0], "--out", str(tmp_path / "o"), "--runner", "direct"])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1
    assert f"column {features[0]!r} holds numbers with fractions (" in err[0]


def test_a_column_of_ids_is_refused_as_a_segment(tmp_path, capsys):
    """A slice per customer would take ~0.3 s each to score (minutes for a few thousand): one
    line instead; a column of 20 categories in the same rows is accepted."""
    path, features = segmented_csv(tmp_path)
    frame = read_csv(path)
    frame["customer"] = [f"c{i}" for i in range(len(frame))]
    frame["store"] = [f"s{i % 20}" for i in range(len(frame))]
    frame.to_csv(path, index=False)
    stream = f'w={path}{{"features": {features!r}}}'.replace("'", '"')
    args = ["run", "--stream", stream, "--model", "no-change", "--delay", "5", "--out",
            str(tmp_path / "o"), "--runner", "direct", "--quiet"]
    assert main([*args, "--segment", "customer"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--segment customer: stream w's column 'customer' has 1,000 " \
        "distinct values in its first 1,000 rows (c0, c1, c2, …), nearly a slice per " \
        "instance" in err[0]
    assert main([*args, "--segment", "store", "--curve-every", "1000"]) == 0
    # The slices in order, the numbers in their names by value (s2 before s10).
    summary = read_csv(tmp_path / "o" / "summary.csv")
    assert list(dict.fromkeys(summary["segment"].dropna())) == [f"store=s{i}" for i in range(20)]


@pytest.mark.parametrize("spilled", [True, False])
def test_curves_of_more_groups_than_files_open_at_once_are_merged_alike(tmp_path, monkeypatch,
                                                                        spilled):
    """A run with many slices has more curve groups (slice × measure) than a process may open
    at once; with one spill file open at a time, a key's parts (each with rows of every group)
    still merge into every row once, in row order — as they do read at once, in memory (a
    key's parts under `IN_MEMORY_KEY` bytes)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    import pipelines.write as write
    from transforms.vocabulary import CURVE_SCHEMA

    def part(labels):
        return pa.Table.from_pylist([
            {"stream": "s", "segment": segment, "model": "m", "category": "initial",
             "window": "cumulative", "metric": metric, "value": labels / 10, "n": labels,
             "labels": labels}
            for segment in (None, "c=DE", "c=FR") for metric in ("accuracy", "kappa")],
            CURVE_SCHEMA)

    monkeypatch.setattr(write, "OPEN_SPILLS", 1)
    if spilled:
        monkeypatch.setattr(write, "IN_MEMORY_KEY", 0)
    folder = tmp_path / "parts"
    parts = [write._write_curve_part(part(labels), str(folder)) for labels in (100, 200)]
    write._merge_curve_parts(parts, str(folder), str(tmp_path / "curves.parquet"), row_group=4)
    merged = pq.read_table(tmp_path / "curves.parquet").to_pylist()
    # The oracle: both parts' rows sorted as the file orders them, by a plain sort.
    expected = sorted(part(100).to_pylist() + part(200).to_pylist(), key=lambda r: (
        r["metric"], r["segment"] or "", r["labels"]))
    assert merged == expected


def test_a_backfill_of_the_run_gives_the_same_slices(tmp_path):
    # A feature as the segment (the models see it, as without --segment), re-evaluation with
    # bins and Ψα, a window, a fading factor and a comparison, per slice.
    kw = dict(streams=['synth:Agrawal{"n": 1200, "seed": 4}'], delay="60", bins=10,
              repredict="every_k_labels:3", windows=[200], fadings=[0.99],
              segments=["elevel"], curve_every=200, quiet=True, run_id="same", runner="direct")
    replayed = run(RunConfig(models=["no-change", "gaussian-nb"], out=str(tmp_path / "run"),
                             **kw))
    assert {"binned", "intermediate", "comparison"} <= set(
        replayed.loc[replayed["segment"] == "elevel=2", "category"])
    run(RunConfig(models=[], out=str(tmp_path / "backfill"),
                  predictions=str(tmp_path / "run" / "predictions.parquet"), **kw))
    texts = [(tmp_path / d / "summary.csv").read_text() for d in ("run", "backfill")]
    assert texts[0] == texts[1]
    curves = [pd.read_parquet(tmp_path / d / "curves.parquet") for d in ("run", "backfill")]
    pd.testing.assert_frame_equal(*curves)


def test_a_threshold_on_every_slice_of_a_column_names_the_slices_it_failed(segmented, tmp_path,
                                                                           capsys):
    folder, out = segmented
    summary = read_csv(os.path.join(out, "summary.csv"))
    accuracy = summary[(summary["model"] == "nb") & (summary["category"] == "initial")
                       & (summary["metric"] == "accuracy") & (summary["window"] == "cumulative")
                       & summary["segment"].notna()].set_index("segment")["value"]
    bar = float(accuracy.median())  # some slices below it, some above
    path = os.path.join(folder, "waveform.csv")
    features = [c for c in read_csv(path, nrows=1).columns if c not in ("label", "country")]
    stream = f'w={path}{{"features": {features!r}}}'.replace("'", '"')
    args = ["run", "--stream", stream, "--model", "nb=gaussian-nb", "--model", "nc=no-change",
            "--delay", str(DELAY), "--repredict", "none", "--window", str(WINDOW),
            "--segment", "country", "--out", str(tmp_path / "o"), "--runner", "direct",
            "--quiet", "--fail-if", f"nb: initial accuracy [country] < {bar}",
            "--fail-if", "nb: initial accuracy [country=XX] < 0.1"]
    assert main(args) == 3
    lines = without_notices(capsys.readouterr().err).strip().splitlines()
    below = sorted(s for s, v in accuracy.items() if v < bar)
    prefix = "delayed-eval: threshold crossed: "
    assert [line[len(prefix):].split(":")[0] for line in lines] == \
        [f"w / nb / {s}" for s in below] + ["w / nb / country=XX"]
    assert lines[-1].endswith("(the results have no such measure: no slice country=XX)")
    # A slice of a column that is not segmented by is a mistake before the run.
    assert main([*args[:-4], "--fail-if", "initial accuracy [region] < 0.5"]) == 2
    assert "'region' is not a --segment column" in capsys.readouterr().err


def test_the_report_has_a_table_of_the_slices_with_their_intervals(segmented):
    _, out = segmented
    from pipelines.report import write_report

    page = open(write_report(out), encoding="utf-8").read()
    assert "<h2>Segments</h2>" in page
    summary = read_csv(os.path.join(out, "summary.csv"))
    for country in SHARES:
        mine = summary[(summary["segment"] == f"country={country}") & (summary["model"] == "nb")
                       & (summary["category"] == "final") & (summary["window"] == "cumulative")
                       & summary["class"].isna()].set_index("metric")["value"]
        cell = (f"{mine['accuracy']:.3f} [{mine['accuracy_wilson_low']:.3f}, "
                f"{mine['accuracy_wilson_high']:.3f}]")
        assert cell in page, country


def test_the_manifest_gives_the_streams_features_as_given(segmented):
    """The segment column is read for the slices, but the manifest's stream spec lists the
    features the user gave, without it."""
    folder, out = segmented
    with open(os.path.join(out, "manifest.json"), encoding="utf-8") as f:
        manifest = json.load(f)
    given = [c for c in read_csv(os.path.join(folder, "waveform.csv"), nrows=1).columns
             if c not in ("label", "country")]
    assert manifest["streams"]["w"]["spec"]["options"]["features"] == given


def test_a_column_read_only_for_slices_may_be_missing_and_changes_no_row(tmp_path):
    """A --segment column that the `features` option leaves out may be empty in some rows and
    absent from a whole partition: those rows are in the `(missing)` slice, not dead letters,
    and the whole stream's rows equal the run without --segment; each slice's final accuracy
    equals a loop over the final predictions of its rows."""
    rng = np.random.default_rng(5)
    folder = tmp_path / "parts"
    folder.mkdir()
    n = 120
    x, y = rng.normal(size=2 * n), rng.integers(0, 2, 2 * n)
    pd.DataFrame({"id": range(n), "time": range(n), "x": x[:n], "label": y[:n]}).to_csv(
        folder / "a.csv", index=False)  # no region column at all
    region = rng.choice(["n", "s"], n).astype(object)
    region[::4] = None  # empty cells
    pd.DataFrame({"id": range(n, 2 * n), "time": range(n, 2 * n), "x": x[n:], "label": y[n:],
                  "region": region}).to_csv(folder / "b.csv", index=False)
    stream = f's={folder}{{"features": ["x"]}}'
    kw = dict(streams=[stream], models=["gaussian-nb"], delay="5", repredict="none",
              quiet=True, runner="direct", run_id="same")
    run(RunConfig(out=str(tmp_path / "whole"), **kw))
    run(RunConfig(out=str(tmp_path / "sliced"), segments=["region"], **kw))
    whole = read_csv(tmp_path / "whole" / "summary.csv")
    sliced = read_csv(tmp_path / "sliced" / "summary.csv")
    pd.testing.assert_frame_equal(sliced[sliced["segment"].isna()].reset_index(drop=True),
                                  whole, check_dtype=False)
    with open(tmp_path / "sliced" / "manifest.json", encoding="utf-8") as f:
        assert json.load(f)["streams"]["s"]["read"]["dead_letters"] == 0
    log = pd.read_parquet(tmp_path / "sliced" / "predictions.parquet")
    final = log[log["kind"] == "final"].set_index("id")["y_pred"]  # (text: the log's type)
    names = ["(missing)"] * n + [r if isinstance(r, str) else "(missing)" for r in region]
    expected = {}
    for i in range(2 * n):
        if str(i) in final.index and isinstance(final[str(i)], str):  # scored
            expected.setdefault(f"region={names[i]}", []).append(final[str(i)] == str(y[i]))
    rows = sliced[(sliced["category"] == "final") & (sliced["metric"] == "accuracy")
                  & (sliced["window"] == "cumulative") & sliced["segment"].notna()]
    got = {s: (v, k) for s, v, k in zip(rows["segment"], rows["value"], rows["n"])}
    assert got == {s: (pytest.approx(np.mean(h)), len(h)) for s, h in expected.items()}
    assert set(got) == {"region=(missing)", "region=n", "region=s"}


def test_an_arff_attribute_no_model_sees_segments_the_stream(segmented, tmp_path):
    """An ARFF file's nominal attribute left out of `features` is read to segment by, as a
    table's column is (it was refused as no instance column): each slice's accuracy is its own
    predictions' (a loop), and the whole stream's rows are those of the run without it."""
    folder, _ = segmented
    frame = read_csv(os.path.join(folder, "waveform.csv"))
    features = [c for c in frame.columns if c not in ("label", "country")]
    path = tmp_path / "w.arff"
    with open(path, "w") as f:
        f.write("@relation w\n" + "".join(f"@attribute {c} numeric\n" for c in features)
                + f"@attribute country {{{','.join(SHARES)}}}\n"
                f"@attribute class {{{','.join(sorted(set(frame['label'])))}}}\n@data\n")
        frame[[*features, "country", "label"]].to_csv(f, header=False, index=False)
    stream = f'w={path}{{"features": {json.dumps(features)}}}'
    outs = {}
    for name, segments in (("sliced", ["country"]), ("whole", [])):
        outs[name] = str(tmp_path / name)
        run(RunConfig(streams=[stream], models=["nb=gaussian-nb"], delay=str(DELAY),
                      repredict="none", segments=segments, out=outs[name], quiet=True,
                      runner="direct"))
    summary = read_csv(os.path.join(outs["sliced"], "summary.csv"))
    whole = read_csv(os.path.join(outs["whole"], "summary.csv"))
    pd.testing.assert_frame_equal(
        summary[summary["segment"].isna()].reset_index(drop=True).drop(columns=["run_id",
                                                                                "segment"]),
        whole.drop(columns=["run_id", "segment"]))
    log = pd.read_parquet(os.path.join(outs["sliced"], "predictions.parquet"))
    initial = log[log["kind"] == "initial"]
    predicted = {i: None if pd.isna(p) else p
                 for i, p in zip(initial["id"].astype(int), initial["y_pred"])}
    for country in SHARES:
        mine = frame.index[frame["country"] == country]
        hits = [predicted[i] == str(y) for i, y in zip(mine, frame["label"][mine])
                if predicted.get(i) is not None]
        got = summary[(summary["segment"] == f"country={country}")
                      & (summary["category"] == "initial") & (summary["window"] == "cumulative")
                      & (summary["metric"] == "accuracy")]
        assert (float(got["value"].iloc[0]), int(got["n"].iloc[0])) == \
            (pytest.approx(np.mean(hits), abs=1e-12), len(hits))


@pytest.mark.parametrize("replay", ["grouped", "per-stream"])
def test_two_streams_with_slices_write_one_summary(tmp_path, replay):
    """Two segmented streams: a batch of summary rows may hold none with a slice, and drift
    rows have no segment key at all (a column of NaN, a float, to pandas): it joins the other
    batches' text all the same, and each stream has its overall rows and its slices."""
    rng = np.random.default_rng(5)
    streams = []
    for name, n in (("s", 250), ("t", 400)):
        x = rng.normal(size=(n, 2))
        frame = pd.DataFrame({"time": np.cumsum(rng.exponential(10.0, n)), "x1": x[:, 0],
                              "x2": x[:, 1], "seg": rng.choice(["a", "b", "c"], size=n),
                              "label": np.digitize(x[:, 0], [-0.5, 0.5])})
        frame.to_csv(tmp_path / f"{name}.csv", index=False)
        streams.append(f'{name}={tmp_path / f"{name}.csv"}{{"features": ["x1", "x2"]}}')
    out = str(tmp_path / "out")
    run(RunConfig(streams=streams, models=["majority"], delay="5", segments=["seg"], out=out,
                  quiet=True, runner="direct", replay=replay))
    summary = pd.read_parquet(os.path.join(out, "summary.parquet"))
    initial = summary[(summary["category"] == "initial") & (summary["metric"] == "accuracy")]
    assert sorted(zip(initial["stream"], initial["segment"].fillna(""))) == [
        (stream, piece) for stream in "st" for piece in ("", "seg=a", "seg=b", "seg=c")]
