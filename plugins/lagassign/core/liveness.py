"""Who is alive in the assign()-mode groups: instances' status records and the rules that read them.

Instances that follow plans (``lagassign.client.PlanConsumer``) never join a consumer group, so
the broker cannot tell who is there. Each one announces itself instead, in the spirit of Kafka
Connect's status topic: a record keyed by (group, instance) on a compacted topic, written every
heartbeat interval, and a tombstone when it closes cleanly. This module is the pure half: the
record format and a table of the newest record per instance (the Kafka edge feeds it).

Record value (JSON, ``format`` 1)::

    {"format": 1, "group": "orders", "instance": "w0", "version": 7,
     "partitions": [["orders", 0], ["orders", 3]], "pending": [["orders", 5]],
     "topics": ["orders"], "rate": 812.5, "lag": 140, "time_ms": 1795400000000,
     "started_ms": 1795390000000, "session_timeout_ms": 30000, "rack": "eu-1a", "host": "pod-7",
     "capacity": 2000.0}

``version`` is the plan version in force at the instance (null before its first plan),
``partitions`` what it consumes now, ``pending`` what the plan gives it but it has not started
yet (waiting for the previous holder to let go), ``rate`` messages processed per second over the
last interval, ``lag`` the messages between its positions and the partitions' ends, ``capacity``
(optional) the messages per second the instance can process, when its operator states it.
``observed_capacity`` is what the planner takes for capacity: the stated one, else the rate of
an instance that is behind (it processes as fast as it can), else unknown.

An instance is **alive** while its newest record is younger than the session timeout (the
watcher's ``--session-timeout``, else the timeout the instance announced); a tombstone means it
left. Times are the sender's clock (``time_ms``): hosts are expected to keep their clocks in sync
(NTP), as Kafka's own time-based features assume.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from .case_rules import is_pair
from .errors import LagassignError
from .model import TopicPartition

STATUS_FORMAT = 1
DEFAULT_SESSION_TIMEOUT_MS = 30_000
DEFAULT_HEARTBEAT_INTERVAL_MS = 3_000


class StatusRecordError(LagassignError):
    """A status record that does not parse; readers skip it."""


def _pairs(value: Any, where: str) -> tuple[TopicPartition, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise StatusRecordError(f"{where}: expected a list of [topic, partition] pairs")
    out = []
    for pair in value:
        if not is_pair(pair):
            raise StatusRecordError(f"{where}: bad [topic, partition] pair {pair!r}")
        out.append(TopicPartition(pair[0], pair[1]))
    return tuple(sorted(set(out)))


@dataclass(frozen=True)
class InstanceStatus:
    """One instance's announcement: what it runs, what it consumes, how fast, as of ``time_ms``."""

    group: str
    instance: str
    time_ms: int
    version: int | None = None
    partitions: tuple[TopicPartition, ...] = ()
    pending: tuple[TopicPartition, ...] = ()
    topics: tuple[str, ...] = ()
    rate: float | None = None
    lag: int | None = None
    started_ms: int | None = None
    session_timeout_ms: int = DEFAULT_SESSION_TIMEOUT_MS
    rack: str | None = None
    host: str | None = None
    capacity: float | None = None

    @property
    def observed_capacity(self) -> float | None:
        """Messages per second it can process: stated, else its rate while behind (saturated)."""
        if self.capacity is not None and self.capacity > 0:
            return self.capacity
        if self.rate is not None and self.rate > 0 and self.lag is not None and self.lag > 0:
            return self.rate
        return None

    def to_json(self) -> str:
        data = asdict(self)
        data["partitions"] = [list(tp) for tp in self.partitions]
        data["pending"] = [list(tp) for tp in self.pending]
        data["topics"] = list(self.topics)
        return json.dumps({"format": STATUS_FORMAT, **data}, separators=(",", ":"), sort_keys=True)

    @classmethod
    def from_value(cls, value: bytes | str | Mapping[str, Any]) -> InstanceStatus:
        """Parse a record value; StatusRecordError when it is not a status record we understand."""
        try:
            data = value if isinstance(value, Mapping) else json.loads(value)
        except (ValueError, UnicodeDecodeError):
            raise StatusRecordError("status record is not JSON") from None
        if not isinstance(data, Mapping) or data.get("format") != STATUS_FORMAT:
            raise StatusRecordError("status record has an unknown format")
        group, instance, time_ms = data.get("group"), data.get("instance"), data.get("time_ms")
        if not isinstance(group, str) or not group or not isinstance(instance, str) or not instance:
            raise StatusRecordError("status record names no group or instance")
        where = f"status of {group}/{instance}"
        if not isinstance(time_ms, int) or isinstance(time_ms, bool):
            raise StatusRecordError(f"{where}: bad time_ms {time_ms!r}")
        version = data.get("version")
        if version is not None and (not isinstance(version, int) or isinstance(version, bool)):
            raise StatusRecordError(f"{where}: bad version {version!r}")
        topics = data.get("topics") or []
        if not isinstance(topics, list) or not all(isinstance(t, str) and t for t in topics):
            raise StatusRecordError(f"{where}: topics must be a list of names")
        timeout = data.get("session_timeout_ms") or DEFAULT_SESSION_TIMEOUT_MS
        if not isinstance(timeout, int) or timeout <= 0:
            raise StatusRecordError(f"{where}: bad session_timeout_ms {timeout!r}")
        rate, lag = data.get("rate"), data.get("lag")
        return cls(
            group=group,
            instance=instance,
            time_ms=time_ms,
            version=version,
            partitions=_pairs(data.get("partitions"), where),
            pending=_pairs(data.get("pending"), where),
            topics=tuple(sorted(set(topics))),
            rate=float(rate) if isinstance(rate, int | float) and not isinstance(rate, bool) else None,
            lag=lag if isinstance(lag, int) and not isinstance(lag, bool) else None,
            started_ms=data.get("started_ms") if isinstance(data.get("started_ms"), int) else None,
            session_timeout_ms=timeout,
            rack=data.get("rack") if isinstance(data.get("rack"), str) else None,
            host=data.get("host") if isinstance(data.get("host"), str) else None,
            capacity=_positive(data.get("capacity")),
        )


