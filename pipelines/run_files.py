"""What a finished run left in its output directory (`RunFiles`), read back for the report and
its figures: the summary, the curves, the stream profiles and the manifest."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from pipelines.results import (check_one_run, load_results, not_a_folder, read_json, read_manifest,
                               whole_streams)

# The measure each figure shows: accuracy for classifiers, MAE for regressors.
PRIMARY = {"classification": "accuracy", "regression": "mae"}


@dataclass
class RunFiles:
    """What a finished run left in its output directory.

    Example
    -------

    >>> import tempfile
    >>> from pipelines.config import RunConfig
    >>> from pipelines.job import run
    >>> out = tempfile.mkdtemp()
    >>> _ = run(RunConfig(streams=['s=synth:SEA{"n": 300, "seed": 1}'], models=["no-change"],
    ...                   delay="20", out=out, curve_every=100, quiet=True))
    >>> files = RunFiles.read(out)
    >>> files.streams, files.models, files.task("no-change"), files.bins
    (['s'], ['no-change'], 'classification', 100)

    """

    # The files `read` and the report read (maturity.csv: a backfill's, in the report).
    READS = ("summary.csv", "curves.parquet", "manifest.json", "profile.json", "maturity.csv",
             "dead_letters.jsonl")

    out: str
    summary: pd.DataFrame  # the whole streams' rows
    curves: pd.DataFrame
    profiles: dict
    manifest: dict
    segments: pd.DataFrame  # the summary rows of --segment slices
    # id(frame) -> (frame, {(stream, model): its rows}), made by `rows` as it is asked
    _keys: dict = field(default_factory=dict, repr=False)

    @classmethod
    def read(cls, out: str) -> RunFiles:
        if not os.path.isdir(out):
            raise FileNotFoundError(f"{out}: {not_a_folder(out)}; give the --out folder of a run")
        missing = [f for f in ("summary.csv", "curves.parquet", "manifest.json")
                   if not os.path.exists(os.path.join(out, f))]
        if missing:
            raise FileNotFoundError(f"{out}: not a finished run (missing {', '.join(missing)})")
        profiles = {}
        if os.path.exists(os.path.join(out, "profile.json")):
            profiles = read_json(os.path.join(out, "profile.json"))
        manifest = read_manifest(out, ("streams", "models"))
        summary, curves = load_results(out), load_results(out, "curves")
        check_one_run(out)  # (profile.json, dead_letters.jsonl, ... too: all of one run)
        return cls(out, whole_streams(summary), whole_streams(curves), profiles, manifest,
                   summary.drop(whole_streams(summary).index))

    @property
    def streams(self) -> list[str]:
        return list(self.manifest["streams"])

    @property
    def models(self) -> list[str]:
        return list(self.manifest["models"])

    @property
    def positive_options(self) -> dict:
        """Per stream, its `positive` option and declared classes (`results.positive_class`)."""
        return {name: {"positive": self.stream_options(name).get("positive"),
                       "declared": s.get("declared_classes")}
                for name, s in self.manifest["streams"].items()}

    def stream_options(self, stream: str) -> dict:
        """A stream's options as the manifest records them ({} when it records none)."""
        return (self.manifest["streams"][stream].get("spec") or {}).get("options") or {}

    def task(self, model: str) -> str:
        return self.manifest["models"][model]["task"]

    @property
    def bins(self) -> int:
        return int(self.manifest.get("bins") or 0)

    @property
    def has_final(self) -> bool:
        """Whether any final prediction was scored: not with --no-final, nor in a backfill of
        a log without final predictions."""
        final = self.summary[self.summary["category"] == "final"]
        return bool((final["n"] > 0).any())

    @property
    def alphas(self) -> list[float]:
        return [float(a) for a in self.manifest.get("config", {}).get("alphas", [])]

    def class_names(self, stream: str) -> list:
        """The stream's class values in index order (as the replay numbered them)."""
        for key, values in self.manifest.get("classes", {}).items():
            if key.split(" / ")[0] == stream and values:
                return values
        return []

    def drift_points(self, stream: str) -> list[int]:
        options = self.stream_options(stream)
        return sorted(int(d["at"]) for d in options.get("drift", []))

    def rows(self, frame: pd.DataFrame, stream, model, category, metric, window="cumulative",
             alpha=None, bin=None) -> pd.DataFrame:
        """The rows of `frame` (summary or curves) for one measure of one key (from the
        frame's keys grouped once: a scan of a run of many streams per figure panel made its
        report quadratic in streams)."""
        held = self._keys.get(id(frame))
        if held is None or held[0] is not frame:
            held = self._keys[id(frame)] = (frame, dict(list(frame.groupby(
                ["stream", "model"], sort=False))))
        own = held[1].get((stream, model), frame.iloc[:0])
        rows = own[(own["category"] == category) & (own["metric"] == metric)
                   & (own["window"] == window)]
        if alpha is not None:
            rows = rows[rows["alpha"] == alpha]
        if bin is not None:
            rows = rows[rows["bin"] == bin]
        return rows

    def curve(self, stream, model, category, metric, window="cumulative", alpha=None,
              bin=None):
        """(labels, values) of one curve, in label order."""
        rows = self.rows(self.curves, stream, model, category, metric, window, alpha,
                         bin).sort_values("labels")
        return rows["labels"].to_numpy(float), rows["value"].to_numpy(float)

    def period_losses(self, stream, model):
        """(labels, loss within each curve period) of a model's initial predictions: the
        error rate of a classifier's, the MAE of a regressor's."""
        classifier = self.task(model) == "classification"
        rows = self.rows(self.curves, stream, model, "initial",
                         "accuracy" if classifier else "mae").sort_values("labels")
        labels, mean = period_mean(rows["labels"].to_numpy(float), rows["value"].to_numpy(float),
                                   rows["n"].to_numpy(float))
        return labels, 1.0 - mean if classifier else mean


def period_mean(labels: np.ndarray, values: np.ndarray, n: np.ndarray | None = None):
    """The mean within each curve period, from a cumulative mean (accuracy, MAE) at the curve
    points over n scored labels: that of the labels between two points is
    (v_k·n_k − v_{k−1}·n_{k−1}) / (n_k − n_{k−1}).

    >>> period_mean(np.array([10, 20]), np.array([0.9, 0.8]))[1].round(6).tolist()
    [0.9, 0.7]
    """
    n = labels if n is None else n
    total = np.nan_to_num(values) * n
    gained = np.diff(np.r_[0.0, total])
    seen = np.diff(np.r_[0.0, n])
    with np.errstate(invalid="ignore", divide="ignore"):
        return labels, gained / seen
