"""Members checked in bulk are the members checked one by one; anything unusual goes one by one."""

from __future__ import annotations

import random

from lagassign.core import case


def _one_by_one(raw: list) -> list:
    subscriptions = case._Subscriptions()
    return [case._member(e, i, subscriptions) for i, e in enumerate(raw)]


def test_bulk_members_equal_member_by_member():
    rnd = random.Random(3)
    topics = [f"t{i}" for i in range(6)]
    for _ in range(50):
        shared = rnd.sample(topics, 3)
        raw = []
        for i in range(rnd.randint(1, 30)):
            entry = {
                "id": f"m{rnd.randrange(1000)}-{i}",
                "topics": shared if rnd.random() < 0.6 else list(shared),
            }
            if rnd.random() < 0.3:
                entry["topics"] = rnd.sample(topics, rnd.randint(1, 6))
            if rnd.random() < 0.3:
                entry["owned"] = [[rnd.choice(topics), rnd.randrange(5)], [topics[0], 9], [topics[0], 9]]
            if rnd.random() < 0.3:
                entry["rack"] = rnd.choice(["r1", "r2", None])
            if rnd.random() < 0.2:
                entry["instance_id"] = f"i{i}"
            if rnd.random() < 0.2:
                entry["capacity"] = rnd.choice([5, 2.5])
            raw.append(entry)
        assert case._members_in_bulk(raw) == _one_by_one(raw)


def test_unusual_members_are_left_to_the_checks_one_by_one():
    good = {"id": "a", "topics": ["t"]}
    for bad in (
        {"id": "b", "topics": ["t"], "capacity": 0},  # not a positive capacity
        {"id": "", "topics": ["t"]},
        {"id": "b", "topics": []},
        {"id": "b", "topics": ["t", 3]},
        {"id": "b", "topics": ["t"], "rack": 7},
        {"id": "b", "topics": ["t"], "owned": [["t"]]},
        ["not", "an", "object"],
    ):
        assert case._members_in_bulk([good, bad]) is None
