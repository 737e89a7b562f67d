"""Streams by spec: river datasets and generators, logged tables (CSV, JSON Lines, Parquet) and
ARFF / MOA-style delayed ARFF. Plain Python: `StreamSpec.events()` yields event tuples (see
`transforms.records`) and dead-letter dicts; the Beam transforms in `transforms.read` chunk them.

A stream spec is `[NAME=]SOURCE[{JSON options}]`:

    synth:Agrawal{"n": 100000, "seed": 7, "classification_function": 2,
                  "drift": [{"at": 50000, "width": 1000, "classification_function": 4}]}
    dataset:Phishing                 a dataset bundled with river
    logs/trips.csv{"time": "pickup", "delay": "column:duration"}
    logs/instances.parquet{"labels": "logs/labels.parquet"}
    elec.arff{"target": "class"}     delayed.arff{"delayed": true}

File options (all optional): `format` (csv | jsonl | parquet | arff, else from the extension),
`id`, `time`, `kind`, `label`, `label_time` (column names; defaults id, time, kind, label,
label_time), `labels` (a second table of labels joined by id), `classes` (the class list, in
index order), `features` (columns to use), `missing` ("dead-letter" | "drop": what to do with a
NaN feature), `delay` (this stream's delay, overriding `--delay`), `order` ("time" | "input").

Shapes of a table: with a `kind` column it is an event log (instance | update | label rows); with
`labels` it is an instance table plus a label table; otherwise each row is an instance with its
label, whose time comes from `label_time` or from the delay model. Without a `time` column the
row index is the time in seconds; without an `id` column the row index is the id.
"""

from __future__ import annotations

import itertools
import json
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from transforms import arff
from transforms.delays import DelaySpec, LabelTimeAssigner
from transforms.records import (EVENT_KINDS, INSTANCE, LABEL, RANK_INSTANCE, RANK_LABEL,
                                RANK_LABEL_AFTER_INSTANCE, dead_letter)


class InputError(ValueError):
    """Input that cannot be read at all; the message names the file, row and field."""


FORMATS = {".csv": "csv", ".jsonl": "jsonl", ".json": "jsonl", ".ndjson": "jsonl",
           ".parquet": "parquet", ".pq": "parquet", ".arff": "arff"}
FILE_OPTIONS = {"format", "id", "time", "kind", "label", "label_time", "labels", "classes",
                "features", "missing", "delay", "order", "delayed", "target"}


def _split_spec(text: str) -> tuple[str | None, str, dict]:
    name = None
    brace = text.find("{")
    head, opts = (text, "") if brace < 0 else (text[:brace], text[brace:])
    eq = head.find("=")
    if eq > 0:
        name, head = head[:eq].strip(), head[eq + 1:]
    options = {}
    if opts:
        try:
            options = json.loads(opts)
        except json.JSONDecodeError as e:
            raise InputError(f"options of stream {text!r} are not valid JSON: {e}") from None
        if not isinstance(options, dict):
            raise InputError(f"options of stream {text!r} must be a JSON object")
    return name, head.strip(), options


