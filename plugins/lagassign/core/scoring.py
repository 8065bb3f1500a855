"""Metrics of an assignment (the output contract, docs/ARCHITECTURE.md) and two lower bounds on
max member lag.

* ``lower_bound_max_lag`` holds for every possible assignment, count-balanced or not, so a
  strategy's ``max_lag / lower_bound_max_lag`` is an honest upper bound on how far it is from
  the best assignment of all.
* ``balanced_lower_bound_max_lag`` holds for every assignment that keeps the count guarantee
  of the count-balancing strategies (Kafka's balance condition: no member with two or more
  fewer partitions than another could take one of the other's; with identical subscriptions
  that is "counts within one"). It is never below the first, and much tighter where counts
  bind (a hot partition's member must still take its share of partitions).

``optimal`` (a metric) says that no assignment under the rules the plan keeps has a smaller
max lag: its max lag reaches the bound of its kind, or the strategy proved it (lag-optimal's
exact polish).
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import accumulate, chain, repeat

from .catchup import catch_up_metrics, timed
from .model import Assignment, GroupSnapshot, TopicPartition
from .results import Metrics

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
    such pool gives a bound; the whole group is one more pool. Computed once per group.
    """
    key = ("lower-bound",)
    if key not in group.memo:
        group.memo[key] = _lower_bound_max_lag(group)
    return group.memo[key]


def _lower_bound_max_lag(group: GroupSnapshot) -> int:
    lags = group.lags
    spans = group.topic_span
    by_set: dict[frozenset[str], list[int]] = {}
    as_set: dict[int, frozenset[str]] = {}  # topics with the same subscribers share one list
    for topic, subs in group.subscribers.items():
        key = as_set.get(id(subs))
        if key is None:
            key = as_set[id(subs)] = frozenset(subs)
        span = spans.get(topic)
        pool = by_set.setdefault(key, [])
        if span is not None:
            pool.extend(lags[span.start : span.stop])
    assignable = _assignable_lags(group)
    bound = _pool_bound(assignable, len(group.members))
    merge = len(by_set) <= _MAX_POOLS_FOR_INCLUSION
    for members, pool_lags in by_set.items():
        if len(members) == len(group.members) and len(pool_lags) == len(assignable):
            continue  # the whole group again (one subscription): its bound is in already
        pool = (
            list(chain.from_iterable(ls for other, ls in by_set.items() if other <= members))
            if merge
            else pool_lags
        )
        bound = max(bound, _pool_bound(pool, len(members)))
    return bound


def _assignable_lags(group: GroupSnapshot) -> list[int]:
    """Lags of the assignable partitions, in index order (shared: do not change)."""
    index, lags = group.assignable_index, group.lags
    return lags if len(index) == len(lags) else list(map(lags.__getitem__, index))


def count_range(group: GroupSnapshot, count_slack: int = 0) -> tuple[int, int]:
    """Fewest and most partitions a member may hold when all share one subscription: floor(P/N)
    and ceil(P/N), widened by ``count_slack`` (lag-optimal's knob)."""
    floor, extra = divmod(len(group.assignable_index), len(group.members))
    return max(0, floor - count_slack), floor + (extra > 0) + count_slack


def _smallest_sum(ascending_prefix: list[int], k: int, skip_from: int, skip_to: int) -> int:
    """Sum of the k smallest lags, leaving out ascending positions [skip_from, skip_to)."""
    if k <= 0:
        return 0
    if k <= skip_from:
        return ascending_prefix[k]
    end = min(len(ascending_prefix) - 1, skip_to + k - skip_from)
    return ascending_prefix[skip_from] + ascending_prefix[end] - ascending_prefix[skip_to]


