"""Label maturity of a backfill: per arrival day, how many instances are labelled and how many
still wait, how long their labels took, and how far the results may still move.

Labels keep arriving for days after a night's backfill, so its numbers are provisional until
every instance in its range is labelled. The label pass counts per arrival day (UTC;
`transforms.replay.engine.DAY_PREFIX`); this module turns those counts into `maturity.csv` and
the manifest's `maturity` section.
"""

from __future__ import annotations

import math

import pandas as pd

from transforms.replay.engine import DAY_PREFIX

MATURITY_COLUMNS = ["stream", "date", "instances", "labelled", "pending", "labelled_share",
                    "latency_days_p50", "latency_days_p90", "latency_days_max"]


def _latency_quantile(histogram: dict, q: float) -> float:
    """The smallest whole number of days d with at least a share q of the latencies ≤ d."""
    total = sum(histogram.values())
    if not total:
        return math.nan
    seen = 0
    for days in sorted(histogram):
        seen += histogram[days]
        if seen >= q * total:
            return float(days)
    return float(max(histogram))


def maturity_table(counts: dict) -> tuple[pd.DataFrame, dict]:
    """Per (stream, arrival day), from one key's counts per stream (`counts`: stream -> the
    counts of its label pass): instances, labelled, pending, the labelled share and the
    latency's quantiles in whole days -> (the table, per stream its latency histogram
    {days: labels}).

    Example
    -------

    >>> counts = {"fraud": {"day:2026-11-01:instances": 4, "day:2026-11-01:labelled": 3,
    ...                     "day:2026-11-01:latency=0": 1, "day:2026-11-01:latency=2": 2,
    ...                     "day:2026-11-02:instances": 2, "labelled": 3}}
    >>> table, histograms = maturity_table(counts)
    >>> table[["date", "instances", "labelled", "pending", "latency_days_p50"]].values.tolist()
    [['2026-11-01', 4, 3, 1, 2.0], ['2026-11-02', 2, 0, 2, nan]]
    >>> histograms
    {'fraud': {0: 1, 2: 2}}

    """
    rows, histograms = [], {}
    for stream, raw in counts.items():
        days: dict = {}
        histogram: dict = {}
        for key, value in raw.items():
            if not key.startswith(DAY_PREFIX):
                continue
            date, what = key[len(DAY_PREFIX):].split(":", 1)
            day = days.setdefault(date, {"instances": 0, "labelled": 0, "left": 0,
                                         "latency": {}})
            if what.startswith("latency="):
                latency = int(what.split("=", 1)[1])
                day["latency"][latency] = day["latency"].get(latency, 0) + value
                histogram[latency] = histogram.get(latency, 0) + value
            else:
                day[what] += value
        for date in sorted(days):
            day = days[date]
            pending = day["instances"] - day["labelled"] - day["left"]
            rows.append({"stream": stream, "date": date, "instances": day["instances"],
                         "labelled": day["labelled"], "pending": pending,
                         "labelled_share": day["labelled"] / day["instances"]
                         if day["instances"] else math.nan,
                         "latency_days_p50": _latency_quantile(day["latency"], 0.5),
                         "latency_days_p90": _latency_quantile(day["latency"], 0.9),
                         "latency_days_max": float(max(day["latency"], default=math.nan))})
        histograms[stream] = dict(sorted(histogram.items()))
    return pd.DataFrame(rows, columns=MATURITY_COLUMNS), histograms


def maturity_manifest(table: pd.DataFrame, histograms: dict, categories: dict) -> dict:
    """The manifest's `maturity`: per stream, its labelled and pending instances, the latency
    histogram, the days still incomplete, and how far its measures may still move: with
    pending instances every category of its measures (`categories`: stream -> those in the
    summary) may take up to that many more labels, which moves a proportion (accuracy,
    precision, …) by at most pending / (labelled + pending).

    Example
    -------

    >>> table = pd.DataFrame({"stream": "fraud", "date": ["2026-11-01", "2026-11-02"],
    ...                       "instances": [4, 2], "labelled": [3, 2], "pending": [1, 0]})
    >>> m = maturity_manifest(table, {"fraud": {0: 3, 2: 2}}, {"fraud": ["initial", "final"]})
    >>> m["fraud"]["pending"], m["fraud"]["incomplete_days"], m["fraud"]["may_still_move"]
    (1, ['2026-11-01'], ['initial', 'final'])
    >>> m["fraud"]["by_at_most_labels"], m["fraud"]["proportion_may_move_by"]
    (1, 0.1667)

    """
    out = {}
    for stream, part in table.groupby("stream", sort=False):
        labelled, pending = int(part["labelled"].sum()), int(part["pending"].sum())
        out[stream] = {
            "labelled": labelled, "pending": pending,
            "latency_days": {str(d): int(n) for d, n in histograms.get(stream, {}).items()},
            "incomplete_days": part.loc[part["pending"] > 0, "date"].tolist(),
            "may_still_move": list(categories.get(stream, [])) if pending else [],
            "by_at_most_labels": pending,
            "proportion_may_move_by": round(pending / (labelled + pending), 4)
            if labelled + pending else 0.0}
    return out
