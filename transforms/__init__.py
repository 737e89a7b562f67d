"""The evaluation's steps, grouped by role.

- `transforms.streams`: what a `--stream` spec names (files, ARFF, river generators), label delays,
  and reading a stream into time-stamped events (`ReadStreams`).
- `transforms.models`: model specs and the MOA baselines, the temporal-dependence wrappers, and
  the exact vectorised predictors behind re-evaluation.
- `transforms.replay`: the ordered replay of one (stream, model) key (`ReplayEngine`, plain
  Python), re-prediction policies, and the Beam transforms that run it per key or per stream.
- `transforms.scoring`: outcomes into measures, comparisons, drift alarms and stream profiles.
- `transforms.backfill`: scoring a deployed model's prediction log against its instance and label
  logs.

The data model (`records`), the errors users see (`errors`) and the `NAME{json}` spec parser
(`specs`) are shared by all of them. Importing a package does not import Beam: its Beam transforms
are loaded when first used, so the readers, the models and the replay engine work without it.
"""

from __future__ import annotations

import importlib


def lazy_exports(package: str, where: dict[str, str]):
    """A module-level `__getattr__` for `package` that imports each public name from its module
    on first use (PEP 562), so importing the package stays light.

    >>> getattr_ = lazy_exports("transforms", {"ModelSpec": "models.specs"})
    >>> getattr_("ModelSpec").__name__
    'ModelSpec'
    """

    def __getattr__(name: str):
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{where[name]}"), name)

    return __getattr__
