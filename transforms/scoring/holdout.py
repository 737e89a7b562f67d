"""The periodic holdout (`--holdout EVERY:SIZE`) as summary and curve rows: each holdout set
scored on its own (`metrics.holdout`), a curve point per set, the last set in the summary
(`transforms.scoring.resources.RowsPerKey(functools.partial(holdout_rows, tasks=…))`)."""

from __future__ import annotations

from metrics.holdout import holdout_scores
from transforms.records import MeasureKey
from transforms.vocabulary import HOLDOUT


def holdout_rows(key: tuple, results: list, tasks: dict) -> tuple[list, list]:
    """(summary rows, curve rows) of one (stream, model)'s holdout results: a curve point per
    holdout set (`labels` = the label count it began at, `n` = its labels scored, `t` = its
    last label's time), the summary the last set with a score; `tasks`: each model's task.

    >>> results = [(100, 5.0, 1, 1), (100, 6.0, 0, 1), (200, 9.0, 1, 1)]
    >>> summary, curves = holdout_rows(("s", "m"), results, {"m": "classification"})
    >>> [(r["metric"], r["value"], r["n"]) for r in summary]
    [('accuracy', 1.0, 1), ('kappa', nan, 1)]
    >>> [(r["labels"], r["value"]) for r in curves if r["metric"] == "accuracy"]
    [(100, 0.5), (200, 1.0)]
    """
    stream, model = key
    points = holdout_scores(results, tasks[model])
    last = max((p for p, _, n, _ in points if n), default=None)
    summary, curves = [], []
    for point, t, n, scores in points:
        for metric, value in scores.items():
            row = MeasureKey(stream, model, HOLDOUT, metric).row(float(value), n, t)
            curves.append({**row, "labels": point})
            if point == last:
                summary.append(row)
    return summary, curves
