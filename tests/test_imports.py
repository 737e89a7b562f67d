"""Our generic top-level names must not shadow installed modules (or be shadowed by them)."""

import importlib
import os
import pkgutil

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OURS = ("metrics", "transforms", "pipelines", "runners")


def test_top_level_packages_resolve_to_the_intended_ones():
    for name in OURS:
        module = importlib.import_module(name)
        assert os.path.dirname(os.path.dirname(module.__file__)) == ROOT, name
    import apache_beam
    import river

    for module in (apache_beam, river):
        assert "site-packages" in module.__file__ or "dist-packages" in module.__file__


def test_no_module_of_ours_shares_a_name_with_an_installed_top_level_module():
    installed = {m.name for m in pkgutil.iter_modules() if m.module_finder.path != ROOT
                 and not m.module_finder.path.startswith(os.path.join(ROOT, ""))}
    ours = set(OURS) | {"tests", "benchmarks", "examples"}
    for package in OURS:
        ours |= {m.name for m in pkgutil.iter_modules([os.path.join(ROOT, package)])}
    clash = ours & installed - {"tests"}
    assert not clash, f"modules of ours shadow installed ones: {sorted(clash)}"
