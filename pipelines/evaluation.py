"""`EvaluateDelayed`: the whole evaluation as one composite transform, for a pipeline of your own.

    streams -> events -> ordered replay per (stream, model) -> outcomes
            -> scores (initial, bins, Ψα, final; windows, fading factors), comparisons,
               Page-Hinkley, stream profiles

A backfill replaces the replay by a join of a prediction log with the labelled instances.
"""

from __future__ import annotations

import functools

import apache_beam as beam

from pipelines.config import RunConfig
from pipelines.plan import Plan, plan
from transforms.backfill.outcomes import LABELS, BackfillOutcomes, LabelsOnly
from transforms.models.specs import ModelSpec, Step
from transforms.replay.keyed import KEYED_CHUNKS, EngineFactory, GroupedReplay, StatefulReplay
from transforms.records import segment_batches
from transforms.replay.per_key import PerKeyReplay
from transforms.scoring.comparison import CompareModels
from transforms.scoring.drift import DetectDrift
from transforms.scoring.holdout import holdout_rows
from transforms.scoring.in_stream import StreamScores
from transforms.scoring.outcomes import ScoreOutcomes
from transforms.scoring.profile import ProfileStreams
from transforms.scoring.resources import RowsPerKey, resource_rows
from transforms.streams.read import ReadStreams
from transforms.vocabulary import (CLASSES, COUNTS, CURVES, DEAD_LETTERS, ERRORS,
                                   HOLDOUT_POINTS, PREDICTIONS, READ_COUNTS, RESOURCE_POINTS,
                                   SUMMARY)

PROFILES = "profiles"


def recorded_failures(pl: Plan) -> dict:
    """A backfill's `PredictionLogSpec.recorded_failures` of its streams and models: the models
    among them get a label pass of their own.

    >>> pl = plan(RunConfig(streams=['s=synth:SEA{"n": 10}'], models=["nb=gaussian-nb"],
    ...                     delay="2", out="unused"))
    >>> recorded_failures(pl)  # (not a backfill)
    {}
    """
    if not pl.backfill:
        return {}
    streams = {s.name for s in pl.streams}
    return {key: events for key, events in pl.log.recorded_failures(pl.time_range).items()
            if key[0] in streams and key[1] in pl.models}


