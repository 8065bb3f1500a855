"""Generated consumer groups (hypothesis strategies producing case objects) and checks on results.

A case follows the contract in docs/ARCHITECTURE.md, so every generated group also goes through validation.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from typing import Any

from hypothesis import strategies as st
from lagassign.core.model import GroupSnapshot, TopicPartition
from lagassign.core.search.engine import CountRule, Search
from lagassign.core.search.lag_objective import LagObjective
from lagassign.core.strategies.examples import example

# Issue 13's smallest sticky case: C0 [t1], C1 [t0, t1] owning t0-1 and t1-1, C2 [t0, t1],
# C3 [t0]. Kafka's sticky and cooperative-sticky move nothing.
ISSUE_13_SMALLEST: dict[str, Any] = {
    "group": "g",
    "members": [
        {"id": "C0", "topics": ["t1"]},
        {"id": "C1", "topics": ["t0", "t1"], "owned": [["t0", 1], ["t1", 1]]},
        {"id": "C2", "topics": ["t0", "t1"]},
        {"id": "C3", "topics": ["t0"]},
    ],
    "partitions": [{"topic": "t0", "partition": p, "lag": 0} for p in range(4)]
    + [{"topic": "t1", "partition": p, "lag": 0} for p in range(6)],
}

# Short ids over a small alphabet: collisions in prefixes and case make the sort order matter.
member_ids = st.text(alphabet="abAB019-", min_size=1, max_size=4)
_LAG_CHOICES = (0, 1, 100, 100_000)  # ties and zeros, often


@st.composite
def cases(
    draw,
    max_members: int = 6,
    max_topics: int = 4,
    max_partitions: int = 6,
    subscriptions: str = "any",
    owned: bool = True,
    max_total: int | None = None,
) -> dict[str, Any]:
    """A valid case. ``subscriptions``: "identical", "mixed" (each member its own subset) or "any".

    Topics nobody subscribes to may appear; ``owned`` draws a current owner (or none) for
    every partition, including owners no longer subscribed to its topic. ``max_total`` caps
    the partitions of all topics together. Few, bulk draws: generation is most of the cost of
    a property test.
    """
    sizes = draw(st.lists(st.integers(1, max_partitions), min_size=1, max_size=max_topics))
    if max_total is not None:
        capped, room = [], max_total
        for size in sizes:
            if room > 0:
                capped.append(min(size, room))
                room -= capped[-1]
        sizes = capped
    topics = [f"t{i}" for i in range(len(sizes))]
    tps = [(t, p) for t, size in zip(topics, sizes, strict=True) for p in range(size)]
    ids = draw(st.lists(member_ids, min_size=1, max_size=max_members, unique=True))
    subsets = st.lists(st.sampled_from(topics), min_size=1, unique=True).map(sorted)
    if subscriptions == "any":
        subscriptions = draw(st.sampled_from(["identical", "mixed"]))
    if subscriptions == "identical":
        subs = [draw(subsets)] * len(ids)
    else:
        subs = draw(st.lists(subsets, min_size=len(ids), max_size=len(ids)))
    members = [{"id": mid, "topics": topics_, "owned": []} for mid, topics_ in zip(ids, subs, strict=True)]
    # Lags and owners come from a seeded Random: one draw instead of two per partition keeps
    # generation cheap; the structure above still shrinks.
    rnd = random.Random(draw(st.integers(0, 2**32)))
    lag_values = [rnd.choice(_LAG_CHOICES) if rnd.random() < 0.4 else rnd.randint(0, 10**6) for _ in tps]
    if rnd.random() < 0.5:
        partitions = [
            {"topic": t, "partition": p, "lag": x} for (t, p), x in zip(tps, lag_values, strict=True)
        ]
    else:
        partitions = [
            {"topic": t, "partition": p, "begin": 5, "end": 5 + x, "committed": 5}
            for (t, p), x in zip(tps, lag_values, strict=True)
        ]
    if owned:
        for tp in tps:
            holder = rnd.randint(-1, len(ids) - 1)
            if holder >= 0:
                members[holder]["owned"].append(list(tp))
    return {"group": "g", "auto_offset_reset": "earliest", "members": members, "partitions": partitions}


def owned_case(case: dict[str, Any], assignment: dict[str, list]) -> dict[str, Any]:
    """The same case with ``owned`` replaced by an assignment (member -> [[topic, partition]])."""
    members = [{**m, "owned": [list(p) for p in assignment.get(m["id"], [])]} for m in case["members"]]
    return {**case, "members": members}


# ---- checks on an Assignment (members -> list of TopicPartition) ----------------------------


def check_valid(group: GroupSnapshot, members: dict[str, list[TopicPartition]]) -> None:
    """Every assignable partition exactly once, only to a subscriber; every member listed."""
    assert sorted(members) == sorted(group.member_ids)
    held = Counter(tp for tps in members.values() for tp in tps)
    twice = [tp for tp, n in held.items() if n > 1]
    assert not twice, f"assigned more than once: {twice}"
    assert set(held) == set(group.assignable), "assigned set differs from the subscribed partitions"
    topics = {m.id: m.topics for m in group.members}
    wrong = [(mid, tp) for mid, tps in members.items() for tp in tps if tp.topic not in topics[mid]]
    assert not wrong, f"assigned to a non-subscriber: {wrong}"
    for mid, tps in members.items():
        assert tps == sorted(tps), f"{mid}'s partitions are not sorted"


def kafka_balance_violation(group: GroupSnapshot, members: dict[str, list[TopicPartition]]) -> str | None:
    """Kafka's condition: counts within one, or no member 2+ short of another could take one of its."""
    count = {mid: len(tps) for mid, tps in members.items()}
    for giver, tps in members.items():
        for tp in tps:
            for taker in group.subscribers[tp.topic]:
                if count[taker] <= count[giver] - 2:
                    return f"{taker} ({count[taker]}) could take {tp} from {giver} ({count[giver]})"
    return None


