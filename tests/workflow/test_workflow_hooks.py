"""The audit store's URL from an Airflow connection, as Airflow parses real connection strings."""

from __future__ import annotations

import json
from importlib.util import find_spec

import pytest

# Found, not imported: loading Airflow at collection would cost make unit, which runs none of these.
pytestmark = [pytest.mark.airflow, pytest.mark.skipif(find_spec("airflow") is None, reason="needs Airflow")]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (
            "postgresql://planner:p%40ss@db.example:5433/lagassign",
            "postgresql+psycopg2://planner:p%40ss@db.example:5433/lagassign",
        ),
        (
            json.dumps({"conn_type": "sqlite", "host": "/var/lib/lagassign/audit.db"}),
            "sqlite:////var/lib/lagassign/audit.db",
        ),
        (
            json.dumps({"conn_type": "generic", "extra": {"url": "postgresql+psycopg://x@y/z"}}),
            "postgresql+psycopg://x@y/z",
        ),
    ],
)
def test_the_store_url_comes_from_the_lagassign_db_connection(monkeypatch, value, expected):
    from lagassign.workflow.hooks import LagassignStoreHook

    monkeypatch.setenv("AIRFLOW_CONN_LAGASSIGN_DB", value)
    assert LagassignStoreHook().url() == expected


def test_without_the_connection_the_environment_decides(monkeypatch, tmp_path):
    from lagassign.store import resolve_url
    from lagassign.workflow.hooks import LagassignStoreHook

    monkeypatch.delenv("AIRFLOW_CONN_LAGASSIGN_DB", raising=False)
    monkeypatch.setenv("LAGASSIGN_DB_URL", f"sqlite:///{tmp_path}/env.db")
    assert LagassignStoreHook().url() is None
    assert resolve_url(LagassignStoreHook().url()) == f"sqlite:///{tmp_path}/env.db"


def test_a_connection_of_another_kind_is_one_clear_error(monkeypatch):
    from lagassign.core.errors import LagassignError
    from lagassign.workflow.hooks import LagassignStoreHook

    monkeypatch.setenv("AIRFLOW_CONN_LAGASSIGN_DB", json.dumps({"conn_type": "http", "host": "x"}))
    with pytest.raises(LagassignError, match="not a database lagassign can use"):
        LagassignStoreHook().url()
