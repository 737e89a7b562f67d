"""Exactly rounded, mergeable float sums.

Beam merges accumulators in whatever order a runner chooses. A plain float sum would then
differ in its last bits between runners; keeping Shewchuk's non-overlapping partials makes the
final value the correctly rounded exact sum, whatever the order of updates and merges.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np


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

    __slots__ = ("partials", "special")

    def __init__(self, partials: list[float] | None = None, special: float = 0.0):
        self.partials = partials if partials is not None else []
        self.special = special  # the sum of the infinite and NaN terms, kept apart

    @classmethod
    def of(cls, value: float) -> ExactSum:
        """The sum of one value, as `add` holds it (an infinite or NaN one kept apart): a
        fading factor's float sum read back as an exact one.

        >>> ExactSum.of(2.5).exact, ExactSum.of(math.inf).value
        (Fraction(5, 2), inf)
        """
        out = cls()
        out.add(value)
        return out

    def __deepcopy__(self, memo) -> ExactSum:
        # Its partials are floats: a copy of the list is a deep copy (scores are copied at
        # every block and curve point, and the generic deep copy cost more than the scoring).
        return ExactSum(self.partials.copy(), self.special)

    def add(self, x: float) -> None:
        if x - x:  # ±inf or NaN: no partial can hold it (inf − inf would poison them)
            self.special += x
            return
        # Shewchuk's algorithm, as in the Python recipe behind math.fsum.
        partials = self.partials
        i = 0
        for y in partials:
            if abs(x) < abs(y):
                x, y = y, x
            hi = x + y
            if hi - hi:  # the sum left the floats: it is ±inf from here on
                self.special += hi
                del partials[i:]
                return
            lo = y - (hi - x)
            if lo:
                partials[i] = lo
                i += 1
            x = hi
        partials[i:] = [x]

    def add_many(self, values) -> None:
        """Add an array of floats exactly, without a Python step per value: each value is
        m·2^(e−53) with an integer m (`np.frexp`); the integers are summed per exponent in
        float64 halves of 26 bits (exact for the 2^24 values of a chunk), the groups combined
        as one Python integer, and that exact sum is added as the few floats that hold it.

        >>> s = ExactSum()
        >>> s.add_many(np.array([1e16, 1.0, -1e16, 0.1]))
        >>> s.value, s.exact == Fraction(1) + Fraction(0.1)
        (1.1, True)
        """
        x = np.asarray(values, dtype=np.float64).ravel()
        finite = np.isfinite(x)
        if not finite.all():
            for v in x[~finite].tolist():
                self.special += v
            x = x[finite]
        x = x[x != 0]
        if not len(x):
            return
        for start in range(0, len(x), _ADD_MANY_CHUNK):
            self._add_exact_integer(*_integer_sum(x[start:start + _ADD_MANY_CHUNK]))

    @staticmethod
    def add_grouped(sums: list, values, groups) -> None:
        """`add_many` for several sums at once: value i goes to `sums[groups[i]]`. One pass
        of numpy over all values (a Python step per group and exponent present, not per
        value); each sum gets exactly what `add_many` of its values would give it.

        >>> sums = [ExactSum(), ExactSum()]
        >>> ExactSum.add_grouped(sums, np.array([1e16, 0.5, 1.0, -1e16]), np.array([0, 1, 0, 0]))
        >>> [s.value for s in sums]
        [1.0, 0.5]
        """
        x = np.asarray(values, dtype=np.float64).ravel()
        groups = np.asarray(groups, dtype=np.int64).ravel()
        finite = np.isfinite(x)
        if not finite.all():
            for g, v in zip(groups[~finite].tolist(), x[~finite].tolist()):
                sums[g].special += v
        keep = finite & (x != 0)
        x, groups = x[keep], groups[keep]
        if not len(x):
            return
        if len(x) > _ADD_MANY_CHUNK:  # the halves' sums would no longer be exact
            for g in np.unique(groups).tolist():
                sums[g].add_many(x[groups == g])
            return
        mantissa, exponent = np.frexp(x)
        m = (mantissa * 2.0 ** 53).astype(np.int64)
        high, low = m >> 26, m & ((1 << 26) - 1)
        # (group, exponent) pairs in group order, exponents ascending within a group: a
        # bincount over the pairs' cells when they are few, no sort
        low_exponent = int(exponent.min())
        span = int(exponent.max()) - low_exponent + 1
        cells = groups * span + (exponent - low_exponent)
        if len(sums) * span <= 4 * len(x) + (1 << 16):
            occupied = np.bincount(cells, minlength=len(sums) * span) > 0
            present = np.flatnonzero(occupied)
            where = (np.cumsum(occupied) - 1)[cells]
        else:
            present, where = np.unique(cells, return_inverse=True)
        highs = np.bincount(where, weights=high.astype(np.float64)).tolist()
        lows = np.bincount(where, weights=low.astype(np.float64)).tolist()
        group_of = (present // span).tolist()
        exponent_of = (present % span + low_exponent).tolist()
        current, base, total = None, 0, 0
        for g, e, h, lo in zip(group_of, exponent_of, highs, lows):
            if g != current:
                if current is not None:
                    sums[current]._add_exact_integer(total, base - 53)
                current, base, total = g, e, 0
            total += ((int(h) << 26) + int(lo)) << (e - base)
        sums[current]._add_exact_integer(total, base - 53)

    def _add_exact_integer(self, total: int, exponent: int) -> None:
        """Add total·2^exponent exactly, as floats of at most 53 bits each."""
        sign, total = (-1 if total < 0 else 1), abs(total)
        while total:
            shift = max(total.bit_length() - 53, 0)
            top = total >> shift
            try:
                self.add(sign * math.ldexp(float(top), exponent + shift))
            except OverflowError:  # beyond the floats: ±inf, as `add` makes it
                self.special += sign * math.inf
                return
            total -= top << shift

    def merge(self, other: ExactSum) -> ExactSum:
        for p in other.partials:
            self.add(p)
        self.special += other.special
        return self

    def negated(self) -> ExactSum:
        """The sum with every term's sign flipped: what subtracting it adds.

        >>> a = ExactSum([0.5, 1e16])
        >>> a.merge(a.negated()).value
        0.0
        """
        return ExactSum([-p for p in self.partials], -self.special)

    @property
    def value(self) -> float:
        return self.special if self.special else math.fsum(self.partials)

    @property
    def exact(self) -> Fraction:
        """The sum without any rounding (the partials add up to it exactly).

        >>> s = ExactSum()
        >>> s.add(1e16); s.add(1.0)  # 10¹⁶ + 1 has no float: the value rounds to 10¹⁶
        >>> s.exact - 10 ** 16, s.value - 1e16
        (Fraction(1, 1), 0.0)
        """
        return sum(map(Fraction, self.partials), Fraction(0))

    def to_dict(self) -> dict:
        return {"partials": list(self.partials), "special": self.special}

    @classmethod
    def from_dict(cls, d: dict) -> ExactSum:
        return cls(list(d["partials"]), d.get("special", 0.0))

    def __repr__(self) -> str:
        return f"ExactSum({self.value!r})"


# Values per call of `_integer_sum`: its per-exponent sums of 26-bit halves stay below 2^53.
_ADD_MANY_CHUNK = 1 << 24


def _integer_sum(x: np.ndarray) -> tuple[int, int]:
    """(T, k) with Σx = T·2^k exactly, for finite non-zero floats x."""
    mantissa, exponent = np.frexp(x)
    m = (mantissa * 2.0 ** 53).astype(np.int64)  # exact: a mantissa has 53 bits
    high, low = m >> 26, m & ((1 << 26) - 1)  # m = high·2^26 + low
    exponents, group = np.unique(exponent, return_inverse=True)
    # Sums of at most 2^24 integers below 2^27 in magnitude: exact in float64.
    highs = np.bincount(group, weights=high.astype(np.float64)).tolist()
    lows = np.bincount(group, weights=low.astype(np.float64)).tolist()
    base = int(exponents[0])
    total = 0
    for e, h, lo in zip(exponents.tolist(), highs, lows):
        total += ((int(h) << 26) + int(lo)) << (e - base)
    return total, base - 53


def exact_squares(x):
    """(hi, lo) with hi + lo = x² exactly, for a float or an array: hi the rounded square, lo
    its rounding error (Dekker's product, with Veltkamp's split; |x| below ~1e150).

    >>> hi, lo = exact_squares(1e9 + 3)
    >>> Fraction(hi) + Fraction(lo) == Fraction(1e9 + 3) ** 2, lo != 0
    (True, True)

    References
    ----------
    Dekker, T. J. (1971). A floating-point technique for extending the available precision.
    Numerische Mathematik 18(3), 224–242.
    """
    with np.errstate(over="ignore", invalid="ignore"):  # beyond: ±inf or NaN, a special term
        hi = x * x
        c = 134217729.0 * x  # 2^27 + 1: splits x into two 26-bit halves
        x_hi = c - (c - x)
        x_lo = x - x_hi
        return hi, ((x_hi * x_hi - hi) + 2 * x_hi * x_lo) + x_lo * x_lo


def ratio(num: float, den: float) -> float:
    """num / den, with 0/0 -> NaN and x/0 -> ±inf (never a silent 0).

    >>> ratio(1, 2), ratio(0, 0), ratio(-1, 0)
    (0.5, nan, -inf)
    """
    if den == 0:
        return math.nan if num == 0 or math.isnan(num) else math.copysign(math.inf, num)
    return num / den


def ratios(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """`ratio` element by element.

    >>> ratios(np.array([1, 0, -1]), np.array([2, 0, 0])).tolist()
    [0.5, nan, -inf]
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        out = num / np.where(den == 0, 1, den)
    zero = den == 0
    return np.where(zero, np.where((num == 0) | np.isnan(num), np.nan,
                                   np.copysign(np.inf, num)), out) if zero.any() else out
