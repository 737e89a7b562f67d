"""The `delayed-eval` command line.

    delayed-eval run --stream SPEC [--stream SPEC] --model SPEC [--model SPEC] --delay D
                     --out DIR [--runner direct] [--config run.yaml] [Beam flags ...]

A flag that is none of ours goes to Beam when a Beam `PipelineOptions` defines it (e.g.
`--runner=PortableRunner --job_endpoint=localhost:8099`), so every runner option works as
documented by Beam; any other is an error naming the closest flag; after `--`, unchecked.
Mistakes end in one line, `delayed-eval: error: WHERE: WHAT; WHAT TO DO`, with exit status 2.
The commands and their options are `pipelines.arguments`; here, running one and how it ends
(a mistake, Ctrl-C, SIGTERM, a reader that leaves the pipe).
"""

from __future__ import annotations

if __name__ == "__main__":  # (`python -m pipelines.cli`: with fixed hashes, before the imports)
    from pipelines.command import with_fixed_hashes

    with_fixed_hashes()

import logging
import os
import signal
import sys

from pipelines.arguments import (QUICKSTART_MODELS, QUICKSTART_STREAM, command_parser,
                                 our_flags, refuse_extra, refuse_the_other_commands, run_config,
                                 write_reference)
from pipelines.config import ConfigError, RunConfig
from transforms.errors import DelayedEvalError, InputError, one_line


def main(argv: list[str] | None = None) -> int:
    """The `delayed-eval` command (run by `command.console_main`); returns the exit status.

    Example
    -------

    >>> main(["report", "/nonexistent/run"])  # one line on stderr, exit status 2
    2

    """
    args, beam_args = command_parser().parse_known_args(argv)
    debug = getattr(args, "debug", False)
    _import_from_here()
    # Beam logs optional-dependency notices (GCP clients) on import, and its own view of any
    # failure: the user gets one line instead, unless they ask for everything.
    logging.basicConfig(level=logging.INFO if debug else logging.ERROR)
    beam_logger = logging.getLogger("apache_beam")
    level = beam_logger.level
    beam_logger.setLevel(logging.INFO if debug else logging.CRITICAL)
    try:
        return _command(args, beam_args, debug)
    finally:
        beam_logger.setLevel(level)  # main() may be called again in one process (tests)


def _import_from_here() -> None:
    """Models of the user's own (`--model mymodels.MyClassifier`) import from the folder the
    command runs in, as under `python -m`, in this process and in the worker processes it
    starts (PYTHONPATH); after everything installed, which they cannot shadow."""
    here = os.getcwd()
    if here not in sys.path:
        sys.path.append(here)
    paths = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    if here not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join([p for p in paths if p] + [here])


