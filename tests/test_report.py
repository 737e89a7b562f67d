"""The report (HTML + PNG figures), progress lines and counters, and the Python API."""

import base64
import collections
import html
import json
import re

import numpy as np
import pandas as pd
import pytest

from pipelines import evaluate, load_results, write_report
from pipelines.cli import main
from pipelines.report import _counts_table
from pipelines.run_files import RunFiles, period_mean
from tests.helpers import read_csv

FIGURES = {"initial_final", "binned", "weights", "intermediate", "forgetting", "comparison",
           "drift", "confusion", "reliability", "roc_pr", "profile"}
STREAM = 'sea=synth:SEA{"n": 1500, "seed": 3, "drift": [{"at": 750, "width": 1, "variant": 2}]}'


@pytest.fixture(scope="session")  # (computed once per test process)
def finished_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    summary = evaluate([STREAM], ["no-change", "gaussian-nb", "hoeffding-tree"], delay="50",
                       out=str(out), runner="direct", bins=10, repredict="every_k_labels:5",
                       windows=[300], fadings=[0.99], curve_every=100, report=True, auc=True,
                       holdout="500:100")
    return out, summary


def test_report_has_every_figure_as_a_real_png_embedded_in_the_html(finished_run):
    out, _ = finished_run
    import matplotlib.image

    figures = out / "figures"
    assert {p.stem for p in figures.iterdir()} == FIGURES
    assert {p.suffix for p in figures.iterdir()} == {".png", ".svg", ".pdf"}
    page = (out / "report.html").read_text(encoding="utf-8")
    embedded = re.findall(r"data:image/png;base64,([A-Za-z0-9+/=]+)", page)
    assert len(embedded) == len(FIGURES)
    for name in FIGURES:
        png = (figures / f"{name}.png").read_bytes()
        assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 10_000
        pixels = matplotlib.image.imread(figures / f"{name}.png")
        assert pixels.shape[0] >= 300 and pixels.shape[1] >= 500
        # Colours to 1/100 per channel, each pixel one integer (unique over rows sorts slowly).
        levels = (pixels.round(2) * 100).round().astype(np.int64)
        colours = np.unique(levels @ 101 ** np.arange(levels.shape[-1]))
        assert len(colours) > 20  # lines, text and fills, not a blank canvas
        assert base64.b64encode(png).decode("ascii") in embedded
        assert f"id='{name}'" in page
        assert (figures / f"{name}.pdf").read_bytes().startswith(b"%PDF")
        svg = (figures / f"{name}.svg").read_text(encoding="utf-8")
        assert "<svg" in svg and "MAE" not in svg  # a classification run: no MAE labels
    # No external assets: nothing is fetched when the page opens offline.
    assert not re.search(r"(src|href)=['\"](https?:|//|[^d'\"#])", page)
    for heading in ("Summary (layout of Table II)", "Stream profile", "Counts"):
        assert heading in page


def test_report_tables_show_the_runs_numbers(finished_run):
    out, summary = finished_run
    page = (out / "report.html").read_text(encoding="utf-8")
    accuracy = summary.query("category == 'initial' and metric == 'accuracy' and "
                             "window == 'cumulative' and model == 'gaussian-nb'")["value"]
    assert f"{accuracy.iloc[0]:.4f}" in page
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["counts"][0]["instances"] == 1500
    assert "<td>1500</td>" in page


def test_report_without_re_evaluation_says_what_is_missing(tmp_path):
    evaluate(['synth:SEA{"n": 300, "seed": 1}'], ["no-change"], delay="10", out=str(tmp_path),
             repredict="none", curve_every=100)
    page = open(write_report(str(tmp_path)), encoding="utf-8").read()
    figures = {p.stem for p in (tmp_path / "figures").iterdir()}
    assert figures == {"initial_final", "forgetting", "drift", "confusion", "reliability",
                       "profile"}
    assert "needs re-evaluation" in page and "needs two or more models" in page


