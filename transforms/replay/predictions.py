"""The replay's prediction log: every initial, re-evaluated and final prediction of one drain,
as compact columns (class indices, kind codes) until they are written."""

from __future__ import annotations

import math

import numpy as np

from transforms.vocabulary import PREDICTION_KINDS

_KIND_CODE = {kind: code for code, kind in enumerate(PREDICTION_KINDS)}


class PredictionLog:
    """The predictions a drain made, as columns. An instance's re-predictions are logged with
    its label (with K=1 re-evaluation they are ~delay per instance, so they stay arrays).

    `columns()` gives `ids` (one entry per logged instance or prediction) and per prediction
    `row_id` (index into ids), `kind` (code into `PREDICTION_KINDS`), `t`, `value` (class
    index with −1 for none, or float with NaN for none) and, when any prediction kept its
    class probabilities, `proba` (predictions × classes, a vector over class indices per
    prediction, NaN rows for none) and `proba_width` (the length of each prediction's
    vector when it was made: classes seen later are not named in its map; 0 for none).

    >>> log = PredictionLog(classification=True)
    >>> log.one("a", "initial", 0.0, 1)
    >>> log.series("a", "re-prediction", np.array([2.0, 3.0]), np.array([0, -1]))
    >>> [(p[0], p[1], p[3]) for p in log.tuples(["x", "y"])]
    [('a', 'initial', 'y'), ('a', 're-prediction', 'x'), ('a', 're-prediction', None)]
    """

    def __init__(self, classification: bool = True, level: str = "all"):
        self.dtype = np.int64 if classification else np.float64
        self.missing = -1 if classification else math.nan
        self.level = level  # all | initial-final | none
        self._entries: list = []  # (id, kind code, times, values): scalars or arrays
        # entry index -> class probabilities: a vector (one prediction), a matrix (a series)
        self._probas: dict = {}

    def one(self, id, kind: str, t: float, value, proba=None) -> None:
        if self.level != "none":
            if proba is not None:
                self._probas[len(self._entries)] = proba
            self._entries.append((id, _KIND_CODE[kind], t,
                                  self.missing if value is None else value))

    def series(self, id, kind: str, times: np.ndarray, values: np.ndarray, proba=None) -> None:
        if self.level == "all":
            if proba is not None:
                self._probas[len(self._entries)] = proba
            self._entries.append((id, _KIND_CODE[kind], times, values))

    def columns(self) -> dict:
        """{"ids", "row_id", "kind", "t", "value"[, "proba"]} arrays (see the class
        docstring)."""
        # One numpy call per column for the single predictions (a drain's initial and final
        # predictions are most of them), a slice assignment per series.
        entries = self._entries
        ids = np.empty(len(entries), dtype=object)
        ids[:] = [e[0] for e in entries]
        series = [i for i, e in enumerate(entries) if isinstance(e[2], np.ndarray)]
        counts = np.ones(len(entries), dtype=np.int64)
        counts[series] = [entries[i][2].size for i in series]
        starts = np.cumsum(counts) - counts
        single = np.ones(len(entries), dtype=bool)
        single[series] = False
        t = np.empty(int(counts.sum()), dtype=np.float64)
        value = np.empty(len(t), dtype=self.dtype)
        at = starts[single]
        t[at] = [e[2] for e, one in zip(entries, single.tolist()) if one]
        value[at] = [e[3] for e, one in zip(entries, single.tolist()) if one]
        for i in series:
            t[starts[i]:starts[i] + counts[i]] = entries[i][2]
            value[starts[i]:starts[i] + counts[i]] = entries[i][3]
        extra = {}
        if self._probas:
            # vectors' width -> (first rows, row counts, vectors or matrices), a single
            # prediction's vectors apart from a series' matrices, each kind stacked at once
            by_width: dict = {}
            in_series = set(series)
            for i, p in self._probas.items():
                p = np.asarray(p, dtype=np.float64)
                if i in in_series:
                    p = p.reshape(counts[i], -1)
                group = by_width.setdefault((p.shape[-1], p.ndim), ([], [], []))
                group[0].append(starts[i])
                group[1].append(counts[i])
                group[2].append(p)
            proba = extra["proba"] = np.full((len(t), max(w for w, _ in by_width)), math.nan)
            widths = extra["proba_width"] = np.zeros(len(proba), dtype=np.int32)
            for (w, ndim), (firsts, sizes, arrays) in by_width.items():
                sizes = np.array(sizes, dtype=np.int64)
                rows = np.repeat(np.array(firsts, dtype=np.int64) - np.cumsum(sizes) + sizes,
                                 sizes) + np.arange(int(sizes.sum()))
                p = np.array(arrays) if ndim == 1 else np.concatenate(arrays)
                proba[rows, :w] = p
                widths[rows] = np.where(np.isnan(p).any(axis=1), 0, w)
        return {**extra, "ids": ids, "row_id": np.repeat(np.arange(len(entries)), counts),
                "kind": np.repeat(np.array([e[1] for e in entries], dtype=np.uint8), counts),
                "t": t, "value": value}

    def tuples(self, classes: list | None = None) -> list:
        """(id, kind, t, prediction) rows; `classes` maps class indices back to labels."""
        cols = self.columns()
        out = []
        for row_id, kind, t, v in zip(cols["row_id"].tolist(), cols["kind"].tolist(),
                                      cols["t"].tolist(), cols["value"].tolist()):
            if classes is not None:
                v = None if v == -1 else classes[v]
            elif math.isnan(v):
                v = None
            out.append((cols["ids"][row_id], PREDICTION_KINDS[kind], t, v))
        return out
