"""A CSV or JSON Lines prediction log read as text: in blocks of whole lines (`LOG_BLOCK`
bytes at a time), each JSON Lines block parsed by Arrow (the lines that are no JSON object
left out), text that is not in its encoding named by its line, and class probabilities
written as JSON text or as a struct made maps (and lists written as text, lists)."""

from __future__ import annotations

import ast
import codecs
import contextlib
import io
import json
import math
import re
import sys
import threading
from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from transforms.errors import InputError
from transforms.streams.rows import written_as
from transforms.streams.table_files import (flat_table, is_utf8, json_object, json_value,
                                            undecodable)

# The bytes of a CSV or JSON Lines log read at a time when it is read block by block.
LOG_BLOCK = 8 << 20
# Where a log's options are given, for messages.
OPTION = "the --predictions option"


class TypesChanged(Exception):
    """A block of a CSV log read block by block holds a value that does not fit the type its
    column took from the first block (`PredictionLogSpec.read(streamed=True)`): the log is
    then read whole, each column of the type all its values fit.

    >>> try:
    ...     raise TypesChanged("p.csv")
    ... except TypesChanged as e:
    ...     print(f"{e}: read it whole")
    p.csv: read it whole
    """


class ArrowReadable:
    """A file Beam opened (a .gz one decompressed as it is read), as Arrow reads a Python
    stream: Beam's `closed` is a method, always true as Arrow tests it.

    >>> import pyarrow.csv as pcsv
    >>> pcsv.read_csv(ArrowReadable(io.BytesIO(b"id,y\\na,1\\n"))).to_pydict()
    {'id': ['a'], 'y': [1]}
    """

    closed = False

    def __init__(self, f):
        self.read = f.read

    @staticmethod
    def readable() -> bool:
        return True

    @staticmethod
    def seekable() -> bool:
        return False


def _line_blocks(f) -> Iterator[tuple[int, bytes]]:
    """A text file's whole lines, about `LOG_BLOCK` bytes at a time, each block with the number
    of its first line.

    >>> list(_line_blocks(io.BytesIO(b"a\\nb\\nc")))  # (the last line has no newline)
    [(1, b'a\\nb\\n'), (3, b'c')]
    """
    number, rest = 1, b""
    while True:
        data = f.read(LOG_BLOCK)
        if not data:
            break
        data = rest + data
        end = data.rfind(b"\n") + 1
        if end == 0:  # (a line longer than a block)
            rest = data
            continue
        yield number, data[:end]
        number += data.count(b"\n", 0, end)
        rest = data[end:]
    if rest.strip():
        yield number, rest


def _parsed_jsonl(block: bytes, first_line: int, bad_rows: list | None,
                  schema: pa.Schema | None = None, maps: tuple = ()) -> pa.Table:
    """A block of JSON Lines as a table (the `schema` columns of those types, the others
    inferred); lines that are no JSON object left out, into `bad_rows`. Where the block does
    not parse whole, each line is read alone, its NaN and ±Infinity as null but in `maps`,
    the objects that are maps of probabilities (`_read_alone`). Raises ArrowInvalid
    where the objects do not fit `schema`, or one another."""
    import pyarrow.json as pjson

    options = pjson.ParseOptions(explicit_schema=schema, unexpected_field_behavior="infer")
    try:
        return pjson.read_json(io.BytesIO(block), parse_options=options)
    except pa.ArrowInvalid as error:
        objects, records, numbers, dropped, changed = [], [], [], 0, 0
        for number, line in enumerate(block.split(b"\n"), first_line):
            text = line.decode("utf-8-sig", "replace").strip()  # (Arrow skips a BOM too)
            record, reason = json_object(text) if text else (None, None)
            if reason is None:
                alone = _read_alone(record, maps)
                if alone != record:
                    record, line = alone, json.dumps(alone).encode()
                    changed += 1
                objects.append(line)
                records.append(record)
                if record is not None:
                    numbers.append(number)
                continue
            dropped += 1
            if bad_rows is not None:
                bad_rows.append((number, reason, text[:500]))
        one_kind = _one_kind_per_field(objects, records)
        if one_kind is not None:
            objects = one_kind
        elif not dropped and not changed:
            raise _on_its_line(error, numbers) from None  # (their values do not fit)
        if not any(line.strip() for line in objects):
            return pa.table({})
        try:
            return pjson.read_json(io.BytesIO(b"\n".join(objects)), parse_options=options)
        except pa.ArrowInvalid as still:
            raise _on_its_line(still, numbers) from None


