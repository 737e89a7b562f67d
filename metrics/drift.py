"""Page-Hinkley drift detection over an error sequence (Gama et al. 2009, section 3.4.1),
and how its alarms match known drift points (detection delay, misses, false alarms)."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass
class PageHinkley:
    """Page-Hinkley test for an increase of the mean, with an optional fading factor α.

    m_T = α·m_{T−1} + (x_T − x̄_T − δ), M_T = min_t m_t; alarm when m_T − M_T > λ (after at
    least `min_instances` values since the last reset); the test restarts after an alarm. α = 1
    is the plain test m_T = Σ_t (x_t − x̄_t − δ). The same floating-point operations as river's
    `drift.PageHinkley(mode="up")`, so both alarm on the same values.

    Parameters
    ----------
    delta
        δ, the magnitude of change tolerated.
    threshold
        λ, the alarm threshold.
    alpha
        α, the fading factor of m_T (1: none).
    min_instances
        Values seen since the last reset before an alarm may be raised.

    >>> ph = PageHinkley(delta=0.005, threshold=5.0, min_instances=10)
    >>> [i for i, x in enumerate([0.0] * 50 + [1.0] * 50) if ph.update(x)]
    [55]

    References
    ----------
    Gama, J., Sebastião, R., Rodrigues, P. P. (2009). Issues in evaluation of stream
    learning algorithms. Proceedings of the 15th ACM SIGKDD International Conference on
    Knowledge Discovery and Data Mining, 329–338.
    """

    delta: float = 0.005
    threshold: float = 50.0
    alpha: float = 1.0
    min_instances: int = 30

    def __post_init__(self):
        self._reset()
        self.alarm = False

    def _reset(self) -> None:
        self.n = 0
        self.mean = 0.0
        self.m = 0.0
        self.m_min = math.inf

    def update(self, x: float) -> bool:
        """Add one value; True when it raises an alarm."""
        if self.alarm:
            self._reset()
        self.n += 1
        self.mean += (1.0 / self.n) * (x - self.mean)
        self.m = self.alpha * self.m + (x - self.mean) - self.delta
        self.m_min = min(self.m_min, self.m)
        self.alarm = self.n >= self.min_instances and self.m - self.m_min > self.threshold
        return self.alarm

    @property
    def statistic(self) -> float:
        """PH_T = m_T − M_T."""
        return self.m - self.m_min


def alarms(values, **params) -> list[int]:
    """Indices (0-based) of the values at which Page-Hinkley alarms.

    >>> alarms([0.0] * 50 + [1.0] * 50, threshold=5.0, min_instances=10)
    [55]
    """
    ph = PageHinkley(**params)
    return [i for i, x in enumerate(values) if ph.update(x)]


def match_drifts(alarm_positions, drift_positions) -> dict:
    """Match alarms to known drift points (both as stream positions): the first alarm at or
    after a drift and before the next one detects it, with delay = alarm − drift; a drift
    without one is missed; every other alarm is false — counted per drift period
    (`false_after`, the alarms in [drift k, drift k+1) besides its detection) and before the
    first drift (`false_before`). `detections` names, per drift, the detecting alarm (its
    index in `alarm_positions`) or None.

    >>> m = match_drifts([120, 130, 450, 900], [100, 400, 800])
    >>> m["delays"], m["missed"], m["false_alarms"], m["false_before"], m["false_after"]
    ([20, 50, 100], 0, 1, 0, [1, 0, 0])
    >>> m = match_drifts([700, 50], [100, 400])
    >>> m["delays"], m["detections"]
    ([None, 300], [None, 0])
    """
    drifts = sorted(drift_positions)
    delays: list = [None] * len(drifts)
    detections: list = [None] * len(drifts)
    false_after = [0] * len(drifts)
    false_before = 0
    for i in sorted(range(len(alarm_positions)), key=lambda i: alarm_positions[i]):
        a = alarm_positions[i]
        k = max((j for j, d in enumerate(drifts) if d <= a), default=None)
        if k is None:
            false_before += 1
        elif delays[k] is None:
            delays[k], detections[k] = a - drifts[k], i
        else:
            false_after[k] += 1
    return {"delays": delays, "detections": detections,
            "missed": sum(d is None for d in delays),
            "false_alarms": false_before + sum(false_after), "false_before": false_before,
            "false_after": false_after}
