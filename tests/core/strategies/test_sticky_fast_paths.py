"""The count-balancing strategies' shortcuts give the answers of their general code.

sticky's passes 1-3 on one shared subscription skip the ``LoadBook``; fewer_moves runs
Floyd-Warshall in plain Python on a few members; lag deals each topic in rounds instead of a
heap step per partition. Each must match its reference exactly, orders included.
"""

from __future__ import annotations

import heapq
import random

import numpy as np
from lagassign.core.case import parse_case
from lagassign.core.dealing.fewer_moves import _INF, _PLAIN_FLOYD, _shortest
from lagassign.core.model import GroupSnapshot
from lagassign.core.strategies.lag import _deal
from lagassign.core.strategies.sticky import _one_subscription_passes, _sticky_book
from lagassign.core.synthetic import generate_case


def _skewed_case(rnd: random.Random, mixed: bool = False) -> dict:
    """A group whose owned partitions sit unevenly (some members own many, some none, a new
    member joins), so that passes 2 and 3 both have work."""
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


def test_sticky_passes_on_one_subscription_match_the_book():
    rnd = random.Random(9)
    checked = 0
    for _ in range(400):
        group = parse_case(_skewed_case(rnd))
        fast = _one_subscription_passes(group)
        assert fast is not None
        book = _sticky_book(group).assignment()
        assert fast == book and list(fast) == list(book)
        checked += 1
    assert checked == 400


def _numpy_floyd(cost: list[list[int]]) -> tuple[list[list[int]], list[list[int]]]:
    dist = np.array(cost, dtype=np.int64)
    n = dist.shape[0]
    nxt = np.tile(np.arange(n), (n, 1))
    for k in range(n):
        through = dist[:, k, None] + dist[None, k, :]
        better = through < dist
        dist = np.where(better, through, dist)
        nxt = np.where(better, nxt[:, k, None], nxt)
    return dist.tolist(), nxt.tolist()


def test_plain_floyd_warshall_matches_numpy_with_negative_cycles():
    rnd = random.Random(3)
    weights = [_INF, -1, 0, 1, 1000, -1000, -1_001_000]
    for n in range(1, _PLAIN_FLOYD + 3):
        for _ in range(30):
            cost = [[rnd.choice(weights) for _ in range(n)] for _ in range(n)]
            assert _shortest(cost) == _numpy_floyd(cost)


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
