"""Exactly rounded, mergeable float sums.

Beam merges accumulators in whatever order a runner chooses. A plain float sum would then
differ in its last bits between runners; keeping Shewchuk's non-overlapping partials makes the
final value the correctly rounded exact sum, whatever the order of updates and merges.
"""

from __future__ import annotations

import math


class ExactSum:
    """A float sum whose value does not depend on the order of additions or merges.

    >>> a, b = ExactSum(), ExactSum()
    >>> for v in [1e16, 1.0, -1e16]:
    ...     a.add(v)
    >>> b.add(0.1)
    >>> a.merge(b).value
    1.1
    >>> sum([1e16, 1.0, -1e16, 0.1])  # what a plain sum gives
    0.1

    References
    ----------
    Shewchuk, J. R. (1997). Adaptive precision floating-point arithmetic and fast
    robust geometric predicates. Discrete & Computational Geometry 18(3), 305–363.
    """

    __slots__ = ("partials",)

    def __init__(self, partials: list[float] | None = None):
        self.partials = partials if partials is not None else []

    def add(self, x: float) -> None:
        # Shewchuk's algorithm, as in the Python recipe behind math.fsum.
        partials = self.partials
        i = 0
        for y in partials:
            if abs(x) < abs(y):
                x, y = y, x
            hi = x + y
            lo = y - (hi - x)
            if lo:
                partials[i] = lo
                i += 1
            x = hi
        partials[i:] = [x]

    def merge(self, other: ExactSum) -> ExactSum:
        for p in other.partials:
            self.add(p)
        return self

    @property
    def value(self) -> float:
        return math.fsum(self.partials)

    def to_dict(self) -> dict:
        return {"partials": list(self.partials)}

    @classmethod
    def from_dict(cls, d: dict) -> ExactSum:
        return cls(list(d["partials"]))

    def __repr__(self) -> str:
        return f"ExactSum({self.value!r})"


def ratio(num: float, den: float) -> float:
    """num / den, with 0/0 -> NaN and x/0 -> ±inf (never a silent 0).

    >>> ratio(1, 2), ratio(0, 0), ratio(-1, 0)
    (0.5, nan, -inf)
    """
    if den == 0:
        return math.nan if num == 0 or math.isnan(num) else math.copysign(math.inf, num)
    return num / den
