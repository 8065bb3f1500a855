"""The groups overview and the health job: every group's status now, its lag figures and
instances, recorded between planning runs, with alerts once per change.

``observe`` reads the cluster (``kafka.overview``); ``build_overview`` joins what it saw with
the observations the audit store keeps (the rules' window) and judges every group
(``core.health``), adding its plan in force, instances and the last plan's outcome; the health
job (``health_step``: the ``lagassign_health`` DAG, or ``lagassign groups --record``) then
records the observation and the statuses and sends the alerts due through the notifier it is
given: a change of a group's status (``core.health.changes``) and every failover plan, each
once (``store.health`` claims it first).

Cost of one health run on a cluster of G groups and P group partitions: one snapshot's Kafka
reads (``bench/snapshot_speed.py``) plus the status and plans topics; in the audit store, P
rows written and pruned (the rules' window keeps about P × window / interval of them) and G
status rows (thinned to about 550 per group over three days).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from ..core.clock import iso_z, utc_now
from ..core.errors import LagassignError
from ..core.health import (
    SEVERITY,
    Change,
    GroupHealth,
    GroupInput,
    InstanceInput,
    PartitionInput,
    Point,
    Rules,
    changes,
    group_health,
)
from ..core.liveness import Liveness
from ..core.outcome import outcome_of
from ..core.topics import PLAN_TOPIC, STATUS_TOPIC
from ..kafka.groupsfile import load_groups_file
from ..kafka.overview import read_cluster
from .ports import GroupsStore, HealthPort

Log = Callable[[str], None]
#: An alert as a notifier receives it (``Alert.payload``); raising means not delivered.
Send = Callable[["Alert"], None]

DEFAULT_WINDOW_S = 600.0
#: Failover plans older than this when the health job first sees them are not sent (a job
#: switched on today does not report last month's failovers).
FAILOVER_LOOKBACK = timedelta(hours=1)


@dataclass(frozen=True)
class HealthSettings:
    """What the health job and the overview read, and the rules' window."""

    window_s: float = DEFAULT_WINDOW_S
    groups: str | None = None
    groups_file: str | None = None
    plan_topic: str = PLAN_TOPIC
    status_topic: str = STATUS_TOPIC
    session_timeout_ms: int | None = None

    @property
    def rules(self) -> Rules:
        return Rules(window_s=self.window_s)

    @property
    def keep(self) -> timedelta:
        """How long observations are kept: the window and a half (the rules need a value
        unchanged for a whole window, seen from before it started)."""
        return timedelta(seconds=self.window_s * 1.5 + 120)


@dataclass
class Overview:
    """Every group's row (``group_row``) and health, as of ``observed_at``; ``fresh`` when read
    from the cluster now, else from what the health job recorded last (``source`` says which)."""

    cluster: str
    observed_at: datetime
    fresh: bool
    source: str
    groups: list[dict[str, Any]]
    healths: dict[str, GroupHealth] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "cluster": self.cluster,
            "observed_at": iso_z(self.observed_at),
            "fresh": self.fresh,
            "source": self.source,
            "warnings": list(self.warnings),
            "groups": self.groups,
        }


@dataclass(frozen=True)
class Alert:
    """One notification: a status change of a group, or a failover."""

    kind: str  # "status" | "failover"
    cluster: str
    group: str
    subject: str
    title: str
    text: str
    status: str | None = None
    previous: str | None = None
    plan_id: int | None = None
    at: datetime = field(default_factory=utc_now)

    @property
    def payload(self) -> dict[str, Any]:
        """The JSON a webhook receives and notifiers' templates see as ``alert``."""
        return {
            "kind": self.kind,
            "cluster": self.cluster,
            "group": self.group,
            "title": self.title,
            "text": self.text,
            "status": self.status,
            "previous": self.previous,
            "plan_id": self.plan_id,
            "at": iso_z(self.at),
        }


# -- reading the cluster -----------------------------------------------------------------------