@dataclass(frozen=True)
class StreamSpec:
    """One input stream.

    >>> s = StreamSpec.parse('synth:SEA{"n": 5, "seed": 1}')
    >>> s.name, s.kind
    ('sea', 'synth')
    >>> [e[3] for e in s.events(DelaySpec.parse("2"))][:4]
    ['instance', 'instance', 'label', 'instance']
    """

    name: str
    source: str
    options: dict = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str) -> StreamSpec:
        name, source, options = _split_spec(text.strip())
        if not source:
            raise InputError(f"stream spec {text!r} names no source")
        if name is None:
            base = source.split(":", 1)[1] if source.startswith(("synth:", "dataset:")) else \
                os.path.splitext(os.path.basename(source))[0]
            name = base.lower()
        return cls(name, source, options)

    # -- what kind of source -------------------------------------------------------------------
    @property
    def kind(self) -> str:
        if self.source.startswith("synth:"):
            return "synth"
        if self.source.startswith("dataset:"):
            return "dataset"
        return "file"

    @property
    def format(self) -> str | None:
        if self.kind != "file":
            return None
        fmt = self.options.get("format") or FORMATS.get(os.path.splitext(self.source)[1].lower())
        if fmt not in set(FORMATS.values()):
            raise InputError(f"{self.source}: unknown format; give one of "
                             f"{sorted(set(FORMATS.values()))} with {{\"format\": ...}}")
        return fmt

    @property
    def ordering(self) -> str:
        """'time': (t, rank, seq), labels first at equal t. 'input': (t, seq), file order."""
        default = "input" if self.options.get("delayed") else "time"
        order = self.options.get("order", default)
        if order not in ("time", "input"):
            raise InputError(f"stream {self.name}: order must be 'time' or 'input'")
        return order

    def delay(self, default: DelaySpec) -> DelaySpec:
        d = self.options.get("delay")
        return default if d is None else DelaySpec.parse(d)

    def declared_classes(self) -> list | None:
        if "classes" in self.options:
            return list(self.options["classes"])
        if self.format == "arff":
            attrs, _ = _arff_header(self.source)
            cls_attr = attrs[_arff_class_index(self, attrs)]
            return list(cls_attr.values) if cls_attr.type == "nominal" else None
        return None

    # -- driver-side checks ----------------------------------------------------------------------
    def check(self) -> None:
        """Fail fast, before any pipeline runs, on what can be seen without reading every row:
        unknown generators or datasets, missing files, misnamed columns, empty files."""
        unknown = set(self.options) - FILE_OPTIONS if self.kind == "file" else set()
        if unknown:
            raise InputError(f"stream {self.name}: unknown option(s) {sorted(unknown)}; "
                             f"known: {sorted(FILE_OPTIONS)}")
        if self.kind in ("synth", "dataset"):
            _river_stream(self)
            return
        if not os.path.exists(self.source):
            raise InputError(f"{self.source}: no such file")
        _ = self.ordering  # raises on an unknown order
        if self.format == "arff":
            attrs, rows = arff.read_arff(self.source)
            _arff_class_index(self, attrs)
            if not rows:
                raise InputError(f"{self.source}: the stream is empty (no @data rows)")
            return
        o = self.options
        split = "labels" in o
        for path, role in self._tables():
            fmt = fmt_of(path, self.format)
            columns = _columns(path, fmt)
            if not columns:
                raise InputError(f"{path}: the stream is empty (no columns)")
            if role == "labels":  # joined by id, and a label without a time means nothing
                required, optional = ("id", "time", "label"), ()
            elif split:  # the label options belong to the label table
                required, optional = ("id",), ("time", "kind")
            else:
                required, optional = (), ("id", "time", "kind", "label", "label_time")
            for opt in required + tuple(k for k in optional if k in o):
                col = o.get(opt, opt)
                if col not in columns:
                    raise InputError(f"{path}: column {col!r} (option {opt!r}) not found; "
                                     f"columns are {columns}")
            if role == "instances":
                for col in o.get("features") or []:
                    if col not in columns:
                        raise InputError(f"{path}: feature column {col!r} not found; columns "
                                         f"are {columns}")
            if _n_rows(path, fmt) == 0:
                raise InputError(f"{path}: the stream is empty (no rows)")
        if self.options.get("missing", "dead-letter") not in ("dead-letter", "drop"):
            raise InputError(f"stream {self.name}: missing must be 'dead-letter' or 'drop'")

    def _tables(self) -> list[tuple[str, str]]:
        tables = [(self.source, "instances")]
        if "labels" in self.options:
            tables.append((self.options["labels"], "labels"))
        return tables

    # -- reading -------------------------------------------------------------------------------
    def events(self, delay: DelaySpec) -> Iterator:
        """Event tuples and dead-letter dicts, for the whole stream."""
        delay = self.delay(delay)
        checks = _Checks(self)
        if self.kind in ("synth", "dataset"):
            rows = ((i + 1, i, float(i), x, y, None, None)
                    for i, (x, y) in enumerate(_river_stream(self)))
            items = _labelled_rows(self, rows, delay, checks)
        elif self.format == "arff":
            items = _arff_events(self, delay, checks)
        else:
            items = _table_events(self, delay, checks)
        if self.ordering == "input":  # file order alone breaks ties of t
            items = (i if isinstance(i, dict) else (i[0], 0, *i[2:]) for i in items)
        yield from items

