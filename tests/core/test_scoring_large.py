"""Scoring a large layout (worked on numpy arrays) gives what the plain Python way gives."""

from __future__ import annotations

import random

import pytest
from lagassign.core import scoring
from lagassign.core.case import parse_case


def _group(rnd: random.Random):
    topics = [f"t{i}" for i in range(12)]
    members = []
    for i in range(40):
        subscribed = rnd.sample(topics, rnd.randint(1, 12)) if i % 3 else topics
        members.append({"id": f"m{i:02}", "topics": subscribed})
    partitions = [
        {"topic": t, "partition": p, "lag": rnd.choice((0, rnd.randint(0, 10**6)))}
        for t in topics
        for p in range(300)
    ]
    case = {"group": "g", "members": members, "partitions": partitions}
    for m in members:  # some owned partitions, each owned once
        m["owned"] = []
    for k, p in enumerate(rnd.sample(partitions, 500)):
        members[k % len(members)]["owned"].append([p["topic"], p["partition"]])
    return parse_case(case)


def _layouts(group, rnd: random.Random):
    n = len(group.columns)
    ids = group.member_ids
    deal = [[] for _ in ids]
    for i in range(n):
        deal[rnd.randrange(len(ids))].append(i)
    yield dict(zip(ids, deal, strict=True))  # every partition once, subscriptions ignored
    by_topic = {}
    for k, m in enumerate(group.members):
        for t in m.topics:
            by_topic.setdefault(t, []).append(k)
    fair = [[] for _ in ids]
    for t, span in group.topic_span.items():
        for i in span:
            fair[rnd.choice(by_topic[t])].append(i)
    yield dict(zip(ids, fair, strict=True))  # every partition to a subscriber
    gaps = [[i for i in idx if rnd.random() < 0.9] for idx in fair]
    yield dict(zip(ids, gaps, strict=True))  # some nobody holds
    twice = [list(idx) for idx in fair]
    twice[0].extend(twice[1][:3])
    yield dict(zip(ids, twice, strict=True))  # some held twice


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_numpy_layout_equals_the_plain_one(seed):
    rnd = random.Random(seed)
    group = _group(rnd)
    for positions in _layouts(group, rnd):
        plain = scoring._Layout(group, positions)
        large = scoring._layout(group, positions)
        assert isinstance(large, scoring._ColumnLayout)
        assert (large.once, large.missing, large.count) == (plain.once, plain.missing, plain.count)
        assert large.lag() == plain.lag()
        assert large.consumes_all() == plain.consumes_all()
        assert large.moves() == plain.moves()
