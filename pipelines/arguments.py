"""The `delayed-eval` command's arguments: its commands and their options (argparse, one line
per mistake), the RunConfig they make, the options of one command given to another, and the
reference of every option (docs/cli.md, `write_reference`)."""

from __future__ import annotations

import argparse
import difflib
import sys

from pipelines.config import (DEFAULT_REPREDICT, DRIFT_ON, LOG_LEVELS, MODEL_ERRORS, REPLAYS,
                              TASKS, ConfigError, RunConfig)

QUICKSTART_STREAM = 'synth:Agrawal{"n": 20000, "seed": 42, "drift": [{"at": 10000, ' \
                    '"width": 1000, "classification_function": 2}]}'
QUICKSTART_MODELS = ["no-change", "majority", "gaussian-nb", "hoeffding-tree"]


def _stream_args(parser: argparse.ArgumentParser) -> None:
    """What run and backfill read and where they write."""
    parser.add_argument("--stream", action="append", default=[], metavar="SPEC",
                        help='a stream: synth:NAME{json}, dataset:NAME or a file path with '
                             'optional {json} options (repeatable)')
    parser.add_argument("--delay", default=None,
                        help="label delay: N events, a duration (30s, 5min), random:LOW:HIGH:SEED "
                             "or column:NAME (default 0, which behaves as 1; a backfill "
                             "of a run's own log: the run's)")
    parser.add_argument("--out", default=None, help="output directory")
    parser.add_argument("--from", dest="start", default=None, metavar="WHEN",
                        help="evaluate only instances arriving at or after WHEN: an ISO date "
                             "or datetime (UTC unless it gives its offset, +02:00), or seconds; "
                             "their labels count whenever they come; a run's models start "
                             "there, untrained")
    parser.add_argument("--to", dest="end", default=None, metavar="WHEN",
                        help="... and before WHEN (an ISO date: to the end of that day); "
                             "instances still waiting for a label are reported as pending")
    parser.add_argument("--runner", default=None,
                        help="direct (default), direct-mp, bundle, portable, portable-pool, or a "
                             "Beam runner name (docs/runners.md)")


