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

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any, NamedTuple

from .catchup import NEVER, duration_text, seconds_to_catch_up
from .inflow import clean_history, lag_seconds

OK, WARN, SWITCHING, UNKNOWN = "OK", "WARN", "SWITCHING", "UNKNOWN"
OVERLOAD, STALL, UNCONSUMED = "OVERLOAD", "STALL", "UNCONSUMED"
DEAD, STOP = "DEAD", "STOP"

#: How bad each status is; a group takes its worst finding's status.
SEVERITY = {
    OK: 0,
    UNKNOWN: 1,
    WARN: 1,
    SWITCHING: 1,
    OVERLOAD: 2,
    STALL: 2,
    UNCONSUMED: 2,
    DEAD: 3,
    STOP: 3,
}
STATUSES = tuple(sorted(SEVERITY, key=lambda s: (SEVERITY[s], s)))
#: Statuses an operator is told about when a group enters them (and when it leaves them).
ALERTING = frozenset({STALL, STOP, DEAD, OVERLOAD, UNCONSUMED})

#: Group states of a group whose assignment is being changed (nothing to judge about owners).
REBALANCING = frozenset({"PreparingRebalance", "CompletingRebalance", "Assigning", "Reconciling"})
#: A consumer whose outstanding messages take less than this at the rate it consumes keeps up
#: (that is the lag between commits): no warning for its lag's ups and downs, and its catch-up
#: time is that time, not lag / (consumed − inflow) (which the noise of two nearly equal rates
#: would blow up). ``Rules.steady_s``.
STEADY_S = 30.0

TP = tuple[str, int]


@dataclass(frozen=True)
class Rules:
    """The rules' settings: the window judged (seconds), the observations a trend needs, and
    the seconds of work under which a lag is the steady lag between commits (``STEADY_S``)."""

    window_s: float = 600.0
    min_points: int = 3
    steady_s: float = STEADY_S

    def __post_init__(self) -> None:
        if not (self.window_s > 0 and math.isfinite(self.window_s)):
            raise ValueError(f"the health window must be a positive number of seconds, got {self.window_s}")
        if self.min_points < 2:
            raise ValueError("a trend needs at least 2 observations")


class Point(NamedTuple):
    """One observation of a group's partition: when (s), end offset, committed offset (None: no
    commit), lag by the group's reset policy (None: unknown). A tuple: a page judges hundreds of
    thousands of them."""

    t: float
    end: int | None
    committed: int | None
    lag: int | None


@dataclass(frozen=True)
class PartitionInput:
    """A partition of a group: its observations oldest first (the last is now), who holds it
    now (member or instance id; None: nobody), and older end offsets for lag in seconds."""

    topic: str
    partition: int
    points: tuple[Point, ...]
    owner: str | None = None
    ends: tuple[tuple[float, int], ...] = ()

    @property
    def tp(self) -> TP:
        return (self.topic, self.partition)

    @property
    def now(self) -> Point | None:
        return self.points[-1] if self.points else None


@dataclass(frozen=True)
class InstanceInput:
    """An assign()-mode instance as its status records show it: alive or not (and why not), the
    version it runs, what it consumes and waits for, its capacity, whether the plan names it."""

    instance: str
    alive: bool
    version: int | None = None
    in_plan: bool = False
    partitions: tuple[TP, ...] = ()
    pending: tuple[TP, ...] = ()
    capacity: float | None = None
    why: str | None = None
    host: str | None = None
    last_seen: float | None = None


@dataclass(frozen=True)
class GroupInput:
    """What is known of one group now: its kind (``subscribe`` | ``assign``), group type and
    state, its members (subscribe: member ids; assign: live instances), partitions with their
    observations, the plan in force (assign), its instances, and capacities where known."""

    group: str
    kind: str = "subscribe"
    partitions: tuple[PartitionInput, ...] = ()
    members: tuple[str, ...] = ()
    group_type: str | None = None
    state: str | None = None
    plan_version: int | None = None
    plan: Mapping[str, Sequence[TP]] | None = None
    instances: tuple[InstanceInput, ...] = ()
    capacities: Mapping[str, float] = field(default_factory=dict)
    error: str | None = None


