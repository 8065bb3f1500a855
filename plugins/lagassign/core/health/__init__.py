"""A status per consumer group, from a window of observations of its partitions, by written rules.

Every observation of a partition is (time, end offset, committed offset, lag). Someone (the
health job, ``lagassign watch``, a page being rendered) observes the cluster now and then; the
rules read the observations of the last ``window_s`` seconds. Burrow's distinctions come first,
adapted to observations taken from outside (Burrow sees each commit; lagassign sees where the
committed offset stands each time it looks), then lagassign's own, which only a tool that knows
the plan in force can make. docs/health.md gives each rule with an example.

Per partition (``partition_status``), first rule that applies:

1. **OK** when its lag is zero now or at any observation in the window: a consumer that caught up
   once in the window is keeping up, whatever its commits do (a low-traffic topic whose lag is
   zero most of the time is OK, not STALL).
2. **WARN** (rewind) when the committed offset went back in the window.
3. When the committed offset has not moved for at least the window, with lag all along: **STALL**
   if someone holds the partition (a member or a live instance: it is there but not getting on),
   **STOP** if the group has no consumer at all (nobody commits), **UNCONSUMED** if the group
   has consumers but none holds this partition.
4. **WARN** when commits advance (the committed offset moved since the previous observation)
   but lag grew from the window's first observation to its last without ever going down (at
   least ``min_points`` observations), and the lag is more than ``steady_s`` seconds of what
   the consumer processes (less is the lag between commits: its noise is no trend): the
   consumer works, and falls behind.
5. **OK** otherwise.

Per group (``group_health``), the partitions' statuses and:

* topics no longer read are left out: a group with consumers, none of which holds any partition
  of a topic it once committed to, no longer reads that topic (its old commits are not lag);
* **UNCONSUMED**: a group with consumers leaves a partition of a topic it reads to nobody (with
  lag or inflow), while it is not rebalancing;
* **DEAD**: an instance of the plan in force is not alive (assign()-mode groups);
* **SWITCHING**: a live instance of the plan in force still runs an older version, or waits to
  start partitions the plan gives it;
* **OVERLOAD**: a consumer whose capacity is known (stated, or measured while behind) receives
  more messages per second than it can process, with lag: it can never catch up;
* **UNKNOWN**: the group could not be read.

The group's status is its most severe finding (``SEVERITY``), and every finding keeps its reason.
A group that is no longer in the cluster is not evaluated at all (deleted groups are not
reported as stopped). Times are seconds (any epoch); offsets whole numbers; rates messages per
second.
"""

from __future__ import annotations

from .alerts import Change, changes, should_notify
from .group import catch_up, group_health
from .partition import in_window, partition_lag_seconds, partition_status, rate, unchanged_for
from .records import (
    TP,
    Finding,
    GroupHealth,
    GroupInput,
    InstanceInput,
    PartitionHealth,
    PartitionInput,
    Point,
)
from .statuses import (
    ALERTING,
    DEAD,
    OK,
    OVERLOAD,
    REBALANCING,
    SEVERITY,
    STALL,
    STATUSES,
    STEADY_S,
    STOP,
    SWITCHING,
    UNCONSUMED,
    UNKNOWN,
    WARN,
    Rules,
    worst,
)

__all__ = [
    "ALERTING",
    "DEAD",
    "OK",
    "OVERLOAD",
    "REBALANCING",
    "SEVERITY",
    "STALL",
    "STATUSES",
    "STEADY_S",
    "STOP",
    "SWITCHING",
    "TP",
    "UNCONSUMED",
    "UNKNOWN",
    "WARN",
    "Change",
    "Finding",
    "GroupHealth",
    "GroupInput",
    "InstanceInput",
    "PartitionHealth",
    "PartitionInput",
    "Point",
    "Rules",
    "catch_up",
    "changes",
    "group_health",
    "in_window",
    "partition_lag_seconds",
    "partition_status",
    "rate",
    "should_notify",
    "unchanged_for",
    "worst",
]
