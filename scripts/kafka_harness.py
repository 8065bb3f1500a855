#!/usr/bin/env python3
"""Kafka's own assignors (Apache Kafka 4.4.0, from Maven Central) as local programs, for the
fidelity tests.

``scripts/kafka_harness.py`` (no arguments) makes sure the harness is ready and prints its
class path: Maven fetches the jars listed in ``tests/java/pom.xml`` (``kafka-clients`` for the
client-side assignors, ``kafka-group-coordinator`` and its API for the server-side ones of
KIP-848, their few helpers; no transitive dependencies) into ``var/kafka-jars/<version>/``
once, every jar is checked against ``tests/java/checksums.sha256``, and ``tests/java/*.java``
is compiled with the system ``javac`` into ``var/kafka-harness/<version>/``. It is rebuilt only
when missing or older than a Java source. Without ``mvn`` or ``javac`` it stops with one line
(exit 2).

``tests/support/kafka_java.py`` imports ``classpath()`` and ``ready()`` from here; ``make harness``
(and so ``make test`` and CI) runs this script before the tests so the ``java`` tests run.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

#: the Apache Kafka release whose assignors are the reference: the tests' broker's (kafka4)
KAFKA_VERSION = "4.4.0"

REPO = Path(__file__).resolve().parent.parent
JAVA_DIR = REPO / "tests" / "java"
POM = JAVA_DIR / "pom.xml"
CHECKSUMS = JAVA_DIR / "checksums.sha256"
#: the two programs, and JsonLines: the line protocol they speak with tests/support/kafka_java.py
SOURCES = (JAVA_DIR / "KafkaAssignors.java", JAVA_DIR / "ServerAssignors.java", JAVA_DIR / "JsonLines.java")
JAR_DIR = REPO / "var" / "kafka-jars" / KAFKA_VERSION
CLASS_DIR = REPO / "var" / "kafka-harness" / KAFKA_VERSION


class HarnessError(Exception):
    """Why the harness cannot be built, in one line."""


def expected() -> dict[str, str]:
    """Jar name -> sha256, as recorded in the repository."""
    pairs = (line.split() for line in CHECKSUMS.read_text().splitlines() if line.strip())
    return {name: digest for digest, name in pairs}


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def jar_names() -> list[str]:
    return sorted(expected())


def classpath() -> str:
    """The class path that runs the compiled harness."""
    return ":".join([str(CLASS_DIR), *(str(JAR_DIR / n) for n in jar_names())])


def _classes() -> list[Path]:
    return [CLASS_DIR / f"{source.stem}.class" for source in SOURCES]


def ready() -> str | None:
    """None when the harness can run, else why not (for a skip reason)."""
    if shutil.which("java") is None:
        return "no java on PATH"
    missing = [n for n in jar_names() if not (JAR_DIR / n).exists()]
    if missing:
        return f"{missing[0]} missing: run make harness"
    if not all(c.exists() for c in _classes()):
        return "harness not compiled: run make harness"
    return None


def check_jars(folder: Path) -> None:
    """Every recorded jar is in ``folder`` with its recorded sha256."""
    for name, want in expected().items():
        path = folder / name
        if not path.exists():
            raise HarnessError(f"{name} was not fetched by Maven (tests/java/pom.xml and checksums differ)")
        got = sha256(path)
        if got != want:
            raise HarnessError(f"{path}: sha256 {got} does not match the recorded {want}")


def fetch_jars() -> None:
    """The recorded jars in ``JAR_DIR``: checked when there, else fetched by Maven first."""
    if all((JAR_DIR / n).exists() for n in jar_names()):
        check_jars(JAR_DIR)
        return
    mvn = shutil.which("mvn")
    if mvn is None:
        raise HarnessError(
            f"mvn not found: Maven is needed once to fetch Kafka {KAFKA_VERSION}'s assignors for the"
            " Java harness (apt-get install maven)"
        )
    JAR_DIR.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=JAR_DIR.parent, prefix=".fetch-"))
    try:
        out = subprocess.run(
            [
                mvn,
                "-q",
                "-B",
                "-C",  # Maven Central's own checksums, strictly
                "-f",
                str(POM),
                "dependency:copy-dependencies",
                "-DexcludeTransitive=true",
                f"-DoutputDirectory={tmp}",
                f"-Dkafka.version={KAFKA_VERSION}",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if out.returncode != 0:
            tail = [line for line in (out.stdout + out.stderr).splitlines() if line.strip()][-2:]
            raise HarnessError(f"Maven could not fetch Kafka {KAFKA_VERSION}'s jars: {' / '.join(tail)}")
        check_jars(tmp)
        shutil.rmtree(JAR_DIR, ignore_errors=True)
        tmp.rename(JAR_DIR)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def compile_harness() -> None:
    newest = max(source.stat().st_mtime for source in SOURCES)
    if all(c.exists() and c.stat().st_mtime >= newest for c in _classes()):
        return
    javac = shutil.which("javac")
    if javac is None:
        raise HarnessError("javac not found: install a JDK, 17 or later (apt-get install openjdk-17-jdk)")
    CLASS_DIR.mkdir(parents=True, exist_ok=True)
    jars = ":".join(str(JAR_DIR / n) for n in jar_names())
    out = subprocess.run(
        [javac, "-nowarn", "-Xlint:-removal", "-d", str(CLASS_DIR), "-cp", jars, *map(str, SOURCES)],
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        sys.stderr.write(out.stderr)
        raise HarnessError("javac could not compile tests/java (above)")


def main() -> None:
    try:
        fetch_jars()
        compile_harness()
    except HarnessError as e:
        print(f"kafka_harness: {e}", file=sys.stderr)
        raise SystemExit(2) from None
    print(classpath())


if __name__ == "__main__":
    main()
