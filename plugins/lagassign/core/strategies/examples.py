"""Tiny groups for the worked examples in the strategies' docstrings (run as doctests).

``example`` builds a group from subscriptions and per-topic lags; ``show`` prints what each
member gets, one line per member, so an example reads like the tables in Kafka's javadoc.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from ..model import Assignment, GroupSnapshot, Member, PartitionState, TopicPartition


def example(
    subscriptions: Mapping[str, Iterable[str]],
    lags: Mapping[str, Sequence[int]],
    owned: Mapping[str, Iterable[str]] | None = None,
    rates: Mapping[str, Sequence[float]] | None = None,
    capacities: Mapping[str, float] | None = None,
) -> GroupSnapshot:
    """A group: member id -> topics, topic -> the lag of each partition, member id -> "t0-1"s;
    optionally topic -> inflow of each partition and member id -> capacity (messages/s)."""
    owned = owned or {}
    rates = rates or {}
    capacities = capacities or {}

    def parse(name: str) -> TopicPartition:
        topic, _, number = name.rpartition("-")
        return TopicPartition(topic, int(number))

    members = tuple(
        Member(
            mid,
            frozenset(topics),
            tuple(sorted(parse(n) for n in owned.get(mid, ()))),
            capacity=capacities.get(mid),
        )
        for mid, topics in sorted(subscriptions.items())
    )
    partitions = {
        TopicPartition(t, p): PartitionState(
            TopicPartition(t, p), lag, rate=rates[t][p] if t in rates else None
        )
        for t, per_partition in lags.items()
        for p, lag in enumerate(per_partition)
    }
    return GroupSnapshot("example", members, partitions)


def show(assignment: Assignment, group: GroupSnapshot | None = None) -> None:
    """Print each member's partitions (and their total lag when ``group`` is given)."""
    for mid, tps in assignment.members.items():
        line = f"{mid}: {' '.join(map(str, tps)) or '-'}"
        if group is not None:
            line += f"  (lag {sum(group.lag[tp] for tp in tps)})"
        print(line)
    if assignment.withheld:
        print(f"withheld: {' '.join(map(str, assignment.withheld))}")
