"""A table's files and their rows: finding them (a file, a glob or a folder of partitions,
through Beam's FileSystems for remote paths), CSV / JSON Lines / Parquet options, and reading
them in chunks of rows (`table_chunks`) so that a long log does not have to fit in memory."""

from __future__ import annotations

import codecs
import contextlib
import difflib
import functools
import io
import itertools
import json
import os
import pickle
import re
import shutil
import tempfile
import warnings
import weakref
import zlib
from collections.abc import Iterator
from typing import NamedTuple

import numpy as np
import pandas as pd
import pyarrow as pa

from transforms.errors import InputError, one_line
from transforms.records import dead_letter, field_count_reason

FORMATS = {".csv": "csv", ".tsv": "csv", ".jsonl": "jsonl", ".json": "jsonl", ".ndjson": "jsonl",
           ".parquet": "parquet", ".pq": "parquet", ".arff": "arff"}


TABLE_FORMATS = tuple(ext for ext, fmt in FORMATS.items() if fmt != "arff")
# Compressed files are read as their content's format (logs.csv.gz is CSV), decompressed by
# pandas for a local path and by Beam's FileSystems for a remote one.
COMPRESSED = (".gz", ".bz2")


def extension(path: str) -> str:
    """A file's extension, in lower case, past a compression suffix.

    >>> extension("logs/day.CSV"), extension("logs/day.jsonl.gz"), extension("day.bz2")
    ('.csv', '.jsonl', '')
    """
    root, ext = os.path.splitext(path)
    if ext.lower() in COMPRESSED:
        ext = os.path.splitext(root)[1]
    return ext.lower()


def source_name(pattern: str) -> str:
    """What a file, folder or glob is called: its last path part that is no glob, without its
    extension ("" when there is none) — the default name of a stream, or of a log's model. A
    local file or folder is called by its name whatever its characters (`rows[1].csv`).

    >>> [source_name(p) for p in ("logs/Fraud_v3.csv", "gs://b/scores/",
    ...                           "logs/scores/date=*/*.parquet", "*.csv", "trips.csv.gz")]
    ['Fraud_v3', 'scores', 'scores', '', 'trips']
    """
    literal = "://" not in pattern and os.path.exists(pattern)
    parts = [p for p in pattern.replace("\\", "/").split("/")
             if p and (literal or not any(ch in p for ch in "*?[")) and not p.endswith(":")]
    if not parts:
        return ""
    name = parts[-1]
    if os.path.splitext(name)[1].lower() in COMPRESSED:
        name = os.path.splitext(name)[0]
    return os.path.splitext(name)[0]


# How the one column of a role is often named (`request_id`, `created_at`, `labelled_at`).
_TIME_ENDINGS = ("time", "timestamp", "_at", "_ts")
_ROLE_ENDINGS = {"id": ("id",), "time": _TIME_ENDINGS, "label_time": _TIME_ENDINGS}
# What a label column is often called (scikit-learn's y, Kaggle's target, ARFF's class).
_LABEL_NAMES = ("y", "target", "class", "outcome", "truth", "ground_truth", "y_true")


def guess_column(option: str, name: str, columns: list[str]) -> str | None:
    """The column among `columns` that the column `name`, not among them, most likely is
    (the one the `option` names): `name` in another case or spacing, a close spelling of it, the
    column named as the option, or the only column named as such a column often ends (an id, a
    time) or is called (a label: y, target, class, ...).

    >>> guess_column("time", "t", ["id", "time", "prediction"])
    'time'
    >>> guess_column("label", "label", ["id", " Label"]), guess_column("id", "tx", ["a", "b"])
    (' Label', None)
    >>> guess_column("id", "id", ["request_id", "scored_at", "p_fraud"])
    'request_id'
    >>> guess_column("time", "t", ["request_id", "scored_at"])
    'scored_at'
    >>> guess_column("label", "label", ["x0", "x1", "Target"])
    'Target'
    """
    found = [c for c in columns if c.strip().lower() == name.strip().lower()] or \
        difflib.get_close_matches(name, columns, n=1, cutoff=0.8) or \
        [c for c in columns if c.strip().lower() == option]
    if found:
        return found[0]
    if option == "label":
        named = [c for c in columns if c.strip().lower() in _LABEL_NAMES]
    else:
        named = [c for c in columns if c.strip().lower().endswith(_ROLE_ENDINGS.get(option, ()))]
    return named[0] if len(named) == 1 else None


def table_files(pattern: str, extensions: tuple = TABLE_FORMATS) -> list[str]:
    """A table's files, sorted: a file, a glob, or a directory (every file below it with one of
    the `extensions`, e.g. hive partitions `date=2026-11-01/part-0.parquet`), found through
    Beam's FileSystems (the way `gs://` and `s3://` paths are found too).

    >>> import tempfile, os
    >>> root = tempfile.mkdtemp()
    >>> for day in ("2026-11-02", "2026-11-01"):
    ...     os.makedirs(f"{root}/date={day}")
    ...     with open(f"{root}/date={day}/part-0.csv", "w") as f:
    ...         _ = f.write("id,time,label\\n")
    >>> [os.path.relpath(f, root) for f in table_files(root)]
    ['date=2026-11-01/part-0.csv', 'date=2026-11-02/part-0.csv']
    >>> os.makedirs(f"{root}/date=2026-11-03")
    >>> open(f"{root}/date=2026-11-03/part-0.csv", "w").close()  # (no bytes: left out)
    >>> len(table_files(root))
    2
    """
    if os.path.isfile(pattern):
        return [pattern]
    from apache_beam.io.filesystems import FileSystems  # here: reading a local file needs no Beam

    exists = FileSystems.exists(pattern)  # (a file or folder of that name, whatever its marks)
    if exists and extension(pattern) not in extensions:
        listed = files_in(pattern)
    else:  # a file, or a glob
        listed = FileSystems.match([literal_pattern(pattern) if exists else pattern])[0] \
            .metadata_list
    found = [m for m in listed if extension(m.path) in extensions]
    # A file of no bytes (a day with no events, as some writers leave one) holds no rows and no
    # header: left out, unless every file is such, for the checks to say the table is empty.
    if any(m.size_in_bytes for m in found):
        found = [m for m in found if m.size_in_bytes]
    return sorted(m.path for m in found)


def literal_pattern(path: str) -> str:
    """`path` as a pattern of Beam's FileSystems that matches that path alone: their `match`
    and `delete` read `*`, `?` and `[` as a glob's marks, so a folder `out[1]` or a file
    `r?ws.csv` is no path to them. Each mark becomes a set holding it (`[` with NUL, which no
    path holds, because a set opening with `[` is a nested set to Python's `re`).

    >>> literal_pattern("runs/[2026] night?.csv")
    'runs/[\\x00[]2026] night[?].csv'
    >>> import os, tempfile
    >>> from apache_beam.io.filesystems import FileSystems
    >>> folder = os.path.join(tempfile.mkdtemp(), "out[1]")
    >>> os.makedirs(folder)
    >>> open(os.path.join(folder, "a*.csv"), "w").close()
    >>> [os.path.basename(m.path) for m in FileSystems.match(
    ...     [os.path.join(literal_pattern(folder), "*")])[0].metadata_list]
    ['a*.csv']
    """
    return re.sub(r"[*?[]", lambda mark: "[\0[]" if mark.group() == "[" else f"[{mark.group()}]",
                  path)


