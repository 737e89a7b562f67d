"""A small reader for MOA's ARFF files (dense rows; `?` is a missing value)."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass


class ArffError(ValueError):
    """An ARFF file that cannot be read, with the file and line."""


@dataclass(frozen=True)
class Attribute:
    name: str
    type: str  # numeric | nominal | string | date
    values: tuple = ()  # nominal values, in header order


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
    inner = spec.strip()[1:-1]
    return tuple(v.strip().strip("'\"") for v in next(csv.reader([inner],
                                                                  skipinitialspace=True)))


def read_arff(path: str) -> tuple[list[Attribute], list[tuple[int, list]]]:
    """Header attributes and data rows `(line number, values)`; numbers parsed, `?` -> None.

    Values that do not parse are returned as `ArffValueError` markers so that the caller can
    dead-letter the row with its line and field instead of failing the whole file.
    """
    attributes: list[Attribute] = []
    rows: list[tuple[int, list]] = []
    in_data = False
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for lineno, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith("%"):
            continue
        if not in_data:
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
                    attributes.append(Attribute(name, "date"))
                else:
                    raise ArffError(f"{path}, line {lineno}: attribute {name!r} has an "
                                    f"unsupported type {kind!r}")
                continue
            if low.startswith("@data"):
                in_data = True
                continue
            raise ArffError(f"{path}, line {lineno}: unexpected header line {line[:60]!r}")
        if line.startswith("{"):
            raise ArffError(f"{path}, line {lineno}: sparse ARFF rows are not supported")
        values = next(csv.reader(io.StringIO(line), skipinitialspace=True, quotechar="'"))
        rows.append((lineno, [v.strip() for v in values]))
    if not attributes:
        raise ArffError(f"{path}: no @attribute lines")
    return attributes, rows


class ArffValueError(ValueError):
    pass


def convert(attribute: Attribute, text: str):
    """One ARFF cell as a Python value; raises ArffValueError if it does not fit the type.

    >>> convert(Attribute("a", "numeric"), "1.5"), convert(Attribute("c", "nominal", ("x",)), "?")
    (1.5, None)
    """
    if text == "?":
        return None
    if attribute.type == "numeric":
        try:
            return float(text)
        except ValueError:
            raise ArffValueError(f"{text!r} is not a number") from None
    if attribute.type == "nominal":
        v = text.strip("'\"")
        if v not in attribute.values:
            raise ArffValueError(f"{v!r} is not one of {list(attribute.values)}")
        return v
    return text.strip("'\"")
