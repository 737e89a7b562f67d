"""Small helpers shared by tests."""

import math
import os
import shutil
import sys

import pandas as pd
import pytest
import river
from apache_beam.io.filesystem import BeamIOError, FileMetadata
from apache_beam.io.localfilesystem import LocalFileSystem
from river import linear_model
from river.naive_bayes import GaussianNB

from transforms.models import knn_batch, linear_batch, tree_batch
from transforms.models.specs import exact_knn
from transforms.streams.delays import DelaySpec
from transforms.streams.sources import StreamSpec
from transforms.streams.table_files import EXACT_FLOATS

DATA = os.path.join(os.path.dirname(__file__), "data")

# river 0.22 (the last river for Python 3.10) sums kNN distances, a linear regression's w·x
# and a naive Bayes leaf's votes in other orders: those fast paths stand aside there
# (predict_one answers), and the tests of what only they do are skipped.
FAST_KNN = knn_batch.fits_batch(exact_knn())
FAST_LINEAR_REGRESSION = linear_batch.fits_regression_batch(linear_model.LinearRegression())
FAST_NB_LEAVES = tree_batch.leaves_add_log_densities()


def needs(fast_path: bool):
    """Skip a test of a fast path that the installed river does not allow."""
    return pytest.mark.skipif(not fast_path, reason=f"no such fast path with river "
                                                    f"{river.__version__}")


def without_notices(err: str) -> str:
    """stderr without the notices a --quiet run still prints (`delayed-eval: notice: …`): what
    a test of an error or a threshold reads."""
    return "".join(line for line in err.splitlines(keepends=True)
                   if not line.startswith("delayed-eval: notice: "))


def read_csv(path, **options) -> pd.DataFrame:
    """pandas' CSV reader with each number the float written (pandas 2's default parser may
    be an ulp off, which an exact oracle would see)."""
    return pd.read_csv(path, **(EXACT_FLOATS | options))


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


class FailsOnce(GaussianNB):
    """GaussianNB whose `at`-th learn_one raises the first time any process reaches it (the
    `marker` file remembers): a worker lost in the middle of a bundle, once."""

    def __init__(self, marker: str, at: int = 200):
        super().__init__()
        self.marker = marker
        self.at = at
        self._learned = 0

    def learn_one(self, x, y):
        self._learned += 1
        if self._learned == self.at and not os.path.exists(self.marker):
            open(self.marker, "w").close()
            # Out of memory: the worker's failure, not the model's, so the runner retries.
            raise MemoryError("worker lost (on purpose, once)")
        super().learn_one(x, y)


class RemoteFileSystem(LocalFileSystem):
    """Local files under a `remote://` scheme (`remote:///tmp/x` is `/tmp/x`): Beam's
    FileSystems route such paths here as they route `gs://` and `s3://` ones, so code that
    reads or writes them cannot treat them as local paths. Counts the files it opens."""

    PREFIX = "remote://"
    opened: list = []

    @classmethod
    def scheme(cls):
        return "remote"

    def _local(self, path: str) -> str:
        # The parent's own calls (exists, join, ...) pass local paths back in.
        return path[len(self.PREFIX):] if path.startswith(self.PREFIX) else path

    def _remote(self, metadata: FileMetadata) -> FileMetadata:
        return FileMetadata(self.PREFIX + metadata.path, metadata.size_in_bytes,
                            metadata.last_updated_in_seconds)

    def exists(self, path):
        return super().exists(self._local(path))

    def metadata(self, path):
        return self._remote(super().metadata(self._local(path)))

    def _list(self, dir_or_prefix):
        return (self._remote(m) for m in super()._list(self._local(dir_or_prefix)))

    def open(self, path, *args, **kwargs):
        RemoteFileSystem.opened.append(path)
        return super().open(self._local(path), *args, **kwargs)

    def create(self, path, *args, **kwargs):
        return super().create(self._local(path), *args, **kwargs)

    def mkdirs(self, path):
        return super().mkdirs(self._local(path))

    def size(self, path):
        return super().size(self._local(path))

    def delete(self, paths):
        # (the parent's matches its paths against what it lists, which names them remote://)
        missing = {p: OSError(f"No files found to delete under: {p}") for p in paths
                   if not os.path.exists(self._local(p))}
        if missing:
            raise BeamIOError("Delete operation failed", missing)
        for p in map(self._local, paths):
            if os.path.isdir(p):
                shutil.rmtree(p)
            else:
                os.remove(p)

    def rename(self, sources, destinations):
        return super().rename([self._local(p) for p in sources],
                              [self._local(p) for p in destinations])

    def copy(self, sources, destinations):
        return super().copy([self._local(p) for p in sources],
                            [self._local(p) for p in destinations])