def _count_bound(lags: list[int], members: int, low: int, high: int) -> int:
    """Lower bound on the max load when ``members`` members share these partitions and each
    holds between ``low`` and ``high`` of them (all of them together: ``len(lags)``).

    Two arguments, both "a member holds its count, and at best the lightest partitions fill it":

    * pigeonhole: among the j*N+1 heaviest partitions some member holds j+1, at least the j+1
      lightest of them, plus ``low`` - j - 1 of the lightest partitions left;
    * the s heaviest partitions: either two of them share a member (which then holds the two
      lightest of them plus ``low`` - 2 lightest others), or they sit on s different members,
      which hold at least max(s*low, P - (N-s)*high) partitions together: the s heaviest plus
      the lightest others, so one of them carries at least the mean of that.
    """
    n_parts = len(lags)
    if not lags or members <= 0:
        return 0
    desc = sorted(lags, reverse=True)
    prefix = [0, *accumulate(reversed(desc))]  # sums of the lightest
    bound = 0
    j = 0
    while j * members + 1 <= n_parts:
        top = j * members + 1
        held = sum(desc[top - j - 1 : top])
        # The j+1 held sit at ascending positions [P-top, P-top+j+1).
        bound = max(bound, held + _smallest_sum(prefix, low - j - 1, n_parts - top, n_parts - top + j + 1))
        j += 1
    apart = 0  # the distinct-members bound for the s heaviest, best over prefixes
    heaviest = 0
    for s in range(1, min(members, n_parts) + 1):
        heaviest += desc[s - 1]
        together = max(s * low, n_parts - (members - s) * high)
        fill = _smallest_sum(prefix, together - s, n_parts - s, n_parts)
        apart = max(apart, -(-(heaviest + fill) // s))
        if s == 1:
            bound = max(bound, apart)
            continue
        shared = desc[s - 2] + desc[s - 1] + _smallest_sum(prefix, low - 2, n_parts - s, n_parts - s + 2)
        bound = max(bound, min(apart, shared))
    return bound


def _components(group: GroupSnapshot) -> list[tuple[list[str], list[str]]]:
    """Members and topics that share subscriptions, directly or through others: (members, topics)."""
    parent: dict[str, str] = {}

    def find(t: str) -> str:
        while parent.setdefault(t, t) != t:
            parent[t] = parent[parent[t]]
            t = parent[t]
        return t

    for subscription in group.subscriptions:
        first, *rest = sorted(subscription)
        for t in rest:
            parent[find(t)] = find(first)
    members: dict[str, list[str]] = {}
    topics: dict[str, list[str]] = {}
    root_of = {subscription: find(min(subscription)) for subscription in group.subscriptions}
    for m in group.members:
        members.setdefault(root_of[m.topics], []).append(m.id)
    for t in group.subscribers:
        topics.setdefault(find(t), []).append(t)
    return [(members[root], topics.get(root, [])) for root in members]


def balanced_lower_bound_max_lag(group: GroupSnapshot, count_slack: int = 0) -> int:
    """A lower bound on the max member lag of every assignment that keeps the count guarantee.

    Identical subscriptions: counts within one (floor(P/N) or ceil(P/N)); ``count_slack``
    widens that as lag-optimal's option does. Mixed subscriptions: Kafka's balance condition
    (``count_slack`` does not apply: lag-optimal keeps the guarantee there); members that
    share no topic, directly or through others, do not constrain each other, so each group
    of members with one shared subscription is bounded on its own. Never below
    ``lower_bound_max_lag``. Computed once per group and ``count_slack``.
    """
    key = ("balanced-bound", count_slack)
    if key not in group.memo:
        group.memo[key] = _balanced_lower_bound_max_lag(group, count_slack)
    return group.memo[key]


def _balanced_lower_bound_max_lag(group: GroupSnapshot, count_slack: int) -> int:
    bound = lower_bound_max_lag(group)
    if group.identical_subscriptions:
        low, high = count_range(group, count_slack)
        return max(bound, _count_bound(_assignable_lags(group), len(group.members), low, high))
    lags_of, spans, empty = group.lags, group.topic_span, range(0)
    topics_of = {m.id: m.topics for m in group.members}
    for member_ids, topics in _components(group):
        if len({topics_of[mid] for mid in member_ids}) != 1:
            continue
        lags = [lags_of[i] for t in topics for i in spans.get(t, empty)]
        floor, extra = divmod(len(lags), len(member_ids))
        bound = max(bound, _count_bound(lags, len(member_ids), floor, floor + (extra > 0)))
    return bound


def meets_count_guarantee(group: GroupSnapshot, layout: dict[str, list[TopicPartition]]) -> bool:
    """Kafka's balance condition: no member 2+ partitions short could take another's partition."""
    counts = {mid: len(tps) for mid, tps in layout.items()}
    if max(counts.values()) - min(counts.values()) <= 1:
        return True
    fewest: dict[int, int] = {}  # per subscriber list (topics with the same subscribers share one)
    min_by_topic = {}
    for t, subs in group.subscribers.items():
        if id(subs) not in fewest:
            fewest[id(subs)] = min(counts[mid] for mid in subs)
        min_by_topic[t] = fewest[id(subs)]
    return all(min_by_topic[tp.topic] > counts[mid] - 2 for mid, tps in layout.items() for tp in tps)


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else round(value, 2)


def unassigned(group: GroupSnapshot, assignment: Assignment) -> list[TopicPartition]:
    """Assignable partitions that no member holds."""
    tps = group.tps
    return [tps[i] for i in _Layout(group, assignment.positions(group)).missing]


def count_moves(group: GroupSnapshot, assignment: Assignment) -> int:
    """Owned partitions that end with another owner, or with none."""
    return _Layout(group, assignment.positions(group)).moves()


def consumes_all(group: GroupSnapshot, assignment: Assignment) -> bool:
    """Every assignable partition held exactly once, by a subscriber of its topic."""
    return _Layout(group, assignment.positions(group)).consumes_all()


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
        if not self.once or self.missing:
            return False
        group = self.group
        if group.identical_subscriptions and len(group.members[0].topics) == len(group.topic_span):
            return True  # one subscription, to every topic with partitions
        topics, topics_of = group.columns.topics, group.topics_of
        return all(
            topics_of[mid].issuperset(map(topics.__getitem__, idx)) for mid, idx in self.positions.items()
        )

    def moves(self) -> int:
        group = self.group
        if not group.owned_count:
            return 0
        owned, positions = group.owned_by, self.positions
        kept = map(frozenset.intersection, map(owned.get, positions, repeat(_NONE)), positions.values())
        return group.owned_count - sum(map(len, kept))

    def meets_count_guarantee(self) -> bool:
        """``meets_count_guarantee`` on partition indices."""
        counts = self.count
        if max(counts.values()) - min(counts.values()) <= 1:
            return True
        fewest: dict[int, int] = {}
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
) -> tuple[Metrics, list[int]]:
    """``score``, and the indices of the assignable partitions nobody holds (ascending).

    Strategies often agree (sticky and cooperative-sticky always, range and current whenever
    the group runs range's plan, ...): a layout already scored on this group, under the same
    bounds and proofs, is not scored again; its metrics are copied.
    """
    positions = assignment.positions(group)
    lower = lower_bound_max_lag(group) if lower_bound is None else lower_bound
    balanced = balanced_lower_bound_max_lag(group) if balanced_bound is None else balanced_bound
    proofs = (getattr(assignment, "proven_optimal", False), getattr(assignment, "proven_catch_up", False))
    scored = group.memo.setdefault(("scored",), [])
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
    key = ("timed",)
    if key not in group.memo:
        group.memo[key] = timed(group)
    return group.memo[key]


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
