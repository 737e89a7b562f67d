"""Reading results back, and the terminal table in the layout of Table II (paper 000)."""

from __future__ import annotations

import json
import os

import pandas as pd

from transforms.records import RESULT_COLUMNS

TABLE_METRICS = ("accuracy", "kappa", "kappa_t", "kappa_plus", "mae", "rmse")


def load_results(path: str, kind: str = "summary") -> pd.DataFrame:
    """Read a finished run: `summary` (default), `curves` or `predictions` as a DataFrame.

    >>> import tempfile
    >>> d = tempfile.mkdtemp()
    >>> with open(os.path.join(d, "summary.csv"), "w") as f:
    ...     _ = f.write("stream,model,metric,value\\ns,m,accuracy,0.5\\n")
    >>> load_results(d)["value"].tolist()
    [0.5]
    """
    if kind == "summary":
        return pd.read_csv(os.path.join(path, "summary.csv"))
    if kind in ("curves", "predictions"):
        return pd.read_parquet(os.path.join(path, f"{kind}.parquet"))
    if kind == "manifest":
        with open(os.path.join(path, "manifest.json"), encoding="utf-8") as f:
            return pd.json_normalize(json.load(f))
    raise ValueError(f"kind must be summary, curves, predictions or manifest, not {kind!r}")


def summary_table(summary: pd.DataFrame) -> pd.DataFrame:
    """Rows: stream × measure (category metric); columns: models, in run order."""
    df = summary[summary["metric"].isin(TABLE_METRICS)].copy()
    if df.empty:
        return pd.DataFrame()
    df["measure"] = df["category"] + " " + df["metric"]
    models = list(dict.fromkeys(df["model"]))
    order = {m: i for i, m in enumerate(TABLE_METRICS)}
    df["_c"] = df["category"].map({"initial": 0, "final": 1}).fillna(2)
    df["_m"] = df["metric"].map(order)
    df = df.sort_values(["stream", "_c", "_m"])
    table = df.pivot_table(index=["stream", "measure"], columns="model", values="value",
                           sort=False, dropna=False)
    return table[models]


def format_table(summary: pd.DataFrame) -> str:
    table = summary_table(summary)
    if table.empty:
        return "(no results)"
    return table.to_string(float_format=lambda v: f"{v:.4f}")


def summary_columns() -> list[str]:
    return list(RESULT_COLUMNS)
