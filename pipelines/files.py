"""A run's files, through Beam's FileSystems (so `--out` may be `gs://`, `s3://` or a shared
mount, and what workers write on a cluster lands where the driver reads it): writing and
reading, the staging folder a run writes into, and publishing it when the run has succeeded."""

from __future__ import annotations

import contextlib
import errno
import importlib.util
import io
import json
import os
import re
import shutil
import socket
import tempfile
import uuid

import pandas as pd
import pyarrow as pa
from apache_beam.io.filesystem import BeamIOError
from apache_beam.io.filesystems import FileSystems

from pipelines.results import json_text, previous_outputs, record_outputs, refuse_unlisted
from transforms.errors import ConfigError, DelayedEvalError, OutputError
from transforms.streams.table_files import delete_paths, files_in

ERRORS_FILE = "_errors.json"  # the workers' errors (`transforms.errors`), read after the run


def write_bytes(path: str, data: bytes) -> None:
    """Write `data` to `path` (any Beam filesystem).

    Example
    -------

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "a.bin")
    >>> write_bytes(path, b"abc"); read_bytes(path)
    b'abc'

    """
    with FileSystems.create(path) as f:
        f.write(data)


def read_bytes(path: str) -> bytes:
    """The bytes of `path` (any Beam filesystem).

    Example
    -------

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "a.json")
    >>> write_json(path, {"n": 1}); read_bytes(path)
    b'{\\n "n": 1\\n}'

    """
    with FileSystems.open(path) as f:
        return f.read()


def names_below(folder: str) -> list[str]:
    """The paths relative to `folder` ("/" between parts) of the files below it, on any Beam
    filesystem, sorted.

    Example
    -------

    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> write_bytes(os.path.join(folder, "a", "b.txt"), b"b")
    >>> write_bytes(os.path.join(folder, "c.txt"), b"c")
    >>> names_below(folder), names_below(os.path.join(folder, "none"))
    (['a/b.txt', 'c.txt'], [])

    """
    prefix = folder.rstrip("/") + "/"
    listed = files_in(folder)
    return sorted(m.path[len(prefix):] for m in listed if m.path.startswith(prefix))


@contextlib.contextmanager
def local_copy(folder: str, names):
    """A temporary folder on this machine holding the files `names` (paths relative to
    `folder`, "/" between parts; those that exist) of a folder on another filesystem (gs://,
    s3://), for code that reads and writes local files (pandas, matplotlib). On leaving without
    an error, each file in it that is new or changed is copied to `folder`, manifest.json last
    (it vouches for the others); an error of ours that names the copy names `folder` instead.

    Example
    -------

    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> write_bytes(os.path.join(folder, "a.txt"), b"a")
    >>> with local_copy(folder, ["a.txt", "missing.txt"]) as here:
    ...     print(sorted(os.listdir(here)))
    ...     os.mkdir(os.path.join(here, "sub"))
    ...     with open(os.path.join(here, "sub", "b.txt"), "w") as f:
    ...         _ = f.write("b")
    ['a.txt']
    >>> read_bytes(os.path.join(folder, "sub", "b.txt")), os.path.exists(here)
    (b'b', False)

    """
    here = tempfile.mkdtemp(prefix="delayed-eval-")
    try:
        before = {}
        for name in names:
            source = FileSystems.join(folder, *name.split("/"))
            if FileSystems.exists(source):
                before[name] = read_bytes(source)
                target = os.path.join(here, *name.split("/"))
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with open(target, "wb") as f:
                    f.write(before[name])
        try:
            yield here
        except (DelayedEvalError, FileNotFoundError) as e:  # (its message names `folder`)
            if here not in str(e):
                raise
            raise type(e)(str(e).replace(here, folder)) from None
        written = {}
        for root, _, files in os.walk(here):
            for file in files:
                path = os.path.join(root, file)
                name = os.path.relpath(path, here).replace(os.sep, "/")
                with open(path, "rb") as f:
                    data = f.read()
                if before.get(name) != data:
                    written[name] = data
        for name in sorted(written, key=lambda n: n == "manifest.json"):
            write_bytes(FileSystems.join(folder, *name.split("/")), written[name])
    finally:
        shutil.rmtree(here, ignore_errors=True)


@contextlib.contextmanager
def folder_here(folder: str):
    """`folder` itself when it is on this machine; for one on another filesystem, a temporary
    folder here whose files are copied to it on leaving without an error (`local_copy`).

    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> with folder_here(folder) as here:
    ...     here == folder
    True
    """
    if "://" not in folder:
        yield folder
        return
    with local_copy(folder, []) as here:
        yield here


def write_json(path: str, value) -> None:
    """`value` as indented strict JSON at `path` (`results.json_text`: NaN is null).

    Example
    -------

    >>> import json, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "a.json")
    >>> write_json(path, {"value": float("nan")}); json.loads(read_bytes(path))
    {'value': None}

    """
    write_bytes(path, json_text(value).encode())


