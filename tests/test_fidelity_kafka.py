"""lagassign's Kafka strategies against Kafka's own assignors (kafka-clients 4.3.0) on seeded
random groups: identical and mixed subscriptions, with and without owned partitions, static
members and racks. Run ``scripts/kafka_harness.py`` first (CI does); skipped without it."""

from __future__ import annotations

import random

import pytest
from kafka_java import KAFKA_SKIP, kafka_assign, random_case
from lagassign.core.case import parse_case
from lagassign.core.strategies import get_strategy

pytestmark = [
    pytest.mark.java,
    pytest.mark.skipif(KAFKA_SKIP is not None, reason=f"Kafka harness: {KAFKA_SKIP}"),
]

N = 300


@pytest.fixture(scope="module")
def runs():
    """(case, group, Kafka's assignments) for N seeded random cases, one JVM for all."""
    rnd = random.Random(13)
    cases = [random_case(rnd) for _ in range(N)]
    return [(c, parse_case(c), k) for c, k in zip(cases, kafka_assign(cases), strict=True)]


def _plain(case) -> bool:
    return not any("instance_id" in m or "rack" in m for m in case["members"])


@pytest.mark.parametrize("name", ["range", "roundrobin"])
def test_identical_to_kafka_without_static_members_or_racks(runs, name):
    differ = [c for c, g, k in runs if _plain(c) and get_strategy(name).assign(g).members != k[name]]
    assert not differ, differ[0]


def test_the_harness_runs_kafkas_documented_range_example():
    """RangeAssignor's javadoc: C0 and C1 on t0 and t1, three partitions each."""
    case = {
        "members": [{"id": "C0", "topics": ["t0", "t1"]}, {"id": "C1", "topics": ["t0", "t1"]}],
        "partitions": [{"topic": t, "partition": p, "lag": 0} for t in ("t0", "t1") for p in range(3)],
    }
    got = kafka_assign([case])[0]["range"]
    assert {m: [f"{tp}" for tp in tps] for m, tps in got.items()} == {
        "C0": ["t0-0", "t0-1", "t1-0", "t1-1"],
        "C1": ["t0-2", "t1-2"],
    }
