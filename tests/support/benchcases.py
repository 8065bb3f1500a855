"""Groups the benchmarks measure, built here for the benches and for tests that check a claim
made on them: Kafka's JMH and KIP-615 groups (``bench/speed.py``, ``bench/jmh_point.py`` use
``jmh_group`` and ``as_case``), and ``bench/drain.py``'s timed groups (the same seeds and draws,
so the same groups)."""

from __future__ import annotations

import random
from typing import Any

Sizes = dict[str, int]
Members = list[tuple[str, list[str]]]
Lags = dict[tuple[str, int], int]


def jmh_group(members: int, topics: int, per_topic: int, buckets: int) -> tuple[Sizes, Members, Lags]:
    """(topic -> partition count, [(member id, topics)], lag per partition) of a group shaped as
    Kafka's JMH benchmarks shape theirs: member and topic ranges split evenly into ``buckets``,
    bucket b's members subscribe to bucket b's topics; seeded lags, a fair share of them zero."""
    names = [f"topic{i}" for i in range(topics)]
    sizes = dict.fromkeys(names, per_topic)
    rnd = random.Random(615)
    lags = {(t, p): rnd.choice((0, rnd.randint(0, 10**6))) for t in names for p in range(per_topic)}
    per_bucket_members, per_bucket_topics = -(-members // buckets), -(-topics // buckets)
    subscribed = []
    for i in range(members):
        b = i // per_bucket_members
        subscribed.append((f"member{i}", names[b * per_bucket_topics : (b + 1) * per_bucket_topics]))
    return sizes, subscribed, lags


def as_case(
    sizes: Sizes, members: Members, lags: Lags, owned: dict[str, list[Any]] | None = None
) -> dict[str, Any]:
    """The group as a case (``owned``: what members own, by id; nothing by default)."""
    owned = owned or {}
    return {
        "group": "bench",
        "auto_offset_reset": "earliest",
        "members": [{"id": mid, "topics": ts, "owned": owned.get(mid, [])} for mid, ts in members],
        "partitions": [{"topic": t, "partition": p, "lag": lag} for (t, p), lag in lags.items()],
    }


def kafka_jmh_case(buckets: int) -> dict[str, Any]:
    """Kafka's ClientSideAssignorBenchmark point: 10,000 members, 1,000 topics of 100
    partitions, fresh, seeded lags; the members and topics split into ``buckets`` (1: identical
    subscriptions; 5: Kafka's buckets)."""
    return as_case(*jmh_group(10_000, 1_000, 100, buckets))


def drain_case(rnd: random.Random, members: int, partitions: int) -> dict[str, Any]:
    """A timed group with identical subscriptions as ``bench/drain.py`` draws it from ``rnd``:
    inflow on about 40% of partitions, capacities of 1x, 2x or 4x a base, lognormal lags."""
    topics = [f"t{i}" for i in range(max(1, partitions // 10))]
    weights = [rnd.choice([1, 2, 4]) for _ in range(members)]
    raw = [rnd.lognormvariate(2, 1) if rnd.random() < 0.4 else 0.0 for _ in range(partitions)]
    base = max(1.0, sum(raw) * rnd.uniform(1.5, 3.0) / sum(weights))
    parts = [
        {
            "topic": topics[i % len(topics)],
            "partition": i // len(topics),
            "lag": int(rnd.lognormvariate(8, 1.5)),
            "rate": round(min(rate, base / 2), 3),
        }
        for i, rate in enumerate(raw)
    ]
    caps = [round(base * w, 3) for w in weights]
    return {
        "group": "bench",
        "members": [{"id": f"c{m:02d}", "topics": topics, "capacity": caps[m]} for m in range(members)],
        "partitions": parts,
    }