# How Arrow names where a JSON Lines block does not fit: its N-th object, blank lines skipped.
_ARROW_ROW = re.compile(r" in row (\d+)")


def _on_its_line(error: pa.ArrowInvalid, lines: list[int]) -> pa.ArrowInvalid:
    """Arrow's error naming a block's object by its number ("in row 2", from 0) naming the
    object's line in the file instead (`lines`: each object's line number).

    >>> str(_on_its_line(pa.ArrowInvalid("Column(/t) changed from number to string in row 1"),
    ...                  [1, 3, 4]))
    'Column(/t) changed from number to string on line 3'
    """
    found = _ARROW_ROW.search(str(error))
    if found is None or int(found.group(1)) >= len(lines):
        return error
    return pa.ArrowInvalid(_ARROW_ROW.sub(f" on line {lines[int(found.group(1))]}", str(error),
                                          count=1))


def _one_kind_per_field(lines: list[bytes], records: list) -> list[bytes] | None:
    """JSON Lines (`lines`, parsed: `records`, None for a blank line) whose field (at any
    depth) is a number on some lines and text on others (`1` and `"1"`, from two services'
    serialisers), each value written as the field's first one is (`written_as`), or as text
    on every line where some text reads as no number ("abc" among times: then read as a CSV
    column of text is); None when no field mixes them.

    >>> lines = [b'{"y": 1, "o": {"id": "7"}}', b'', b'{"y": "0", "o": {"id": 8}}']
    >>> _one_kind_per_field(lines, [json.loads(line) if line else None for line in lines])
    [b'{"y": 1, "o": {"id": "7"}}', b'', b'{"y": 0, "o": {"id": "8"}}']
    >>> lines = [b'{"t": 1.5}', b'{"t": "abc"}']
    >>> _one_kind_per_field(lines, [json.loads(line) for line in lines])
    [b'{"t": "1.5"}', b'{"t": "abc"}']
    >>> _one_kind_per_field([b'{"y": 1}', b'{"y": 2.5}'], [{"y": 1}, {"y": 2.5}]) is None
    True
    """
    def values(value, path):
        if isinstance(value, dict):
            for k, v in value.items():
                yield from values(v, (*path, k))
        elif value is not None and not isinstance(value, list):
            yield path, value

    def rewritten(value, path):
        if isinstance(value, dict):
            return {k: rewritten(v, (*path, k)) for k, v in value.items()}
        text = first.get(path)
        return value if text is None or value is None or isinstance(value, list) \
            else written_as(value, text)

    first: dict = {}  # path: whether its first value is text
    mixed = False
    for record in filter(None, records):
        for path, value in values(record, ()):
            mixed |= first.setdefault(path, isinstance(value, str)) != isinstance(value, str)
    if not mixed:
        return None
    for record in filter(None, records):
        for path, value in values(record, ()):
            if not first[path] and isinstance(value, str) and \
                    isinstance(written_as(value, False), str):
                first[path] = True
    return [line if record is None else json.dumps(rewritten(record, ())).encode()
            for line, record in zip(lines, records)]


