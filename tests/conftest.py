"""Shared test setup: hypothesis profiles, a runner for the ``lagassign`` command, and a fresh
PostgreSQL database (``pg_url``) for the tests of the audit store and of racing planners.

Profiles: ``ci`` (default: derandomized, sized so the suite stays near a minute on two cores)
and ``dev`` (random, five times the examples). Choose with HYPOTHESIS_PROFILE=dev.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

TESTS = Path(__file__).resolve().parent


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