def _scoring_args(parser: argparse.ArgumentParser) -> None:
    """What run and backfill score and report."""
    parser.add_argument("--bins", type=int, default=None,
                        help="B, bins of the latency period for binned measures (default 100)")
    parser.add_argument("--pretrain", type=int, default=None, metavar="N",
                        help="the first N rows of each stream train each model with their "
                             "labels as they arrive, before the evaluation starts: none of them "
                             "is predicted or scored (MOA's -p N -m; the stream option "
                             "{\"pretrain\": N} sets one stream's; default 0, in a "
                             "backfill of a run's own log the run's)")
    parser.add_argument("--no-probabilities", dest="probabilities", action="store_false",
                        default=None,
                        help="keep classes only: no class probabilities with the initial and final "
                             "predictions (a backfill ignores the log's), so no log-loss, Brier "
                             "score, ROC-AUC, PR-AUC or calibration (default: kept for classifiers "
                             "with predict_proba_one, and read from a log that has them)")
    parser.add_argument("--auc", action="store_true", default=None,
                        help="also the exact ROC-AUC and PR-AUC (average precision) of the class "
                             "probabilities, overall and per class, at every curve point: they "
                             "keep every distinct probability, so memory and time grow with the "
                             "labels (default: off; log-loss, Brier and calibration are on)")
    parser.add_argument("--bootstrap", type=int, default=None, metavar="R",
                        help="R Poisson bootstrap replicates (seeded, the same on every runner): "
                             "95 %% percentile intervals of accuracy, kappa and macro F1 "
                             "(accuracy_bootstrap_low/high, ...) in every view but fading, of "
                             "their Ψα and, with --auc, of ROC-AUC and PR-AUC (default: none)")
    parser.add_argument("--repredicted-probabilities", action="store_true", default=None,
                        help="also the class probabilities of re-predictions (run: kept and "
                             "logged; backfill: read from the log): log-loss, Brier, ECE (and "
                             "with --auc AUC) per bin and their Ψα (default: initial and final "
                             "predictions only; ~1.3x a default run's time)"),
    parser.add_argument("--alpha", action="append", type=float, default=None,
                        help="α of the prioritised measure Ψα (repeatable; default 1, 2, 10)")
    parser.add_argument("--window", dest="windows", action="append", type=int, default=None,
                        metavar="W", help="also report every measure over a sliding window of the "
                                          "last W labels (repeatable); window column w=W")
    parser.add_argument("--fading", dest="fadings", action="append", type=float, default=None,
                        metavar="A", help="also report every measure with fading factor A, "
                                          "0 < A < 1 (repeatable); window column fading=A")
    parser.add_argument("--time-window", dest="time_windows", action="append", default=None,
                        metavar="SIZE[/PERIOD]",
                        help="also report every measure over event-time sliding windows of label "
                             "time, Beam SlidingWindows(SIZE, PERIOD), e.g. 1h/15min (repeatable; "
                             "PERIOD defaults to SIZE and must divide it); window column time=...")
    parser.add_argument("--drift-on", choices=DRIFT_ON, default=None,
                        help="Page-Hinkley drift detection over each model's losses of its initial "
                             "(default) or final predictions; none turns it off")
    parser.add_argument("--ph-delta", type=float, default=None,
                        help="Page-Hinkley δ, the tolerated change (default 0.005)")
    parser.add_argument("--ph-threshold", type=float, default=None,
                        help="Page-Hinkley λ, the alarm threshold (default 50)")
    parser.add_argument("--ph-min-instances", type=int, default=None,
                        help="losses seen before Page-Hinkley may alarm (default 30)")
    parser.add_argument("--ph-alpha", dest="ph_alphas", action="append", type=float,
                        default=None, metavar="A",
                        help="Page-Hinkley fading factor (repeatable; default 1: no fading)")
    parser.add_argument("--chunk-size", type=int, default=None, help="events per Beam element")
    parser.add_argument("--curve-every", type=int, default=None,
                        help="labels between curve points, on every stream (default: each "
                             "stream's own, at least 25 points on it, 1, 2 or 5 × 10^k labels "
                             "apart, at most 1000); "
                             "each point scores every bin for its Ψα, so a point every few "
                             "labels of a long stream takes long")
    parser.add_argument("--config", default=None, help="a YAML file with the same fields")
    parser.add_argument("--run-id", default=None,
                        help="an id for this run, in its rows and the name of its staging "
                             "folder in --out: none of / \\ * ? [ ] (default: random)")
    parser.add_argument("--report", action="store_true", default=None,
                        help="also write DIR/report.html and DIR/figures/ (PNG at 200 dpi, SVG, "
                             "PDF)")
    parser.add_argument("--fail-if", dest="fail_if", action="append", default=None,
                        metavar="THRESHOLD",
                        help="exit with status 3, after writing the results, when a measure "
                             "crosses this threshold: '[MODEL:] initial|final METRIC [(CLASS)] "
                             "[WINDOW] OP VALUE', e.g. 'initial precision (fraud) < 0.8' "
                             "(repeatable; an undefined or missing measure also fails)")
    parser.add_argument("--segment", dest="segments", action="append", default=None,
                        metavar="COLUMN",
                        help="also every measure per value of this instance column (rows with "
                             "segment 'COLUMN=VALUE'; repeatable), each slice scored as a "
                             "stream of its own; the overall rows are unchanged")
    parser.add_argument("--min-segment-size", type=int, default=None, metavar="N",
                        help="leave out the rows of slices with fewer than N labels (their "
                             "labels still count in the overall rows; default 1)")
    parser.add_argument("--progress-every", type=float, default=None, metavar="SECONDS",
                        help="seconds between progress lines on stderr (default 5)")
    parser.add_argument("--quiet", action="store_true",
                        help="print nothing but errors and, on stderr, notices about the data "
                             "and results (rows set aside, instances never predicted, ...): no "
                             "progress lines, no tables")


