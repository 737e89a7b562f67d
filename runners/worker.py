"""How our processes end, and the local runner whose worker processes end so.

Python's teardown of every module and object takes ~0.6 s in a process that has loaded Beam,
river, scipy and pyarrow. `leave` ends a process without it once its work is done (the
`delayed-eval` command, a worker). `LocalRunner` is Beam's FnApiRunner whose worker processes
(`--direct_running_mode=multi_processing`, the `direct-mp` preset) run this module: Beam's SDK
worker (`sdk_worker_main`), then `leave`. The runner waits for its workers to end one after
another at the end of every run, and their teardown would be most of that wait (on 2 cores,
1.4 s of a run with two workers; `python -m benchmarks.bench_parallel --stages`).
"""

from __future__ import annotations

import atexit
import os
import shlex
import sys

from apache_beam.runners.portability.fn_api_runner import FnApiRunner

# The worker command Beam's FnApiRunner gives multi-processing runs, and ours.
BEAM_WORKER = f"{sys.executable} -m apache_beam.runners.worker.sdk_worker_main"
OUR_WORKER = f"{shlex.quote(sys.executable)} -m runners.worker"


def leave(status: int) -> None:
    """End the process with exit status `status` as `sys.exit` would, without Python's
    teardown of every module and object: the exit functions run first (`atexit`: logging's
    flush, the finalizers that remove temporary folders, a model library's own), then the
    output is flushed.

    >>> import subprocess, sys
    >>> code = ("import atexit; from runners.worker import leave; "
    ...         "atexit.register(print, 'exit functions ran'); print('done', end=' '); leave(3)")
    >>> done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    >>> done.stdout, done.returncode
    ('done exit functions ran\\n', 3)
    """
    atexit._run_exitfuncs()  # (what interpreter shutdown would run; CPython's, since 3.0)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader that left (`| head`), a closed stream
            pass
    os._exit(status)


class LocalRunner(FnApiRunner):
    """Beam's FnApiRunner, whose worker processes run this module's `main` instead of Beam's
    `sdk_worker_main` (the same worker, ending with `leave`).

    >>> from apache_beam.portability import python_urns
    >>> from apache_beam.portability.api import beam_runner_api_pb2
    >>> proto = beam_runner_api_pb2.Pipeline()
    >>> proto.components.environments["w"].urn = python_urns.SUBPROCESS_SDK
    >>> proto.components.environments["w"].payload = BEAM_WORKER.encode()
    >>> LocalRunner.ours(proto).components.environments["w"].payload.decode() == OUR_WORKER
    True
    """

    def run_via_runner_api(self, pipeline_proto, options):
        return super().run_via_runner_api(self.ours(pipeline_proto), options)

    @staticmethod
    def ours(pipeline_proto):
        """The pipeline with Beam's worker command replaced by ours (in place)."""
        from apache_beam.portability import python_urns

        for environment in pipeline_proto.components.environments.values():
            if environment.urn == python_urns.SUBPROCESS_SDK and \
                    environment.payload == BEAM_WORKER.encode():
                environment.payload = OUR_WORKER.encode()
        return pipeline_proto


def main() -> None:
    """A worker process: Beam's SDK worker until the runner lets it go, then `leave` (a
    failure ends it as Python would, with its traceback). `LocalRunner` starts each worker
    process with `OUR_WORKER`, which runs this:

    >>> OUR_WORKER.split()[-2:]
    ['-m', 'runners.worker']
    """
    from apache_beam.runners.worker import sdk_worker_main

    from runners import dofn_specs_remembered, fewer_collections

    with fewer_collections(), dofn_specs_remembered():
        sdk_worker_main.main(sys.argv)
    leave(0)


if __name__ == "__main__":
    main()