def files_in(folder: str, below: bool = True) -> list:
    """The files in `folder` (`below`: in its sub-folders too) as Beam's `FileMetadata` (path,
    size), on any Beam filesystem, found by the folder's path, not as a pattern. A local folder
    is listed here, as Beam lists it (`os.walk`): Beam would list a folder `out[1]` from its
    parent, and every file below that.

    >>> import os, tempfile
    >>> folder = os.path.join(tempfile.mkdtemp(), "out[1]")
    >>> os.makedirs(os.path.join(folder, "figures"))
    >>> for name in ("summary.csv", "figures/a.png"):
    ...     open(os.path.join(folder, name), "w").close()
    >>> [os.path.relpath(m.path, folder) for m in files_in(folder)]
    ['summary.csv', 'figures/a.png']
    >>> [os.path.relpath(m.path, folder) for m in files_in(folder, below=False)]
    ['summary.csv']
    """
    from apache_beam.io.filesystem import FileMetadata
    from apache_beam.io.filesystems import FileSystems

    if "://" in folder:
        return FileSystems.match([FileSystems.join(literal_pattern(folder),
                                                   "**" if below else "*")])[0].metadata_list
    listed = []
    for root, _, names in os.walk(folder):
        for name in names:
            path = os.path.join(root, name)
            try:
                listed.append(FileMetadata(path, os.path.getsize(path)))
            except OSError:  # gone since it was listed
                pass
        if not below:
            break
    return listed


def delete_paths(paths: list[str]) -> None:
    """Delete files or folders, each by its path (not as a pattern), on any Beam filesystem.
    A local one is deleted here: Beam's local `delete` finds a path with a glob's mark by
    listing files, so a folder `out[1]` would be none.

    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> kept, gone = (os.path.join(folder, name) for name in ("a1", "a[1]"))
    >>> for path in (kept, gone):
    ...     open(path, "w").close()
    >>> delete_paths([gone]); os.path.exists(gone), os.path.exists(kept)
    (False, True)
    """
    from apache_beam.io.filesystems import FileSystems

    for path in paths:
        if "://" not in path:
            shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)
    remote = [literal_pattern(p) for p in paths if "://" in p]
    if remote:
        FileSystems.delete(remote)


def size_of(path: str) -> int:
    """A file's size in bytes, on any Beam filesystem.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "rows?.csv")
    >>> with open(path, "w") as f:
    ...     _ = f.write("x,label\\n")
    >>> size_of(path)
    8
    """
    if "://" not in path:
        return os.path.getsize(path)
    from apache_beam.io.filesystems import FileSystems

    return FileSystems.match([literal_pattern(path)])[0].metadata_list[0].size_in_bytes


def _local_binary(path: str):
    """A local file opened for reading its bytes, decompressed if it is .gz or .bz2."""
    suffix = os.path.splitext(path)[1].lower()
    if suffix == ".gz":
        import gzip

        return gzip.open(path, "rb")
    if suffix == ".bz2":
        import bz2

        return bz2.open(path, "rb")
    return open(path, "rb")


@contextlib.contextmanager
def opened(path: str):
    """A local path as it is (pandas and Arrow read it themselves), else the file opened with
    Beam's FileSystems.

    Example
    -------

    >>> with opened("local/file.csv") as source:  # a local path is handed on as it is
    ...     source
    'local/file.csv'

    """
    if "://" not in path:
        yield path
        return
    from apache_beam.io.filesystem import CompressionTypes
    from apache_beam.io.filesystems import FileSystems

    # (AUTO: a .gz or .bz2 file decompressed, any other as it is)
    with FileSystems.open(path, compression_type=CompressionTypes.AUTO) as f:
        yield f


CSV_OPTIONS = ("sep", "encoding", "na_values", "decimal", "thousands")  # how to read CSV


def check_encoding(encoding, where: str, option: str = "the option") -> None:
    """An InputError when Python knows no text encoding of this name.

    >>> check_encoding("latin-9x", "stream s")
    Traceback (most recent call last):
    ...
    transforms.errors.InputError: stream s: unknown encoding 'latin-9x'; give one Python knows \
with the option {"encoding": "latin-1"} (or cp1252, utf-16, ...)
    """
    try:
        codecs.lookup(encoding)
    except (LookupError, TypeError):
        raise InputError(f"{where}: unknown encoding {encoding!r}; give one Python knows with "
                         f'{option} {{"encoding": "latin-1"}} (or cp1252, utf-16, ...)') from None


def is_utf8(encoding: str) -> bool:
    """Whether Python's codec of this name is UTF-8 (`utf8`, `UTF-8`, `U8`, ...).

    >>> is_utf8("UTF8"), is_utf8("latin-1")
    (True, False)
    """
    return codecs.lookup(encoding).name == "utf-8"


def without_bom(encoding: str) -> str:
    """The codec that reads `encoding` text and skips a UTF-8 byte-order mark, which Windows
    tools write at the start of a file.

    >>> b"\\xef\\xbb\\xbf{}".decode(without_bom("UTF8")), without_bom("latin-1")
    ('{}', 'latin-1')
    """
    return "utf-8-sig" if is_utf8(encoding) else encoding


# pandas 2's C reader parses a number to within an ulp unless asked to round-trip
# (0.14285714285714285 became 0.1428571428571428); pandas 3 round-trips, and deprecates the
# option. (The python engine parses with float(): exact.)
_PANDAS_2 = int(pd.__version__.split(".")[0]) < 3
EXACT_FLOATS = {"float_precision": "round_trip"} if _PANDAS_2 else {}


def numbers_of(values: pd.Series) -> pd.Series:
    """`pd.to_numeric(values, errors="coerce")`, a number written as text the float it
    writes: pandas 2 parses text to within an ulp (a fifth of random doubles' texts came back
    one off), pandas 3 and Python's `float` exactly.

    >>> numbers_of(pd.Series(["0.14285714285714285", "x", 2, None])).tolist()
    [0.14285714285714285, nan, 2.0, nan]
    """
    numbers = pd.to_numeric(values, errors="coerce")
    if not _PANDAS_2 or numbers.dtype.kind != "f":
        return numbers
    found = numbers.notna().to_numpy()
    exact = numbers.to_numpy(dtype=np.float64, na_value=np.nan, copy=True)
    try:  # (an object array's astype is float() of each value)
        exact[found] = values.to_numpy(dtype=object)[found].astype(np.float64)
    except (TypeError, ValueError, OverflowError):  # a value pandas reads and float() does not
        return numbers
    return pd.Series(exact, index=numbers.index, name=numbers.name)


def csv_options(options: dict) -> dict:
    """The arguments of pandas' CSV reader that the stream options give (`sep`, `encoding`,
    `decimal` and `thousands`: the marks in numbers such as 1.234,5; `na_values`: the texts a
    cell is missing as, instead of pandas' list — NA, N/A, null, NaN, None, ... —; an empty
    cell is always missing), and `index_col=False`: a file whose every line ends with the
    separator (as some exports write them) has its fields read under the header's names, not
    shifted by one as pandas would, taking the first field for an index.

    >>> def shown(options):  # (without EXACT_FLOATS, which depends on the pandas version)
    ...     return {k: v for k, v in csv_options(options).items() if k not in EXACT_FLOATS}
    >>> shown({"sep": ";", "decimal": ",", "time": "ts"})
    {'index_col': False, 'sep': ';', 'decimal': ','}
    >>> shown({"na_values": ["?"]})
    {'index_col': False, 'na_values': ['', '?'], 'keep_default_na': False}
    >>> csv_options({"thousands": "\u00a0", "decimal": ","})["engine"]
    'python'
    """
    out = {"index_col": False}
    out.update({k: options[k] for k in ("sep", "encoding", "decimal", "thousands")
                if k in options})
    # A no-break space (1 234,50): pandas' C reader takes a one-byte separator only.
    if not str(options.get("thousands", "")).isascii():
        out["engine"] = "python"
    else:
        out.update(EXACT_FLOATS)
    if "na_values" in options:
        out["na_values"] = ["", *options["na_values"]]
        out["keep_default_na"] = False
    return out


