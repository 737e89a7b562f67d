"""Property tests draw the same examples on every run (a fixed seed, no example database), so a
CI run's outcome does not depend on chance; a failure found once is kept as an `@example`."""

import os
import shutil
import tempfile

from hypothesis import settings

settings.register_profile("deterministic", derandomize=True, database=None)
settings.load_profile("deterministic")


# Module doctests that show a fast path of river 0.26 ("True"), by their names.
_DOCTESTS_OF_FAST_PATHS = {
    "transforms.models.knn_batch.fits_batch": "FAST_KNN",
    "transforms.models.knn_batch.fits_regressor_batch": "FAST_KNN",
    "transforms.models.linear_batch.fits_regression_batch": "FAST_LINEAR_REGRESSION",
    "transforms.models.tree_batch.leaves_add_log_densities": "FAST_NB_LEAVES",
}


def pytest_collection_modifyitems(items):
    """Skip those doctests where the installed river lacks the path (river 0.22, the last for
    Python 3.10), as `helpers.needs` skips the tests of what only a fast path does."""
    from tests import helpers

    for item in items:
        flag = _DOCTESTS_OF_FAST_PATHS.get(item.name)
        if flag is not None:
            item.add_marker(helpers.needs(getattr(helpers, flag)))


def pytest_configure(config):
    """Every temporary folder of the run (doctests' `tempfile.mkdtemp()`, `evaluate` without
    `out`, the processes the tests start) goes in one folder per test process, removed at its
    end, so a test run leaves nothing behind in the system's temporary folder."""
    config.temporary_root = tempfile.mkdtemp(prefix="delayed-eval-tests-")
    os.environ["TMPDIR"] = tempfile.tempdir = config.temporary_root


def pytest_unconfigure(config):
    shutil.rmtree(config.temporary_root, ignore_errors=True)