class _Checks:
    """Row-level checks shared by every source: duplicate instance ids, undeclared classes."""

    def __init__(self, spec: StreamSpec):
        self.spec = spec
        classes = spec.declared_classes()
        self.classes = classes
        self.known = set(classes) if classes is not None else None
        self.seen: set = set()

    def instance(self, key, file, row, field="id"):
        """A dead letter if `key` was already used by an instance of this stream, else None."""
        if key in self.seen:
            return dead_letter(self.spec.name, f"duplicate instance id {key!r}", file=file,
                               row=row, field=field)
        self.seen.add(key)
        return None

    def label(self, y, file, row, field="label"):
        """A dead letter if classes are declared and `y` is not one of them, else None."""
        if self.known is not None and y not in self.known:
            return dead_letter(self.spec.name, f"label {y!r} is not one of the declared "
                               f"classes {self.classes}", file=file, row=row, field=field)
        return None


# -- river datasets and generators -------------------------------------------------------------
_SYNTH_RESERVED = {"n", "seed", "drift", "delay", "classes", "order"}


def _river_stream(spec: StreamSpec):
    from river import datasets
    from river.datasets import synth

    name = spec.source.split(":", 1)[1]
    opts = dict(spec.options)
    if spec.kind == "dataset":
        cls = getattr(datasets, name, None)
        if cls is None or not isinstance(cls, type):
            raise InputError(f"stream {spec.name}: river has no dataset {name!r}")
        try:
            ds = cls()
        except Exception as e:
            raise InputError(f"stream {spec.name}: cannot load river dataset {name}: {e}") \
                from None
        if not getattr(ds, "is_downloaded", True):
            raise InputError(f"stream {spec.name}: river dataset {name} must be downloaded "
                             f"first (this machine may be offline); bundled ones such as "
                             f"Phishing, Bananas, TrumpApproval work anywhere")
        n = opts.get("n")
        return itertools.islice(ds, n) if n else ds
    cls = getattr(synth, name, None)
    if cls is None or not isinstance(cls, type):
        raise InputError(f"stream {spec.name}: river has no generator {name!r}; see "
                         f"river.datasets.synth")
    params = {k: v for k, v in opts.items() if k not in _SYNTH_RESERVED}
    seed = opts.get("seed", 42)
    n = opts.get("n", 10_000)

    def build(p, s):
        import inspect

        kw = dict(p)
        sig = inspect.signature(cls).parameters
        if "seed" in sig:
            kw.setdefault("seed", s)
        else:  # RandomRBF and RandomTree take two seeds
            for k in sig:
                if k.startswith("seed_"):
                    kw.setdefault(k, s)
        try:
            return cls(**kw)
        except TypeError as e:
            raise InputError(f"stream {spec.name}: {name}({kw}): {e}") from None

    stream = build(params, seed)
    drifts = sorted(opts.get("drift", []), key=lambda d: d["at"])
    # A chain of abrupt or gradual drifts: each drift switches to a generator with the given
    # parameters, centred on position `at` with a sigmoid of width `width` (MOA's convention).
    if drifts:
        tail = None
        for k in range(len(drifts) - 1, -1, -1):
            d = drifts[k]
            new = build({**params, **{a: b for a, b in d.items() if a not in ("at", "width")}},
                        seed + k + 1)
            if tail is not None:
                nxt = drifts[k + 1]
                new = synth.ConceptDriftStream(new, tail, position=nxt["at"] - d["at"],
                                               width=nxt.get("width", 1), seed=seed + k + 1)
            tail = new
        stream = synth.ConceptDriftStream(stream, tail, position=drifts[0]["at"],
                                          width=drifts[0].get("width", 1), seed=seed)
    return itertools.islice(stream, n)


def _labelled_rows(spec: StreamSpec, rows, delay: DelaySpec, checks: _Checks) -> Iterator:
    """(row, id, t, x, y, label_t, own_delay) rows -> events, label times by the delay model.
    Dead letters found while parsing rows (dicts) flow through in place."""
    assigner = LabelTimeAssigner(delay)
    i = -1
    for item in rows:
        if isinstance(item, dict):
            yield item
            continue
        i += 1
        row, key, t, x, y, label_t, own_delay = item
        file = spec.source if spec.kind == "file" else None
        problem = checks.instance(key, file, row)
        if problem:
            yield problem
            continue
        if y is not None and (problem := checks.label(y, file, row,
                                                      spec.options.get("label", "label"))):
            yield problem
            y = None
        if label_t is not None and label_t < t:
            yield dead_letter(spec.name, f"label time {label_t} is earlier than the instance "
                              f"time {t}", file=file, row=row, field=spec.options.get("label_time",
                                                                           "label_time"))
            label_t, y = None, None
        if y is not None and delay.kind == "column" and label_t is None and not (
                isinstance(own_delay, (int, float)) and math.isfinite(own_delay)
                and own_delay >= 0):
            yield dead_letter(spec.name, f"delay {own_delay!r} is not a non-negative number",
                              file=file, row=row, field=delay.column)
            y = None
        yield from assigner.row(key, t, x, y, 2 * i, label_t, own_delay)
    yield from assigner.finish()