def _read_table(path: str, fmt: str, csv: dict | None = None) -> pd.DataFrame:
    """A table file read whole as a DataFrame (for small tables: headers, checks)."""
    try:
        with opened(path) as source:
            if fmt == "csv":
                return pd.read_csv(source, **(csv or {}))
            if fmt == "jsonl":  # its broken lines are dead letters of the stream's read
                frames = [c[2] for c in _jsonl_chunks(path, None, csv, None)
                          if not isinstance(c, dict)]
                return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
            import pyarrow.parquet as pq

            return as_pandas(flat_table(_valid(pq.read_table(source))))
    except UnicodeDecodeError as e:
        raise _undecodable(path, e, csv) from None
    except pd.errors.ParserError as e:
        raise _unparsable(path, e) from None
    except (OSError, ValueError, pa.ArrowException) as e:
        raise InputError(f"{path}: cannot read as {fmt}: {e}") from None
    except pd.errors.EmptyDataError:
        return pd.DataFrame()


JSONL_HEAD = 1000  # rows of a JSON Lines file that the checks before a run look at


class TextFacts(NamedTuple):
    """What one pass over a text table file (CSV, JSON Lines) finds before its rows are read:
    its first `JSONL_HEAD` rows with every column of the file (for JSON Lines, the union of its
    records' keys); for each column of times, (whether they are in order, the first, the last)
    of the times that parse; the columns whose type pandas infers differently from chunk to
    chunk, with one type for the whole file (numbers if every chunk has numbers, else text);
    and for JSON Lines, the chunks as parsed (`Spool`; None if they could not be kept), so the
    rows are read without parsing the file again; and its number of rows.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "rows.csv")
    >>> with open(path, "w") as f:
    ...     _ = f.write("time,a,label\\n3,0.5,no\\n2,x,yes\\n")
    >>> facts = text_facts(path, "csv", {})
    >>> facts.times["time"], facts.dtypes, facts.rows
    ((False, 3.0, 2.0), {}, 2)
    """

    head: pd.DataFrame
    times: dict
    dtypes: dict
    chunks: Spool | None = None
    rows: int = 0


class Spool:
    """Items kept in an anonymous temporary file (the system deletes it when it is closed or
    the process ends, however it ends), each read back as often as asked, also from several
    threads at once.

    >>> spool = Spool()
    >>> spool.add({"a": 1})
    >>> spool.add([1, 2])
    >>> list(spool), list(spool)
    ([{'a': 1}, [1, 2]], [{'a': 1}, [1, 2]])
    """

    def __init__(self):
        self.file = tempfile.TemporaryFile()
        # Closed when the spool goes (a cache evicts it) or the process ends: not left to the
        # collector, which warns of an unclosed file.
        weakref.finalize(self, self.file.close)
        self.parts: list[tuple[int, int]] = []  # (offset, length) of each item
        self.size = 0

    def add(self, item) -> None:
        data = pickle.dumps(item, protocol=pickle.HIGHEST_PROTOCOL)
        self.file.write(data)
        self.parts.append((self.size, len(data)))
        self.size += len(data)

    def __iter__(self):
        self.file.flush()
        fd = self.file.fileno()
        for offset, length in self.parts:
            yield pickle.loads(os.pread(fd, length, offset))


def text_facts(path: str, fmt: str, csv: dict | None) -> TextFacts:
    """A CSV or JSON Lines file's `TextFacts`, from one pass per file version, shared by the
    checks before a run and the run (a JSON Lines file has no header: its columns, like its
    times' order, take a whole pass; a CSV column's type is the whole file's).

    Example
    -------

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "log.jsonl")
    >>> with open(path, "w") as f:
    ...     _ = f.write('{"id": "a", "time": 1}\\n{"id": "b", "time": 3, "label": 0}\\n')
    >>> facts = text_facts(path, "jsonl", None)
    >>> list(facts.head.columns), facts.times["time"]
    (['id', 'time', 'label'], (True, 1.0, 3.0))
    """
    key = json.dumps(csv or {}, sort_keys=True)
    try:
        return _text_facts_of(path, fmt, file_version(path), key, CHUNK_ROWS)
    except UnicodeDecodeError as e:
        raise _undecodable(path, e, csv) from None


def file_version(path: str) -> tuple:
    """What tells one version of a file from another, for what is found once per version:
    size, modification time, inode and a checksum of its first and last 4 KiB (a file
    rewritten within the clock's granularity keeps its size and time). A non-local path:
    `()`, one version per process.

    Example
    -------

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "a.csv")
    >>> def write(text):
    ...     with open(path, "w") as f:
    ...         _ = f.write(text)
    ...     return file_version(path)
    >>> write("x\\n1\\n") != write("x\\n2\\n")  # same size, maybe the same time
    True
    """
    if "://" in path:
        return ()
    stat = os.stat(path)
    with open(path, "rb") as f:
        head = f.read(4096)
        f.seek(max(0, stat.st_size - 4096))
        tail = f.read(4096)
    return stat.st_size, stat.st_mtime_ns, stat.st_ino, zlib.crc32(head + tail)


@functools.lru_cache(maxsize=8)
def _text_facts_of(path: str, fmt: str, version: tuple, csv: str, chunk_rows: int) -> TextFacts:
    # Chunk by chunk (the types depend on the chunks), so the pass holds one chunk, not the
    # file. A column is a column of times if its head has a time that parses and no chunk
    # mixes numbers and text in it.
    from transforms.streams.times import event_seconds  # (times imports numbers_of from here)

    head, columns, kinds, dtypes, times, rows = None, {}, {}, {}, {}, 0
    spool = _spool() if fmt == "jsonl" else None
    for frame in _raw_chunks(path, fmt, json.loads(csv), chunk_rows, spool):
        rows += len(frame)
        columns.update(dict.fromkeys(frame.columns))
        for column in frame.columns:
            values = frame[column]
            dtypes.setdefault(column, set()).add(values.dtype)
            kind = "number" if values.dtype != object else \
                "text" if all(isinstance(v, str) for v in values.dropna()) else "mixed"
            kinds.setdefault(column, set()).add(kind)
        if head is None:
            head = frame.head(JSONL_HEAD).copy()
            times = {c: [True, None, None] for c in head.columns  # (order: in any unit)
                     if not event_seconds(head, c, bounded=False)[1].all()}
        for column, told in times.items():
            if column not in frame.columns:
                continue
            t, bad = event_seconds(frame, column, bounded=False)
            t = t[~bad]
            if len(t):
                if told[1] is None:
                    told[1] = float(t[0])
                elif t[0] < told[2]:
                    told[0] = False
                told[0] = told[0] and not np.count_nonzero(t[1:] < t[:-1])
                told[2] = float(t[-1])
    head = pd.DataFrame() if head is None else head.reindex(columns=list(columns))
    one_type = {column: "float64" if all(pd.api.types.is_numeric_dtype(d)
                                         and not pd.api.types.is_bool_dtype(d) for d in types)
                else object for column, types in dtypes.items() if len(types) > 1}
    return TextFacts(head, {c: tuple(told) for c, told in times.items()
                            if told[1] is not None and len(kinds[c]) == 1
                            and "mixed" not in kinds[c]}, one_type,
                     spool if spool is not None and spool.parts is not None else None, rows)


def _spool() -> Spool | None:
    """A `Spool`, where the system has anonymous temporary files read at an offset."""
    return Spool() if hasattr(os, "pread") and os.name == "posix" else None


