"""The stream profile (temporal dependence, paper 003) from the replay's label sequence."""

from __future__ import annotations

import apache_beam as beam
import numpy as np

from metrics.temporal import stream_profile


class ProfileStreams(beam.PTransform):
    """`((stream, model), [Outcome])` batches -> (stream, profile) for each classification
    stream, from its first model's outcomes (every model sees the same labels in the same
    order)."""

    def __init__(self, first_model: dict[str, str], max_lag: int = 5):
        super().__init__()
        self.first_model = first_model  # stream -> the model whose outcomes are read
        self.max_lag = max_lag

    def expand(self, outcome_batches):
        first, max_lag = self.first_model, self.max_lag

        def labels(element):
            (stream, model), outcomes = element
            if first.get(stream) == model:
                yield stream, np.array([(o.n, o.y) for o in outcomes],
                                       dtype=np.int64).reshape(-1, 2)

        def profile(element):
            stream, parts = element
            table = np.concatenate(list(parts))
            table = table[np.argsort(table[:, 0], kind="stable")]
            return stream, stream_profile(table[:, 1], max_lag)

        return (outcome_batches
                | "Labels" >> beam.FlatMap(labels)
                | "LabelsPerStream" >> beam.GroupByKey()
                | "Profile" >> beam.Map(profile))