# -- ARFF ------------------------------------------------------------------------------------
def _arff_header(path: str):
    try:
        return arff.read_arff(path)
    except arff.ArffError as e:
        raise InputError(str(e)) from None
    except OSError as e:
        raise InputError(f"{path}: {e}") from None


def _arff_class_index(spec: StreamSpec, attrs) -> int:
    target = spec.options.get("target")
    if target is not None:
        names = [a.name for a in attrs]
        if target not in names:
            raise InputError(f"{spec.source}: class attribute {target!r} not found; attributes "
                             f"are {names}")
        return names.index(target)
    # MOA-style delayed ARFF: the two attributes after the class are instance id and timestamp.
    return len(attrs) - (3 if spec.options.get("delayed") else 1)


def _arff_events(spec: StreamSpec, delay: DelaySpec, checks: _Checks) -> Iterator:
    attrs, rows = _arff_header(spec.source)
    ci = _arff_class_index(spec, attrs)
    delayed = bool(spec.options.get("delayed"))
    feature_idx = [i for i in range(len(attrs)) if i != ci and not (delayed and i > ci)]

    def parse(lineno, values):
        if len(values) != len(attrs):
            return dead_letter(spec.name, f"{len(values)} values for {len(attrs)} attributes",
                               file=spec.source, row=lineno, record=values)
        x = {}
        for i in feature_idx:
            try:
                v = arff.convert(attrs[i], values[i])
            except arff.ArffValueError as e:
                return dead_letter(spec.name, str(e), file=spec.source, row=lineno,
                                   field=attrs[i].name, record=values)
            if v is None:
                continue  # missing value: river models take sparse dicts
            if isinstance(v, float) and not math.isfinite(v):
                return dead_letter(spec.name, f"feature is {v}", file=spec.source, row=lineno,
                                   field=attrs[i].name, record=values)
            x[attrs[i].name] = v
        try:
            y = arff.convert(attrs[ci], values[ci])
        except arff.ArffValueError as e:
            return dead_letter(spec.name, str(e), file=spec.source, row=lineno,
                               field=attrs[ci].name, record=values)
        return x, y

    if not delayed:
        def labelled():
            for i, (lineno, values) in enumerate(rows):
                parsed = parse(lineno, values)
                if isinstance(parsed, dict):
                    yield parsed
                    continue
                yield (lineno, i, float(i), parsed[0], parsed[1], None, None)
        yield from _labelled_rows(spec, labelled(), delay, checks)
        return

    instance_t: dict = {}
    for seq, (lineno, values) in enumerate(rows):
        parsed = parse(lineno, values)
        if isinstance(parsed, dict):
            yield parsed
            continue
        x, y = parsed
        key = values[ci + 1].strip("'\"")
        try:
            t = _parse_time_value(values[ci + 2])
        except ValueError as e:
            yield dead_letter(spec.name, str(e), file=spec.source, row=lineno,
                              field=attrs[ci + 2].name, record=values)
            continue
        problem = checks.instance(key, spec.source, lineno, attrs[ci + 1].name) if y is None \
            else checks.label(y, spec.source, lineno, attrs[ci].name)
        if problem:
            yield problem
        elif y is None:
            instance_t[key] = t
            yield (t, RANK_INSTANCE, seq, INSTANCE, key, x, None)
        elif key in instance_t and t < instance_t[key]:
            yield dead_letter(spec.name, f"label at {t} is earlier than its instance at "
                              f"{instance_t[key]}", file=spec.source, row=lineno,
                              field=attrs[ci + 2].name, record=values)
        else:
            yield (t, RANK_LABEL, seq, LABEL, key, x, y)


def _parse_time_value(text) -> float:
    try:
        return float(text)
    except (TypeError, ValueError):
        pass
    ts = pd.to_datetime(str(text).strip("'\""), utc=True, errors="coerce")
    if pd.isna(ts):
        raise ValueError(f"time {text!r} is neither a number nor an ISO datetime")
    return ts.value / 1e9


