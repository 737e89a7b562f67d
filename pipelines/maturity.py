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

from transforms.replay.engine import DAY_PREFIX, SEGMENT_PREFIX

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


def pending_by_segment(counts: dict) -> dict:
    """{segment: its instances still waiting for their label} from one key's counts of its
    label pass (`SEGMENT_PREFIX`), the segments with none left out.

    >>> pending_by_segment({"segment:country=DE:instances": 5, "segment:country=DE:settled": 3,
    ...                     "segment:country=FR:instances": 2, "segment:country=FR:settled": 2,
    ...                     "labelled": 5})
    {'country=DE': 2}
    """
    segments: dict = {}
    for key, value in counts.items():
        if key.startswith(SEGMENT_PREFIX):
            segment, what = key[len(SEGMENT_PREFIX):].rsplit(":", 1)
            segments[segment] = segments.get(segment, 0) + (value if what == "instances"
                                                            else -value)
    return {segment: n for segment, n in sorted(segments.items()) if n}


def may_move_by(value: float, n: int, more: int) -> float:
    """The most a proportion `value` over `n` labels can still change when up to `more` labels
    may join it, each a success or not: to (k + j) / (n + m) for j in 0..m, so by
    m · max(p, 1 − p) / (n + m); rounded up to 4 decimals (a bound is never rounded down).

    >>> may_move_by(0.5, 98, 40)  # 49 of 98: 89 or 49 of 138, 0.6449 or 0.3551
    0.145
    >>> may_move_by(0.95, 1960, 0)
    0.0
    """
    if more <= 0 or not n + more:
        return 0.0
    bound = more * max(value, 1 - value) / (n + more) if n else 1.0
    return math.ceil(round(bound * 1e4, 6)) / 1e4


def proportion_bounds(summary: pd.DataFrame, pending: int, segment: str | None = None) -> dict:
    """{(model, category, measure): how far it may still move} for each proportion of a
    stream's classifiers — accuracy, and each class's precision and recall, named as
    `--fail-if` names them — with `pending` more labels (`may_move_by`), from the stream's
    cumulative initial and final rows of `summary` (or a `segment`'s: with the stream's
    pending, all of which may be the segment's, a bound too): its value, and its denominator
    (`n` for accuracy, the confusion matrix's predicted or true count of the class for precision
    or recall). A NaN measure (of nothing yet) has none.

    >>> cells = [("ok", "ok", 8), ("ok", "fraud", 1), ("fraud", "fraud", 1)]
    >>> summary = pd.DataFrame(
    ...     [("accuracy", None, None, 0.9), ("recall", "fraud", None, 1.0)]
    ...     + [("confusion", c, p, k) for c, p, k in cells],
    ...     columns=["metric", "class", "predicted", "value"]).assign(
    ...     model="m", category="initial", window="cumulative", n=10)
    >>> proportion_bounds(summary, 5)  # 9 of 10: 14 or 9 of 15; 1 of 1: 6 or 1 of 6
    {('m', 'initial', 'accuracy'): 0.3, ('m', 'initial', 'recall (fraud)'): 0.8334}
    """
    rows = summary[summary["window"].eq("cumulative")
                   & summary["category"].isin(["initial", "final"])]
    if "segment" in rows:
        rows = rows[rows["segment"].eq(segment) if segment else rows["segment"].isna()]
    bounds: dict = {}
    for (model, category), part in rows.groupby(["model", "category"], sort=False):
        cells = part[part["metric"] == "confusion"]
        named = [("accuracy", value, n) for value, n in
                 part.loc[part["metric"] == "accuracy", ["value", "n"]].to_numpy()]
        for metric, side in (("precision", "predicted"), ("recall", "class")):
            counts = cells.groupby(side)["value"].sum()
            named += [(f"{metric} ({c})", value, counts.get(c, 0)) for c, value in
                      part.loc[part["metric"] == metric, ["class", "value"]].to_numpy()]
        for measure, value, n in named:
            if value == value:
                bounds[model, category, measure] = may_move_by(float(value), int(n), pending)
    return bounds


def _moves(summary: pd.DataFrame, pending: int) -> dict:
    """Per proportion (`proportion_bounds`), the most it may still move over the models and
    their initial and final measures: accuracy first, then by name."""
    moves: dict = {}
    for (_, _, measure), bound in proportion_bounds(summary, pending).items():
        moves[measure] = max(moves.get(measure, 0.0), bound)
    return dict(sorted(moves.items(), key=lambda kv: (kv[0] != "accuracy", kv[0])))


