"""The ordered replay of one (stream, model) key, and the Beam transforms that run it.

`ReplayEngine` (plain Python) takes events in `(t, rank, seq)` order and makes each initial,
re-evaluated and final prediction, learns, and hands out outcomes; `RepredictPolicy` says when a
pending instance is asked again. The Beam arrangements around the same engine:
`PerKeyReplay` (per stream or per key, reading as it drains), `GroupedReplay` (GroupByKey, then
sort) and `StatefulReplay` (state and event-time timers, bounded or unbounded).

>>> from transforms.replay import RepredictPolicy
>>> RepredictPolicy.parse("every_k_labels:10").k
10
"""

from transforms import lazy_exports

_WHERE = {"ReplayEngine": "engine", "PredictionLog": "predictions", "RepredictPolicy": "repredict",
          "PendingRows": "repredict", "GroupedReplay": "keyed", "StatefulReplay": "keyed",
          "PerKeyReplay": "per_key"}
__all__ = sorted(_WHERE)
__getattr__ = lazy_exports(__name__, _WHERE)
