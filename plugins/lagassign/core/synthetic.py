"""Seeded generators of realistic consumer groups, for benchmarks, scale tests and demos.

Lag shapes seen in practice: lognormal (most partitions), Zipf (a few topics/keys take most
traffic), one or two hot partitions behind a slow downstream, all caught up (zero), and many
topics each skewed its own way. Subscriptions are shared or mixed (rolling config changes).
"""

from __future__ import annotations

import random
from typing import Any

SHAPES = ("lognormal", "zipf", "hot1", "hot2", "zero", "many-topics")


def _lags(rng: random.Random, shape: str, n: int) -> list[int]:
    if shape == "zero":
        return [0] * n
    if shape == "zipf":
        ranks = list(range(1, n + 1))
        rng.shuffle(ranks)
        scale = rng.uniform(1e5, 1e7)
        return [int(scale / r ** rng.uniform(0.9, 1.3)) for r in ranks]
    base = [int(rng.lognormvariate(rng.uniform(5, 10), rng.uniform(0.5, 2.0))) for _ in range(n)]
    if shape in ("hot1", "hot2"):
        top = max(base) if base else 0
        for i in rng.sample(range(n), min(n, 1 if shape == "hot1" else 2)):
            base[i] = int(top * rng.uniform(5, 50)) + 1000
    return base


def generate_case(
    rng: random.Random,
    members: int,
    partitions: int,
    shape: str = "lognormal",
    topics: int | None = None,
    mixed: bool = False,
    owned: str | None = "range",
    group: str = "g",
) -> dict[str, Any]:
    """A case object (the contract in docs/ARCHITECTURE.md) with the given size and lag shape.

    ``owned`` is how the group runs now: "range" (Kafka's default), "random", or None.
    """
    if topics is None:
        topics = rng.randint(10, 40) if shape == "many-topics" else rng.randint(1, 4)
    topics = max(1, min(topics, partitions))
    names = [f"topic-{i:03d}" for i in range(topics)]
    counts = [partitions // topics + (1 if i < partitions % topics else 0) for i in range(topics)]
    parts = []
    for name, count in zip(names, counts, strict=True):
        per_topic = shape if shape != "many-topics" else rng.choice(("lognormal", "zipf", "hot1"))
        for p, lag in enumerate(_lags(rng, per_topic, count)):
            parts.append({"topic": name, "partition": p, "lag": lag})
    ids = [f"{group}-c{i:04d}" for i in range(members)]
    rng.shuffle(ids)  # ids in no particular relation to load
    subs = {}
    for mid in ids:
        if mixed and topics > 1 and rng.random() < 0.5:
            subs[mid] = sorted(rng.sample(names, rng.randint(1, topics)))
        else:
            subs[mid] = list(names)
    for name in names:  # every topic keeps at least one subscriber
        if not any(name in s for s in subs.values()):
            subs[rng.choice(ids)].append(name)
    owned_map: dict[str, list[list[Any]]] = {mid: [] for mid in ids}
    if owned == "range":
        for name in names:
            subscribers = sorted(m for m in ids if name in subs[m])
            tps = [p["partition"] for p in parts if p["topic"] == name]
            per, extra = divmod(len(tps), len(subscribers))
            start = 0
            for i, mid in enumerate(subscribers):
                size = per + (1 if i < extra else 0)
                owned_map[mid] += [[name, tp] for tp in tps[start : start + size]]
                start += size
    elif owned == "random":
        for part in parts:
            eligible = [m for m in ids if part["topic"] in subs[m]]
            owned_map[rng.choice(eligible)].append([part["topic"], part["partition"]])
    return {
        "group": group,
        "auto_offset_reset": "latest",
        "members": [{"id": mid, "topics": sorted(subs[mid]), "owned": owned_map[mid]} for mid in ids],
        "partitions": parts,
    }


# -- whole snapshots --------------------------------------------------------------------------------

# Lag shapes over a fleet of groups: lognormal most often, then Zipf, hot partitions, idle groups.
FLEET_SHAPES = (
    ("lognormal", 0.40),
    ("zipf", 0.20),
    ("hot1", 0.12),
    ("hot2", 0.08),
    ("zero", 0.10),
    ("many-topics", 0.10),
)
HUGE_PARTITIONS = 10_000
GROUPS_PER_HUGE = 2_500  # one group of HUGE_PARTITIONS per this many groups (at least one)


def group_size(rng: random.Random) -> tuple[int, int]:
    """(members, partitions) of a typical group: lognormal, about 10 members and 100 partitions
    on average (medians ~7 and ~60), from 1 up to 2,000 partitions and 100 members."""
    partitions = min(2_000, max(1, round(rng.lognormvariate(4.1, 1.0))))
    members = min(100, max(1, round(rng.lognormvariate(1.95, 0.8))))
    return members, partitions


def generate_cases(
    groups: int, seed: int, huge: int | None = None, failed_share: float = 0.005
) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """``groups`` seeded cases with a realistic mix, and the groups the snapshot failed for.

    Sizes from ``group_size``, plus ``huge`` groups of HUGE_PARTITIONS partitions and 100-300
    members (default: one per GROUPS_PER_HUGE groups, at least one), placed at random. Lag
    shapes from FLEET_SHAPES; 20% of groups have mixed subscriptions; the current assignment is
    Kafka's range (60%), random (25%) or none (15%, a group that is rebalancing).
    """
    rng = random.Random(seed)
    if huge is None:
        huge = max(1, round(groups / GROUPS_PER_HUGE)) if groups else 0
    huge = min(huge, groups)
    big = set(rng.sample(range(groups), huge))
    shapes, weights = zip(*FLEET_SHAPES, strict=True)
    cases, failed = [], {}
    for i in range(groups):
        name = f"group-{i:06d}"
        if i in big:
            members, partitions = rng.randint(100, 300), HUGE_PARTITIONS
        else:
            members, partitions = group_size(rng)
        shape = rng.choices(shapes, weights)[0]
        owned = rng.choices(("range", "random", None), (0.60, 0.25, 0.15))[0]
        cases.append(
            generate_case(rng, members, partitions, shape, mixed=rng.random() < 0.2, owned=owned, group=name)
        )
        if i not in big and rng.random() < failed_share:
            failed[name] = "committed offsets: KafkaError{code=_TIMED_OUT}"
    return cases, failed