class _OneLineParser(argparse.ArgumentParser):
    """argparse, but a mistake in the arguments gets the one line every other mistake gets
    (not the usage, which for `run` is 20 lines long).

    >>> command_parser().parse_args(["run", "--bins", "5min"])
    Traceback (most recent call last):
    ...
    SystemExit: 2
    """

    def parse_known_args(self, args=None, namespace=None):
        self.given = list(sys.argv[1:] if args is None else args)  # (for `error`'s hint)
        return super().parse_known_args(args, namespace)

    def error(self, message: str):
        command = self.prog.split()[1:]  # ["run"], or [] for the top level
        see = " ".join(["delayed-eval", *command, "--help"])
        self.exit(2, f"delayed-eval: error: {_plain(message, getattr(self, 'given', []))}; "
                     f"see {see}\n")


def _plain(message: str, given: list[str] = ()) -> str:
    """argparse's message in our words: the option first, then what is wrong with it (the
    arguments `given`: a value that begins with "-" is taken for an option).

    >>> _plain("argument --bins: invalid int value: '5min'")
    "--bins '5min': not a whole number"
    >>> _plain("argument --holdout: expected one argument", ["--holdout", "-1:5"])
    "--holdout: expected one argument; a value that begins with '-' reads as an option: \
write --holdout=-1:5"
    >>> _plain("argument --replay: invalid choice: 'x' (choose from 'auto', 'grouped')")
    "--replay: invalid choice: 'x' (choose from 'auto', 'grouped')"
    >>> _plain("argument command: invalid choice: 'runn' (choose from 'run', 'rank')")
    "unknown command 'runn' (choose from 'run', 'rank')"
    """
    import re

    typed = re.fullmatch(r"argument (\S+): invalid (int|float) value: (.*)", message)
    if typed:
        option, kind, value = typed.groups()
        return f"{option} {value}: not a {'whole number' if kind == 'int' else 'number'}"
    missing = re.fullmatch(r"argument (\S+): expected one argument", message)
    if missing:
        option = missing.group(1).split("/")[-1]
        after = [b for a, b in zip(given, given[1:]) if a == option and b.startswith("-")]
        if after:
            message += (f"; a value that begins with '-' reads as an option: write "
                        f"{option}={after[0]}")
    message = re.sub(r"^argument (\S+): ", r"\1: ", message)
    return message.replace("command: invalid choice: ", "unknown command ")


