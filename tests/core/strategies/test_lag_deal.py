"""lag deals each topic in rounds instead of a heap step per partition: the same layouts as
KAFKA-5337's reference code, a heap of (count, lag, id) per topic."""

from __future__ import annotations

import heapq
import random

from lagassign.core.case import parse_case
from lagassign.core.model import GroupSnapshot
from lagassign.core.strategies.lag import _deal
from lagassign.core.synthetic import generate_case


def _skewed_case(rnd: random.Random, mixed: bool = False) -> dict:
    """A group whose owned partitions sit unevenly (some members own many, some none, a new
    member joins)."""
    case = generate_case(
        rnd,
        rnd.randint(1, 12),
        rnd.randint(1, 60),
        rnd.choice(["lognormal", "zero"]),
        topics=rnd.randint(1, 4),
        mixed=mixed,
        owned=rnd.choice(["range", "random", None]),
    )
    members = case["members"]
    if rnd.random() < 0.5 and members[0].get("owned"):
        pool = [pair for m in members for pair in m.get("owned") or []]
        for m in members:
            m["owned"] = []
        crowd = rnd.randint(1, len(members))
        for pair in pool:
            if rnd.random() < 0.8:
                members[rnd.randrange(crowd)]["owned"].append(pair)
    if rnd.random() < 0.3:
        members.append({"id": "zz-new", "topics": members[0]["topics"]})
    return case


def _heap_deal(group: GroupSnapshot) -> list[list[int]]:
    """KAFKA-5337's pass as its reference code runs it: per topic a heap of (count, lag, id)."""
    lags, index = group.lags, group.member_index
    layout: list[list[int]] = [[] for _ in group.members]
    for topic, subscribers in group.subscribers.items():
        span = group.topic_span.get(topic)
        if not span:
            continue
        heaviest = sorted(span, key=lags.__getitem__, reverse=True)
        if len(span) <= len(subscribers):
            for p, mid in zip(heaviest, subscribers, strict=False):
                layout[index[mid]].append(p)
            continue
        heap = [(0, 0, mid) for mid in subscribers]
        for p in heaviest:
            count, load, mid = heapq.heappop(heap)
            layout[index[mid]].append(p)
            heapq.heappush(heap, (count + 1, load + lags[p], mid))
    return [sorted(idx) for idx in layout]


def test_lag_rounds_match_the_heap():
    rnd = random.Random(8)
    for _ in range(300):
        group = parse_case(_skewed_case(rnd, mixed=rnd.random() < 0.4))
        assert [sorted(idx) for idx in _deal(group)] == _heap_deal(group)
