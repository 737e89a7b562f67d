"""Property tests draw the same examples on every run (a fixed seed, no example database), so a
CI run's outcome does not depend on chance; a failure found once is kept as an `@example`."""

from hypothesis import settings

settings.register_profile("deterministic", derandomize=True, database=None)
settings.load_profile("deterministic")