@dataclass(frozen=True)
class Finding:
    """One rule that applies: its status, one line why, and the partitions or instances it is about."""

    status: str
    reason: str
    about: tuple[str, ...] = ()


@dataclass(frozen=True)
class PartitionHealth:
    """A partition's figures now and its status by the partition rules."""

    topic: str
    partition: int
    status: str
    reason: str
    lag: int | None
    lag_s: float | None
    end: int | None
    committed: int | None
    owner: str | None
    inflow: float | None
    consumed: float | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "topic": self.topic,
            "partition": self.partition,
            "status": self.status,
            "reason": self.reason,
            "lag": self.lag,
            "lag_s": _round(self.lag_s),
            "end": self.end,
            "committed": self.committed,
            "owner": self.owner,
            "inflow": _round(self.inflow, 3),
            "consumed": _round(self.consumed, 3),
        }


@dataclass(frozen=True)
class GroupHealth:
    """A group's status (its worst finding), every finding, its lag figures and partitions."""

    group: str
    status: str
    findings: tuple[Finding, ...]
    partitions: tuple[PartitionHealth, ...]
    total_lag: int
    max_lag: int
    max_lag_s: float | None
    catch_up_s: float | None
    inflow: float | None
    consumed: float | None
    not_read: tuple[str, ...] = ()

    @property
    def reason(self) -> str:
        worst = [f for f in self.findings if f.status == self.status]
        if worst:
            return "; ".join(f.reason for f in worst)
        return "every partition keeps up" if self.partitions else "no partition to consume"

    @property
    def key(self) -> tuple[str, ...]:
        """What an alert is about: the status and, for DEAD, which instances (another one dying
        is another change)."""
        if self.status == DEAD:
            dead = sorted({a for f in self.findings if f.status == DEAD for a in f.about})
            return (DEAD, *dead)
        return (self.status,)

    @property
    def catch_up_text(self) -> str:
        if self.catch_up_s is None:
            return "unknown"
        return duration_text(self.catch_up_s)

    def to_dict(self) -> dict[str, Any]:
        never = self.catch_up_s is not None and self.catch_up_s == NEVER
        return {
            "group": self.group,
            "status": self.status,
            "reason": self.reason,
            "findings": [
                {"status": f.status, "reason": f.reason, "about": list(f.about)} for f in self.findings
            ],
            "total_lag": self.total_lag,
            "max_lag": self.max_lag,
            "max_lag_s": _round(self.max_lag_s),
            "catch_up_s": None if never else _round(self.catch_up_s),
            "never_catches_up": never,
            "inflow": _round(self.inflow, 3),
            "consumed": _round(self.consumed, 3),
            "not_read": list(self.not_read),
            "partitions": [p.to_dict() for p in self.partitions],
        }


def _round(value: float | None, digits: int = 1) -> float | None:
    if value is None or not math.isfinite(value):
        return None
    return round(value, digits)


def worst(statuses: Iterable[str]) -> str:
    """The most severe of ``statuses`` (OK when there are none)."""
    return max(statuses, key=lambda s: SEVERITY[s], default=OK)


# -- one partition ------------------------------------------------------------------------------


def in_window(points: Sequence[Point], window_s: float) -> list[Point]:
    """The observations of the last ``window_s`` seconds (up to the newest, which is now)."""
    if not points:
        return []
    now = points[-1].t
    return [p for p in points if p.t >= now - window_s]


def unchanged_for(points: Sequence[Point]) -> float:
    """Seconds the committed offset is known not to have moved: from the first observation of
    its current value to now (a lower bound: it moved somewhere before that observation)."""
    if not points:
        return 0.0
    now = points[-1]
    first = len(points) - 1
    while first > 0 and points[first - 1].committed == now.committed:
        first -= 1
    return now.t - points[first].t


def rate(points: Sequence[Point], attr: str) -> float | None:
    """Messages per second by which ``end`` or ``committed`` moved between the first and last
    of ``points``; None without two points with that value, or when it went back."""
    known = [(p.t, getattr(p, attr)) for p in points if getattr(p, attr) is not None]
    if len(known) < 2 or known[-1][0] <= known[0][0]:
        return None
    (t0, v0), (t1, v1) = known[0], known[-1]
    return (v1 - v0) / (t1 - t0) if v1 >= v0 else None


