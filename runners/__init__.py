"""Runner presets. Every pipeline names its runner explicitly.

Why presets: Beam 2.77's `DirectRunner` first tries to start the Prism runner, which downloads a
binary; on an offline machine that fails slowly before falling back. `direct` therefore runs
Beam's FnApiRunner itself (what the DirectRunner falls back to for batch pipelines).

| preset        | what runs                                                                  |
|---------------|----------------------------------------------------------------------------|
| direct        | FnApiRunner, in memory, one process (the default)                          |
| direct-mp     | FnApiRunner, `--direct_running_mode=multi_processing`, 2 workers           |
|               | (`runners.worker`: Beam's SDK worker, ending without Python's teardown)    |
| bundle        | BundleBasedDirectRunner: supports TestStream / streaming on one machine    |
| portable      | PortableRunner against a job service; without `--job_endpoint` one is      |
|               | started in this process, with LOOPBACK workers (in this process too)       |
| portable-pool | PortableRunner, local job service and an EXTERNAL SDK worker pool started  |
|               | as a separate process: the way Flink runs Python workers                   |
| any other     | passed through as `--runner=NAME` (FlinkRunner, DataflowRunner, ...)       |

`runner_session(name, beam_args)` gives the runner and options, and stops what it started.
See docs/runners.md for Flink and Dataflow.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
import time

from apache_beam.options.pipeline_options import PipelineOptions

PRESETS = ("direct", "direct-mp", "bundle", "portable", "portable-pool")


def make_runner(name: str):
    """A runner object for a preset, or None when Beam should resolve `--runner` itself.

    >>> type(make_runner("direct")).__name__, type(make_runner("direct-mp")).__base__.__name__
    ('LocalRunner', 'FnApiRunner')
    >>> make_runner("FlinkRunner") is None
    True
    """
    if name in ("direct", "DirectRunner", "direct-mp"):
        from runners.worker import LocalRunner  # (FnApiRunner, workers ending sooner)

        return LocalRunner()
    if name in ("bundle", "BundleBasedDirectRunner"):
        from apache_beam.runners.direct.direct_runner import BundleBasedDirectRunner

        return BundleBasedDirectRunner()
    if name in ("portable", "portable-pool"):
        from apache_beam.runners.portability.portable_runner import PortableRunner

        return PortableRunner()
    return None


def _beam_runner_names() -> list[str]:
    """The runners Beam knows by name (besides an import path `package.module.Runner`)."""
    from apache_beam.options.pipeline_options import StandardOptions

    return [path.rsplit(".", 1)[1] for path in StandardOptions.ALL_KNOWN_RUNNERS]


def check_runner(name: str) -> None:
    """A preset, a runner Beam knows (`FlinkRunner`, `flink`) or an import path; else a
    ConfigError listing them.

    >>> check_runner("direct"), check_runner("flink")
    (None, None)
    """
    from transforms.errors import ConfigError

    known = {n.lower() for n in _beam_runner_names()}
    if name in PRESETS or "." in name or name.lower() in known or \
            name.lower() + "runner" in known:
        return
    raise ConfigError(f"unknown runner {name!r}; the presets are {', '.join(PRESETS)}, and "
                      f"Beam knows {', '.join(_beam_runner_names())} (or give an import path)")


def check_beam_args(args: list[str], ours: list[str]) -> list[str]:
    """The arguments for Beam: every one a flag some Beam PipelineOptions defines (`--flag=v`
    or `--flag v`), or anything after `--`, which goes to Beam unchecked. A flag neither we
    (`ours`) nor Beam know is a ConfigError naming the closest one.

    >>> check_beam_args(["--direct_num_workers", "2"], ["--bins"])
    ['--direct_num_workers', '2']
    """
    import difflib

    from apache_beam.options.pipeline_options import _BeamArgumentParser

    from transforms.errors import ConfigError

    checked, rest = (args[:args.index("--")], args[args.index("--") + 1:]) if "--" in args \
        else (args, [])
    parser = _BeamArgumentParser(allow_abbrev=False)
    for cls in {str(c): c for c in PipelineOptions.__subclasses__()}.values():
        cls._add_argparse_args(parser)  # every option Beam defines, as Beam parses them
    _, unknown = parser.parse_known_args(checked)
    if unknown:
        flag = unknown[0].split("=", 1)[0]
        beams = [s for a in parser._actions for s in a.option_strings]
        # (only a near miss is worth naming: Beam alone has ~200 options)
        close = difflib.get_close_matches(flag, ours, n=1, cutoff=0.75) or \
            difflib.get_close_matches(flag, beams, n=1, cutoff=0.8)
        hint = f"did you mean {close[0]}? " if close else "see --help; "
        what = "unknown option" if flag.startswith("-") else "unexpected argument"
        if not flag.startswith("-") and ":" in flag:  # (a spec's {a,b} split by the shell)
            from transforms.specs import SHELL_QUOTES

            raise ConfigError(f"{what} {flag}; {SHELL_QUOTES}")
        raise ConfigError(f"{what} {flag}; {hint}Beam's own options pass unchecked after --")
    return checked + rest


def _has(args: list[str], flag: str) -> bool:
    return any(a == flag or a.startswith(flag + "=") for a in args)


def pipeline_options(name: str, beam_args: list[str] | None = None) -> PipelineOptions:
    """PipelineOptions for a preset plus any pass-through Beam flags.

    >>> pipeline_options("direct-mp").get_all_options()["direct_running_mode"]
    'multi_processing'
    """
    args = list(beam_args or [])
    if name == "direct-mp":
        if not _has(args, "--direct_running_mode"):
            args.append("--direct_running_mode=multi_processing")
        if not _has(args, "--direct_num_workers"):
            args.append("--direct_num_workers=2")
    elif name in ("direct", "DirectRunner"):
        if not _has(args, "--direct_running_mode"):
            args.append("--direct_running_mode=in_memory")
    elif make_runner(name) is None:
        args = [f"--runner={name}", *args]
    return Options(args)


class Options(PipelineOptions):
    """PipelineOptions whose views (`view_as`) are made once per options class.

    Beam asks the pipeline's options for a view at each transform it applies and at each type
    check (~250 times in a small run), and each new view parses its flags again: ~10 % of a
    small run. A view holds no state of its own (every view reads and writes the options'
    one store), so the same view serves every request.

    >>> options = Options(["--direct_num_workers=3"])
    >>> from apache_beam.options.pipeline_options import DirectOptions
    >>> options.view_as(DirectOptions) is options.view_as(DirectOptions)
    True
    >>> options.view_as(DirectOptions).direct_num_workers = 4
    >>> options.get_all_options()["direct_num_workers"]
    4
    """

    def view_as(self, cls):
        views = self.__dict__.get("_views")
        if views is None:
            views = {}
            object.__setattr__(self, "_views", views)  # (not an option: PipelineOptions refuses)
        if cls not in views:
            views[cls] = super().view_as(cls)
        return views[cls]

    def __getstate__(self):
        state = dict(super().__getstate__())
        state.pop("_views", None)
        return state


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def _wait_for_port(port: int, process: subprocess.Popen, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the SDK worker pool exited with status {process.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("localhost", port), 1):
            return
        time.sleep(0.1)
    raise RuntimeError(f"the SDK worker pool did not listen on port {port} in {timeout:.0f} s")


@contextlib.contextmanager
def _worker_pool(parallelism: int = 1):
    """An EXTERNAL SDK worker pool (`worker_pool_main`) in a child process; yields its
    address. Workers it starts run this interpreter's `python` (its bin first on PATH) and so
    import this package, as Flink's task managers would with the package installed."""
    port = _free_port()
    env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep +
               os.environ.get("PATH", ""))
    process = subprocess.Popen(
        [sys.executable, "-m", "apache_beam.runners.worker.worker_pool_main",
         f"--service_port={port}"], env=env, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)
    try:
        _wait_for_port(port, process)
        yield f"localhost:{port}"
    finally:
        process.terminate()
        process.wait(30)


