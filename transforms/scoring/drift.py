"""Page-Hinkley over each model's error sequence: the one truly sequential statistic.

Per (stream, model) the losses (0-1 loss, or absolute error for regressors) of one prediction
kind are run through one detector per fading factor in label order, as the outcomes come
(`transforms.scoring.label_order`). Rows (category `drift`, window `cumulative` for α = 1, else
`fading=α`):

- `alarm`, one per alarm: value = the label number n at which it fired, t = that label's time;
- `alarms`: how many, over n monitored losses;
- for generated streams with known drift points (the `drift` option), alarms matched to drifts by
  the arrival of the instance whose loss raised them (the concept that loss came from):
  `drift_K_delay` (instances from drift K to the alarm that detects it, counted to the moment the
  alarm can be raised: the arrival of that loss's label; NaN if missed), `drift_K_arrival_delay`
  (from drift K to the arrival of the instance whose loss raised the alarm: the delay without the
  label's wait), `drift_K_false_alarms` (the other alarms before drift K+1), `missed_drifts`,
  `false_alarms` (all, including those before the first drift).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import apache_beam as beam
import numpy as np

from metrics.drift import PageHinkley, match_drifts
from transforms.records import MeasureKey
from transforms.scoring.columns import prediction_losses
from transforms.scoring.label_order import InLabelOrder
from transforms.scoring.outcomes import OutcomeTransform
from transforms.vocabulary import DRIFT, INITIAL, window_of_fading


@dataclass(frozen=True)
class DriftPlan:
    """Page-Hinkley settings: which prediction's losses, δ, λ, min instances, the α list.

    Example
    -------

    >>> plan = DriftPlan(threshold=20.0, alphas=(1.0, 0.999))
    >>> [d.alpha for d in map(plan.detector, plan.alphas)]
    [1.0, 0.999]

    """

    on: str = INITIAL  # initial | final
    delta: float = 0.005
    threshold: float = 50.0
    min_instances: int = 30
    alphas: tuple = (1.0,)
    drift_points: dict = field(default_factory=dict)  # stream -> known drift positions

    def detector(self, alpha: float) -> PageHinkley:
        return PageHinkley(self.delta, self.threshold, alpha, self.min_instances)


def losses(outcomes, task: str, on: str) -> np.ndarray:
    """Rows (n, arrival time, label time, loss) of the outcomes whose prediction was made.

    Example
    -------

    >>> from transforms.records import Outcome
    >>> out = [Outcome(1, "a", 0.0, 1.0, 1, 1, 1, 1, 0), Outcome(2, "b", 0.0, 2.0, 0, 1, 1, 1, 0)]
    >>> losses(out, "classification", "initial")[:, 3].tolist()  # the loss column
    [0.0, 1.0]
    >>> losses(out, "classification", "final")[:, 3].tolist()
    [1.0, 0.0]

    """
    cols = prediction_losses(outcomes, task, on)
    return np.column_stack([cols["n"], cols["t_arrival"], cols["t_label"], cols["loss"]]) \
        .astype(np.float64).reshape(-1, 4)


class PageHinkleyFold:
    """Page-Hinkley for each α over one key's losses in label order
    (`transforms.scoring.label_order`):
    the state is the detectors, the alarms (n, label time, arrival time) and the count.

    Example
    -------

    >>> fold = PageHinkleyFold(DriftPlan(threshold=5.0, min_instances=10))
    >>> rows = np.array([[n, n, n, float(n > 50)] for n in range(1, 101)])  # n, times, loss
    >>> state = fold.step(fold.start(), rows)
    >>> [n for n, _, _ in state["alarms"][1.0]], state["losses"]
    ([56], 100)

    """

    def __init__(self, plan: DriftPlan):
        self.plan = plan

    def start(self):
        return {"detectors": {a: self.plan.detector(a) for a in self.plan.alphas},
                "alarms": {a: [] for a in self.plan.alphas}, "losses": 0}

    def step(self, state, rows: np.ndarray):
        n, arrival, t, loss = rows.T
        for alpha, ph in state["detectors"].items():
            state["alarms"][alpha] += [(int(n[i]), float(t[i]), float(arrival[i]))
                                       for i, x in enumerate(loss.tolist()) if ph.update(x)]
        state["losses"] += len(rows)
        return state

    def result(self, state):
        return state["alarms"], state["losses"]


def drift_rows(stream: str, model: str, alarms: dict, monitored: int,
               plan: DriftPlan) -> list[dict]:
    """Result rows of one key: `alarms` {α: [(n, label time, arrival time)]} over `monitored`
    losses.

    Example
    -------

    >>> rows = drift_rows("s", "m", {1.0: [(56, 56.0, 56.0)]}, 100, DriftPlan())
    >>> [(r["metric"], r["value"]) for r in rows]
    [('alarm', 56), ('alarms', 1)]

    """
    rows = []
    for alpha in plan.alphas:
        view = "cumulative" if alpha == 1 else window_of_fading(alpha)

        def row(metric, value, count, when=None, view=view):
            return MeasureKey(stream, model, DRIFT, metric, window=view).row(value, count, when)

        fired = alarms[alpha]
        rows += [row("alarm", n, k, t) for k, (n, t, _) in enumerate(fired, 1)]
        rows.append(row("alarms", len(fired), monitored))
        if stream in plan.drift_points:
            # Generated streams: time is the instance index (0-based), drift `at` is 1-based.
            known = [p - 1 for p in plan.drift_points[stream]]
            matched = match_drifts([arrival for _, _, arrival in fired], known)
            for k, (drift, alarm, false) in enumerate(zip(known, matched["detections"],
                                                          matched["false_after"]), 1):
                _, t_label, arrival = fired[alarm] if alarm is not None else (0, math.nan,
                                                                              math.nan)
                rows.append(row(f"drift_{k}_delay", t_label - drift, monitored))
                rows.append(row(f"drift_{k}_arrival_delay", arrival - drift, monitored))
                rows.append(row(f"drift_{k}_false_alarms", false, len(fired)))
            rows.append(row("missed_drifts", matched["missed"], len(known)))
            rows.append(row("false_alarms", matched["false_alarms"], len(fired)))
    return rows


class DetectDrift(OutcomeTransform):
    """`((stream, model), [Outcome])` batches -> drift rows per (stream, model).

    Parameters
    ----------
    tasks
        Each model's task, by model name.
    plan
        The detectors' parameters and the streams' known drift points (`DriftPlan`).

    Example
    -------

    >>> import apache_beam as beam
    >>> from runners import make_runner
    >>> from transforms.records import Outcome
    >>> outcomes = [Outcome(n, n, 0.0, n, 1, 1, 1, 1 if n <= 100 else 0, None)
    ...             for n in range(1, 201)]  # right 100 times, then always wrong
    >>> plan = DriftPlan(threshold=5.0, min_instances=10)
    >>> with beam.Pipeline(runner=make_runner("direct")) as p:
    ...     rows = p | beam.Create([(("s", "m"), outcomes)]) | DetectDrift({"m": "classification"},
    ...                                                                    plan)
    ...     _ = (rows | beam.Filter(lambda r: r["metric"] == "alarm")
    ...          | beam.Map(lambda r: print("alarm at label", int(r["value"]))))
    alarm at label 106

    (river's `drift.PageHinkley(min_instances=10, threshold=5.0, mode="up")` on the same
    losses alarms at the same label.)

    References
    ----------
    Gama, J., Sebastião, R., Rodrigues, P. P. (2009). Issues in evaluation of stream
    learning algorithms. Proceedings of the 15th ACM SIGKDD International Conference on
    Knowledge Discovery and Data Mining, 329–338.
    """

    def expand(self, outcome_batches):
        tasks, plan = self.tasks, self.plan

        def to_losses(element):
            (stream, model), outcomes = element
            return (stream, model), ([o.n for o in outcomes],
                                     losses(outcomes, tasks[model], plan.on))

        def rows(element):
            (stream, model), (alarms, monitored) = element
            return drift_rows(stream, model, alarms, monitored, plan)

        return (outcome_batches
                | "Losses" >> beam.Map(to_losses)
                | "PageHinkley" >> beam.CombinePerKey(InLabelOrder(PageHinkleyFold(plan)))
                | "Rows" >> beam.FlatMap(rows))