def _read_alone(value, maps: tuple = (), path: str = ""):
    """A JSON Lines value as a line read alone gives it: NaN and ±Infinity (not JSON, but
    Python's json writes them, e.g. for a missing value in a pandas column of text) as null,
    no value, as a number column's NaN is. The objects named (by their path) in `maps`, maps
    of probabilities, are left as they are (a NaN in one makes a prediction without
    probabilities, `struct_as_map`, not a class left out), and one written as JSON text (by
    another service, '{"a": 0.2}') is the object it writes.

    >>> _read_alone({"y_pred": math.nan, "x": {"a": math.inf, "b": 0.5}})
    {'y_pred': None, 'x': {'a': None, 'b': 0.5}}
    >>> _read_alone({"out": {"proba": {"a": math.nan}}, "y": math.nan}, ("out.proba",))
    {'out': {'proba': {'a': nan}}, 'y': None}
    >>> _read_alone({"proba": '{"a": 0.2}', "p": math.nan}, ("proba", "p"))
    {'proba': {'a': 0.2}, 'p': None}
    """
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _map_read_alone(v) if path + k in maps
                else _read_alone(v, maps, f"{path}{k}.") for k, v in value.items()}
    if isinstance(value, list):
        return [_read_alone(v) for v in value]
    return value


def _map_read_alone(value):
    """A map of probabilities as `_read_alone` reads it."""
    if isinstance(value, str):
        written = _cell_value(value)
        return written if written is None or isinstance(written, dict) else value
    return value if isinstance(value, dict) else _read_alone(value)


def _unreadable_jsonl(path: str, error: Exception) -> InputError:
    return InputError(f"{path}: not a readable JSON Lines file ({str(error).strip()}); a "
                      f"column's values must be of one type")


def stream_jsonl(f, path: str, wanted: list[str] | None, bad_rows: list | None,
                  encoding: str = "utf-8", keep: tuple = ()):
    """A JSON Lines log block by block: its `wanted` columns that it has, each block's types
    its own, or all its columns (`read(streamed=True)`), each column of the type the first
    block with a value in it gave (`TypesChanged` when a later block does not fit). Nested
    objects are columns named by their path, but those named in `keep` (`flat_table`): maps
    of probabilities (`_read_alone`).

    >>> log = io.BytesIO(b'{"id": "a", "proba": {"x": 0.1}, "ctx": {"c": 1}}\\n'
    ...                  b'{"id": "b", "proba": {"x": 0.2}, "ctx": {"c": 2}}\\n')
    >>> [b.to_pydict() for b in stream_jsonl(log, "p.jsonl", None, None, keep=("proba",))]
    [{'id': ['a', 'b'], 'proba': [{'x': 0.1}, {'x': 0.2}], 'ctx.c': [1, 2]}]
    """
    fixed: dict = {}  # column: type (numbers, text, times: not null, nor nested)
    for first_line, block in _line_blocks(f):
        block = _as_utf8(block, first_line, path, encoding)
        schema = pa.schema(list(fixed.items())) if fixed else None
        try:
            table = _parsed_jsonl(block, first_line, bad_rows, schema, keep)
        except pa.ArrowInvalid as e:
            if schema is None:
                raise _unreadable_jsonl(path, e) from None
            raise TypesChanged(path) from e
        if wanted is None:
            for field in table.schema:  # (before flattening: the names the JSON has)
                if not (pa.types.is_null(field.type) or pa.types.is_nested(field.type)):
                    fixed.setdefault(field.name, field.type)
        table = flat_table(table, keep)
        if wanted is not None:
            table = table.select([c for c in wanted if c in table.column_names])
        yield from table.to_batches(max_chunksize=1 << 16)


def read_jsonl(f, path: str, bad_rows: list | None, encoding: str = "utf-8",
               maps: tuple = ()) -> pa.Table:
    """A JSON Lines log parsed whole (a column's type: the one all its values fit); a line
    that is not JSON goes to `bad_rows` as (line number, reason, line); `maps` as
    `_parsed_jsonl`'s.

    >>> bad_rows = []
    >>> read_jsonl(io.BytesIO(b'{"id": 1}\\n{oops\\n{"id": 2.5}\\n'), "p.jsonl", bad_rows
    ...            ).to_pydict()
    {'id': [1.0, 2.5]}
    >>> [(line, text) for line, _, text in bad_rows]
    [(2, '{oops')]
    """
    data = _as_utf8(f.read(), 1, path, encoding)
    if not data.strip():
        return pa.table({})
    try:
        return _parsed_jsonl(data, 1, bad_rows, maps=maps)
    except pa.ArrowInvalid as e:
        raise _unreadable_jsonl(path, e) from None