def command_parser() -> argparse.ArgumentParser:
    """The parser of the `delayed-eval` command line: its commands (run, backfill, quickstart,
    report, rank, trend) and their options; a mistake in them is a one-line ConfigError.

    >>> args, beam_args = command_parser().parse_known_args(
    ...     ["run", "--stream", "synth:SEA", "--model", "gaussian-nb", "--delay", "100",
    ...      "--out", "results", "--direct_num_workers", "2"])
    >>> args.command, args.stream, args.delay, beam_args
    ('run', ['synth:SEA'], '100', ['--direct_num_workers', '2'])
    """
    parser = _OneLineParser(
        prog="delayed-eval",
        description="Evaluate online learners when true labels arrive late (Apache Beam).")
    sub = parser.add_subparsers(dest="command", required=True)
    run = _run_parser(sub)
    backfill = _backfill_parser(sub)
    quick = sub.add_parser("quickstart", help="the quickstart: Agrawal with a drift, 4 models",
                           description="Run the quickstart: Agrawal with a concept drift, "
                                       "4 models, delay 1000, report included.")
    quick.add_argument("--out", default="out/quickstart", help="output directory")
    quick.add_argument("--runner", default="direct", help="a runner name, as for run")
    report = sub.add_parser("report", help="write report.html and figures for a finished run",
                            description="Write DIR/report.html (self-contained) and "
                                        "DIR/figures/ (PNG at 200 dpi, SVG, PDF) from a "
                                        "finished run's files.")
    report.add_argument("dir", metavar="DIR", help="the output directory of a finished run")
    rank = sub.add_parser(
        "rank", help="rank the models of finished runs over their streams (Friedman, Nemenyi)",
        description="Average ranks (and means) of the models on one measure over the streams "
                    "of finished runs, the Friedman test (Iman-Davenport F too; its exact p "
                    "where counting it is quick), Nemenyi's critical "
                    "difference and its diagram; the Wilcoxon signed-rank test for two models "
                    "(Demšar 2006). Writes ranks.csv, rank.json and cd_diagram.png/svg/pdf.")
    rank.add_argument("dirs", nargs="+", metavar="DIR", help="output directories of runs")
    rank.add_argument("--metric", default=None,
                      help="the measure, 'METRIC [(CLASS)]': 'kappa', 'recall (fraud)' "
                           "(default accuracy; mae when the runs are regression)")
    rank.add_argument("--category", default="initial",
                      help="initial (default), final, or another summary category")
    rank.add_argument("--window", default="cumulative", help="the view (default cumulative)")
    rank.add_argument("--alpha", type=float, default=0.05,
                      help="significance level of the critical difference (default 0.05)")
    rank.add_argument("--psi", type=float, default=None, metavar="A",
                      help="with --category intermediate: rank Ψα for this α")
    rank.add_argument("--out", default=None,
                      help="where to write the files (default: the first DIR's rank/)")
    trend = sub.add_parser(
        "trend", help="chosen measures across the runs below a folder (nightly backfills)",
        description="Read every finished run below ROOT (e.g. results/fraud/date=…/) and "
                    "write trend.parquet, trend.csv and trend.png/svg/pdf: each measure per "
                    "run (by its date=… partition), with its interval and the share of "
                    "instances still pending.")
    trend.add_argument("root", metavar="ROOT", help="the folder the runs are below")
    trend.add_argument("--metric", action="append", default=None,
                       help="a measure as --fail-if names one, '[initial|final] METRIC "
                            "[(CLASS)]', e.g. 'recall (fraud)' or 'final kappa' (repeatable; "
                            "default accuracy; mae when the runs are regression)")
    trend.add_argument("--category", default="initial",
                       help="the category of a --metric that names none: initial or final")
    trend.add_argument("--window", default="cumulative", help="the view")
    trend.add_argument("--segment", default=None, metavar="COLUMN",
                       help="one line per slice of this --segment column of the runs, instead "
                            "of the whole stream")
    trend.add_argument("--out", default=None, help="where to write (default ROOT/trend)")
    for command in (run, backfill, quick, report, rank, trend):
        command.add_argument("--debug", action="store_true",
                             help="show Beam's logs (its worker processes' too) and the "
                                  "Python traceback of an error")
    parser.add_argument("--version", action="version", version=f"delayed-eval {_version()}")
    return parser




