"""`HEAD{json}` specs — streams, models, prediction logs — split in one place (Beam-free)."""

from __future__ import annotations

import json
import re

from transforms.errors import InputError

# What to do when a spec's {json} reached us without its quotes, or split in two: a shell
# (bash) removes the quotes of an unquoted word, and expands {a,b} into two words.
SHELL_QUOTES = ("in a shell, put the whole spec in single quotes (the shell takes away "
                "unquoted quotes, and splits {a,b}), e.g. 'synth:SEA{\"n\": 300}'")

# The largest count an option takes (labels in a window, instances, K): more than any stream
# holds, and within the 64-bit integers the arrays that hold counts use.
LARGEST_COUNT = 10**15


def split_options(text: str, what: str = "stream", error: type = InputError,
                  noun: str = "options") -> tuple[str, dict]:
    """`HEAD{json}` -> (HEAD, the JSON object); `what` and `noun` name the spec's parts in the
    `error` raised when the JSON is invalid or not an object.

    >>> split_options('logs/p{"time": "ts"}')
    ('logs/p', {'time': 'ts'})
    >>> split_options("gaussian-nb")
    ('gaussian-nb', {})
    >>> try:  # the quotes a shell took away
    ...     split_options("synth:SEA{n:300}")
    ... except InputError as e:
    ...     print(str(e).split("; ")[1][:47])
    in a shell, put the whole spec in single quotes
    >>> split_options('synth:SEA{"n": 300, "noise": NaN}')
    Traceback (most recent call last):
    ...
    transforms.errors.InputError: options of stream 'synth:SEA{"n": 300, "noise": NaN}' hold \
NaN, which is no value; write a number
    """
    brace = text.find("{")
    if brace < 0:
        return text.strip(), {}

    def no_value(constant: str):  # (Python's JSON reads them; a model may take an infinity)
        if constant == "NaN" or what != "model":
            raise error(f"{noun} of {what} {text!r} hold {constant}, which is no value; write "
                        f"a number")
        return float(constant)

    try:
        options = json.loads(text[brace:], parse_constant=no_value)
    except json.JSONDecodeError as e:
        unquoted = re.search(r"[{,]\s*[A-Za-z_][\w.-]*\s*:", text[brace:])
        raise error(f"{noun} of {what} {text!r} are not valid JSON: {e}" + (
            f"; {SHELL_QUOTES}" if unquoted else "")) from None
    if not isinstance(options, dict):
        raise error(f"{noun} of {what} {text!r} must be a JSON object")
    return text[:brace].strip(), options


def plain_value(value):
    """`value` with NumPy's numbers and arrays as Python's (lists), inside lists and dicts too,
    as a spec's JSON writes them; a NumPy float as written (float32 0.99 is 0.99).

    >>> import numpy as np
    >>> plain_value({"positive": np.int64(1), "classes": np.array([0, 1]), "a": np.float32(0.99)})
    {'positive': 1, 'classes': [0, 1], 'a': 0.99}
    >>> plain_value(np.array(5)), plain_value(np.timedelta64(90, "s"))
    (5, datetime.timedelta(seconds=90))
    """
    import numpy as np

    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]  # (its NumPy scalar)
    if isinstance(value, dict):
        return {k: plain_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [plain_value(v) for v in value]
    if isinstance(value, np.floating):
        return float(str(value))
    if isinstance(value, np.generic):
        return value.item()
    return value


def named_specs(items, spec_of, what: str = "model") -> list[str]:
    """Specs from what a Python caller gives: one item, a dict {name: item} (`NAME=SPEC`, its
    names checked by `checked_name`), or a list of either; `spec_of` writes one item (a spec,
    or an object as its spec).

    >>> named_specs({"nb": "gaussian-nb", "base": "majority"}, str)
    ['nb=gaussian-nb', 'base=majority']
    >>> named_specs(["majority", {"nb": "gaussian-nb"}], str)
    ['majority', 'nb=gaussian-nb']
    """
    if isinstance(items, dict):
        return [f"{checked_name(name, what)}={spec_of(item)}" for name, item in items.items()]
    if isinstance(items, (list, tuple)):
        return [spec for item in items for spec in named_specs(item, spec_of, what)]
    return [spec_of(items)]


def checked_name(name, what: str) -> str:
    """`name` if it can name a stream or model (`what`) in `NAME=SPEC`: a text, not blank,
    without '=' (which ends the name), a stream's without '/' or '\\' (which tell a path,
    and would be folders of its data's file), a model's without '|' (which joins the steps
    of a pipeline).

    >>> checked_name("fraud-eu", "stream")
    'fraud-eu'
    >>> checked_name("fraud/eu", "stream")
    Traceback (most recent call last):
    ...
    transforms.errors.InputError: stream name 'fraud/eu': a name is a text, not blank, \
without = / \\; name it otherwise, e.g. 'fraud-eu'
    >>> checked_name("scaler|lr", "model")
    Traceback (most recent call last):
    ...
    transforms.errors.InputError: model name 'scaler|lr': a name is a text, not blank, \
without = |; name it otherwise, e.g. 'scaler-lr'
    """
    banned = "=/\\" if what == "stream" else "=|"
    if isinstance(name, str) and name.strip() and not any(c in name for c in banned):
        return name
    example = re.sub(f"[{re.escape(banned)}]", "-", name.strip()) if isinstance(name, str) else ""
    raise InputError(f"{what} name {name!r}: a name is a text, not blank, without "
                     f"{' '.join(banned)}; name it otherwise" +
                     (f", e.g. {example!r}" if example.strip("-") else ""))