def observe(config: Mapping[str, Any], settings: HealthSettings, timeout: float = 30.0) -> Any:
    """One read of the cluster (``kafka.overview.ClusterView``)."""
    declared = load_groups_file(settings.groups_file) if settings.groups_file else []
    return read_cluster(
        config,
        settings.groups,
        declared,
        settings.plan_topic,
        settings.status_topic,
        settings.session_timeout_ms,
        timeout,
    )


# -- judging every group -----------------------------------------------------------------------

Observed = tuple[datetime, int | None, int | None, int | None, str | None]


def _member_id(row: Mapping[str, Any]) -> str:
    return str(row.get("instance_id") or row.get("member_id"))


def _tps(value: Any) -> list[tuple[str, int]]:
    out = []
    for a in value or ():
        if isinstance(a, Mapping):
            out.append((str(a["topic"]), int(a["partition"])))
        else:
            out.append((str(a[0]), int(a[1])))
    return sorted(out)


def group_inputs(
    view: Any, history: Mapping[str, Mapping[tuple[str, int], Sequence[Observed]]] | None = None
) -> tuple[list[GroupInput], dict[str, dict[str, Any]]]:
    """Each group of ``view`` as the rules read it (its observations: ``history`` and now), and
    the members and instances to show beside it (group -> {"members", "instances"})."""
    snap, liveness = view.snapshot, view.liveness
    now_s = view.observed_at.timestamp()
    now_ms = int(now_s * 1000)
    history = history or {}
    parts_of: dict[str, list[dict[str, Any]]] = {}
    for row in snap.partitions:
        parts_of.setdefault(row["group"], []).append(row)
    members_of: dict[str, list[dict[str, Any]]] = {}
    for row in snap.members:
        members_of.setdefault(row["group"], []).append(row)
    inputs, shown = [], {}
    seconds: dict[datetime, float] = {}  # one conversion per observation time
    for g in snap.groups:
        name = g["group"]
        owners: dict[tuple[str, int], str] = {}
        members: list[str] = []
        instances: list[InstanceInput] = []
        capacities: dict[str, float] = {}
        plan = view.plans.get(name) if g.get("kind") == "assign" else None
        plan_members = {iid: _tps(tps) for iid, tps in (plan.members.items() if plan else ())}
        member_rows: list[dict[str, Any]] = []
        if g.get("kind") == "assign":
            pinned = getattr(view, "declared", {}).get(name, ())
            instances = _instances(name, liveness, plan_members, now_ms, pinned)
            for i in instances:
                if i.alive:
                    members.append(i.instance)
                    for tp in i.partitions:
                        owners[tp] = i.instance
                    if i.capacity:
                        capacities[i.instance] = i.capacity
        else:
            for m in members_of.get(name, []):
                mid = _member_id(m)
                members.append(mid)
                held = _tps(m.get("assignment"))
                for tp in held:
                    owners[tp] = mid
                member_rows.append(
                    {
                        "id": mid,
                        "client_id": m.get("client_id"),
                        "host": m.get("host"),
                        "partitions": [list(tp) for tp in held],
                    }
                )
        past = history.get(name, {})
        parts = []
        for row in parts_of.get(name, []):
            tp = (row["topic"], int(row["partition"]))
            points = []
            for t, end, c, lag, _o in past.get(tp, ()):
                at = seconds.get(t)
                if at is None:
                    at = seconds[t] = t.timestamp()
                if at < now_s:
                    points.append(Point(at, end, c, lag))
            points.append(Point(now_s, row.get("end"), row.get("committed"), row.get("lag")))
            parts.append(PartitionInput(tp[0], tp[1], tuple(points), owners.get(tp)))
        inputs.append(
            GroupInput(
                name,
                kind=g.get("kind") or "subscribe",
                partitions=tuple(parts),
                members=tuple(members),
                group_type=g.get("group_type"),
                state=g.get("state"),
                plan_version=plan.version if plan else g.get("plan_version"),
                plan=plan_members or None,
                instances=tuple(instances),
                capacities=capacities,
                error=read_error(g),
            )
        )
        shown[name] = {"members": member_rows, "instances": [_instance_row(i) for i in instances]}
    return inputs, shown


