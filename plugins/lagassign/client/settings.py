"""``PlanConsumer``'s settings: its arguments checked, the consumer settings it honours itself,
and the librdkafka settings of the clients it runs, derived from the application's.

An instance runs four clients: the data consumer (the application's settings, in assign()
mode, committing only through ``PlanConsumer``), the follower of the plans and status topics
(its group id is never used: no subscribe, no commit), an admin client and the status topic's
producer (the application's settings less what only a consumer accepts). The group protocol's
timing settings (``session.timeout.ms``, ``heartbeat.interval.ms``, ``max.poll.interval.ms``)
are ``PlanConsumer``'s own liveness rules, so they are read here and kept from librdkafka.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..core.errors import LagassignError
from ..core.liveness import DEFAULT_HEARTBEAT_INTERVAL_MS, DEFAULT_SESSION_TIMEOUT_MS
from ..kafka.connection import AuthCollector

DEFAULT_COMMIT_INTERVAL_MS = 5_000
DEFAULT_MAX_POLL_INTERVAL_MS = 300_000
DEFAULT_HANDOVER_TIMEOUT_S = 120.0

# Consumer-only settings a producer (or admin client) would warn about or refuse.
_CONSUMER_ONLY = frozenset(
    {
        "group.id",
        "enable.auto.commit",
        "enable.partition.eof",
        "auto.offset.reset",
        "auto.commit.interval.ms",
        "fetch.wait.max.ms",
        "fetch.min.bytes",
        "fetch.max.bytes",
        "max.partition.fetch.bytes",
        "queued.min.messages",
        "queued.max.messages.kbytes",
        "session.timeout.ms",
        "heartbeat.interval.ms",
        "max.poll.interval.ms",
        "partition.assignment.strategy",
        "group.instance.id",
        "client.rack",
        "isolation.level",
        "check.crcs",
        "enable.auto.offset.store",
        "group.protocol",
        "group.remote.assignor",
        "fetch.error.backoff.ms",
        "fetch.queue.backoff.ms",
        "coordinator.query.interval.ms",
        "error_cb",
    }
)


def check_arguments(
    group: str, instance_id: str, capacity: float | None, offsets_refresh: float | None
) -> None:
    """``LagassignError`` with one line when an argument of ``PlanConsumer`` is out of range."""
    if not group or not instance_id:
        raise LagassignError("PlanConsumer needs a group and an instance id")
    if capacity is not None and (
        isinstance(capacity, bool) or not isinstance(capacity, int | float) or not 0 < capacity < float("inf")
    ):
        raise LagassignError(f"capacity must be messages per second > 0, got {capacity!r}")
    if offsets_refresh is not None and not 0 < offsets_refresh < float("inf"):
        raise LagassignError(f"offsets_refresh must be seconds > 0, got {offsets_refresh!r}")


@dataclass(frozen=True)
class ConsumerSettings:
    """What ``PlanConsumer`` reads from the application's consumer settings, and the data
    consumer's librdkafka settings (``consumer``) built from them."""

    consumer: dict[str, Any]
    auto_commit: bool
    commit_interval: float  # seconds
    session_timeout_ms: int
    heartbeat_interval: float  # seconds
    max_poll_interval: float  # seconds
    rack: str | None
    reset: str  # auto.offset.reset, lower case

    @property
    def follower(self) -> dict[str, Any]:
        """The plans and status follower's settings (it reads from the start, never commits)."""
        return {
            **self.consumer,
            "group.id": f"{self.consumer['group.id']}.lagassign-plans",
            "auto.offset.reset": "earliest",
            "client.id": f"{self.consumer['client.id']}.plans",
            "enable.partition.eof": True,
        }

    @property
    def admin(self) -> dict[str, Any]:
        """An admin client's (or producer's) settings: the consumer's, less consumer-only keys."""
        return {k: v for k, v in self.consumer.items() if k not in _CONSUMER_ONLY}

    @property
    def announcer(self) -> dict[str, Any]:
        """The status topic producer's settings."""
        return {**self.admin, "client.id": f"{self.consumer['client.id']}.status"}


def read_settings(
    config: Mapping[str, Any], group: str, instance_id: str, auth: AuthCollector
) -> ConsumerSettings:
    """The settings of one instance from the application's ``config``; ``auth`` hears of
    authentication and TLS failures first (then a callback the application configured)."""
    conf = dict(config)
    conf.setdefault("client.id", f"{group}.{instance_id}")
    auto_commit = _flag(conf, "enable.auto.commit", True)
    commit_interval = _ms(conf, "auto.commit.interval.ms", DEFAULT_COMMIT_INTERVAL_MS) / 1000
    session_timeout_ms = _ms(conf, "session.timeout.ms", DEFAULT_SESSION_TIMEOUT_MS)
    heartbeat_interval = _ms(conf, "heartbeat.interval.ms", DEFAULT_HEARTBEAT_INTERVAL_MS) / 1000
    max_poll_interval = _ms(conf, "max.poll.interval.ms", DEFAULT_MAX_POLL_INTERVAL_MS) / 1000
    rack = conf.get("client.rack") or None
    reset = str(conf.get("auto.offset.reset", "latest")).lower()
    conf["error_cb"] = auth.wrap(conf.get("error_cb"))
    conf.update({"group.id": group, "enable.auto.commit": False, "enable.partition.eof": False})
    # librdkafka requires max.poll.interval.ms >= session.timeout.ms; neither is used in
    # assign() mode by librdkafka itself, so keep its own defaults where ours would clash.
    for key in ("session.timeout.ms", "heartbeat.interval.ms", "max.poll.interval.ms"):
        conf.pop(key, None)
    return ConsumerSettings(
        conf,
        auto_commit,
        commit_interval,
        session_timeout_ms,
        heartbeat_interval,
        max_poll_interval,
        rack,
        reset,
    )


def _ms(conf: Mapping[str, Any], key: str, default: int) -> int:
    """A positive whole number of milliseconds (``LagassignError`` otherwise)."""
    value = conf.get(key, default)
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise LagassignError(f"{key} must be a whole number of milliseconds, got {value!r}") from None
    if number <= 0:
        raise LagassignError(f"{key} must be positive, got {number}")
    return number


def _flag(conf: Mapping[str, Any], key: str, default: bool) -> bool:
    """A boolean setting, given as a bool or as text (``true``, ``1``, ``yes``)."""
    value = conf.get(key, default)
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in ("true", "1", "yes")
