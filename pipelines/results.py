"""Reading a run's results back (`load_results`, the manifest), and checking that the files
of a folder are one run's (their fingerprints in the manifest)."""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import uuid
import zlib

import pandas as pd
import pyarrow as pa

from transforms.errors import InputError, OutputError, one_line
from transforms.specs import plain_value
from transforms.streams.table_files import EXACT_FLOATS, numbers_of, size_of
from transforms.vocabulary import SUMMARY_COLUMNS, SUMMARY_TEXT_COLUMNS

# A measure as trend and rank name it: `[initial|final] METRIC [(CLASS)]` ('recall (fraud)').
MEASURE_NAME = re.compile(r"^\s*(?:(initial|final)\s+)?(\w+)\s*(?:\((.+)\))?\s*$")


def load_results(path: str, kind: str = "summary") -> pd.DataFrame:
    """Read a finished run: `summary` (default), `curves` or `predictions` as a DataFrame.

    Parameters
    ----------
    path
        A finished run's output directory.
    kind
        `summary`, `curves`, `predictions` or `manifest`.

    >>> import tempfile
    >>> d = tempfile.mkdtemp()
    >>> with open(os.path.join(d, "summary.csv"), "w") as f:
    ...     _ = f.write("stream,model,class,category,window,metric,value,n\\n"
    ...                 "inf,1.0,NA,initial,cumulative,recall,0.5,2\\n")
    >>> load_results(d)[["stream", "model", "class", "value", "bin"]].to_dict("records")
    [{'stream': 'inf', 'model': '1.0', 'class': 'NA', 'value': 0.5, 'bin': nan}]
    """
    if kind == "summary":  # (an empty cell is missing: to_csv writes NaN and None so)
        file = os.path.join(path, "summary.csv")
        with written_by_us(file):
            summary = pd.read_csv(file, keep_default_na=False, na_values=[""],
                                  dtype=dict.fromkeys(SUMMARY_TEXT_COLUMNS, str),
                                  **EXACT_FLOATS)
        if "run_id" in summary and not set(summary["run_id"].dropna()) <= {
                (manifest_of(path) or {}).get("run_id")}:
            check_one_run(path, ["summary.csv"])  # another run's rows: that is what is wrong
        with written_by_us(file):
            _check_summary(summary, _summary_rows(path))
        check_one_run(path, ["summary.csv"])
        return summary
    if kind in ("curves", "predictions"):
        file = os.path.join(path, f"{kind}.parquet")
        with written_by_us(file):
            frame = pd.read_parquet(file)
        check_one_run(path, [f"{kind}.parquet"])
        return frame
    if kind == "manifest":
        return pd.json_normalize(read_manifest(path))
    raise ValueError(f"kind must be summary, curves, predictions or manifest, not {kind!r}")


def text_gaps_as_nan(summary: pd.DataFrame) -> pd.DataFrame:
    """`summary` with every empty cell of its text columns NaN, as `load_results` reads them
    (pandas 2 keeps the None a row gave, which its frame comparisons tell apart from NaN).

    >>> frame = pd.DataFrame({"class": ["a", None], "value": [1.0, 2.0]})
    >>> text_gaps_as_nan(frame)["class"].tolist()
    ['a', nan]
    """
    for column in summary.columns.intersection(SUMMARY_TEXT_COLUMNS):
        if summary[column].dtype == object:
            summary[column] = summary[column].where(summary[column].notna(), math.nan)
    return summary


def _summary_rows(path: str) -> int | None:
    """How many rows the run wrote to summary.csv, as its manifest says (None without one)."""
    rows = (manifest_of(path) or {}).get("summary_rows")  # (a damaged one: read_manifest says so)
    return rows if isinstance(rows, int) else None