def _run_parser(sub) -> argparse.ArgumentParser:
    """`delayed-eval run`'s options."""
    run = sub.add_parser(
        "run", help="replay streams through models and score their predictions",
        description="Replay streams through online models with delayed labels and report "
                    "initial (at arrival) and final (test-then-train) performance.")
    _stream_args(run)
    run.add_argument("--model", action="append", default=[], metavar="SPEC",
                     help='a model: import path with optional {json} parameters, a registry '
                          'name (majority, no-change, gaussian-nb, ...), NAME=SPEC to name it '
                          '(repeatable)')
    run.add_argument("--replay", choices=REPLAYS, default=None,
                     help="replay path: per-stream reads each stream once on one worker and "
                          "drains all its models as it reads, comparing them on the way "
                          "(memory bounded by what is pending; instances must be in time "
                          "order); per-key does so per (stream, model), spreading a stream's "
                          "models over workers; grouped sorts each stream after a GroupByKey "
                          "(any order; memory grows with the stream); stateful is "
                          "watermark-driven (streaming). auto: per-stream when every stream "
                          "is generated or a table (one out of time order is read whole and "
                          "sorted), else grouped (a file read in its own order, "
                          "{\"order\": \"input\"}, out of time order)")
    run.add_argument("--repredict", default=None, metavar="POLICY",
                     help="re-prediction policy while labels are pending: every_k_labels:K "
                          f"(default {DEFAULT_REPREDICT}), bin_boundaries[:B] (at the start of "
                          "each bin of the latency period), every:DURATION (every 30s, 5min, "
                          "... of event time) or none (initial and final only)")
    run.add_argument("--timer-bucket", type=float, default=None, metavar="SECONDS",
                     help="streaming (--replay stateful, which it chooses under auto): "
                          "seconds of event time per drain of the looping timer (default: one "
                          "drain at the end of bounded input)")
    run.add_argument("--no-final", dest="final", action="store_false", default=None,
                     help="skip the final (test-then-train) prediction: initial scores only, "
                          "half the predict calls")
    run.add_argument("--holdout", default=None, metavar="EVERY:SIZE",
                     help="also a periodic holdout: after every EVERY labels the model as it "
                          "stands predicts the next SIZE instances, which no model learns and "
                          "the prequential scores leave out (category holdout, a curve point "
                          "per set)")
    run.add_argument("--cv", default=None, metavar="METHOD:K",
                     help="delayed cross-validation with the folds of MOA's "
                          "EvaluatePrequentialDelayedCV: K copies of each model (MODEL#1..K), "
                          "each predicting every instance and learning its fold's labels as "
                          "they arrive; METHOD k-fold, bootstrap or split; "
                          "the summary adds each model's mean and standard deviation (_sd) "
                          "over its folds")
    run.add_argument("--resources", action="store_true", default=None,
                     help="also measure each model's cost: CPU seconds in learning and in "
                          "predicting, its size in bytes at every curve point, and RAM-hours "
                          "(category resources; these numbers vary from run to run)")
    run.add_argument("--on-model-error", choices=MODEL_ERRORS, default=None,
                     help="a model that raises in learn_one/predict_one, or returns no single "
                          "value: fail stops the run with one line naming model, stream and "
                          "instance (default); dead-letter sets that instance aside as a dead "
                          "letter (its label too), counts it as model_errors and goes on")
    run.add_argument("--log-predictions", choices=LOG_LEVELS, default=None,
                     help="what predictions.parquet keeps: every prediction (all, the default), "
                          "initial and final only, or none; with K=1 re-evaluation 'all' is "
                          "~delay rows per instance")
    _scoring_args(run)
    return run


def _backfill_parser(sub) -> argparse.ArgumentParser:
    """`delayed-eval backfill`'s options."""
    backfill = sub.add_parser(
        "backfill", help="score logged predictions (no model replayed)",
        description="Score a deployed model's logged predictions against the instance and "
                    "label logs: the same results as run, with the log's predictions in place "
                    "of a replayed model's.")
    _stream_args(backfill)
    backfill.add_argument("--predictions", default=None, metavar="LOG",
                          help='the prediction log: a .parquet/.csv/.jsonl file, glob or directory '
                               '(hive partitions welcome), with optional {json} column names: '
                               'stream, model, id, kind, time, prediction (defaults: those of '
                               'run\'s predictions.parquet)')
    backfill.add_argument("--model", action="append", default=[], metavar="NAME",
                          help="a model name in the log, in report order (repeatable; default "
                               "every model in the log's files it reads (with --from, none of "
                               "a partition before it), in the order its run recorded, then "
                               "sorted; a log without a model column: one named after it)")
    backfill.add_argument("--task", choices=TASKS, default=None,
                          help="what the predictions are (default: regression when the "
                               "labels, or else the logged predictions, are numbers with "
                               "fractions; classification otherwise)")
    backfill.add_argument("--repredict", default=None, metavar="POLICY",
                          help="how the logged re-predictions were made, for the protocol "
                               "column (default: a run log's own, else logged); none ignores "
                               "them (no binned measures)")
    backfill.add_argument("--buckets", type=int, default=None,
                          help="id buckets the join of instances and predictions is split "
                               "into (default 16): the backfill's parallelism")
    _scoring_args(backfill)
    return backfill


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("delayed-eval")
    except metadata.PackageNotFoundError:
        return "(not installed)"