# `undecodable_rows`' hook: installed once; counts while any read is inside it.
_HOOK = {"lock": threading.Lock(), "previous": None, "active": 0, "seen": 0}


def _collect_undecoded(unraisable) -> None:
    if _HOOK["active"] and isinstance(unraisable.exc_value, UnicodeDecodeError):
        _HOOK["seen"] += 1
    else:
        (_HOOK["previous"] or sys.__unraisablehook__)(unraisable)


@contextlib.contextmanager
def undecodable_rows():
    """Whether Arrow's CSV reader met a row that is not UTF-8 meanwhile (a function to ask),
    instead of its tracebacks on stderr: it decodes a row with the wrong number of fields as
    UTF-8 to hand it to the `invalid_row_handler`, on a thread of its own, and only reports
    the failure ("Exception ignored in ..."). (Two logs read at once, both with such rows,
    could each see the other's: either is told it is not UTF-8, which it is not.)

    >>> import pyarrow.csv as pcsv
    >>> skip = pcsv.ParseOptions(invalid_row_handler=lambda row: "skip")
    >>> with undecodable_rows() as undecoded:
    ...     try:
    ...         pcsv.read_csv(io.BytesIO(b"a,b\\n1,2\\n\\xff,3,4\\n"), parse_options=skip)
    ...     except pa.ArrowInvalid:
    ...         print("a row with 3 fields, not UTF-8:", undecoded())
    a row with 3 fields, not UTF-8: True
    """
    with _HOOK["lock"]:
        if sys.unraisablehook is not _collect_undecoded:
            _HOOK["previous"], sys.unraisablehook = sys.unraisablehook, _collect_undecoded
        _HOOK["active"] += 1
        before = _HOOK["seen"]
    try:
        yield lambda: _HOOK["seen"] > before
    finally:
        with _HOOK["lock"]:
            _HOOK["active"] -= 1


def _as_utf8(block: bytes, first_line: int, path: str, encoding: str) -> bytes:
    """Whole lines of a JSON Lines log as UTF-8: checked (Arrow's JSON reader would put U+FFFD
    in place of what is not UTF-8, silently), or decoded from the log's `encoding`.

    >>> _as_utf8("{}\\n".encode("latin-1"), 1, "p.jsonl", "latin-1")
    b'{}\\n'
    >>> _as_utf8(b'{}\\n{"y_pred": "caf\\xe9"}\\n', 7, "p.jsonl", "utf-8")
    ... # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    transforms.errors.InputError: p.jsonl, line 8: not utf-8 text (invalid continuation byte);
    give the file's encoding with the --predictions option {"encoding": "latin-1"}
    (or cp1252, utf-16, ...)
    """
    if "\n".encode(encoding) != b"\n":  # (its lines are not split at the byte \n)
        raise InputError(f"{path}: a JSON Lines log is read as UTF-8 or an encoding that "
                         f"extends ASCII, not {encoding}; write it as UTF-8")
    if block.isascii():  # (text in every encoding that extends ASCII, as it is in UTF-8)
        return block
    decoder, view, text = codecs.getincrementaldecoder(encoding)(), memoryview(block), []
    for start in range(0, len(block), LOG_BLOCK):  # (a file read whole: a piece at a time)
        held = len(decoder.getstate()[0])
        try:
            piece = decoder.decode(view[start:start + LOG_BLOCK],
                                   final=start + LOG_BLOCK >= len(block))
        except UnicodeDecodeError as e:
            line = first_line + block.count(b"\n", 0, start - held + e.start)
            raise undecodable(path, encoding, e.reason, OPTION, line=line) from None
        if not is_utf8(encoding):
            text.append(piece.encode("utf-8"))
    return block if is_utf8(encoding) else b"".join(text)


def released(batches: list):
    """The batches one by one, each let go of once the next is asked for (so that a file
    parsed whole is not held whole until its last batch is used).

    >>> list(released([1, 2]))
    [1, 2]
    """
    batches.reverse()
    while batches:
        yield batches.pop()