def _positive(value: Any) -> float | None:
    """A finite number > 0, else None (a status field an instance may leave out)."""
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 < value < float("inf"):
        return float(value)
    return None


@dataclass(frozen=True)
class Departure:
    """Why an instance is not alive: it closed (tombstone) or went silent; and since when."""

    instance: str
    why: str
    since_ms: int


def describe_silence(ms: int) -> str:
    """``31000`` -> ``"31 s"``; minutes and hours for longer silences."""
    seconds = max(0, ms) // 1000
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min"
    return f"{seconds // 3600} h"


@dataclass
class Liveness:
    """The newest status record of every (group, instance), and who is alive at a given time.

    ``session_timeout_ms`` overrides the timeout each instance announces (the watcher's
    ``--session-timeout``); None uses the announced one.
    """

    session_timeout_ms: int | None = None
    _latest: dict[tuple[str, str], InstanceStatus] = field(default_factory=dict)
    _closed: dict[tuple[str, str], int] = field(default_factory=dict)

    def apply(self, group: str, instance: str, status: InstanceStatus | None, now_ms: int) -> None:
        """Take in one record in topic order; ``None`` is a tombstone (the instance closed).

        A tombstone counts also without a record before it: the log cleaner drops an instance's
        records before its tombstone, which it keeps for the topic's ``delete.retention.ms``."""
        key = (group, instance)
        if status is None:
            self._closed[key] = now_ms
            self._latest.pop(key, None)
            return
        held = self._latest.get(key)
        if held is None or status.time_ms >= held.time_ms:
            self._latest[key] = status
            self._closed.pop(key, None)

    def timeout_of(self, status: InstanceStatus) -> int:
        return self.session_timeout_ms or status.session_timeout_ms

    def status(self, group: str, instance: str) -> InstanceStatus | None:
        """The newest record of an instance (alive or not), None after a tombstone."""
        return self._latest.get((group, instance))

    def is_alive(self, group: str, instance: str, now_ms: int) -> bool:
        status = self._latest.get((group, instance))
        return status is not None and now_ms - status.time_ms <= self.timeout_of(status)

    def alive(self, group: str, now_ms: int) -> dict[str, InstanceStatus]:
        """Instance id -> newest status, for the group's live instances."""
        return {
            i: s
            for (g, i), s in self._latest.items()
            if g == group and now_ms - s.time_ms <= self.timeout_of(s)
        }

    def departure(self, group: str, instance: str, now_ms: int) -> Departure | None:
        """Why an instance is not alive (None while it is): closed, or silent and for how long."""
        key = (group, instance)
        if key in self._closed:
            return Departure(instance, "closed", self._closed[key])
        status = self._latest.get(key)
        if status is None:
            return Departure(instance, "never announced", now_ms)
        silent = now_ms - status.time_ms
        if silent <= self.timeout_of(status):
            return None
        return Departure(instance, f"silent for {describe_silence(silent)}", status.time_ms)

    def groups(self) -> set[str]:
        """Groups with at least one status record (alive or not) or a recent tombstone."""
        return {g for g, _ in self._latest} | {g for g, _ in self._closed}

    def known(self, group: str) -> set[str]:
        """Instances of the group that have a status record or closed while we watched."""
        return {i for g, i in self._latest if g == group} | {i for g, i in self._closed if g == group}


def live_instances(statuses: Iterable[InstanceStatus]) -> dict[str, tuple[str, ...]]:
    """Instance id -> its announced topics (empty when it announced none)."""
    return {s.instance: s.topics for s in statuses}