REFERENCE_MARKERS = ("<!-- cli-reference:start -->", "<!-- cli-reference:end -->")


def cli_reference() -> str:
    """The CLI reference in Markdown, generated from the parser (`docs/cli.md` carries it, and a
    test keeps the two equal; refresh with `python -m pipelines.cli --write-reference docs/cli.md`).

    >>> print(cli_reference().splitlines()[0])
    ### `delayed-eval run`
    """
    parser = command_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    out = []
    for name, sub in commands.choices.items():
        out += [f"### `delayed-eval {name}`", "", sub.description or "", "",
                "| option | meaning |", "|---|---|"]
        for action in sub._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            flags = ", ".join(action.option_strings) or action.metavar or action.dest
            if action.option_strings and action.nargs != 0:
                value = action.metavar or action.dest.upper()
                if action.choices:
                    value = "{" + ",".join(map(str, action.choices)) + "}"
                flags += f" {value}"
            text = sub._get_formatter()._expand_help(action) if action.help else ""
            if isinstance(action.default, str) and "default" not in text:  # (run's defaults
                text += f" (default: {action.default})"  # live in RunConfig)
            text = text.replace("|", "\\|")
            out.append(f"| `{flags}` | {text} |")
        out.append("")
    out.append("Any other `--flag` goes to Beam if a Beam `PipelineOptions` defines it (e.g. "
               "`--direct_num_workers 2`); a flag neither knows is an error naming the closest "
               "one; anything after `--` goes to Beam unchecked.")
    return "\n".join(out) + "\n"


def write_reference(path: str) -> None:
    """Replace the CLI reference in the Markdown file `path` (between its markers) with
    `cli_reference()`.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "cli.md")
    >>> with open(path, "w") as f:
    ...     _ = f.write(f"# CLI\\n{REFERENCE_MARKERS[0]}\\nSTALE\\n{REFERENCE_MARKERS[1]}\\n")
    >>> write_reference(path)
    >>> text = open(path).read()
    >>> text.startswith("# CLI"), "STALE" in text, cli_reference() in text
    (True, False, True)
    """
    with open(path, encoding="utf-8") as f:
        text = f.read()
    start, end = REFERENCE_MARKERS
    head, rest = text.split(start)
    _, tail = rest.split(end)
    with open(path, "w", encoding="utf-8") as f:
        f.write(f"{head}{start}\n{cli_reference()}{end}{tail}")


def run_config(args, beam_args) -> RunConfig:
    """The `RunConfig` of a parsed `run` or `backfill` command line (`--config FILE`'s fields
    under the flags given), its Beam flags kept for the runner.

    >>> args, beam_args = command_parser().parse_known_args(
    ...     ["run", "--stream", "synth:SEA", "--model", "gaussian-nb", "--delay", "100",
    ...      "--out", "results", "--window", "500", "--direct_num_workers", "2"])
    >>> config = run_config(args, beam_args)
    >>> config.models, config.windows, config.beam_args
    (['gaussian-nb'], [500], ['--direct_num_workers', '2'])
    """
    given = vars(args)
    fields = {"streams": args.stream, "models": args.model, "delay": args.delay,
              "out": args.out, "runner": args.runner, "final": given.get("final"),
              "bins": args.bins, "pretrain": args.pretrain,
              "repredict": args.repredict, "alphas": args.alpha, "windows": args.windows,
              "fadings": args.fadings, "time_windows": args.time_windows,
              "drift_on": args.drift_on, "ph_delta": args.ph_delta,
              "ph_threshold": args.ph_threshold, "ph_min_instances": args.ph_min_instances,
              "ph_alphas": args.ph_alphas, "chunk_size": args.chunk_size,
              "curve_every": args.curve_every, "run_id": args.run_id, "beam_args": beam_args,
              "quiet": args.quiet or None, "report": args.report, "fail_if": args.fail_if,
              "progress_every": args.progress_every, "start": args.start, "end": args.end,
              "segments": args.segments, "min_segment_size": args.min_segment_size,
              **{k: given.get(k) for k in ("replay", "log_predictions", "predictions", "task",
                                           "buckets", "timer_bucket", "on_model_error",
                                           "probabilities", "repredicted_probabilities",
                                           "bootstrap", "resources",
                                           "auc", "holdout", "cv")}}
    if args.config:
        config = RunConfig.from_yaml(args.config, _the_other_commands_fields(
            args.command, args.config), **fields)
        if args.command == "backfill" and config.predictions is None:
            raise ConfigError(f"--predictions LOG is required (or predictions: LOG in "
                              f"{args.config})")
        return config
    if args.command == "backfill" and not args.predictions:
        raise ConfigError("--predictions LOG is required")
    if not args.out:
        raise ConfigError("--out DIR is required")
    fields = {k: v for k, v in fields.items() if v not in (None, [], ())}
    return RunConfig(**{"models": [], **fields})


