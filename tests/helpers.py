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
