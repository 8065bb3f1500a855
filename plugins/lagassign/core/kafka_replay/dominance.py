"""Per group, a sticky result at least as good as Kafka's on moves and rack locality at once.

Sticky's chain search puts rack locality first, so on mixed subscriptions it can end with more
rack-local partitions *and* more moves than Kafka's general builder, which stops at its own
local optimum. ``dominating(group, ours, kafka)`` keeps ours when it moves no more and reads
no fewer rack-local partitions than Kafka's; otherwise it starts from Kafka's result and keeps
only chain-search improvements (``fewer_moves``) that worsen neither count, else Kafka's as is.

Spec: issue 13 ("never more moves than Kafka's and at least Kafka's share of rack-local
partitions"), Kafka's result from ``kafka_general``.

Example: ours moves 3 partitions for 14 rack-local, Kafka's 1 for 13: ours does not dominate,
so the answer starts from Kafka's (1 move, 13 or more rack-local).
"""

from __future__ import annotations

from ..dealing.fewer_moves import fewer_moves
from ..dealing.holdings import Layout
from ..model import GroupSnapshot


def moves_and_local(group: GroupSnapshot, layout: Layout) -> tuple[int, int]:
    """Owned partitions that end elsewhere, and partitions read on a rack holding a replica."""
    owner = {tp: mid for mid, tps in layout.items() for tp in tps}
    moves = sum(1 for tp, mid in group.owner.items() if owner.get(tp) != mid)
    rack = {m.id: m.rack for m in group.members}
    local = sum(1 for tp, mid in owner.items() if rack[mid] in group.partitions[tp].racks)
    return moves, local


def dominating(group: GroupSnapshot, ours: Layout, kafka: Layout) -> Layout:
    """``ours`` if it is at least as good as ``kafka`` on both counts, else ``kafka`` improved
    by the chain search where that worsens neither count."""
    k_moves, k_local = moves_and_local(group, kafka)

    def fits(layout: Layout) -> bool:
        moves, local = moves_and_local(group, layout)
        return moves <= k_moves and local >= k_local

    if fits(ours):
        return ours
    for racks in (True, False):
        improved = fewer_moves(group, kafka, racks)
        if fits(improved):
            return improved
    return kafka