def _raw_chunks(path: str, fmt: str, csv: dict, chunk_rows: int,
                spool: Spool | None = None) -> Iterator[pd.DataFrame]:
    """A CSV or JSON Lines file's chunks as pandas reads each by itself; lines that are no row
    are left out (the stream's read makes them dead letters). A JSON Lines file's items, rows
    and dead letters alike, are kept in `spool` as they come (if it cannot take them, e.g. a
    full disk, its `parts` become None: the rows will be parsed again)."""
    if fmt == "jsonl":
        for item in _jsonl_chunks(path, None, csv, None):
            if spool is not None and spool.parts is not None:
                try:
                    spool.add(item)
                except OSError:
                    spool.parts = None
                    spool.file.close()
            if not isinstance(item, dict):
                yield item[2]
        return
    with opened(path) as source, warnings.catch_warnings():
        warnings.simplefilter("ignore", pd.errors.ParserWarning)
        try:
            yield from pd.read_csv(source, chunksize=chunk_rows, on_bad_lines="warn", **csv)
        except pd.errors.ParserError as e:
            raise _unparsable(path, e) from None


def _unparsable(path: str, error: pd.errors.ParserError) -> InputError:
    """The error of a CSV file pandas cannot split into rows: most often a quote opened in a
    field and never closed, which pandas reads to the end of the file for (its row named).

    >>> print(_unparsable("tx.csv", pd.errors.ParserError(
    ...     "Error tokenizing data. C error: EOF inside string starting at row 149")))
    ... # doctest: +NORMALIZE_WHITESPACE
    tx.csv, row 149: a quote opened in the row is not closed before the end of the file, so
    the rest of the file would be one field; close it (a quote inside a quoted field is
    written twice, "")
    """
    found = re.search(r"EOF inside string starting at row (\d+)", str(error))
    if found:
        return InputError(f"{path}, row {found[1]}: a quote opened in the row is not closed "
                          f"before the end of the file, so the rest of the file would be one "
                          f'field; close it (a quote inside a quoted field is written twice, "")')
    return InputError(f"{path}: cannot be read as CSV ({one_line(error)}); check "
                      f"its separator (the option sep) and its quotes")


def _undecodable(path: str, error: UnicodeDecodeError, csv: dict | None) -> InputError:
    return undecodable(path, (csv or {}).get("encoding", "utf-8"), error.reason)


def undecodable(path: str, encoding: str, reason: str, option: str = "the stream option",
                line: int | None = None) -> InputError:
    """The error of a file that is not `encoding` text, naming its first line that is not (the
    `line` found so, else read from the file) and the `option` that gives the file's encoding.

    Example
    -------

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "t.csv")
    >>> with open(path, "wb") as f:
    ...     _ = f.write("city\\nParis\\nZ\\xfcrich\\n".encode("latin-1"))
    >>> print(undecodable(path, "utf-8", "?"))  # doctest: +ELLIPSIS +NORMALIZE_WHITESPACE
    /.../t.csv, line 3: not utf-8 text (invalid start byte); give the file's encoding with
    the stream option {"encoding": "latin-1"} (or cp1252, utf-16, ...)

    A file that begins with UTF-16's byte order mark (Excel's "Unicode text") is named so:

    >>> with open(path, "wb") as f:
    ...     _ = f.write("city\\tn\\nParis\\t1\\n".encode("utf-16"))
    >>> print(undecodable(path, "utf-8", "?"))  # doctest: +ELLIPSIS +NORMALIZE_WHITESPACE
    /.../t.csv: UTF-16 text (it begins with UTF-16's byte order mark), not utf-8; give the
    stream option {"encoding": "utf-16"}
    """
    where = path if line is None else f"{path}, line {line}"
    with contextlib.nullcontext(None) if line else _binary(path) as f:
        for number, text in enumerate(iter(f.readline, b"") if f else [], 1):
            if number == 1 and text[:2] in (b"\xff\xfe", b"\xfe\xff"):
                return InputError(f"{path}: UTF-16 text (it begins with UTF-16's byte order "
                                  f"mark), not {encoding}; give {option} "
                                  f'{{"encoding": "utf-16"}}')
            try:
                text.decode(encoding)
            except UnicodeDecodeError as e:
                where, reason = f"{path}, line {number}", e.reason
                break
    return InputError(f"{where}: not {encoding} text ({reason}); give the file's encoding "
                      f'with {option} {{"encoding": "latin-1"}} (or cp1252, utf-16, ...)')


@contextlib.contextmanager
def _binary(path: str):
    """A file's bytes, decompressed if it is .gz or .bz2: a local file, else through Beam's
    FileSystems."""
    if "://" not in path:
        with _local_binary(path) as f:
            yield f
        return
    with opened(path) as f:
        yield f


def columns_of(path: str, fmt: str, csv: dict | None = None) -> list[str]:
    """A table file's column names, read from its header or schema alone; a name given to two
    columns is an InputError (a reader would rename one, or keep one of them).

    Example
    -------

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "t.csv")
    >>> with open(path, "w") as f:
    ...     _ = f.write("id,time,label\\n1,0,a\\n")
    >>> columns_of(path, "csv")
    ['id', 'time', 'label']

    """
    try:
        with opened(path) as source:
            if fmt == "parquet":
                import pyarrow.parquet as pq

                return _named_once(path, flat_names(pq.read_schema(source)))
            if fmt == "csv":
                try:  # the header as it is: pandas renames a second `x` to `x.1`
                    header = pd.read_csv(source, nrows=1, header=None, dtype=str,
                                         keep_default_na=False, **_how_to_split(csv))
                except pd.errors.EmptyDataError:
                    return []
                _named_once(path, [name for name in header.iloc[0] if name])
        if fmt == "csv":  # (and pandas' names, which the reads use)
            with opened(path) as source:
                return list(pd.read_csv(source, nrows=0, **(csv or {})).columns)
    except UnicodeDecodeError as e:
        raise _undecodable(path, e, csv) from None
    except InputError:
        raise
    except pd.errors.ParserError as e:
        raise _unparsable(path, e) from None
    except (OSError, ValueError, pa.ArrowException) as e:  # a truncated or corrupt file
        raise InputError(f"{path}: not a readable {fmt} file ({one_line(e)}); "
                         f"is it complete?") from None
    if fmt == "jsonl":
        return list(text_facts(path, fmt, csv).head.columns)
    return list(_read_table(path, fmt, csv).columns)


def _how_to_split(csv: dict | None) -> dict:
    """The CSV options that say how to split a file into cells (not what a cell means)."""
    return {k: v for k, v in (csv or {}).items() if k in ("sep", "encoding")}


def _named_once(path: str, names: list[str]) -> list[str]:
    """The names, unless one is given to two columns.

    >>> _named_once("t.csv", ["time", "x", "x"])
    Traceback (most recent call last):
    ...
    transforms.errors.InputError: t.csv: two columns are named 'x'; rename one of them
    """
    seen: set = set()
    for name in names:
        if name in seen:
            raise InputError(f"{path}: two columns are named {name!r}; rename one of them")
        seen.add(name)
    return names


