"""Label maturity of a backfill: per arrival day the labelled and pending instances and the
latency in days (labelled within d days) equal a plain count over the input tables; the
manifest says how far the measures may still move."""

import json

import numpy as np
import pandas as pd

from pipelines.cli import main
from pipelines.config import RunConfig
from pipelines.job import run
from tests.helpers import read_csv, without_notices

DAY, BASE = 86_400.0, 1793491200.0  # 2026-11-01T00:00:00Z


def test_each_arrival_day_counts_its_labelled_pending_and_latencies(tmp_path):
    rng = np.random.default_rng(5)
    n = 400
    t = np.sort(BASE + rng.uniform(0, 4 * DAY, n))  # four days of arrivals
    latency = rng.exponential(1.5 * DAY, n)  # many labels take days
    labelled = rng.random(n) < 0.85  # the rest never come: pending at the end
    y = rng.choice(["ok", "fraud"], n, p=[0.9, 0.1])
    instances, labels = tmp_path / "instances.csv", tmp_path / "labels.csv"
    pd.DataFrame({"id": range(n), "time": t, "f": rng.normal(size=n)}).to_csv(instances,
                                                                             index=False)
    pd.DataFrame({"id": np.flatnonzero(labelled), "time": (t + latency)[labelled],
                  "label": y[labelled]}).sort_values("time").to_csv(labels, index=False)
    log = tmp_path / "log.csv"
    pd.DataFrame({"id": [str(i) for i in range(n)], "t": t, "y_pred": "ok"}).to_csv(log,
                                                                                   index=False)
    out = tmp_path / "out"
    run(RunConfig(streams=[f'fraud={instances}{{"labels": "{labels}"}}'], models=["m"],
                  predictions=str(log), out=str(out), quiet=True, runner="direct",
                  repredict="none", final=False))

    table = read_csv(out / "maturity.csv")
    day = ((t - BASE) // DAY).astype(int)
    days = np.ceil(latency / DAY).astype(int)  # within d days: (d − 1, d]
    assert table["date"].tolist() == [f"2026-11-0{d + 1}" for d in range(4)]
    for d, row in zip(range(4), table.itertuples()):
        mine = day == d
        assert (row.instances, row.labelled, row.pending) == (
            mine.sum(), (mine & labelled).sum(), (mine & ~labelled).sum())
        waited = days[mine & labelled]
        assert row.latency_days_p50 == np.quantile(waited, 0.5, method="inverted_cdf")
        assert row.latency_days_p90 == np.quantile(waited, 0.9, method="inverted_cdf")
        assert row.latency_days_max == waited.max()
    maturity = json.loads((out / "manifest.json").read_text())["maturity"]["fraud"]
    pending = int((~labelled).sum())
    assert maturity["pending"] == pending and maturity["labelled"] == labelled.sum()
    assert maturity["by_at_most_labels"] == pending
    scored = int(labelled.sum())  # (the log predicts ok for every one: accuracy = share of ok)
    p = (y[labelled] == "ok").mean()
    assert maturity["may_move_by"]["accuracy"] == np.ceil(
        pending * max(p, 1 - p) / (scored + pending) * 1e4) / 1e4
    assert maturity["latency_days"] == {str(k): int(v) for k, v in
                                        zip(*np.unique(days[labelled], return_counts=True))}
    assert "initial" in maturity["may_still_move"]
    assert maturity["incomplete_days"] == table.loc[table["pending"] > 0, "date"].tolist()


def test_how_far_a_nights_measures_may_move_is_a_bound_its_later_labels_keep(tmp_path,
                                                                             capsys):
    """The backfill said a proportion may move by at most pending / (labelled + pending): 0.02
    with 40 of 2 000 pending. But a class's precision and recall are over the instances
    predicted as, or labelled as, that class: here the 40 pending transactions, all predicted
    fraud, moved precision (fraud) from 0.51 to 0.65 once their labels came. Each bound is
    now over the measure's own count, and the measures of the night re-scored with every label
    stay within it."""
    rng = np.random.default_rng(5)
    n, waiting = 2000, 40
    t = BASE + np.sort(rng.uniform(0, DAY - 1, n))
    amount = rng.exponential(50, n)
    fraud = rng.random(n) < np.where(amount > 150, 0.5, 0.02)
    amount[-waiting:], fraud[-waiting:] = 400.0, True  # the last hour's: all fraud, all flagged
    predicted = np.where(amount > 150, "fraud", "ok")
    label = np.where(fraud, "fraud", "ok")
    channel = np.where(np.arange(n) % 3 == 0, "web", "store")
    pd.DataFrame({"id": range(n), "time": t, "amount": amount, "channel": channel}).to_csv(
        tmp_path / "instances.csv", index=False)
    pd.DataFrame({"id": [str(i) for i in range(n)], "t": t, "y_pred": predicted}).to_csv(
        tmp_path / "log.csv", index=False)
    results = {}
    for night, known in (("tonight", n - waiting), ("a week on", n)):
        labels = tmp_path / f"labels {night}.csv"
        pd.DataFrame({"id": range(known), "time": t[:known] + 7200,
                      "label": label[:known]}).to_csv(labels, index=False)
        out = tmp_path / night
        run(RunConfig(streams=[f'fraud={tmp_path / "instances.csv"}{{"labels": "{labels}", '
                               f'"positive": "fraud"}}'], models=["m"],
                      predictions=str(tmp_path / "log.csv"), out=str(out), quiet=True,
                      runner="direct", repredict="none", final=False))
        results[night] = read_csv(out / "summary.csv").query(
            "category == 'initial' and window == 'cumulative' and segment != segment")
    maturity = json.loads((tmp_path / "tonight" / "manifest.json").read_text())["maturity"]
    bounds = maturity["fraud"]["may_move_by"]

    # A plain count of tonight's labelled instances: each proportion's k of n.
    known = slice(0, n - waiting)
    hit = predicted[known] == label[known]
    counts = {"accuracy": (hit.sum(), n - waiting)}
    for c in ("fraud", "ok"):
        counts[f"precision ({c})"] = (hit[predicted[known] == c].sum(),
                                      (predicted[known] == c).sum())
        counts[f"recall ({c})"] = (hit[label[known] == c].sum(), (label[known] == c).sum())
    assert set(bounds) == set(counts)
    for measure, (k, m) in counts.items():
        p = k / m
        assert bounds[measure] == np.ceil(waiting * max(p, 1 - p) / (m + waiting) * 1e4) / 1e4
        metric, _, c = measure.partition(" (")
        value = {night: frame.loc[(frame["metric"] == metric) & (
            frame["class"].isna() if not c else frame["class"] == c.rstrip(")")), "value"]
            .item() for night, frame in results.items()}
        assert value["tonight"] == p
        assert abs(value["a week on"] - value["tonight"]) <= bounds[measure], measure
    moved = abs(results["a week on"].query("metric == 'precision' and `class` == 'fraud'")[
        "value"].item() - counts["precision (fraud)"][0] / counts["precision (fraud)"][1])
    assert moved > 5 * waiting / n  # the old bound, 0.02, did not hold
    # The report shows them, with what the command printed.
    from pipelines.report import write_report

    page = open(write_report(str(tmp_path / "tonight")), encoding="utf-8").read()
    assert "<h2>Label maturity</h2>" in page
    assert f"fraud: {waiting} of {n:,} instances still wait for their label" in page
    for measure, bound in bounds.items():
        assert f"<td>{measure}</td>\n      <td>{bound:.4f}</td>" in page

    # A threshold crossed tonight says how far the measure may still move.
    assert main(["backfill", "--stream", f'fraud={tmp_path / "instances.csv"}{{"labels": '
                 f'"{tmp_path / "labels tonight.csv"}", "positive": "fraud"}}', "--predictions",
                 str(tmp_path / "log.csv"), "--model", "m",
                 "--out", str(tmp_path / "alert"), "--runner", "direct", "--quiet",
                 "--segment", "channel",
                 "--fail-if", "initial recall (fraud) < 0.9",
                 "--fail-if", "initial kappa < 0.9",
                 "--fail-if", "initial precision (fraud) [channel=web] < 0.9"]) == 3
    recall = counts["recall (fraud)"][0] / counts["recall (fraud)"][1]
    kappa = results["tonight"].query("metric == 'kappa'")["value"].item()
    # A segment's: its own k of n, with its own waiting instances (a plain count).
    web = (predicted[known] == "fraud") & (channel[known] == "web")
    k, m = hit[web].sum(), web.sum()
    web_waiting = int((channel[n - waiting:] == "web").sum())
    assert 0 < web_waiting < waiting
    web_bound = np.ceil(web_waiting * max(k / m, 1 - k / m) / (m + web_waiting) * 1e4) / 1e4
    alert = json.loads((tmp_path / "alert" / "manifest.json").read_text())["maturity"]
    assert alert["fraud"]["pending_by_segment"] == {"channel=store": waiting - web_waiting,
                                                    "channel=web": web_waiting}
    # ... a bound the slice's later labels keep.
    run(RunConfig(streams=[f'fraud={tmp_path / "instances.csv"}{{"labels": '
                           f'"{tmp_path / "labels a week on.csv"}", "positive": "fraud"}}'],
                  models=["m"], predictions=str(tmp_path / "log.csv"), segments=["channel"],
                  out=str(tmp_path / "later"), quiet=True, runner="direct", repredict="none",
                  final=False))
    later = read_csv(tmp_path / "later" / "summary.csv").query(
        "category == 'initial' and window == 'cumulative' and segment == 'channel=web' and "
        "metric == 'precision' and `class` == 'fraud'")["value"].item()
    assert 0 < abs(later - k / m) <= web_bound
    assert without_notices(capsys.readouterr().err).splitlines() == [
        f"delayed-eval: threshold crossed: fraud / m: initial recall (fraud) < 0.9 (it is "
        f"{recall:.4g}; {waiting} instances still wait for their label: it may still move by "
        f"up to {bounds['recall (fraud)']:.4f})",
        f"delayed-eval: threshold crossed: fraud / m: initial kappa < 0.9 (it is {kappa:.4g})",
        f"delayed-eval: threshold crossed: fraud / m / channel=web: initial precision (fraud) "
        f"[channel=web] < 0.9 (it is {k / m:.4g}; {web_waiting} instances of this segment "
        f"still wait for their label: it may still move by up to {web_bound:.4f})"]
    # trend per slice gives the same bound, and says so after its table.
    from pipelines.trend import format_trend, trend_table

    table = trend_table(str(tmp_path / "alert"), ["precision (fraud)"], segment="channel")
    assert table.set_index("segment").loc["channel=web", "may_move_by"] == web_bound
    assert (f"fraud / m / channel=web: labels still pending; precision (fraud) may still move "
            f"by up to {web_bound:.4f}") in format_trend(table)
