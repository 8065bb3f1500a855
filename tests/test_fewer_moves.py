"""sticky's chain pass (core/strategies/fewer_moves.py) without Java: the issue's smallest case,
balance, and the same answer whatever the process's hash seed."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from groups import kafka_balance_violation, moved
from lagassign.core.case import parse_case
from lagassign.core.strategies import get_strategy

# Issue 13's smallest case: Kafka moves nothing; the three passes alone moved t0-1 to C3.
SMALLEST = {
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


def test_the_issues_smallest_case_moves_nothing():
    group = parse_case(SMALLEST)
    for name in ("sticky", "cooperative-sticky"):
        got = get_strategy(name).assign(group).members
        assert kafka_balance_violation(group, got) is None
        assert not moved(group.owner, got)


_SCRIPT = """
import json, random, sys
sys.path.insert(0, sys.argv[1])
from kafka_java import random_case
from lagassign.core.case import parse_case
from lagassign.core.strategies import get_strategy
rnd = random.Random(11)
out = []
for _ in range(60):
    g = parse_case(random_case(rnd, subscriptions="mixed", owned=True, racks=rnd.random() < 0.5))
    out.append({m: [list(tp) for tp in tps] for m, tps in get_strategy("sticky").assign(g).members.items()})
print(json.dumps(out))
"""


def test_same_answer_whatever_the_hash_seed():
    """Sets iterate in hash order; the pass must not depend on it (strategies are deterministic)."""
    tests = os.path.dirname(os.path.abspath(__file__))
    answers = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        run = subprocess.run(
            [sys.executable, "-c", _SCRIPT, tests], env=env, capture_output=True, text=True, check=True
        )
        answers.append(json.loads(run.stdout))
    assert answers[0] == answers[1]


def _rack_local(group, members) -> int:
    rack = {m.id: m.rack for m in group.members}
    return sum(1 for mid, tps in members.items() for tp in tps if rack[mid] in group.partitions[tp].racks)


def test_big_groups_are_searched_in_blocks():
    """Above MAX_MEMBERS the chains are searched in blocks of members: still Kafka's balance,
    and far more partitions rack-local than the three passes alone (which ignore racks)."""
    import random

    from kafka_java import random_case
    from lagassign.core.strategies.fewer_moves import MAX_MEMBERS
    from lagassign.core.strategies.sticky import sticky_passes

    rnd = random.Random(5)
    options = {"owned": True, "static": False, "racks": True, "max_members": 300, "max_partitions": 60}
    case = random_case(rnd, "identical", **options)
    while len(case["members"]) <= MAX_MEMBERS:
        case = random_case(rnd, "identical", **options)
    group = parse_case(case)
    got = get_strategy("sticky").assign(group).members
    assert kafka_balance_violation(group, got) is None
    passes = _rack_local(group, sticky_passes(group))
    assert _rack_local(group, got) > passes + len(group.assignable) // 10