def read_error(g: Mapping[str, Any]) -> str | None:
    """What could not be read of a group. An assign()-mode group without a live instance was
    read completely (the snapshot notes "no live instance (…)"): its instances' state is what
    the rules judge, not a read error."""
    text = g.get("error") or ""
    if g.get("kind") == "assign" and text.startswith("no live instance ("):
        depth, end = 0, len(text)
        for i, ch in enumerate(text):
            depth += ch == "("
            depth -= ch == ")"
            if ch == ")" and depth == 0:
                end = i + 1
                break
        text = text[end:].removeprefix("; ")
    return text or None


def _instances(
    group: str,
    liveness: Liveness,
    plan: Mapping[str, list[tuple[str, int]]],
    now_ms: int,
    declared: Iterable[str] = (),
) -> list[InstanceInput]:
    """Every instance the group has: announced (alive or not), named by its plan in force, or
    pinned by the groups file (one that never announced itself says so)."""
    out = []
    for iid in sorted(liveness.known(group) | set(plan) | set(declared)):
        st = liveness.status(group, iid)
        alive = liveness.is_alive(group, iid, now_ms)
        gone = None if alive else liveness.departure(group, iid, now_ms)
        out.append(
            InstanceInput(
                iid,
                alive,
                version=st.version if st else None,
                in_plan=iid in plan,
                partitions=tuple((tp.topic, tp.partition) for tp in st.partitions) if st and alive else (),
                pending=tuple((tp.topic, tp.partition) for tp in st.pending) if st and alive else (),
                # stated only: a rate "while behind" also describes a steady consumer with the
                # few messages of lag between two polls, which would read as overloaded
                capacity=st.capacity if st else None,
                why=gone.why if gone else None,
                host=st.host if st else None,
                last_seen=st.time_ms / 1000 if st else None,
            )
        )
    return out


def _instance_row(i: InstanceInput) -> dict[str, Any]:
    state = "alive" if i.alive else ("left" if i.why == "closed" else "dead")
    return {
        "instance": i.instance,
        "alive": i.alive,
        "state": state,
        "why": i.why,
        "version": i.version,
        "in_plan": i.in_plan,
        "partitions": [list(tp) for tp in i.partitions],
        "pending": [list(tp) for tp in i.pending],
        "host": i.host,
        "last_seen": iso_z(datetime.fromtimestamp(i.last_seen, tz=UTC)) if i.last_seen else None,
    }


def build_overview(
    view: Any, store: GroupsStore | None, settings: HealthSettings, last_plans: bool = True
) -> Overview:
    """Judge every group ``view`` saw, with the store's observations of the window (none without
    a store), and add each group's last plan and its outcome."""
    history = {}
    if store is not None:
        # the window and two minutes: enough to see a value unchanged for a whole window
        since = view.observed_at - timedelta(seconds=settings.window_s + 120)
        history = store.observations(view.cluster, since)
    inputs, shown = group_inputs(view, history)
    rules = settings.rules
    healths = {g.group: group_health(g, rules) for g in inputs}
    plans = plan_outcomes(store, view.cluster, healths) if store is not None and last_plans else {}
    rows = []
    for g in inputs:
        h = healths[g.group]
        rows.append(group_row(g, h, shown[g.group], plans.get(g.group), view.observed_at))
    rows.sort(key=lambda r: r["group"])
    return Overview(view.cluster, view.observed_at, True, "cluster", rows, healths, list(view.warnings))


def group_row(
    g: GroupInput,
    h: GroupHealth,
    shown: Mapping[str, Any],
    last_plan: Mapping[str, Any] | None,
    observed_at: datetime,
) -> dict[str, Any]:
    """One group as every surface shows it (the ``lagassign groups --json`` objects)."""
    data = h.to_dict()
    instances = list(shown.get("instances") or [])
    alive = sum(1 for i in instances if i["alive"]) if g.kind == "assign" else len(g.members)
    dead = sum(1 for i in instances if i["state"] == "dead")
    return {
        "group": g.group,
        "kind": g.kind,
        "group_type": g.group_type,
        "state": g.state,
        **{k: v for k, v in data.items() if k not in ("group", "partitions")},
        "alive": alive,
        "dead": dead,
        "members": list(shown.get("members") or []),
        "instances": instances,
        "plan_version": g.plan_version,
        "versions": {i["instance"]: i["version"] for i in instances if i["alive"]},
        "last_plan": dict(last_plan) if last_plan else None,
        "partitions": data["partitions"],
        "observed_at": iso_z(observed_at),
    }