# -- logged tables -----------------------------------------------------------------------------
def _read_table(path: str, fmt: str) -> pd.DataFrame:
    try:
        if fmt == "csv":
            return pd.read_csv(path)
        if fmt == "jsonl":
            return pd.read_json(path, lines=True)
        return pd.read_parquet(path)
    except (OSError, ValueError) as e:
        raise InputError(f"{path}: cannot read as {fmt}: {e}") from None
    except pd.errors.EmptyDataError:
        return pd.DataFrame()


def _columns(path: str, fmt: str) -> list[str]:
    if fmt == "parquet":
        import pyarrow.parquet as pq

        return list(pq.read_schema(path).names)
    if fmt == "csv":
        try:
            return list(pd.read_csv(path, nrows=0).columns)
        except pd.errors.EmptyDataError:
            return []
    return list(_read_table(path, fmt).columns)


def _n_rows(path: str, fmt: str) -> int:
    if fmt == "parquet":
        import pyarrow.parquet as pq

        return pq.ParquetFile(path).metadata.num_rows
    if fmt == "csv":
        return len(pd.read_csv(path, nrows=1))
    return len(_read_table(path, fmt))


def _times(df: pd.DataFrame, col: str | None) -> tuple[np.ndarray, np.ndarray]:
    """Seconds as floats and a mask of rows whose time did not parse."""
    if col is None or col not in df.columns:
        t = np.arange(len(df), dtype=float)
        return t, np.zeros(len(df), dtype=bool)
    s = df[col]
    if pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s):
        t = s.to_numpy(dtype=float)
    elif pd.api.types.is_datetime64_any_dtype(s):
        dt = pd.to_datetime(s, utc=True)
        t = (dt - pd.Timestamp(0, tz="UTC")).dt.total_seconds().to_numpy(dtype=float)
        t[dt.isna().to_numpy()] = np.nan
    else:
        num = pd.to_numeric(s, errors="coerce")
        dt = pd.to_datetime(s.where(num.isna()), utc=True, errors="coerce", format="ISO8601")
        secs = (dt - pd.Timestamp(0, tz="UTC")).dt.total_seconds()
        t = num.fillna(secs).to_numpy(dtype=float)
    return t, ~np.isfinite(t)


def _feature_frame(df: pd.DataFrame, columns: list[str]) -> tuple[pd.DataFrame, dict]:
    """Coerce mostly-numeric text columns to numbers; report cells that did not parse."""
    bad: dict[str, np.ndarray] = {}
    out = df[columns].copy()
    for c in columns:
        s = out[c]
        if s.dtype == object or pd.api.types.is_string_dtype(s):
            num = pd.to_numeric(s, errors="coerce")
            present = s.notna()
            parsed = num.notna() & present
            if present.sum() and parsed.sum() > 0.5 * present.sum():
                bad[c] = (present & ~parsed).to_numpy()
                out[c] = num
    return out, bad


