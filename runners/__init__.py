"""Runner presets. Every pipeline names its runner explicitly.

Why presets: Beam 2.77's `DirectRunner` first tries to start the Prism runner, which downloads a
binary; on an offline machine that fails slowly before falling back. `direct` therefore runs
Beam's FnApiRunner itself (what the DirectRunner falls back to for batch pipelines).

| preset        | what runs                                                                  |
|---------------|----------------------------------------------------------------------------|
| direct        | FnApiRunner, in memory, one process (the default)                          |
| direct-mp     | FnApiRunner, `--direct_running_mode=multi_processing`, 2 workers           |
| bundle        | BundleBasedDirectRunner: supports TestStream / streaming on one machine    |
| portable      | PortableRunner against a job service; without `--job_endpoint` one is      |
|               | started in this process, with LOOPBACK workers (in this process too)       |
| portable-pool | PortableRunner, local job service and an EXTERNAL SDK worker pool started  |
|               | as a separate process: the way Flink runs Python workers                   |
| any other     | passed through as `--runner=NAME` (FlinkRunner, DataflowRunner, ...)       |

`runner_session(name, beam_args)` gives the runner and options, and stops what it started.
See runners/README.md for Flink and Dataflow.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time

from apache_beam.options.pipeline_options import PipelineOptions

PRESETS = ("direct", "direct-mp", "bundle", "portable", "portable-pool")


def make_runner(name: str):
    """A runner object for a preset, or None when Beam should resolve `--runner` itself.

    >>> type(make_runner("direct")).__name__
    'FnApiRunner'
    >>> make_runner("FlinkRunner") is None
    True
    """
    if name in ("direct", "DirectRunner", "direct-mp"):
        from apache_beam.runners.portability.fn_api_runner import FnApiRunner

        return FnApiRunner()
    if name in ("bundle", "BundleBasedDirectRunner"):
        from apache_beam.runners.direct.direct_runner import BundleBasedDirectRunner

        return BundleBasedDirectRunner()
    if name in ("portable", "portable-pool"):
        from apache_beam.runners.portability.portable_runner import PortableRunner

        return PortableRunner()
    return None


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
    return PipelineOptions(args)


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
def worker_pool(parallelism: int = 1):
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
def runner_session(name: str, beam_args: list[str] | None = None):
    """(runner, options) for a preset, with whatever it needs running for the duration: for
    `portable` without `--job_endpoint`, a job service in this process; for `portable-pool`,
    that and an SDK worker pool process (`--sdk_worker_parallelism` workers per job).

    >>> with runner_session("direct") as (runner, options):
    ...     type(runner).__name__
    'FnApiRunner'
    """
    args = list(beam_args or [])
    with contextlib.ExitStack() as stack:
        if name in ("portable", "portable-pool") and not _has(args, "--job_endpoint"):
            from apache_beam.runners.portability.local_job_service import LocalJobServicer

            service = LocalJobServicer()
            port = service.start_grpc_server(0)
            stack.callback(service.stop)
            args.append(f"--job_endpoint=localhost:{port}")
        if name == "portable-pool" and not _has(args, "--environment_type"):
            address = stack.enter_context(worker_pool())
            args += ["--environment_type=EXTERNAL", f"--environment_config={address}"]
        elif name == "portable" and not _has(args, "--environment_type"):
            args.append("--environment_type=LOOPBACK")
        yield make_runner(name), pipeline_options(name, args)