def head_of(path: str, fmt: str, csv: dict | None = None, rows: int = 1000) -> pd.DataFrame:
    """The first `rows` rows of a table file.

    Example
    -------

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "t.csv")
    >>> with open(path, "w") as f:
    ...     _ = f.write("x\\n" + "\\n".join(map(str, range(10))) + "\\n")
    >>> head_of(path, "csv", rows=3)["x"].tolist()
    [0, 1, 2]

    """
    with opened(path) as source:
        if fmt == "parquet":
            import pyarrow.parquet as pq

            with parquet_errors(path):
                batch = next(parquet_batches(pq.ParquetFile(source), path, batch_size=rows),
                             None)
                return as_pandas(flat_table(pa.Table.from_batches([batch]))) \
                    if batch is not None else pd.DataFrame()
        if fmt == "csv":
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", pd.errors.ParserWarning)
                    return pd.read_csv(source, nrows=rows, on_bad_lines="warn",
                                       **(csv or {}))
            except pd.errors.EmptyDataError:
                return pd.DataFrame()
            except UnicodeDecodeError as e:
                raise _undecodable(path, e, csv) from None
            except pd.errors.ParserError as e:
                raise _unparsable(path, e) from None
    if fmt == "jsonl" and rows <= JSONL_HEAD:
        return text_facts(path, fmt, csv).head.head(rows)
    return _read_table(path, fmt, csv).head(rows)


def other_separator(header: str, sep: str = ",") -> str | None:
    """The delimiter a CSV header line seems split by, when it is not `sep` (`sep` absent from
    it, another one there); None otherwise.

    >>> other_separator("time;x;label"), other_separator("time,x"), other_separator("a|b", "\\t")
    (';', None, '|')
    """
    if sep in header:
        return None
    return next((c for c in ";\t|," if c != sep and c in header), None)


def excel_separator_line(path: str, line: str,
                         option: str = "the stream option") -> InputError | None:
    """The error to raise when a CSV file's first `line` is the `sep=;` line Excel writes
    before the header (for a locale whose separator is not the comma), which no CSV reader
    takes; None for any other line.

    >>> print(excel_separator_line("export.csv", "sep=;"))
    export.csv: its first line, 'sep=;', is the separator line Excel writes before the \
header; delete that line and give the stream option {"sep": ";"}
    >>> excel_separator_line("export.csv", "time;x;label") is None
    True
    """
    declared = re.fullmatch(r"\s*sep=(.)\s*", line)
    if declared is None:
        return None
    sep = "" if declared[1] == "," else \
        f" and give {option} {json.dumps({'sep': declared[1]})}"
    return InputError(f"{path}: its first line, {line.strip()!r}, is the separator line Excel "
                      f"writes before the header; delete that line{sep}")


def row_count(path: str, fmt: str, csv: dict | None = None) -> int:
    """A table file's rows: from a Parquet file's metadata, from the pass over a text file.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "t.csv")
    >>> with open(path, "w") as f:
    ...     _ = f.write("x\\n1\\n2\\n")
    >>> row_count(path, "csv")
    2
    """
    if fmt == "parquet":
        import pyarrow.parquet as pq

        with opened(path) as source:
            return pq.ParquetFile(source).metadata.num_rows
    return text_facts(path, fmt, csv).rows


def has_rows(path: str, fmt: str, csv: dict | None = None) -> bool:
    """Whether a table file has a row: its metadata for Parquet, its first row for CSV.

    Example
    -------

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "t.csv")
    >>> with open(path, "w") as f:
    ...     _ = f.write("x\\n1\\n")
    >>> has_rows(path, "csv")
    True
    >>> with open(path, "w") as f:
    ...     _ = f.write("x\\n")
    >>> has_rows(path, "csv")
    False

    """
    with opened(path) as source:
        if fmt == "parquet":
            import pyarrow.parquet as pq

            return pq.ParquetFile(source).metadata.num_rows > 0
        if fmt == "csv":
            try:
                return len(pd.read_csv(source, nrows=1, **(csv or {}))) > 0
            except pd.errors.EmptyDataError:
                return False
            except pd.errors.ParserError as e:
                raise _unparsable(path, e) from None
    if fmt == "jsonl":
        return not text_facts(path, fmt, csv).head.empty
    return len(_read_table(path, fmt, csv)) > 0


CHUNK_ROWS = 65_536  # rows turned into Python objects at a time


# Parquet read through a 1 MiB buffer, without pre-buffering: by default Arrow pre-buffers whole
# column chunks and the peak grew with the file (a probe iterating batches of 1M / 2M / 4M rows:
# 181 / 215 / 273 MiB; with these options 157 / 185 / 165).
PARQUET_STREAMING = {"pre_buffer": False, "buffer_size": 1 << 20}


def table_chunks(files: list[str], fmt: str | None, default: str = "csv",
                 columns: list[str] | None = None, csv: dict | None = None,
                 stream: str | None = None, text: tuple = ()) -> Iterator:
    """(file, row numbers, chunk) for a table's files, in order, in chunks of `CHUNK_ROWS`
    rows, so memory does not grow with the table's length: Parquet batch by batch (its column
    types are the file's); CSV with one type per column for the whole file (`csv_dtypes`); JSON
    Lines line by line. `fmt`, if given, overrides the files' extensions;
    `default` is the format of a file without a known one; `columns`, if given, are the only
    columns read (with the values the whole read gives them); `csv`: `csv_options`; `text`:
    columns read as text whatever they hold (ids: a CSV's `000123` keeps its zeros, a Parquet
    integer stays exact where pandas would make its column of integers and nulls floats).

    The row numbers are each chunk row's 1-based data row in its file. A CSV line with more or
    fewer fields than the header, or a JSON Lines line that is no JSON object, is a dead letter
    of `stream` (a dict, in its place), and the rest of the file is read.

    Example
    -------

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "t.csv")
    >>> with open(path, "w") as f:
    ...     _ = f.write("time,x\\n0,1.5\\n1,2.5\\n")
    >>> [(os.path.basename(p), rows.tolist(), frame["x"].tolist())
    ...  for p, rows, frame in table_chunks([path], None)]
    [('t.csv', [1, 2], [1.5, 2.5])]

    (Row numbers count the file's data rows from 1, as dead letters name them.)

    """
    for path in files:
        file_fmt = fmt or fmt_of(path, default)
        row0 = 0
        try:
            if file_fmt == "parquet":
                import pyarrow.parquet as pq

                with opened(path) as source:
                    parquet = pq.ParquetFile(source, **PARQUET_STREAMING)
                    for batch in parquet.iter_batches(batch_size=CHUNK_ROWS, columns=columns):
                        yield path, np.arange(row0 + 1, row0 + batch.num_rows + 1), \
                            as_pandas(_numbers_as_text(flat_table(pa.Table.from_batches(
                                [_valid(batch)])), text))
                        row0 += batch.num_rows
            elif file_fmt == "csv":
                dtypes = {**csv_dtypes(path, columns, csv),  # (the file's one pass before)
                          **dict.fromkeys(text, str)}
                with opened(path) as source:
                    for item in _csv_chunks(source, path, dtypes, columns, csv, stream):
                        if not isinstance(item, dict):
                            row0 = item[1][-1] if len(item[1]) else row0
                        yield item
            elif file_fmt == "jsonl":
                yield from _jsonl_rows(path, columns, csv, stream)
            else:
                table = _read_table(path, file_fmt, csv)
                yield path, np.arange(1, len(table) + 1), \
                    table if columns is None else table[columns]
        except pd.errors.EmptyDataError:
            continue
        except UnicodeDecodeError as e:
            raise _undecodable(path, e, csv) from None
        except pd.errors.ParserError as e:
            raise _unparsable(path, e) from None
        except (OSError, ValueError, pa.ArrowException) as e:  # truncated, corrupt, unreadable
            raise InputError(f"{path}: cannot read as {file_fmt} after {row0} rows: {e}") \
                from None


