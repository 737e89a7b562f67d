"""Small helpers shared by tests."""

import os

from transforms.delays import DelaySpec
from transforms.sources import StreamSpec

DATA = os.path.join(os.path.dirname(__file__), "data")


def data(name: str) -> str:
    return os.path.join(DATA, name)


def read(spec: str, delay: str = "0"):
    """All events (sorted) and dead letters of a stream spec."""
    items = list(StreamSpec.parse(spec).events(DelaySpec.parse(delay)))
    events = sorted(i for i in items if not isinstance(i, dict))
    dead = [i for i in items if isinstance(i, dict)]
    return events, dead


def brief(events):
    """(t, kind, id, y) of each event, for readable assertions."""
    return [(e[0], e[3], e[4], e[6]) for e in events]


def outcome_rows(outcomes):
    """Outcomes as comparable tuples (re-predictions as lists of (t, value) pairs)."""
    rows = []
    for o in outcomes:
        reps = [] if o.rep_times is None else list(zip(o.rep_times.tolist(),
                                                       o.rep_values.tolist()))
        rows.append((*o[:9], reps))
    return rows


def repredictions(outcome):
    """[(t, value), ...] of one outcome."""
    return outcome_rows([outcome])[0][-1]
