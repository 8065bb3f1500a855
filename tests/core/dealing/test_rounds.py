"""lag-aware's rounds give the answers of its pass partition by partition, on random groups.

lag-aware deals in rounds (``dealing.rounds``) where every topic has one class of subscribers;
the pass on a ``LoadBook``, partition by partition, is the reference it must match exactly,
each member's partitions in the same order.
"""

from __future__ import annotations

import hashlib
import random

import pytest
from groups import cases
from hypothesis import given
from lagassign.core.case import parse_case
from lagassign.core.dealing.rounds import rounds_layout
from lagassign.core.model import GroupSnapshot
from lagassign.core.strategies.lag_aware import _lag_aware_book, lag_aware_index


def _hashed(mid: str) -> bytes:
    return hashlib.blake2b(mid.encode(), digest_size=8).digest()


def _reference(group: GroupSnapshot, tie=None) -> list[list[int]]:
    index = group.index_of
    book = _lag_aware_book(group, tie)
    return [[index[tp] for tp in book.held[mid]] for mid in group.member_ids]


def _bucket_case(rnd: random.Random) -> dict:
    """Members in buckets, each bucket on its own topics (Kafka's benchmark shape), with ties."""
    members, partitions = [], []
    for b in range(rnd.randint(1, 4)):
        topics = [f"b{b}t{i}" for i in range(rnd.randint(1, 3))]
        for t in topics:
            for p in range(rnd.randint(1, 9)):
                partitions.append(
                    {"topic": t, "partition": p, "lag": rnd.choice((0, 5, 5, rnd.randint(0, 50)))}
                )
        for i in range(rnd.randint(1, 5)):
            members.append({"id": f"m{b}-{i}-{rnd.randint(0, 99)}", "topics": topics, "owned": []})
    return {"group": "g", "members": members, "partitions": partitions}


@given(cases(max_members=7, max_topics=4, max_partitions=9, subscriptions="identical"))
def test_rounds_match_the_pass_on_identical_subscriptions(case):
    group = parse_case(case)
    assert rounds_layout(group) == _reference(group)
    assert rounds_layout(group, _hashed) == _reference(group, _hashed)


@pytest.mark.parametrize("seed", range(60))
def test_rounds_match_the_pass_on_buckets(seed):
    group = parse_case(_bucket_case(random.Random(seed)))
    assert rounds_layout(group) == _reference(group)
    assert rounds_layout(group, _hashed) == _reference(group, _hashed)


@given(cases(max_members=6, max_topics=4, max_partitions=6, subscriptions="mixed"))
def test_rounds_apply_only_where_each_topic_has_one_class(case):
    group = parse_case(case)
    classes = {t: topics for topics in group.subscriptions for t in topics}
    shared = any(
        t in other and other != topics for t, topics in classes.items() for other in group.subscriptions
    )
    layout = lag_aware_index(group)
    assert (layout is None) == shared
    if layout is not None:
        assert layout == _reference(group)
