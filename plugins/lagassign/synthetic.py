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
    """A case object (DESIGN.md's contract) with the given size and lag shape.

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
        for p in parts:
            eligible = [m for m in ids if p["topic"] in subs[m]]
            owned_map[rng.choice(eligible)].append([p["topic"], p["partition"]])
    return {
        "group": group,
        "auto_offset_reset": "latest",
        "members": [{"id": mid, "topics": sorted(subs[mid]), "owned": owned_map[mid]} for mid in ids],
        "partitions": parts,
    }


def snapshot_tables(
    cases: list[dict[str, Any]],
    failed: dict[str, str] | None = None,
    base_offset: int = 1_000,
) -> Any:
    """Snapshot rows (``lagassign.kafka.snapshot.Snapshot``) of case objects, as the Kafka edge
    would have read them: kind "subscribe", members identified by member id.

    A partition given by ``lag`` gets offsets begin=0, committed=base_offset, end=committed+lag;
    one that names any of ``begin``/``end``/``committed`` keeps exactly those (None included, which
    makes an invalid case on purpose). ``failed`` maps group -> the error the snapshot reports.
    """
    from .kafka.snapshot import Snapshot
    from .lag import partition_lag

    failed = dict(failed or {})
    snap = Snapshot()
    for case in cases:
        gid = case["group"]
        reset = case.get("auto_offset_reset", "latest")
        snap.groups.append({"group": gid, "kind": "subscribe", "state": "Stable", "protocol": "range",
                            "auto_offset_reset": reset, "error": failed.get(gid)})
        for p in case["partitions"]:
            if any(k in p for k in ("begin", "end", "committed")):
                begin, end, committed = p.get("begin"), p.get("end"), p.get("committed")
            else:
                begin, committed = 0, base_offset
                end = committed + p["lag"]
            lag = partition_lag(end, committed, begin, reset) if end is not None else None
            snap.partitions.append({"group": gid, "topic": p["topic"], "partition": p["partition"],
                                    "begin": begin, "end": end, "committed": committed, "lag": lag})
        for i, m in enumerate(case["members"]):
            snap.members.append({
                "group": gid, "member_id": m["id"], "instance_id": None, "client_id": f"{gid}-client-{i}",
                "host": f"/10.0.0.{i % 250 + 1}", "topics": list(m["topics"]),
                "assignment": [{"topic": t, "partition": p} for t, p in m.get("owned") or []],
            })
    snap.manifest = {
        "cluster_id": "synthetic",
        "bootstrap_servers": None,
        "counts": {"groups": len(snap.groups), "subscribe": len(snap.groups), "assign": 0,
                   "failed": len(failed), "partitions": len(snap.partitions), "members": len(snap.members),
                   "topics": len({(p["group"], p["topic"]) for p in snap.partitions})},
        "failed": [{"group": g, "error": e} for g, e in sorted(failed.items())],
        "warnings": [],
    }
    return snap


def write_snapshot(
    cases: list[dict[str, Any]], folder: Any, failed: dict[str, str] | None = None
) -> Any:
    """Write case objects as a snapshot folder (groups/partitions/members Parquet and manifest.json)
    with the Kafka edge's own writer, so tests and scale runs need no cluster. Returns the folder."""
    return snapshot_tables(cases, failed).write(folder)
