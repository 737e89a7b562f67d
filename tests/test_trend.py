"""`delayed-eval trend`: one point per nightly run below a folder, with each run's own values,
intervals and pending share (read back from its files), in date order."""

import json
import shutil

import numpy as np
import pandas as pd
import pytest

from pipelines.cli import main
from pipelines.config import RunConfig
from pipelines.job import run


@pytest.fixture(scope="session")  # (computed once per test process)
def nightly(tmp_path_factory):
    root = tmp_path_factory.mktemp("fraud")
    # Written out of date order; the newest day's last 60 labels have not arrived yet.
    for day, seed in (("2026-11-03", 3), ("2026-11-01", 1), ("2026-11-02", 2)):
        rng = np.random.default_rng(seed)
        x = rng.normal(size=400)
        label = np.where(x + rng.normal(scale=0.5, size=400) > 0, "fraud", "ok").astype(object)
        if day == "2026-11-03":
            label[-60:] = None
        path = root / f"{day}.csv"
        pd.DataFrame({"x": x, "label": label}).to_csv(path, index=False)
        run(RunConfig(streams=[f"s={path}"], models=["gaussian-nb", "majority"], delay="10",
                      repredict="none", bootstrap=50, out=str(root / "runs" / f"date={day}"),
                      quiet=True, runner="direct"))
    return root / "runs"


def test_trend_has_each_runs_numbers_in_date_order(nightly, capsys):
    assert main(["trend", str(nightly), "--metric", "accuracy", "--metric", "kappa"]) == 0
    printed = capsys.readouterr().out
    assert "2026-11-01" in printed
    table = pd.read_parquet(nightly / "trend" / "trend.parquet")
    # Under the table, the night whose labels were still pending, and how far it may move.
    bounds = table[table["date"] == "2026-11-03"].set_index("model")["may_move_by"].dropna()
    assert [line for line in printed.splitlines() if "pending" in line] == [
        f"2026-11-03, s / {model}: labels still pending; accuracy may still move by up to "
        f"{bounds[model]:.4f}" for model in ("gaussian-nb", "majority")]
    assert {p.name for p in (nightly / "trend").iterdir()} == {
        "trend.parquet", "trend.csv", "trend.png", "trend.svg", "trend.pdf"}
    nb = table[(table["model"] == "gaussian-nb") & (table["metric"] == "accuracy")]
    assert nb["date"].tolist() == ["2026-11-01", "2026-11-02", "2026-11-03"]
    for row in table.itertuples():
        folder = nightly / f"date={row.date}"
        summary = pd.read_parquet(folder / "summary.parquet")  # (exact floats)
        mine = summary[(summary["model"] == row.model) & (summary["category"] == "initial")
                       & (summary["window"] == "cumulative") & summary["class"].isna()]
        values = dict(zip(mine["metric"], mine["value"]))
        assert row.value == values[row.metric]
        low, high = ("accuracy_wilson_low", "accuracy_wilson_high") if row.metric == "accuracy" \
            else ("kappa_bootstrap_low", "kappa_bootstrap_high")
        assert (row.low, row.high) == (values[low], values[high])
        counts = next(c for c in json.loads((folder / "manifest.json").read_text())["counts"]
                      if c["model"] == row.model)
        assert row.pending_share == counts["pending_at_end"] / counts["instances"]
        if row.metric == "accuracy":  # how far it may still move: k of n, m more to come
            m, p = counts["pending_at_end"], row.value
            assert row.may_move_by == np.ceil(m * max(p, 1 - p) / (row.n + m) * 1e4) / 1e4
        else:  # (κ is no proportion)
            assert np.isnan(row.may_move_by)
    shares = nb.set_index("date")["pending_share"]
    assert shares["2026-11-01"] == 0 and shares["2026-11-03"] > 0
    assert nb.set_index("date")["may_move_by"]["2026-11-03"] > 0


def test_each_nights_interval_is_drawn_as_a_bar(nightly, tmp_path, monkeypatch):
    """A band joins the nights, and a bar shows each one's interval, so a model scored on one
    night alone (no band) shows it too: the bars' ends are the table's low and high."""
    from matplotlib.collections import LineCollection

    import pipelines.figures
    from pipelines.trend import write_trend

    drawn = []
    monkeypatch.setattr(pipelines.figures, "_png", lambda plt, fig: drawn.append(fig) or {})
    table = write_trend(str(nightly), str(tmp_path / "t"), ["accuracy"])
    ax = drawn[0].axes[0]
    bars = [c for c in ax.collections if isinstance(c, LineCollection)]
    assert len(bars) == table["model"].nunique() == 2
    for model, collection in zip(dict.fromkeys(table["model"]), bars):
        mine = table[table["model"] == model]
        ends = [tuple(sorted(segment[:, 1])) for segment in collection.get_segments()]
        assert ends == list(zip(mine["low"], mine["high"])), model


