"""Groups the benchmarks measure, rebuilt for tests that check a claim made on them (the same
seeds and draws as ``bench/speed.py`` and ``bench/drain.py``, so the same groups)."""

from __future__ import annotations

import random
from typing import Any


def kafka_jmh_case(buckets: int) -> dict[str, Any]:
    """Kafka's ClientSideAssignorBenchmark point as ``bench/speed.py`` builds it: 10,000
    members, 1,000 topics of 100 partitions, fresh, seeded lags; the members and topics split
    into ``buckets`` (1: identical subscriptions; 5: Kafka's buckets)."""
    topics = [f"topic{i}" for i in range(1_000)]
    rnd = random.Random(615)
    lags = {(t, p): rnd.choice((0, rnd.randint(0, 10**6))) for t in topics for p in range(100)}
    per_bucket_members, per_bucket_topics = -(-10_000 // buckets), -(-len(topics) // buckets)
    members = []
    for i in range(10_000):
        first = i // per_bucket_members * per_bucket_topics
        members.append({"id": f"member{i}", "topics": topics[first : first + per_bucket_topics]})
    return {
        "group": "bench",
        "auto_offset_reset": "earliest",
        "members": [{**m, "owned": []} for m in members],
        "partitions": [{"topic": t, "partition": p, "lag": lag} for (t, p), lag in lags.items()],
    }


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
