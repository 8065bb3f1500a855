"""lagassign's ``uniform`` and ``range`` against Kafka's server-side assignors of KIP-848
(kafka-group-coordinator's ``UniformAssignor`` and ``RangeAssignor``, run by
tests/java/ServerAssignors.java): the seeded groups they are compared on, and why a result
differs, case by case. Shared by tests/core/strategies/test_fidelity_server_assignors.py
and bench/fidelity.py.

Every difference gets one reason (a short label); ``UNEXPLAINED`` means none of them holds (a
bug to look at):

- ``uniform`` with one subscription against Kafka in lagassign's order (members static first by
  instance id, then by id; topics by name): no reason, it must be identical. Against the
  coordinator's own order (hash order of member ids and topic ids) the reason is ``ORDER``:
  identical in lagassign's order, and the same number of moves.
- ``uniform`` with mixed subscriptions (lagassign gives sticky's layout, Kafka its heterogeneous
  builder): ``FRESH`` (nothing owned: the partitions dealt to other members),
  ``FEWER_MOVES`` (lagassign keeps more of the owned partitions), ``SAME_KEPT`` (the same owned
  partitions stay, the others are dealt to other members) or ``OTHERS_KEPT`` (as many owned
  partitions stay, not the same ones); in each, lagassign's layout meets Kafka's balance
  condition.
- ``range`` against the server's ``RangeAssignor``: ``RACKS`` (lagassign's ``range`` is the
  client's, whose rack-aware pass of KIP-881 the server's lacks: without the racks the two
  are identical).
"""

from __future__ import annotations

import random
from typing import Any

from groups import kafka_balance_violation, moved
from kafka_java import random_case
from lagassign.core.case import parse_case
from lagassign.core.model import GroupSnapshot, TopicPartition
from lagassign.core.strategies import get_strategy

Layout = dict[str, list[TopicPartition]]

IDENTICAL = "identical"
ORDER = "order"
FEWER_MOVES = "fewer moves"
FRESH = "fresh"
SAME_KEPT = "same kept"
OTHERS_KEPT = "others kept"
RACKS = "racks"
UNEXPLAINED = "UNEXPLAINED"


def server_cases(rnd: random.Random, n: int) -> list[dict[str, Any]]:
    """``n`` seeded groups: identical and mixed subscriptions, owned partitions, static members
    and racks at random (``random_case``); one in ten bigger (up to 30 members, 12 topics of up
    to 20 partitions)."""
    big = {"max_members": 30, "max_topics": 12, "max_partitions": 20}
    return [random_case(rnd, **big) if i % 10 == 9 else random_case(rnd) for i in range(n)]


def without_racks(case: dict[str, Any]) -> dict[str, Any]:
    """The case with no member rack and no replica rack."""
    return {
        **case,
        "members": [{k: v for k, v in m.items() if k != "rack"} for m in case["members"]],
        "partitions": [{k: v for k, v in p.items() if k != "racks"} for p in case["partitions"]],
    }


def uniform_reason(group: GroupSnapshot, ours: Layout, kafka: Layout, kafka_ordered: Layout) -> str:
    """Why ``uniform``'s layout differs from Kafka's ``kafka`` (``IDENTICAL`` when it does not);
    ``kafka_ordered`` is Kafka's on the same group in lagassign's order."""
    if ours == kafka:
        return IDENTICAL
    mine, theirs = moved(group.owner, ours), moved(group.owner, kafka)
    if group.identical_subscriptions:
        return ORDER if ours == kafka_ordered and len(mine) == len(theirs) else UNEXPLAINED
    if kafka_balance_violation(group, ours) is not None:
        return UNEXPLAINED
    if not group.owner:
        return FRESH
    if len(mine) < len(theirs):
        return FEWER_MOVES
    if mine == theirs:
        return SAME_KEPT
    return OTHERS_KEPT if len(mine) == len(theirs) else UNEXPLAINED


def range_reason(case: dict[str, Any], ours: Layout, kafka: Layout) -> str:
    """Why lagassign's ``range`` layout ``ours`` differs from the server ``RangeAssignor``'s."""
    if ours == kafka:
        return IDENTICAL
    rackless = get_strategy("range").assign(parse_case(without_racks(case))).members
    return RACKS if rackless == kafka else UNEXPLAINED
