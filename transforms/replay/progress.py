"""Progress of the replay: Beam metrics counters on every runner, and periodic progress lines
on stderr where the workers share the user's terminal (local runs).

The counters live in the namespace `delayed-eval`; `job_counters(result)` reads them back when
a job has finished, whichever runner ran it.
"""

from __future__ import annotations

import sys
import time

from apache_beam.metrics import Metrics
from apache_beam.metrics.metric import MetricsFilter

NAMESPACE = "delayed-eval"
# What a drain reports (transforms.replay.engine.COUNTERS plus the change in pending instances).
# (pretrained: rows learned before the evaluation starts, `--pretrain`; shown where not 0)
PROGRESS_COUNTERS = ("instances", "updates", "labels", "dead_letters", "pending", "pretrained")


class ProgressLines:
    """Totals of one replay DoFn instance (all its keys), printed at most every `every`
    seconds (0: at every drain); the rate is the current one, over the time since the last
    line (the first line's: since the DoFn was set up, its start-up included).

    >>> import io
    >>> lines = ProgressLines(every=0.0, stream=io.StringIO())
    >>> lines.add(("s", "m"), {"instances": 10, "labels": 8, "updates": 0, "pending": 2,
    ...                        "dead_letters": 0})
    >>> lines.stream.getvalue().split(" (")[0]
    'progress: 18 events, 8 labels, 2 pending, 0 dead letters'
    >>> lines.stream.getvalue().strip().endswith(" events/s")
    True
    """

    def __init__(self, every: float, stream=None):
        self.every = every
        self.stream = stream
        self.totals = dict.fromkeys(PROGRESS_COUNTERS, 0)
        self.keys: set = set()
        self.last = -float("inf")
        self.since = (time.monotonic(), 0)  # (time, events) of the last line

    def add(self, key, counts: dict) -> None:
        """A drain's counts, kept in the totals."""
        self.keys.add(key)
        for name in PROGRESS_COUNTERS:
            self.totals[name] += counts.get(name, 0)
        self.during(key, {})

    def during(self, key, counts: dict) -> None:
        """A drain under way: its counts so far, shown with the totals (a line if one is due)
        but not kept (`add` keeps the drain's when it ends)."""
        now = time.monotonic()
        if now - self.last >= self.every:
            self.keys.add(key)
            self.last = now
            t = {name: self.totals[name] + counts.get(name, 0) for name in PROGRESS_COUNTERS}
            events = t["instances"] + t["updates"] + t["labels"] + t["pretrained"]
            rate = (events - self.since[1]) / max(now - self.since[0], 1e-9)
            self.since = (now, events)
            print(f"progress: {events:,} events, {t['labels']:,} labels, {t['pending']:,} "
                  f"pending, {t['dead_letters']:,} dead letters ({len(self.keys)} stream × "
                  f"model{'s' if len(self.keys) != 1 else ''}), {rate:,.0f} events/s",
                  file=self.stream or sys.stderr, flush=True)


def report_progress(key, counts: dict, lines: ProgressLines | None) -> None:
    """Count a drain's events in the Beam counters and, if there are `lines`, in them.

    Example
    -------

    >>> report_progress(("s", "m"), {"events": 10, "labels": 4}, None)  # counters only

    """
    for name in PROGRESS_COUNTERS:
        if counts.get(name):
            Metrics.counter(NAMESPACE, name).inc(counts[name])
    if lines is not None:
        lines.add(key, counts)


def job_counters(result) -> dict:
    """The `delayed-eval` counters of a finished job (committed values; attempted where the
    runner reports no committed ones).

    Example
    -------

    >>> job_counters(object())  # a result without metrics: nothing to report
    {}

    """
    out = dict.fromkeys(PROGRESS_COUNTERS, 0)
    try:
        counters = result.metrics().query(MetricsFilter().with_namespace(NAMESPACE))["counters"]
    except Exception:  # a runner without metrics support: report nothing rather than fail
        return {}
    for c in counters:
        value = c.committed if c.committed is not None else c.attempted
        out[c.key.metric.name] = out.get(c.key.metric.name, 0) + int(value or 0)
    return out
