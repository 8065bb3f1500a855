"""A partition's index in a group's columns is where that (topic, number) is listed."""

from __future__ import annotations

import random

from lagassign.core.values import PartitionColumns


def test_positions_are_where_each_pair_is_listed():
    rnd = random.Random(5)
    topics, numbers = [], []
    for t in ("a", "b", "c"):
        listed = sorted(rnd.sample(range(3000), 1500)) if t == "b" else list(range(1000))  # b has gaps
        topics.extend([t] * len(listed))
        numbers.extend(listed)
    columns = PartitionColumns(topics, numbers, [0] * len(topics))
    listed_at = {pair: i for i, pair in enumerate(zip(topics, numbers, strict=True))}
    pairs = [(rnd.choice("abcd"), rnd.randrange(-5, 3100)) for _ in range(5000)]
    found = columns.positions(pairs)
    assert found == [listed_at.get(pair) for pair in pairs]
    assert None in found and any(i is not None and topics[i] == "b" for i in found)
