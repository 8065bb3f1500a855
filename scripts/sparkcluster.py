"""Start, stop and check a Spark standalone cluster on 127.0.0.1: one master, two workers.

One module behind ``scripts/spark-cluster`` and any pytest fixture that wants a cluster, so the
cluster a developer starts by hand is the one CI uses. The daemons are run straight from the
pyspark installation's ``bin/spark-class`` (the pip package ships no ``sbin/start-*.sh``):

* master ``spark://127.0.0.1:7077``, web UI and JSON status on http://127.0.0.1:8090/json/;
* two workers with 1 core and 1 GiB each (web UIs on 8091, 8092).

State (pid files, logs, the workers' work dirs) lives under ``var/spark-cluster/``. ``start``
returns once the master lists both workers ALIVE; ``stop`` terminates each daemon's process
group (the worker's executors included) and waits for them to exit.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from pidfiles import alive, group_alive, spawn

REPO = Path(__file__).resolve().parent.parent
STATE = REPO / "var" / "spark-cluster"
HOST = "127.0.0.1"
PORT = 7077
WEBUI_PORT = 8090
MASTER_URL = f"spark://{HOST}:{PORT}"
STATUS_URL = f"http://{HOST}:{WEBUI_PORT}/json/"
WORKERS = 2
WORKER_CORES = 1
WORKER_MEMORY = "1g"
JAVA_HOME_17 = Path("/usr/lib/jvm/java-17-openjdk-amd64")
VENV_PYTHON = REPO / ".venv" / "bin" / "python"


class ClusterError(RuntimeError):
    """The cluster could not be started, reached or stopped."""


def spark_home() -> Path:
    """The pyspark package folder (it carries bin/spark-class and the jars)."""
    try:
        import pyspark
    except ImportError:
        raise ClusterError(f"pyspark is not importable from {sys.executable}; use {VENV_PYTHON}") from None
    return Path(pyspark.__file__).resolve().parent


def environment() -> dict[str, str]:
    """The daemons' environment: Java 17, loopback only, this venv's python for PySpark."""
    python = str(VENV_PYTHON if VENV_PYTHON.exists() else Path(sys.executable))
    env = dict(os.environ)
    env.update(
        SPARK_HOME=str(spark_home()),
        SPARK_LOCAL_IP=HOST,
        SPARK_MASTER_HOST=HOST,
        PYSPARK_PYTHON=python,
        PYSPARK_DRIVER_PYTHON=python,
        SPARK_LOG_DIR=str(STATE / "logs"),
        SPARK_PID_DIR=str(STATE),
    )
    if JAVA_HOME_17.is_dir():
        env["JAVA_HOME"] = str(JAVA_HOME_17)
    return env


def daemons() -> dict[str, list[str]]:
    """name -> spark-class arguments, master first."""
    out = {
        "master": [
            "org.apache.spark.deploy.master.Master",
            "--host",
            HOST,
            "--port",
            str(PORT),
            "--webui-port",
            str(WEBUI_PORT),
        ]
    }
    for i in range(1, WORKERS + 1):
        out[f"worker-{i}"] = [
            "org.apache.spark.deploy.worker.Worker",
            MASTER_URL,
            "--host",
            HOST,
            "--cores",
            str(WORKER_CORES),
            "--memory",
            WORKER_MEMORY,
            "--webui-port",
            str(WEBUI_PORT + i),
            "--work-dir",
            str(STATE / f"work-{i}"),
        ]
    return out


def _pid_file(name: str) -> Path:
    return STATE / f"{name}.pid"


def _read_pid(name: str) -> int | None:
    try:
        pid = int(_pid_file(name).read_text().strip())
    except (OSError, ValueError):
        return None
    return pid if alive(pid) else None


def master_status(timeout: float = 2.0) -> dict[str, Any] | None:
    """The master's JSON status, or None when it does not answer."""
    try:
        with urllib.request.urlopen(STATUS_URL, timeout=timeout) as resp:
            return json.load(resp)
    except (OSError, ValueError):
        return None


