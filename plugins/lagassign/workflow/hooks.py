"""The Kafka connection as Airflow holds it: librdkafka settings, secrets never in code or logs.

The connection (default id ``lagassign_kafka``) may carry the bootstrap servers as host and
port, and any librdkafka setting in its extra (``security.protocol``, ``sasl.mechanism``,
``sasl.username``, ``sasl.password``, ``ssl.ca.location`` ...). Its password field, when set,
becomes ``sasl.password``. Set it in the UI, or as an environment variable::

    AIRFLOW_CONN_LAGASSIGN_KAFKA='{"conn_type": "generic",
        "extra": {"bootstrap.servers": "broker:9092", "security.protocol": "SASL_SSL",
                  "sasl.mechanism": "PLAIN", "sasl.username": "planner", "sasl.password": "..."}}'
"""

from __future__ import annotations

from typing import Any

from airflow.sdk import BaseHook

from ..errors import LagassignError

DEFAULT_CONN_ID = "lagassign_kafka"


class KafkaConnectionError(LagassignError):
    """The Airflow connection for Kafka is missing or unusable."""


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
