"""Metrics of an assignment (the output contract, docs/ARCHITECTURE.md), with the group's two
lower bounds on max member lag (``bounds``: ``lower_bound_max_lag`` for every assignment,
``balanced_lower_bound_max_lag`` for those that keep the count guarantee).

``optimal`` (a metric) says that no assignment under the rules the plan keeps has a smaller
max lag: its max lag reaches the bound of its kind, or the strategy proved it (lag-optimal's
exact polish).
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import repeat
from typing import Any

from .bounds import balanced_lower_bound_max_lag, count_range, lower_bound_max_lag
from .catchup import catch_up_metrics, timed
from .model import Assignment, GroupSnapshot, TopicPartition
from .results import Metrics
from .shared import Shared

__all__ = [
    "balanced_lower_bound_max_lag",
    "count_moves",
    "count_range",
    "cross_rack",
    "lower_bound_max_lag",
    "meets_count_guarantee",
    "reads_subscribed_topics",
    "score",
    "score_layout",
]


def meets_count_guarantee(group: GroupSnapshot, layout: dict[str, list[TopicPartition]]) -> bool:
    """Kafka's balance condition: no member 2+ partitions short could take another's partition."""
    index = group.index_of
    positions = {mid: [index[tp] for tp in tps] for mid, tps in layout.items()}
    return _Layout(group, positions).meets_count_guarantee()


def reads_subscribed_topics(group: GroupSnapshot, positions: Mapping[str, list[int]]) -> bool:
    """Every partition of ``positions`` (indices per member id) held by a member that
    subscribes to its topic."""
    topics_of = group.topics_of
    if (
        group.identical_subscriptions
        and len(group.members[0].topics) == len(group.topic_span)
        and topics_of.keys() >= positions.keys()
    ):
        return True  # members of the group, all with one subscription to every topic with partitions
    topic = group.columns.topics.__getitem__
    return all(topics_of[mid].issuperset(map(topic, idx)) for mid, idx in positions.items())


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else round(value, 2)


def count_moves(group: GroupSnapshot, assignment: Assignment) -> int:
    """Owned partitions that end with another owner, or with none."""
    return _Layout(group, assignment.positions(group)).moves()


_NONE: frozenset[int] = frozenset()
#: layouts kept per group for ``score_layout`` to recognise (every strategy once, and some)
_SCORED_KEPT = 32


class _Layout:
    """What scoring reads of an assignment given as partition indices per member: counts,
    the partitions nobody holds, and whether each is held once, by a subscriber."""

    def __init__(self, group: GroupSnapshot, positions: Mapping[str, list[int]]) -> None:
        self.group = group
        self.positions = positions
        self.count = dict(zip(positions, map(len, positions.values()), strict=True))
        held = sum(self.count.values())
        assignable = group.assignable_index
        seen: set[int] = set().union(*positions.values()) if positions else set()
        everything = len(assignable) == len(group.columns)  # every partition is assignable
        #: every partition held at most once, and only assignable ones
        self.once = len(seen) == held and (everything or seen.issubset(assignable))
        if self.once and held == len(assignable):
            self.missing: list[int] = []
        else:
            self.missing = [i for i in assignable if i not in seen]

    def lag(self) -> dict[str, int]:
        lags = self.group.lags
        values = self.positions.values()
        return dict(zip(self.positions, map(sum, map(map, repeat(lags.__getitem__), values)), strict=True))

    def consumes_all(self) -> bool:
        """Every partition held once, by a member that subscribes to its topic."""
        if not self.once or self.missing:
            return False
        return reads_subscribed_topics(self.group, self.positions)

    def moves(self) -> int:
        group = self.group
        if not group.owned_count:
            return 0
        owned, positions = _owned_by(group), self.positions
        kept = map(frozenset.intersection, map(owned.get, positions, repeat(_NONE)), positions.values())
        return group.owned_count - sum(map(len, kept))

    def meets_count_guarantee(self) -> bool:
        """Kafka's balance condition: no member 2+ partitions short could take another's partition."""
        counts = self.count
        if max(counts.values()) - min(counts.values()) <= 1:
            return True
        fewest: dict[int, int] = {}  # per subscriber list (topics with the same subscribers share one)
        min_by_topic = {}
        for t, subs in self.group.subscribers.items():
            if id(subs) not in fewest:
                fewest[id(subs)] = min(counts[mid] for mid in subs)
            min_by_topic[t] = fewest[id(subs)]
        topics = self.group.columns.topics
        return all(
            min_by_topic[t] > counts[mid] - 2
            for mid, idx in self.positions.items()
            for t in set(map(topics.__getitem__, idx))
        )


def _owned_by(group: GroupSnapshot) -> dict[str, frozenset[int]]:
    """Member id -> the indices of the partitions it owns now (those the group lists)."""

    def compute() -> dict[str, frozenset[int]]:
        return {
            mid: frozenset(i for i in idx if i is not None)
            for mid, idx in zip(group.member_ids, group.owned_index, strict=True)
            if idx
        }

    return _OWNED_BY.get(group, compute)


_OWNED_BY: Shared[dict[str, frozenset[int]]] = Shared("indices each member owns now")


def score(
    group: GroupSnapshot,
    assignment: Assignment,
    lower_bound: int | None = None,
    balanced_bound: int | None = None,
) -> Metrics:
    """The metrics object of the output contract; the bounds are computed unless given.

    ``optimal``: the plan consumes every partition and no assignment under the rules it keeps
    has a smaller max lag: it reaches ``lower_bound_max_lag`` (nothing does better), or it
    keeps the count guarantee and reaches ``balanced_lower_bound_max_lag``, or its strategy
    proved it (``proven_optimal``: lag-optimal's exact polish, under its options).
    """
    return score_layout(group, assignment, lower_bound, balanced_bound)[0]


def score_layout(
    group: GroupSnapshot,
    assignment: Assignment,
    lower_bound: int | None = None,
    balanced_bound: int | None = None,
    positions: Mapping[str, list[int]] | None = None,
) -> tuple[Metrics, list[int]]:
    """``score``, and the indices of the assignable partitions nobody holds (ascending);
    ``positions``: the assignment's ``positions(group)`` when the caller has them.

    Strategies often agree (sticky and cooperative-sticky always, range and current whenever
    the group runs range's plan, ...): a layout already scored on this group, under the same
    bounds and proofs, is not scored again; its metrics are copied.
    """
    if positions is None:
        positions = assignment.positions(group)
    lower = lower_bound_max_lag(group) if lower_bound is None else lower_bound
    balanced = balanced_lower_bound_max_lag(group) if balanced_bound is None else balanced_bound
    proofs = (getattr(assignment, "proven_optimal", False), getattr(assignment, "proven_catch_up", False))
    scored = _SCORED.get(group, list)
    for earlier, bounds, earlier_proofs, metrics, missing in scored:
        if bounds == (lower, balanced) and earlier_proofs == proofs and earlier == positions:
            return _copy(metrics), list(missing)
    metrics, missing = _score(group, assignment, positions, lower, balanced)
    if len(scored) < _SCORED_KEPT:
        scored.append((positions, (lower, balanced), proofs, metrics, missing))
    return _copy(metrics), list(missing)


def _copy(metrics: Metrics) -> Metrics:
    """The metrics with their own dicts and lists."""
    out = metrics.copy()
    out["lag"], out["count"] = metrics["lag"].copy(), metrics["count"].copy()
    if "catch_up_s" in metrics:
        out["catch_up_s"] = metrics["catch_up_s"].copy()
        out["never_catch_up"] = metrics["never_catch_up"].copy()
    return out


def _score(
    group: GroupSnapshot,
    assignment: Assignment,
    positions: Mapping[str, list[int]],
    lower: int,
    balanced: int,
) -> tuple[Metrics, list[int]]:
    layout = _Layout(group, positions)
    member_lag = layout.lag()
    member_count = layout.count
    all_lags = list(member_lag.values())
    counts = list(member_count.values())
    max_lag = max(all_lags)
    mean_lag = sum(all_lags) / len(all_lags)
    optimal = layout.consumes_all() and (
        getattr(assignment, "proven_optimal", False)
        or max_lag <= lower
        or (max_lag <= balanced and layout.meets_count_guarantee())
    )
    metrics: Metrics = {
        "lag": member_lag,
        "count": member_count,
        "max_lag": max_lag,
        "mean_lag": _number(mean_lag),
        "imbalance": round(max_lag / mean_lag, 4) if mean_lag > 0 else 1.0,
        "lag_spread": max_lag - min(all_lags),
        "count_spread": max(counts) - min(counts),
        "moves": layout.moves(),
        "lower_bound_max_lag": lower,
        "balanced_lower_bound_max_lag": balanced,
        "optimal": optimal,
    }
    if group.rack_aware:
        parts, lag_across = cross_rack(group, assignment)
        metrics["cross_rack_partitions"] = parts
        metrics["cross_rack_lag"] = lag_across
    if _timed(group):
        proven_in_time = getattr(assignment, "proven_catch_up", False)
        metrics.update(catch_up_metrics(group, assignment.members, proven=proven_in_time))  # type: ignore[typeddict-item]
    return metrics, layout.missing


def _timed(group: GroupSnapshot) -> bool:
    """``catchup.timed``, once per group."""
    return _TIMED.get(group, lambda: timed(group))


def cross_rack(group: GroupSnapshot, assignment: Assignment) -> tuple[int, int]:
    """Partitions, and their lag, consumed by a member whose rack holds none of their replicas
    (KIP-881): each is read across racks. Members without a rack and partitions whose replicas'
    racks are unknown count as local. Reported only for groups with racks on both sides."""
    rack = {m.id: m.rack for m in group.members}
    parts = lag = 0
    for mid, tps in assignment.members.items():
        if rack.get(mid) is None:
            continue
        for tp in tps:
            racks = group.partitions[tp].racks
            if racks and rack[mid] not in racks:
                parts += 1
                lag += group.lag[tp]
    return parts, lag


#: layouts scored on the group already, with what they were scored under (see ``score_layout``)
_SCORED: Shared[list[tuple[Any, tuple[int, int], tuple[bool, bool], Metrics, list[int]]]] = Shared(
    "layouts scored"
)
_TIMED: Shared[bool] = Shared("whether the group is planned in time")
