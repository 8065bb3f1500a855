"""Shared test setup: hypothesis profiles, a runner for the ``lagassign`` command, a fresh
PostgreSQL database (``pg_url``) for the tests of the audit store and of racing planners, and a
session that leaves no trace.

No trace: for the whole session, Airflow's home, the default audit store and lagassign's run
folders point into a temporary folder of the session (removed at its end), and settings that
would reach a developer's real Airflow, Kafka or database are dropped, so nothing a test runs
writes into ``~/airflow`` (the CLI's default store) or elsewhere. At the end the session fails if
the default audit store changed anyway, or if a process it started is still alive (found by the
marker every process the session starts inherits; ended by process group, then named).

Profiles: ``ci`` (default: derandomized, sized so the suite stays near a minute on two cores)
and ``dev`` (random, five times the examples). Choose with HYPOTHESIS_PROFILE=dev.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import proctrack
import pytest
from hypothesis import HealthCheck, settings

TESTS = Path(__file__).resolve().parent

#: Settings a developer's shell may hold that would point tests at real systems.
_DROPPED = (
    "AIRFLOW_CONFIG",
    "AIRFLOW_CONN_LAGASSIGN_DB",
    "AIRFLOW_CONN_LAGASSIGN_KAFKA",
    "LAGASSIGN_GROUPS_FILE",
)
_SESSION: dict[str, Any] = {}


def _default_stores() -> list[Path]:
    """The SQLite files a lagassign command would use by default here, before the session's
    settings: ``~/airflow/lagassign.db`` and what the environment resolves to."""
    from lagassign.store.connection import resolve_url

    paths = [Path("~/airflow/lagassign.db").expanduser()]
    url = resolve_url()
    if url.startswith("sqlite:///"):
        paths.append(Path(url.removeprefix("sqlite:///")).expanduser())
    return sorted(set(paths))


def _state(path: Path) -> tuple[bool, int, int, bool]:
    """What would show a write: exists, size, modification time, and whether its folder exists."""
    try:
        st = path.stat()
        return True, st.st_size, st.st_mtime_ns, True
    except OSError:
        return False, 0, 0, path.parent.exists()


def pytest_configure(config: pytest.Config) -> None:
    """The session's own Airflow home, audit store and run folders; a marker for its processes."""
    stores = _default_stores()
    _SESSION["stores"] = {p: _state(p) for p in stores}
    folder = Path(tempfile.mkdtemp(prefix="lagassign-tests-"))
    _SESSION["folder"] = folder
    _SESSION["marker"] = secrets.token_hex(8)
    for name in [*_DROPPED, *(k for k in os.environ if k.startswith("LAGASSIGN_KAFKA_"))]:
        os.environ.pop(name, None)
    home = folder / "airflow"
    os.environ.update(
        {
            proctrack.SESSION_VAR: _SESSION["marker"],
            "AIRFLOW_HOME": str(home),
            "LAGASSIGN_DB_URL": f"sqlite:///{home / 'lagassign.db'}",
            "LAGASSIGN_BASE_DIR": str(home / "lagassign"),
        }
    )


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the session for a process it left alive (ended here by process group) or a write
    into the default audit store; remove the session's folder."""
    if "marker" not in _SESSION:
        return
    problems = []
    left = proctrack.alive_with_marker(_SESSION["marker"])
    if left:
        named = [f"{pid} {proctrack.cmdline(pid)[:160]}" for pid in left]
        proctrack.end_processes(left, grace=30)
        problems.append("processes the tests started were still alive (now ended): " + "; ".join(named))
    for path, before in _SESSION["stores"].items():
        after = _state(path)
        if after != before:
            problems.append(f"the default audit store {path} was written by the tests ({before} -> {after})")
    shutil.rmtree(_SESSION["folder"], ignore_errors=True)
    if problems:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        for line in problems:
            if reporter is not None:
                reporter.write_line(f"LEFT BEHIND: {line}", red=True, bold=True)
            else:
                print(f"LEFT BEHIND: {line}", file=sys.stderr)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark what needs more than this process: ``kafka`` (every test under tests/kafka: a real
    broker) and ``db`` (a real PostgreSQL). ``make unit`` leaves them out; see pyproject.toml."""
    for item in items:
        if (TESTS / "kafka") in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.kafka)
        params = getattr(getattr(item, "callspec", None), "params", {})
        if "pg_database" in getattr(item, "fixturenames", ()) or params.get("db_url") == "postgresql":
            item.add_marker(pytest.mark.db)


settings.register_profile(
    "ci",
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=100,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", deadline=None, max_examples=750)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

_SCRIPT = Path(sys.executable).parent / "lagassign"
# The installed console script is the contract (docs/ARCHITECTURE.md); fall back to the module.
LAGASSIGN = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "lagassign.cli"]


def run_cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``lagassign ARGS`` as a separate process and capture its output."""
    return subprocess.run(
        [*LAGASSIGN, *args], input=stdin, capture_output=True, text=True, timeout=60, check=False
    )