@contextlib.contextmanager
def _stderr_to_devnull():
    """File descriptor 2 to /dev/null for the duration: what this process's children (Beam's
    SDK workers) write there is dropped, and restored after."""
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as devnull:
            os.dup2(devnull.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


# The thread pools of numerical libraries (numpy's OpenBLAS, OpenMP, MKL), sized per process.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def cores() -> int:
    """The cores this process may run on (its CPU affinity where the system tells it).

    >>> cores() >= 1
    True
    """
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else \
        os.cpu_count() or 1


def local_workers(name: str, options: PipelineOptions) -> int:
    """How many worker processes a run with preset `name` starts on this machine (1 when it
    runs in this process or elsewhere).

    >>> local_workers("direct-mp", pipeline_options("direct-mp", ["--direct_num_workers=4"]))
    4
    >>> local_workers("direct", pipeline_options("direct"))
    1
    """
    from apache_beam.options.pipeline_options import DirectOptions, PortableOptions

    if name in ("direct", "DirectRunner", "direct-mp") and \
            options.view_as(DirectOptions).direct_running_mode == "multi_processing":
        return options.view_as(DirectOptions).direct_num_workers or cores()
    if name == "portable-pool":
        return int(options.view_as(PortableOptions).sdk_worker_parallelism or 0) or cores()
    return 1


@contextlib.contextmanager
def threads_per_worker(workers: int):
    """Worker processes started meanwhile give their numerical libraries cores ÷ `workers`
    threads (at least 1), unless the user set `THREAD_VARIABLES`: otherwise each worker's
    OpenBLAS starts a thread per core, and the workers' threads fight over the cores (on 2
    cores, two workers ran the parallel benchmark's grid in 11.2 s instead of 9.4 s;
    docs/runners.md). This process's numpy, already loaded, keeps its threads.

    >>> import os
    >>> with threads_per_worker(2):
    ...     int(os.environ["OPENBLAS_NUM_THREADS"]) >= 1
    True
    """
    threads = str(max(1, cores() // max(1, workers)))
    with _worker_environment({name: threads for name in THREAD_VARIABLES
                              if name not in os.environ}):
        yield


_HELD: dict = {}  # setting -> [runs of this process holding it, what it was before them]
_HELD_LOCK = threading.Lock()


@contextlib.contextmanager
def _held_while_running(name: str, apply, restore):
    """`apply()` (which returns what to restore) when the first of this process's overlapping
    runs (threads, a run inside another) starts, `restore(it)` when the last one ends."""
    with _HELD_LOCK:
        held = _HELD.setdefault(name, [0, None])
        if not held[0]:
            held[1] = apply()
        held[0] += 1
    try:
        yield
    finally:
        with _HELD_LOCK:
            held[0] -= 1
            if not held[0]:
                restore(held[1])


def fewer_collections():
    """Python's garbage collector passes less often meanwhile, and leaves the objects alive
    before (modules, the caller's) out of its passes: a run makes and drops millions of small
    containers, and the collector's passes over everything alive took ~10 % of a small run's
    time (more in a process that holds more: a notebook's, a test session's). Its settings are
    handed back afterwards, so a caller's garbage is still collected.

    >>> import gc
    >>> before = gc.get_threshold()
    >>> with fewer_collections():
    ...     with fewer_collections():  # (a run inside a run, or beside it in another thread)
    ...         pass
    ...     gc.get_threshold()[0] > before[0]
    True
    >>> gc.get_threshold() == before
    True
    """
    import gc

    def apply():
        thresholds = gc.get_threshold()
        gc.freeze()
        gc.set_threshold(max(thresholds[0], 50_000), *thresholds[1:])
        return thresholds

    def restore(thresholds):
        gc.set_threshold(*thresholds)
        gc.unfreeze()

    return _held_while_running("gc", apply, restore)


def dofn_specs_remembered():
    """Beam remembers each DoFn's state and timer specs meanwhile: it asks for them ~8 times
    per DoFn while it builds, translates and runs a pipeline, and each time walks the
    signature of every method the DoFn has (`userstate.get_dofn_specs`), which took 7–15 % of
    a small run's time. The specs of a DoFn do not change once it is made; the answers are
    Beam's own, and Beam asks afresh afterwards.

    >>> import apache_beam as beam
    >>> from apache_beam.transforms import userstate
    >>> class Counting(beam.DoFn):
    ...     COUNT = userstate.ReadModifyWriteStateSpec("count", beam.coders.VarIntCoder())
    ...     def process(self, element, count=beam.DoFn.StateParam(COUNT)):
    ...         yield element
    >>> fn, plain = Counting(), beam.transforms.core.CallableWrapperDoFn(lambda x: [x])
    >>> ask = userstate.get_dofn_specs
    >>> with dofn_specs_remembered():
    ...     inside = [userstate.get_dofn_specs(f) for f in (fn, plain, fn, plain)]
    >>> inside == [userstate.get_dofn_specs(f) for f in (fn, plain, fn, plain)]  # Beam's own
    True
    >>> [state.name for state in inside[2][0]], inside[3], userstate.get_dofn_specs is ask
    (['count'], (set(), set()), True)
    """
    from apache_beam.transforms import userstate

    def apply():
        ask = userstate.get_dofn_specs
        answers: dict = {}  # id(dofn) -> (dofn, specs); the DoFn is held: its id stays its own

        def remembered(dofn):
            known = answers.get(id(dofn))
            if known is None or known[0] is not dofn:
                known = answers[id(dofn)] = (dofn, ask(dofn))
            states, timers = known[1]
            return set(states), set(timers)  # (each caller gets sets of its own, as from Beam)

        userstate.get_dofn_specs = remembered
        return ask

    def restore(ask):
        userstate.get_dofn_specs = ask

    return _held_while_running("dofn specs", apply, restore)


@contextlib.contextmanager
def one_blas_thread():
    """This process's BLAS (numpy's OpenBLAS, or MKL) computes on one thread meanwhile, unless
    the user set `THREAD_VARIABLES`: the replay multiplies a batch of pending rows at a time,
    too small for threads to pay, and OpenBLAS's threads spin on the other cores between
    products (on 2 cores, a Hoeffding tree's re-evaluation took the same time on one thread
    with a third less CPU; benchmarks/README.md).

    >>> from threadpoolctl import threadpool_info, threadpool_limits
    >>> def blas_threads():
    ...     return {pool["num_threads"] for pool in threadpool_info()
    ...             if pool["user_api"] == "blas"}
    >>> with threadpool_limits(limits=2, user_api="blas"), one_blas_thread():
    ...     blas_threads() == {1} or any(name in os.environ for name in THREAD_VARIABLES)
    True
    """
    if any(name in os.environ for name in THREAD_VARIABLES):
        yield
        return
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        yield


@contextlib.contextmanager
def workers_hash_text_alike():
    """Worker processes started meanwhile hash text with seed 0 (PYTHONHASHSEED) when this
    Python's seed is not fixed (`evaluate()` from a notebook): river models that break a tie
    between text classes in a set's order then break it as the `delayed-eval` command does, in
    every worker (docs/runners.md).

    >>> import os
    >>> with workers_hash_text_alike():
    ...     os.environ["PYTHONHASHSEED"] != "random"
    True
    """
    unfixed = os.environ.get("PYTHONHASHSEED", "random") == "random"
    with _worker_environment({"PYTHONHASHSEED": "0"} if unfixed else {}):
        yield


@contextlib.contextmanager
def _worker_environment(values: dict):
    """`values` in this process's environment, which the worker processes started meanwhile
    inherit; each variable as it was afterwards."""
    before = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@contextlib.contextmanager
def runner_session(name: str, beam_args: list[str] | None = None, worker_logs: bool = False):
    """(runner, options) for a preset, with whatever it needs running for the duration: for
    `portable` without `--job_endpoint`, a job service in this process; for `portable-pool`,
    that and an SDK worker pool process (`--sdk_worker_parallelism` workers per job). Several
    local worker processes share the cores (`threads_per_worker`). `direct-mp`'s worker
    processes log (~20 lines each on stderr) only with `worker_logs`; a worker's failure
    reaches this process as the pipeline's error either way. This process's BLAS computes on
    one thread (`one_blas_thread`).

    >>> with runner_session("direct") as (runner, options):
    ...     type(runner).__name__
    'LocalRunner'
    """
    args = list(beam_args or [])
    with contextlib.ExitStack() as stack:
        stack.enter_context(workers_hash_text_alike())
        stack.enter_context(one_blas_thread())
        workers = local_workers(name, pipeline_options(name, args))
        if workers > 1:
            stack.enter_context(threads_per_worker(workers))
        if name in ("portable", "portable-pool") and not _has(args, "--job_endpoint"):
            from apache_beam.runners.portability.local_job_service import LocalJobServicer

            service = LocalJobServicer()
            port = service.start_grpc_server(0)
            stack.callback(service.stop)
            args.append(f"--job_endpoint=localhost:{port}")
        if name == "portable-pool" and not _has(args, "--environment_type"):
            address = stack.enter_context(_worker_pool())
            args += ["--environment_type=EXTERNAL", f"--environment_config={address}"]
        elif name == "portable" and not _has(args, "--environment_type"):
            args.append("--environment_type=LOOPBACK")
        if name == "direct-mp" and not worker_logs:
            stack.enter_context(_stderr_to_devnull())
        yield make_runner(name), pipeline_options(name, args)
