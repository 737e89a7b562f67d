"""MOA's ARFF files (dense rows; `?` is a missing value) and MOA-style delayed ARFF as streams."""

from __future__ import annotations

import contextlib
import itertools
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass

from transforms.errors import InputError, shown_briefly
from transforms.records import (INSTANCE, LABEL, RANK_INSTANCE, RANK_LABEL, dead_letter,
                                readable_time)
from transforms.streams.rows import labelled_rows, number_in, parse_time_value
from transforms.streams.table_files import undecodable, without_bom


class ArffError(InputError):
    """An ARFF file that cannot be read, with the file and line.

    Example
    -------

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "s.arff")
    >>> with open(path, "w") as f:
    ...     _ = f.write("@relation s\\n@data\\n1,2\\n")
    >>> try:
    ...     load_arff(path)
    ... except InputError as e:
    ...     print(str(e).split(": ", 1)[1])
    no @attribute lines
    """


@dataclass(frozen=True)
class Attribute:
    """An ARFF attribute: its name, type and, for a nominal one, its values in header order.

    Example
    -------

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "s.arff")
    >>> with open(path, "w") as f:
    ...     _ = f.write("@relation s\\n@attribute a numeric\\n@attribute class {no,yes}\\n"
    ...                 "@data\\n0.5,yes\\n1.5,no\\n")
    >>> [(a.name, a.type, a.values) for a in load_arff(path)[0]]
    [('a', 'numeric', ()), ('class', 'nominal', ('no', 'yes'))]

    """

    name: str
    type: str  # numeric | nominal | string | date
    values: tuple = ()  # nominal values, in header order
    date_format: str | None = None  # a date's, as a strftime pattern (None: ISO 8601)


# Weka writes a date attribute's format as Java's SimpleDateFormat does: letters repeated, text
# in single quotes. Each run of a letter, by its length (the longest that fits), in strftime.
_JAVA_DATE_LETTERS = {"y": ((4, "%Y"), (3, "%Y"), (2, "%y"), (1, "%Y")),
                      "M": ((4, "%B"), (3, "%b"), (1, "%m")), "d": ((1, "%d"),),
                      "H": ((1, "%H"),), "h": ((1, "%I"),), "m": ((1, "%M"),), "s": ((1, "%S"),),
                      "S": ((3, "%f"),), "a": ((1, "%p"),), "E": ((4, "%A"), (1, "%a")),
                      "Z": ((1, "%z"),), "X": ((1, "%z"),)}


