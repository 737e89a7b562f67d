"""The `run` job: plan, evaluate and write as one Beam pipeline, then publish.

    plan (checks) -> EvaluateDelayed (read, replay, score) -> WriteResults (staging folder)
         -> complete the summary, check, manifest -> publish into --out

The pipeline writes into a staging folder inside the output directory; when it has finished,
the driver completes the summary, writes the manifest and moves the files into place, so a
re-run replaces a previous run's files only once it has succeeded.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import logging
import sys

import apache_beam as beam
import pandas as pd
from apache_beam.io.filesystem import BeamIOError
from apache_beam.io.filesystems import FileSystems

from pipelines.config import RunConfig
from pipelines.evaluation import EvaluateDelayed, recorded_failures
from pipelines.files import (ERRORS_FILE, delete_folder, disk_error, io_reason, new_staging,
                             publish, read_bytes, staged_names, staging_file_gone, write_bytes,
                             write_json, write_parquet)
from pipelines.manifest import check_evaluated, complete_summary, manifest
from pipelines.maturity import (format_maturity, maturity_manifest, maturity_table,
                                pending_by_segment)
from pipelines.plan import plan
from pipelines.notices import (format_alike_classes, format_delay_changes, format_diverged,
                               format_foreign_predictions, format_log_notices,
                               format_odd_classes, format_one_time_window,
                               format_partly_scored, format_set_aside,
                               format_set_asides_of_run, format_uncompared,
                               format_unfixed_hash_seed, format_unknown_positive,
                               format_unanswered, format_unpredicted,
                               format_unheld, format_unrepredicted)
from pipelines.results import FINGERPRINTS, fingerprint, numbers_from_json
from pipelines.tables import (COMPARISON_CAPTION, RESOURCES_CAPTION, comparison_table,
                              drift_delay_table, format_profiles, format_table,
                              resources_table, segment_table)
from pipelines.write import WriteResults, keep_segments, located
from runners import PRESETS, dofn_specs_remembered, fewer_collections, runner_session
from transforms.backfill.outcomes import LOG_PARTS
from transforms.errors import ConfigError, DelayedEvalError, OutputError, one_line
from transforms.replay.progress import job_counters
from transforms.streams.table_files import delete_paths


def _where(error: OSError) -> str:
    return f" writing {error.filename}" if error.filename else ""


def run(config: RunConfig) -> pd.DataFrame:
    """Run the evaluation and return the summary (also written to `config.out`).

    >>> import tempfile
    >>> cfg = RunConfig(streams=['synth:SEA{"n": 300, "seed": 1}'],
    ...                 models=["no-change", "gaussian-nb"], delay="10", out=tempfile.mkdtemp(),
    ...                 quiet=True)
    >>> summary = run(cfg)
    >>> summary.query("category == 'initial' and metric == 'accuracy'")["n"].tolist()
    [290, 290]
    """
    with fewer_collections(), dofn_specs_remembered():
        return _run(config)


def _run(config: RunConfig) -> pd.DataFrame:
    pl = plan(config)
    started = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    staging = new_staging(config.out, config.run_id)
    try:
        # Worker processes log what this process would log of Beam's (--debug: everything).
        worker_logs = logging.getLogger("apache_beam").isEnabledFor(logging.INFO)
        with runner_session(config.runner, config.beam_args, worker_logs) as (runner, options):
            try:
                p = beam.Pipeline(runner=runner, options=options)  # (Dataflow checks them here)
                spill = FileSystems.join(staging, LOG_PARTS)
                _ = (p | "Evaluate" >> EvaluateDelayed(pl, spill)
                     | "Write" >> WriteResults(pl, staging))
                result = p.run()
                result.wait_until_finish()
            except Exception as e:
                _refuse_if_staging_lost(e, staging, config.out)
                disk = disk_error(e)
                if disk is None and config.runner not in PRESETS and \
                        not isinstance(e, DelayedEvalError):  # its options, not our bug
                    reason = one_line(e)
                    raise ConfigError(f"--runner {config.runner}: the job failed or could not "
                                      f"start: {type(e).__name__}: {reason[:400]}; give the "
                                      f"runner's options after the command (docs/runners.md)"
                                      ) from None
                if disk is None and "Channel closed prematurely" in str(e):
                    raise DelayedEvalError(
                        f"--runner {config.runner}: a worker process ended during the run "
                        f"({type(e).__name__}: {str(e).strip()}): a model or a library it calls "
                        f"may have ended it, or memory ran out; run with --runner direct to see "
                        f"the failure in this process, or with --debug for the workers' logs"
                    ) from None
                if disk is None:
                    raise
                raise OutputError(f"--out {config.out}: writing the results failed "
                                  f"({disk.strerror}{_where(disk)}); free space there or "
                                  f"choose another --out; the previous results there are "
                                  f"untouched") from None

        def staged(name):
            return FileSystems.join(staging, name)

        # A worker's mistake in the input or a model arrives as data, on every runner alike:
        # the run fails with the first (in a fixed order) and publishes nothing.
        errors = json.loads(read_bytes(staged(ERRORS_FILE)))
        if errors:
            raise DelayedEvalError.from_record(min(errors, key=lambda e: (e["type"],
                                                                          e["message"])))

        counts = json.loads(read_bytes(staged("_counts.json")))
        summary = complete_summary(pl, pd.read_parquet(io.BytesIO(
            read_bytes(staged("_summary.parquet")))), {
                tuple(key): [str(c) for c in values] for key, values in counts["classes"]})
        if config.min_segment_size > 1:  # curves are written before the slices' sizes are known
            sliced = summary[summary["segment"].notna()]
            keep_segments(staged("curves.parquet"), set(zip(sliced["stream"],
                                                            sliced["segment"])))
        dead_letters = [json.loads(line) for line in
                        located(pl, staged("dead_letters.jsonl")).splitlines() if line.strip()]
        check_evaluated(pl, counts, dead_letters, summary)
        maturity = None
        if pl.backfill:  # how final each arrival day's numbers are
            first = {}
            for (stream, _), raw in counts["keys"]:
                first.setdefault(stream, raw)  # the label pass's counts, the same per model
            days, histograms = maturity_table(first)
            write_bytes(staged("maturity.csv"), days.to_csv(index=False).encode())
            maturity = maturity_manifest(days, histograms, summary, {
                stream: pending_by_segment(raw) for stream, raw in first.items()}
                if pl.config.segments else None)
        try:
            write_bytes(staged("summary.csv"), summary.to_csv(index=False).encode())
            write_parquet(staged("summary.parquet"), summary)
            delete_paths([staged(name) for name in ("_summary.parquet", "_counts.json",
                                                    ERRORS_FILE)])
            delete_folder(spill)
            made = staged_names(staging)
            record = manifest(pl, counts, dead_letters, started)
            write_json(staged("manifest.json"), {**record,
                                                  **({"maturity": maturity} if maturity else {}),
                                                  "summary_rows": len(summary),
                                                  "outputs": sorted([*made, "manifest.json"]),
                                                  FINGERPRINTS: {n: fingerprint(made[n])
                                                                 for n in sorted(made)}})
            publish(staging, config.out)
        except (OSError, BeamIOError) as e:
            _refuse_if_staging_lost(e, staging, config.out)
            raise OutputError(f"--out {config.out}: writing the results failed ({io_reason(e)}); "
                              f"the previous results there are untouched") from None
    except FileNotFoundError as e:  # reading back what the pipeline wrote
        _refuse_if_staging_lost(e, staging, config.out)
        raise
    finally:
        if FileSystems.exists(staging):
            delete_paths([staging])
    if config.report:
        from pipelines.report import write_report

        report = write_report(config.out)
    if not config.quiet:
        counters = job_counters(result)
        if counters:
            replays = "summed over the replays, one per stream × model"
            if pl.backfill:
                replays = "the label pass, one per stream" + (
                    ", and one more per model whose run set instances aside"
                    if recorded_failures(pl) else "")
            print(f"job counters ({replays}): " + ", ".join(
                f"{k} {v:,}" for k, v in counters.items() if v or k != "pretrained"),
                file=sys.stderr)
        streams = _positive_and_declared(pl)
        print(format_table(summary, streams) + "\n")
        segments = segment_table(summary, streams)
        if not segments.empty:
            proportions = any("accuracy" in c for c in segments.columns)  # (not a regressor's)
            print("segments: initial and final scores" + (
                " (a proportion with its Wilson 95 % interval)" if proportions else ""))
            print(segments.to_string(index=False) + "\n")
        profiles = format_profiles(numbers_from_json(read_bytes(FileSystems.join(config.out,
                                                                                  "profile.json"))))
        if profiles:  # (none for regression streams)
            print(profiles)
        for stream, m in (maturity or {}).items():
            if m["pending"]:
                print("\n" + format_maturity(stream, m))
    for notice in _notices(pl, summary, counts, dead_letters, record, config.out):
        if config.quiet:  # (said all the same: a scheduler's log keeps stderr)
            print("\n".join(f"delayed-eval: notice: {line}" for line in notice.splitlines()
                            if line.strip()), file=sys.stderr)
        else:
            print("\n" + notice)
    if not config.quiet:
        comparisons = comparison_table(summary)
        if not comparisons.empty:
            print(f"\n{COMPARISON_CAPTION}")
            print(comparisons.to_string(index=False))
        delays = drift_delay_table(summary)
        if not delays.empty:
            print("\nPage-Hinkley: each known drift's detection delay and the false alarms "
                  "before the next, per fading factor (1 − α; 0: no fading)")
            print(delays.to_string(index=False))
        resources = resources_table(summary)
        if not resources.empty:
            print(f"\n{RESOURCES_CAPTION}")
            print(resources.to_string(index=False))
        across = _across_streams(summary, config.out)
        if across:
            print(f"\n{across}")
        if config.report:
            print(f"\nreport: {report}")
    return summary


def _across_streams(summary: pd.DataFrame, out: str) -> str:
    """For a run of 2 streams or more and 2 models or more, what `delayed-eval rank` prints of
    it (each model's average rank and mean of its initial accuracy or MAE, the test's verdict),
    as the report's 'Across streams' has them; else nothing."""
    from pipelines.rank import format_ranks, rank_runs

    if summary["stream"].nunique() < 2 or summary["model"].nunique() < 2:
        return ""
    try:
        return format_ranks(rank_runs([out]))
    except ConfigError:  # (no 2 models with the measure on 2 streams)
        return ""


