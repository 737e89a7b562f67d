"""MOA itself as a test oracle: its jar, its tasks, and its fading-factor evaluator.

MOA's jar comes from the wheel of CapyMOA on PyPI (the Python front end of MOA; the wheel
carries `capymoa/jar/moa.jar`), downloaded once into the user's cache folder; `MOA_JAR` names
another jar. The tests that use it need Java 11 or newer (`java`, and `javac` for the fading
factor's driver) and are skipped, saying why, where the machine has neither Java nor access to
PyPI. MOA is run as a separate program, never imported or copied.
"""

import contextlib
import hashlib
import io
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pandas as pd
import pytest

CAPYMOA = "capymoa==0.15.1"  # MOA 2024.07.2
DRIVER = Path(__file__).parent / "moa" / "MoaDelayedOracle.java"


def _cache() -> Path:
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(root) / "delayed-eval" / CAPYMOA.replace("==", "-")


@contextlib.contextmanager
def _locked(folder: Path):
    """One test process downloads while the others wait (pytest-xdist runs several)."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "w") as lock:
        try:
            import fcntl
            fcntl.flock(lock, fcntl.LOCK_EX)
        except ImportError:  # (Windows: no lock; a second download only repeats the first)
            pass
        yield


def moa_jar() -> Path:
    """The path of MOA's jar, fetched once; skips the calling test when there is no Java or
    no jar to be had."""
    if shutil.which("java") is None:
        pytest.skip("MOA parity needs Java (java on the PATH)")
    if os.environ.get("MOA_JAR"):
        return Path(os.environ["MOA_JAR"])
    folder = _cache()
    jar = folder / "moa.jar"
    with _locked(folder):
        if not jar.exists():
            with tempfile.TemporaryDirectory() as wheels:
                got = subprocess.run(
                    [sys.executable, "-m", "pip", "download", CAPYMOA, "--no-deps",
                     "--ignore-requires-python", "--only-binary=:all:", "-q", "-d", wheels],
                    capture_output=True, text=True, timeout=600)
                wheel = next(Path(wheels).glob("capymoa-*.whl"), None)
                if got.returncode or wheel is None:
                    pytest.skip(f"MOA's jar could not be fetched from PyPI ({CAPYMOA}): "
                                f"{got.stderr.strip()[-300:]}")
                with zipfile.ZipFile(wheel) as archive, \
                        archive.open("capymoa/jar/moa.jar") as source, \
                        open(folder / "moa.jar.part", "wb") as target:
                    shutil.copyfileobj(source, target)
                os.replace(folder / "moa.jar.part", jar)
    return jar


def _read_measurements(text: str, columns=None) -> pd.DataFrame:
    """MOA's CSV of measurements, indexed by the instance count, percentages as fractions;
    MOA's '?' is NaN."""
    frame = pd.read_csv(io.StringIO(text), header=0 if columns is None else None,
                        names=columns, na_values="?")
    index = frame.columns[0]
    frame.index = frame.pop(index).astype(int)
    for column in frame.columns:
        if "percent" in column:
            frame[column] = frame[column] / 100
    return frame


def moa_task(jar: Path, task: str, folder: Path) -> pd.DataFrame:
    """Run a MOA task (`moa.DoTask TASK -f 1 -d FILE`, a row per instance) and read its rows."""
    dump = folder / f"moa-{hashlib.sha1(task.encode()).hexdigest()[:12]}.csv"
    dump.unlink(missing_ok=True)
    done = subprocess.run(["java", "-cp", str(jar), "moa.DoTask", f"{task} -f 1 -d {dump}"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and dump.exists(), done.stdout[-2000:] + done.stderr[-2000:]
    return _read_measurements(dump.read_text())


def moa_faded(jar: Path, folder: Path, arff: Path, delay: int, alpha: float,
              learner: str) -> pd.DataFrame:
    """MOA's FadingFactorClassificationPerformanceEvaluator (alpha > 0) or its basic one
    (alpha = 0) in MOA's delayed prequential loop (tests/moa/MoaDelayedOracle.java)."""
    if shutil.which("javac") is None:
        pytest.skip("MOA's fading-factor evaluator needs javac (a JDK) for its driver")
    classes = folder / "moa-driver"
    if not (classes / "MoaDelayedOracle.class").exists():
        built = subprocess.run(["javac", "-cp", str(jar), "-d", str(classes), str(DRIVER)],
                               capture_output=True, text=True, timeout=600)
        assert built.returncode == 0, built.stderr
    done = subprocess.run(["java", "-cp", f"{jar}{os.pathsep}{classes}", "MoaDelayedOracle",
                           str(arff), str(delay), repr(alpha), learner],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    names = ["learning evaluation instances", "classified instances",
             "classifications correct (percent)", "Kappa Statistic (percent)",
             "Kappa Temporal Statistic (percent)", "Kappa M Statistic (percent)"]
    return _read_measurements(done.stdout, names)
