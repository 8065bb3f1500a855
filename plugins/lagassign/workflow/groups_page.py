"""HTML of the groups pages: pure functions of the overview rows (``pipeline.health``), no I/O.

``groups_list_html``: every group with its status, lag in messages and time, catch-up time,
consumers alive or dead, versions, and its last plan's outcome; filtered and sorted by the
server (the page works without script, and stays light with thousands of groups).
``group_html``: one group with every finding, its actions, consumers, partitions and a
time-scaled chart of its lag over the health job's records with its plans and failovers marked.

The HTML is in ``templates/groups/`` (``list.html``, ``group.html``, ``note.html``, their
macros and CSS); this module makes the values they show. The pages are documents of
``templates/plans/page.html``, so look, times and links follow the plans pages (their CSS and
script, ``<time>`` shown in Airflow's timezone, outcome badges from ``plans/common.html``,
Airflow links that work from Airflow's frame). The templates escape everything from Kafka or
the store.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from ..core.catchup import duration_text
from ..core.health import SEVERITY, STATUSES
from ..core.outcome import Outcome
from ..pipeline.overview import catch_up_text, seconds_text
from .charts import STATUS_CLASS, lag_history_svg
from .formats import fmt_int, when
from .templating import html, render

SORT_LABELS = {
    "status": "status (worst first)",
    "name": "name",
    "lag": "lag",
    "lag-s": "lag time",
    "catch-up": "catch-up time",
}


@dataclass(frozen=True)
class ListQuery:
    """The list's filters and order, from the URL (checked: unknown values fall back)."""

    q: str = ""
    statuses: frozenset[str] = frozenset()
    sort: str = "status"
    desc: bool = False

    @classmethod
    def parse(cls, q: str | None, statuses: Iterable[str], sort: str | None, order: str | None) -> ListQuery:
        wanted = frozenset(s.strip().upper() for s in statuses if s and s.strip().upper() in SEVERITY)
        return cls(
            (q or "").strip()[:200],
            wanted,
            sort if sort in SORT_LABELS else "status",
            order == "desc",
        )

    def href(self, **changes: Any) -> str:
        """The list's URL with some of its filters changed."""
        q = {
            "q": self.q,
            "status": sorted(self.statuses),
            "sort": self.sort,
            "order": "desc" if self.desc else "",
        }
        q.update(changes)
        pairs = [(k, v) for k, v in q.items() if v and k != "status"]
        pairs += [("status", s) for s in q["status"]]
        return "groups" + (f"?{urlencode(pairs)}" if pairs else "")


@dataclass
class Mark:
    """Something that happened to a group, drawn on its chart: a plan or a failover."""

    at: datetime
    kind: str  # "plan" | "failover"
    label: str
    outcome: Outcome | None = None
    href: str | None = None
    detail: str = ""


@dataclass
class GroupPage:
    """What one group's page shows besides its overview row."""

    series: list[dict[str, Any]] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)
    alerts: list[dict[str, Any]] = field(default_factory=list)
    plan_in_force: int | None = None
    hours: float = 24.0


def group_href(group: str, up: str = "") -> str:
    return f"{up}groups/show?{urlencode({'group': group})}"


def filter_rows(rows: Sequence[dict[str, Any]], query: ListQuery) -> list[dict[str, Any]]:
    """Rows whose name contains ``q`` (any case) and whose status is one of ``statuses``."""
    needle = query.q.lower()
    return [
        r
        for r in rows
        if (not needle or needle in str(r["group"]).lower())
        and (not query.statuses or r["status"] in query.statuses)
    ]


#: what the templates call: the pages' formats, the outcome badge, a status's colour class
HELPERS: dict[str, Any] = {
    "when": lambda value, fmt="full": html(when(value, fmt)),
    "fmt_int": fmt_int,
    "seconds": seconds_text,
    "catch_up": catch_up_text,
    "status_class": lambda status: STATUS_CLASS.get(status, "unknown"),
}