def _check_summary(summary: pd.DataFrame, rows: int | None) -> None:
    """summary.csv as the run wrote it: its columns, a name in every row's naming cells, a
    number in every number cell, and as many rows as the manifest says (a copy cut short reads
    as fewer rows, or a last row with empty cells), each measure once. A column that names
    a part of the measures (`segment`, `bin`, `alpha`, `class`, `predicted`; `run_id`,
    `protocol`, `t`) and is not there is added, empty in each row.

    >>> summary = pd.DataFrame({"stream": ["s"], "model": ["m"], "category": ["initial"],
    ...                         "window": ["cumulative"], "metric": ["accuracy"],
    ...                         "value": ["0.5x"], "n": [10]})
    >>> _check_summary(summary, rows=1)
    Traceback (most recent call last):
    ...
    ValueError: line 2, column value: '0.5x' is not a number
    >>> _check_summary(summary.assign(value=0.5), rows=7)
    Traceback (most recent call last):
    ...
    ValueError: 1 rows where the manifest says 7 (cut short?)
    """
    names = ("stream", "model", "category", "metric")
    missing = [c for c in (*names, "window", "value", "n") if c not in summary]
    if missing:
        raise KeyError(f"no column {missing[0]!r}")
    for column in SUMMARY_COLUMNS:  # (the others: empty in each row, as where a run has none)
        if column not in summary:
            summary[column] = math.nan
    # Each measure once (a drift's alarms are a row each): a column that tells rows apart is
    # not missing, no rows were copied.
    key = ["stream", "segment", "model", "protocol", "category", "bin", "alpha", "window",
           "metric", "class", "predicted"]
    repeated = (summary.duplicated(key) & (summary["metric"] != "alarm")).to_numpy()
    if repeated.any():
        raise ValueError(f"line {int(repeated.argmax()) + 2} repeats the measure of an earlier "
                         f"line")
    for column in summary.columns.difference(SUMMARY_TEXT_COLUMNS, sort=False):
        numbers = numbers_of(summary[column])
        wrong = numbers.isna() & summary[column].notna()
        if wrong.any():
            row = int(wrong.to_numpy().argmax())
            raise ValueError(f"line {row + 2}, column {column}: {summary[column].iloc[row]!r} "
                             f"is not a number")
        summary[column] = numbers
    unnamed = summary[list(names)].isna().any(axis=1).to_numpy()
    if unnamed.any():
        row = int(unnamed.argmax())
        column = next(c for c in names if pd.isna(summary[c].iloc[row]))
        raise ValueError(f"line {row + 2}, column {column}: empty")
    if rows is not None and len(summary) != rows:
        raise ValueError(f"{len(summary)} rows where the manifest says {rows} (cut short?)")


def read_manifest(path: str, keys: tuple = ()) -> dict:
    """A finished run's manifest.json (the folder `path`'s), a JSON object with these `keys`.

    >>> import tempfile
    >>> d = tempfile.mkdtemp()
    >>> with open(os.path.join(d, "manifest.json"), "w") as f:
    ...     _ = f.write('{"streams": {}, "models": {}')  # (cut short)
    >>> read_manifest(d)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    transforms.errors.InputError: .../manifest.json: damaged, or not written by delayed-eval \
(JSONDecodeError: Expecting ',' delimiter: ...); write it again: rerun what wrote it
    """
    file = os.path.join(path, "manifest.json")
    with written_by_us(file), open(file, encoding="utf-8") as f:
        manifest = json.load(f)
        if not isinstance(manifest, dict) or not set(keys) <= set(manifest):
            raise KeyError(f"not an object with {', '.join(keys) or 'members'}")
        _check_entries(manifest)
    return manifest


def _check_entries(manifest: dict) -> None:
    """A KeyError naming the first entry of the manifest's streams, models or counts that lacks
    what the readers of a run take from it (a hand-edited or cut manifest).

    >>> _check_entries({"models": {"nb": {"task": "classification"}},
    ...                 "counts": [{"stream": "s", "labelled": 3}]})
    Traceback (most recent call last):
    ...
    KeyError: "counts[0] has no 'model'"
    """
    streams, models, counts = (manifest.get(part, empty) for part, empty in (
        ("streams", {}), ("models", {}), ("counts", [])))
    if not (isinstance(streams, dict) and isinstance(models, dict) and isinstance(counts, list)):
        raise KeyError("streams, models or counts of another kind than a run writes")
    entries = [(f"streams.{k}", e, ()) for k, e in streams.items()] + \
        [(f"models.{k}", e, ("task",)) for k, e in models.items()] + \
        [(f"counts[{i}]", e, ("stream", "model")) for i, e in enumerate(counts)]
    for where, entry, fields in entries:
        if not isinstance(entry, dict):
            raise KeyError(f"{where} is not an object")
        missing = [f for f in fields if f not in entry]
        if missing:
            raise KeyError(f"{where} has no {missing[0]!r}")


def json_text(value, indent: int | None = 1) -> str:
    """`value` as strict JSON, which jq, JavaScript and every JSON library read: a NaN or
    infinite number is `null` (a 0/0 statistic, a test with nothing to test), NumPy numbers are
    numbers, other objects their text.

    Example
    -------

    >>> import numpy as np
    >>> json_text({"p": float("nan"), "n": np.int64(3), "x": [np.float32(0.5), -math.inf]},
    ...           indent=None)
    '{"p": null, "n": 3, "x": [0.5, null]}'

    """
    return json.dumps(_finite(plain_value(value)), indent=indent, default=str, allow_nan=False)


