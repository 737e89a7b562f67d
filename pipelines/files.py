"""A run's files, through Beam's FileSystems (so `--out` may be `gs://`, `s3://` or a shared
mount, and what workers write on a cluster lands where the driver reads it): writing and
reading, the staging folder a run writes into, and publishing it when the run has succeeded."""

from __future__ import annotations

import io
import json
import os

import pandas as pd
import pyarrow as pa
from apache_beam.io.filesystem import BeamIOError
from apache_beam.io.filesystems import FileSystems

from pipelines.results import previous_outputs
from transforms.errors import OutputError

ERRORS_FILE = "_errors.json"  # the workers' errors (`transforms.errors`), read after the run


def write_bytes(path: str, data: bytes) -> None:
    """Write `data` to `path` (any Beam filesystem)."""
    with FileSystems.create(path) as f:
        f.write(data)


def read_bytes(path: str) -> bytes:
    """The bytes of `path` (any Beam filesystem)."""
    with FileSystems.open(path) as f:
        return f.read()


def write_json(path: str, value) -> None:
    """`value` as indented JSON at `path` (NaN kept as NaN; other objects as text)."""
    write_bytes(path, json.dumps(value, indent=1, default=str, allow_nan=True).encode())


def write_parquet(path: str, frame: pd.DataFrame) -> None:
    """`frame` as a Parquet file at `path`, without its index."""
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    write_bytes(path, buffer.getvalue())


def staged_names(staging: str) -> dict:
    """{file name: path} of what a run has written into `staging`."""
    return {FileSystems.split(m.path)[1]: m.path
            for m in FileSystems.match([FileSystems.join(staging, "*")])[0].metadata_list}


def publish(staging: str, out: str) -> None:
    """Move a finished run's files from `staging` into `out`, each replacing its old self in
    one rename. The files an earlier run listed in its manifest (`outputs`) that this run did
    not make are removed, so `out` never mixes two runs' results; anything else in `out` (a
    user's own notes or figures) is left alone."""
    made = staged_names(staging)
    stale = [FileSystems.join(out, n) for n in previous_outputs(out) if n not in made]
    FileSystems.delete([p for p in stale if FileSystems.exists(p)])
    names = sorted(made)
    FileSystems.rename([made[n] for n in names], [FileSystems.join(out, n) for n in names])


def read_arrow(path: str) -> pa.Table:
    """An Arrow IPC file at `path`, read whole."""
    with FileSystems.open(path) as f:
        return pa.ipc.open_file(pa.BufferReader(f.read())).read_all()


def write_jsonl(path: str, rows) -> None:
    """Dead-letter `rows` as JSON Lines at `path`, in a fixed order (stream, model, file, row,
    reason).
    """
    rows = sorted(rows, key=lambda r: (str(r.get("stream")), str(r.get("model")),
                                       str(r.get("file")), r.get("row") or 0, r["reason"]))
    write_bytes(path, "".join(json.dumps(r, default=str) + "\n" for r in rows).encode())


def io_reason(error: BaseException) -> str:
    """An I/O error's cause in a few words: the first OSError with a reason among the error,
    what it wraps (Beam wraps the OSError it met) and what it was raised from."""
    todo, seen = [error], set()
    while todo:
        e = todo.pop(0)
        if id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, OSError) and e.strerror:
            return e.strerror
        details = getattr(e, "exception_details", None)
        todo += [a for a in (*e.args, *(details.values() if isinstance(details, dict) else ()),
                             e.__cause__, e.__context__) if isinstance(a, BaseException)]
    return str(error).splitlines()[0]


def new_staging(out: str, run_id: str) -> str:
    """A new, empty staging folder in `out` for this run (its parents made), or an OutputError
    saying why `out` cannot take one."""
    if "://" not in out and os.path.exists(out) and not os.path.isdir(out):
        raise OutputError(f"--out {out}: is a file, not a directory; choose a directory")
    staging = FileSystems.join(out, f".staging-{run_id}")
    try:
        if FileSystems.exists(staging):
            FileSystems.delete([staging])
        FileSystems.mkdirs(staging)  # with parents; object stores have no folders to make
        write_bytes(FileSystems.join(staging, ".probe"), b"")  # can files be written there?
        FileSystems.delete([FileSystems.join(staging, ".probe")])
    except (OSError, BeamIOError) as e:
        raise OutputError(f"--out {out}: cannot write there ({io_reason(e)}); choose a directory "
                          f"you can write") from None
    return staging