class EvaluateDelayed(beam.PTransform):
    """Evaluate models on streams with delayed labels: a composite to apply to a pipeline.

    Parameters
    ----------
    config
        A `RunConfig` (or its `Plan`), as the command line builds it: `streams` and `models`
        as for `--stream` and `--model`, the `delay`, and every other option. It is checked
        when the transform is made, so a mistake is an error before the pipeline runs.
    spill
        A backfill's folder for its prediction log's rows, spilled by id bucket so that only
        file paths are shuffled (`run` gives a folder in its staging folder and deletes it);
        None: the rows are shuffled as data.

    Applied to a pipeline, it returns a dict of PCollections:

    - `summary`: end-of-stream rows (dicts with the columns of `summary.csv` but `run_id` and
      `protocol`);
    - `curves`: Arrow tables of curve rows (`transforms.vocabulary.CURVE_SCHEMA`);
    - `predictions`: per (stream, model), its prediction columns (a backfill has none);
    - `dead_letters`, `counts`, `classes`, `read_counts`, `errors` (and a backfill's
      `log_rows_not_scored`): the bookkeeping that the manifest adds up;
    - `profiles`: `(stream, profile)` — each stream's temporal dependence.

    `WriteResults` writes them as a run does; or take the PCollections to a sink of your own.

    Example
    -------

    >>> import apache_beam as beam
    >>> from pipelines import EvaluateDelayed, RunConfig
    >>> from runners import make_runner
    >>> config = RunConfig(streams=['synth:SEA{"n": 300, "seed": 1}'],
    ...                    models=["no-change", "gaussian-nb"], delay="10", out="unused",
    ...                    repredict="none", drift_on="none", quiet=True)
    >>> with beam.Pipeline(runner=make_runner("direct")) as p:
    ...     results = p | EvaluateDelayed(config)
    ...     _ = (results["summary"]
    ...          | beam.Filter(lambda r: r["category"] == "initial" and r["metric"] == "accuracy"
    ...                        and r["window"] == "cumulative")
    ...          | beam.Map(lambda r: print(r["model"], r["n"], round(r["value"], 3))))
    no-change 290 0.638
    gaussian-nb 290 0.928

    References
    ----------
    M. Grzenda, H. M. Gomes and A. Bifet. Performance measures for evolving predictions under
    delayed labelling classification. IJCNN 2020.

    """

    def __init__(self, config: RunConfig | Plan, spill: str | None = None):
        super().__init__()
        self.plan = config if isinstance(config, Plan) else plan(config)
        self.spill = spill

    def expand(self, pbegin):
        pl = self.plan
        source = self._outcomes(pbegin)
        outcomes = source.pop("outcomes")
        if SUMMARY in source:  # scored (and compared) by the replay as it drained
            summaries, curves = [source.pop(SUMMARY)], [source.pop(CURVES)]
        else:
            sliced = outcomes if not pl.config.segments else (
                outcomes | "Segments" >> beam.FlatMapTuple(segment_batches)
                .with_output_types(KEYED_CHUNKS))
            scored = sliced | "Score" >> ScoreOutcomes(pl.tasks, pl.scoring, source[CLASSES])
            summaries, curves = [scored.summary], [scored[CURVES]]
            if len(pl.models) > 1:
                compared = sliced | "Compare" >> CompareModels(pl.tasks, pl.scoring)
                summaries.append(compared.summary)
                curves.append(compared[CURVES])
        if pl.drift is not None:
            summaries.append(outcomes | "Drift" >> DetectDrift(pl.tasks, pl.drift))
        held_out = source.pop(HOLDOUT_POINTS, None)
        if held_out is not None and pl.holdout is not None:
            holdout = held_out | "Holdout" >> RowsPerKey(functools.partial(holdout_rows,
                                                                           tasks=pl.tasks))
            summaries.append(holdout.summary)
            curves.append(holdout[CURVES])
        points = source.pop(RESOURCE_POINTS, None)
        if points is not None and pl.config.resources:
            scoring = pl.scoring  # (each stream's own curve points)
            costs = points | "Resources" >> RowsPerKey(
                lambda key, found: resource_rows(key, found,
                                                 scoring.for_stream(key[0]).curve_every))
            summaries.append(costs.summary)
            curves.append(costs[CURVES])
        classifiers = [m for m in pl.models if pl.tasks[m] == "classification"]
        first_classifier = {s.name: classifiers[0] for s in pl.streams} if classifiers else {}
        return {**source,
                "summary": summaries | "AllSummaries" >> beam.Flatten(),
                CURVES: curves | "AllCurves" >> beam.Flatten(),
                PROFILES: outcomes | "StreamProfiles" >> ProfileStreams(first_classifier)}

    def _outcomes(self, pbegin) -> dict:
        """The label outcomes and their bookkeeping (dead letters, counts, classes, read
        counts; and the replay's predictions): from replaying models, or from a prediction
        log."""
        pl, cfg = self.plan, self.plan.config
        progress = None if cfg.quiet else cfg.progress_every
        if pl.backfill:
            failures = recorded_failures(pl)
            set_aside = [m for m in pl.models if any(key[1] == m for key in failures)]
            passes = [LABELS, *set_aside]  # (a model with failures has a label pass of its own)
            task = next(iter(pl.tasks.values()))  # (every logged model's: --task or the plan's)
            label_engines = EngineFactory(
                {p: ModelSpec(p, (Step(f"{LabelsOnly.__module__}.LabelsOnly"),)) for p in passes},
                pl.classes, dict.fromkeys(passes, task), final=False, log_predictions="none",
                progress=progress, baselines=pl.scoring.baseline_views,
                on_model_error="dead-letter", segments=tuple(cfg.segments), hidden=pl.hidden,
                maturity=True, holdout=pl.holdout, fails_at=failures, pending_ids=True)
            reader = ReadStreams(pl.streams, passes, pl.delay, cfg.chunk_size, pl.time_range)
            return dict(pbegin | "Backfill" >> BackfillOutcomes(
                reader, label_engines, pl.log, list(pl.models), task == "classification",
                pl.scoring.bins, cfg.final, cfg.buckets, cfg.chunk_size,
                "per-key" if pl.replay in ("per-key", "per-stream") else "grouped",
                self.spill, cfg.probabilities, pl.scoring.binned_probabilities, set_aside))
        reader = ReadStreams(pl.streams, list(pl.models), pl.delay, cfg.chunk_size,
                             pl.time_range)
        engines = EngineFactory(pl.models, pl.classes, pl.tasks, cfg.final, pl.repredict,
                                pl.scoring.bins, cfg.log_predictions, progress,
                                pl.scoring.baseline_views, cfg.on_model_error,
                                cfg.probabilities,
                                pl.scoring.curve_every if cfg.resources else 0,
                                tuple(cfg.segments), pl.hidden, cv=pl.cv, holdout=pl.holdout,
                                curve_steps=dict(pl.scoring.curve_steps),
                                repredicted_probabilities=cfg.repredicted_probabilities,
                                binary=pl.binary)
        if pl.replay in ("per-key", "per-stream"):
            scores = StreamScores(pl.tasks, pl.scoring) if pl.replay == "per-stream" else None
            replay = pbegin | "Replay" >> PerKeyReplay(
                pl.streams, list(pl.models), engines, pl.delay, cfg.chunk_size, pl.time_range,
                scores)
            return {"outcomes": replay.outcomes, **{tag: replay[tag] for tag in (
                PREDICTIONS, DEAD_LETTERS, COUNTS, CLASSES, READ_COUNTS, ERRORS,
                RESOURCE_POINTS, HOLDOUT_POINTS)},
                **({SUMMARY: replay[SUMMARY], CURVES: replay[CURVES]} if scores else {})}
        read = pbegin | "Read" >> reader
        if pl.replay == "grouped":
            replay = read["chunks"] | "Replay" >> GroupedReplay(engines, cfg.chunk_size)
        else:
            replay = read["chunks"] | "Replay" >> StatefulReplay(engines, cfg.chunk_size,
                                                                 cfg.timer_bucket)
        return {"outcomes": replay.outcomes, PREDICTIONS: replay[PREDICTIONS],
                RESOURCE_POINTS: replay[RESOURCE_POINTS], HOLDOUT_POINTS: replay[HOLDOUT_POINTS],
                DEAD_LETTERS: (read[DEAD_LETTERS], replay[DEAD_LETTERS])
                | "AllDeadLetters" >> beam.Flatten(),
                COUNTS: replay[COUNTS], CLASSES: replay[CLASSES], READ_COUNTS: read[READ_COUNTS],
                ERRORS: (read[ERRORS], replay[ERRORS]) | "AllErrors" >> beam.Flatten()}