def plan_outcomes(store: GroupsStore, cluster: str, groups: Iterable[str]) -> dict[str, dict[str, Any]]:
    """Each group's last plan on ``cluster``: id, time, trigger, outcome badge and reason."""
    newest = store.last_plans(cluster, groups)
    if not newest:
        return {}
    details = store.plan_details(set(newest.values()))
    out = {}
    for group, plan_id in newest.items():
        plan = details.get(plan_id)
        if plan is None:
            continue
        found = next((x for x in plan["groups"] if x["group"] == group), None)
        if found is None:
            continue
        o = outcome_of(plan, found)
        decision = found.get("decision") or {}
        out[group] = {
            "plan_id": plan_id,
            "created_at": iso_z(plan.get("created_at")),
            "trigger": plan.get("trigger"),
            "outcome": o.label,
            "outcome_kind": o.kind,
            "reason": decision.get("reason") or o.detail or None,
        }
    return out


SORTS = ("status", "name", "lag", "lag-s", "catch-up")


def sort_rows(rows: list[dict[str, Any]], by: str, reverse: bool = False) -> list[dict[str, Any]]:
    """Rows sorted worst first (``status``), by name, or by a figure, largest first (``SORTS``);
    ``reverse`` turns the order around."""

    def figure(key: str) -> Any:
        return lambda r: (-(r.get(key) or 0), r["group"])

    keys = {
        "status": lambda r: (-SEVERITY.get(r["status"], 0), -(r.get("total_lag") or 0), r["group"]),
        "name": lambda r: r["group"],
        "lag": figure("total_lag"),
        "lag-s": figure("max_lag_s"),
        "catch-up": lambda r: (
            -(float("inf") if r.get("never_catches_up") else (r.get("catch_up_s") or 0)),
            r["group"],
        ),
    }
    return sorted(rows, key=keys[by], reverse=reverse)


def stored_overview(store: GroupsStore, cluster: str | None = None) -> Overview | None:
    """What the health job recorded last (newest cluster when none is named), for when the
    cluster cannot be read now; None when nothing was recorded."""
    if cluster is None:
        known = store.health_clusters()
        if not known:
            return None
        cluster = known[0]["cluster"]
    latest = store.latest_statuses(cluster)
    if not latest:
        return None
    at = max(r["observed_at"] for r in latest.values())
    plans = plan_outcomes(store, cluster, latest)
    rows = []
    for name, r in sorted(latest.items()):
        rows.append(
            {
                "group": name,
                "kind": r.get("kind"),
                "group_type": r.get("group_type"),
                "state": None,
                "status": r["status"],
                "reason": r.get("reason"),
                "findings": [],
                "total_lag": r.get("total_lag"),
                "max_lag": r.get("max_lag"),
                "max_lag_s": r.get("max_lag_s"),
                "catch_up_s": r.get("catch_up_s"),
                "never_catches_up": bool(r.get("never")),
                "inflow": r.get("inflow"),
                "consumed": r.get("consumed"),
                "not_read": [],
                "alive": r.get("alive"),
                "dead": r.get("dead"),
                "members": [],
                "instances": [],
                "plan_version": r.get("plan_version"),
                "versions": {},
                "last_plan": plans.get(name),
                "partitions": [],
                "observed_at": iso_z(r["observed_at"]),
            }
        )
    return Overview(cluster, at, False, "health job", rows)


# -- the health job ----------------------------------------------------------------------------


