"""The `delayed-eval` command's entry point, which imports nothing heavy before it may run
the command again (`console_main`); the command itself is `pipelines.cli`."""

from __future__ import annotations

import os
import signal
import sys


def console_main() -> None:
    """The `delayed-eval` command: `pipelines.cli.main` in a Python whose hashes of text are
    fixed.

    Python salts the hashes of text anew in each process, and with them the order in which a
    set of texts is walked: river models that walk a set of classes (the adaptive tree's and
    kNN's probabilities) break a tie between classes named by text one way in one process and
    another way in the next, so one run's numbers would differ from the next run's and one
    worker's from another's. The command runs again with PYTHONHASHSEED=0 unless the
    environment fixes it; the worker processes it starts inherit it.

    >>> import subprocess, sys
    >>> code = ("import os; from pipelines import cli, command; "
    ...         "cli.main = lambda: print(os.environ['PYTHONHASHSEED']) or 0; "
    ...         "command.console_main()")
    >>> env = {k: v for k, v in os.environ.items() if k != "PYTHONHASHSEED"}
    >>> subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
    ...                text=True).stdout.split()
    ['0']
    """
    with_fixed_hashes()
    from pipelines import cli  # (after the exec: its imports are paid once)

    signal.signal(signal.SIGTERM, cli.terminate)
    signal.signal(signal.SIGALRM, cli.raise_dropped)
    sys.unraisablehook = cli.stop_again
    status = cli.main()
    from runners.worker import leave

    leave(status)  # (without Python's teardown of its modules: ~0.6 s)


def with_fixed_hashes() -> None:
    """Run this command again, as it was started, with PYTHONHASHSEED=0 unless the
    environment fixes the hash seed (see `console_main`); before anything heavy is imported,
    which the process that runs again would pay for twice.

    >>> import subprocess, sys
    >>> code = ("import os; from pipelines.command import with_fixed_hashes; "
    ...         "with_fixed_hashes(); print(os.environ['PYTHONHASHSEED'])")
    >>> env = {k: v for k, v in os.environ.items() if k != "PYTHONHASHSEED"}
    >>> subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
    ...                text=True).stdout.split()  # (printed once: by the process run again)
    ['0']
    """
    if os.environ.get("PYTHONHASHSEED", "random") == "random" and sys.executable:
        os.environ["PYTHONHASHSEED"] = "0"
        os.execv(sys.executable, [sys.executable, *sys.orig_argv[1:]])
