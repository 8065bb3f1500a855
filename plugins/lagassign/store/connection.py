"""Opening the audit store: the URL, the engine, and how SQLite is made to behave."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event

from .errors import StoreError

PG_LOCK_CLASS = 0x1A6A  # first key of PostgreSQL advisory locks taken by lagassign


def resolve_url(url: str | None = None) -> str:
    """The database URL: explicit argument > $LAGASSIGN_DB_URL > SQLite file under AIRFLOW_HOME."""
    if url:
        return url
    env = os.environ.get("LAGASSIGN_DB_URL")
    if env:
        return env
    home = Path(os.environ.get("AIRFLOW_HOME") or "~/airflow").expanduser().absolute()
    return f"sqlite:///{home / 'lagassign.db'}"


def make_engine(url: sa.URL) -> sa.Engine:
    if url.drivername == "postgresql" and importlib.util.find_spec("psycopg") is None:
        # SQLAlchemy 2.1 reads a bare postgresql:// as psycopg 3; lagassign ships psycopg2.
        url = url.set(drivername="postgresql+psycopg2")
    try:
        if url.get_backend_name() != "sqlite":
            return sa.create_engine(url, pool_pre_ping=True)
        engine = sa.create_engine(url, connect_args={"timeout": 30})
    except sa.exc.NoSuchModuleError:
        raise StoreError(f"unsupported database URL scheme {url.drivername!r}") from None
    except ImportError as exc:
        raise StoreError(f"database driver for {url.drivername!r} is not installed: {exc}") from None

    # pysqlite opens transactions lazily and not for DDL; take control so that every
    # transaction (migrations included) is real, and writers queue instead of deadlocking.
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None
        dbapi_conn.execute("PRAGMA foreign_keys = ON")

    @event.listens_for(engine, "begin")
    def _on_begin(conn: sa.Connection) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


def safe_url(url: sa.URL) -> str:
    return url.render_as_string(hide_password=True)


def first_line(exc: BaseException | None) -> str:
    text = str(exc or "").strip()
    return text.splitlines()[0] if text else type(exc).__name__