def json_text_as_map(column: pa.Array, ids: pa.Array | None, path: str) -> pa.MapArray:
    """Probabilities logged as JSON text, '{"fraud": 0.2, "ok": 0.8}' (a CSV log's only way to
    hold a map, and a common one in Parquet), as maps; an empty or null cell, text naming none
    (null, None, NaN), or a class whose value is null, holds none. Text that is no such
    object stops the backfill with one line naming its prediction's id.

    >>> text = pa.array(['{"ok": 0.8, "fraud": 0.2}', None, "", '{"ok": 1, "fraud": null}',
    ...                  "NaN", "null"])
    >>> json_text_as_map(text, None, "p.csv").to_pylist()
    [[('ok', 0.8), ('fraud', 0.2)], None, None, [('ok', 1.0)], None, None]

    A dict as pandas' `to_csv` writes one (river's `predict_proba_one`, logged), its classes
    named as text:

    >>> json_text_as_map(pa.array(["{False: 0.3, True: 0.7}"]), None, "p.csv").to_pylist()
    [[('False', 0.3), ('True', 0.7)]]
    >>> json_text_as_map(pa.array(["0.7"]), pa.array(["a1"]), "p.csv")
    Traceback (most recent call last):
    ...
    transforms.errors.InputError: p.csv: prediction a1: proba '0.7' is not a JSON object ...
    >>> json_text_as_map(pa.array(["oops"]), pa.array(["a2"]), "p.csv")
    Traceback (most recent call last):
    ...
    transforms.errors.InputError: p.csv: prediction a2: proba 'oops' is not a JSON object ...
    """
    offsets, keys, values, missing = [0], [], [], []
    for row, text in enumerate(column.to_pylist()):
        record = _cell_value(text)
        if record is not None:
            if isinstance(record, dict):
                record = {str(k): v for k, v in record.items()}  # (Python's: any keys)
            if not isinstance(record, dict) or not all(
                    v is None or type(v) in (float, int) for v in record.values()):
                raise InputError(
                    f"{path}: {_row_named(ids, row)}: proba {text[:80]!r} is not a JSON "
                    f"object {{class: probability}}; log each prediction's probabilities as "
                    f'one, e.g. {{"fraud": 0.2, "ok": 0.8}}, or name a score with {{"score": ...}}')
            for k, v in record.items():
                if v is not None:
                    keys.append(k)
                    values.append(v)
        offsets.append(len(keys))
        missing.append(record is None)
    return pa.MapArray.from_arrays(pa.array(offsets, pa.int32()), pa.array(keys, pa.string()),
                                   pa.array(values, pa.float64()), mask=pa.array(missing))


def _cell_value(text: str | None):
    """A log cell's value (`written_value`); None for an empty cell, or text naming none
    (null, None, NaN: as Python's json writes a missing value, and pandas' `to_csv` with an
    `na_rep`); text that is no value stays text, for the caller to name.

    >>> _cell_value(" "), _cell_value("NaN"), _cell_value("None"), _cell_value('{"a": 0.5}')
    (None, None, None, {'a': 0.5})
    >>> _cell_value("oops")
    'oops'
    """
    if text is None or not text.strip():
        return None
    value = written_value(text)
    if value is None and text.strip() not in ("null", "None"):
        return text
    return None if isinstance(value, float) and math.isnan(value) else value


def written_value(text: str):
    """A value logged as text: JSON, or as Python writes it ("['fraud', 'ok']", {False: 0.3},
    [nan, 0.7]: pandas' `to_csv` of a list or dict column; numpy's scalars as numpy 2 writes
    them, {np.str_('ok'): np.float64(0.8)}, and its arrays, [0.2 0.8], from scikit-learn's
    answers), read as a literal (nothing is run); None for other text.

    >>> written_value('{"ok": NaN}'), written_value("{0: 0.25}"), written_value("[nan, -inf]")
    ({'ok': nan}, {0: 0.25}, [nan, -inf])
    >>> written_value("{np.str_('ok'): np.float64(0.8), np.int64(1): np.True_}")
    {'ok': 0.8, 1: True}
    >>> written_value("[0.2 0.8]"), written_value("['fraud case' 'ok']")
    ([0.2, 0.8], ['fraud case', 'ok'])
    >>> written_value("[np.float64(os.system('ls'))]") is None
    True
    """
    try:
        return json_value(text)
    except ValueError:
        pass
    try:
        return ast.literal_eval(_ReprLiterals().visit(ast.parse(_listed_items(text),
                                                                mode="eval")))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


