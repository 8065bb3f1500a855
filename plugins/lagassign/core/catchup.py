"""Planning in time: how long each member needs to catch up, and a bound no plan can beat.

A partition brings ``rate`` messages per second (its inflow; 0 when not given) and carries
``lag`` messages; a member processes ``capacity`` messages per second. A member holding lag L
with inflow R catches up after L / (capacity - R) seconds; never when R >= capacity (unless it
has no lag and R == capacity: it keeps up). Time metrics exist only when every member of the
group has a capacity: without them every figure here is absent and behaviour is unchanged.

Lower bound on the largest catch-up time T of any assignment (``lower_bound_catch_up``):
* pooled: all lag must drain through all capacity: T >= sum(L) / (sum(c) - sum(R));
* per partition: whoever reads p, T >= L_p / (c_max(p) - R_p), c_max(p) the fastest member
  that may read it. When this one alone exceeds a target, no reassignment can meet the target;
  the metrics name the slowest such partition (``slowest_partition``).

Example: partitions with lags 600 and 0 and inflows 0 and 5 msg/s, two members of 10 msg/s.
Reading both, one member catches up in 600 / (10 - 5) = 120 s; the other split gives 60 s.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from .model import GroupSnapshot, TopicPartition

NEVER = math.inf


def timed(group: GroupSnapshot) -> bool:
    """Whether the group can be planned in time: every member states its capacity."""
    return bool(group.members) and all(m.capacity is not None for m in group.members)


def inflow(group: GroupSnapshot) -> dict[TopicPartition, float]:
    """Messages per second produced to each known partition (0 where not given)."""
    return {tp: st.rate or 0.0 for tp, st in group.partitions.items()}


def capacity(group: GroupSnapshot) -> dict[str, float]:
    """Messages per second each member can process (0 where not given)."""
    return {m.id: m.capacity or 0.0 for m in group.members}


def seconds_to_catch_up(lag: float, rate: float, cap: float) -> float:
    """Seconds until ``lag`` messages are drained at ``cap`` against an inflow of ``rate``."""
    if lag <= 0 and rate <= cap:
        return 0.0
    if rate >= cap:
        return NEVER
    return lag / (cap - rate)


def member_times(group: GroupSnapshot, layout: Mapping[str, Iterable[TopicPartition]]) -> dict[str, float]:
    """Each member's catch-up seconds under ``layout`` (members of the group only)."""
    lag, rates, caps = group.lag, inflow(group), capacity(group)
    out = {}
    for mid, tps in layout.items():
        held = list(tps)
        out[mid] = seconds_to_catch_up(
            sum(lag[tp] for tp in held), sum(rates[tp] for tp in held), caps.get(mid, 0.0)
        )
    return out


def _fastest_reader(group: GroupSnapshot) -> dict[str, float]:
    """Topic -> the largest capacity among its subscribers."""
    caps = capacity(group)
    return {t: max(caps[mid] for mid in subs) for t, subs in group.subscribers.items()}


def partition_floor(group: GroupSnapshot) -> dict[TopicPartition, float]:
    """For each assignable partition, the catch-up time it forces on whoever reads it."""
    lag, rates, fastest = group.lag, inflow(group), _fastest_reader(group)
    return {tp: seconds_to_catch_up(lag[tp], rates[tp], fastest[tp.topic]) for tp in group.assignable}


def lower_bound_catch_up(group: GroupSnapshot) -> float:
    """A largest catch-up time no assignment of the group can go below (see the module doc)."""
    lag, rates = group.lag, inflow(group)
    tps = group.assignable
    total_cap = sum(capacity(group).values())
    pooled = seconds_to_catch_up(sum(lag[tp] for tp in tps), sum(rates[tp] for tp in tps), total_cap)
    return max([pooled, *partition_floor(group).values()])


def catch_up_metrics(
    group: GroupSnapshot,
    layout: Mapping[str, Iterable[TopicPartition]],
    bound: float | None = None,
    proven: bool = False,
) -> dict[str, object]:
    """The time metrics of an assignment: per-member and max catch-up seconds (None: never),
    the bound, whether the plan is the best in time (it reaches the bound, or its strategy
    proved it under its rules: ``proven``), which members never catch up, and the partition
    that alone needs longest. Empty when the group is not ``timed``."""
    if not timed(group):
        return {}
    times = member_times(group, layout)
    bound = lower_bound_catch_up(group) if bound is None else bound
    worst = max(times.values(), default=0.0)
    floors = partition_floor(group)
    slowest = min(floors, key=lambda tp: (-floors[tp], -group.lag[tp], tp), default=None)
    return {
        "catch_up_s": {mid: _seconds(t) for mid, t in times.items()},
        "max_catch_up_s": _seconds(worst),
        "lower_bound_catch_up_s": _seconds(bound),
        "never_catch_up": sorted(mid for mid, t in times.items() if t == NEVER),
        # no assignment catches up sooner (the plan reaches the bound, or it was proved)
        "catch_up_optimal": proven or worst <= bound * (1 + 1e-9),
        "slowest_partition": str(slowest) if slowest is not None else None,
        "slowest_partition_s": _seconds(floors[slowest]) if slowest is not None else None,
    }


def _seconds(value: float) -> float | None:
    """JSON has no infinity: never is None; finite times keep a tenth of a second."""
    return None if value == NEVER else round(value, 1)


def duration_text(seconds: float | None) -> str:
    """'2 h 10 min', '18 min', '45 s' or 'never' (None or infinite)."""
    if seconds is None or seconds == NEVER:
        return "never"
    s = round(seconds)
    if s < 60:
        return f"{s} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"{minutes} min"
    hours, rest = divmod(minutes, 60)
    if hours < 48:
        return f"{hours} h {rest} min" if rest else f"{hours} h"
    return f"{hours / 24:.1f} days"


def catch_up_change(
    current: Mapping[str, object],
    target: Mapping[str, object] | None = None,
    name: str | None = None,
    unconsumed: int = 0,
) -> str | None:
    """'max catch-up now 2 h 30 min → 1 h 15 min under drain-optimal (no plan below 1 h 13 min)'
    from the current assignment's metrics and a plan's (``target``, strategy ``name``); None
    when the group was planned without capacities (no catch-up times in the metrics). Now is
    'never' while the current assignment leaves ``unconsumed`` partitions to nobody (its
    members' times do not count them)."""
    if "max_catch_up_s" not in current:
        return None
    now = (
        f"never ({unconsumed} partitions unconsumed)"
        if unconsumed
        else duration_text(_given(current["max_catch_up_s"]))
    )
    text = f"max catch-up now {now}"
    if target is not None and name and "max_catch_up_s" in target:
        text += f" → {duration_text(_given(target['max_catch_up_s']))} under {name}"
    if "lower_bound_catch_up_s" in current:
        text += f" (no plan below {duration_text(_given(current['lower_bound_catch_up_s']))})"
    return text


def _given(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) else None
