"""The connections lagassign takes from Airflow: Kafka (librdkafka settings) and the audit store.

Secrets never in code or logs: both live in Airflow connections, so Airflow's secrets backends
(Vault, AWS Secrets Manager, ...) can hold them.

The connection (default id ``lagassign_kafka``) may carry the bootstrap servers as host and
port, and any librdkafka setting in its extra (``security.protocol``, ``sasl.mechanism``,
``sasl.username``, ``sasl.password``, ``ssl.ca.location`` ...). Its password field, when set,
becomes ``sasl.password``. Set it in the UI, or as an environment variable::

    AIRFLOW_CONN_LAGASSIGN_KAFKA='{"conn_type": "generic",
        "extra": {"bootstrap.servers": "broker:9092", "security.protocol": "SASL_SSL",
                  "sasl.mechanism": "PLAIN", "sasl.username": "planner", "sasl.password": "..."}}'
"""

from __future__ import annotations

import os
from typing import Any

from airflow.sdk import BaseHook

from ..core.errors import LagassignError
from ..store import AuditStore

DEFAULT_CONN_ID = "lagassign_kafka"
STORE_CONN_ID = "lagassign_db"


class KafkaConnectionError(LagassignError):
    """An Airflow connection lagassign needs is missing or unusable."""


class LagassignKafkaHook(BaseHook):
    """Reads the Kafka connection and turns it into a librdkafka configuration."""

    conn_name_attr = "kafka_conn_id"
    default_conn_name = DEFAULT_CONN_ID
    conn_type = "generic"
    hook_name = "lagassign Kafka"

    def __init__(self, kafka_conn_id: str = DEFAULT_CONN_ID) -> None:
        super().__init__()
        self.kafka_conn_id = kafka_conn_id

    def get_config(self) -> dict[str, Any]:
        """librdkafka settings from the connection: extra, then host/port and password."""
        try:
            conn = self.get_connection(self.kafka_conn_id)
        except Exception as exc:  # Airflow raises its own not-found type per version
            raise KafkaConnectionError(
                f"Airflow connection {self.kafka_conn_id!r} is not defined: set it in the UI or as "
                f"AIRFLOW_CONN_{self.kafka_conn_id.upper()} ({type(exc).__name__})"
            ) from None
        extra = conn.extra_dejson or {}
        if not isinstance(extra, dict):
            raise KafkaConnectionError(f"connection {self.kafka_conn_id!r}: extra must be a JSON object")
        config = {str(k): v for k, v in extra.items()}
        if conn.host:
            hosts = conn.host if conn.port is None else f"{conn.host}:{conn.port}"
            config["bootstrap.servers"] = hosts
        if conn.password and "sasl.password" not in config:
            config["sasl.password"] = conn.password
        if conn.login and "sasl.username" not in config:
            config["sasl.username"] = conn.login
        if not config.get("bootstrap.servers"):
            raise KafkaConnectionError(
                f"connection {self.kafka_conn_id!r} names no bootstrap servers "
                "(host, or bootstrap.servers in its extra)"
            )
        return config


class LagassignStoreHook(BaseHook):
    """The audit store's database URL from the Airflow connection ``lagassign_db``.

    A ``postgres`` connection (host, port, login, password, schema = database) or a ``sqlite``
    one (its path as host or schema), or any SQLAlchemy URL in the extra's ``url``. Without the
    connection, ``url()`` is None and the store falls back to ``LAGASSIGN_DB_URL``, then to the
    SQLite file under ``AIRFLOW_HOME``::

        AIRFLOW_CONN_LAGASSIGN_DB='postgresql://lagassign:...@db:5432/lagassign'
    """

    conn_name_attr = "store_conn_id"
    default_conn_name = STORE_CONN_ID
    conn_type = "postgres"
    hook_name = "lagassign audit store"

    def __init__(self, store_conn_id: str = STORE_CONN_ID) -> None:
        super().__init__()
        self.store_conn_id = store_conn_id

    def url(self) -> str | None:
        import sqlalchemy as sa

        try:
            conn = self.get_connection(self.store_conn_id)
        except Exception:  # not defined: the environment or the default decides
            return None
        extra = conn.extra_dejson or {}
        if isinstance(extra, dict) and extra.get("url"):
            return str(extra["url"])
        kind = (conn.conn_type or "").lower()
        if kind in ("postgres", "postgresql"):
            url = sa.URL.create(
                "postgresql+psycopg2",
                username=conn.login or None,
                password=conn.password or None,
                host=conn.host or None,
                port=conn.port or None,
                database=conn.schema or None,
            )
            return url.render_as_string(hide_password=False)
        if kind == "sqlite":
            return f"sqlite:///{conn.host or conn.schema}"
        raise KafkaConnectionError(
            f"connection {self.store_conn_id!r}: type {conn.conn_type!r} is not a database lagassign can use "
            "(postgres or sqlite, or a SQLAlchemy URL in the extra's 'url')"
        )


def open_store(create: bool = True) -> AuditStore:
    """The audit store of this Airflow deployment (``LagassignStoreHook`` URL, else the default)."""
    return AuditStore(LagassignStoreHook().url(), create=create)


def groups_file_or_workers(named: str | None) -> str | None:
    """The groups file a run names, else the workers' ``LAGASSIGN_GROUPS_FILE``, else none: one
    rule for the failover DAG and the on-demand and daily runs, so both plan the same groups."""
    return named or os.environ.get("LAGASSIGN_GROUPS_FILE") or None
