"""Whole pipelines composed from transforms/ (`job`: the run), the CLI, reports, and the
Python API for notebooks and scripts:

- `EvaluateDelayed(config)` and `WriteResults(plan, folder)`: the evaluation and its writers as
  Beam composites, to put inside a pipeline of your own;
- `evaluate_locally(stream, model, delay)`: one stream and one model in plain Python, no Beam;
- `evaluate(streams, models, delay, runner=..., **options)`: run an evaluation and get its
  summary as a pandas DataFrame (the output directory is in `.attrs["out"]`);
- `load_results(dir, kind)`: read a finished run (summary, curves, predictions, manifest);
  `summary_table(summary)` lays its summary out as Table II, `comparison_table(summary)`
  tells which model of each pair errs less;
- `write_report(dir)`: the HTML report and PNG figures of a finished run;
- `stream_spec_of(stream, **options)`: the `--stream` spec of a river dataset or generator,
  or data with its stream options.
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import logging
import os
import tempfile

from transforms import lazy_exports

_WHERE = {"EvaluateDelayed": "evaluation", "RunConfig": "config", "WriteResults": "write",
          "evaluate_locally": "local", "load_results": "results", "summary_table": "tables",
          "comparison_table": "tables",
          "write_report": "report", "stream_spec_of": "local"}
__all__ = sorted([*_WHERE, "evaluate"])
__getattr__ = lazy_exports(__name__, _WHERE)


def evaluate(streams, models, delay=None, out: str | None = None, runner: str = "direct",
             report: bool = False, quiet: bool = True, **options):
    """Evaluate `models` (specs, as for `--model`) on `streams` (as for `--stream`) with the
    label `delay`, on `runner`; returns the summary DataFrame. Every `RunConfig` field can be
    given as a keyword (`bins`, `repredict`, `windows`, `fadings`, `alphas`, ...); `out`
    defaults to a fresh temporary directory.

    Parameters
    ----------
    streams, models
        Stream and model specs, as for `--stream` and `--model`, or river datasets, generators
        and estimators themselves (`stream_spec_of` gives a generator's spec with options such
        as `n`): one, a list, or a dict {name: stream or model}. A stream may also be data:
        (x, y) pairs (`river.stream.iter_pandas(X, y)`, or a list), a DataFrame with a
        `label` column or (X, y), a DataFrame (or 2-D array) and its labels, written to
        `out/inputs/NAME.parquet` and read from there (ids are the row numbers, and so are
        times unless a DataFrame has a `time` column or a DatetimeIndex; an integer delay is
        a number of rows, as in river); data's stream options (`positive`, `classes`, ...)
        come with `stream_spec_of(data, **options)`.
    delay
        As for `--delay`; a number is events, a `datetime.timedelta` event time, None no
        delay (as river; in a backfill of a run's log, the run's delay).
    out
        The output directory (default: a fresh temporary one).
    runner
        A runner preset or Beam runner name.
    report
        Also write `report.html` and the figures.
    quiet
        No progress lines and no table on the terminal; only the notices about the data and
        results (rows set aside, ...), on stderr.
    options
        Any other `RunConfig` field. Values may be NumPy numbers, arrays and timedelta64, a
        range, and paths `pathlib` paths: each is the plain value it holds. `predictions`
        (a backfill's log) may also be a DataFrame of the log's rows, its columns named as a
        log file's (`id`, `t`, `y_pred`, ...) or by its options,
        `stream_spec_of(frame, time="scored_at")`: written to
        `out/inputs/logs/predictions.parquet` (so a log without a `model` column is the model
        `predictions`) and read from there.

    >>> summary = evaluate(['synth:SEA{"n": 500, "seed": 1}'], ["no-change", "gaussian-nb"],
    ...                    delay="50", repredict="none", runner="direct")
    >>> table = summary.query("category == 'initial' and metric == 'accuracy'")
    >>> table[["model", "n"]].to_dict("records")
    [{'model': 'no-change', 'n': 450}, {'model': 'gaussian-nb', 'n': 450}]
    >>> from pipelines import load_results
    >>> curves = load_results(summary.attrs["out"], "curves")
    >>> sorted(set(curves["category"]))
    ['comparison', 'final', 'initial']
    """
    from pipelines.config import RunConfig

    with _root_logger_left_alone():
        from pipelines.job import run

    from transforms.streams.python_rows import errors_naming_the_data, written_log, written_streams

    _check_options(options)
    out = out or tempfile.mkdtemp(prefix="delayed-eval-")
    inputs = os.path.join(out, "inputs")
    streams = written_streams(streams, inputs)
    if "predictions" in options:
        options["predictions"] = written_log(options["predictions"], inputs)
    with errors_naming_the_data(inputs):
        summary = run(RunConfig(streams=streams, models=models, delay=delay,
                                out=out, runner=runner, report=report, quiet=quiet, **options))
    summary.attrs["out"] = out
    return summary


def _check_options(options: dict) -> None:
    """A keyword that is no `RunConfig` field is a TypeError naming the one meant (the command
    line's `--no-final` is `final=False`).

    >>> _check_options({"no_final": True})
    Traceback (most recent call last):
    ...
    TypeError: evaluate() got an unexpected keyword argument 'no_final' (give final=False)
    >>> _check_options({"bin": 10})
    Traceback (most recent call last):
    ...
    TypeError: evaluate() got an unexpected keyword argument 'bin' (did you mean bins?)
    """
    from pipelines.config import RunConfig

    fields = [f.name for f in dataclasses.fields(RunConfig)]
    for name in options:
        if name in fields:
            continue
        close = difflib.get_close_matches(name, fields, n=1)
        hint = f" (give {name[3:]}=False)" if name.startswith("no_") and name[3:] in fields \
            else f" (did you mean {close[0]}?)" if close else ""
        raise TypeError(f"evaluate() got an unexpected keyword argument {name!r}{hint}")


@contextlib.contextmanager
def _root_logger_left_alone():
    """Beam announces missing optional clients (GCP) with `logging.warning` as it is imported:
    a `WARNING:root:apitools not found ...` line in a notebook that has not configured logging.
    A stand-in root handler takes it meanwhile; a program's own handlers are left as they
    are."""
    root = logging.getLogger()
    if root.handlers:
        yield
        return
    stand_in = logging.NullHandler()
    root.addHandler(stand_in)
    try:
        yield
    finally:
        root.removeHandler(stand_in)