@pytest.fixture
def cli():
    """``run_cli`` as a fixture: test modules cannot import this conftest reliably."""
    return run_cli


def run_main(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """``lagassign ARGS`` run by ``lagassign.cli.main`` in this process, with ``run_cli``'s result:
    the function the console script calls (``sys.exit(main())``), its exit code and both streams.
    For tables of inputs, where a process per row would add its start-up and nothing else; the
    command as a process is what ``run_cli`` runs."""
    from lagassign.cli import main

    out, err = io.StringIO(), io.StringIO()
    saved_stdin, sys.stdin = sys.stdin, io.StringIO(stdin or "")
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(args))
            except SystemExit as exc:  # argparse's refusals, as the interpreter would end them
                code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
                if isinstance(exc.code, str):
                    print(exc.code, file=sys.stderr)
    finally:
        sys.stdin = saved_stdin
    return subprocess.CompletedProcess(["lagassign", *args], code, out.getvalue(), err.getvalue())


@pytest.fixture(scope="session")
def cli_main():
    """``run_main`` as a fixture (session-wide: it holds no state, so hypothesis tests may use it)."""
    return run_main


@pytest.fixture
def case_file(tmp_path):
    """Write a case (a dict, or raw text) to a file and return its path as a string."""

    def write(case: dict | str, name: str = "case.json") -> str:
        path = tmp_path / name
        path.write_text(case if isinstance(case, str) else json.dumps(case), encoding="utf-8")
        return str(path)

    return write


PG_ADMIN_URL = os.environ.get(
    "LAGASSIGN_TEST_PG_ADMIN_URL", "postgresql+psycopg2://postgres@127.0.0.1:54329/postgres"
)


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


@pytest.fixture(scope="session")
def pg_database() -> Iterator[Any]:
    """A fresh PostgreSQL database for this session, dropped at the end."""
    import sqlalchemy as sa

    admin = sa.create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(sa.text("SELECT 1"))
    except sa.exc.OperationalError as exc:
        admin.dispose()
        message = f"PostgreSQL unreachable at {sa.make_url(PG_ADMIN_URL)!r}: {str(exc.orig).strip()}"
        if _in_ci():
            pytest.fail(message)
        pytest.skip(message)
    name = f"lagassign_test_{secrets.token_hex(6)}"  # generated here: safe to put in DDL
    with admin.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    try:
        yield sa.make_url(PG_ADMIN_URL).set(database=name)
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.dispose()


@pytest.fixture
def pg_url(pg_database: Any) -> Iterator[str]:
    """A URL whose search_path is an empty schema of its own: each test starts from nothing."""
    import sqlalchemy as sa

    schema = f"t_{secrets.token_hex(6)}"
    engine = sa.create_engine(pg_database, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.exec_driver_sql(f'CREATE SCHEMA "{schema}"')
    try:
        url = pg_database.update_query_dict({"options": f"-csearch_path={schema}"})
        yield url.render_as_string(hide_password=False)
    finally:
        with engine.connect() as conn:
            conn.exec_driver_sql(f'DROP SCHEMA "{schema}" CASCADE')
        engine.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An audit-store URL on SQLite and on PostgreSQL (a schema of its own), each test anew."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'audit.db'}"
    return request.getfixturevalue("pg_url")


@pytest.fixture
def store(db_url: str) -> Iterator[Any]:
    """An AuditStore on ``db_url``, closed after the test."""
    from lagassign.store import AuditStore

    s = AuditStore(db_url)
    yield s
    s.close()
