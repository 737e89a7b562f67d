"""The periodic holdout (`--holdout EVERY:SIZE`) as summary and curve rows: each holdout set
scored on its own (`metrics.holdout`), a curve point per set, the last set in the summary."""

from __future__ import annotations

import apache_beam as beam
import pyarrow as pa

from metrics.holdout import holdout_scores
from transforms.records import MeasureKey
from transforms.vocabulary import CURVE_SCHEMA, CURVES, HOLDOUT


def holdout_rows(key: tuple, results: list, task: str) -> tuple[list, list]:
    """(summary rows, curve rows) of one (stream, model)'s holdout results: a curve point per
    holdout set (`labels` = the label count it began at, `n` = its labels scored, `t` = its
    last label's time), the summary the last set with a score.

    >>> results = [(100, 5.0, 1, 1), (100, 6.0, 0, 1), (200, 9.0, 1, 1)]
    >>> summary, curves = holdout_rows(("s", "m"), results, "classification")
    >>> [(r["metric"], r["value"], r["n"]) for r in summary]
    [('accuracy', 1.0, 1), ('kappa', nan, 1)]
    >>> [(r["labels"], r["value"]) for r in curves if r["metric"] == "accuracy"]
    [(100, 0.5), (200, 1.0)]
    """
    stream, model = key
    points = holdout_scores(results, task)
    last = max((p for p, _, n, _ in points if n), default=None)
    summary, curves = [], []
    for point, t, n, scores in points:
        for metric, value in scores.items():
            row = MeasureKey(stream, model, HOLDOUT, metric).row(float(value), n, t)
            curves.append({**row, "labels": point})
            if point == last:
                summary.append(row)
    return summary, curves


class HoldoutRows(beam.PTransform):
    """(key, holdout results) from the replay's drains -> summary rows, and curve rows tagged
    `curves` (Arrow tables), per (stream, model) (`holdout_rows`)."""

    def __init__(self, tasks: dict):
        super().__init__()
        self.tasks = tasks

    def expand(self, results):
        tasks = self.tasks

        def rows(element):
            key, batches = element
            summary, curves = holdout_rows(key, [r for b in batches for r in b],
                                           tasks[key[1]])
            yield from summary
            yield beam.pvalue.TaggedOutput(CURVES, pa.Table.from_pylist(curves, CURVE_SCHEMA))

        return (results | "ByKey" >> beam.GroupByKey()
                | "Rows" >> beam.FlatMap(rows).with_outputs(CURVES, main="summary"))