def record(store: HealthPort, view: Any, ov: Overview, settings: HealthSettings) -> dict[str, int]:
    """Keep this observation (the rules' window) and every group's status and figures."""
    rows = [
        (r["group"], r["topic"], int(r["partition"]), r.get("end"), r.get("committed"), r.get("lag"), owner)
        for r, owner in _owned_rows(view, ov)
    ]
    n = store.record_observation(view.cluster, view.observed_at, rows, settings.keep)
    store.record_statuses(view.cluster, view.observed_at, [status_figures(r) for r in ov.groups])
    return {"partitions": n, "groups": len(ov.groups)}


def _owned_rows(view: Any, ov: Overview) -> Iterable[tuple[Mapping[str, Any], str | None]]:
    owners = {
        (row["group"], p["topic"], p["partition"]): p.get("owner")
        for row in ov.groups
        for p in row["partitions"]
    }
    for r in view.snapshot.partitions:
        if r.get("topic") is None:
            continue
        yield r, owners.get((r["group"], r["topic"], int(r["partition"])))


def status_figures(row: Mapping[str, Any]) -> dict[str, Any]:
    """A group row as the status series keeps it."""
    return {
        "group": row["group"],
        "status": row["status"],
        "reason": row.get("reason"),
        "total_lag": row.get("total_lag"),
        "max_lag": row.get("max_lag"),
        "max_lag_s": row.get("max_lag_s"),
        "catch_up_s": row.get("catch_up_s"),
        "never": bool(row.get("never_catches_up")),
        "inflow": row.get("inflow"),
        "consumed": row.get("consumed"),
        "alive": row.get("alive"),
        "dead": row.get("dead"),
        "plan_version": row.get("plan_version"),
        "kind": row.get("kind"),
        "group_type": row.get("group_type"),
    }


def status_alerts(store: HealthPort, ov: Overview, partial: bool = False) -> list[Alert]:
    """The status changes due (``core.health.changes`` against the stored last statuses), and
    the new last statuses kept. ``partial``: the overview covers some groups only (a regex):
    groups it does not cover are not forgotten."""
    previous = store.last_states(ov.cluster)
    due, kept = changes(previous, ov.healths.values())
    store.save_states(ov.cluster, kept, ov.observed_at, forget_others=not partial)
    return [_status_alert(ov.cluster, c, ov.observed_at) for c in due]


def _status_alert(cluster: str, c: Change, at: datetime) -> Alert:
    h = c.health
    was = c.before[0] if c.before else None
    title = f"lagassign: group {c.group} is {h.status}" + (f" (was {was})" if was else "")
    return Alert(
        "status",
        cluster,
        c.group,
        f"{c.group}@{iso_z(at)}:{'/'.join(c.after)}",
        title,
        f"{c.describe()} (total lag {h.total_lag:,}, catch-up {h.catch_up_text})",
        status=h.status,
        previous=was,
        at=at,
    )


def failover_alerts(
    store: GroupsStore, cluster: str, now: datetime, lookback: timedelta = FAILOVER_LOOKBACK
) -> list[Alert]:
    """Every failover plan on ``cluster`` of the last ``lookback`` not sent yet, one per group."""
    plans = [
        p
        for p in store.list_plans(cluster=cluster, since=now - lookback, limit=500)
        if p["trigger"] == "failover"
    ]
    if not plans:
        return []
    details = store.plan_details(p["id"] for p in plans)
    out = []
    for p in sorted(plans, key=lambda x: x["id"]):
        for g in details.get(p["id"], {}).get("groups", []):
            o = outcome_of(details[p["id"]], g)
            why = (g.get("decision") or {}).get("reason") or ""
            text = f"{g['group']}: failover plan {p['id']}: {o.label}" + (f" ({why})" if why else "")
            out.append(
                Alert(
                    "failover",
                    cluster,
                    g["group"],
                    f"plan {p['id']} {g['group']}",
                    f"lagassign: failover of group {g['group']}: {o.label}",
                    text,
                    plan_id=int(p["id"]),
                    at=p["created_at"],
                )
            )
    return out


