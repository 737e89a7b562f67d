"""One stream, one model, in plain Python: the replay engine and the scoring that a pipeline
runs, without Beam (for notebooks, tests and quick looks; the whole stream is held in memory).
"""

from __future__ import annotations

import tempfile
from typing import NamedTuple

import pandas as pd

from pipelines.results import text_gaps_as_nan
from transforms.models.binary import binary_classes
from transforms.models.specs import ModelSpec, check_tasks, spec_of
from transforms.replay.engine import ReplayEngine, key_counts, none_scored_initially
from transforms.replay.repredict import RepredictPolicy
from transforms.scoring.curves import score_locally, with_class_names
from transforms.scoring.plan import ScoringPlan, curve_step
from transforms.streams.delays import DelaySpec
from transforms.streams.generators import stream_spec_of
from transforms.streams.python_rows import errors_naming_the_data, is_rows, written_streams
from transforms.streams.sources import StreamSpec

ROW_COLUMNS = ["stream", "model", "category", "bin", "alpha", "window", "metric", "class",
               "predicted", "value", "n", "t"]


class LocalResult(NamedTuple):
    """What `evaluate_locally` returns: the end-of-stream `summary` rows and the `curves`
    (the columns of `summary.csv` and `curves.parquet` but `run_id` and `protocol`), the
    replay's `counts` (as the manifest's `counts` give them) and the `dead_letters` (of data
    given from Python: its row, no file).

    Example
    -------

    >>> result = evaluate_locally('synth:SEA{"n": 50, "seed": 1}', "majority", "5")
    >>> sorted(result.summary["category"].unique()), result.counts["labelled"]
    (['final', 'initial'], 50)

    """

    summary: pd.DataFrame
    curves: pd.DataFrame
    counts: dict
    dead_letters: list


def evaluate_locally(stream: str, model: str, delay: str = "0", *, final: bool = True,
                     repredict: str = "none", bins: int = 100, alphas=(1.0, 2.0, 10.0),
                     windows=(), fadings=(), time_windows=(),
                     curve_every: int | None = None, auc: bool = False) -> LocalResult:
    """Evaluate `model` (a spec, as for `--model`, or a river estimator) on `stream` (as for
    `--stream`, or a river dataset or generator) with the label `delay`, in this process: the
    same engine and scoring as `run`, the same numbers.

    Parameters
    ----------
    stream, model, delay
        As for `--stream`, `--model` and `--delay` (a `datetime.timedelta` too, None no
        delay, as river); the stream may be data, as for `evaluate`.
    final, repredict, bins, alphas, windows, fadings, time_windows, curve_every, auc
        As the `RunConfig` fields of the same names (re-evaluation is off by default here).

    Example
    -------

    >>> result = evaluate_locally('synth:SEA{"n": 300, "seed": 1}', "gaussian-nb", "10")
    >>> row = result.summary.query("category == 'initial' and metric == 'accuracy'")
    >>> int(row["n"].iloc[0]), round(float(row["value"].iloc[0]), 3)
    (290, 0.928)
    >>> result.counts["labelled"], len(result.dead_letters)
    (300, 0)

    References
    ----------
    M. Halford. The correct way to evaluate online machine learning models. 2020 (delayed
    progressive validation: the `initial` rows).

    """
    with tempfile.TemporaryDirectory(prefix="delayed-eval-") as folder:
        if is_rows(stream):  # (x, y) pairs or a DataFrame: read from a file, as `run` does
            stream = written_streams(stream, folder)  # (removed here; `evaluate` keeps its)
        # (a river dataset or generator too)
        spec = StreamSpec.parse(stream_spec_of(stream)).with_label_table_time()
        with errors_naming_the_data(folder):
            spec.check()
        model_spec = ModelSpec.parse(spec_of(model))  # (a river estimator too)
        policy = RepredictPolicy.parse(repredict).with_bins(bins)
        plan = ScoringPlan.of(policy, final=final, bins=bins, alphas=alphas,
                              curve_every=curve_every or curve_step(spec.approximate_length()),
                              windows=windows, fadings=fadings,
                              time_windows=time_windows, auc=auc)
        tasks = {model_spec.name: model_spec.task()}
        check_tasks([spec], tasks)
        binary = binary_classes([spec], {model_spec.name: model_spec}, tasks)
        engine = ReplayEngine(model_spec, spec.name, spec.declared_classes(), final=final,
                              repredict=policy, bins=plan.bins, log_predictions="none",
                              baselines=plan.baseline_views, binary=binary.get(spec.name))
        delay = DelaySpec.parse(delay)
        items = list(spec.events(delay))
        # Data given from Python: a dead letter names its row, in no file of the user's.
        dead_letters = [{**i, "file": None} if (i.get("file") or "").startswith(folder) else i
                        for i in items if isinstance(i, dict)]
        result = engine.drain([i for i in items if not isinstance(i, dict)])
        counts = key_counts({**result.counts, "pending": len(engine.pending)}, final)
        if counts["labelled"] and not counts["scored_initial"] and \
                not result.counts.get("unanswered_after_learning"):  # (as `run` refuses it)
            raise none_scored_initially(spec, None if spec.label_times_given() else
                                        spec.delay(delay), counts["instances"])
        summary, curves = score_locally((spec.name, model_spec.name), result.outcomes,
                                        engine.task, plan)
        classes = list(engine.outcome_classes)
        return LocalResult(text_gaps_as_nan(pd.DataFrame([with_class_names(r, classes)
                                                          for r in summary], columns=ROW_COLUMNS)),
                           pd.DataFrame([with_class_names(r, classes) for r in curves],
                                        columns=[*ROW_COLUMNS, "labels"]),
                           counts,
                           dead_letters + result.dead_letters)
