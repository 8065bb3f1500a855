"""One group's status: its partitions' statuses and the group rules (the package's doc), its
lag figures and its predicted catch-up time."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..catchup import NEVER, seconds_to_catch_up
from .partition import in_window, partition_lag_seconds, partition_status, rate
from .records import Finding, GroupHealth, GroupInput, PartitionHealth
from .statuses import (
    DEAD,
    OK,
    OVERLOAD,
    REBALANCING,
    SEVERITY,
    STEADY_S,
    SWITCHING,
    UNCONSUMED,
    UNKNOWN,
    Rules,
    worst,
)


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
        names = tuple(p.name for p in ps)
        shown = "; ".join(f"{p.name}: {p.reason}" for p in ps[:3])
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
    names = tuple(p.name for p in loose)
    lag = _total_lag(loose)
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
    held = _by_owner(parts)
    for owner in sorted(o for o in held if o is not None):
        ps, cap = held[owner], g.capacities.get(owner)
        rates = [p.inflow for p in ps]
        if cap is None or cap <= 0 or any(r is None for r in rates):
            continue
        inflow = sum(r for r in rates if r is not None)
        lag = _total_lag(ps)
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
    lag = _total_lag(parts)
    if lag == 0:
        return 0.0 if parts else None
    held = _by_owner(parts)
    if None in held and any((p.lag or 0) > 0 for p in held[None]):
        return NEVER  # lag on partitions nobody reads is never consumed
    caps = {o: g.capacities.get(o) for o in held if o is not None}
    if caps and all(caps.values()) and all(p.inflow is not None for p in parts):
        return max(
            seconds_to_catch_up(_total_lag(ps), sum(p.inflow or 0.0 for p in ps), caps[owner] or 0.0)
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


def _by_owner(parts: Sequence[PartitionHealth]) -> dict[str | None, list[PartitionHealth]]:
    """The partitions by who holds them (None: nobody)."""
    held: dict[str | None, list[PartitionHealth]] = {}
    for p in parts:
        held.setdefault(p.owner, []).append(p)
    return held


def _total_lag(parts: Iterable[PartitionHealth]) -> int:
    return sum(p.lag or 0 for p in parts)
