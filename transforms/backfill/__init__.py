"""Backfill: scoring a deployed model's logged predictions, with no model replayed.

`PredictionLogSpec` names a prediction log (files, columns); `join_predictions` matches each
prediction to the labelled instance whose latency period holds it and maps it to its bin, one
vectorised pass per id bucket; `BackfillOutcomes` is the Beam transform that does both and hands
the same outcomes as a replay to the scoring.

>>> from transforms.backfill import PredictionLogSpec
>>> PredictionLogSpec.parse('logs/p{"prediction": "decision"}').pattern
'logs/p'
"""

from transforms import lazy_exports

_WHERE = {"PredictionLogSpec": "logs", "join_predictions": "join", "BackfillOutcomes": "outcomes"}
__all__ = sorted(_WHERE)
__getattr__ = lazy_exports(__name__, _WHERE)
