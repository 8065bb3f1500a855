"""Two lower bounds on the max member lag of a group (``scoring`` reports them).

* ``lower_bound_max_lag`` holds for every possible assignment, count-balanced or not, so a
  strategy's ``max_lag / lower_bound_max_lag`` is an honest upper bound on how far it is from
  the best assignment of all.
* ``balanced_lower_bound_max_lag`` holds for every assignment that keeps the count guarantee
  of the count-balancing strategies (Kafka's balance condition: no member with two or more
  fewer partitions than another could take one of the other's; with identical subscriptions
  that is "counts within one"). It is never below the first, and much tighter where counts
  bind (a hot partition's member must still take its share of partitions).

Both are arguments on a pool's lags sorted heaviest first and their prefix sums, in plain
Python integers (exact at any size).
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import accumulate, chain

from .model import GroupSnapshot, gc_paused
from .shared import Shared

# Beyond this many distinct subscriber sets, pools are not merged by set inclusion
# (quadratic); the bound stays valid, only less tight.
_MAX_POOLS_FOR_INCLUSION = 64
__all__ = ["balanced_lower_bound_max_lag", "count_bound", "count_range", "lower_bound_max_lag", "pool_bound"]


# ---- the group-level bounds ------------------------------------------------------------------


@gc_paused
def lower_bound_max_lag(group: GroupSnapshot) -> int:
    """A valid lower bound on the smallest achievable max member lag for this group.

    Partitions of topics whose subscribers all lie within a set S can only go to S, so each
    such pool gives a bound; the whole group is one more pool. Computed once per group.
    """
    return _LOWER_BOUND.get(group, lambda: _lower_bound_max_lag(group))


def _lower_bound_max_lag(group: GroupSnapshot) -> int:
    spans = group.topic_span
    by_set: dict[frozenset[str], list[str]] = {}  # subscriber set -> its topics with partitions
    as_set: dict[int, frozenset[str]] = {}  # topics with the same subscribers share one list
    for topic, subs in group.subscribers.items():
        key = as_set.get(id(subs))
        if key is None:
            key = as_set[id(subs)] = frozenset(subs)
        topics = by_set.setdefault(key, [])
        if topic in spans:
            topics.append(topic)
    n_assignable = len(group.assignable_index)
    # Where several subscriptions split the group (no topic in two of them), the whole group's
    # bound is never above its pools': its mean is at most one pool's, its heaviest partition is
    # in a pool, and some pool k holds j*N_k + 1 of the group's j*N + 1 heaviest partitions.
    split = group.subscriptions_apart and not group.identical_subscriptions
    bound = 0 if split else pool_bound(_heaviest_first(group), len(group.members))
    merge = len(by_set) <= _MAX_POOLS_FOR_INCLUSION
    for members, topics in by_set.items():
        if len(members) == len(group.members) and sum(len(spans[t]) for t in topics) == n_assignable:
            continue  # the whole group again (one subscription): its bound is in already
        pool = [t for other, ts in by_set.items() if other <= members for t in ts] if merge else topics
        bound = max(bound, pool_bound(_heaviest_first(group, pool), len(members)))
    return bound


@gc_paused
def balanced_lower_bound_max_lag(group: GroupSnapshot, count_slack: int = 0) -> int:
    """A lower bound on the max member lag of every assignment that keeps the count guarantee.

    Identical subscriptions: counts within one (floor(P/N) or ceil(P/N)); ``count_slack``
    widens that as lag-optimal's option does. Mixed subscriptions: Kafka's balance condition
    (``count_slack`` does not apply: lag-optimal keeps the guarantee there); the members of
    a subscription that shares no topic with another hold its partitions among themselves, so
    each such subscription is bounded on its own. Never below
    ``lower_bound_max_lag``. Computed once per group and ``count_slack``.

    Both run with the cycle collector paused (``gc_paused``), as parsing and the strategies do.
    """
    return _BALANCED_BOUND.get(group, lambda: _balanced_lower_bound_max_lag(group, count_slack), count_slack)


def _balanced_lower_bound_max_lag(group: GroupSnapshot, count_slack: int) -> int:
    bound = lower_bound_max_lag(group)
    if group.identical_subscriptions:
        low, high = count_range(group, count_slack)
        return max(bound, count_bound(_heaviest_first(group), len(group.members), low, high))
    readers = group.subscriptions_per_topic
    for topics, member_ids in group.subscriptions.items():
        if any(readers[t] > 1 for t in topics):
            continue  # its members share a topic with another subscription's
        lags = _heaviest_first(group, sorted(topics))
        floor, extra = divmod(len(lags), len(member_ids))
        bound = max(bound, count_bound(lags, len(member_ids), floor, floor + (extra > 0)))
    return bound


def count_range(group: GroupSnapshot, count_slack: int = 0) -> tuple[int, int]:
    """Fewest and most partitions a member may hold when all share one subscription: floor(P/N)
    and ceil(P/N), widened by ``count_slack`` (lag-optimal's knob)."""
    floor, extra = divmod(len(group.assignable_index), len(group.members))
    return max(0, floor - count_slack), floor + (extra > 0) + count_slack


def _heaviest_first(group: GroupSnapshot, topics: list[str] | None = None) -> list[int]:
    """Lags of these topics' partitions (None: of every assignable one) sorted heaviest first,
    once per group and set of topics: both bounds read the same pools (read-only)."""
    spans, lags = group.topic_span, group.lags
    present = None if topics is None else tuple(t for t in topics if t in spans)
    pools = _POOLS.get(group, dict)
    if present not in pools:
        if present is None:
            index = group.assignable_index
            pool: Iterable[int] = lags if len(index) == len(lags) else map(lags.__getitem__, index)
        else:
            pool = chain.from_iterable(lags[spans[t].start : spans[t].stop] for t in present)
        pools[present] = sorted(pool, reverse=True)
    return pools[present]


# ---- one pool ----------------------------------------------------------------------------------


def pool_bound(desc: list[int], members: int) -> int:
    """Lower bound on the max load when ``members`` members share these partitions (their
    lags ``desc``, heaviest first).

    Besides the heaviest partition and the mean, pigeonhole: among the j*k+1 heaviest
    partitions some member gets j+1, at least the j+1 lightest of them.
    """
    if not desc or members <= 0:
        return 0
    prefix = [0, *accumulate(desc)]
    bound = max(desc[0], -(-prefix[-1] // members))
    j, top = 1, members + 1
    while top <= len(desc):
        bound = max(bound, prefix[top] - prefix[top - j - 1])
        j += 1
        top = j * members + 1
    return bound


def count_bound(desc: list[int], members: int, low: int, high: int) -> int:
    """Lower bound on the max load when ``members`` members share these partitions (their
    lags ``desc``, heaviest first) and each holds between ``low`` and ``high`` of them (all
    of them together: ``len(desc)``).

    Two arguments, both "a member holds its count, and at best the lightest partitions fill it":

    * pigeonhole: among the j*N+1 heaviest partitions some member holds j+1, at least the j+1
      lightest of them, plus ``low`` - j - 1 of the lightest partitions left;
    * the s heaviest partitions: either two of them share a member (which then holds the two
      lightest of them plus ``low`` - 2 lightest others), or they sit on s different members,
      which hold at least max(s*low, P - (N-s)*high) partitions together: the s heaviest plus
      the lightest others, so one of them carries at least the mean of that.
    """
    if not desc or members <= 0:
        return 0
    n_parts = len(desc)
    prefix = [0, *accumulate(reversed(desc))]  # sums of the lightest
    bound = 0
    for j in range((n_parts - 1) // members + 1):
        # pigeonhole: the j+1 held of the j*N+1 heaviest sit at ascending positions
        # [start, stop); the member's other low - j - 1 are at best the lightest left
        start = n_parts - j * members - 1
        stop = start + j + 1
        held = prefix[stop] - prefix[start]
        more = low - j - 1
        if more > 0:
            if more <= start:
                held += prefix[more]
            else:
                held += prefix[start] + prefix[min(n_parts, stop + more - start)] - prefix[stop]
        if held > bound:
            bound = held
    apart = 0  # the distinct-members bound for the s heaviest, best over prefixes
    heaviest = 0
    for s in range(1, min(members, n_parts) + 1):
        heaviest += desc[s - 1]
        start = n_parts - s  # the s heaviest sit at ascending positions [start, P)
        more = max(s * low, n_parts - (members - s) * high) - s
        fill = 0 if more <= 0 else prefix[more] if more <= start else prefix[start]
        mean = -(-(heaviest + fill) // s)
        if mean > apart:
            apart = mean
        if s == 1:
            bound = max(bound, apart)
            continue
        shared = desc[s - 2] + desc[s - 1]
        if low > 2:  # and the low - 2 lightest others (the two at [start, start + 2))
            more = low - 2
            shared += (
                prefix[more]
                if more <= start
                else prefix[start] + prefix[min(n_parts, more + 2)] - prefix[start + 2]
            )
        if shared <= bound:
            # ``shared`` never grows with s (the pair moves one place lighter: the others gain
            # at most what the pair loses), so no later s can raise the bound
            break
        bound = max(bound, min(apart, shared))
    return bound


_LOWER_BOUND: Shared[int] = Shared("lower bound on the max lag of any assignment")
_BALANCED_BOUND: Shared[int] = Shared("lower bound on the max lag under the count rules, per count_slack")
_POOLS: Shared[dict[tuple[str, ...] | None, list[int]]] = Shared("lags of sets of topics, heaviest first")
