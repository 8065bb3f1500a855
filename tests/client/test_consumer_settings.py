"""``PlanConsumer``'s settings without a broker (``client.settings``): its arguments refused with
one line, and the settings of the four clients it runs derived from the application's
(tests/kafka/test_kafka_client.py runs the consumer itself against the real broker)."""

from __future__ import annotations

from typing import Any

import pytest
from confluent_kafka import KafkaError
from lagassign.client.settings import check_arguments, read_settings
from lagassign.core.errors import LagassignError
from lagassign.kafka.connection import AuthCollector


def test_the_clients_settings_follow_the_applications() -> None:
    seen: list[Any] = []
    config = {
        "bootstrap.servers": "k:9092",
        "enable.auto.commit": "false",
        "auto.commit.interval.ms": "250",
        "session.timeout.ms": 6000,
        "heartbeat.interval.ms": 500,
        "client.rack": "rack-a",
        "auto.offset.reset": "EARLIEST",
        "fetch.min.bytes": 10,
        "error_cb": seen.append,
    }
    auth = AuthCollector()
    s = read_settings(config, "orders", "w0", auth)
    assert (s.auto_commit, s.commit_interval, s.reset, s.rack) == (False, 0.25, "earliest", "rack-a")
    assert (s.session_timeout_ms, s.heartbeat_interval, s.max_poll_interval) == (6000, 0.5, 300.0)
    # the data consumer: in assign() mode, committing only through PlanConsumer, the group
    # protocol's timings kept from librdkafka, the application's error callback still called
    assert s.consumer["group.id"] == "orders" and s.consumer["client.id"] == "orders.w0"
    assert (s.consumer["enable.auto.commit"], s.consumer["enable.partition.eof"]) == (False, False)
    assert not {"session.timeout.ms", "heartbeat.interval.ms", "max.poll.interval.ms"} & set(s.consumer)
    transport = KafkaError(KafkaError._TRANSPORT)
    s.consumer["error_cb"](transport)
    assert seen == [transport]
    follower = s.follower
    assert (follower["group.id"], follower["client.id"]) == ("orders.lagassign-plans", "orders.w0.plans")
    assert (follower["auto.offset.reset"], follower["enable.partition.eof"]) == ("earliest", True)
    # the admin client and the status producer get no consumer-only setting
    assert s.admin == {"bootstrap.servers": "k:9092", "client.id": "orders.w0"}
    assert s.announcer == {"bootstrap.servers": "k:9092", "client.id": "orders.w0.status"}
    assert config["enable.auto.commit"] == "false"  # the application's mapping is left alone


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (
            {"session.timeout.ms": "soon"},
            "session.timeout.ms must be a whole number of milliseconds, got 'soon'",
        ),
        ({"auto.commit.interval.ms": 0}, "auto.commit.interval.ms must be positive, got 0"),
    ],
)
def test_bad_timings_are_one_line(config: dict[str, Any], message: str) -> None:
    with pytest.raises(LagassignError) as failed:
        read_settings(config, "g", "i", AuthCollector())
    assert str(failed.value) == message


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (("", "i", None, None), "PlanConsumer needs a group and an instance id"),
        (("g", "i", True, None), "capacity must be messages per second > 0, got True"),
        (("g", "i", float("inf"), None), "capacity must be messages per second > 0, got inf"),
        (("g", "i", 10, 0), "offsets_refresh must be seconds > 0, got 0"),
    ],
)
def test_bad_arguments_are_one_line(arguments: tuple[Any, ...], message: str) -> None:
    with pytest.raises(LagassignError) as failed:
        check_arguments(*arguments)
    assert str(failed.value) == message
    check_arguments("g", "i", 2.5, 60.0)  # and good ones pass