# An item of a numpy array as str writes it: quoted text, or a number, nan or inf.
_ARRAY_ITEM = re.compile(r"""'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|[^\s'"]+""")


def _listed_items(text: str) -> str:
    """A numpy array as str writes it (pandas' `to_csv` of a column of arrays), `[0.2 0.8]`
    (its lines wrapped), as a list's text, `[0.2, 0.8]`; other text as it is.

    >>> _listed_items("[0.5 nan\\n 1.]"), _listed_items("[0.5, 1]")
    ('[0.5, nan, 1.]', '[0.5, 1]')
    """
    text = text.strip()
    if not (text.startswith("[") and text.endswith("]")) or "," in text or "[" in text[1:-1]:
        return text
    return "[" + ", ".join(_ARRAY_ITEM.findall(text[1:-1])) + "]"


# The values repr writes as names (nan, inf) and numpy as attributes (np.nan, np.True_).
_NAMED_VALUES = {"nan": math.nan, "inf": math.inf, "True_": True, "False_": False}
# numpy's scalar types, which numpy 2's repr writes as calls: np.float64(0.2), np.str_('ok').
_NUMPY_SCALAR = re.compile(r"(float|int|uint|complex)\d+|str_|bool_?|bytes_|double|single|"
                           r"longdouble|intc|longlong")


def _numpy_name(node: ast.AST) -> str | None:
    """The name `np.NAME` or `numpy.NAME` gives, or None for another expression."""
    return node.attr if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
        and node.value.id in ("np", "numpy") else None


class _ReprLiterals(ast.NodeTransformer):
    """The values that repr writes as names or calls (nan, inf; numpy's np.nan, np.True_,
    np.float64(0.2)) made the literals they stand for, so that `ast.literal_eval` reads them:
    a numpy scalar type's call with one argument is that argument, itself a literal or none.

    >>> ast.literal_eval(_ReprLiterals().visit(ast.parse("[np.float64(nan), inf]", mode="eval")))
    [nan, inf]
    """

    def visit_Name(self, node):
        return ast.Constant(_NAMED_VALUES[node.id]) if node.id in ("nan", "inf") else node

    def visit_Attribute(self, node):
        name = _numpy_name(node)
        return ast.Constant(_NAMED_VALUES[name]) if name in _NAMED_VALUES else node

    def visit_Call(self, node):
        self.generic_visit(node)
        name = _numpy_name(node.func)
        if name and _NUMPY_SCALAR.fullmatch(name) and len(node.args) == 1 and not node.keywords:
            return node.args[0]
        return node


def _row_named(ids: pa.Array | None, row: int) -> str:
    """How a message names a log's row: by its prediction's id where the log has ids.

    >>> _row_named(pa.array(["a7", ""]), 0), _row_named(pa.array(["a7", ""]), 1)
    ('prediction a7', 'a prediction with an empty id')
    """
    if ids is None:
        return f"row {row + 1}"
    given = ids[row].as_py()
    return "a prediction with an empty id" if given is None or not str(given).strip() \
        else f"prediction {given}"


