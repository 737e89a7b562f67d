"""Models: built on the workers from serialisable specs.

`ModelSpec` parses `NAME=PATH{json}` (or a short name, or a `|` pipeline) and builds a fresh river
estimator; `Majority` and `NoChange` are the MOA baselines, `NoChangeRegressor` and
`MeanRegressor` their counterparts for a numeric target; `TemporalCorrection` and
`TemporallyAugmented` wrap a classifier to use the labels' temporal dependence; `OneHotText`
encodes text features for models that take numbers; `batch_predictor`
gives the exact vectorised predictor that re-evaluation uses for a model, if there is one.
Plain Python, no Beam.

>>> from transforms.models import ModelSpec
>>> ModelSpec.parse("nb=gaussian-nb").name
'nb'
"""

from transforms import lazy_exports

_WHERE = {"ModelSpec": "specs", "Majority": "specs", "NoChange": "specs",
          "NoChangeRegressor": "specs", "MeanRegressor": "specs",
          "TemporalCorrection": "temporal", "TemporallyAugmented": "temporal",
          "OneHotText": "encoding",
          "batch_predictor": "batch"}
__all__ = sorted(_WHERE)
__getattr__ = lazy_exports(__name__, _WHERE)
