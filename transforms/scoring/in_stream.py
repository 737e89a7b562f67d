"""Scoring a stream's models, and comparing them, as the per-stream replay drains them.

The per-stream replay drains every model of a stream over the same events in one place, in
label order. So the scores need no shuffle: each drain's outcomes go straight into each model's
`InOrderScores`, and every pair's joined losses (`PairBlocks`) into the pair's `InOrderCurves`;
each curve point's rows leave as soon as later labels pass it. Memory holds the open blocks and
each model's last max(w) outcomes — not the stream's blocks, not its curve rows — so a long
stream runs in constant memory. The rows are the block pipeline's (`ScoreOutcomes`,
`CompareModels`): the same functions, fed in order.
"""

from __future__ import annotations

import bisect
import itertools
from dataclasses import dataclass

from transforms.records import segment_batches
from transforms.scoring.comparison import PairBlocks, as_comparison
from transforms.scoring.curves import InOrderCurves, InOrderScores
from transforms.scoring.plan import ScoringPlan
from transforms.vocabulary import COMPARISON, pair_name

# The curve points of a drain scored at a time (`StreamScoring.slices`): a drain's rows are
# held as dicts (~1 KB each) until they are routed, and with a curve point every label a drain
# of 20 000 labels made 4 million of them.
POINTS_AT_ONCE = 64


@dataclass(frozen=True)
class StreamScores:
    """What to score for each stream: the models' tasks and the plan. `start` one per stream.

    Example
    -------

    >>> from transforms.records import Outcome
    >>> from transforms.scoring.plan import ScoringPlan
    >>> scoring = StreamScores({"a": "classification", "b": "classification"},
    ...                        ScoringPlan(final=False)).start("s", ["a", "b"])
    >>> def outcomes(predictions):
    ...     return [Outcome(n, n, 0.0, n, 1, 1, 1, p, None) for n, p in enumerate(predictions, 1)]
    >>> rows = scoring.add({"a": outcomes([1, 1, 0]), "b": outcomes([0, 0, 0])}) + scoring.finish()
    >>> sorted({r["model"] for _, r in rows})
    ['a', 'a vs b', 'b']

    """

    tasks: dict
    plan: ScoringPlan

    def start(self, stream: str, models) -> StreamScoring:
        return StreamScoring(stream, list(models), self.tasks, self.plan.for_stream(stream))


class StreamScoring:
    """One stream's scores: `add({model: outcomes of one drain})` (the same labels for every
    model, in label order) and `finish()` return (is_last, row) pairs.

    >>> from transforms.records import Outcome
    >>> scoring = StreamScores({"a": "classification", "b": "classification"},
    ...                        ScoringPlan(final=False)).start("s", ["a", "b"])
    >>> rows = scoring.add({m: [Outcome(n, n, 0.0, n, 1, 1, 1, p, None) for n, p in
    ...                         [(1, 1), (2, int(m == "a"))]] for m in "ab"}) + scoring.finish()
    >>> sorted((r["model"], r["category"], r["value"]) for _, r in rows
    ...        if r["metric"] in ("accuracy", "mcnemar"))
    [('a', 'initial', 1.0), ('a vs b', 'comparison', -1.0), ('b', 'initial', 0.5)]
    """

    def __init__(self, stream: str, models: list, tasks: dict, plan: ScoringPlan):
        self.stream, self.plan, self.tasks = stream, plan, tasks
        self.segments: dict = {}  # segment's stream key -> its StreamScoring
        self.pair_blocks = PairBlocks(tasks, plan)
        self.pairs = {pair_name(a, b): InOrderCurves((stream, pair_name(a, b)), COMPARISON,
                                                     plan)
                      for a, b in self.pair_blocks.pairs(models)}
        keep = self.pair_blocks.keep if self.pairs else 0  # (the pairs' windows at the end)
        self.models = {m: InOrderScores((stream, m), tasks[m], plan, keep) for m in models}

    def slices(self, outcomes: dict) -> list[dict]:
        """A drain's outcomes ({model: outcomes}) in slices of at most `POINTS_AT_ONCE` curve
        points' labels, each with every model's outcomes of the same labels, in label order:
        `add` each in turn and route its rows before the next (the rows are those of `add`ing
        the whole drain).

        >>> from transforms.records import Outcome
        >>> scoring = StreamScores({"a": "classification"}, ScoringPlan(curve_every=1)).start(
        ...     "s", ["a"])
        >>> drain = {"a": [Outcome(n, n, 0.0, n, 1, 1, 1, 1, 1) for n in range(1, 201)]}
        >>> [len(part["a"]) for part in scoring.slices(drain)]
        [64, 64, 64, 8]
        """
        # Cut at label times, which every model's outcomes share (not every model numbers the
        # labels alike: one may have set some aside); labels of one time stay together.
        times = sorted(o.t_label for o in max(outcomes.values(), key=len, default=[]))
        size = self.plan.curve_every * POINTS_AT_ONCE
        if len(times) <= size:
            return [outcomes]
        cuts = sorted(set(times[size::size]))  # each later slice's first label time
        parts: list = [{m: [] for m in outcomes} for _ in range(len(cuts) + 1)]
        for model, batch in outcomes.items():
            for o in batch:
                parts[bisect.bisect_right(cuts, o.t_label)][model].append(o)
        return parts

    def add(self, outcomes: dict) -> list:
        rows = self._add(outcomes)
        # Each segment is a stream of its own (`segment_batches`), scored as it comes.
        slices: dict = {}
        for model, batch in outcomes.items():
            for (key, _), part in itertools.islice(segment_batches((self.stream, model), batch),
                                                  1, None):
                slices.setdefault(key, {})[model] = part
        for key, parts in slices.items():
            scoring = self.segments.get(key)
            if scoring is None:
                scoring = self.segments[key] = StreamScoring(key, list(self.models), self.tasks,
                                                             self.plan)
            rows += scoring.add({m: parts.get(m, []) for m in self.models})
        return rows

    def _add(self, outcomes: dict) -> list:
        rows = [r for m, scores in self.models.items() for r in scores.add(outcomes[m])]
        if self.pairs:
            partials: dict = {pair: {} for pair in self.pairs}
            for (_, pair, kind, axis, end), block in self.pair_blocks(self.stream, outcomes):
                partials[pair][(kind, axis, end)] = block
            for pair, curves in self.pairs.items():
                rows += as_comparison(curves.add(partials[pair]), self.plan)
        return rows

    def finish(self) -> list:
        rows = [r for scores in self.models.values() for r in scores.finish()]
        if self.pairs:
            lasts = [(m, scores.last) for m, scores in self.models.items()]
            tails: dict = {pair: {} for pair in self.pairs}
            for (_, pair, kind, _), tail in self.pair_blocks.tails(self.stream, lasts):
                tails[pair][kind] = tail
            for pair, curves in self.pairs.items():
                rows += as_comparison(curves.finish(tails[pair]), self.plan)
        for scoring in self.segments.values():
            rows += scoring.finish()
        return rows
