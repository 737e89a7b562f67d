"""The user's mistakes, as one exception family (Beam-free).

Every error a user can fix — a bad input file, configuration, model spec, a model that fails on
the data, an output directory that cannot be written — is a `DelayedEvalError`; the command line
prints it as one line, `delayed-eval: error: WHERE: WHAT; WHAT TO DO`, and exits with status 2.
Anything else is a bug and keeps its traceback (`--debug` shows it).

Raised on a Beam worker, such an error would reach the driver as a runner-specific traceback, so
the DoFns that can raise one (readers, replays) catch it and emit it as data on the `errors`
output (`reports_errors`); the job raises the first one after the pipeline ends, by type, on
every runner alike.
"""

from __future__ import annotations

import difflib
import functools

from transforms.vocabulary import ERRORS  # the output that carries a worker's errors as records


def one_line(error) -> str:
    """An error's (or a text's) message on one line: a library's own may hold line breaks.

    >>> one_line(OSError("Couldn't deserialize thrift: Invalid data\\n"))
    "Couldn't deserialize thrift: Invalid data"
    """
    return " ".join(str(error).split())


def shown_briefly(value, width: int = 60) -> str:
    """A value's repr on one line, cut to `width` characters with "..." where it is longer,
    for a message that names what it refuses (a Series' or a long list's repr would fill it).

    >>> shown_briefly(list(range(30)))
    '[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16...'
    >>> shown_briefly("fraud")
    "'fraud'"
    """
    shown = one_line(repr(value))
    return shown if len(shown) <= width else shown[:width - 3] + "..."


def listed_briefly(items, shown: int = 5, separator: str = ", ") -> str:
    """The first `shown` items joined, and how many more there are, for a message that names
    what it refuses without filling the terminal with a list of hundreds.

    >>> listed_briefly(["s1", "s2"])
    's1, s2'
    >>> listed_briefly([f"s{i}" for i in range(30)], shown=3)
    's0, s1, s2 and 27 more'
    """
    items = [str(item) for item in items]
    rest = len(items) - shown
    return separator.join(items[:shown]) + (f" and {rest} more" if rest > 0 else "")


class DelayedEvalError(Exception):
    """A mistake the user can fix; its message is the one line the command line prints.

    >>> str(InputError("data.csv, row 3, field amount: 'abc' is not a number"))
    "data.csv, row 3, field amount: 'abc' is not a number"
    >>> isinstance(InputError("x"), DelayedEvalError)
    True
    """

    def to_record(self) -> dict:
        """The error as a plain record (what crosses from a worker to the driver)."""
        return {"type": type(self).__name__, "message": str(self)}

    @staticmethod
    def from_record(record: dict) -> DelayedEvalError:
        """The error a worker recorded.

        >>> e = DelayedEvalError.from_record(ModelError("model m: boom").to_record())
        >>> type(e).__name__, str(e)
        ('ModelError', 'model m: boom')
        """
        kinds = {cls.__name__: cls for cls in _family(DelayedEvalError)}
        return kinds.get(record["type"], DelayedEvalError)(record["message"])


def _family(cls) -> list:
    return [cls] + [c for sub in cls.__subclasses__() for c in _family(sub)]


class ConfigError(DelayedEvalError, ValueError):
    """A configuration that cannot run; the message says which field.

    Example
    -------

    >>> isinstance(ConfigError("--bins: 'many' is not a whole number"), DelayedEvalError)
    True

    """


class InputError(DelayedEvalError, ValueError):
    """Input that cannot be read at all; the message names the file, row and field.

    Example
    -------

    >>> str(InputError("trips.csv, row 3, field time: 'x' is not a time"))
    "trips.csv, row 3, field time: 'x' is not a time"

    """


class ModelError(DelayedEvalError):
    """A model that failed on the data (raised in learn_one / predict_one, or returned a
    prediction that is not a single value); the message names model, stream and instance.

    Example
    -------

    >>> str(ModelError("model nb, stream s, instance 7: predict_one raised ValueError"))
    'model nb, stream s, instance 7: predict_one raised ValueError'

    """


class OutputError(DelayedEvalError):
    """The output directory cannot be written.

    Example
    -------

    >>> issubclass(OutputError, DelayedEvalError)
    True

    """


def reports_errors(process):
    """Decorate a DoFn's generator method (process or a timer callback): a `DelayedEvalError`
    it raises is emitted on the `errors` output as a record instead of failing the bundle.

    The element's remaining work is dropped: the job fails with that error once the pipeline
    ends, and publishes nothing.

    Example
    -------

    >>> class Parse:
    ...     @reports_errors
    ...     def process(self, text):
    ...         if not text.isdigit():
    ...             raise InputError(f"{text!r} is not a number")
    ...         yield int(text)
    >>> [getattr(o, "tag", o) for o in Parse().process("12")], [
    ...     (o.tag, o.value["message"]) for o in Parse().process("x")]
    ([12], [('errors', "'x' is not a number")])

    """
    import apache_beam as beam

    @functools.wraps(process)
    def guarded(self, *args, **kwargs):
        try:
            yield from process(self, *args, **kwargs)
        except DelayedEvalError as e:
            yield beam.pvalue.TaggedOutput(ERRORS, e.to_record())

    return guarded


def check_options(where: str, given, known) -> None:
    """Raise an `InputError` naming a spec's options that are not among the `known` ones, with
    the option each was likely meant to be (a typo).

    >>> check_options("stream s", {"label"}, ["label", "time"])  # (all known: nothing)
    >>> check_options("stream s", {"lable"}, ["label", "time"])
    ... # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    transforms.errors.InputError: stream s: unknown option(s) ['lable'] (did you mean
    'label'?); known: ['label', 'time']
    >>> check_options("stream s", {"lable", "tme", "xyz"}, ["label", "time"])
    ... # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    transforms.errors.InputError: stream s: unknown option(s) ['lable', 'tme', 'xyz'] (did you
    mean 'label' for 'lable', 'time' for 'tme'?); known: ['label', 'time']
    """
    unknown = sorted(set(given) - set(known))
    if not unknown:
        return
    meant = {name: close[0] for name in unknown
             for close in [difflib.get_close_matches(name, sorted(known), n=1)] if close}
    hint = "" if not meant else f" (did you mean {meant[unknown[0]]!r}?)" if len(unknown) == 1 \
        else f" (did you mean {', '.join(f'{c!r} for {n!r}' for n, c in meant.items())}?)"
    raise InputError(f"{where}: unknown option(s) {unknown}{hint}; known: {sorted(known)}")
