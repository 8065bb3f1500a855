"""Handing a partition from one instance to another without processing a message twice.

Kafka's cooperative rebalancing is the anchor: a partition is revoked (and its offsets
committed) before it is assigned elsewhere. Instances that follow lagassign plans do the same
through the group's committed offsets: every commit an instance makes carries a **marker** in
the commit metadata naming the instance, the plan version it acted under, and whether it still
holds the partition or has released it. The instance that gives a partition up commits what it
processed with a *released* marker before it announces the new version; the one that takes it
starts only when ``may_start`` says so, and commits a *held* marker (its claim) before it
fetches anything.

The rule (pure; ``PlanConsumer`` asks it for each partition it waits for):

1. no marker: nobody has claimed the partition: start;
2. the taker's own *held* marker (it restarted): start from its own commit;
3. a *released* marker of the taker's version or newer: the giver has let go under this plan:
   start;
4. the marker's instance is dead (closed, or silent past its session timeout): start from its
   last commit, replaying at most one commit interval;
5. every other live instance announces this version or newer and none lists the partition:
   nobody can still hold it (the giver's release commit may have failed): start;
6. else wait.

Example: plan v3 moves ``orders-2`` from w0 to w1. w1 reads the marker
``{"instance": "w0", "version": 2, "released": false}``: w0 holds it under v2, so w1 waits.
w0 sees v3, stops fetching ``orders-2``, commits offset 8,031 with
``{"instance": "w0", "version": 3, "released": true}``; w1's next check starts it at 8,031.
Had w0 been killed instead, w1 starts from w0's last commit once w0 is silent for 30 s.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from .liveness import InstanceStatus
from .model import TopicPartition

MARKER_KEY = "lagassign"


@dataclass(frozen=True)
class Marker:
    """Who committed a partition's offset, under which plan version, and whether it let go."""

    instance: str
    version: int | None
    released: bool

    def encode(self) -> str:
        """The commit metadata string (Kafka keeps up to ``offset.metadata.max.bytes``, 4 KiB)."""
        body = {"instance": self.instance, "version": self.version, "released": self.released}
        return json.dumps({MARKER_KEY: body}, separators=(",", ":"), sort_keys=True)

    @classmethod
    def decode(cls, metadata: str | None) -> Marker | None:
        """The marker in a commit's metadata, or None (no metadata, or another tool's)."""
        if not metadata:
            return None
        try:
            body = json.loads(metadata).get(MARKER_KEY)
        except (ValueError, AttributeError):
            return None
        if not isinstance(body, dict) or not isinstance(body.get("instance"), str):
            return None
        version = body.get("version")
        if version is not None and (not isinstance(version, int) or isinstance(version, bool)):
            return None
        return cls(body["instance"], version, bool(body.get("released")))


@dataclass(frozen=True)
class Verdict:
    """Whether the taker may start the partition now, and why (for logs)."""

    go: bool
    why: str


def may_start(
    tp: TopicPartition,
    marker: Marker | None,
    taker: str,
    version: int,
    is_alive: Callable[[str], bool],
    others: Mapping[str, InstanceStatus],
) -> Verdict:
    """May ``taker``, under plan ``version``, start ``tp`` whose commit carries ``marker``?

    ``is_alive(instance)`` reads the status topic; ``others`` are the group's other live
    instances with their newest status (for rule 5).
    """
    if marker is None:
        return Verdict(True, "no instance has claimed it")
    if marker.instance == taker and not marker.released:
        return Verdict(True, "this instance held it before")
    if marker.released and marker.version is not None and marker.version >= version:
        return Verdict(True, f"{marker.instance} released it under v{marker.version}")
    if marker.instance != taker and not is_alive(marker.instance):
        return Verdict(True, f"{marker.instance}, its last holder, is dead")
    behind = sorted(i for i, s in others.items() if i != taker and (s.version or 0) < version)
    holding = sorted(i for i, s in others.items() if i != taker and tp in s.partitions)
    if not behind and not holding:
        return Verdict(True, f"every live instance runs v{version} or newer and none holds it")
    who = marker.instance if not marker.released else (holding or behind)[0]
    return Verdict(False, f"waiting for {who} to release it")
