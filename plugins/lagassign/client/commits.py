"""What one instance processed and committed, per partition it holds, and its commits.

Every commit carries the instance's handover marker (``handover.Marker``: who, under which plan
version, holding or released) in its metadata; a taker reads it before it starts a partition.
A commit Kafka refuses because the group has members of the group protocol raises
``GroupMembersError`` (``kafka_rules``); other failures are logged and the next holder replays
from the last commit (at-least-once).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping
from typing import Any

from ..core.handover import Marker
from ..core.model import TopicPartition as TP
from .kafka_rules import refuse_if_members, refused_by_members

log = logging.getLogger(__name__)


class Commits:
    """Positions (next offset to process), last committed offsets and when they were committed,
    per started partition of one instance; ``consumer`` is its data consumer."""

    def __init__(
        self, consumer: Any, group: str, instance_id: str, admin_conf: Mapping[str, Any], timeout: float
    ) -> None:
        self._consumer = consumer
        self._group, self._instance_id = group, instance_id
        self._admin_conf, self._timeout = admin_conf, timeout
        self.positions: dict[TP, int] = {}  # next offset to process, per started partition
        self._committed: dict[TP, int] = {}  # last position committed, per started partition
        self._committed_at: dict[TP, float] = {}  # when (monotonic), per started partition

    def commit(
        self,
        tps: Iterable[TP] | Mapping[TP, int],
        version: int | None,
        released: bool,
        only_changed: bool = False,
    ) -> None:
        """Commit the positions of ``tps`` (a set, or a mapping of offsets) with the marker of
        plan ``version``; ``only_changed`` skips partitions whose position was committed already."""
        from confluent_kafka import KafkaException, TopicPartition

        positions = dict(tps) if isinstance(tps, Mapping) else {tp: self.positions.get(tp) for tp in tps}
        if only_changed:
            positions = {tp: o for tp, o in positions.items() if self._committed.get(tp) != o}
        marker = Marker(self._instance_id, version, released).encode()
        offsets = [
            TopicPartition(t, p, o, metadata=marker)
            for (t, p), o in sorted(positions.items())
            if o is not None and o >= 0
        ]
        if not offsets:
            return
        try:
            self._consumer.commit(offsets=offsets, asynchronous=False)
        except KafkaException as exc:
            name = refused_by_members(exc)
            if name is not None:  # a member joined: raises, naming it
                what = f"commit refused ({name})"
                refuse_if_members(self._admin_conf, self._group, self._instance_id, self._timeout, what)
            # Not fatal: whoever takes these partitions over starts from the last commit and
            # processes some messages again (at-least-once).
            log.warning("%s/%s: commit failed: %s", self._group, self._instance_id, exc)
            return
        now = time.monotonic()
        for o in offsets:
            self._committed[TP(o.topic, o.partition)] = o.offset
            self._committed_at[TP(o.topic, o.partition)] = now

    def refresh(self, held: Iterable[TP], version: int | None, every: float | None) -> None:
        """Commit again the committed offset of every ``held`` partition last committed
        ``every`` seconds ago or more, so Kafka's offset retention never expires it."""
        if not every:
            return
        due = time.monotonic() - every
        stale = {
            tp: self._committed[tp]
            for tp in held
            if tp in self._committed and self._committed_at.get(tp, 0.0) <= due
        }
        if stale:
            log.info("%s/%s: refreshing %d committed offsets", self._group, self._instance_id, len(stale))
            self.commit(stale, version, released=False)

    def forget(self, tps: Iterable[TP]) -> None:
        """Partitions given up: their positions and commits are no longer this instance's."""
        for tp in tps:
            self.positions.pop(tp, None)
            self._committed.pop(tp, None)
            self._committed_at.pop(tp, None)

    def lag(self, held: Iterable[TP]) -> int | None:
        """Messages between the positions of ``held`` and their partitions' ends, from
        librdkafka's cache (None when no end is known yet)."""
        from confluent_kafka import TopicPartition

        total, known = 0, False
        for tp in held:
            try:
                _low, high = self._consumer.get_watermark_offsets(TopicPartition(*tp), cached=True)
            except Exception:  # not fetched yet
                continue
            pos = self.positions.get(tp)
            if high is not None and high >= 0 and pos is not None:
                total += max(0, high - pos)
                known = True
        return total if known else None