def test_a_curve_without_any_value_is_neither_drawn_nor_in_the_legend(tmp_path):
    """A backfill of a log without final predictions: the initial-vs-final figure shows the
    initial curve alone, its legend names no final one."""
    stream = 'synth:SEA{"n": 300, "seed": 1}'
    evaluate(stream, "no-change", delay="10", out=str(tmp_path / "run"), repredict="none",
             curve_every=100)
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    log = pq.read_table(tmp_path / "run" / "predictions.parquet")
    pq.write_table(log.filter(pc.equal(log["kind"], "initial")), tmp_path / "initial.parquet")
    evaluate(stream, [], delay="10", out=str(tmp_path / "backfill"), curve_every=100,
             predictions=str(tmp_path / "initial.parquet"), report=True)
    svg = (tmp_path / "backfill" / "figures" / "initial_final.svg").read_text(encoding="utf-8")
    assert "no-change initial" in svg and "no-change final" not in svg
    # Titles promise no final: "Initial vs final" named a comparison the page cannot show.
    assert "Initial performance over T" in svg
    confusion = (tmp_path / "backfill" / "figures" / "confusion.svg").read_text(encoding="utf-8")
    assert "Confusion matrices: initial (share" in confusion and ": final" not in confusion
    page = (tmp_path / "backfill" / "report.html").read_text(encoding="utf-8")
    assert "Initial over T" in page and "vs final" not in page


def test_the_comparison_legend_names_pairs_in_the_models_configured_order(tmp_path):
    """As the summary names them (A first, as configured), not sorted by name as the curves'
    rows are."""
    evaluate('synth:SEA{"n": 300, "seed": 1}', ["no-change", "majority", "gaussian-nb"],
             delay="10", out=str(tmp_path), repredict="none", report=True)
    svg = (tmp_path / "figures" / "comparison.svg").read_text(encoding="utf-8")
    pairs = ["no-change vs majority", "no-change vs gaussian-nb", "majority vs gaussian-nb"]
    assert sorted(pairs, key=svg.index) == pairs


def test_long_model_names_leave_room_for_the_panel_beside_their_legend(tmp_path):
    """A pipeline's name, and a pair of two such names, are put on lines of at most 36
    characters in the legends beside the panels; on one line the comparison's left legend ran
    under the right panel, and matplotlib warned that it could not lay the figure out."""
    import warnings

    models = ["one-hot-text | gaussian-nb",
              'river.multiclass.OneVsRestClassifier{"classifier": {"logistic-regression": {}}}']
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        evaluate('synth:SEA{"n": 300, "seed": 1}', models, delay="10", out=str(tmp_path),
                 repredict="none", report=True)
    assert [str(w.message) for w in caught if "layout" in str(w.message)] == []
    svg = (tmp_path / "figures" / "comparison.svg").read_text(encoding="utf-8")
    assert "one-hot-text | gaussian-nb vs" in svg and "one-hot-text | gaussian-nb vs O" not in svg


def test_models_that_scored_no_instance_in_common_are_said_so_not_too_few(tmp_path, capsys):
    """A backfill of two model versions, each serving half the requests: no pair to compare,
    and the report says why (it said "needs two or more models"), and so does the terminal."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from pipelines.figures import _why_no_comparison
    from pipelines.run_files import RunFiles

    stream = 'synth:SEA{"n": 300, "seed": 1}'
    evaluate(stream, "no-change", delay="10", out=str(tmp_path / "run"), repredict="none")
    log = pq.read_table(tmp_path / "run" / "predictions.parquet")
    versions = np.where(np.array(log["id"].to_pylist(), dtype=int) < 150, "v1", "v2")
    log = log.set_column(log.schema.get_field_index("model"), "model",
                         pa.array(versions, log.schema.field("model").type))
    pq.write_table(log, tmp_path / "versions.parquet")
    capsys.readouterr()
    assert main(["backfill", "--stream", stream, "--predictions",
                 str(tmp_path / "versions.parquet"), "--delay", "10", "--out",
                 str(tmp_path / "backfill"), "--runner", "direct"]) == 0
    assert "\nsea: v1 and v2 scored no instance in common, so they are not compared" in \
        capsys.readouterr().out
    run = RunFiles.read(str(tmp_path / "backfill"))
    assert run.models == ["v1", "v2"] and "comparison" not in set(run.summary["category"])
    assert _why_no_comparison(run).startswith("the models scored no instance in common")
    assert _why_no_comparison(RunFiles.read(str(tmp_path / "run"))) == \
        "needs two or more models"


def test_a_regression_report_compares_without_mcnemar_and_reads_its_mae_the_right_way(tmp_path):
    """McNemar counts errors, so two regressors are compared by Q and Diebold-Mariano, and the
    binned figure's reading says that a falling MAE is the improvement."""
    evaluate('f=synth:Friedman{"n": 300, "seed": 1}', ["linear-regression", "knn-regressor"],
             delay="20", out=str(tmp_path), curve_every=100, report=True)
    svg = (tmp_path / "figures" / "comparison.svg").read_text(encoding="utf-8")
    assert "Q = log" in svg and "Diebold-Mariano" in svg and "McNemar" not in svg
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "a falling MAE" in page