def _command(args, beam_args: list, debug: bool) -> int:
    from pipelines.job import run
    from pipelines.results import manifest_of
    from pipelines.thresholds import (THRESHOLD_FAILED, crossed_thresholds, idle_models,
                                      parse_thresholds)
    from runners import check_beam_args
    from transforms.replay.protocols import model_and_fold

    try:
        if args.command in ("report", "rank", "trend") and beam_args:
            refuse_extra(args.command, beam_args[0])  # no pipeline: no Beam options
        refuse_the_other_commands(args.command, beam_args)
        beam_args = check_beam_args(beam_args, our_flags(args.command))
        if args.command in ("report", "rank", "trend"):  # (run and backfill: in their plan)
            _check_folders_reachable(args)
        if args.command == "report":
            from pipelines.report import write_report

            try:
                print(write_report(args.dir))
            except FileNotFoundError as e:
                raise ConfigError(str(e)) from None
            return 0
        if args.command == "rank":
            from pipelines.rank import format_ranks, rank_runs

            out = args.out or os.path.join(args.dirs[0], "rank")
            print(format_ranks(rank_runs(args.dirs, out, args.metric, args.category,
                                         args.window, args.alpha, args.psi)))
            print(f"written to {out}/")
            return 0
        if args.command == "trend":
            from pipelines.trend import format_trend, write_trend

            out = args.out or os.path.join(args.root, "trend")
            print(format_trend(write_trend(args.root, out, args.metric,
                                           args.category, args.window, args.segment)))
            print(f"written to {out}/")
            return 0
        if args.command == "quickstart":
            config = RunConfig(streams=[f"agrawal={QUICKSTART_STREAM}"],
                               models=QUICKSTART_MODELS, delay="1000", out=args.out,
                               runner=args.runner, beam_args=beam_args, bins=10,
                               repredict="every_k_labels:100", report=True)
            print(f"Agrawal, 20000 events, concept drift at 10000, label delay 1000 events; "
                  f"results in {args.out}/")
        else:
            config = run_config(args, beam_args)
        summary = run(config)
        models = list(dict.fromkeys(summary.loc[summary["category"] != "comparison", "model"]))
        # With --cv, a threshold without a model holds for each model's mean over its folds.
        means = [m for m in models if model_and_fold(m)[1] is None] or models
        manifest = manifest_of(config.out) or {}
        maturity = manifest.get("maturity") or {}  # (a backfill's)
        idle = idle_models(manifest.get("counts", [])) if config.fail_if else []
        crossed = crossed_thresholds(
            parse_thresholds(config.fail_if, models), summary, means,
            {stream: m.get("pending", 0) for stream, m in maturity.items()},
            {stream: m["pending_by_segment"] for stream, m in maturity.items()
             if "pending_by_segment" in m}, idle)
        for stream, model in idle:  # (its notice above says why it has nothing to score)
            print(f"delayed-eval: notice: {stream} / {model}: --fail-if not checked: no "
                  f"prediction of it is of a labelled instance of the range", file=sys.stderr)
        for line in crossed:
            print(f"delayed-eval: threshold crossed: {line}", file=sys.stderr)
        if crossed:
            return THRESHOLD_FAILED
    except DelayedEvalError as e:
        if debug:
            raise
        print(f"delayed-eval: error: {one_line(e)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as e:
        return _interrupted(args, e)
    except Exception as e:  # a bug of ours: one line, the traceback with --debug
        if _caused_by(e, KeyboardInterrupt):  # Ctrl-C inside a DoFn, re-raised by Beam
            return _interrupted(args, e)
        if _caused_by(e, BrokenPipeError) and (_reader_left(sys.stdout)
                                                or _reader_left(sys.stderr)):
            return 128 + signal.SIGPIPE  # as a Unix tool ends (`| head` read its lines)
        if debug:
            raise
        print(f"delayed-eval: error: internal error: {type(e).__name__}: {one_line(e)}; rerun "
              f"with --debug for the traceback, and please report it", file=sys.stderr)
        return 1
    return 0


def _check_folders_reachable(args) -> None:
    """The run folders `report`, `rank` and `trend` read and their --out, each on a
    filesystem this Python reaches (`check_reachable`), before anything is read."""
    from apache_beam.io.filesystems import FileSystems
    from apache_beam.options.pipeline_options import PipelineOptions

    from pipelines.files import check_reachable

    FileSystems.set_options(PipelineOptions([]))  # (an object store's default credentials)
    folders = args.dirs if args.command == "rank" else \
        [args.dir if args.command == "report" else args.root]
    for folder in folders:
        check_reachable(folder, args.command)
    if getattr(args, "out", None):  # (report has none)
        check_reachable(args.out, "--out")


def _caused_by(error: BaseException, kind: type) -> bool:
    """Whether `error` or an exception it was raised from (or while handling) is a `kind`."""
    seen = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, kind):
            return True
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return False


class Terminated(KeyboardInterrupt):
    """SIGTERM (a scheduler stopping the task, `kill`), raised where the command is, so that it
    ends as Ctrl-C does: its staging folder removed, one line, exit status 128 + 15.

    >>> try:
    ...     raise Terminated()
    ... except KeyboardInterrupt as stop:  # (what catches Ctrl-C catches it)
    ...     print(_caused_by(stop, Terminated))
    True
    """


def terminate(signum, frame):
    """The command's SIGTERM handler (`command.console_main`).

    >>> previous = signal.signal(signal.SIGTERM, terminate)
    >>> try:
    ...     signal.raise_signal(signal.SIGTERM)
    ... except Terminated:
    ...     print("stopped as by Ctrl-C")
    ... finally:
    ...     _ = signal.signal(signal.SIGTERM, previous)
    stopped as by Ctrl-C
    """
    raise Terminated()