def maturity_manifest(table: pd.DataFrame, histograms: dict, summary: pd.DataFrame,
                      segments: dict | None = None) -> dict:
    """The manifest's `maturity`: per stream, its labelled and pending instances (of each of
    its `segments`, {stream: `pending_by_segment`}, too), the latency histogram, the days
    still incomplete, and how far its measures may still move: with
    pending instances every category of its measures in the `summary` may take up to that many
    more labels, which moves a classifier's accuracy and each class's precision and recall by
    at most `may_move_by` (over its own denominator: a rare class's recall moves most).

    Example
    -------

    >>> table = pd.DataFrame({"stream": "fraud", "date": ["2026-11-01", "2026-11-02"],
    ...                       "instances": [100, 98], "labelled": [90, 98], "pending": [10, 0]})
    >>> cells = [("ok", "ok", 170), ("ok", "fraud", 4), ("fraud", "ok", 8), ("fraud", "fraud", 6)]
    >>> summary = pd.DataFrame(
    ...     [("accuracy", None, None, 176 / 188), ("recall", "fraud", None, 6 / 14),
    ...      ("precision", "fraud", None, 6 / 10)]
    ...     + [("confusion", c, p, k) for c, p, k in cells],
    ...     columns=["metric", "class", "predicted", "value"]).assign(
    ...     stream="fraud", model="m", category="initial", window="cumulative", n=188)
    >>> m = maturity_manifest(table, {"fraud": {0: 3, 2: 2}}, summary)
    >>> m["fraud"]["pending"], m["fraud"]["incomplete_days"], m["fraud"]["may_still_move"]
    (10, ['2026-11-01'], ['initial'])
    >>> m["fraud"]["by_at_most_labels"], m["fraud"]["may_move_by"]
    (10, {'accuracy': 0.0473, 'precision (fraud)': 0.3, 'recall (fraud)': 0.2381})

    """
    out = {}
    for stream, part in table.groupby("stream", sort=False):
        labelled, pending = int(part["labelled"].sum()), int(part["pending"].sum())
        mine = summary[summary["stream"] == stream]
        out[stream] = {
            "labelled": labelled, "pending": pending,
            "latency_days": {str(d): int(n) for d, n in histograms.get(stream, {}).items()},
            "incomplete_days": part.loc[part["pending"] > 0, "date"].tolist(),
            "may_still_move": list(dict.fromkeys(mine["category"])) if pending else [],
            "by_at_most_labels": pending,
            "may_move_by": _moves(mine, pending) if pending else {}}
        if segments is not None:
            out[stream]["pending_by_segment"] = segments.get(stream, {})
    return out


def format_maturity(stream: str, maturity: dict) -> str:
    """The line a backfill prints for a stream with instances still pending: how many, of
    which days, and how far its accuracy and its most movable class measure may still move.

    >>> print(format_maturity("fraud", {
    ...     "labelled": 1960, "pending": 40, "incomplete_days": ["2026-11-01"],
    ...     "may_move_by": {"accuracy": 0.0191, "precision (fraud)": 0.1479,
    ...                     "recall (fraud)": 0.1529, "recall (ok)": 0.0195}}))
    fraud: 40 of 2,000 instances still wait for their label (arrival day 2026-11-01): each \
measure may take up to 40 more labels, which can move accuracy by up to 0.0191 and recall \
(fraud) by up to 0.1529 (each class's precision and recall in the manifest's maturity); per \
day in maturity.csv
    """
    pending, days = maturity["pending"], maturity["incomplete_days"]
    moves = dict(maturity.get("may_move_by") or {})
    named = [f"accuracy by up to {moves.pop('accuracy'):.4f}"] if "accuracy" in moves else []
    if moves:
        most = max(moves, key=lambda k: (moves[k], k))
        named.append(f"{most} by up to {moves[most]:.4f} (each class's precision and recall "
                     f"in the manifest's maturity)")
    return (f"{stream}: {pending:,} of {maturity['labelled'] + pending:,} instances still wait "
            f"for their label (arrival {'day' if len(days) == 1 else 'days'} "
            f"{', '.join(days[:3])}{', …' if len(days) > 3 else ''}): each measure may take up "
            f"to {pending:,} more label{'s' if pending != 1 else ''}"
            + (f", which can move {' and '.join(named)}" if named else "")
            + "; per day in maturity.csv")