def test_captions_say_when_the_initial_scores_rest_on_fewer_labels(tmp_path):
    """GaussianNB answers none before its first label, so on SEA with a delay of 40 its
    initial scores rest on fewer labels than its final ones and the later bins (which the
    first 40 instances join from their first re-prediction, with a model that knew little):
    bin 0 and bin B+1 of a stationary stream differ for that alone. Logistic regression
    answers from the start: no gap."""
    from pipelines.figures import _fewer_at_arrival

    evaluate('s=synth:SEA{"n": 400, "seed": 2}', ["logistic-regression", "gaussian-nb"],
             delay="40", out=str(tmp_path / "both"), curve_every=100)
    counts = {c["model"]: c for c in
              json.loads((tmp_path / "both" / "manifest.json").read_text())["counts"]}
    nb = counts["gaussian-nb"]
    assert nb["scored_final"] - nb["scored_initial"] == 39  # (instance 0: no final either)
    assert _fewer_at_arrival(RunFiles.read(str(tmp_path / "both"))) == \
        f"s / gaussian-nb: {nb['scored_initial']} of {nb['scored_final']} labels"
    evaluate('s=synth:SEA{"n": 400, "seed": 2}', "logistic-regression", delay="40",
             out=str(tmp_path / "lr"), curve_every=100)
    lr = json.loads((tmp_path / "lr" / "manifest.json").read_text())["counts"][0]
    assert lr["scored_initial"] == lr["scored_final"] == 400
    assert _fewer_at_arrival(RunFiles.read(str(tmp_path / "lr"))) is None


def test_the_reports_facts_and_slices_are_those_of_the_terminal(tmp_path):
    """The delay a stream's own option gives (not --delay's default), and each slice's
    positive-class precision with its interval, as the terminal's segment table has them."""
    from pipelines.tables import segment_table

    rng = np.random.default_rng(5)
    x = rng.normal(size=300)
    pd.DataFrame({"time": np.arange(300.0), "x": x, "country": rng.choice(["A", "B"], 300),
                  "label": np.where(x + rng.normal(size=300) > 1, "fraud", "ok"),
                  "wait": rng.uniform(1, 20, 300)}).to_csv(tmp_path / "s.csv", index=False)
    stream = f's={tmp_path / "s.csv"}{{"features": ["x"], "delay": "column:wait"}}'
    summary = evaluate(stream, "gaussian-nb", out=str(tmp_path / "out"), repredict="none",
                       segments=["country"], report=True)
    page = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert "<li><b>delay</b>: column:wait:seconds</li>" in page
    table = segment_table(summary)
    assert "initial precision (fraud)" in table.columns
    for cell in table["initial precision (fraud)"]:
        assert f"<td>{cell}</td>" in page


def test_report_command(finished_run, tmp_path, capsys):
    out, _ = finished_run
    (out / "report.html").unlink()
    assert main(["report", str(out)]) == 0
    assert (out / "report.html").exists()
    (tmp_path / "nothing").mkdir()
    assert main(["report", str(tmp_path / "nothing")]) == 2
    assert "not a finished run" in capsys.readouterr().err


