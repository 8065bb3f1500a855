"""Kafka's own assignors (Apache Kafka 4.4.0, ``scripts/kafka_harness.py``'s KAFKA_VERSION) on
cases, and the seeded random groups the fidelity tests and ``bench/fidelity.py`` compare on.

``kafka_assign(cases)`` runs the client-side ones (kafka-clients, tests/java/KafkaAssignors.java),
``server_assign(cases)`` the server-side ones of KIP-848 (kafka-group-coordinator,
tests/java/ServerAssignors.java); each starts one JVM for the whole batch, a case per line in and
a result per line out (tests/java/JsonLines.java). ``KAFKA_SKIP`` is None when the harness is
ready, else the reason to skip (``make harness`` fetches and compiles it); ``NEEDS_HARNESS``
marks a test module that runs it.
"""

from __future__ import annotations

import json
import random
import subprocess
from collections.abc import Callable
from typing import Any

import kafka_harness
import pytest
from lagassign.core.case import parse_case
from lagassign.core.model import GroupSnapshot, TopicPartition

KAFKA_SKIP: str | None = kafka_harness.ready()
#: a test module's ``pytestmark`` when it runs the harness: ``java``, skipped until it is ready
NEEDS_HARNESS = [
    pytest.mark.java,
    pytest.mark.skipif(KAFKA_SKIP is not None, reason=f"Kafka harness: {KAFKA_SKIP}"),
]
KAFKA_VERSION = kafka_harness.KAFKA_VERSION
#: the assignors the harness reports, by lagassign's strategy names
KAFKA_ASSIGNORS = ("range", "roundrobin", "sticky", "cooperative-sticky", "cooperative-sticky-final")
#: the server-side ones: as the coordinator orders its input, and in lagassign's order
SERVER_ASSIGNORS = ("uniform", "uniform-ordered", "range", "range-ordered")

Layout = dict[str, list[TopicPartition]]


def _run(main: str, cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    text = "".join(json.dumps(c) + "\n" for c in cases)
    out = subprocess.run(
        ["java", "-cp", kafka_harness.classpath(), main],
        input=text,
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    ).stdout
    results = [json.loads(line) for line in out.splitlines()]
    assert len(results) == len(cases)
    return results


def _layouts(raw: dict[str, Any], names: tuple[str, ...]) -> dict[str, Layout]:
    def layout(per_member: dict[str, list]) -> Layout:
        return {mid: [TopicPartition(t, p) for t, p in tps] for mid, tps in per_member.items()}

    return {name: layout(raw[name]) for name in names}


def kafka_assign(cases: list[dict[str, Any]]) -> list[dict[str, Layout]]:
    """Per case: assignor name -> member id -> sorted partitions, as kafka-clients assigns them."""
    return [_layouts(raw, KAFKA_ASSIGNORS) for raw in _run("KafkaAssignors", cases)]


def server_assign(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per case: ``SERVER_ASSIGNORS`` name -> member id -> sorted partitions, as Kafka's group
    coordinator assigns them (``uniform``, ``range``: its input in the coordinator's own hash
    order; ``uniform-ordered``, ``range-ordered``: members in Kafka's sort order, topics by
    name), and ``"homogeneous"``: the subscription type the coordinator passes."""
    results = []
    for raw in _run("ServerAssignors", cases):
        result: dict[str, Any] = _layouts(raw, SERVER_ASSIGNORS)
        result["homogeneous"] = raw["subscription_type"] == "HOMOGENEOUS"
        results.append(result)
    return results


def against_kafka(
    cases: list[dict[str, Any]], assign: Callable[[list[dict[str, Any]]], list[Any]]
) -> list[tuple[dict[str, Any], GroupSnapshot, Any]]:
    """(case, its group, Kafka's result) per case: ``assign`` (``kafka_assign`` or
    ``server_assign``) run once on all of them, in one JVM."""
    return [(c, parse_case(c), k) for c, k in zip(cases, assign(cases), strict=True)]


RACKS = ("rack-a", "rack-b", "rack-c")


def random_case(
    rnd: random.Random,
    subscriptions: str = "any",
    owned: bool | None = None,
    static: bool | None = None,
    racks: bool | None = None,
    max_members: int = 7,
    max_topics: int = 4,
    max_partitions: int = 10,
) -> dict[str, Any]:
    """A random valid case: ``None`` for a flag means "either, at random".

    Member ids are random hex (so their order is arbitrary); static members get instance ids
    ``worker-NN`` (some members may stay dynamic); owned partitions come from a random earlier
    owner (sometimes one no longer subscribed); with racks every partition has one to three
    replica racks and every member a rack.
    """
    pick = {"identical", "mixed"} if subscriptions == "any" else {subscriptions}
    subscriptions = rnd.choice(sorted(pick))
    owned = rnd.random() < 0.6 if owned is None else owned
    static = rnd.random() < 0.5 if static is None else static
    racks = rnd.random() < 0.4 if racks is None else racks
    topics = [f"t{i}" for i in range(rnd.randint(1, max_topics))]
    sizes = {t: rnd.randint(1, max_partitions) for t in topics}
    n = rnd.randint(1, max_members)
    ids = sorted({f"{rnd.getrandbits(24):06x}" for _ in range(n)})
    rnd.shuffle(ids)
    if subscriptions == "identical":
        common = sorted(rnd.sample(topics, rnd.randint(1, len(topics))))
        subs = [common] * len(ids)
    else:
        subs = [sorted(rnd.sample(topics, rnd.randint(1, len(topics)))) for _ in ids]
    workers = rnd.sample(range(max(100, len(ids))), len(ids))
    members: list[dict[str, Any]] = []
    for i, (mid, ts) in enumerate(zip(ids, subs, strict=True)):
        m: dict[str, Any] = {"id": mid, "topics": ts, "owned": []}
        if static and (i == 0 or rnd.random() < 0.85):
            m["instance_id"] = f"worker-{workers[i]:02d}"
        if racks:
            m["rack"] = rnd.choice(RACKS)
        members.append(m)
    partitions = []
    for t in topics:
        for p in range(sizes[t]):
            part: dict[str, Any] = {
                "topic": t,
                "partition": p,
                "lag": rnd.choice((0, 10, 1000, rnd.randint(0, 10**6))),
            }
            if racks:
                part["racks"] = rnd.sample(RACKS, rnd.randint(1, len(RACKS)))
            partitions.append(part)
            if owned and rnd.random() < 0.85:
                holders = [m for m in members if t in m["topics"]] if rnd.random() < 0.9 else members
                if holders:
                    rnd.choice(holders)["owned"].append([t, p])
    return {"group": "g", "auto_offset_reset": "earliest", "members": members, "partitions": partitions}