class NonFiniteRegressor:
    """A regressor (river's type) that predicts its feature `v`, or NaN, inf or −inf where
    feature `broken` is 1, 2 or 3, as a broken model might."""

    def __new__(cls):
        from river import base

        class Echo(base.Regressor):
            def learn_one(self, x, y):
                pass

            def predict_one(self, x):
                return {1: math.nan, 2: math.inf, 3: -math.inf}.get(x["broken"], x["v"])

        return Echo()


class FailsOn(GaussianNB):
    """GaussianNB that raises in predict_one on instances whose feature `bad` is 1, and in
    learn_one where it is 2 (a model that cannot take some inputs); `interrupt` raises
    KeyboardInterrupt instead, as Ctrl-C would."""

    def __init__(self, interrupt: bool = False):
        super().__init__()
        self.interrupt = interrupt

    def _check(self, x, code):
        if x.get("bad") == code:
            if self.interrupt:
                raise KeyboardInterrupt
            raise ValueError(f"cannot take bad={code}")

    def predict_one(self, x):
        self._check(x, 1)
        return super().predict_one(x)

    def learn_one(self, x, y):
        self._check(x, 2)
        super().learn_one(x, y)


class PredictsADict(GaussianNB):
    """GaussianNB whose predict_one returns its class probabilities (a common slip)."""

    def predict_one(self, x):
        return self.predict_proba_one(x) or None


class AnswersNothing(GaussianNB):
    """GaussianNB that learns but answers no prediction ({} and None), as a broken model or
    wrapper might."""

    def predict_proba_one(self, x):
        return {}

    def predict_one(self, x):
        return None


class AnswersEveryOther(GaussianNB):
    """GaussianNB that answers no prediction ({} and None) while it has learned an odd number
    of labels, as a model that cannot answer some of the time might."""

    def __init__(self):
        super().__init__()
        self.learned = 0

    def learn_one(self, x, y):
        super().learn_one(x, y)
        self.learned += 1

    def predict_proba_one(self, x):
        return {} if self.learned % 2 else super().predict_proba_one(x)

    def predict_one(self, x):
        return None if self.learned % 2 else super().predict_one(x)


class StopsAnswering(GaussianNB):
    """GaussianNB that answers no prediction once it has learned `after` labels, as a model
    version taken out of service might."""

    def __init__(self, after: int = 100):
        super().__init__()
        self.after = after
        self.learned = 0

    def learn_one(self, x, y):
        super().learn_one(x, y)
        self.learned += 1

    def predict_proba_one(self, x):
        return {} if self.learned >= self.after else super().predict_proba_one(x)

    def predict_one(self, x):
        return None if self.learned >= self.after else super().predict_one(x)


class ScaledProbabilities(GaussianNB):
    """GaussianNB whose class probabilities are `scale` × its own after its first `after`
    answers (scores, or a wrapper's bug); its classes stay GaussianNB's."""

    def __init__(self, scale: float = 1.0, after: int = 0):
        super().__init__()
        self.scale, self.after = scale, after

    def predict_proba_one(self, x):
        self.answers = getattr(self, "answers", 0) + 1
        proba = super().predict_proba_one(x)
        return proba if self.answers <= self.after else \
            {c: p * self.scale for c, p in proba.items()}

    def predict_one(self, x):
        proba = super().predict_proba_one(x)
        return max(proba, key=proba.get) if proba else None


class PredictsText(GaussianNB):
    """GaussianNB answering its class as text (`'True'` for True), as a wrapper might."""

    def predict_one(self, x):
        y = super().predict_one(x)
        return None if y is None else str(y)


class PredictsCodes(GaussianNB):
    """GaussianNB answering 'yes' or 'no' for the labels True and False (a service's codes)."""

    def predict_one(self, x):
        y = super().predict_one(x)
        return None if y is None else ("yes" if y else "no")


class EndsItsProcess(GaussianNB):
    """GaussianNB that ends the process it runs in when it learns (a library's crash)."""

    def learn_one(self, x, y):
        os._exit(3)


class ExitsTheProgram(GaussianNB):
    """GaussianNB that calls sys.exit(0) at its 20th label (a library that exits)."""

    def learn_one(self, x, y):
        self.seen = getattr(self, "seen", 0) + 1
        if self.seen == 20:
            sys.exit(0)
        super().learn_one(x, y)


def waveform_csv(folder, n: int, seed: int) -> tuple[str, list]:
    """river's 3-class Waveform stream written to `folder`/waveform.csv (features and a `label`
    column c0..c2) -> (its path, its labels in row order)."""
    import itertools

    import pandas as pd
    from river import datasets

    rows = [{**x, "label": f"c{y}"}
            for x, y in itertools.islice(datasets.synth.Waveform(seed=seed), n)]
    path = os.path.join(folder, "waveform.csv")
    pd.DataFrame(rows).to_csv(path, index=False)
    return path, [r["label"] for r in rows]