def partition_status(
    p: PartitionInput, rules: Rules, consumers: bool, consumer_word: str = "member"
) -> tuple[str, str]:
    """(status, reason) of one partition by the partition rules (module doc); ``consumers``:
    whether the group has any consumer at all."""
    window = in_window(p.points, rules.window_s)
    now = p.now
    if now is None or now.lag is None:
        return OK, "lag unknown"
    lags = [q.lag for q in window if q.lag is not None]
    if now.lag == 0 or 0 in lags:
        return OK, "caught up in the window"
    commits = [q.committed for q in window if q.committed is not None]
    if any(b < a for a, b in pairwise(commits)):
        return WARN, f"committed offset went back (to {commits[-1]:,})"
    still = unchanged_for(p.points)
    if still >= rules.window_s:
        since = duration_text(still)
        lag = f"{now.lag:,}"
        if p.owner is not None:
            return STALL, f"no progress for {since} with lag {lag} ({consumer_word} {p.owner} holds it)"
        if not consumers:
            return STOP, f"no commit for {since} with lag {lag}, and nobody consumes the group"
        return UNCONSUMED, f"nobody holds it; no commit for {since} with lag {lag}"
    advancing = len(commits) >= 2 and commits[-2] < commits[-1]  # moved since the previous look
    if len(window) >= rules.min_points and advancing:
        steps = [b - a for a, b in pairwise(lags)]
        consumed = rate(window, "committed") or 0.0
        behind = consumed <= 0 or now.lag > consumed * rules.steady_s  # more than lag between commits
        if lags[-1] > lags[0] and all(s >= 0 for s in steps) and behind:
            return WARN, f"lag grew from {lags[0]:,} to {lags[-1]:,} while commits advance"
    return OK, "keeps up"


def partition_lag_seconds(p: PartitionInput) -> float | None:
    """Seconds since the end offset was where the consumer is now (``core.inflow``), from the
    older end offsets and the observations; None when unknown."""
    now = p.now
    if now is None or now.end is None or now.lag is None:
        return None
    series = clean_history([*p.ends, *((q.t, q.end) for q in p.points if q.end is not None)])
    return lag_seconds(series, now.end - now.lag)


# -- one group ---------------------------------------------------------------------------------


def _read_topics(g: GroupInput, consuming: bool) -> tuple[set[str], set[str]]:
    """(topics the group reads, topics it no longer reads). A consuming group that is not
    rebalancing reads the topics its consumers hold (or announce, or its plan names)."""
    topics = {p.topic for p in g.partitions}
    if not consuming or g.state in REBALANCING:
        return topics, set()
    held = {p.topic for p in g.partitions if p.owner is not None}
    held |= {t for i in g.instances if i.alive for t, _ in (*i.partitions, *i.pending)}
    held |= {t for tps in (g.plan or {}).values() for t, _ in tps}
    if not held:  # members that hold nothing yet: judge every topic
        return topics, set()
    return topics & held, topics - held


def group_health(g: GroupInput, rules: Rules | None = None) -> GroupHealth:
    """The status of one group, its findings and figures, by the rules of the module doc."""
    rules = rules or Rules()
    if g.error:
        return GroupHealth(
            g.group, UNKNOWN, (Finding(UNKNOWN, f"not read: {g.error}"),), (), 0, 0, None, None, None, None
        )
    word = "instance" if g.kind == "assign" else "member"
    consuming = bool(g.members) or any(i.alive for i in g.instances)
    read, not_read = _read_topics(g, consuming)
    findings: list[Finding] = []
    parts: list[PartitionHealth] = []
    for p in sorted(g.partitions, key=lambda x: x.tp):
        if p.topic not in read:
            continue
        status, why = partition_status(p, rules, consuming, word)
        window = in_window(p.points, rules.window_s)
        now = p.now
        parts.append(
            PartitionHealth(
                p.topic,
                p.partition,
                status,
                why,
                now.lag if now else None,
                partition_lag_seconds(p),
                now.end if now else None,
                now.committed if now else None,
                p.owner,
                rate(window, "end"),
                rate(window, "committed"),
            )
        )
    findings += _partition_findings(parts)
    findings += _unconsumed(g, parts, consuming)
    findings += _instances(g)
    findings += _overload(g, parts)
    lags = [p.lag for p in parts if p.lag is not None]
    times = [p.lag_s for p in parts if p.lag_s is not None]
    findings.sort(key=lambda f: (-SEVERITY[f.status], f.status, f.reason))
    status = worst(f.status for f in findings)
    inflow = _sum_known(p.inflow for p in parts)
    consumed = _sum_known(p.consumed for p in parts)
    return GroupHealth(
        g.group,
        status,
        tuple(findings),
        tuple(parts),
        sum(lags),
        max(lags, default=0),
        max(times) if times else (0.0 if parts and not any(lags) else None),
        catch_up(g, parts, inflow, consumed, rules.steady_s),
        inflow,
        consumed,
        tuple(sorted(not_read)),
    )


