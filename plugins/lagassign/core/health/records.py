"""What the health rules read (observations of a group, its instances) and what they find."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ..catchup import NEVER, duration_text
from .statuses import DEAD

TP = tuple[str, int]


class Point(NamedTuple):
    """One observation of a group's partition: when (s), end offset, committed offset (None: no
    commit), lag by the group's reset policy (None: unknown). A tuple: a page judges hundreds of
    thousands of them."""

    t: float
    end: int | None
    committed: int | None
    lag: int | None


@dataclass(frozen=True)
class PartitionInput:
    """A partition of a group: its observations oldest first (the last is now), who holds it
    now (member or instance id; None: nobody), and older end offsets for lag in seconds."""

    topic: str
    partition: int
    points: tuple[Point, ...]
    owner: str | None = None
    ends: tuple[tuple[float, int], ...] = ()

    @property
    def tp(self) -> TP:
        return (self.topic, self.partition)

    @property
    def now(self) -> Point | None:
        return self.points[-1] if self.points else None


@dataclass(frozen=True)
class InstanceInput:
    """An assign()-mode instance as its status records show it: alive or not (and why not), the
    version it runs, what it consumes and waits for, its capacity, whether the plan names it."""

    instance: str
    alive: bool
    version: int | None = None
    in_plan: bool = False
    partitions: tuple[TP, ...] = ()
    pending: tuple[TP, ...] = ()
    capacity: float | None = None
    why: str | None = None
    host: str | None = None
    last_seen: float | None = None


@dataclass(frozen=True)
class GroupInput:
    """What is known of one group now: its kind (``subscribe`` | ``assign``), group type and
    state, its members (subscribe: member ids; assign: live instances), partitions with their
    observations, the plan in force (assign), its instances, and capacities where known."""

    group: str
    kind: str = "subscribe"
    partitions: tuple[PartitionInput, ...] = ()
    members: tuple[str, ...] = ()
    group_type: str | None = None
    state: str | None = None
    plan_version: int | None = None
    plan: Mapping[str, Sequence[TP]] | None = None
    instances: tuple[InstanceInput, ...] = ()
    capacities: Mapping[str, float] = field(default_factory=dict)
    error: str | None = None


@dataclass(frozen=True)
class Finding:
    """One rule that applies: its status, one line why, and the partitions or instances it is about."""

    status: str
    reason: str
    about: tuple[str, ...] = ()


@dataclass(frozen=True)
class PartitionHealth:
    """A partition's figures now and its status by the partition rules."""

    topic: str
    partition: int
    status: str
    reason: str
    lag: int | None
    lag_s: float | None
    end: int | None
    committed: int | None
    owner: str | None
    inflow: float | None
    consumed: float | None

    @property
    def name(self) -> str:
        """'topic-partition', as findings name it."""
        return f"{self.topic}-{self.partition}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "topic": self.topic,
            "partition": self.partition,
            "status": self.status,
            "reason": self.reason,
            "lag": self.lag,
            "lag_s": _round(self.lag_s),
            "end": self.end,
            "committed": self.committed,
            "owner": self.owner,
            "inflow": _round(self.inflow, 3),
            "consumed": _round(self.consumed, 3),
        }


@dataclass(frozen=True)
class GroupHealth:
    """A group's status (its worst finding), every finding, its lag figures and partitions."""

    group: str
    status: str
    findings: tuple[Finding, ...]
    partitions: tuple[PartitionHealth, ...]
    total_lag: int
    max_lag: int
    max_lag_s: float | None
    catch_up_s: float | None
    inflow: float | None
    consumed: float | None
    not_read: tuple[str, ...] = ()

    @property
    def reason(self) -> str:
        worst = [f for f in self.findings if f.status == self.status]
        if worst:
            return "; ".join(f.reason for f in worst)
        return "every partition keeps up" if self.partitions else "no partition to consume"

    @property
    def key(self) -> tuple[str, ...]:
        """What an alert is about: the status and, for DEAD, which instances (another one dying
        is another change)."""
        if self.status == DEAD:
            dead = sorted({a for f in self.findings if f.status == DEAD for a in f.about})
            return (DEAD, *dead)
        return (self.status,)

    @property
    def catch_up_text(self) -> str:
        if self.catch_up_s is None:
            return "unknown"
        return duration_text(self.catch_up_s)

    def to_dict(self) -> dict[str, Any]:
        never = self.catch_up_s is not None and self.catch_up_s == NEVER
        return {
            "group": self.group,
            "status": self.status,
            "reason": self.reason,
            "findings": [
                {"status": f.status, "reason": f.reason, "about": list(f.about)} for f in self.findings
            ],
            "total_lag": self.total_lag,
            "max_lag": self.max_lag,
            "max_lag_s": _round(self.max_lag_s),
            "catch_up_s": None if never else _round(self.catch_up_s),
            "never_catches_up": never,
            "inflow": _round(self.inflow, 3),
            "consumed": _round(self.consumed, 3),
            "not_read": list(self.not_read),
            "partitions": [p.to_dict() for p in self.partitions],
        }


def _round(value: float | None, digits: int = 1) -> float | None:
    if value is None or not math.isfinite(value):
        return None
    return round(value, digits)