@contextlib.contextmanager
def parquet_errors(path: str):
    """A corrupt or truncated Parquet file's error as an InputError naming the file.

    >>> with parquet_errors("p.parquet"):
    ...     raise OSError("Couldn't deserialize thrift: Invalid data\\n")
    Traceback (most recent call last):
    ...
    transforms.errors.InputError: p.parquet: not a readable parquet file (Couldn't \
deserialize thrift: Invalid data); is it complete?
    """
    try:
        yield
    except (OSError, ValueError, pa.ArrowException) as e:
        raise InputError(f"{path}: not a readable parquet file ({one_line(e)}); "
                         f"is it complete?") from None


def parquet_batches(file, path: str, **options) -> Iterator[pa.RecordBatch]:
    """A `pyarrow.parquet.ParquetFile`'s batches (`iter_batches` options), each checked
    (`_valid`); damage is an InputError naming the file.

    >>> import os, tempfile
    >>> import pyarrow.parquet as pq
    >>> path = os.path.join(tempfile.mkdtemp(), "t.parquet")
    >>> pq.write_table(pa.table({"a": [1, 2, 3]}), path)
    >>> [b.num_rows for b in parquet_batches(pq.ParquetFile(path), path, batch_size=2)]
    [2, 1]
    """
    with parquet_errors(path):
        for batch in file.iter_batches(**options):
            yield _valid(batch)


def _valid(data):
    """A Parquet batch or table whose text is UTF-8: Arrow checks it only when asked, and
    pandas would fail wherever it first touched a bad value.

    >>> _valid(pa.table({"a": pa.array([b"\\xff"]).view(pa.string())}))
    Traceback (most recent call last):
    ...
    pyarrow.lib.ArrowInvalid: Column 0: In chunk 0: Invalid: Invalid UTF8 sequence at string index 0
    """
    data.validate(full=True)
    return data


def _numbers_as_text(batch: pa.RecordBatch | pa.Table, text: tuple):
    """The batch (or table) with its `text` columns of numbers as text, by Arrow: exact for any
    64-bit integer (pandas makes a column of integers with a null floats, and 2**53 + 1 is
    then 2**53) or decimal (a Spark id of DECIMAL(20, 0)), a whole float as an integer's text.

    >>> batch = pa.RecordBatch.from_pydict({"id": [2**53 + 1, None], "x": [1, None]})
    >>> _numbers_as_text(batch, ("id",)).to_pandas()["id"].fillna("(missing)").tolist()
    ['9007199254740993', '(missing)']
    """
    for name in text:
        i = batch.schema.get_field_index(name) if name is not None else -1  # (None: no column)
        if i >= 0 and (pa.types.is_integer(batch.schema.types[i])
                       or pa.types.is_floating(batch.schema.types[i])
                       or pa.types.is_decimal(batch.schema.types[i])):
            batch = batch.set_column(i, name, batch.column(i).cast(pa.string()))
    return batch


def _exact_integers(frame: pd.DataFrame, records: list[dict]) -> pd.DataFrame:
    """A JSON Lines chunk's columns that pandas made floats though they hold integers a float
    cannot hold (beyond 2**53: ids, most often), as their values (Python ints and None).

    >>> records = [{"id": 2**53 + 1, "x": 1}, {"x": 2}]
    >>> frame = _exact_integers(pd.DataFrame.from_records(records), records)
    >>> frame["id"].tolist(), frame["x"].tolist()
    ([9007199254740993, None], [1, 2])
    """
    for name in frame.columns[(frame.dtypes == np.float64).to_numpy()]:
        if frame[name].abs().max() >= 2.0 ** 53:
            values = [r.get(name) for r in records]
            if any(isinstance(v, int) and abs(v) > 2 ** 53 for v in values):
                frame[name] = pd.Series(values, index=frame.index, dtype=object)
    return frame


def _jsonl_rows(path: str, columns, csv: dict | None, stream: str | None) -> Iterator:
    """`_jsonl_chunks`, from the chunks the file's one pass kept (`TextFacts.chunks`) when it
    could keep them: the file is parsed once per process."""
    spool = text_facts(path, "jsonl", csv).chunks
    if spool is None:
        yield from _jsonl_chunks(path, columns, csv, stream)
        return
    for item in spool:
        if isinstance(item, dict):  # a line that is no JSON object
            yield {**item, "stream": stream}
        else:
            yield item if columns is None else (*item[:2], item[2].reindex(columns=columns))


def _jsonl_chunks(path: str, columns, csv: dict | None, stream: str | None) -> Iterator:
    """A JSON Lines file's chunks with their line numbers, and a dead letter for each line
    that is not a JSON object (blank lines are skipped)."""
    encoding = (csv or {}).get("encoding", "utf-8")
    records, numbers = [], []

    def chunk():
        frame = _exact_integers(pd.DataFrame.from_records(records), records)
        frame = frame.drop(columns=_null_objects(frame))
        if columns is not None:
            frame = frame.reindex(columns=columns)
        return path, np.array(numbers), frame

    with opened(path) as source:
        lines = _local_binary(source) if isinstance(source, str) else source
        with lines:
            for number, raw in enumerate(lines, 1):
                text = raw.decode(encoding).strip()
                if number == 1:  # (a UTF-8 byte-order mark; skipped here, not line by line:
                    text = text.lstrip("\ufeff")  # 'utf-8-sig' decodes 6× slower)
                if not text:
                    continue
                record, reason = json_object(text)
                if reason:
                    yield dead_letter(stream, reason, file=path, row=number, record=text)
                    continue
                records.append(flat_record(record))
                numbers.append(number)
                if len(records) >= CHUNK_ROWS:
                    yield chunk()
                    records, numbers = [], []
    if records:
        yield chunk()


WHOLE_TABLE_JSON = "one JSON document holding a whole table (as pandas' to_json writes it " \
    "without lines=True), not JSON Lines, one object per row; write it with " \
    "df.to_json(path, orient=\"records\", lines=True)"


def is_whole_json_document(path: str, columns: list[str]) -> bool:
    """Whether a .jsonl/.json file whose `columns` (as read) name no row's fields holds one
    JSON document of a whole table: an array (pandas' `records` or `values` orient), or one
    object spread over lines, or on one line with only nested columns (`columns`, `index`,
    `split`, `table` orients: 'time.0', 'time.1', ...); a file of rows is not read.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "t.json")
    >>> pd.DataFrame({"x": [1.5, 2.5], "label": ["a", "b"]}).to_json(path, orient="records")
    >>> is_whole_json_document(path, [])
    True
    >>> pd.DataFrame({"x": [1.5, 2.5], "label": ["a", "b"]}).to_json(path)
    >>> is_whole_json_document(path, ["x.0", "x.1", "label.0", "label.1"])
    True
    >>> pd.DataFrame({"x": [1.5, 2.5], "label": ["a", "b"]}).to_json(path, orient="records",
    ...                                                               lines=True)
    >>> is_whole_json_document(path, ["x", "label"])
    False
    """
    # ('split' and 'table' orients: columns, index and data, or schema.* and data)
    nested = all("." in c or c in ("columns", "index", "data") for c in columns)
    if not nested:
        return False  # (a file of rows: nothing read)
    with _binary(path) as f:
        start = f.read(1 << 16).lstrip()
    if start[:1] == b"[" or start.split(b"\n", 1)[0].strip() == b"{":
        return True
    return start[:1] == b"{" and bool(columns) and len(start.splitlines()) == 1


def first_bad_line(path: str, csv: dict | None = None) -> str | None:
    """Where and why the first line of a JSON Lines file that is no JSON object is not (what a
    file without any column has to say), or None.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "t.jsonl")
    >>> with open(path, "w") as f:
    ...     _ = f.write('{"a": 1|"b": 2}\\n')
    >>> first_bad_line(path)
    "line 1: not JSON: Expecting ',' delimiter: line 1 column 8 (char 7)"
    """
    bad = next((c for c in _jsonl_chunks(path, None, csv, None) if isinstance(c, dict)), None)
    return None if bad is None else f"line {bad['row']}: {bad['reason']}"


