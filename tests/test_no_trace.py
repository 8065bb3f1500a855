"""The test session leaves no trace: its own Airflow home and audit store, and a check at its end
that fails the session for a process left alive (and ends it) or a write into the default store."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import proctrack
import pytest

TESTS = Path(__file__).resolve().parent


def test_the_session_has_its_own_airflow_home_and_audit_store() -> None:
    from lagassign.store import resolve_url

    home = Path(os.environ["AIRFLOW_HOME"])
    assert home.name == "airflow" and home.parent.name.startswith("lagassign-tests-")
    assert resolve_url() == f"sqlite:///{home / 'lagassign.db'}"
    assert Path(os.environ["LAGASSIGN_BASE_DIR"]).is_relative_to(home)
    assert os.environ[proctrack.SESSION_VAR]
    assert "AIRFLOW_CONN_LAGASSIGN_DB" not in os.environ


def _session(folder: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """A pytest session of its own over ``folder`` (its output captured)."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(folder)],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )


def _gone(pid: int) -> bool:
    return not proctrack._live(pid)


def test_end_group_ends_the_whole_tree_also_what_left_the_group(tmp_path: Path) -> None:
    """A leader that starts a child in its own group and one in a new session; the leader ignores
    SIGTERM for a while (as a shutting-down scheduler may): all three are gone afterwards."""
    pids = tmp_path / "pids"
    script = textwrap.dedent(
        f"""
        import os, signal, subprocess, sys, time
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        a = subprocess.Popen(["sleep", "300"])
        b = subprocess.Popen(["sleep", "301"], start_new_session=True)
        open({str(pids)!r}, "w").write(f"{{a.pid}} {{b.pid}}")
        time.sleep(300)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", script], start_new_session=True)
    deadline = time.monotonic() + 20
    while not (pids.exists() and pids.read_text()):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    a, b = (int(x) for x in pids.read_text().split())
    assert os.getpgid(b) != proc.pid  # b left the group: killpg alone would miss it
    proctrack.end_group(proc, grace=0.5)
    assert proc.returncode == -signal.SIGKILL  # ignored SIGTERM: killed after the grace
    deadline = time.monotonic() + 10
    while not (_gone(a) and _gone(b)):
        assert time.monotonic() < deadline, "a process of the tree survived"
        time.sleep(0.05)


@pytest.mark.session
def test_a_session_that_leaves_a_process_alive_fails_and_ends_it(tmp_path: Path) -> None:
    """A session of its own (this conftest, one test that starts ``sleep`` in a new session and
    forgets it): it fails, names the process, and the process is gone."""
    shutil.copy(TESTS / "conftest.py", tmp_path / "conftest.py")
    shutil.copy(TESTS / "support" / "proctrack.py", tmp_path / "proctrack.py")
    pid_file = tmp_path / "pid"
    (tmp_path / "test_leak.py").write_text(
        textwrap.dedent(
            f"""
            import subprocess
            def test_forgets_a_process():
                proc = subprocess.Popen(["sleep", "300"], start_new_session=True)
                open({str(pid_file)!r}, "w").write(str(proc.pid))
            """
        )
    )
    done = _session(tmp_path)
    pid = int(pid_file.read_text())
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 passed" in done.stdout
    assert (
        f"LEFT BEHIND: processes the tests started were still alive (now ended): {pid} sleep 300"
        in done.stdout
    )
    assert _gone(pid)


@pytest.mark.session
@pytest.mark.parametrize("written", [False, True])
def test_a_session_that_writes_the_default_store_fails(tmp_path: Path, written: bool) -> None:
    """A session of its own whose test writes the default audit store (HOME points into tmp
    here, so the real one is never touched): it fails only when the store was written."""
    shutil.copy(TESTS / "conftest.py", tmp_path / "conftest.py")
    shutil.copy(TESTS / "support" / "proctrack.py", tmp_path / "proctrack.py")
    home = tmp_path / "home"
    (home / "airflow").mkdir(parents=True)
    store = home / "airflow" / "lagassign.db"
    (tmp_path / "test_write.py").write_text(
        textwrap.dedent(
            f"""
            from lagassign.store import AuditStore
            def test_writes():
                if {written}:
                    AuditStore("sqlite:///{store}").close()
            """
        )
    )
    env = {k: v for k, v in os.environ.items() if k not in ("LAGASSIGN_DB_URL", "AIRFLOW_HOME")}
    done = _session(tmp_path, env={**env, "HOME": str(home)})
    if written:
        assert done.returncode == 1 and f"the default audit store {store} was written" in done.stdout
    else:
        assert done.returncode == 0, done.stdout + done.stderr