def test_figures_drawn_by_several_processes_are_those_drawn_by_one(finished_run, monkeypatch):
    """Every file of every figure, byte for byte, as the report drew them in one process (3
    panels); and so when the other processes claimed every figure and then failed (each drawn
    here after all)."""
    import subprocess
    import sys

    from pipelines import figures as module

    out, _ = finished_run
    run = RunFiles.read(str(out))
    on_disk = {path.name: path.read_bytes() for path in (out / "figures").iterdir()}
    several, _ = module.figures(run, processes=3)
    assert {f"{f.name}.{fmt}": data for f in several for fmt, data in f.files.items()} == on_disk

    claim_all_and_fail = ("import os, sys; [open(os.path.join(sys.argv[1], name + '.claim'), "
                          "'x').close() for name in sys.argv[2:]]; sys.exit(1)")

    class ClaimingAll(subprocess.Popen):
        def __init__(self, args, **kw):  # (args: python -m pipelines.figures OUT FOLDER NAMES)
            super().__init__([sys.executable, "-c", claim_all_and_fail, *args[4:]], **kw)
            self.wait()  # (every figure claimed before this process takes one)

    monkeypatch.setattr(module.subprocess, "Popen", ClaimingAll)
    plt, drawable = module._pyplot(), module._drawable(run)
    draws = [module._fig_weights, module._fig_initial_final]
    assert module.drawn_in_processes(plt, drawable, draws, 2) == [
        {fmt: on_disk[f"{name}.{fmt}"] for fmt in module.FORMATS}
        for name in ("weights", "initial_final")]


@pytest.mark.parametrize("panels", [1, 4, 17])
def test_a_figures_title_is_above_every_panel_however_tall_the_grid(panels):
    """Measured on the drawn figure: each panel's box, its title included, ends below the
    bottom of the figure's title (17 panels: a binned figure of 3 streams x 6 models)."""
    from pipelines.figures import _below_the_title, _grid, _pyplot

    plt = _pyplot()
    fig, axes = _grid(plt, panels, "A figure's title")
    for ax in axes:
        ax.plot([0, 1], [0, 1])
        ax.set_title("a panel's title")
    fig.tight_layout()
    _below_the_title(fig)
    renderer = fig.canvas.get_renderer()
    title_bottom = fig._suptitle.get_window_extent(renderer).y0
    assert all(ax.get_tightbbox(renderer).y1 < title_bottom for ax in axes)
    plt.close(fig)


def test_the_reports_counts_show_what_adds_up(finished_run):
    """The page's counts are enough to check the sums the docs state: with --holdout the held
    out instances and labels are among them, and each labelled instance is scored or not."""
    out, _ = finished_run
    manifest = json.loads((out / "manifest.json").read_text())
    table = _counts_table(manifest)
    assert {"held_out", "held_out_labels", "unscored_initial"} <= set(table.columns)
    for row in table.to_dict("records"):
        shown = collections.defaultdict(int, row)
        assert row["instances"] == sum(shown[k] for k in (
            "labelled", "pending_at_end", "refused_instances", "model_errors", "held_out"))
        assert row["labels"] == sum(shown[k] for k in (
            "labelled", "orphan_labels", "refused_labels", "held_out_labels"))
        for kind in ("initial", "final"):
            assert row[f"scored_{kind}"] + row[f"unscored_{kind}"] == row["labelled"]
    page = (out / "report.html").read_text(encoding="utf-8")
    read = manifest["streams"]["sea"]["read"]
    assert read["pretrain_events"] == 0 and "<th>pretrain_events</th>" not in page
    assert all(f"<th>{c}</th>" in page for c in [*table.columns, *read] if c != "pretrain_events")


def test_the_report_shows_the_first_dead_letters_with_what_was_read(tmp_path, monkeypatch):
    """Not only how many rows were set aside: the first of them, where, why and what was read
    (here 3 rows of 25 with a missing feature, the first 2 shown)."""
    monkeypatch.setattr("pipelines.report.DEAD_LETTERS_SHOWN", 2)
    rows = [f"{t},{'' if t in (3, 7, 11) else t % 5},{t % 3},{'ab'[t % 2]}" for t in range(25)]
    (tmp_path / "rows.csv").write_text("time,f,g,label\n" + "\n".join(rows) + "\n")
    out = tmp_path / "out"
    evaluate([f"{tmp_path / 'rows.csv'}"], ["majority"], delay="2", out=str(out),
             runner="direct", report=True)
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "<p>The first 2 of 3 dead letters (<code>dead_letters.jsonl</code> has them " \
           "all):</p>" in page
    shown = page[page.index("The first 2 of 3"):page.index("Per stream and model")]
    cells = [html.unescape(c) for c in re.findall(r"<td>(.*?)</td>", shown)]
    missing = ('feature is missing (an empty cell, NaN, null, a CSV cell NA, N/A or None, or '
               'an absent key); the stream option {"missing": "drop"} keeps such rows without '
               'it, {"na_values": []} reads only an empty CSV cell as missing')
    assert cells == ["rows", str(tmp_path / "rows.csv"), "4", "f", missing,
                     '{"time": 3, "f": null, "g": 0, "label": "b"}',
                     "rows", str(tmp_path / "rows.csv"), "8", "f", missing,
                     '{"time": 7, "f": null, "g": 1, "label": "b"}']


