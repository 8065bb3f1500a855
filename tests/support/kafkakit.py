"""Helpers of the Kafka edge's tests: real topics, records and commits; skips for brokers that
lack a feature."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from brokerctl import Broker


def needs(broker: Broker, feature: str) -> None:
    """Skip where the broker lacks ``feature`` (say which): ``consumer protocol`` (KIP-848 groups,
    Kafka 4 only), ``member eviction`` (noida never evicts a dead member), ``log cleaner``
    (noida keeps every record of a compacted topic)."""
    lacks = (feature == "consumer protocol" and "consumer" not in broker.protocols) or (
        feature in ("member eviction", "log cleaner") and broker.kind == "noida"
    )
    if lacks:
        pytest.skip(f"{broker.kind} lacks {feature}")


class Kit:
    """Helpers that build real state on the broker: topics, records, committed offsets."""

    def __init__(self, broker: Broker, prefix: str) -> None:
        self.broker = broker
        self.prefix = prefix

    def name(self, what: str) -> str:
        return f"{self.prefix}-{what}"

    def config(self, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
        return self.broker.config(dict(extra or {}))

    def topic(self, what: str, partitions: int, config: dict[str, str] | None = None) -> str:
        name = self.name(what)
        self.broker.create_topic(name, partitions, config)
        return name

    def produce(self, topic: str, counts: Mapping[int, int], key: bytes | None = None) -> None:
        """``counts[p]`` records into partition p (values say topic, partition and sequence)."""
        from confluent_kafka import Producer

        producer = Producer(self.config({"linger.ms": 5}))
        for p, n in counts.items():
            for i in range(n):
                producer.produce(topic, value=f"{topic}/{p}/{i}".encode(), key=key, partition=p)
                if i % 5000 == 4999:
                    producer.poll(0)
        left = producer.flush(30)
        assert left == 0, f"{left} records not delivered"

    def commit(self, group: str, offsets: Mapping[tuple[str, int], int]) -> None:
        """Commit offsets for a group the way an assign()-mode consumer does."""
        from confluent_kafka import Consumer, TopicPartition

        consumer = Consumer(self.config({"group.id": group, "enable.auto.commit": False}))
        try:
            consumer.commit(
                offsets=[TopicPartition(t, p, o) for (t, p), o in offsets.items()], asynchronous=False
            )
        finally:
            consumer.close()


def wait_until(check: Any, timeout: float = 20.0, every: float = 0.1) -> Any:
    """Poll ``check()`` until it returns something truthy; fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout}s")
        time.sleep(every)


def run_cli(*args: str, env: Mapping[str, str] | None = None, timeout: float = 120) -> Any:
    """Run ``lagassign ARGS`` in a separate process (the installed console script)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    script = Path(sys.executable).parent / "lagassign"
    argv = [str(script)] if script.exists() else [sys.executable, "-m", "lagassign.cli"]
    return subprocess.run(
        [*argv, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env={**os.environ, **(env or {})},
    )


def config_flags(broker: Broker) -> list[str]:
    """``--bootstrap-server`` and ``--config`` flags for the CLI (a broker.s client settings pass through)."""
    flags = ["--bootstrap-server", broker.bootstrap]
    for key, value in broker.client_config.items():
        flags += ["--config", f"{key}={value}"]
    return flags


def only_declared(groups_file: Any) -> str:
    """A groups regex naming exactly the groups of a groups file: the regex narrows declared
    groups too, so this plans them and discovers no other group of the shared test broker."""
    from lagassign.kafka.groupsfile import load_groups_file

    return "|".join(re.escape(g.group) for g in load_groups_file(groups_file))


def declared_plan_flags(broker: Broker, groups_file: Any) -> list[str]:
    """``lagassign plan`` flags for the declared (assign()-mode) groups of a file only, applied."""
    return [
        *config_flags(broker),
        "--groups",
        only_declared(groups_file),
        "--groups-file",
        str(groups_file),
        "--apply",
    ]


REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def airflow_env(home: Path, broker: Broker, spark_host: str = "local[2]") -> dict[str, str]:
    """Environment of an ``airflow`` process with its own home, the repo's DAGs and plugins,
    the broker as the Kafka connection and Spark in local mode."""
    kafka = {"conn_type": "generic", "extra": {"bootstrap.servers": broker.bootstrap, **broker.client_config}}
    return {
        **os.environ,
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__DAGS_FOLDER": str(REPO / "dags"),
        "AIRFLOW__CORE__PLUGINS_FOLDER": str(REPO / "plugins"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__PARALLELISM": "4",
        "AIRFLOW_CONN_SPARK_DEFAULT": json.dumps({"conn_type": "spark", "host": spark_host}),
        "AIRFLOW_CONN_LAGASSIGN_KAFKA": json.dumps(kafka),
        # The DAGs take the audit store from this Airflow connection; tests read it by URL.
        "AIRFLOW_CONN_LAGASSIGN_DB": json.dumps({"conn_type": "sqlite", "host": f"{home}/lagassign.db"}),
        "LAGASSIGN_DB_URL": f"sqlite:///{home}/lagassign.db",
        "LAGASSIGN_BASE_DIR": str(home / "runs"),
        # the health job's DAG runs every minute where it is on: these tests time other DAGs
        "LAGASSIGN_HEALTH_SCHEDULE": "off",
        "JAVA_HOME": os.environ.get("JAVA_HOME", "/usr/lib/jvm/java-17-openjdk-amd64"),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "PATH": f"{BIN}:{os.environ.get('PATH', '')}",
    }


def airflow_home(home: Path, broker: Broker, spark_host: str = "local[2]") -> dict[str, str]:
    """Migrate a fresh Airflow home; returns its environment."""
    env = airflow_env(home, broker, spark_host)
    subprocess.run(
        [str(BIN / "airflow"), "db", "migrate"], env=env, check=True, capture_output=True, timeout=300
    )
    return env