def write_parquet(path: str, frame: pd.DataFrame) -> None:
    """`frame` as a Parquet file at `path`, without its index.

    Example
    -------

    >>> import os, tempfile
    >>> import pandas as pd
    >>> path = os.path.join(tempfile.mkdtemp(), "a.parquet")
    >>> write_parquet(path, pd.DataFrame({"x": [1, 2]})); pd.read_parquet(path)["x"].tolist()
    [1, 2]

    """
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    write_bytes(path, buffer.getvalue())


def delete_folder(folder: str) -> None:
    """Delete a folder's files, then the folder if there is one (an object store has none),
    wherever it is (Beam's FileSystems).

    >>> import os, tempfile
    >>> folder = os.path.join(tempfile.mkdtemp(), "parts")
    >>> write_bytes(os.path.join(folder, "a.arrow"), b"")
    >>> delete_folder(folder); os.path.exists(folder)
    False
    """
    delete_paths([m.path for m in files_in(folder, below=False)])
    if FileSystems.exists(folder):
        delete_paths([folder])


def staged_names(staging: str) -> dict:
    """{file name: path} of what a run has written into `staging`.

    Example
    -------

    >>> import os, tempfile
    >>> staging = new_staging(tempfile.mkdtemp(), "r2")
    >>> write_bytes(os.path.join(staging, "summary.csv"), b"")
    >>> list(staged_names(staging))
    ['summary.csv']

    """
    return {name: m.path
            for m in files_in(staging, below=False)
            if (name := FileSystems.split(m.path)[1]) != OWNER}


def publish(staging: str, out: str) -> None:
    """Move a finished run's files from `staging` into `out`, each replacing its old self in
    one rename, its manifest last. The files an earlier run listed in its manifest (`outputs`)
    that this run did not make are removed, so `out` never mixes two runs' results; anything
    else in `out` (a user's own notes or figures) is left alone. Before anything moves, the
    manifest in `out` claims this run's files (`record_outputs`): were the publishing stopped
    half-way, a reader is told so (`check_one_run`), and a rerun replaces them.

    Example
    -------

    >>> import os, tempfile
    >>> out = tempfile.mkdtemp()
    >>> staging = new_staging(out, "r3")
    >>> write_bytes(os.path.join(staging, "summary.csv"), b"x")
    >>> write_bytes(os.path.join(staging, "manifest.json"), b'{"outputs": ["summary.csv"]}')
    >>> publish(staging, out); sorted(os.listdir(out))
    ['.staging-r3', 'manifest.json', 'summary.csv']

    """
    made = staged_names(staging)
    stale = [FileSystems.join(out, n) for n in previous_outputs(out) if n not in made]
    record_outputs(out, sorted(made), claim=True)
    try:
        delete_paths([p for p in stale if FileSystems.exists(p)])
        for folder in sorted({os.path.dirname(p) for p in stale} - {out.rstrip("/")},
                             reverse=True):
            if os.path.isdir(folder) and not os.listdir(folder):  # (a report's figures/, emptied)
                os.rmdir(folder)
        for names in ([n for n in sorted(made) if n != "manifest.json"],  # the manifest seals
                      [n for n in made if n == "manifest.json"]):
            if names:
                FileSystems.rename([made[n] for n in names],
                                   [FileSystems.join(out, n) for n in names])
    except (OSError, BeamIOError) as e:
        raise OutputError(f"--out {out}: moving the results into place failed part-way "
                          f"({io_reason(e)}); run again: until then the folder holds files of "
                          f"two runs, which its readers refuse") from None


def write_part(table: pa.Table, folder: str) -> str:
    """Write `table` as an Arrow IPC file of a fresh name in `folder` (local or on an object
    store) -> its path: rows written by a worker where they were made, for one step to gather
    later (a retried bundle writes a new part; only the paths its outputs carry are read).

    Example
    -------

    >>> import tempfile
    >>> table = pa.table({"x": [1, 2]})
    >>> read_arrow(write_part(table, tempfile.mkdtemp())).equals(table)
    True

    """
    path = FileSystems.join(folder, f"{uuid.uuid4().hex}.arrow")
    with FileSystems.create(path) as f, pa.ipc.new_file(f, table.schema) as writer:
        writer.write_table(table)
    return path


def read_arrow(path: str) -> pa.Table:
    """An Arrow IPC file at `path` (`write_part`'s), read whole.

    >>> import tempfile
    >>> read_arrow(write_part(pa.table({"x": [1, 2]}), tempfile.mkdtemp()))["x"].to_pylist()
    [1, 2]
    """
    with FileSystems.open(path) as f:
        return pa.ipc.open_file(pa.BufferReader(f.read())).read_all()