def flat_record(record: dict, prefix: str = "") -> dict:
    """A JSON object with its nested objects' members as columns of their own, named by their
    path (`features.amount`), as a Parquet file's struct columns are (`flat_table`).

    >>> flat_record({"id": 1, "features": {"amount": 9.5, "geo": {"country": "DE"}}})
    {'id': 1, 'features.amount': 9.5, 'features.geo.country': 'DE'}
    """
    if not prefix and not any(type(v) is dict for v in record.values()):
        return record  # (most lines: nothing nested)
    out = {}
    for key, value in record.items():
        if type(value) is dict:
            out.update(flat_record(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def _null_objects(frame: pd.DataFrame) -> list[str]:
    """The columns that are null on every line and are the path of nested objects' columns:
    `"features": null` on a line whose neighbours hold `"features": {...}` leaves that line's
    `features.*` columns missing, and makes no `features` column of its own.

    >>> frame = pd.DataFrame({"f.g.a": [1.0, None], "f": [None, None], "x": [None, None]})
    >>> _null_objects(frame)
    ['f']
    """
    paths = {".".join(parts[:i]) for parts in (str(c).split(".") for c in frame.columns)
             for i in range(1, len(parts))}
    return [c for c in frame.columns if c in paths and frame[c].isna().all()]


# The column pandas writes an unnamed index to (`DataFrame.to_parquet`, `Table.from_pandas`).
PANDAS_INDEX = re.compile(r"__index_level_\d+__")


def as_pandas(table) -> pd.DataFrame:
    """An Arrow table (or record batch) as pandas, as its schema names its columns, whoever
    wrote it. A file written from pandas carries metadata that pandas would read back: an
    index (`set_index("key")`) would leave the columns, and nullable types (`Int64`,
    `boolean`, `string`, as `convert_dtypes()` makes them) would come back with pd.NA for a
    gap, which is no missing value to the readers (neither None nor NaN: a class, a value, an
    error). Read without it, a named index is a column as any other (`{"id": "key"}` names
    it), and a gap is NaN in numbers and None elsewhere, as in a file Spark or DuckDB wrote.

    >>> frame = pd.DataFrame({"n": pd.array([1, None], dtype="Int64"),
    ...                       "b": pd.array([True, None], dtype="boolean")},
    ...                      index=pd.Index(["k1", "k2"], name="key"))
    >>> as_pandas(pa.Table.from_pandas(frame)).to_dict("list")
    {'n': [1.0, nan], 'b': [True, None], 'key': ['k1', 'k2']}

    A column of pandas periods (days or months since 1970 to a reader that does not know
    pandas' `pandas.period` type, which marks them) is read as the periods' start times,
    dates as any other, not as those counts. A decimal column (SQL's DECIMAL(18, 2), as Spark
    and DuckDB write amounts) is numbers, floats as a CSV file's, not Python Decimals, which
    no river model adds to a float.

    >>> months = pd.DataFrame({"m": pd.period_range("2026-11", periods=2, freq="M")})
    >>> as_pandas(pa.Table.from_pandas(months))["m"].astype(str).tolist()
    ['2026-11-01', '2026-12-01']
    >>> marked = pa.field("m", pa.int64(), metadata={  # (as read where pandas is not loaded)
    ...     b"ARROW:extension:name": b"pandas.period",
    ...     b"ARROW:extension:metadata": b'{"freq": "M"}'})
    >>> [str(m) for m in as_pandas(pa.Table.from_arrays([pa.array([682, None])],
    ...                                                  schema=pa.schema([marked])))["m"]]
    ['2026-11-01 00:00:00', 'NaT']
    >>> import decimal
    >>> as_pandas(pa.table({"eur": pa.array([decimal.Decimal("9.95"), None],
    ...                                      pa.decimal128(18, 2))}))["eur"].tolist()
    [9.95, nan]
    """
    for i, kind in enumerate(table.schema.types):
        if pa.types.is_decimal(kind):  # (by its text: Arrow's own cast is not correctly rounded)
            table = table.set_column(i, table.schema.names[i],
                                     table.column(i).cast(pa.string()).cast(pa.float64()))
    frame = table.to_pandas(ignore_metadata=True)
    for field in table.schema:
        metadata = field.metadata or {}
        if metadata.get(b"ARROW:extension:name") == b"pandas.period" and \
                pa.types.is_integer(field.type):  # (pandas has not registered its type)
            freq = json.loads(metadata.get(b"ARROW:extension:metadata", b"{}")).get("freq")
            ordinals = frame[field.name].to_numpy(dtype=np.float64, na_value=np.nan)
            ordinals = np.where(np.isnan(ordinals), np.iinfo(np.int64).min, ordinals)  # (NaT)
            frame[field.name] = pd.arrays.PeriodArray(ordinals.astype(np.int64),
                                                      dtype=pd.PeriodDtype(freq))
        if isinstance(frame[field.name].dtype, pd.PeriodDtype):
            frame[field.name] = frame[field.name].dt.to_timestamp()
    return frame


def flat_table(table, keep: tuple = ()):
    """A table (or record batch) with its struct columns' fields as columns of their own, named
    by their path (`features.amount`), as a JSON Lines file's nested objects are
    (`flat_record`); the struct columns named in `keep` stay as they are. An unnamed pandas
    index (`__index_level_0__`, where a filtered DataFrame's row labels are written) is left
    out: a row's place in some earlier frame, no feature.

    >>> flat_table(pa.table({"id": [1], "f": [{"a": 9.5, "g": {"c": "DE"}}]})).column_names
    ['id', 'f.a', 'f.g.c']
    >>> flat_table(pa.table({"f": [{"a": 1}], "p": [{"x": 0.5}]}), keep=("p",)).column_names
    ['f.a', 'p']
    >>> flat_table(pa.Table.from_pandas(pd.DataFrame({"x": [1.0, 2.0]}, index=[3, 7]))
    ...            ).column_names
    ['x']
    """
    names, columns, changed = [], [], False
    for field, column in zip(table.schema, table.columns):
        if PANDAS_INDEX.fullmatch(field.name):
            changed = True  # (a new table, without it)
        elif pa.types.is_struct(field.type) and field.name not in keep:
            changed = True
            names += [f"{field.name}.{child.name}" for child in field.type]
            columns += column.flatten()  # (a null object: null fields)
        else:
            names.append(field.name)
            columns.append(column)
    if not changed:
        return table
    flat = type(table).from_arrays(columns, names=names)
    return flat_table(flat.replace_schema_metadata(table.schema.metadata), keep)


def flat_names(schema: pa.Schema, keep: tuple = ()) -> list[str]:
    """The column names of a schema's table as `flat_table` makes them.

    >>> flat_names(pa.schema([("id", pa.int64()), ("f", pa.struct([("a", pa.float64())]))]))
    ['id', 'f.a']
    """
    return flat_table(schema.empty_table(), keep).column_names


def json_value(text: str):
    """JSON text's value. orjson reads a line 5 times as fast as Python's json, and is
    stricter: what it refuses, json reads as it always did (NaN, integers beyond 64 bits).
    Raises ValueError for text that is no JSON.

    >>> json_value('{"a": 1}'), json_value("[NaN, 0.5]")
    ({'a': 1}, [nan, 0.5])
    """
    import orjson

    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


def json_object(text: str) -> tuple[dict | None, str | None]:
    """A JSON Lines line's object, or why it is none.

    >>> json_object('{"a": 1}'), json_object('{"a": NaN}')[0], json_object("[1]")[1]
    (({'a': 1}, None), {'a': nan}, 'not a JSON object')
    """
    try:
        record = json_value(text)
    except ValueError as e:
        return None, f"not JSON: {e}"
    return (record, None) if isinstance(record, dict) else (None, "not a JSON object")


def _csv_chunks(source, path: str, dtypes: dict, columns, csv: dict | None,
                stream: str | None) -> Iterator:
    """A CSV file's chunks with their data row numbers, and a dead letter for each line with
    more fields than the header (pandas skips it with a warning, which names its line) or
    fewer (pandas would fill the missing fields: `_other_widths` finds them)."""
    reader = pd.read_csv(source, chunksize=CHUNK_ROWS, dtype=dtypes, usecols=columns,
                         on_bad_lines="warn", **(csv or {}))
    row = 0  # data rows of the file so far, kept or skipped
    while True:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", pd.errors.ParserWarning)
            chunk = next(reader, None)
        skipped = []
        for w in caught:
            for line, why in re.findall(r"Skipping line (\d+): (.+)", str(w.message)):
                skipped.append(int(line) - 1)  # the header is line 1
                more = _other_widths(path, csv)[1].get(int(line) - 1)
                yield dead_letter(stream, f"{why.strip()} (more fields than the header)",
                                  file=path, row=int(line) - 1,
                                  record=None if more is None else more[1])
        if chunk is None:
            return
        numbers = np.setdiff1d(np.arange(row + 1, row + len(chunk) + len(skipped) + 1),
                               skipped)[:len(chunk)]
        row += len(chunk) + len(skipped)
        if columns is None and len(chunk.columns) and chunk.iloc[:, -1].isna().any():
            fewer = _other_widths(path, csv)[0]
            bad = np.isin(numbers, list(fewer))
            for number in numbers[bad].tolist():
                reason, line = fewer[number]
                yield dead_letter(stream, reason, file=path, row=number, record=line)
            numbers, chunk = numbers[~bad], chunk[~bad]
        again = _header_again(chunk)
        if again.any():
            for number in numbers[again].tolist():
                yield dead_letter(stream, "the header line again (files joined with their "
                                  "headers?)", file=path, row=number,
                                  record=dict(zip(chunk.columns, map(str, chunk.columns))))
            numbers, chunk = numbers[~again], chunk[~again]
        yield path, numbers, chunk


def _header_again(chunk: pd.DataFrame) -> np.ndarray:
    """Which rows of a CSV chunk repeat its header, each cell its column's name (two exports
    joined, each with its header line).

    >>> _header_again(pd.DataFrame({"t": ["1", "t", "2"], "x": ["a", "x", "b"]})).tolist()
    [False, True, False]
    """
    if not len(chunk.columns) or pd.api.types.is_numeric_dtype(chunk.iloc[:, 0]):
        return np.zeros(len(chunk), dtype=bool)  # (a header would make its column text)
    again = (chunk.iloc[:, 0] == str(chunk.columns[0])).to_numpy(dtype=bool, na_value=False,
                                                                 copy=True)
    for i in np.flatnonzero(again):
        again[i] = all(str(v) == str(c) for v, c in zip(chunk.iloc[i], chunk.columns))
    return again


def unnamed_fields(path: str, csv: dict | None, rows: int = 1000) -> tuple | None:
    """(data row, its fields, the header's) of the first of the first `rows` lines of a CSV
    file that holds a value beyond the header's names, when its first line has more fields
    than the header (pandas reads the extra fields of such a file as nothing, `csv_options`);
    None when those fields are empty (every line ends with the separator) or there are none.
    A later line with more fields than its first is a dead letter of the read.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "t.csv")
    >>> _ = open(path, "w").write("time,x\\n1,2,\\n2,3,\\n")
    >>> unnamed_fields(path, None) is None
    True
    >>> _ = open(path, "w").write("time,x\\n1,2,\\n2,3,7\\n")
    >>> unnamed_fields(path, None)
    (2, ['2', '3', '7'], ['time', 'x'])
    """
    import csv as csvlib

    options = csv or {}
    try:
        with _binary(path) as source, io.TextIOWrapper(
                source, encoding=without_bom(options.get("encoding", "utf-8")),
                newline="") as f:
            records = csvlib.reader(f, delimiter=options.get("sep", ","))
            header = next(records, [])
            lines = (fields for fields in itertools.islice(records, rows) if fields)
            first = next(lines, None)
            if first is None or len(first) <= len(header):
                return None
            for row, fields in enumerate(itertools.chain([first], lines), start=1):
                if any(value.strip() for value in fields[len(header):]):
                    return row, fields, header
    except (UnicodeDecodeError, csvlib.Error):  # (the read names such a line)
        pass
    return None


def _other_widths(path: str, csv: dict | None) -> tuple[dict, dict]:
    """The lines of a local CSV file with fewer fields than its header names, and those with
    more (that are not empty), each {data row number: (reason, its fields joined by the
    separator)}: one pass with Python's csv module; blank lines are skipped, as pandas skips
    them; a header that ends with the separator names one column fewer than it has. The last
    line, without a newline, is a file cut mid-line. Found once per file version: an event log
    (whose label column is empty on instance rows) is read twice."""
    if "://" in path:
        return {}, {}
    options = csv or {}
    return _other_widths_of(path, file_version(path), options.get("sep", ","),
                            options.get("encoding", "utf-8"))


@functools.lru_cache(maxsize=8)
def _other_widths_of(path: str, version: tuple, sep: str, encoding: str) -> tuple[dict, dict]:
    import csv as csvlib

    short, long, row = {}, {}, 0
    with io.TextIOWrapper(_local_binary(path), encoding=encoding, newline="") as f:
        records = csvlib.reader(f, delimiter=sep)
        header = next(records, [])
        while header and not header[-1].strip():  # (a header ending with the separator)
            header.pop()
        width = len(header)
        for fields in records:
            if not fields:
                continue
            row += 1
            if len(fields) < width:
                short[row] = field_count_reason(width, len(fields)), sep.join(fields)
            elif len(fields) > width and any(value.strip() for value in fields[width:]):
                long[row] = field_count_reason(width, len(fields)), sep.join(fields)
    if row in short and os.path.splitext(path)[1].lower() not in COMPRESSED:
        with open(path, "rb") as f:
            f.seek(-1, os.SEEK_END)
            if f.read(1) not in (b"\n", b"\r"):
                reason, line = short[row]
                short[row] = reason + " (the file ends mid-line)", line
    return short, long


def csv_dtypes(path: str, columns: list[str] | None = None, csv: dict | None = None) -> dict:
    """The columns of a CSV file whose type pandas would infer differently from chunk to chunk
    (it looks at one chunk at a time), with one type for the whole file: numbers if every chunk
    has numbers (ints and floats: float), else text (`TextFacts.dtypes`); of `columns` only, if
    given.

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "t.csv")
    >>> with open(path, "w") as f:
    ...     _ = f.write("a,b,c\\n" + "1,x,2\\n" * CHUNK_ROWS + "1.5,y,z\\n")
    >>> csv_dtypes(path), csv_dtypes(path, ["b", "c"])
    ({'a': 'float64', 'c': <class 'object'>}, {'c': <class 'object'>})
    """
    dtypes = text_facts(path, "csv", csv).dtypes
    return dtypes if columns is None else {c: d for c, d in dtypes.items() if c in columns}


def fmt_of(path: str, default: str) -> str:
    """A file's format by its extension, or `default`.

    >>> fmt_of("logs/day.parquet", "csv"), fmt_of("logs/day.txt", "csv")
    ('parquet', 'csv')
    """
    return FORMATS.get(extension(path), default)