def webhook_sender(url: str, timeout: float = 10.0) -> Send:
    """A ``Send`` that POSTs each alert as JSON to ``url``: ``Alert.payload``, whose ``text`` is
    what Slack, Mattermost or Teams incoming webhooks show. An HTTP error or no answer raises."""
    import json
    import urllib.error
    import urllib.request
    from urllib.parse import urlsplit

    if urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).netloc:
        raise LagassignError(f"the alert webhook must be an http(s) URL, got {url!r}")

    def send(alert: Alert) -> None:
        body = json.dumps(alert.payload).encode()
        req = urllib.request.Request(
            url, data=body, method="POST", headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(req, timeout=timeout) as answer:
                answer.read()
        except urllib.error.HTTPError as exc:
            raise LagassignError(f"the webhook answered HTTP {exc.code} {exc.reason}") from None
        except (urllib.error.URLError, OSError) as exc:
            why = getattr(exc, "reason", exc)
            raise LagassignError(f"the webhook could not be reached: {why}") from None

    return send


def send_alerts(
    store: HealthPort, alerts: Iterable[Alert], send: Send | None, log: Log | None = None
) -> dict[str, int]:
    """Claim each alert (skipped when claimed before, by this run or another) and hand it to
    ``send``. An alert the notifier refused stays recorded with its error (the group's page shows
    it); it is not sent again. Counts of sent, failed and skipped."""
    counts = {"sent": 0, "failed": 0, "skipped": 0}
    say = log or (lambda _m: None)
    todo: list[tuple[int, Alert]] = []
    for a in alerts:
        claimed = store.claim_alert(
            a.cluster, a.group, a.kind, a.subject, a.text, a.at, [a.status] if a.status else None
        )
        if claimed is None:
            counts["skipped"] += 1
        else:
            todo.append((claimed, a))
    for alert_id, a in todo:
        if send is None:
            store.alert_sent(alert_id, utc_now(), error="no notifier configured")
            say(f"alert (no notifier configured): {a.text}")
            counts["failed"] += 1
            continue
        try:
            send(a)
        except Exception as exc:
            store.alert_sent(alert_id, utc_now(), error=(str(exc) or type(exc).__name__)[:500])
            say(f"alert not delivered: {a.text}: {exc}")
            counts["failed"] += 1
        else:
            store.alert_sent(alert_id, utc_now())
            say(f"alert sent: {a.text}")
            counts["sent"] += 1
    return counts


def health_step(
    store: GroupsStore,
    config: Mapping[str, Any],
    settings: HealthSettings,
    send: Send | None = None,
    log: Log | None = None,
    timeout: float = 30.0,
) -> dict[str, Any]:
    """One run of the health job: observe, judge, record, alert. Returns a summary."""
    return health_run(store, config, settings, send, log, timeout)[1]


def health_run(
    store: GroupsStore,
    config: Mapping[str, Any],
    settings: HealthSettings,
    send: Send | None = None,
    log: Log | None = None,
    timeout: float = 30.0,
) -> tuple[Overview, dict[str, Any]]:
    """``health_step``, also returning the overview it recorded (what ``lagassign groups
    --record`` prints)."""
    say = log or (lambda _m: None)
    view = observe(config, settings, timeout)
    ov = build_overview(view, store, settings)
    counts = record(store, view, ov, settings)
    alerts = status_alerts(store, ov, partial=settings.groups is not None)
    alerts += failover_alerts(store, ov.cluster, ov.observed_at)
    sent = send_alerts(store, alerts, send, say)
    by_status: dict[str, int] = {}
    for r in ov.groups:
        by_status[r["status"]] = by_status.get(r["status"], 0) + 1
    summary = ", ".join(f"{n} {s}" for s, n in sorted(by_status.items())) or "no groups"
    say(
        f"cluster {ov.cluster}: {len(ov.groups)} groups ({summary}); "
        f"{counts['partitions']} partitions recorded"
    )
    for w in ov.warnings:
        say(f"warning: {w}")
    return ov, {
        "cluster": ov.cluster,
        "groups": len(ov.groups),
        "statuses": by_status,
        **counts,
        "alerts": sent,
    }
