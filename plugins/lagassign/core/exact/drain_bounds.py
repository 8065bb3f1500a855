"""drain-optimal's count rules, and the largest catch-up time no plan under them beats.

A member's fewest and most partitions: in proportion to its capacity (``proportional_counts``),
or lag-optimal's floor(P/N) and ceil(P/N) (``balanced_counts``); ``count_rules`` says which a
group plans under. ``drain_lower_bound`` is the bound the plans are measured against, the
smallest of ``counts_lower_bound`` over the rules.

Example: four partitions and two members, C1 three times as fast as C0: in proportion C0 holds
one partition and C1 three; balanced, two each::

    >>> from lagassign.core.strategies.examples import example
    >>> g = example({"C0": ["t"], "C1": ["t"]}, {"t": [600] * 4}, capacities={"C0": 10, "C1": 30})
    >>> proportional_counts(g), balanced_counts(g)
    ({'C0': (1, 1), 'C1': (3, 3)}, {'C0': (2, 2), 'C1': (2, 2)})
    >>> drain_lower_bound(g)  # 2,400 messages through 40 per second
    60.0
"""

from __future__ import annotations

import itertools
import math
from itertools import accumulate

from ..catchup import capacity, inflow, lower_bound_catch_up, seconds_to_catch_up, timed
from ..model import GroupSnapshot
from .drain_branch import Counts, heavy_bound

HEAVY_EXTRA = 4  # the heavy-partition bound places up to members + this many partitions


def proportional_counts(group: GroupSnapshot) -> Counts:
    """Member -> (fewest, most) partitions: floor and ceil of its capacity share of P."""
    caps = capacity(group)
    total = sum(caps.values())
    n = len(group.assignable)
    out = {}
    for mid in group.member_ids:
        share = n * caps[mid] / total
        low = math.floor(share + 1e-9)
        out[mid] = (low, low if abs(share - low) < 1e-9 else low + 1)
    return out


def balanced_counts(group: GroupSnapshot) -> Counts:
    """Member -> (fewest, most) partitions under lag-optimal's count rule: floor(P/N), ceil(P/N)."""
    floor, extra = divmod(len(group.assignable), len(group.members))
    return dict.fromkeys(group.member_ids, (floor, floor + (extra > 0)))


def free_counts(group: GroupSnapshot) -> Counts:
    """Member -> (0, P): any count."""
    return dict.fromkeys(group.member_ids, (0, len(group.assignable)))


def count_rules(group: GroupSnapshot) -> list[Counts]:
    """The counts drain-optimal plans under, each (fewest, most) per member.

    With one shared subscription, counts in proportion to capacity, and lag-optimal's
    balanced ones: proportional counts are the rule of thumb for unequal members, but where a
    hot partition or inflow makes them cost time, the strategy built to catch up soonest must
    not lose to the one that balances messages. With mixed subscriptions counts are free."""
    if group.identical_subscriptions:
        return [proportional_counts(group), balanced_counts(group)]
    return [free_counts(group)]


def drain_lower_bound(group: GroupSnapshot, upper: float = math.inf) -> float:
    """A largest catch-up time no plan under drain-optimal's count rules beats: the smallest
    of ``counts_lower_bound`` over ``count_rules``."""
    return min(counts_lower_bound(group, counts, upper) for counts in count_rules(group))


def counts_lower_bound(group: GroupSnapshot, counts: Counts, upper: float = math.inf) -> float:
    """A largest catch-up time no plan under ``counts`` beats.

    Besides ``catchup.lower_bound_catch_up``: the slowest k members (for every k) must hold at
    least the partitions the others have no room for, and at best the lightest ones, so
    T >= (k smallest lags) / (their capacity - (k smallest inflows)) with k that many; and
    the heaviest partitions' best placement with every member topped up to its fewest
    (``drain_branch.heavy_bound``); with mixed subscriptions, ``readers_drain_bound`` too. ``upper``,
    the time of a plan in hand, lets that search stop early (the bound is then at most it).
    """
    bound = lower_bound_catch_up(group)
    if not timed(group):
        return bound
    if not group.identical_subscriptions:
        bound = max(bound, readers_drain_bound(group))
    lags = sorted(group.lag[tp] for tp in group.assignable)
    rates = sorted(inflow(group)[tp] for tp in group.assignable)
    lag_prefix, rate_prefix = [0, *accumulate(lags)], [0.0, *accumulate(rates)]
    caps = capacity(group)
    slow_first = sorted(group.member_ids, key=lambda m: (caps[m], m))
    room_after = sum(counts[m][1] for m in slow_first)
    cap_sum, low_sum = 0.0, 0
    for mid in slow_first:
        room_after -= counts[mid][1]
        cap_sum += caps[mid]
        low_sum += counts[mid][0]
        k = min(len(lags), max(low_sum, len(lags) - room_after))
        bound = max(bound, seconds_to_catch_up(lag_prefix[k], rate_prefix[k], cap_sum))
    # the heaviest partitions placed every possible way (``drain_branch.heavy_bound``), as many
    # of them as the search settles: members first, then a few more
    for heavy in range(1, min(len(lags), len(caps) + HEAVY_EXTRA) + 1):
        placed = heavy_bound(group, counts, heavy, upper)
        if placed is None:
            break
        bound = max(bound, placed)
    return min(bound, upper)


def readers_drain_bound(group: GroupSnapshot) -> float:
    """With mixed subscriptions: the partitions of the topics only members M read must drain
    through M alone, T >= their lag / (capacity of M - their inflow), for M the readers of
    one topic or of two topics together (every topic whose readers are all in M counts)."""
    subs = {t: frozenset(m) for t, m in group.subscribers.items()}
    caps, rates = capacity(group), inflow(group)
    lag_of = dict.fromkeys(subs, 0)
    rate_of = dict.fromkeys(subs, 0.0)
    for tp in group.assignable:
        lag_of[tp.topic] += group.lag[tp]
        rate_of[tp.topic] += rates[tp]
    readers = set(subs.values())
    pools = readers | {a | b for a, b in itertools.combinations(sorted(readers, key=sorted), 2)}
    bound = 0.0
    for pool in pools:
        inside = [t for t, m in subs.items() if m <= pool]
        bound = max(
            bound,
            seconds_to_catch_up(
                sum(lag_of[t] for t in inside),
                sum(rate_of[t] for t in inside),
                sum(caps[m] for m in sorted(pool)),  # floats: summed in one order whatever the hash seed
            ),
        )
    return bound


__all__ = [
    "Counts",
    "balanced_counts",
    "count_rules",
    "counts_lower_bound",
    "drain_lower_bound",
    "free_counts",
    "proportional_counts",
    "readers_drain_bound",
]
