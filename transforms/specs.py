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
    """
    brace = text.find("{")
    if brace < 0:
        return text.strip(), {}
    try:
        options = json.loads(text[brace:])
    except json.JSONDecodeError as e:
        unquoted = re.search(r"[{,]\s*[A-Za-z_][\w.-]*\s*:", text[brace:])
        raise error(f"{noun} of {what} {text!r} are not valid JSON: {e}" + (
            f"; {SHELL_QUOTES}" if unquoted else "")) from None
    if not isinstance(options, dict):
        raise error(f"{noun} of {what} {text!r} must be a JSON object")
    return text[:brace].strip(), options


def named_specs(items, spec_of) -> list[str]:
    """Specs from what a Python caller gives: one item, a dict {name: item} (`NAME=SPEC`), or
    a list of either; `spec_of` writes one item (a spec, or an object as its spec).

    >>> named_specs({"nb": "gaussian-nb", "base": "majority"}, str)
    ['nb=gaussian-nb', 'base=majority']
    >>> named_specs(["majority", {"nb": "gaussian-nb"}], str)
    ['majority', 'nb=gaussian-nb']
    """
    if isinstance(items, dict):
        return [f"{name}={spec_of(item)}" for name, item in items.items()]
    if isinstance(items, (list, tuple)):
        return [spec for item in items for spec in named_specs(item, spec_of)]
    return [spec_of(items)]