def test_period_mean_is_the_mean_between_curve_points():
    labels = np.array([100, 200, 300])
    accuracy = np.array([0.9, 0.85, 0.8])  # 90, 170, 240 correct
    assert period_mean(labels, accuracy)[1] == pytest.approx([0.9, 0.8, 0.7])


@pytest.mark.parametrize("stream, model, metric, loss", [
    ('synth:SEA{"n": 600, "seed": 4}', "gaussian-nb", "accuracy", lambda a: 1 - a),
    ('synth:Friedman{"n": 600, "seed": 4}', "linear-regression", "mae", lambda mae: mae),
])
def test_the_loss_within_each_curve_period_is_that_of_a_window_of_one_period(
        tmp_path, stream, model, metric, loss):
    """The drift figure's and the forgetting figure's steps: with a point every 100 labels, a
    sliding window of 100 labels holds exactly the period's labels (the error rate of a
    classifier, the MAE of a regressor)."""
    evaluate([stream], [model], delay="20", out=str(tmp_path), runner="direct",
             repredict="none", windows=[100], curve_every=100)
    run = RunFiles.read(str(tmp_path))
    name = run.streams[0]
    labels, period = run.period_losses(name, model)
    at, windowed = run.curve(name, model, "initial", metric, window="w=100")
    assert labels.tolist() == at.tolist() == list(range(100, 601, 100))
    assert period == pytest.approx(loss(windowed), rel=1e-9, abs=1e-12)


def test_progress_lines_and_counters_on_stderr_unless_quiet(tmp_path, capsys):
    args = ["run", "--stream", 'synth:SEA{"n": 400, "seed": 2}', "--model", "no-change",
            "--delay", "10", "--runner", "direct", "--repredict", "none",
            "--progress-every", "0"]
    assert main([*args, "--out", str(tmp_path / "a")]) == 0
    err = capsys.readouterr().err
    assert re.search(r"progress: [\d,]+ events, [\d,]+ labels, [\d,]+ pending, 0 dead letters "
                     r"\(1 stream × model\), [\d,]+ events/s", err)
    assert "job counters (summed over the replays, one per stream × model): instances 400, " \
        "updates 0, labels 400, dead_letters 0, pending 0" in err
    assert main([*args, "--out", str(tmp_path / "b"), "--quiet"]) == 0
    printed = capsys.readouterr()
    assert printed.err == "" and printed.out == ""


def test_progress_rate_is_the_current_one_since_the_last_line(monkeypatch):
    """A slow start (100 events in the first 10 s) does not hide the speed that follows: the
    second line's rate is 1 000 events in 1 s, not 1 100 over 11 s."""
    import io

    from transforms.replay import progress

    clock = iter([0.0, 10.0, 11.0])
    monkeypatch.setattr(progress.time, "monotonic", lambda: next(clock))
    lines = progress.ProgressLines(every=0.0, stream=io.StringIO())
    counts = dict.fromkeys(progress.PROGRESS_COUNTERS, 0)
    lines.add(("s", "m"), {**counts, "instances": 100})
    lines.add(("s", "m"), {**counts, "instances": 1000})
    first, second = lines.stream.getvalue().splitlines()
    assert first.endswith(", 10 events/s") and second.endswith(", 1,000 events/s")


@pytest.mark.filterwarnings("error::FutureWarning")  # pandas 2: None in place of NaN
def test_api_returns_the_summary_and_load_results_reads_the_run(finished_run):
    out, summary = finished_run
    assert summary.attrs["out"] == str(out)
    again = load_results(str(out))
    # Read back from summary.csv, every value to the last bit (NaN where NaN).
    pd.testing.assert_series_equal(again["value"], summary["value"].astype(float),
                                   check_exact=True)
    pd.testing.assert_frame_equal(again.drop(columns="value"),
                                  summary.drop(columns="value").astype(again.dtypes.drop("value")
                                                                       .to_dict()))
    assert set(load_results(str(out), "curves")["window"]) == {"cumulative", "w=300",
                                                                "fading=0.99"}


