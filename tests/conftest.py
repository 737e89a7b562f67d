"""Property tests draw the same examples on every run (a fixed seed, no example database), so a
CI run's outcome does not depend on chance; a failure found once is kept as an `@example`."""

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