def refuse_extra(command: str, given: str) -> None:
    """A ConfigError for an argument a command that runs no pipeline does not take.

    >>> refuse_extra("report", "--results")
    Traceback (most recent call last):
    ...
    transforms.errors.ConfigError: report: unknown option --results; see delayed-eval report --help
    """
    flag = given.split("=", 1)[0]
    close = difflib.get_close_matches(flag, our_flags(command), n=1)
    what = "unknown option" if flag.startswith("-") else "unexpected argument"
    hint = f"did you mean {close[0]}? " if close else ""
    raise ConfigError(f"{command}: {what} {flag}; {hint}see delayed-eval {command} --help")


_WHAT_IT_DOES = {"run": "replays models",
                 "backfill": "scores the predictions a deployed model logged"}


def refuse_the_other_commands(command: str, given: list[str]) -> None:
    """A ConfigError for an option of `run` given to `backfill`, or the other way round (it is
    no Beam option: naming the closest one of those would mislead).

    >>> refuse_the_other_commands("backfill", ["--cv", "k-fold:3"])
    Traceback (most recent call last):
    ...
    transforms.errors.ConfigError: backfill: --cv is an option of run, which replays models; \
a backfill scores the predictions a deployed model logged (see delayed-eval backfill --help)
    """
    if command not in _WHAT_IT_DOES:
        return
    other = next(c for c in _WHAT_IT_DOES if c != command)
    theirs = set(our_flags(other)) - set(our_flags(command))
    for arg in given[:given.index("--")] if "--" in given else given:  # (then Beam's own)
        flag = arg.split("=", 1)[0]
        if flag in theirs:
            raise ConfigError(f"{command}: {flag} is an option of {other}, which "
                              f"{_WHAT_IT_DOES[other]}; a {command} {_WHAT_IT_DOES[command]} "
                              f"(see delayed-eval {command} --help)")


def _the_other_commands_fields(command: str, config: str) -> dict[str, str]:
    """The RunConfig fields of the other command's options (`run`'s for `backfill` and the
    other way round), each with why a config file for `command` may not set it: a run given a
    prediction log would score the log, not its models.

    >>> _the_other_commands_fields("run", "r.yaml")["predictions"]  # doctest: +ELLIPSIS
    'is an option of backfill, ...: take it out of r.yaml, or run delayed-eval backfill ...'
    """
    other = next(c for c in _WHAT_IT_DOES if c != command)
    theirs = {a.dest for a in _actions(other)} - {a.dest for a in _actions(command)}
    return dict.fromkeys(theirs, f"is an option of {other}, which {_WHAT_IT_DOES[other]}; a "
                                 f"{command} {_WHAT_IT_DOES[command]}: take it out of {config}, "
                                 f"or run delayed-eval {other} --config {config}")


def _actions(command: str) -> list[argparse.Action]:
    """The options of a command, as its parser defines them."""
    sub = next(a for a in command_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[command]._actions


def our_flags(command: str) -> list[str]:
    """The flags of a command (for suggestions when a flag is misspelled).

    >>> "--predictions" in our_flags("backfill"), "--predictions" in our_flags("run")
    (True, False)
    """
    return [s for a in _actions(command) for s in a.option_strings]
