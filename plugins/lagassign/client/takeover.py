"""Taking over the partitions a new plan gives an instance: which may start now, and where.

A pending partition starts once its previous holder has released it under the new plan's
version, or is known dead (``handover.may_start`` has the rule), or after ``handover_timeout``
seconds without either (a safety valve for a status topic that cannot be read). It starts at
its committed offset, else at ``auto.offset.reset`` resolved to an offset so that it can be
committed at once.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping
from typing import Any

from ..core.errors import LagassignError
from ..core.handover import Marker, may_start
from ..core.liveness import Liveness
from ..core.model import TopicPartition as TP

log = logging.getLogger(__name__)

_EARLIEST = ("earliest", "smallest", "beginning")
_LATEST = ("latest", "largest", "end")


def startable(
    committed: Iterable[Any],
    pending: Mapping[TP, float],
    group: str,
    instance_id: str,
    version: int,
    liveness: Liveness,
    handover_timeout: float,
    reset: str,
) -> dict[TP, int | None]:
    """The pending partitions that may start now, each with its committed offset (None: none).

    ``committed``: the partitions' committed offsets as the broker answered (with their
    markers); ``pending``: partition -> when (monotonic) it began to wait."""
    now = int(time.time() * 1000)
    others = {i: s for i, s in liveness.alive(group, now).items() if i != instance_id}
    start: dict[TP, int | None] = {}
    for c in committed:
        tp = TP(c.topic, c.partition)
        offset = c.offset if c.error is None and c.offset >= 0 else None
        marker = Marker.decode(c.metadata) if offset is not None else None
        verdict = may_start(
            tp,
            marker,
            instance_id,
            version,
            lambda i: liveness.is_alive(group, i, now),
            others,
        )
        waited = time.monotonic() - pending[tp]
        if not verdict.go and waited < handover_timeout:
            continue
        why = verdict.why if verdict.go else f"no release within {handover_timeout:g}s"
        where = offset if offset is not None else reset
        log.info("%s/%s: starting %s at %s: %s", group, instance_id, tp, where, why)
        start[tp] = offset
    return start


def start_offsets(
    consumer: Any, start: Mapping[TP, int | None], reset: str, timeout: float, who: str
) -> dict[TP, int]:
    """Offsets to start from: committed ones, else ``auto.offset.reset`` resolved to a number
    (the partition's first or next offset, from ``consumer``'s watermarks)."""
    from confluent_kafka import TopicPartition

    out: dict[TP, int] = {}
    for tp, offset in start.items():
        if offset is not None:
            out[tp] = offset
            continue
        if reset not in _EARLIEST + _LATEST:
            raise LagassignError(f"{who}: {tp} has no committed offset and auto.offset.reset is {reset!r}")
        low, high = consumer.get_watermark_offsets(TopicPartition(*tp), timeout=timeout)
        out[tp] = low if reset in _EARLIEST else high
    return out