def _sum_known(values: Iterable[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _partition_findings(parts: Sequence[PartitionHealth]) -> list[Finding]:
    """One finding per partition status other than OK, naming its partitions (up to three
    reasons quoted, the rest counted)."""
    by_status: dict[str, list[PartitionHealth]] = {}
    for p in parts:
        if p.status != OK:
            by_status.setdefault(p.status, []).append(p)
    out = []
    for status, ps in by_status.items():
        ps.sort(key=lambda p: (-(p.lag or 0), p.topic, p.partition))
        names = tuple(f"{p.topic}-{p.partition}" for p in ps)
        shown = "; ".join(f"{p.topic}-{p.partition}: {p.reason}" for p in ps[:3])
        more = f" (and {len(ps) - 3} more partitions)" if len(ps) > 3 else ""
        out.append(Finding(status, shown + more, names))
    return out


def _unconsumed(g: GroupInput, parts: Sequence[PartitionHealth], consuming: bool) -> list[Finding]:
    """Partitions with lag or inflow that nobody holds, in a consuming group that is settled
    (those already judged UNCONSUMED or DEAD by their own rules are not counted twice)."""
    if not consuming or g.state in REBALANCING:
        return []
    dead_held = {
        tp for i in g.instances if not i.alive and i.in_plan for tp in (g.plan or {}).get(i.instance, ())
    }
    waiting = {tp for i in g.instances if i.alive for tp in i.pending}
    loose = [
        p
        for p in parts
        if p.owner is None
        and p.status != UNCONSUMED
        and (p.topic, p.partition) not in dead_held | waiting
        and ((p.lag or 0) > 0 or (p.inflow or 0) > 0)
    ]
    if not loose:
        return []
    names = tuple(f"{p.topic}-{p.partition}" for p in loose)
    lag = sum(p.lag or 0 for p in loose)
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    return [Finding(UNCONSUMED, f"nobody consumes {shown} (lag {lag:,})", names)]


def _instances(g: GroupInput) -> list[Finding]:
    """DEAD and SWITCHING from the instances of the plan in force."""
    out = []
    plan = g.plan or {}
    for i in sorted(g.instances, key=lambda x: x.instance):
        if not i.in_plan:
            continue
        if not i.alive:
            held = len(plan.get(i.instance, ()))
            of_plan = (
                f" (plan v{g.plan_version} gives it {_count(held, 'partition')})" if g.plan_version else ""
            )
            out.append(
                Finding(DEAD, f"instance {i.instance} {i.why or 'is not alive'}{of_plan}", (i.instance,))
            )
        elif g.plan_version is not None and (i.version is None or i.version < g.plan_version):
            runs = f"v{i.version}" if i.version is not None else "no plan yet"
            out.append(
                Finding(
                    SWITCHING,
                    f"instance {i.instance} runs {runs}, plan in force is v{g.plan_version}",
                    (i.instance,),
                )
            )
        elif i.pending:
            out.append(
                Finding(
                    SWITCHING,
                    f"instance {i.instance} waits to start {_count(len(i.pending), 'partition')} "
                    f"of v{g.plan_version}",
                    (i.instance,),
                )
            )
    return out


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _overload(g: GroupInput, parts: Sequence[PartitionHealth]) -> list[Finding]:
    """Consumers of known capacity receiving more than they can process, with lag."""
    out = []
    held: dict[str, list[PartitionHealth]] = {}
    for p in parts:
        if p.owner is not None:
            held.setdefault(p.owner, []).append(p)
    for owner, ps in sorted(held.items()):
        cap = g.capacities.get(owner)
        rates = [p.inflow for p in ps]
        if cap is None or cap <= 0 or any(r is None for r in rates):
            continue
        inflow = sum(r for r in rates if r is not None)
        lag = sum(p.lag or 0 for p in ps)
        if lag > 0 and inflow >= cap:
            out.append(
                Finding(
                    OVERLOAD,
                    f"{owner} receives {inflow:,.0f} msg/s and processes at most {cap:,.0f} msg/s: "
                    f"it never catches up (lag {lag:,})",
                    (owner,),
                )
            )
    return out


def catch_up(
    g: GroupInput,
    parts: Sequence[PartitionHealth],
    inflow: float | None,
    consumed: float | None,
    steady_s: float = STEADY_S,
) -> float | None:
    """Predicted seconds until the group has no lag: 0 without lag; ``NEVER`` while lag sits on
    partitions nobody reads; the slowest consumer by ``core.catchup`` where every holder's
    capacity is known; else from the window's rates: what is outstanding at the rate the group
    consumes when that is under ``steady_s`` (it keeps up), else lag / (consumed − inflow), and
    ``NEVER`` when it consumes no faster than messages arrive. None when unknown."""
    lag = sum(p.lag or 0 for p in parts)
    if lag == 0:
        return 0.0 if parts else None
    held: dict[str | None, list[PartitionHealth]] = {}
    for p in parts:
        held.setdefault(p.owner, []).append(p)
    if None in held and any((p.lag or 0) > 0 for p in held[None]):
        return NEVER  # lag on partitions nobody reads is never consumed
    caps = {o: g.capacities.get(o) for o in held if o is not None}
    if caps and all(caps.values()) and all(p.inflow is not None for p in parts):
        return max(
            seconds_to_catch_up(
                sum(p.lag or 0 for p in ps), sum(p.inflow or 0.0 for p in ps), caps[owner] or 0.0
            )
            for owner, ps in held.items()
            if owner is not None
        )
    if inflow is None or consumed is None:
        return None
    if consumed > 0 and lag <= consumed * steady_s:
        return lag / consumed
    if consumed <= inflow:
        return NEVER
    return lag / (consumed - inflow)


# -- alerts -------------------------------------------------------------------------------------


def should_notify(previous: Sequence[str] | None, current: Sequence[str]) -> bool:
    """Whether a group whose last notified state was ``previous`` (a ``GroupHealth.key``; None:
    never seen) and is ``current`` now is worth one notification: a change into, out of or
    within the alerting statuses. A first sight notifies only a group already in trouble."""
    now = tuple(current)
    if previous is None:
        return now[0] in ALERTING
    before = tuple(previous)
    if before == now:
        return False
    return now[0] in ALERTING or before[0] in ALERTING


@dataclass(frozen=True)
class Change:
    """A group's status changed in a way worth one notification (``should_notify``)."""

    group: str
    before: tuple[str, ...] | None
    health: GroupHealth

    @property
    def after(self) -> tuple[str, ...]:
        return self.health.key

    def describe(self) -> str:
        """'orders: OK → STOP: events-0: no commit for 12 min with lag 4,200, …'."""
        was = self.before[0] if self.before else "new"
        return f"{self.group}: {was} → {self.health.status}: {self.health.reason}"


def changes(
    notified: Mapping[str, Sequence[str]], healths: Iterable[GroupHealth]
) -> tuple[list[Change], dict[str, tuple[str, ...]]]:
    """The notifications due, given each group's last notified state, and the state to keep
    next: every group present with its key now. Groups no longer present are forgotten, not
    reported (a deleted group is gone, not stopped)."""
    due = []
    kept: dict[str, tuple[str, ...]] = {}
    for h in healths:
        before = notified.get(h.group)
        previous = tuple(before) if before is not None else None
        if should_notify(previous, h.key):
            due.append(Change(h.group, previous, h))
        kept[h.group] = h.key
    return due, kept
