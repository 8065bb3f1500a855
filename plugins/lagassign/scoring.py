"""Metrics of an assignment (DESIGN.md's output contract) and a lower bound on max member lag.

The lower bound holds for every possible assignment, count-balanced or not, so a strategy's
``max_lag / lower_bound_max_lag`` is an honest upper bound on how far it is from optimal.
"""

from __future__ import annotations

from itertools import accumulate

from .model import Assignment, GroupSnapshot, TopicPartition

# Beyond this many distinct subscriber sets, pools are not merged by set inclusion
# (quadratic); the bound stays valid, only less tight.
_MAX_POOLS_FOR_INCLUSION = 64


def _pool_bound(lags: list[int], members: int) -> int:
    """Lower bound on the max load when ``members`` members share these partitions.

    Besides the heaviest partition and the mean, pigeonhole: among the j*k+1 heaviest
    partitions some member gets j+1, at least the j+1 lightest of them.
    """
    if not lags or members <= 0:
        return 0
    lags = sorted(lags, reverse=True)
    prefix = [0, *accumulate(lags)]
    bound = max(lags[0], -(-prefix[-1] // members))
    j, top = 1, members + 1
    while top <= len(lags):
        bound = max(bound, prefix[top] - prefix[top - j - 1])
        j += 1
        top = j * members + 1
    return bound


def lower_bound_max_lag(group: GroupSnapshot) -> int:
    """A valid lower bound on the smallest achievable max member lag for this group.

    Partitions of topics whose subscribers all lie within a set S can only go to S, so each
    such pool gives a bound; the whole group is one more pool.
    """
    lag = group.lag
    by_set: dict[frozenset[str], list[int]] = {}
    for topic, tps in group.topic_partitions.items():
        by_set.setdefault(frozenset(group.subscribers[topic]), []).extend(lag[tp] for tp in tps)
    bound = _pool_bound([lag[tp] for tp in group.assignable], len(group.members))
    merge = len(by_set) <= _MAX_POOLS_FOR_INCLUSION
    for subs, lags in by_set.items():
        pool = [x for other, ls in by_set.items() if other <= subs for x in ls] if merge else lags
        bound = max(bound, _pool_bound(pool, len(subs)))
    return bound


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else round(value, 2)


def unassigned(group: GroupSnapshot, assignment: Assignment) -> list[TopicPartition]:
    """Assignable partitions that no member holds."""
    held = {tp for tps in assignment.members.values() for tp in tps}
    return [tp for tp in group.assignable if tp not in held]


def count_moves(group: GroupSnapshot, assignment: Assignment) -> int:
    """Owned partitions that end with another owner, or with none."""
    after = assignment.owner_of()
    return sum(1 for tp, mid in group.owner.items() if after.get(tp) != mid)


def score(group: GroupSnapshot, assignment: Assignment, lower_bound: int | None = None) -> dict:
    """The metrics object of the output contract."""
    lag = group.lag
    member_lag = {mid: sum(lag[tp] for tp in tps) for mid, tps in assignment.members.items()}
    member_count = {mid: len(tps) for mid, tps in assignment.members.items()}
    lags = list(member_lag.values())
    counts = list(member_count.values())
    max_lag = max(lags)
    mean_lag = sum(lags) / len(lags)
    return {
        "lag": member_lag,
        "count": member_count,
        "max_lag": max_lag,
        "mean_lag": _number(mean_lag),
        "imbalance": round(max_lag / mean_lag, 4) if mean_lag > 0 else 1.0,
        "lag_spread": max_lag - min(lags),
        "count_spread": max(counts) - min(counts),
        "moves": count_moves(group, assignment),
        "lower_bound_max_lag": lower_bound_max_lag(group) if lower_bound is None else lower_bound,
    }