def consumers(row: Mapping[str, Any]) -> dict[str, Any]:
    """Alive and dead consumers, and which live instances run another version than the plan in
    force ('w1 runs v3', 'w2: no plan'): the values of the ``consumers`` macro."""
    dead = [i["instance"] for i in row.get("instances") or () if i.get("state") == "dead"]
    behind = None
    versions = row.get("versions") or {}
    if versions and row.get("plan_version") is not None:
        others = {i: v for i, v in versions.items() if v != row["plan_version"]}
        if others:
            runs = (f"{i} runs v{v}" if v is not None else f"{i}: no plan" for i, v in sorted(others.items()))
            behind = ", ".join(runs)
    return {
        "alive": int(row.get("alive") or 0),
        "dead_names": dead,
        "dead": int(row.get("dead") or 0),
        "behind": behind,
    }


def last_plan(plan: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The group's last plan as the ``last_plan`` macro shows it: outcome, id, time, trigger, why."""
    if not plan:
        return None
    outcome = Outcome(
        plan.get("outcome_kind") or "unknown", plan.get("outcome") or "?", None, plan.get("reason") or ""
    )
    stamp = (
        datetime.fromisoformat(str(plan["created_at"]).replace("Z", "+00:00"))
        if plan.get("created_at")
        else None
    )
    return {
        "outcome": outcome,
        "id": int(plan["plan_id"]),
        "at": stamp,
        "trigger": plan.get("trigger"),
        "reason": plan.get("reason"),
    }


def source(ov: Any, now: datetime) -> dict[str, Any]:
    """Where the figures come from: read now, or the health job's record (or this page's own
    earlier read) and its age."""
    return {
        "fresh": ov.fresh,
        "cluster": ov.cluster or "unknown",
        "at": ov.observed_at,
        "whose": "the health job recorded" if ov.source == "health job" else "this page read",
        "age": duration_text(max(0.0, (now - ov.observed_at).total_seconds())),
    }


def note_html(why: str | None, window_s: float, newest: datetime | None, now: datetime) -> str:
    """Why the figures are not read now, and whether the health job keeps the window the rules
    need (STALL, STOP and WARN judge its observations): none yet, or its last one too old."""
    age = (now - newest).total_seconds() if newest is not None else 0.0
    history = "none" if newest is None else "old" if age > max(300.0, window_s) else ""
    return str(
        render(
            "groups/note.html",
            why=why,
            history=history,
            age=duration_text(age),
            window=duration_text(window_s),
        )
    )


# -- the list of groups -------------------------------------------------------------------------

#: the list's columns: (sort key or None, label, numeric)
COLUMNS = (
    ("name", "group", False),
    ("status", "status", False),
    ("lag", "lag (messages)", True),
    (None, "max partition lag", True),
    ("lag-s", "lag time", True),
    ("catch-up", "catch-up", True),
    (None, "consumers", False),
    (None, "plan in force", False),
    (None, "last plan", False),
)


def column_heads(query: ListQuery) -> list[dict[str, Any]]:
    """Each column's head: a sortable one links to the list sorted by it (again: the other way)."""
    heads = []
    for key, label, num in COLUMNS:
        head: dict[str, Any] = {"label": label, "num": num, "href": None, "arrow": ""}
        if key == query.sort:
            head["arrow"] = " ↑" if query.desc else " ↓"
            head["href"] = query.href(sort=key, order="" if query.desc else "desc")
        elif key is not None:
            head["href"] = query.href(sort=key, order="")
        heads.append(head)
    return heads


def list_row(r: Mapping[str, Any]) -> dict[str, Any]:
    """One group's row of the list."""
    reason = r.get("reason") if r["status"] != "OK" else ""
    return {
        "group": r["group"],
        "status": r["status"],
        "status_class": STATUS_CLASS.get(r["status"], "unknown"),
        "href": group_href(r["group"]),
        "kind": r.get("group_type") or ("assign()" if r.get("kind") == "assign" else ""),
        "reason": _short(reason) if reason else None,
        "total_lag": fmt_int(r.get("total_lag")),
        "max_lag": fmt_int(r.get("max_lag")),
        "lag_time": seconds_text(r.get("max_lag_s")),
        "catch_up": catch_up_text(r),
        "consumers": consumers(r),
        "version": f"v{int(r['plan_version'])}" if r.get("plan_version") is not None else "-",
        "last_plan": last_plan(r.get("last_plan")),
    }


def groups_list_html(
    ov: Any,
    rows: Sequence[Mapping[str, Any]],
    query: ListQuery,
    now: datetime,
    note: str = "",
    total: int | None = None,
) -> str:
    """The groups page: counts per status (links that filter), a name filter, the table."""
    counts: dict[str, int] = {}
    for r in ov.groups:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    html_text = render(
        "groups/list.html",
        **HELPERS,
        title="lagassign: consumer groups",
        source=source(ov, now),
        note=html(note),
        query=query,
        total_groups=len(ov.groups),
        counts=[(s, counts[s]) for s in sorted(counts, key=lambda x: (-SEVERITY[x], x))],
        sorts=list(SORT_LABELS.items()),
        checkboxes=[s for s in STATUSES if s in counts or s in query.statuses],
        heads=column_heads(query),
        rows=[list_row(r) for r in rows],
        total=total if total is not None else len(ov.groups),
        warnings=ov.warnings[:5],
        warning_count=len(ov.warnings),
    )
    return str(html_text)


def _short(text: Any, limit: int = 160) -> str:
    s = " ".join(str(text or "").split())
    return s if len(s) <= limit else s[: limit - 1].rstrip() + "…"


# -- one group ----------------------------------------------------------------------------------


def _names(tps: Any) -> list[str]:
    return [f"{t}-{p}" for t, p in tps or ()]


def _when_text(text: Any) -> Any:
    """A recorded ISO time as ``<time>``; text that is not one as it is ('-' when empty)."""
    if not text:
        return "-"
    try:
        return html(when(datetime.fromisoformat(str(text).replace("Z", "+00:00"))))
    except ValueError:
        return text


def instance_row(i: Mapping[str, Any]) -> dict[str, Any]:
    """An assign()-mode instance as the group's page lists it (a left instance says no why)."""
    return {
        "instance": i["instance"],
        "state": i["state"],
        "alive": i["alive"],
        "why": i.get("why") if i["state"] != "left" else None,
        "version": i.get("version"),
        "in_plan": i.get("in_plan"),
        "partitions": _names(i.get("partitions")),
        "pending": _names(i.get("pending")),
        "host": i.get("host"),
        "last_seen": _when_text(i.get("last_seen")),
    }


def member_row(m: Mapping[str, Any]) -> dict[str, Any]:
    """A member of a subscribe() group as the group's page lists it."""
    return {
        "id": m["id"],
        "client_id": m.get("client_id"),
        "host": m.get("host"),
        "partitions": _names(m.get("partitions")),
    }


def group_html(
    row: Mapping[str, Any], ov: Any, info: GroupPage, now: datetime, notice: str = "", note: str = ""
) -> str:
    """One group: status and every finding, figures, actions, chart, consumers, partitions."""
    start = now - timedelta(hours=info.hours)
    ranges = ((1, "1 h"), (6, "6 h"), (24, "24 h"), (72, "3 days"))
    html_text = render(
        "groups/group.html",
        **HELPERS,
        title=f"lagassign: group {row['group']}",
        row=row,
        source=source(ov, now),
        notice=html(notice),
        note=html(note),
        findings=row.get("findings") or [{"status": None, "reason": row.get("reason")}],
        kind=row.get("group_type") or ("assign() mode" if row.get("kind") == "assign" else "type unknown"),
        consumers=consumers(row),
        last_plan=last_plan(row.get("last_plan")),
        plan_in_force=int(info.plan_in_force) if info.plan_in_force is not None else None,
        history_href=f"../history?{urlencode({'group': row['group']})}",
        ranges=[
            (label, group_href(row["group"], "../") + "&" + urlencode({"hours": h})) for h, label in ranges
        ],
        chart=html(lag_history_svg(info.series, info.marks, start, now)),
        marks=sorted((m for m in info.marks if m.at >= start), key=lambda m: m.at, reverse=True),
        instances=[instance_row(i) for i in row.get("instances") or ()],
        members=[member_row(m) for m in row.get("members") or ()],
        alerts=info.alerts,
    )
    return str(html_text)