def _finite(value):
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return None if isinstance(value, float) and not math.isfinite(value) else value


def numbers_from_json(text: str | bytes):
    """A profile's JSON read back: its nulls, `json_text`'s NaN, are NaN again.

    Example
    -------

    >>> numbers_from_json('{"s": {"labels": 9, "repeats_by_chance": null}}')
    {'s': {'labels': 9, 'repeats_by_chance': nan}}

    """
    return json.loads(text, object_hook=lambda d: {k: math.nan if v is None else v
                                                   for k, v in d.items()})


def read_json(file: str):
    """A finished run's profile.json (`numbers_from_json`), damage named as `written_by_us`.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "profile.json")
    >>> with open(path, "w") as f:
    ...     _ = f.write('{"s": {"p_majority": null, "labels": 3}}')
    >>> read_json(path)
    {'s': {'p_majority': nan, 'labels': 3}}
    >>> with open(path, "w") as f:
    ...     _ = f.write('{"s": ')  # (cut short)
    >>> read_json(path)
    Traceback (most recent call last):
    ...
    transforms.errors.InputError: ...profile.json: damaged, or not written by delayed-eval
    (JSONDecodeError: ...
    """
    with written_by_us(file), open(file, encoding="utf-8") as f:
        return numbers_from_json(f.read())


@contextlib.contextmanager
def written_by_us(file: str):
    """A result file that cannot be read back, damaged or written by something else, as one
    InputError naming it (a missing one stays a FileNotFoundError: its callers name that).

    >>> with written_by_us("out/summary.csv"):
    ...     int("n/a")
    Traceback (most recent call last):
    ...
    transforms.errors.InputError: out/summary.csv: damaged, or not written by delayed-eval
    (ValueError: invalid literal for int() with base 10: 'n/a'); write it again: rerun what
    wrote it
    """
    try:
        yield
    except FileNotFoundError:
        raise
    except (ValueError, KeyError, TypeError, OSError, pa.ArrowException) as e:
        raise InputError(f"{file}: damaged, or not written by delayed-eval ({type(e).__name__}: "
                         f"{one_line(e)}); write it again: rerun what wrote it"
                         ) from None


def not_a_folder(path: str) -> str:
    """What `path`, which is no folder, is instead, for a message: a file, or nothing.

    >>> not_a_folder(__file__), not_a_folder(__file__ + ".missing")
    ('a file, not a folder', 'no such folder')
    """
    return "a file, not a folder" if os.path.exists(path) else "no such folder"


def made_folder(out: str) -> str:
    """`out` as a folder to write into (made with its parents), or an OutputError saying why it
    cannot be one.

    >>> import os, tempfile
    >>> made_folder(os.path.join(tempfile.mkdtemp(), "trend")).endswith("trend")
    True
    >>> made_folder(__file__)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    transforms.errors.OutputError: --out ...results.py: a file, not a folder; choose a folder
    """
    if os.path.exists(out) and not os.path.isdir(out):
        raise OutputError(f"--out {out}: {not_a_folder(out)}; choose a folder")
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as e:
        raise OutputError(f"--out {out}: cannot make it ({e.strerror}); choose a folder you "
                          f"can write") from None
    return out


def default_metric(reported: set[str]) -> str:
    """The measure `rank` and `trend` read when none is named: accuracy, or MAE when the runs
    report no accuracy (regression runs only).

    >>> default_metric({"accuracy", "kappa"}), default_metric({"mae", "rmse"})
    ('accuracy', 'mae')
    """
    return "accuracy" if "accuracy" in reported or "mae" not in reported else "mae"


