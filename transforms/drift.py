"""Page-Hinkley over each model's error sequence: the one truly sequential statistic.

Per (stream, model) the losses (0-1 loss, or absolute error for regressors) of one prediction
kind are collected — one float per label — sorted by label number and run through one detector
per fading factor. Rows (category `drift`, window `cumulative` for α = 1, else `fading=α`):

- `alarm`, one per alarm: value = the label number n at which it fired, t = that label's time;
- `alarms`: how many, over n monitored losses;
- for generated streams with known drift points (the `drift` option): `drift_K_delay` (instances
  from drift K to its detection, NaN if missed), `drift_K_false_alarms` (the other alarms before
  drift K+1), `missed_drifts`, `false_alarms` (all, including those before the first drift).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import apache_beam as beam
import numpy as np

from metrics.drift import PageHinkley, match_drifts
from transforms.records import INITIAL, MeasureKey
from transforms.scoring import OutcomeTransform, fading_label, prediction_losses

DRIFT = "drift"


@dataclass(frozen=True)
class DriftPlan:
    """Page-Hinkley settings: which prediction's losses, δ, λ, min instances, the α list."""

    on: str = INITIAL  # initial | final
    delta: float = 0.005
    threshold: float = 50.0
    min_instances: int = 30
    alphas: tuple = (1.0,)
    drift_points: dict = field(default_factory=dict)  # stream -> known drift positions

    def detector(self, alpha: float) -> PageHinkley:
        return PageHinkley(self.delta, self.threshold, alpha, self.min_instances)


def losses(outcomes, task: str, on: str) -> np.ndarray:
    """Rows (n, arrival time, label time, loss) of the outcomes whose prediction was made."""
    cols = prediction_losses(outcomes, task, on)
    return np.column_stack([cols["n"], cols["t_arrival"], cols["t_label"], cols["loss"]]) \
        .astype(np.float64).reshape(-1, 4)


def drift_rows(stream: str, model: str, table: np.ndarray, plan: DriftPlan) -> list[dict]:
    """Run the detectors over one key's losses (rows in any order) -> result rows."""
    table = table[np.argsort(table[:, 0], kind="stable")]
    n, arrival, t, loss = table.T
    rows = []
    for alpha in plan.alphas:
        view = "cumulative" if alpha == 1 else fading_label(alpha)

        def row(metric, value, count, when=None, view=view):
            return MeasureKey(stream, model, DRIFT, metric, window=view).row(value, count, when)

        ph = plan.detector(alpha)
        fired = [i for i, x in enumerate(loss.tolist()) if ph.update(x)]
        rows += [row("alarm", int(n[i]), k, float(t[i])) for k, i in enumerate(fired, 1)]
        rows.append(row("alarms", len(fired), len(loss)))
        if stream in plan.drift_points:
            # Generated streams: time is the instance index (0-based), drift `at` is 1-based.
            known = [p - 1 for p in plan.drift_points[stream]]
            matched = match_drifts([float(arrival[i]) for i in fired], known)
            for k, (delay, false) in enumerate(zip(matched["delays"], matched["false_after"]),
                                               1):
                rows.append(row(f"drift_{k}_delay", math.nan if delay is None else delay,
                                len(loss)))
                rows.append(row(f"drift_{k}_false_alarms", false, len(fired)))
            rows.append(row("missed_drifts", matched["missed"], len(known)))
            rows.append(row("false_alarms", matched["false_alarms"], len(fired)))
    return rows


class DetectDrift(OutcomeTransform):
    """`((stream, model), [Outcome])` batches -> drift rows per (stream, model)."""

    def expand(self, outcome_batches):
        tasks, plan = self.tasks, self.plan

        def to_losses(element):
            (stream, model), outcomes = element
            return (stream, model), losses(outcomes, tasks[model], plan.on)

        def detect(element):
            (stream, model), tables = element
            return drift_rows(stream, model, np.concatenate(list(tables)), plan)

        return (outcome_batches
                | "Losses" >> beam.Map(to_losses)
                | "LossesPerKey" >> beam.GroupByKey()
                | "PageHinkley" >> beam.FlatMap(detect))

