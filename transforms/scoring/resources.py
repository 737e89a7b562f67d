"""A model's cost (`--resources`): the replay's measurements as summary and curve rows —
CPU seconds in learning and in predicting, the model's size and MOA's RAM-hours."""

from __future__ import annotations

import apache_beam as beam
import pyarrow as pa

from transforms.records import MeasureKey
from transforms.vocabulary import CURVE_SCHEMA, CURVES, RESOURCE_METRICS, RESOURCES


def resource_rows(key: tuple, points: list, curve_every: int) -> tuple[list, list]:
    """(summary rows, curve rows) of one (stream, model)'s measurements, each (labels, t,
    learn CPU s, predict CPU s, model bytes, RAM-hours): the summary is the measurement at the
    most labels, the curves each curve point's and that last one.

    >>> points = [(1000, 9.0, 0.5, 0.2, 4096, 1e-9), (1500, 14.0, 0.8, 0.3, 5120, 2e-9),
    ...           (1000, 9.0, 0.5, 0.2, 4096, 1e-9)]  # a point can come twice (a retry)
    >>> summary, curves = resource_rows(("s", "m"), points, 1000)
    >>> [(r["metric"], r["value"], r["n"]) for r in summary][:2]
    [('learn_cpu_seconds', 0.8, 1500), ('predict_cpu_seconds', 0.3, 1500)]
    >>> sorted({r["labels"] for r in curves})
    [1000, 1500]
    """
    by_labels = {p[0]: p for p in sorted(points)}  # the same labels: the same state
    last = max(by_labels)
    stream, model = key
    summary, curves = [], []
    for labels, point in sorted(by_labels.items()):
        if labels % curve_every and labels != last:
            continue
        for metric, value in zip(RESOURCE_METRICS, point[2:]):
            row = MeasureKey(stream, model, RESOURCES, metric).row(float(value), labels,
                                                                   point[1])
            if labels == last:
                summary.append(row)
            curves.append({**row, "labels": labels})
    return summary, curves


class RowsPerKey(beam.PTransform):
    """(key, a batch of measurements) from the replay's drains -> per (stream, model) the
    summary rows, and curve rows tagged `curves` (Arrow tables), that `make_rows(key, all its
    measurements)` returns as (summary rows, curve rows).

    >>> from runners import make_runner
    >>> with beam.Pipeline(runner=make_runner("direct")) as p:
    ...     rows = (p | beam.Create([(("s", "m"), [1, 2]), (("s", "m"), [3])])
    ...             | RowsPerKey(lambda key, points: ([(key, sorted(points))], [])))
    ...     _ = rows.summary | beam.Map(print)
    (('s', 'm'), [1, 2, 3])
    """

    def __init__(self, make_rows):
        super().__init__()
        self.make_rows = make_rows

    def expand(self, points):
        make_rows = self.make_rows

        def rows(element):
            key, batches = element
            summary, curves = make_rows(key, [p for b in batches for p in b])
            yield from summary
            yield beam.pvalue.TaggedOutput(CURVES, pa.Table.from_pylist(curves, CURVE_SCHEMA))

        return (points | "ByKey" >> beam.GroupByKey()
                | "Rows" >> beam.FlatMap(rows).with_outputs(CURVES, main="summary"))
