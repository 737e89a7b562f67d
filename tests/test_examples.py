"""The Airflow example's commands, run as written on a small generated production log: the
nightly score exits with status 3 naming the slice below its threshold, the week-old day is
re-scored with its labels, and the trend has both nights."""

import os
import shlex

import numpy as np
import pandas as pd

from examples.airflow_nightly import commands
from pipelines.cli import main
from tests.helpers import read_csv, without_notices

DAY = 86_400.0
NIGHTS = {"2026-11-03": 1793664000.0, "2026-11-10": 1794268800.0}  # midnight UTC


def fraud_logs(root):
    """Instances (amount, hour, country), labels 1–4 days later, and a deployed model's
    decisions and scores, each table partitioned by day; the model is poor in PL."""
    rng = np.random.default_rng(2)
    logs = {name: os.path.join(root, "logs", name) for name in
            ("instances", "labels", "predictions")}
    for day, midnight in NIGHTS.items():
        n = 300
        ids = [f"{day}-{i}" for i in range(n)]
        t = np.sort(midnight + rng.uniform(0, DAY, n))
        country = rng.choice(["DE", "FR", "PL"], n)
        fraud = rng.random(n) < 0.2
        p = np.clip(np.where(fraud, 0.7, 0.2) + rng.normal(0, 0.15, n), 0.01, 0.99)
        p = np.where(country == "PL", rng.uniform(0.01, 0.99, n), p)  # noise in PL
        tables = {
            "instances": pd.DataFrame({"id": ids, "time": t, "amount": rng.gamma(2, 30, n),
                                       "hour": (t % DAY) // 3600, "country": country}),
            "labels": pd.DataFrame({"id": ids, "time": t + rng.uniform(1, 4, n) * DAY,
                                    "label": np.where(fraud, "fraud", "ok")}),
            "predictions": pd.DataFrame({"id": ids, "scored_at": t, "model_version": "v7",
                                         "p_fraud": p,
                                         "decision": np.where(p > 0.5, "fraud", "ok")})}
        for name, frame in tables.items():
            folder = os.path.join(logs[name], f"date={day}")
            os.makedirs(folder)
            frame.to_parquet(os.path.join(folder, "part-0.parquet"), index=False)


def test_the_airflow_example_scores_alerts_rescores_and_draws_the_trend(tmp_path, capsys):
    root = str(tmp_path)
    fraud_logs(root)
    steps = commands(root, runner="direct")

    def render(command, ds="2026-11-10"):
        command = command.replace("{{ ds }}", ds).replace("{{ macros.ds_add(ds, -7) }}",
                                                          "2026-11-03")
        argv = shlex.split(command)
        assert argv[0] == "delayed-eval"
        return argv[1:]

    assert main(render(steps["score"])) == 3  # PL's precision is below 0.3
    crossed = without_notices(capsys.readouterr().err).strip().splitlines()
    assert crossed and all(" / country=PL: " in line for line in crossed)
    main(render(steps["rescore"]))
    for day in NIGHTS:
        folder = os.path.join(root, "results", "fraud", f"date={day}")
        maturity = read_csv(os.path.join(folder, "maturity.csv"))
        assert maturity["instances"].sum() == 300 and maturity["date"].tolist() == [day]
    assert main(render(steps["trend"])) == 0
    trend = read_csv(os.path.join(root, "results", "fraud", "trend", "trend.csv"))
    assert sorted(trend["date"].unique()) == sorted(NIGHTS)
    recall = trend[trend["metric"] == "recall (fraud)"]
    assert len(recall) == 2 and ((recall["low"] < recall["value"])
                                 & (recall["value"] < recall["high"])).all()
    # The trend of each country: its slices' values, night by night.
    out = os.path.join(root, "by_country")
    assert main(["trend", os.path.join(root, "results", "fraud"), "--metric", "precision (fraud)",
                 "--segment", "country", "--out", out]) == 0
    countries = read_csv(os.path.join(out, "trend.csv"))
    assert sorted(set(zip(countries["date"], countries["segment"]))) == sorted(
        (day, f"country={c}") for day in NIGHTS for c in ("DE", "FR", "PL"))
    for row in countries.itertuples():
        summary = read_csv(os.path.join(root, "results", "fraud", f"date={row.date}",
                                           "summary.csv"))
        mine = summary[(summary["segment"] == row.segment) & (summary["metric"] == "precision")
                       & (summary["class"] == "fraud") & (summary["category"] == "initial")
                       & (summary["window"] == "cumulative")]
        assert float(mine["value"].iloc[0]) == row.value
