"""Snapshots the tests write by hand, without a broker: one group on one topic, as the
snapshot tables hold it (``lagassign.tables.snapshot.Snapshot``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lagassign.tables.snapshot import Snapshot


def one_group_snapshot(
    group: str, kind: str, offsets: Sequence[tuple[int, int]], members: list[dict[str, Any]], at: str
) -> Snapshot:
    """Cluster ``k1`` at ``at`` with one Stable group (``kind``: subscribe or assign; reset
    latest) on topic ``t``: partition p holds offsets 0 to its end and is consumed up to its
    committed offset, ``offsets[p]`` = (end, committed); ``members``: the group's member rows."""
    return Snapshot(
        groups=[{"group": group, "kind": kind, "state": "Stable", "auto_offset_reset": "latest"}],
        partitions=[
            {
                "group": group,
                "topic": "t",
                "partition": p,
                "begin": 0,
                "end": end,
                "committed": committed,
                "lag": end - committed,
            }
            for p, (end, committed) in enumerate(offsets)
        ],
        members=members,
        manifest={"cluster_id": "k1", "snapshot_at": at},
    )