def date_format(pattern: str) -> str | None:
    """An ARFF date attribute's format (Java's SimpleDateFormat, as Weka writes it) as a
    strftime pattern; None for Weka's default, ISO 8601 (yyyy-MM-dd'T'HH:mm:ss). Raises
    ValueError for a letter it does not read.

    >>> date_format("dd/MM/yyyy HH:mm"), date_format("yyyy-MM-dd'T'HH:mm:ss")
    ('%d/%m/%Y %H:%M', None)
    >>> date_format("d MMM yy, h:mm a"), date_format("HH:mm:ss.SSS")
    ('%d %b %y, %I:%M %p', '%H:%M:%S.%f')
    >>> date_format("D/yyyy")
    Traceback (most recent call last):
    ...
    ValueError: 'D' in 'D/yyyy' is not read here
    """
    if pattern in ("", "yyyy-MM-dd'T'HH:mm:ss"):
        return None
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        run = len(pattern[i:]) - len(pattern[i:].lstrip(c))
        if c == "'":
            if run >= 2 and run % 2 == 0:  # '' is a quote
                out.append("'" * (run // 2))
                i += run
                continue
            end = pattern.find("'", i + 1)
            if end < 0:
                raise ValueError(f"a quote in {pattern!r} is not closed")
            out.append(pattern[i + 1:end].replace("%", "%%"))
            i = end + 1
            continue
        if c.isalpha():
            code = next((code for length, code in _JAVA_DATE_LETTERS.get(c, ()) if run >= length),
                        None)
            if code is None or (c == "S" and run != 3):  # (milliseconds: SSS alone reads so)
                raise ValueError(f"{c * run!r} in {pattern!r} is not read here")
            out.append(code)
        else:
            out.append((c * run).replace("%", "%%"))
        i += run
    return "".join(out)


def _split_header_value(line: str) -> tuple[str, str]:
    rest = line.split(None, 1)[1].strip() if len(line.split(None, 1)) > 1 else ""
    if rest.startswith(("'", '"')):
        q = rest[0]
        end = rest.index(q, 1)
        return rest[1:end], rest[end + 1:].strip()
    name, _, kind = rest.partition(" ") if " " in rest else rest.partition("\t")
    if not kind and "{" in name:
        name, _, kind = name.partition("{")
        kind = "{" + kind
    return name.strip(), kind.strip()


def _parse_nominal(spec: str) -> tuple:
    return tuple(_fields(spec.strip()[1:-1]))


def _header(path: str, numbered) -> list[Attribute]:
    """The attributes of an ARFF file's header, read from (line number, line) pairs up to and
    including its @data line (a comment, from a '%' outside quotes, left out)."""
    attributes: list[Attribute] = []
    for lineno, raw in numbered:
        line = _without_comment(raw).strip()
        if not line:
            continue
        low = line.lower()
        if low.startswith("@relation"):
            continue
        if low.startswith("@attribute"):
            name, kind = _split_header_value(line)
            lk = kind.lower()
            if kind.startswith("{"):
                attributes.append(Attribute(name, "nominal", _parse_nominal(kind)))
            elif lk in ("numeric", "real", "integer"):
                attributes.append(Attribute(name, "numeric"))
            elif lk.startswith("string"):
                attributes.append(Attribute(name, "string"))
            elif lk.startswith("date"):
                pattern = kind[4:].strip()
                if len(pattern) > 1 and pattern[0] == pattern[-1] and pattern[0] in "'\"":
                    pattern = pattern[1:-1]
                try:
                    attributes.append(Attribute(name, "date", date_format=date_format(pattern)))
                except ValueError as e:
                    raise ArffError(f"{path}, line {lineno}: the date format of attribute "
                                    f"{name!r}: {e}; write its dates as ISO 8601 "
                                    f"(yyyy-MM-dd'T'HH:mm:ss, Weka's default)") from None
            else:
                raise ArffError(f"{path}, line {lineno}: attribute {name!r} has an "
                                f"unsupported type {kind!r}")
            continue
        if low.startswith("@data"):
            break
        raise ArffError(f"{path}, line {lineno}: unexpected header line {line[:60]!r}")
    if not attributes:
        raise ArffError(f"{path}: no @attribute lines")
    return attributes


def _data_rows(path: str, numbered, attributes: list) -> Iterator[tuple[int, list]]:
    """(line number, values as text) of the data lines that follow the header; a sparse
    row's omitted values are 0 (a nominal attribute's first value), as the format has them.
    A comment after the values ends the line, and an instance weight after them (Weka's
    `..., {2}`) is the values' `weight` (`Weighted`), a weight of 1 none."""
    omitted = None
    for lineno, raw in numbered:
        line = _without_comment(raw).strip()
        if not line:
            continue
        weight = _WEIGHT.search(line)
        weighs = None if weight is None else number_in(weight[1])  # (None: no weight)
        if weighs is not None:
            line = line[:weight.start()]
        if line.startswith("{"):
            if omitted is None:
                omitted = [a.values[0] if a.type == "nominal" and a.values else
                           "" if a.type == "string" else "0" for a in attributes]
            values = _sparse_values(path, lineno, line, omitted)
        else:
            values = _fields(line)
        if weighs not in (None, 1.0):
            values = Weighted(values, weight[1])
        yield lineno, values


# Weka's instance weight: `{w}` after a row's values (a sparse row's closing brace too).
_WEIGHT = re.compile(r",\s*\{\s*([^{}\s]*)\s*\}$")


class Weighted(list):
    """A row's values that carry an instance weight other than 1 (`weight`, its text).

    >>> rows = _data_rows("f", enumerate(["0.5, a, {2}", "1.5, b, {1}", "{0 3}, {0.5}"]),
    ...                   [Attribute("x", "numeric"), Attribute("c", "nominal", ["a", "b"])])
    >>> [(values, getattr(values, "weight", None)) for _, values in rows]
    [(['0.5', 'a'], '2'), (['1.5', 'b'], None), (['3', 'a'], '0.5')]
    """

    def __init__(self, values: list, weight: str):
        super().__init__(values)
        self.weight = weight


def _without_comment(line: str) -> str:
    """A line without its comment: from a '%' outside quotes to its end, as Weka's reader
    takes it (its whole text when it has none).

    >>> _without_comment("0.5,'5% off',b  % checked by hand")
    "0.5,'5% off',b  "
    """
    if "%" not in line:
        return line
    quote, i = None, 0
    while i < len(line):
        c = line[i]
        if quote is not None:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "%":
            return line[:i]
        i += 1
    return line


# A value in single or double quotes (Weka's ARFF has both; a backslash escapes the quote or
# itself in it), spaces around it, and the comma after it (or the end).
_QUOTED = re.compile(r"""\s*(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")\s*(,|$)""")


class Quoted(str):
    """A value that was written in quotes: '?' in quotes is the text ?, not a missing value
    (as Weka reads it).

    >>> [is_missing(v) for v in _fields("'?', ?")]
    [False, True]
    """


def is_missing(text: str) -> bool:
    """Whether an ARFF cell is a missing value: ? without quotes.

    >>> [is_missing(v) for v in _fields("?, '?', 0.5")]
    [True, False, False]
    """
    return text == "?" and not isinstance(text, Quoted)


def _fields(line: str) -> list:
    r"""The comma-separated values of a data line or a nominal attribute's list, spaces around
    each left out; a value in quotes, single or double, may hold commas and spaces.

    >>> _fields("0.2, \"dark,blue\" , 'no, thanks', 'it\\'s', ?")
    ['0.2', 'dark,blue', 'no, thanks', "it's", '?']
    """
    if "'" not in line and '"' not in line:  # (most lines: split at once)
        return [v.strip() for v in line.split(",")]
    values, at = [], 0
    while True:
        quoted = _QUOTED.match(line, at)
        if quoted:
            text = quoted[1] if quoted[1] is not None else quoted[2]
            values.append(Quoted(re.sub(r"\\(.)", r"\1", text) if "\\" in text else text))
            at, more = quoted.end(), quoted[3] == ","
        else:
            comma = line.find(",", at)
            values.append((line[at:] if comma < 0 else line[at:comma]).strip())
            at, more = comma + 1, comma >= 0
        if not more:
            return values


def _sparse_values(path: str, lineno: int, line: str, omitted: list) -> list:
    """A sparse row `{index value, ...}` as every attribute's value.

    >>> _sparse_values("f", 9, "{0 1.5, 2 'a b'}", ["0", "0", "x"])
    ['1.5', '0', 'a b']
    """
    values = list(omitted)
    if not line.endswith("}"):
        raise ArffError(f"{path}, line {lineno}: a sparse row must end with '}}'")
    inner, at = line[1:-1], 0
    while inner.strip():
        entry = _SPARSE_ENTRY.match(inner, at)
        index = entry and entry[1]
        if not entry or int(index) >= len(values):
            shown = inner[at:].split(",")[0].strip()
            raise ArffError(f"{path}, line {lineno}: {shown!r} is not 'INDEX VALUE' with "
                            f"INDEX one of the {len(values)} attributes' (0 to "
                            f"{len(values) - 1})")
        values[int(index)] = _fields(entry[2])[0]
        if entry[3] != ",":
            break
        at = entry.end()
    return values


# A sparse row's entry: an index, a value (quoted or not), the comma after it (or the end).
_SPARSE_ENTRY = re.compile(
    r"""\s*(\d+)\s+('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|[^,'"\s][^,]*?)\s*(,|$)""")


def arff_rows(path: str, encoding: str = "utf-8") -> Iterator[tuple[int, list]]:
    """An ARFF file's data rows, (line number, values as text), read as they are taken, so a
    long file need not fit in memory; an unreadable file is an InputError.

    Example
    -------

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "s.arff")
    >>> with open(path, "w") as f:
    ...     _ = f.write("@relation s\\n@attribute a numeric\\n@attribute c string\\n"
    ...                 "@data\\n0.5, 'x, y'\\n% a comment\\n1.5,z\\n")
    >>> list(arff_rows(path))
    [(5, ['0.5', 'x, y']), (7, ['1.5', 'z'])]

    """
    with _as_input_errors(path, encoding), open(path, encoding=without_bom(encoding)) as f:
        numbered = enumerate(f, start=1)
        yield from _data_rows(path, numbered, _header(path, numbered))


@contextlib.contextmanager
def _as_input_errors(path: str, encoding: str) -> Iterator[None]:
    """An ARFF file's own error, or one that cannot be opened or decoded, as an InputError
    naming the file (and the first line that is not `encoding` text)."""
    try:
        yield
    except ArffError as e:
        raise InputError(str(e)) from None
    except UnicodeDecodeError as e:
        raise undecodable(path, encoding, e.reason) from None
    except OSError as e:
        raise InputError(f"{path}: {e}") from None


class ArffValueError(ValueError):
    """A value that its attribute's type cannot hold.

    Example
    -------

    >>> convert(Attribute("c", "nominal", ("no", "yes")), "maybe")
    Traceback (most recent call last):
    ...
    transforms.streams.arff.ArffValueError: 'maybe' is not one of ['no', 'yes']

    """

    pass


def convert(attribute: Attribute, text: str):
    """One ARFF cell as a Python value (a date as seconds since the epoch, a number as Weka
    keeps it); raises ArffValueError if it does not fit the type.

    >>> convert(Attribute("a", "numeric"), "1.5"), convert(Attribute("c", "nominal", ("x",)), "?")
    (1.5, None)
    >>> convert(Attribute("c", "nominal", ("?", "x")), Quoted("?"))  # '?': the text, not missing
    '?'
    >>> convert(Attribute("d", "date"), '"1970-01-01 00:01:00"')
    60.0
    >>> convert(Attribute("d", "date", date_format="%d/%m/%Y"), "02/01/1970")
    86400.0
    """
    if is_missing(text):
        return None
    if attribute.type == "date":
        try:
            return parse_time_value(text, attribute.date_format)
        except ValueError:
            written = "an ISO date" if attribute.date_format is None else \
                f"a date written as {attribute.date_format!r} (its attribute's format), nor " \
                f"an ISO date"
            raise ArffValueError(f"{shown_briefly(text)} is not {written}") from None
    if attribute.type == "numeric":
        try:
            return float(text)
        except ValueError:
            raise ArffValueError(f"{shown_briefly(text)} is not a number") from None
    if attribute.type == "nominal":
        v = text.strip("'\"")
        if v not in attribute.values:
            raise ArffValueError(f"{v!r} is not one of {list(attribute.values)}")
        return v
    return text.strip("'\"")


def typed_or_text(attribute: Attribute, text: str):
    """An ARFF cell as its attribute types it (a numeric class's labels are numbers), or its
    text when it does not fit (which the read makes a dead letter): what the checks before a
    run see of a file's first rows.

    >>> number = Attribute("y", "numeric")
    >>> typed_or_text(number, "1.5"), typed_or_text(number, "x")
    (1.5, 'x')
    >>> typed_or_text(Attribute("c", "nominal", ("a b",)), "'a b'")
    'a b'
    """
    try:
        return convert(attribute, text)
    except ArffValueError:
        return text.strip("'\"")


# -- ARFF files as streams ---------------------------------------------------------------------
def load_arff(path: str, max_rows: int | None = None, encoding: str = "utf-8"):
    """Attributes and rows of an ARFF file (the first `max_rows` rows); an unreadable file is
    an InputError.

    Example
    -------

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "s.arff")
    >>> with open(path, "w") as f:
    ...     _ = f.write("@relation s\\n@attribute a numeric\\n@attribute class {no,yes}\\n"
    ...                 "@data\\n0.5,yes\\n1.5,no\\n")
    >>> attributes, rows = load_arff(path)
    >>> [a.name for a in attributes], rows  # rows: (line number, values as text)
    (['a', 'class'], [(5, ['0.5', 'yes']), (6, ['1.5', 'no'])])

    """
    with _as_input_errors(path, encoding), open(path, encoding=without_bom(encoding)) as f:
        numbered = enumerate(f, start=1)
        attributes = _header(path, numbered)
        return attributes, list(itertools.islice(_data_rows(path, numbered, attributes),
                                                 max_rows))


def encoding_of(spec) -> str:
    """The text encoding of a stream's ARFF file: UTF-8 unless its `encoding` option says.

    >>> from transforms.streams.sources import StreamSpec
    >>> encoding_of(StreamSpec.parse("s.arff")), encoding_of(
    ...     StreamSpec.parse('s.arff{"encoding": "latin-1"}'))
    ('utf-8', 'latin-1')
    """
    return spec.options.get("encoding", "utf-8")


def header_of(spec) -> list[Attribute]:
    """The attributes of a stream's ARFF file.

    >>> import os, tempfile
    >>> from transforms.streams.sources import StreamSpec
    >>> path = os.path.join(tempfile.mkdtemp(), "s.arff")
    >>> with open(path, "w") as f:
    ...     _ = f.write("@relation s\\n@attribute a numeric\\n@attribute class {no,yes}\\n"
    ...                 "@data\\n0.5,yes\\n")
    >>> [a.name for a in header_of(StreamSpec.parse(path))]
    ['a', 'class']
    """
    return load_arff(spec.source, max_rows=0, encoding=encoding_of(spec))[0]


def arff_class_index(spec, attrs) -> int:
    """The class attribute's position: the `target` option's, else the last attribute.

    Example
    -------

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "s.arff")
    >>> with open(path, "w") as f:
    ...     _ = f.write("@relation s\\n@attribute a numeric\\n@attribute class {no,yes}\\n"
    ...                 "@data\\n0.5,yes\\n1.5,no\\n")
    >>> from transforms.streams.sources import StreamSpec
    >>> attributes = load_arff(path)[0]
    >>> arff_class_index(StreamSpec.parse(path), attributes), arff_class_index(
    ...     StreamSpec.parse(path + '{"target": "a"}'), attributes)
    (1, 0)

    """
    target = spec.options.get("target")
    if target is not None:
        names = [a.name for a in attrs]
        if target not in names:
            raise InputError(f"{spec.source}: class attribute {target!r} not found; attributes "
                             f"are {names}")
        return names.index(target)
    # MOA-style delayed ARFF: the two attributes after the class are instance id and timestamp.
    return len(attrs) - (3 if spec.options.get("delayed") else 1)


def instance_attributes(spec, attrs: list[Attribute]) -> list[int]:
    """The indices of the attributes an instance has: all but the class (and a delayed ARFF's
    instance id and timestamp after it), whether a model sees them or not.

    >>> from transforms.streams.sources import StreamSpec
    >>> attrs = [Attribute(n, "numeric") for n in ("a", "b", "class", "id", "ts")]
    >>> instance_attributes(StreamSpec.parse('s.arff{"delayed": true}'), attrs)
    [0, 1]
    """
    ci = arff_class_index(spec, attrs)
    delayed = bool(spec.options.get("delayed"))
    return [i for i in range(len(attrs)) if i != ci and not (delayed and i > ci)]


def check_arff_options(spec, attrs: list[Attribute]) -> None:
    """The stream options an ARFF file takes: a table's column options name nothing in it,
    and `features` names its attributes.

    >>> from transforms.streams.sources import StreamSpec
    >>> attrs = [Attribute("a", "numeric"), Attribute("class", "nominal", ("x", "y"))]
    >>> check_arff_options(StreamSpec.parse('s.arff{"label": "class"}'), attrs)
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    transforms.errors.InputError: s.arff: an ARFF file's class is ...; leave out label
    """
    o = spec.options
    columns = sorted({"id", "time", "kind", "label", "label_time", "label_id", "labels"} & set(o))
    if columns:
        raise InputError(f"{spec.source}: an ARFF file's class is its last attribute or the one "
                         f'{{"target": ...}} names; leave out {", ".join(columns)}')
    names = [a.name for a in attrs]
    unknown = [f for f in o.get("features") or [] if f not in names]
    if unknown:
        raise InputError(f"{spec.source}: feature attribute(s) {unknown} not found; attributes "
                         f"are {names}")


def arff_events(spec, delay, checks) -> Iterator:
    """Events of an ARFF stream: labelled rows (delay model) or MOA-style delayed ARFF.

    Example
    -------

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "s.arff")
    >>> with open(path, "w") as f:
    ...     _ = f.write("@relation s\\n@attribute a numeric\\n@attribute class {no,yes}\\n"
    ...                 "@data\\n0.5,yes\\n1.5,no\\n")
    >>> from transforms.streams.delays import DelaySpec
    >>> from transforms.streams.rows import Checks
    >>> from transforms.streams.sources import StreamSpec
    >>> spec = StreamSpec.parse(path)
    >>> [(e[3], e[6]) for e in arff_events(spec, DelaySpec.parse("1"), Checks(spec))]
    [('instance', None), ('label', 'yes'), ('instance', None), ('label', 'no')]

    """
    attrs, rows = header_of(spec), arff_rows(spec.source, encoding_of(spec))
    ci = arff_class_index(spec, attrs)
    delayed = bool(spec.options.get("delayed"))
    feature_idx = instance_attributes(spec, attrs)
    names = [a.name for a in attrs]
    # A row's own delay (`--delay column:NAME`), known only when its label comes: no feature.
    delay_idx = names.index(delay.column) \
        if delay.kind == "column" and not delayed and delay.column in names else None
    if "features" in spec.options:  # (`arff_features` checked the names)
        wanted = set(spec.options["features"] or [])
        feature_idx = [i for i in feature_idx if attrs[i].name in wanted]
    feature_idx = [i for i in feature_idx if i != delay_idx]
    # Attributes read only to segment by (the engine takes them out of the features): as
    # they are, None where missing.
    segment_idx = [i for i, a in enumerate(attrs) if a.name in spec.segment_only]

    def parse(lineno, values):
        if isinstance(values, Weighted):
            return dead_letter(spec.name, f"instance weight {values.weight} (Weka's weighted "
                               f"instances): every instance weighs 1 here; remove the weights "
                               f"to evaluate such rows unweighted", file=spec.source,
                               row=lineno, record=list(values))
        if len(values) != len(attrs):
            return dead_letter(spec.name, f"{len(values)} values for {len(attrs)} attributes",
                               file=spec.source, row=lineno, record=values)
        def cell(i):  # -> (the i-th value, None), or (None, its dead letter)
            try:
                return convert(attrs[i], values[i]), None
            except ArffValueError as e:
                return None, dead_letter(spec.name, str(e), file=spec.source, row=lineno,
                                         field=attrs[i].name, record=values)

        x = {}
        for i in feature_idx:
            v, dead = cell(i)
            if dead:
                return dead
            if v is None:
                continue  # missing value: river models take sparse dicts
            if isinstance(v, float) and not math.isfinite(v):
                return dead_letter(spec.name, f"feature is {v}", file=spec.source, row=lineno,
                                   field=attrs[i].name, record=values)
            x[attrs[i].name] = v
        for i in segment_idx:
            x[attrs[i].name], dead = cell(i)
            if dead:
                return dead
        y, dead = cell(ci)
        if dead:
            return dead
        own_delay = None
        if delay_idx is not None:  # ('?' is none; a value its type refuses, as written)
            own_delay, unread = cell(delay_idx)
            own_delay = values[delay_idx] if unread else own_delay
        return x, y, own_delay

    if not delayed:
        checks.numbered_ids()  # a row's id is its number: unique, nothing to remember

        def labelled():
            for i, (lineno, values) in enumerate(rows):
                parsed = parse(lineno, values)
                if isinstance(parsed, dict):
                    yield parsed
                    continue
                yield (spec.source, lineno, i, float(i), parsed[0], parsed[1], None, parsed[2])
        yield from labelled_rows(spec, labelled(), delay, checks)
        return

    instance_t: dict = {}
    for seq, (lineno, values) in enumerate(rows):
        parsed = parse(lineno, values)
        if isinstance(parsed, dict):
            yield parsed
            continue
        x, y, _ = parsed
        if checks.where is not None:
            checks.found(seq, spec.source, lineno)
        key = values[ci + 1].strip("'\"")
        try:
            t = parse_time_value(values[ci + 2], attrs[ci + 2].date_format)
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
            yield dead_letter(spec.name, f"label at {readable_time(t)} is earlier than its "
                              f"instance at {readable_time(instance_t[key])}", file=spec.source,
                              row=lineno, field=attrs[ci + 2].name, record=values)
        else:
            yield (t, RANK_LABEL, seq, LABEL, key, x, y)