_dropped: list = []  # the stop a finalizer dropped, to raise again (`stop_again`)


def raise_dropped(signum, frame):
    """The command's SIGALRM handler: raises the Ctrl-C or SIGTERM `stop_again` kept.

    >>> raise_dropped(signal.SIGALRM, None)  # nothing kept: nothing raised
    >>> _dropped.append(Terminated())
    >>> try:
    ...     raise_dropped(signal.SIGALRM, None)
    ... except Terminated:
    ...     print("raised once:", _dropped)
    raised once: []
    """
    if _dropped:
        raise _dropped.pop()


def stop_again(unraisable, previous=sys.__unraisablehook__) -> None:
    """The command's `sys.unraisablehook`. A signal's handler raises where the main thread
    is; inside a finalizer (an object's `__del__`, a generator closed as it is freed) Python
    prints that exception and drops it, and the command would run on to its end. A dropped
    Ctrl-C or SIGTERM is raised again 10 ms later (SIGALRM), outside the finalizer.

    Example
    -------

    >>> import time
    >>> class Stops:
    ...     def __del__(self):
    ...         raise Terminated()
    >>> handlers = signal.signal(signal.SIGALRM, raise_dropped), sys.unraisablehook
    >>> sys.unraisablehook = stop_again
    >>> try:
    ...     stops = Stops()
    ...     del stops  # its __del__ raises, and Python drops that
    ...     time.sleep(5)
    ... except Terminated:
    ...     print("stopped")
    ... finally:
    ...     _ = signal.signal(signal.SIGALRM, handlers[0]); sys.unraisablehook = handlers[1]
    stopped
    """
    if isinstance(unraisable.exc_value, KeyboardInterrupt):
        _dropped[:] = [type(unraisable.exc_value)()]
        signal.setitimer(signal.ITIMER_REAL, 0.01)
    else:
        previous(unraisable)


def _reader_left(stream) -> bool:
    """Whether `stream` is a pipe whose reader has gone (`delayed-eval run ... | head`), so
    the command ends quietly, as a Unix tool (a run's results are written before its tables
    are printed; a reader of its progress that leaves ends it before it publishes); what it
    still prints goes nowhere (the file descriptor now /dev/null).

    >>> import os, sys
    >>> read, write = os.pipe()
    >>> os.close(read)
    >>> with os.fdopen(write, "w") as stream:
    ...     left = _reader_left(stream)
    ...     _ = stream.write("nowhere"); stream.flush()  # (no BrokenPipeError)
    >>> left
    True
    >>> _reader_left(sys.stdin)  # (no pipe to write into: as it was)
    False
    """
    import select

    try:
        poller = select.poll()
        poller.register(stream.fileno(), select.POLLOUT)
        left = any(event & select.POLLERR for _, event in poller.poll(0))
    except (AttributeError, OSError, ValueError):  # no poll (Windows), no file descriptor
        return False
    if left:
        nowhere = os.open(os.devnull, os.O_WRONLY)
        os.dup2(nowhere, stream.fileno())
        os.close(nowhere)
    return left


def _interrupted(args, error: BaseException) -> int:
    from pipelines.results import check_one_run

    out = getattr(args, "out", None) or getattr(args, "dir", None)
    stopped = _caused_by(error, Terminated)
    how = "terminated (SIGTERM)" if stopped else "interrupted"
    try:
        if out:
            check_one_run(out)
        mixed = False
    except (InputError, OSError):  # (stopped while moving its files in)
        mixed = True
    if mixed:
        print(f"delayed-eval: {how} while moving the results into {out}; run again: until "
              f"then the folder holds files of two runs, which its readers refuse",
              file=sys.stderr)
    else:
        print(f"delayed-eval: {how}; the previous results in {out} are untouched" if out
              else f"delayed-eval: {how}", file=sys.stderr)
    return 128 + (signal.SIGTERM if stopped else signal.SIGINT)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--write-reference"]:
        write_reference(sys.argv[2])
        sys.exit(0)
    from pipelines.command import console_main

    console_main()
