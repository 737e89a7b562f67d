"""Label maturity of a backfill: per arrival day the labelled and pending instances and the
latency in days (labelled within d days) equal a plain count over the input tables; the
manifest says how far the measures may still move."""

import json

import numpy as np
import pandas as pd

from pipelines.config import RunConfig
from pipelines.job import run
from tests.helpers import read_csv

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
    assert maturity["proportion_may_move_by"] == round(pending / n, 4)
    assert maturity["latency_days"] == {str(k): int(v) for k, v in
                                        zip(*np.unique(days[labelled], return_counts=True))}
    assert "initial" in maturity["may_still_move"]
    assert maturity["incomplete_days"] == table.loc[table["pending"] > 0, "date"].tolist()