def _table_events(spec: StreamSpec, delay: DelaySpec, checks: _Checks) -> Iterator:
    o = spec.options
    fmt = spec.format
    id_col, time_col, kind_col = o.get("id", "id"), o.get("time", "time"), o.get("kind", "kind")
    label_col, label_time_col = o.get("label", "label"), o.get("label_time", "label_time")
    missing = o.get("missing", "dead-letter")
    df = _read_table(spec.source, fmt)
    if df.empty:
        raise InputError(f"{spec.source}: the stream is empty (no rows)")
    labels_df = _read_table(o["labels"], fmt_of(o["labels"], fmt)) if "labels" in o else None
    reserved = {id_col, time_col, kind_col, label_col, label_time_col}
    if delay.kind == "column":
        reserved.add(delay.column)
    features = o.get("features") or [c for c in df.columns if c not in reserved]

    def rows_of(frame: pd.DataFrame, path: str, seq0: int, with_features: bool):
        """Per row: (seq, row number, id, t, x or None, y, label_t, own_delay) or a dead letter."""
        t, bad_t = _times(frame, time_col)
        lt = _times(frame, label_time_col)[0] if label_time_col in frame.columns else None
        feats = [c for c in features if c in frame.columns] if with_features else []
        fx, bad_cells = _feature_frame(frame, feats)
        records = fx.to_dict("records") if feats else [None] * len(frame)
        ids = frame[id_col].tolist() if id_col in frame.columns else list(range(len(frame)))
        ys = frame[label_col].tolist() if label_col in frame.columns else [None] * len(frame)
        own = frame[delay.column].tolist() if delay.kind == "column" and \
            delay.column in frame.columns else [None] * len(frame)
        for i in range(len(frame)):
            row = i + 1
            if bad_t[i]:
                yield dead_letter(spec.name, f"time {frame[time_col].iloc[i]!r} is neither a "
                                  f"number nor an ISO datetime", file=path, row=row,
                                  field=time_col)
                continue
            bad_field = next((c for c, m in bad_cells.items() if m[i]), None)
            if bad_field is not None:
                yield dead_letter(spec.name, f"value {frame[bad_field].iloc[i]!r} is not a "
                                  f"number", file=path, row=row, field=bad_field)
                continue
            x = records[i]
            if x is not None and all(v is None or (isinstance(v, float) and math.isnan(v))
                                     for v in x.values()):
                x = None  # a row without features (a label row of an event log)
            if x is not None:
                clean = {}
                problem = None
                for k, v in x.items():
                    if isinstance(v, float) and not math.isfinite(v):
                        if math.isnan(v) and missing == "drop":
                            continue
                        problem = (k, v)
                        break
                    if v is None:
                        continue
                    clean[k] = v.item() if isinstance(v, np.generic) else v
                if problem:
                    yield dead_letter(spec.name, f"feature is {problem[1]}", file=path,
                                      row=row, field=problem[0])
                    continue
                x = clean
            y = ys[i]
            if isinstance(y, float) and math.isnan(y):
                y = None
            elif isinstance(y, np.generic):
                y = y.item()
            label_t = None
            if lt is not None and y is not None and math.isfinite(lt[i]):
                label_t = float(lt[i])
            key = ids[i].item() if isinstance(ids[i], np.generic) else ids[i]
            yield (seq0 + i, row, key, float(t[i]), x, y, label_t, own[i])

    if kind_col in df.columns or labels_df is not None:
        yield from _event_log(spec, df, labels_df, rows_of, kind_col, checks)
        return

    labelled = (item if isinstance(item, dict) else item[1:]
                for item in rows_of(df, spec.source, 0, True))
    yield from _labelled_rows(spec, labelled, delay, checks)


def fmt_of(path: str, default: str) -> str:
    return FORMATS.get(os.path.splitext(path)[1].lower(), default)


def _event_log(spec, df, labels_df, rows_of, kind_col, checks: _Checks) -> Iterator:
    """Event logs (kind column) and instance + label tables: times come from the input."""
    o = spec.options
    items = []
    kinds = df[kind_col].tolist() if kind_col in df.columns else [INSTANCE] * len(df)
    for item in rows_of(df, spec.source, 0, True):
        if isinstance(item, dict):
            items.append(item)
            continue
        seq, row, key, t, x, y, _, _ = item
        kind = kinds[row - 1]
        if kind not in EVENT_KINDS:
            items.append(dead_letter(spec.name, f"kind {kind!r} is not one of {EVENT_KINDS}",
                                     file=spec.source, row=row, field=kind_col))
            continue
        items.append((seq, row, spec.source, kind, key, t, x, y))
    if labels_df is not None:
        for item in rows_of(labels_df, o["labels"], len(df), True):
            if isinstance(item, dict):
                items.append(item)
                continue
            seq, row, key, t, x, y, _, _ = item
            items.append((seq, row, o["labels"], LABEL, key, t, x or None, y))
    instance_t = {}
    for it in items:
        if not isinstance(it, dict) and it[3] == INSTANCE:
            instance_t.setdefault(it[4], it[5])
    for it in items:
        if isinstance(it, dict):
            yield it
            continue
        seq, row, path, kind, key, t, x, y = it
        if kind == LABEL:
            if y is None:
                yield dead_letter(spec.name, "label row without a label", file=path, row=row,
                                  field=o.get("label", "label"))
                continue
            if problem := checks.label(y, path, row, o.get("label", "label")):
                yield problem
                continue
            t0 = instance_t.get(key)
            if t0 is not None and t < t0:
                yield dead_letter(spec.name, f"label at {t} is earlier than its instance at "
                                  f"{t0}", file=path, row=row, field=o.get("time", "time"))
                continue
            rank = RANK_LABEL if t0 is None or t > t0 else RANK_LABEL_AFTER_INSTANCE
            yield (t, rank, seq, LABEL, key, x or None, y)
        elif kind == INSTANCE and (problem := checks.instance(key, path, row,
                                                               o.get("id", "id"))):
            yield problem
        else:
            yield (t, RANK_INSTANCE, seq, kind, key, x or {}, None)
