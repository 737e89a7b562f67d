"""MOA itself as a test oracle: its jar, its tasks, and its fading-factor evaluator.

MOA's jar comes from the wheel of CapyMOA on PyPI (the Python front end of MOA; the wheel
carries `capymoa/jar/moa.jar`), downloaded once into the user's cache folder; `MOA_JAR` names
another jar. The tests that use it need Java 11 or newer (`java`, and `javac` for the driver
that runs them in one process and builds the fading-factor evaluator) and are skipped, saying
why, where the machine has neither Java nor access to PyPI. MOA is run as a separate program,
never imported or copied.
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


def _driver(jar: Path) -> Path:
    """The folder of the driver's classes, compiled once for its source and the jar."""
    source = DRIVER.read_bytes() + str(jar).encode()
    classes = _cache() / f"driver-{hashlib.sha1(source).hexdigest()[:12]}"
    with _locked(_cache()):
        if not (classes / "MoaDelayedOracle.class").exists():
            built = subprocess.run(["javac", "-cp", str(jar), "-d", f"{classes}.part",
                                    str(DRIVER)], capture_output=True, text=True, timeout=600)
            assert built.returncode == 0, built.stderr
            os.replace(f"{classes}.part", classes)
    return classes


def moa_runs(jar: Path, folder: Path, jobs: list) -> list:
    """MOA's tables for `jobs`, all run in one Java process (a JVM's start costs about a
    second; tests/moa/MoaDelayedOracle.java). A job is ("task", TASK): a MOA task as
    `moa.DoTask` takes it, its rows per instance (`-f 1 -d FILE` added), or ("faded", ARFF,
    DELAY, ALPHA, LEARNER): MOA's FadingFactorClassificationPerformanceEvaluator (ALPHA > 0) or
    its basic one (ALPHA = 0) in MOA's delayed prequential loop. Without javac (a JDK) tasks
    are run by `moa.DoTask` one at a time and a faded job skips the test."""
    dumps = [folder / f"moa-{hashlib.sha1(repr(job).encode()).hexdigest()[:12]}.csv"
             for job in jobs]
    for dump in dumps:
        dump.unlink(missing_ok=True)
    if shutil.which("javac") is None:
        if any(job[0] == "faded" for job in jobs):
            pytest.skip("MOA's fading-factor evaluator needs javac (a JDK) for its driver")
        calls = [["java", "-cp", str(jar), "moa.DoTask", f"{task} -f 1 -d {dump}"]
                 for (_, task), dump in zip(jobs, dumps)]
    else:
        classes = _driver(jar)
        arguments = []
        for job, dump in zip(jobs, dumps):
            if job[0] == "task":
                arguments += ["task", f"{job[1]} -f 1 -d {dump}"]
            else:
                _, arff, delay, alpha, learner = job
                arguments += ["faded", str(arff), str(delay), repr(alpha), learner, str(dump)]
        calls = [["java", "-cp", f"{jar}{os.pathsep}{classes}", "MoaDelayedOracle",
                  *arguments]]
    for call in calls:
        done = subprocess.run(call, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    faded = ["learning evaluation instances", "classified instances",
             "classifications correct (percent)", "Kappa Statistic (percent)",
             "Kappa Temporal Statistic (percent)", "Kappa M Statistic (percent)"]
    return [_read_measurements(dump.read_text(), None if job[0] == "task" else faded)
            for job, dump in zip(jobs, dumps)]


def moa_task(jar: Path, task: str, folder: Path) -> pd.DataFrame:
    """Run a MOA task as `moa.DoTask TASK -f 1 -d FILE` runs it (a row per instance) and read
    its rows (`moa_runs`)."""
    return moa_runs(jar, folder, [("task", task)])[0]