def _refuse_if_staging_lost(error: BaseException, staging: str, out: str) -> None:
    """Stop with one line when a file the run wrote in its staging folder is gone: something
    else removed it while the run went on, which no rerun of ours can mend."""
    gone = staging_file_gone(error, staging)
    if gone is not None:
        raise OutputError(f"--out {out}: {gone}, a file this run wrote there, is gone (the "
                          f"folder removed or cleaned while the run went on?); run again and "
                          f"leave --out alone until the run ends") from None


def _positive_and_declared(pl) -> dict:
    """{stream: {"positive": its positive class option, "declared": its declared classes}}."""
    return {s.name: {"positive": s.options.get("positive"), "declared": pl.classes[s.name]}
            for s in pl.streams}


def _notices(pl, summary: pd.DataFrame, counts: dict, dead_letters: list, record: dict,
             out: str) -> list[str]:
    """What the command says after a run's table about its data and what may mislead: rows set
    aside, a log that does not fit the run, instances never predicted or re-predicted, scores
    that diverged, a positive class no label has, predictions of unknown classes, models not
    compared, classes that look alike, text classes of a few labels among numbers, an unfixed
    hash seed. Each is also in the manifest or the summary."""
    delay_changes = format_delay_changes(pl.log.recorded_delays(pl.time_range), {
        s.name: pl.label_delay(s) for s in pl.streams}) if pl.backfill else ""
    return [notice for notice in [
        format_set_aside(dead_letters, FileSystems.join(out, "dead_letters.jsonl"),
                         counts["keys"], pl.backfill),
        "\n".join(filter(None, [
            delay_changes, format_set_asides_of_run(record.get("set_aside_by_the_logs_run", {})),
            format_log_notices(counts["keys"])])),
        format_unpredicted(record["counts"]),
        format_partly_scored(record["counts"]) if pl.backfill else
        format_unanswered(counts["keys"], pl.scoring.final),
        "" if pl.backfill or str(pl.repredict) == "none" else
        format_unrepredicted(record["counts"], str(pl.repredict)),
        "" if pl.backfill or pl.holdout is None else
        format_unheld(record["counts"], str(pl.holdout)),
        format_diverged(summary),
        format_one_time_window(summary),
        format_unknown_positive(summary, _positive_and_declared(pl)),
        format_foreign_predictions(summary, pl.backfill),
        format_uncompared(summary, pl.tasks),
        format_alike_classes(record.get("alike_classes", {}), pl.backfill),
        format_odd_classes(summary),
        # (A backfill runs no model: its numbers do not depend on the hash seed.)
        "" if pl.backfill else
        format_unfixed_hash_seed(record["python_hash_seed"], counts["classes"])] if notice]
