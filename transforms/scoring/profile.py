"""The stream profile (temporal dependence, Žliobaitė et al. 2015) from the replay's label
sequence."""

from __future__ import annotations

import apache_beam as beam
import numpy as np

from metrics.temporal import TemporalProfile
from transforms.scoring.label_order import InLabelOrder


class _ProfileFold:
    """`metrics.temporal.TemporalProfile` fed in label order (`transforms.scoring.label_order`)."""

    def __init__(self, max_lag: int):
        self.max_lag = max_lag

    def start(self):
        return TemporalProfile(self.max_lag)

    def step(self, profile, rows: np.ndarray):
        return profile.update(rows[:, 1])

    def result(self, profile):
        return profile.result()


class ProfileStreams(beam.PTransform):
    """`((stream, model), [Outcome])` batches -> (stream, profile) for each classification
    stream, from its first model's outcomes (every model sees the same labels in the same
    order).

    Parameters
    ----------
    first_model
        For each stream, the model whose outcomes carry its labels.
    max_lag
        The longest run length ℓ for which Δ(ℓ) is reported.

    Example
    -------

    >>> import apache_beam as beam
    >>> from runners import make_runner
    >>> from transforms.records import Outcome
    >>> labels = [0, 0, 0, 1, 1, 1, 0, 0]
    >>> outcomes = [Outcome(n, n, 0.0, n, y, 0, 0, None, None) for n, y in enumerate(labels, 1)]
    >>> with beam.Pipeline(runner=make_runner("direct")) as p:
    ...     profiles = p | beam.Create([(("s", "m"), outcomes)]) | ProfileStreams({"s": "m"})
    ...     _ = profiles | beam.Map(lambda kv: print(kv[0], kv[1]["p_same"]))
    s 0.7142857142857143

    P(T): 5 of the 7 labels after the first repeat the previous one.

    References
    ----------
    Žliobaitė, I., Bifet, A., Read, J., Pfahringer, B., Holmes, G. (2015). Evaluation
    methods and decision theory for classification of streaming data with temporal dependence.
    Machine Learning 98(3), 455–482.
    """

    def __init__(self, first_model: dict[str, str], max_lag: int = 5):
        super().__init__()
        self.first_model = first_model  # stream -> the model whose outcomes are read
        self.max_lag = max_lag

    def expand(self, outcome_batches):
        first = self.first_model

        def labels(element):
            (stream, model), outcomes = element
            if first.get(stream) == model:
                rows = np.array([(o.n, o.y) for o in outcomes], dtype=np.int64).reshape(-1, 2)
                yield stream, (rows[:, 0], rows)

        return (outcome_batches
                | "Labels" >> beam.FlatMap(labels)
                | "Profile" >> beam.CombinePerKey(InLabelOrder(_ProfileFold(self.max_lag))))
