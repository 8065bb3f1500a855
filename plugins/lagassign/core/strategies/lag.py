"""KAFKA-5337 / kafka-lag-based-assignor, exactly as its reference code behaves.

Per topic: partitions by lag descending (ties by partition number), each to the subscriber
with the fewest partitions of that topic, ties by the least lag assigned from that topic,
then by member id. Counters restart for every topic, so balance is per topic only.

Spec: KAFKA-5337 and the reference kafka-lag-based-assignor (its README and code).

Example: two topics with one hot partition each; counters restart per topic, so C0 takes
both hot partitions (18 against 2), the weakness lag-aware fixes::

    >>> from lagassign.core.strategies.examples import example, show
    >>> g = example({"C0": ["t0", "t1"], "C1": ["t0", "t1"]}, {"t0": [9, 1], "t1": [9, 1]})
    >>> show(LagStrategy().assign(g), g)
    C0: t0-0 t1-0  (lag 18)
    C1: t0-1 t1-1  (lag 2)
"""

from __future__ import annotations

from ..dealing.rounds import deal_rounds
from ..model import Assignment, GroupSnapshot
from .base import Strategy, build_indexed


class LagStrategy(Strategy):
    name = "lag"
    summary = "KAFKA-5337: per topic, heaviest partition to the member with fewest, then least lag"

    def assign(self, group: GroupSnapshot) -> Assignment:
        return build_indexed(self.name, group, _deal(group))


def _deal(group: GroupSnapshot) -> list[list[int]]:
    """Partition indices per member index, in dealing order (``build_indexed`` sorts them)."""
    lags = group.lags
    index = group.member_index
    spans = group.topic_span
    layout: list[list[int]] = [[] for _ in group.members]
    for topic, subscribers in group.subscribers.items():
        span = spans.get(topic)
        if not span:
            continue
        # heaviest first, ties by partition number (a stable sort keeps the index order)
        heaviest = sorted(span, key=lags.__getitem__, reverse=True)
        # (fewest of the topic, least lag of it, id) deals in rounds: at the start of round r
        # every subscriber holds r, so the round's partitions go one each, by (lag, id); with
        # no more partitions than subscribers, the first of them by id take one each
        held = [layout[index[mid]] for mid in subscribers[: len(span)]]  # subscribers are sorted by id
        deal_rounds(heaviest, lags, range(len(held)), held)  # stable: ties by id
    return layout