def write_jsonl(path: str, rows) -> None:
    """Dead-letter `rows` as JSON Lines at `path`, in a fixed order: stream, file, row (where
    a reader would look for them), model, reason.

    Example
    -------

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "dead.jsonl")
    >>> write_jsonl(path, [{"stream": "s", "row": 9, "reason": "b"},
    ...                    {"stream": "s", "row": 2, "reason": "a"}])
    >>> [line[:30] for line in read_bytes(path).decode().splitlines()]
    ['{"stream": "s", "row": 2, "rea', '{"stream": "s", "row": 9, "rea']

    """
    rows = sorted(rows, key=lambda r: (str(r.get("stream")), str(r.get("file")),
                                       r.get("row") or 0, str(r.get("model")), r["reason"]))
    write_bytes(path, "".join(json_text(r, indent=None) + "\n" for r in rows).encode())


def io_reason(error: BaseException) -> str:
    """An I/O error's cause in a few words: the first OSError with a reason among the error,
    what it wraps (Beam wraps the OSError it met) and what it was raised from.

    Example
    -------

    >>> try:
    ...     open("/nonexistent/dir/file")
    ... except OSError as e:
    ...     error = RuntimeError("writing failed")
    ...     error.__cause__ = e
    >>> io_reason(error)
    'No such file or directory'

    """
    for e in _error_chain(error):
        if isinstance(e, OSError) and e.strerror:
            return e.strerror
    return str(error).splitlines()[0]


def _error_chain(error: BaseException):
    """`error`, the exceptions it holds (in its arguments, Beam's `exception_details`) and
    those it was raised from or while handling, each once, nearest first."""
    todo, seen = [error], set()
    while todo:
        e = todo.pop(0)
        if id(e) in seen:
            continue
        seen.add(id(e))
        yield e
        details = getattr(e, "exception_details", None)
        todo += [a for a in (*e.args, *(details.values() if isinstance(details, dict) else ()),
                             e.__cause__, e.__context__) if isinstance(a, BaseException)]


# A worker's OSError that is the disk's, not ours: the run's files could not be written.
DISK_ERRORS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EIO, errno.EFBIG})


def disk_error(error: BaseException) -> OSError | None:
    """The disk's error (full, read-only, a quota) among `error`, what it wraps and what it was
    raised from — a worker writing a spilled part or a curve part met it — or None.

    Example
    -------

    >>> failure = RuntimeError("Pipeline failed")
    >>> failure.__cause__ = OSError(errno.ENOSPC, "No space left on device")
    >>> disk_error(failure).strerror, disk_error(ValueError("a bug")) is None
    ('No space left on device', True)

    """
    return next((e for e in _error_chain(error)
                 if isinstance(e, OSError) and e.errno in DISK_ERRORS), None)


# What reading and writing an object store's paths needs here: the Python package Beam's
# filesystem for that scheme imports, and Beam's extra that installs it.
FILESYSTEM_PACKAGES = {"gs": ("google.cloud.storage", "gcp"), "s3": ("boto3", "aws"),
                       "azfs": ("azure.storage.blob", "azure"), "hdfs": ("hdfs", "hadoop")}


def check_reachable(path: str, where: str) -> None:
    """Stop with one line, before anything is read or written, when `path` lies on a
    filesystem this Python cannot reach: a scheme Beam has no filesystem for, or one whose
    client library is not installed (Beam would fail later, deep in a read or a write, or
    for s3:// and azfs:// on the first file access, with no word of what to install).

    Example
    -------

    >>> check_reachable("results/x", "--out")  # a local path: nothing to check
    >>> try:
    ...     check_reachable("ftp://host/x", "--out")
    ... except ConfigError as e:
    ...     print(e)  # doctest: +NORMALIZE_WHITESPACE
    --out ftp://host/x: no filesystem here reads or writes ftp:// paths; give a local path, or
    one on gs://, s3://, azfs:// or hdfs://

    """
    scheme = path.split("://", 1)[0].lower() if "://" in path else "file"
    if scheme == "file":
        return
    if scheme not in FILESYSTEM_PACKAGES:
        try:
            FileSystems.get_filesystem(path)  # (one a plugin registered with Beam)
            return
        except (ValueError, BeamIOError):
            pass
        raise ConfigError(f"{where} {path}: no filesystem here reads or writes {scheme}:// "
                          f"paths; give a local path, or one on "
                          f"{', '.join(f'{s}://' for s in list(FILESYSTEM_PACKAGES)[:-1])} or "
                          f"{list(FILESYSTEM_PACKAGES)[-1]}://")
    package, extra = FILESYSTEM_PACKAGES[scheme]
    try:
        found = importlib.util.find_spec(package) is not None
    except ImportError:  # (a parent package missing)
        found = False
    if not found:
        raise ConfigError(f"{where} {path}: {scheme}:// paths need Beam's {extra} extra, which "
                          f"is not installed here; install it (pip install "
                          f"'apache-beam[{extra}]') or give a local path")