def whole_streams(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of whole streams: without the rows of --segment slices.

    >>> frame = pd.DataFrame({"stream": "s", "segment": [None, "country=DE"], "value": [1, 2]})
    >>> whole_streams(frame)["value"].tolist()
    [1]
    """
    return frame[frame["segment"].isna()] if "segment" in frame else frame


def previous_outputs(out: str) -> list[str]:
    """The files (relative to `out`) that the run in `out` wrote, as its manifest lists them;
    none if there is no such manifest (then nothing there is ours to replace).

    >>> import json, os, tempfile
    >>> out = tempfile.mkdtemp()
    >>> previous_outputs(out)
    []
    >>> with open(os.path.join(out, "manifest.json"), "w") as f:
    ...     json.dump({"outputs": ["summary.csv", "../x", "/etc/hosts", "gs://b/x"]}, f)
    >>> previous_outputs(out)
    ['summary.csv']
    """
    outputs = (manifest_of(out) or {}).get("outputs")
    return [n for n in outputs if _in_folder(n)] if isinstance(outputs, list) else []


def manifest_of(out: str) -> dict | None:
    """The manifest in `out` (any Beam filesystem) as a dict, or None: there is none, or it is
    no JSON object (its readers say so).

    >>> import tempfile
    >>> manifest_of(tempfile.mkdtemp()) is None
    True
    """
    from apache_beam.io.filesystems import FileSystems

    try:
        with FileSystems.open(FileSystems.join(out, "manifest.json")) as f:
            manifest = json.loads(f.read())
    except Exception:  # no manifest, or not ours
        return None
    return manifest if isinstance(manifest, dict) else None


def _in_folder(name) -> bool:
    """Whether a manifest's output `name` is a file in its folder (not a path out of it)."""
    return isinstance(name, str) and bool(name) and ".." not in name.split("/") and \
        not os.path.isabs(name) and ":" not in name and "\\" not in name


# The manifest's record of each file the run wrote (`fingerprint`), by which a reader tells one
# run's files from a mix of two runs' (written into one folder at once, or a publish cut short).
FINGERPRINTS = "output_fingerprints"
FINGERPRINT_SPAN = 1 << 20  # the bytes read from each end of a larger file


def fingerprint(path: str, span: int = FINGERPRINT_SPAN) -> str:
    """A file's size and the CRC-32 of its bytes (of its first and last `span` bytes, a MiB,
    for a larger one): the same for a copy on any filesystem, another for another run's file.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "summary.csv")
    >>> with open(path, "w") as f:
    ...     _ = f.write("run_id,value\\nr1,0.5\\n")
    >>> fingerprint(path)
    '20:a187bbce'
    >>> import zlib
    >>> data = bytes(range(256)) * (3 * 4096)  # 3 MiB: its first and last MiB are read
    >>> with open(path, "wb") as f:
    ...     _ = f.write(data)
    >>> mib = FINGERPRINT_SPAN
    >>> fingerprint(path) == f"{len(data)}:{zlib.crc32(data[:mib] + data[-mib:]):08x}"
    True
    """
    from apache_beam.io.filesystem import CompressionTypes
    from apache_beam.io.filesystems import FileSystems

    size = size_of(path)
    with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as f:
        data = f.read(min(size, 2 * span))
        if size > 2 * span:
            data = data[:span]
            f.seek(size - span)
            data += f.read(span)
    return f"{size}:{zlib.crc32(data):08x}"


def input_fingerprint(paths: list[str]) -> dict:
    """What a stream read: its files' number, their bytes, and the CRC-32 of their paths below
    the folder they share and their fingerprints (of 64 KiB from each end of each file), by
    which `rank` tells the same input in two runs, wherever it was copied, from another (a file
    written again between them).

    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> paths = [os.path.join(folder, name) for name in ("a.csv", "b.csv")]
    >>> for path in paths:
    ...     with open(path, "w") as f:
    ...         _ = f.write("time,label\\n1,x\\n")
    >>> print(input_fingerprint(paths))
    {'files': 2, 'bytes': 30, 'crc': 'b6ef5dac'}
    >>> with open(paths[1], "w") as f:
    ...     _ = f.write("time,label\\n1,y\\n")
    >>> input_fingerprint(paths)["crc"] != 'b6ef5dac'
    True
    """
    marks = [fingerprint(p, span=1 << 16) for p in paths]
    shared = len(os.path.dirname(os.path.commonprefix(paths)))
    text = "\n".join(f"{p[shared:]} {m}" for p, m in zip(paths, marks))
    return {"files": len(paths), "bytes": sum(int(m.split(":")[0]) for m in marks),
            "crc": f"{zlib.crc32(text.encode()):08x}"}


def _made_by_report(name: str) -> bool:
    """Whether a run's output is the report's (`pipelines.report.write_report`)."""
    return name == "report.html" or name.startswith("figures/")


def check_one_run(out: str, names=None) -> None:
    """An InputError naming the files of `out` (of `names`; by default those the manifest
    records but the report's, which `report` makes again from the others) that are not as its
    manifest records them: files of two runs. A file that is not there is its reader's to name;
    a manifest that records none (a hand-made one) is taken as it is.

    >>> import json, os, tempfile
    >>> out = tempfile.mkdtemp()
    >>> with open(os.path.join(out, "summary.csv"), "w") as f:
    ...     _ = f.write("run_id,value\\nr1,0.5\\n")
    >>> with open(os.path.join(out, "manifest.json"), "w") as f:
    ...     json.dump({"output_fingerprints": {"summary.csv": "20:a187bbce"}}, f)
    >>> check_one_run(out)
    >>> with open(os.path.join(out, "summary.csv"), "w") as f:
    ...     _ = f.write("run_id,value\\nr2,0.7\\n")
    >>> check_one_run(out)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    transforms.errors.InputError: ...: summary.csv is not as its manifest.json records it: ...
    """
    recorded = (manifest_of(out) or {}).get(FINGERPRINTS)
    if not isinstance(recorded, dict):
        return
    changed = [n for n, mark in sorted(recorded.items())
               if (n in names if names is not None else not _made_by_report(n))
               and _in_folder(n)
               and os.path.isfile(os.path.join(out, n))
               and fingerprint(os.path.join(out, n)) != mark]
    if changed:
        one = len(changed) == 1
        raise InputError(
            f"{out}: {', '.join(changed)} {'is' if one else 'are'} not as its manifest.json "
            f"records {'it' if one else 'them'}: two runs wrote into the folder at once, or one "
            f"was stopped while moving its files in, or {'it was' if one else 'they were'} "
            f"changed since; run again what wrote the folder")


def unlisted_files(out: str, names) -> list[str]:
    """Those of `names` (paths relative to `out`) that are files in `out` which no run's
    manifest there lists: a user's own, which writing ours would replace.

    >>> import os, tempfile
    >>> out = tempfile.mkdtemp()
    >>> open(os.path.join(out, "summary.csv"), "w").close()
    >>> unlisted_files(out, ["summary.csv", "curves.parquet"])
    ['summary.csv']
    """
    from apache_beam.io.filesystems import FileSystems

    listed = set(previous_outputs(out))
    return [n for n in names if n not in listed and FileSystems.exists(FileSystems.join(out, n))]


def refuse_unlisted(out: str, names) -> None:
    """An OutputError naming the files of `names` in `out` that no run wrote (`unlisted_files`),
    if any: nothing of the user's is replaced.

    >>> import os, tempfile
    >>> out = tempfile.mkdtemp()
    >>> refuse_unlisted(out, ["summary.csv"])  # nothing there
    >>> open(os.path.join(out, "summary.csv"), "w").close()
    >>> refuse_unlisted(out, ["summary.csv", "curves.parquet"])
    Traceback (most recent call last):
    ...
    transforms.errors.OutputError: --out ...: summary.csv there, which no run's manifest.json
    lists, would be replaced; choose another --out, or move it away
    """
    theirs = unlisted_files(out, names)
    if theirs:
        them = "it" if len(theirs) == 1 else "them"
        raise OutputError(f"--out {out}: {', '.join(theirs)} there, which no run's manifest.json "
                          f"lists, would be replaced; choose another --out, or move {them} away")


def record_outputs(out: str, names, claim: bool = False) -> None:
    """Add `names`, files in `out`, to its manifest's outputs (one is made if there is none),
    each with its fingerprint — or, to `claim` them before they are written, with none that a
    file has: until they are recorded, a reader is told the folder is being written, and a
    rerun may replace them. The manifest is replaced in one rename.

    Example
    -------

    >>> import json, os, tempfile
    >>> out = tempfile.mkdtemp()
    >>> with open(os.path.join(out, "manifest.json"), "w") as f:
    ...     json.dump({"outputs": ["summary.csv"]}, f)
    >>> record_outputs(out, ["report.html"], claim=True)
    >>> manifest = json.load(open(os.path.join(out, "manifest.json")))
    >>> manifest["outputs"], manifest["output_fingerprints"]
    (['report.html', 'summary.csv'], {'report.html': ''})
    >>> with open(os.path.join(out, "report.html"), "w") as f:
    ...     _ = f.write("<html></html>")
    >>> record_outputs(out, ["report.html"])
    >>> json.load(open(os.path.join(out, "manifest.json")))["output_fingerprints"]
    {'report.html': '13:601b871f'}

    """
    from apache_beam.io.filesystems import FileSystems

    manifest = manifest_of(out) or {}
    outputs = manifest.get("outputs")
    manifest["outputs"] = sorted(set(outputs if isinstance(outputs, list) else []) | set(names))
    marks = manifest.get(FINGERPRINTS)
    marks = dict(marks) if isinstance(marks, dict) else {}
    marks.update({n: "" if claim else fingerprint(FileSystems.join(out, n))
                  for n in names if n != "manifest.json"})  # (which cannot record itself)
    manifest[FINGERPRINTS] = dict(sorted(marks.items()))
    path = FileSystems.join(out, "manifest.json")
    written = FileSystems.join(out, f".manifest-{uuid.uuid4().hex}.json")
    with FileSystems.create(written) as f:
        f.write(json_text(manifest).encode())
    FileSystems.rename([written], [path])
