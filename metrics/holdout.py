"""The periodic holdout's scores (Gama et al. 2009): each holdout set scored on its own.

A holdout point is the label count at which its set began; its instances were predicted by the
model as it stood there, and never learned from. So each point's score is an unbiased estimate
of that model's loss, and the points form the holdout curve that the prequential estimates
(cumulative, windowed, faded) are compared with.
"""

from __future__ import annotations

import math

from metrics.classification import ClassificationScore
from metrics.regression import RegressionScore

HOLDOUT_METRICS = {"classification": ("accuracy", "kappa"), "regression": ("mae", "rmse")}


def holdout_scores(results, task: str) -> list[tuple[int, float, int, dict]]:
    """(point, its last label's time, labels scored, {metric: value}) per holdout point, in
    point order, from (point, label time, true value, prediction) results; a prediction the
    model could not make (None, NaN) counts in no score.

    Example
    -------

    >>> results = [(100, 5.0, 1, 1), (100, 6.0, 0, 1), (200, 9.0, 1, 1), (100, 7.0, 1, None)]
    >>> [(p, t, n, s["accuracy"]) for p, t, n, s in holdout_scores(results, "classification")]
    [(100, 7.0, 2, 0.5), (200, 9.0, 1, 1.0)]

    References
    ----------
    Gama, J., Sebastião, R., Rodrigues, P. P. (2009). Issues in evaluation of stream learning
    algorithms. KDD, 329–338 (the holdout estimate, Section 3).
    """
    points: dict = {}
    for point, t, y, prediction in sorted(results, key=lambda r: (r[0], r[1])):
        score, last, n = points.get(point, (None, -math.inf, 0))
        if score is None:
            score = ClassificationScore() if task == "classification" else RegressionScore()
        scored = prediction is not None and not (isinstance(prediction, float)
                                                 and math.isnan(prediction))
        if scored:
            if task == "classification":
                score.update(y, prediction, y, y)  # no baselines: κ_per and κ_m not reported
            else:
                score.update(y, prediction)
        points[point] = (score, max(last, t), n + scored)
    wanted = HOLDOUT_METRICS[task]
    return [(point, last, n, {m: v for m, v in score.get().items() if m in wanted})
            for point, (score, last, n) in sorted(points.items())]