def json_text_as_lists(column: pa.Array, ids: pa.Array | None, path: str, name: str,
                       option: str, what: str) -> pa.Array:
    """Lists logged as text (a CSV log's only way to hold one): JSON, '[0.2, 0.8]', or a
    Python list as pandas' `to_csv` writes it, "['fraud', 'ok']"; an empty or null cell, or
    text naming none (null, None, NaN), holds none. Text that is no list stops the backfill
    with one line naming its prediction's id.

    >>> json_text_as_lists(pa.array(['[0.2, 0.8]', None, "[1, null]", "NaN"]), None, "p.csv",
    ...                    "s", "scores", "scores").to_pylist()
    [[0.2, 0.8], None, [1.0, None], None]
    >>> json_text_as_lists(pa.array(["['fraud', 'ok']"]), None, "p.csv", "c", "score_classes",
    ...                    "classes").to_pylist()
    [['fraud', 'ok']]
    >>> json_text_as_lists(pa.array(["0.7"]), pa.array(["a1"]), "p.csv", "p", "scores",
    ...                    "scores")  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    transforms.errors.InputError: p.csv: prediction a1: column 'p' (option scores) holds '0.7',
    not a list: scores names a column of each prediction's list of scores, e.g. [0.2, 0.8]
    >>> json_text_as_lists(pa.array([str(np.arange(2000.0))]), None, "p.csv", "p", "scores",
    ...                    "scores")  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    transforms.errors.InputError: p.csv: row 1: column 'p' (option scores) holds '[0.000e+00
    1.000e+00 2.000e+00 ... 1.997e+03 1.998e+03 1.999e+03]': a numpy array of more than 1 000
    scores that numpy's text cut short with '...'; log each as a list (`list(array)`), or the
    log as Parquet
    """
    lists = []
    for row, text in enumerate(column.to_pylist()):
        value = _cell_value(text)
        if value is not None:
            if not isinstance(value, (list, tuple)):
                example = "[0.2, 0.8]" if what == "scores" else '["fraud", "ok"]'
                raise InputError(f"{path}: {_row_named(ids, row)}: column {name!r} (option "
                                 f"{option}) holds {text[:80]!r}, not a list: {option} names a "
                                 f"column of each prediction's list of {what}, e.g. {example}")
            if any(item is Ellipsis for item in value):
                raise InputError(f"{path}: {_row_named(ids, row)}: column {name!r} (option "
                                 f"{option}) holds {text[:80]!r}: a numpy array of more than "
                                 f"1 000 {what} that numpy's text cut short with '...'; log "
                                 f"each as a list (`list(array)`), or the log as Parquet")
            value = list(value)
        lists.append(value)
    try:
        return pa.array(lists, pa.list_(pa.float64())) if what == "scores" else pa.array(lists)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as e:
        raise InputError(f"{path}: column {name!r} (option {option}) holds lists of {what} "
                         f"of mixed kinds ({e}); log each list's {what} as " + (
                             "numbers" if what == "scores" else "text, or numbers")) from None


def struct_as_map(column: pa.StructArray) -> pa.MapArray:
    """JSON objects {class: probability}, which Arrow reads as a struct of every class seen,
    as maps holding each row's own classes (a class a row leaves out is not in its map); an
    object with a NaN is no map, as a CSV log's is: a prediction without probabilities.

    >>> rows = pa.array([{"ok": 0.8, "fraud": 0.2}, None, {"ok": 1.0, "fraud": None},
    ...                  {"ok": float("nan"), "fraud": 0.2}])
    >>> struct_as_map(rows).to_pylist()
    [[('ok', 0.8), ('fraud', 0.2)], None, [('ok', 1.0)], None]
    """
    fields = [pc.cast(column.field(i), pa.float64()) for i in range(column.type.num_fields)]
    classes = [column.type.field(i).name for i in range(len(fields))]
    shape = (len(column), len(fields))
    matrix = np.column_stack([f.to_numpy(zero_copy_only=False) for f in fields]) \
        if fields else np.empty(shape)
    absent = np.column_stack([f.is_null().to_numpy(zero_copy_only=False) for f in fields]) \
        if fields else np.empty(shape, dtype=bool)
    valid = ~np.asarray(column.is_null().to_numpy(zero_copy_only=False)) \
        & ~(np.isnan(matrix) & ~absent).any(axis=1)
    given = ~absent & valid[:, None]
    keys = np.broadcast_to(np.array(classes, dtype=object), shape)[given]
    offsets = np.concatenate([[0], np.cumsum(given.sum(axis=1))]).astype(np.int32)
    return pa.MapArray.from_arrays(pa.array(offsets), pa.array(keys, pa.string()),
                                   pa.array(matrix[given], pa.float64()),
                                   mask=pa.array(~valid))
