"""Kafka's ``CooperativeStickyAssignor`` rounds around any eager sticky builder.

In the cooperative protocol a partition changing owner is first revoked: a round gives each
member the builder's result minus the partitions another member still owned, and the group
rebalances again with what it now owns, until a round changes nothing (KIP-429;
``CooperativeStickyAssignor.adjustAssignment``). ``kafka_constrained`` and ``kafka_general``
replay the two eager builders; this module replays the rounds over either.

Example: C0 owns t-0 and t-1, C1 joins, and the builder's target is C0 [t-0], C1 [t-1]. Round
one withholds t-1 (C0 still owns it): C0 [t-0], C1 []. Round two starts from that, the target
is the same and t-1 is now free: C0 [t-0], C1 [t-1]; round three changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable

from ..dealing.holdings import Layout
from ..model import GroupSnapshot

#: an eager builder: the group and what each member owns in, the target assignment out
Builder = Callable[[GroupSnapshot, Layout], Layout]

#: Kafka's rounds settle in two; the cap only guards against a builder that never settles
MAX_ROUNDS = 10


def cooperative_rounds(group: GroupSnapshot, builder: Builder) -> Layout:
    """The assignment once the cooperative rounds over ``builder`` change nothing more."""
    owned: Layout = {m.id: list(m.owned) for m in group.members}
    got = owned
    for _ in range(MAX_ROUNDS):
        target = builder(group, owned)
        previous = {tp: mid for mid, tps in owned.items() for tp in tps}
        got = {mid: [tp for tp in tps if previous.get(tp, mid) == mid] for mid, tps in target.items()}
        if all(set(got[mid]) == set(owned.get(mid, [])) for mid in got):
            break
        owned = got
    return got