def test_runs_linked_into_the_folder_are_read_once_each(nightly, tmp_path):
    """A night linked in (date=… -> where it was written) is read, a link back up is not a
    loop, and a run reached twice counts once."""
    root = tmp_path / "links"
    root.mkdir()
    for day in ("2026-11-01", "2026-11-02"):
        (root / f"date={day}").symlink_to(nightly / f"date={day}", target_is_directory=True)
    (root / "date=2026-11-02-copy").symlink_to(nightly / "date=2026-11-02",
                                                target_is_directory=True)
    (root / "again").symlink_to(root, target_is_directory=True)
    # A run below the folder, and a link to it that is walked first: read at its own path.
    shutil.copytree(nightly / "date=2026-11-03", root / "own" / "date=2026-11-03")
    (root / "a-latest").symlink_to(root / "own" / "date=2026-11-03", target_is_directory=True)
    assert main(["trend", str(root), "--metric", "accuracy", "--out",
                 str(tmp_path / "t")]) == 0
    table = pd.read_parquet(tmp_path / "t" / "trend.parquet")
    assert sorted(table.loc[table["model"] == "majority", "date"]) == [
        "2026-11-01", "2026-11-02", "2026-11-03"]


def test_regression_runs_trend_mae_and_print_in_date_order(tmp_path, capsys):
    """Without --metric, runs with no accuracy trend their MAE; a stream that a later night
    adds comes first in the table, yet the printed dates stay in order."""
    nights = {"2026-11-01": [("b", 0.5)], "2026-11-02": [("a", 0.7), ("b", 0.4)]}
    for day, values in nights.items():
        folder = tmp_path / f"date={day}"
        folder.mkdir()
        (folder / "manifest.json").write_text(json.dumps({"counts": []}))
        pd.DataFrame([{"stream": stream, "segment": None, "model": "lr", "category": "initial",
                       "bin": None, "window": "cumulative", "metric": metric, "class": None,
                       "value": value * scale, "n": 10}
                      for stream, value in values for metric, scale in (("mae", 1), ("rmse", 2))]
                     ).to_csv(folder / "summary.csv", index=False)
    assert main(["trend", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    assert printed.index("2026-11-01") < printed.index("2026-11-02")
    table = pd.read_parquet(tmp_path / "trend" / "trend.parquet")
    assert sorted(zip(table["date"], table["stream"], table["metric"], table["value"])) == [
        ("2026-11-01", "b", "mae", 0.5), ("2026-11-02", "a", "mae", 0.7),
        ("2026-11-02", "b", "mae", 0.4)]


def test_a_model_without_a_value_any_night_keeps_its_column(tmp_path, capsys):
    """A model that answered no prediction has NaN every night: its column was left out of the
    printed table (pandas' pivot drops columns of NaN alone), as if it had not run; a model
    run on one stream only gets no column on the other."""
    for day in ("2026-11-01", "2026-11-02"):
        folder = tmp_path / f"date={day}"
        folder.mkdir()
        (folder / "manifest.json").write_text(json.dumps({"counts": []}))
        pd.DataFrame([{"stream": stream, "segment": None, "model": model,
                       "category": "initial", "bin": None, "window": "cumulative",
                       "metric": "accuracy", "class": None, "value": value, "n": n}
                      for stream, model, value, n in (
                          ("s", "silent", float("nan"), 0), ("s", "nb", 0.9, 10),
                          ("t", "nb", 0.8, 10))]).to_csv(folder / "summary.csv", index=False)
    assert main(["trend", str(tmp_path)]) == 0
    header = capsys.readouterr().out.splitlines()[:2]
    assert header[0].split() == ["stream", "s", "t"]  # (s spans two columns, t one)
    assert sorted(header[1].split()) == ["model", "nb", "nb", "silent"]


def test_many_streams_over_a_few_nights_are_printed_a_row_each_within_the_terminal(
        tmp_path, capsys, monkeypatch):
    """6 streams × 2 models over 2 nights: a column each was a table of 12 columns, every
    line ~160 characters, wrapped by the terminal into noise; turned, each (stream, model) is
    a line and each night a column, every line within the terminal's 80 characters. Streams
    numbered in their names come in their numbers' order (s2 before s10), in the file too."""
    values, streams = {}, ["s1", "s2", "s3", "s9", "s10", "s11"]
    for night, day in enumerate(("2026-11-01", "2026-11-02")):
        folder = tmp_path / f"date={day}"
        folder.mkdir()
        (folder / "manifest.json").write_text(json.dumps({"counts": []}))
        rows = []
        for i, name in enumerate(reversed(streams)):
            for j, model in enumerate(("gaussian-nb", "hoeffding-tree")):
                values[name, model, day] = value = 0.5 + i / 100 + j / 10 + night / 1000
                rows.append({"stream": name, "segment": None, "model": model,
                             "category": "initial", "bin": None, "window": "cumulative",
                             "metric": "accuracy", "class": None, "value": value, "n": 10})
        pd.DataFrame(rows).to_csv(folder / "summary.csv", index=False)
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["trend", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1].startswith("written to") and max(map(len, lines[:-1])) <= 80
    assert lines[0].split() == ["date", "2026-11-01", "2026-11-02"]
    stream, printed = None, []
    for line in lines[2:2 + 12]:
        *names, first, second = line.split()
        stream = names[0] if len(names) == 3 else stream  # (a stream is named on its first row)
        model = names[-2]
        assert [first, second] == [f"{values[stream, model, day]:.4f}"
                                   for day in ("2026-11-01", "2026-11-02")]
        printed += [stream] if len(names) == 3 else []
    assert printed == streams
    written = pd.read_csv(tmp_path / "trend" / "trend.csv")
    assert list(dict.fromkeys(written["stream"])) == streams


def test_two_runs_of_one_date_are_each_a_row_named_by_its_folder(tmp_path, capsys,
                                                                 monkeypatch):
    """Two runs of one stream and model on one date (two folders of one partition, or runs
    dated by the day they finished): the table printed each date's last run alone, the
    pending lines named neither and the figure drew both at one point; each is now its row
    and its point, named below their common folder. Runs of other models on one date keep one
    row."""
    import pipelines.figures

    drawn = []
    monkeypatch.setattr(pipelines.figures, "_png", lambda plt, fig: drawn.append(fig) or {})
    runs = {"v1/date=2026-11-01": ("nb", 0.9, 0), "v2/date=2026-11-01": ("nb", 0.8, 5),
            "v3/date=2026-11-01": ("tree", 0.7, 0)}
    for where, (model, value, pending) in runs.items():
        folder = tmp_path / where
        folder.mkdir(parents=True)
        (folder / "manifest.json").write_text(json.dumps({"counts": [
            {"stream": "s", "model": model, "instances": 20, "pending_at_end": pending}]}))
        pd.DataFrame([{"stream": "s", "segment": None, "model": model, "category": "initial",
                       "bin": None, "window": "cumulative", "metric": "accuracy",
                       "class": None, "value": value, "n": 20 - pending}]
                     ).to_csv(folder / "summary.csv", index=False)
    assert main(["trend", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [line.split() for line in lines if "date=" in line and "pending" not in line]
    assert rows == [["2026-11-01", "v1/date=2026-11-01", "0.9000", "NaN"],
                    ["v2/date=2026-11-01", "0.8000", "NaN"],
                    ["v3/date=2026-11-01", "NaN", "0.7000"]]
    assert [line.split(":")[0] for line in lines if "pending" in line] == [
        "2026-11-01 (v2/date=2026-11-01), s / nb"]
    ticks = [t.get_text() for t in drawn[0].axes[0].get_xticklabels()]
    assert ticks == [f"2026-11-01 v{i}/date=2026-11-01" for i in (1, 2, 3)]
    shutil.rmtree(tmp_path / "v2")  # one run of each model: one row, as before
    assert main(["trend", str(tmp_path)]) == 0
    assert [line.split() for line in capsys.readouterr().out.splitlines()
            if "2026" in line] == [["2026-11-01", "0.9000", "0.7000"]]


def test_a_folder_without_runs_is_one_line(tmp_path, capsys):
    assert main(["trend", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "no finished run below it" in err


@pytest.mark.parametrize("lost", ["summary.csv", "manifest.json"])
def test_a_night_with_part_of_its_files_is_named_not_left_out(nightly, tmp_path, capsys, lost):
    """Such a folder was skipped: the trend went on without that night, saying nothing. A run
    being written (its staging folder) is no part of the trend."""
    root = tmp_path / "runs"
    shutil.copytree(nightly, root)
    (root / "date=2026-11-01" / ".staging-r1").mkdir()
    (root / "date=2026-11-01" / ".staging-r1" / "summary.csv").write_text("half a run")
    assert main(["trend", str(root), "--out", str(tmp_path / "trend")]) == 0
    (root / "date=2026-11-02" / lost).unlink()
    assert main(["trend", str(root)]) == 2
    assert capsys.readouterr().err == (
        f"delayed-eval: error: {root / 'date=2026-11-02'}: part of a run, without its {lost}; "
        f"run what wrote it again, or move the folder out of {root}\n")


def test_the_trend_of_nightly_runs_on_another_filesystem_is_that_of_a_copy_here(
        nightly, tmp_path, monkeypatch, capsys):
    """Nightly runs on gs:// or s3:// (a scheduler's --out): `trend` said to copy the folder
    here first. It reads the runs' summaries and manifests there now, and writes the trend
    there: the numbers of the same runs here, each run named where it is; a folder with part
    of a run is named, a staging folder is no run; nothing is left where it started."""
    from tests.helpers import RemoteFileSystem

    started = tmp_path / "started-here"
    started.mkdir()
    monkeypatch.chdir(started)
    copy = tmp_path / "copy"
    shutil.copytree(nightly, copy, ignore=shutil.ignore_patterns("trend"))
    (copy / "date=2026-11-01" / ".staging-r1").mkdir()
    (copy / "date=2026-11-01" / ".staging-r1" / "summary.csv").write_text("half a run")
    remote = f"{RemoteFileSystem.PREFIX}{copy}"
    args = ["--metric", "accuracy", "--metric", "kappa"]
    assert main(["trend", str(nightly), *args, "--out", str(tmp_path / "local-trend")]) == 0
    printed = capsys.readouterr().out
    assert main(["trend", remote, *args]) == 0
    assert capsys.readouterr().out == printed.replace(str(tmp_path / "local-trend"),
                                                      f"{remote}/trend")
    local = pd.read_parquet(tmp_path / "local-trend" / "trend.parquet")
    there = pd.read_parquet(copy / "trend" / "trend.parquet")
    assert there["run"].tolist() == [f"{remote}/{run[len(str(nightly)) + 1:]}"
                                     for run in local["run"]]
    pd.testing.assert_frame_equal(there.drop(columns="run"), local.drop(columns="run"))
    assert sorted(p.name for p in (copy / "trend").iterdir()) == \
        sorted(p.name for p in (tmp_path / "local-trend").iterdir())
    (copy / "date=2026-11-02" / "manifest.json").unlink()
    assert main(["trend", remote]) == 2
    assert capsys.readouterr().err == (
        f"delayed-eval: error: {remote}/date=2026-11-02: part of a run, without its "
        f"manifest.json; run what wrote it again, or move the folder out of {remote}\n")
    assert main(["trend", f"{remote}/none"]) == 2
    assert capsys.readouterr().err.startswith(
        f"delayed-eval: error: {remote}/none: no finished run below it")
    assert list(started.iterdir()) == []


def test_a_measure_no_run_reports_is_named_with_the_closest_one(nightly, capsys):
    # Even beside one that is reported: a trend without it would hide the typo.
    assert main(["trend", str(nightly), "--metric", "accuracy", "--metric",
                 "recall (frud)", "--out", str(nightly / "typo")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.endswith(
        "the runs report no initial recall (frud) (cumulative) (did you mean 'recall (fraud)'?)"
        "; name measures they report with --metric")


def test_a_metric_named_with_its_category_follows_it(nightly, tmp_path, capsys):
    """'final accuracy' and 'initial recall (fraud)', as --fail-if names measures: each is its
    own category's row of every run's summary, whatever --category says."""
    assert main(["trend", str(nightly), "--metric", "final accuracy", "--metric",
                 "initial recall (fraud)", "--category", "final", "--out",
                 str(tmp_path / "t")]) == 0
    table = pd.read_parquet(tmp_path / "t" / "trend.parquet")
    assert set(table["metric"]) == {"final accuracy", "initial recall (fraud)"}
    for row in table.itertuples():
        summary = pd.read_parquet(nightly / f"date={row.date}" / "summary.parquet")
        category, metric = row.metric.split(" ", 1)
        metric, label_class = (metric.split(" (")[0], "fraud") if "(" in metric \
            else (metric, None)
        mine = summary[(summary["model"] == row.model) & (summary["category"] == category)
                       & (summary["window"] == "cumulative") & (summary["metric"] == metric)
                       & (summary["class"].isna() if label_class is None
                          else summary["class"] == label_class)]
        assert row.category == category and row.value == mine["value"].item()
    # A backfill of a log without final predictions: one line, not an empty trend. With a
    # kind column naming none, or without one and one prediction per instance, it reports
    # no final measure; without one and with re-predictions (the join tells a final
    # prediction by its time: none is at its label's), it scored none (n 0).
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    kw = dict(streams=['synth:SEA{"n": 200}'], delay="10", quiet=True, runner="direct")
    run(RunConfig(models=["gaussian-nb"], out=str(tmp_path / "run"), **kw))
    log = pq.read_table(tmp_path / "run" / "predictions.parquet")
    initial = log.filter(pc.equal(log["kind"], "initial"))
    unreported = "the runs report no final accuracy (cumulative); name measures they report " \
                 "with --metric"
    for name, (table, line) in {
            "kinds": (initial, unreported),
            "times": (initial.drop(["kind"]), unreported),
            # (each instance predicted again half a second later, before its label)
            "repredicted": (pa.concat_tables([initial, initial.set_column(
                initial.schema.get_field_index("t"), "t", pc.add(initial["t"], 0.5))]).drop(
                ["kind"]), "no run scored final accuracy (cumulative)"),
    }.items():
        pq.write_table(table, tmp_path / f"{name}.parquet")
        run(RunConfig(models=[], predictions=str(tmp_path / f"{name}.parquet"),
                      out=str(tmp_path / name / "date=2026-11-01"), **kw))
        capsys.readouterr()
        assert main(["trend", str(tmp_path / name), "--metric", "final accuracy"]) == 2
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and line in err, name


def test_names_that_read_as_numbers_or_missing_stay_names(tmp_path, capsys):
    """A stream named `inf` (after inf.csv), models `1.0` and `NA`, a class `NA`: read back
    from summary.csv as the text summary.parquet holds, and trended as such."""
    from pipelines.results import SUMMARY_TEXT_COLUMNS, load_results

    rng = np.random.default_rng(5)
    x = rng.normal(size=200)
    path = tmp_path / "inf.csv"
    pd.DataFrame({"x": x, "label": np.where(x > 0, "NA", "EU")}).to_csv(path, index=False)
    out = tmp_path / "runs" / "date=2026-11-01"
    run(RunConfig(streams=[f'{path}{{"na_values": []}}'], models=["1.0=gaussian-nb",
                                                                  "NA=majority"],
                  delay="10", repredict="none", out=str(out), quiet=True, runner="direct"))
    read = load_results(str(out))
    written = pd.read_parquet(out / "summary.parquet")
    assert "NA" in set(read["class"]) and set(read["model"]) == {"1.0", "NA", "1.0 vs NA"}
    for column in SUMMARY_TEXT_COLUMNS:  # (missing: NaN in one, None in the other)
        assert read[column].fillna("").tolist() == written[column].fillna("").tolist()
    assert main(["trend", str(tmp_path / "runs")]) == 0
    table = pd.read_parquet(tmp_path / "runs" / "trend" / "trend.parquet")
    assert set(zip(table["stream"], table["model"])) == {("inf", "1.0"), ("inf", "NA")}


def test_a_night_without_the_measure_is_named_not_left_out_unsaid(tmp_path, capsys):
    """A regression night among classification ones had no accuracy: the trend went on
    without it, saying nothing."""
    for day, metric in (("2026-11-01", "accuracy"), ("2026-11-02", "mae")):
        folder = tmp_path / f"date={day}"
        folder.mkdir()
        (folder / "manifest.json").write_text(json.dumps({"counts": []}))
        pd.DataFrame([{"stream": "s", "segment": None, "model": "m", "category": "initial",
                       "bin": None, "window": "cumulative", "metric": metric, "class": None,
                       "value": 0.5, "n": 10}]).to_csv(folder / "summary.csv", index=False)
    assert main(["trend", str(tmp_path), "--metric", "accuracy"]) == 0
    assert f"left out, as they report none of these measures: runs " \
        f"{tmp_path / 'date=2026-11-02'}\n" in capsys.readouterr().out