def staging_file_gone(error: BaseException, staging: str) -> str | None:
    """The file in `staging` that `error` found missing — a file the run wrote there, removed
    while it ran (the folder deleted or cleaned by someone else) — or None.

    Example
    -------

    >>> failure = RuntimeError("Pipeline failed")
    >>> failure.__context__ = FileNotFoundError(errno.ENOENT, "No such file", "o/.staging-r/a")
    >>> staging_file_gone(failure, "o/.staging-r"), staging_file_gone(failure, "p/.staging-r")
    ('o/.staging-r/a', None)

    """
    for e in _error_chain(error):
        name = getattr(e, "filename", None) if isinstance(e, FileNotFoundError) else None
        if name is None:  # (Beam re-raises a worker's error as text)
            found = re.search(r"No such file or directory: '([^']*)'", str(e))
            name = found and found.group(1)
        if name and os.path.normpath(str(name)).startswith(os.path.normpath(staging) + os.sep):
            return str(name)
    return None


# The files a run or its report writes in --out, each replacing a file of its name there.
RUN_FILES = ("summary.csv", "summary.parquet", "curves.parquet", "predictions.parquet",
             "profile.json", "dead_letters.jsonl", "maturity.csv", "manifest.json", "report.html")


# In a staging folder, the run that writes it: its host and process, by which a later run tells
# a folder a killed run left behind (SIGKILL, the OOM killer) from one being written now.
OWNER = ".owner.json"


def remove_abandoned_stagings(out: str) -> list[str]:
    """Remove the staging folders in `out` that runs on this machine left when they were killed
    (their process is gone), which a run removes on its way out otherwise: they hold the
    files of a run that never finished, a backfill's spilled log among them -> their paths.
    Another machine's, or one without its owner written, is left alone (its run may be
    writing it now). Only for a local `out`: a process is known by its pid on its host.

    >>> import json, os, socket, subprocess, tempfile
    >>> out = tempfile.mkdtemp()
    >>> gone = subprocess.Popen(["true"]); _ = gone.wait()  # a process that has ended
    >>> for name, pid in (("killed", gone.pid), ("running", os.getpid())):
    ...     os.makedirs(os.path.join(out, f".staging-{name}"))
    ...     with open(os.path.join(out, f".staging-{name}", OWNER), "w") as f:
    ...         json.dump({"host": socket.gethostname(), "pid": pid}, f)
    >>> [os.path.basename(p) for p in remove_abandoned_stagings(out)], os.listdir(out)
    (['.staging-killed'], ['.staging-running'])
    """
    if "://" in out or not os.path.isdir(out):
        return []
    removed = []
    for name in sorted(os.listdir(out)):
        folder = os.path.join(out, name)
        try:
            with open(os.path.join(folder, OWNER), encoding="utf-8") as f:
                owner = json.load(f)
            if not name.startswith(".staging-") or owner["host"] != socket.gethostname() or \
                    _running(int(owner["pid"])):
                continue
        except (OSError, ValueError, KeyError, TypeError):  # not a staging folder of ours
            continue
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(folder)
    return removed


def _running(pid: int) -> bool:
    """Whether process `pid` exists on this machine (another user's too)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def new_staging(out: str, run_id: str) -> str:
    """A new, empty staging folder in `out` for this run (its parents made), or an OutputError
    saying why `out` cannot take one: a file there of a name the run writes that no earlier
    run's manifest lists (a user's own `summary.csv`) would be replaced.

    Example
    -------

    >>> import os, tempfile
    >>> out = tempfile.mkdtemp()
    >>> os.path.basename(new_staging(out, "r1")), os.listdir(out)
    ('.staging-r1', ['.staging-r1'])

    """
    if "://" not in out and os.path.exists(out) and not os.path.isdir(out):
        raise OutputError(f"--out {out}: a file, not a folder; choose a folder")
    refuse_unlisted(out, RUN_FILES)  # (an earlier run's files: this run replaces them)
    remove_abandoned_stagings(out)
    staging = FileSystems.join(out, f".staging-{run_id}")
    try:
        if FileSystems.exists(staging):
            delete_paths([staging])
        FileSystems.mkdirs(staging)  # with parents; object stores have no folders to make
        write_bytes(FileSystems.join(staging, OWNER),  # (and can files be written there?)
                    json.dumps({"host": socket.gethostname(), "pid": os.getpid()}).encode())
    except (OSError, BeamIOError) as e:
        raise OutputError(f"--out {out}: cannot write there ({io_reason(e)}); choose a directory "
                          f"you can write") from None
    return staging
