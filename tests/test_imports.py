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


BEAM_FREE = ["metrics", "metrics.blocks", "transforms", "transforms.vocabulary",
             "transforms.streams", "transforms.streams.sources", "transforms.streams.tables",
             "transforms.streams.arff", "transforms.streams.generators", "transforms.models",
             "transforms.models.specs", "transforms.models.temporal", "transforms.models.batch",
             "transforms.replay", "transforms.replay.engine", "transforms.scoring.plan",
             "transforms.scoring.columns", "transforms.scoring.curves", "pipelines.local"]


def test_the_math_the_readers_the_models_and_the_engine_import_without_beam():
    import subprocess
    import sys

    code = (f"import importlib, sys\nfor m in {BEAM_FREE!r}:\n    importlib.import_module(m)\n"
            "print(sorted(k for k in sys.modules if k.split('.')[0] == 'apache_beam'))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_each_package_lists_its_public_names_and_they_resolve():
    for package in ("metrics", "transforms.streams", "transforms.models", "transforms.replay",
                    "transforms.scoring", "transforms.backfill"):
        module = importlib.import_module(package)
        assert module.__doc__ and module.__all__, package
        for name in module.__all__:
            assert getattr(module, name) is not None, (package, name)


def test_every_public_function_and_class_shows_an_example():
    """Each public function and class of our packages has a docstring with an example (river's
    style), which `--doctest-modules` runs."""
    import ast
    import pathlib

    without = []
    for package in OURS:
        for path in sorted(pathlib.Path(ROOT, package).rglob("*.py")):
            for node in ast.parse(path.read_text(encoding="utf-8")).body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                        and not node.name.startswith("_") \
                        and ">>>" not in (ast.get_docstring(node) or ""):
                    without.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}")
    assert not without, f"public names without an example: {without}"