def alive_workers(status: dict[str, Any] | None) -> int:
    return sum(1 for w in (status or {}).get("workers", []) if w.get("state") == "ALIVE")


def _log_tail(name: str, lines: int = 12) -> str:
    try:
        text = (STATE / f"{name}.log").read_text(errors="replace").splitlines()
    except OSError:
        return "(no log)"
    return "\n".join(text[-lines:])


def wait_ready(timeout: float = 90.0) -> dict[str, Any]:
    """Wait until the master lists WORKERS ALIVE workers; returns its status."""
    deadline = time.monotonic() + timeout
    status = None
    while time.monotonic() < deadline:
        for name in daemons():
            if _read_pid(name) is None:
                raise ClusterError(f"spark {name} exited; {STATE / (name + '.log')} ends:\n{_log_tail(name)}")
        status = master_status()
        if alive_workers(status) >= WORKERS:
            return status  # type: ignore[return-value]
        time.sleep(0.5)
    seen = "the master did not answer" if status is None else f"{alive_workers(status)} ALIVE worker(s)"
    raise ClusterError(
        f"Spark cluster not ready after {timeout:.0f} s ({seen} at {STATUS_URL}); "
        f"logs in {STATE}; master log ends:\n{_log_tail('master')}"
    )


def start(timeout: float = 90.0) -> dict[str, Any]:
    """Start whatever of master and workers is not running, and wait until all are registered."""
    names = list(daemons())
    if all(_read_pid(n) is not None for n in names) and alive_workers(master_status()) >= WORKERS:
        return master_status() or {}
    if _read_pid("master") is None and master_status() is not None:
        raise ClusterError(f"something else answers at {STATUS_URL}; not starting a second master")
    for name, args in daemons().items():
        if _read_pid(name) is None:
            spawn(STATE, name, [str(spark_home() / "bin" / "spark-class"), *args], environment())
            if name == "master":  # workers retry registering, but a live master saves the retries
                end = time.monotonic() + timeout
                while master_status() is None and time.monotonic() < end and _read_pid("master"):
                    time.sleep(0.3)
    try:
        return wait_ready(timeout)
    except ClusterError:
        stop()
        raise


def _terminate(name: str, timeout: float = 20.0) -> bool:
    """SIGTERM a daemon's process group (SIGKILL after ``timeout``); True if it was running."""
    pid = _read_pid(name)
    _pid_file(name).unlink(missing_ok=True)
    if pid is None:
        return False
    try:
        os.killpg(pid, signal.SIGTERM)  # the daemon is a session leader: its executors go too
    except ProcessLookupError:
        return False
    deadline = time.monotonic() + timeout
    while alive(pid) or group_alive(pid):
        if time.monotonic() > deadline:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
            deadline = time.monotonic() + 5
        time.sleep(0.2)
    return True


def stop() -> list[str]:
    """Stop workers first, then the master; returns the names that were running."""
    return [name for name in reversed(list(daemons())) if _terminate(name)]


def main(argv: list[str]) -> int:
    command = argv[0] if argv else ""
    try:
        if command == "start":
            status = start()
            print(f"{MASTER_URL} ({alive_workers(status)} workers ALIVE, status {STATUS_URL})")
        elif command == "stop":
            stopped = stop()
            print("stopped " + (", ".join(stopped) if stopped else "nothing (not running)"))
        elif command == "status":
            status = master_status()
            running = {n: _read_pid(n) for n in daemons()}
            print(
                json.dumps(
                    {
                        "master": MASTER_URL,
                        "answers": status is not None,
                        "alive_workers": alive_workers(status),
                        "pids": running,
                    },
                    indent=2,
                )
            )
            return 0 if status is not None and alive_workers(status) >= WORKERS else 1
        else:
            print("usage: spark-cluster start|stop|status", file=sys.stderr)
            return 2
    except ClusterError as exc:
        print(f"spark-cluster: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