def test_a_long_drain_shows_progress_as_it_goes(tmp_path, capsys):
    """One drain of 5 000 instances (the per-stream replay drains 20 000 events at a time): a
    line every 1 000 events, their counts rising, not one line when the drain ends."""
    args = ["run", "--stream", 'synth:SEA{"n": 5000, "seed": 2}', "--model", "no-change",
            "--delay", "10", "--runner", "direct", "--repredict", "none", "--replay",
            "per-stream", "--progress-every", "0", "--out", str(tmp_path)]
    assert main(args) == 0
    events = [int(m.replace(",", "")) for m in
              re.findall(r"progress: ([\d,]+) events", capsys.readouterr().err)]
    assert events[:3] == [1000, 2000, 3000] and events == sorted(events)
    assert events[-1] == 10_000  # the drain's own line: every instance and label


def test_a_regressor_that_diverged_is_named_in_the_terminal_and_the_report(tmp_path, capsys,
                                                                           monkeypatch):
    """river's linear regression on features in the thousands: its errors grow without bound.
    The terminal and the report say so, for that model only (a plain loop over the logged
    final predictions checks that its errors are over ten times the labels' spread), and the
    figures that draw every model's errors on one axis draw them on a log axis, where the
    other model's are not a flat line at zero."""
    from pipelines import figures

    scales = {}

    def recording_png(plt, fig):
        scales[fig.get_suptitle()] = [ax.get_yscale() for ax in fig.axes if ax.has_data()]
        return png(plt, fig)

    png = figures._png
    monkeypatch.setattr(figures, "_png", recording_png)
    rng = np.random.default_rng(1)
    distance = rng.uniform(100, 5000, 400)
    pd.DataFrame({"time": np.arange(400), "distance": distance,
                  "label": 0.12 * distance + rng.normal(0, 20, 400)}).to_csv(
        tmp_path / "trips.csv", index=False)
    out = tmp_path / "out"
    assert main(["run", "--stream", f"trips={tmp_path / 'trips.csv'}", "--model",
                 "lr=linear-regression", "--model", "scaled=standard-scaler | linear-regression",
                 "--delay", "10", "--repredict", "none", "--report", "--out", str(out),
                 "--runner", "direct"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if "likely diverged" in line]
    assert len(lines) == 1 and lines[0].startswith("trips / lr: final R² ")
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "trips / lr: final R²" in page
    summary = read_csv(out / "summary.csv")
    mae = summary.query("model == 'lr' and category == 'initial' and metric == 'mae' and "
                        "window == 'cumulative'")["value"].item()
    assert mae > 1e9 and f"{mae:.4e}" in page  # (its 17 digits and 4 decimals told nothing)
    log = pd.read_parquet(out / "predictions.parquet")
    labels = read_csv(tmp_path / "trips.csv")["label"]
    for model, diverged in (("lr", True), ("scaled", False)):
        final = log[(log["model"] == model) & (log["kind"] == "final")]
        errors = [float(p) - labels[int(i)] for i, p in zip(final["id"], final["y_pred"])
                  if p is not None]
        rmse = (sum(e * e for e in errors) / len(errors)) ** 0.5
        assert (rmse > 10 * labels.std(ddof=0)) == diverged
    assert scales["Initial vs final performance over T"] == ["log"]
    assert scales["Error rate, Page-Hinkley alarms (▼) and known drifts (dashed)"] == ["log"]
    assert scales["Prequential error of the initial predictions: cumulative vs windows vs "
                  "fading factors"] == ["linear", "linear"]  # (a panel per model)


def test_a_confusion_matrix_of_many_classes_is_drawn_without_a_count_per_cell(tmp_path):
    """30 classes: 900 cells a matrix. Counts are written in the cells up to 20 classes; beyond,
    the matrix is shaded alone and every k/20-th class named (300 classes took minutes to draw
    180 000 counts). The SVG keeps text as text, so its texts are counted. The report is made
    at all: the profile's legend of 30 classes stopped it ('bottom cannot be >= top')."""
    rng = np.random.default_rng(2)
    n, k = 1500, 30
    codes = np.concatenate([np.arange(k), rng.integers(0, k, n - k)])
    pd.DataFrame({"time": np.arange(n), "x": codes + rng.normal(0, 2, n),
                  "label": [f"c{c:02d}" for c in codes]}).to_csv(tmp_path / "many.csv",
                                                                 index=False)
    evaluate(str(tmp_path / "many.csv"), "gaussian-nb", delay="20", repredict="none",
             out=str(tmp_path / "o"), report=True)
    svg = (tmp_path / "o" / "figures" / "confusion.svg").read_text(encoding="utf-8")
    texts = svg.count("<text")
    assert 2 * 15 <= texts < k * k  # the class names on two axes of two panels, no counts


def test_a_confusion_matrix_draws_the_cells_not_written_as_zeros(tmp_path):
    """The summary writes each class's diagonal cell and the cells with a count; the figure
    shows the others as the zeros they are. Majority on labels mostly `a` never predicts `b`:
    the cell (a, b) is not written, (b, b) is, as 0."""
    labels = ["a"] * 10 + ["a", "a", "a", "b"] * 25
    pd.DataFrame({"time": range(len(labels)), "x": 0.0, "label": labels}).to_csv(
        tmp_path / "s.csv", index=False)
    evaluate(str(tmp_path / "s.csv"), "majority", delay="1", repredict="none",
             out=str(tmp_path / "o"), report=True)
    summary = read_csv(tmp_path / "o" / "summary.csv", dtype={"class": str, "predicted": str})
    cells = summary[(summary["metric"] == "confusion") & (summary["category"] == "initial")]
    assert set(zip(cells["class"], cells["predicted"])) == {("a", "a"), ("b", "a"), ("b", "b")}
    svg = (tmp_path / "o" / "figures" / "confusion.svg").read_text(encoding="utf-8")
    texts = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    # Row by row, (a, a), (a, b), (b, a), (b, b); the first instance has no initial prediction.
    counts = [str(labels[1:].count("a")), "0", str(labels.count("b")), "0"]
    at = texts.index(counts[0])
    assert texts[at:at + 4] == counts


def test_a_report_of_a_run_on_another_filesystem_is_that_of_its_copy_here(tmp_path, monkeypatch,
                                                                          capsys):
    """A run with --out on gs:// or s3:// could have no report: `report` said to copy the
    folder here, `run --report` was refused. Both read the run's files there and write the
    report there now: the same files as a report of a copy of the run here, and nothing where
    the command started."""
    import shutil

    from tests.helpers import RemoteFileSystem

    started = tmp_path / "started-here"
    started.mkdir()
    monkeypatch.chdir(started)
    here, there = tmp_path / "here", tmp_path / "there"
    evaluate(['sea=synth:SEA{"n": 400, "seed": 1}'], ["no-change", "gaussian-nb"], delay="20",
             out=str(here), runner="direct", bins=5, curve_every=50)
    shutil.copytree(here, there)
    remote = f"{RemoteFileSystem.PREFIX}{there}"
    assert write_report(str(here)) == str(here / "report.html")
    assert write_report(remote) == f"{remote}/report.html"
    for run in (here, there):
        assert {p.relative_to(run).as_posix() for p in run.rglob("*")} >= {
            "report.html", "figures/initial_final.png", "figures/binned.svg"}
    assert {p.relative_to(here).as_posix(): p.read_bytes() for p in here.rglob("*.*")} == \
        {p.relative_to(there).as_posix(): p.read_bytes() for p in there.rglob("*.*")}
    out = f"{RemoteFileSystem.PREFIX}{tmp_path}/run"
    assert main(["run", "--stream", 'synth:SEA{"n": 300, "seed": 2}', "--model", "no-change",
                 "--delay", "20", "--out", out, "--runner", "direct", "--report",
                 "--quiet"]) == 0
    assert (tmp_path / "run" / "report.html").exists()
    assert (tmp_path / "run" / "figures" / "binned.png").exists()
    assert main(["report", f"{RemoteFileSystem.PREFIX}{tmp_path}/none"]) == 2
    assert capsys.readouterr().err.endswith(
        f"error: {RemoteFileSystem.PREFIX}{tmp_path}/none: not a finished run (missing "
        f"summary.csv, curves.parquet, manifest.json)\n")
    assert list(started.iterdir()) == []