def per_topic_spread(group: GroupSnapshot, members: dict[str, list[TopicPartition]]) -> dict[str, int]:
    """Topic -> max minus min count of that topic's partitions among its subscribers."""
    spread = {}
    for topic, subs in group.subscribers.items():
        per_member = [sum(1 for tp in members[mid] if tp.topic == topic) for mid in subs]
        spread[topic] = max(per_member) - min(per_member)
    return spread


def moved(before: dict[TopicPartition, str], after: dict[str, list[TopicPartition]]) -> set[TopicPartition]:
    """Partitions owned before that end with another member."""
    owner = {tp: mid for mid, tps in after.items() for tp in tps}
    return {tp for tp, mid in before.items() if owner.get(tp) != mid}


def brute_force_min_max_lag(group: GroupSnapshot) -> int:
    """The smallest achievable max member lag, by trying every assignment (small groups only)."""
    lag = group.lag
    tps = group.assignable
    choices = [group.subscribers[tp.topic] for tp in tps]
    index = {mid: i for i, mid in enumerate(group.member_ids)}
    best = None
    for pick in itertools.product(*choices):
        load = [0] * len(index)
        for tp, mid in zip(tps, pick, strict=True):
            load[index[mid]] += lag[tp]
        worst = max(load)
        if best is None or worst < best:
            best = worst
    return best if best is not None else 0


def skewed_orders(lags: list[int]) -> dict:
    """The tests' usual skewed group: C0 owns t-0..t-2, C1 owns t-3, with these four lags."""
    return {
        "group": "orders",
        "auto_offset_reset": "earliest",
        "members": [
            {"id": "C0", "topics": ["t"], "owned": [["t", 0], ["t", 1], ["t", 2]]},
            {"id": "C1", "topics": ["t"], "owned": [["t", 3]]},
        ],
        "partitions": [{"topic": "t", "partition": i, "lag": lag} for i, lag in enumerate(lags)],
    }


def random_search(rng: random.Random, members: int, partitions: int, spread: int, mixed: bool) -> Search:
    """A search over a random group: owners for most partitions, each partition with a random
    subscriber, counts dealt evenly where subscriptions allow (so hand-overs may happen)."""
    ids = [f"C{i}" for i in range(members)]
    topics = ["t0", "t1"] if mixed else ["t0"]
    subscriptions = {m: (rng.sample(topics, rng.randint(1, 2)) if mixed else topics) for m in ids}
    lags = {t: [rng.randrange(spread) for _ in range(partitions)] for t in topics}
    owned: dict[str, list[str]] = {m: [] for m in ids}
    for t in topics:
        for p in range(partitions):
            if rng.random() < 0.8:
                owned[rng.choice(ids)].append(f"{t}-{p}")
    group = example(subscriptions, lags, owned)
    layout: dict[str, list[int]] = {m: [] for m in ids}
    for k, i in enumerate(group.assignable_index):
        readers = group.subscribers[group.columns.topics[i]]
        layout[readers[k % len(readers)] if not mixed else rng.choice(readers)].append(i)
    rule = CountRule.balanced({m: len(idx) for m, idx in layout.items()})
    return Search(group, layout, LagObjective(), rule, {m: m.encode() for m in ids})
