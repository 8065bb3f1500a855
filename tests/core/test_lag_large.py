"""``lag`` on many partitions (dealt with numpy) equals the plain Python deal."""

from __future__ import annotations

import random

import pytest
from lagassign.core.case import parse_case
from lagassign.core.strategies import lag as lag_module


@pytest.mark.parametrize("seed", [1, 2])
def test_numpy_deal_equals_the_plain_one(seed, monkeypatch):
    rnd = random.Random(seed)
    topics = [f"t{i:03}" for i in range(120)]
    members = [
        {"id": f"m{rnd.randrange(10**6)}-{i}", "topics": topics[: 60 if i % 2 else 120]} for i in range(160)
    ]
    partitions = [
        {"topic": t, "partition": p, "lag": rnd.choice((0, 5, rnd.randint(0, 10**6)))}  # ties
        for t in topics
        for p in range(rnd.choice((40, 70, 100, 150)))  # some topics with more partitions than subscribers
    ]
    case = {"group": "g", "members": members, "partitions": partitions}
    dealt_with_numpy = []
    first_takers = lag_module._first_takers
    monkeypatch.setattr(
        lag_module,
        "_first_takers",
        lambda g, takers, spans, layout: (
            dealt_with_numpy.append(sum(map(len, spans)) >= lag_module.NUMPY_FROM),
            first_takers(g, takers, spans, layout),
        ),
    )
    with_numpy = lag_module._deal(parse_case(case))
    assert any(dealt_with_numpy)
    monkeypatch.setattr(lag_module, "NUMPY_FROM", 10**9)
    plain = lag_module._deal(parse_case(case))
    assert [sorted(idx) for idx in with_numpy] == [sorted(idx) for idx in plain]
    assert sum(map(len, plain)) == len(partitions)
