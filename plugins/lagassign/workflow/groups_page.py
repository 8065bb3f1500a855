"""HTML of the groups pages: pure functions of the overview rows (``pipeline.health``), no I/O.

``groups_list_html``: every group with its status, lag in messages and time, catch-up time,
consumers alive or dead, versions, and its last plan's outcome; filtered and sorted by the
server (the page works without script, and stays light with thousands of groups).
``group_html``: one group with every finding, its actions, consumers, partitions and a
time-scaled chart of its lag over the health job's records with its plans and failovers marked.

The look, times and links follow the plans pages (``plans_page``: its CSS, ``<time>`` shown in
Airflow's timezone, outcome badges, Airflow links that work from Airflow's frame). Everything
from Kafka or the store is escaped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from html import escape
from typing import Any
from urllib.parse import quote, urlencode

from ..core.catchup import duration_text
from ..core.health import SEVERITY, STATUSES
from ..core.outcome import Outcome
from .charts import STATUS_CLASS, lag_history_svg
from .plans_page import badge, error_page, fmt_int, page, when

SORT_LABELS = {
    "status": "status (worst first)",
    "name": "name",
    "lag": "lag",
    "lag-s": "lag time",
    "catch-up": "catch-up time",
}

_CSS = """
.status{display:inline-block;font-size:.8rem;font-weight:700;border-radius:8px;padding:1px 8px;color:#fff;
letter-spacing:.02em} .status.ok{background:#1a7f37} .status.unknown{background:#6e7781}
.status.warn{background:#9a6700} .status.bad{background:#bc4c00} .status.dead{background:#cf222e}
table.groups{width:100%} table.groups td.name{min-width:13em} table.groups td.state{max-width:24em}
table.groups th a{color:inherit;text-decoration:none} table.groups th a:hover{text-decoration:underline}
.chips{display:flex;gap:6px;flex-wrap:wrap;margin:6px 0 10px} .chips a{text-decoration:none}
.chip{border:1px solid var(--line);border-radius:12px;padding:1px 10px;font-size:.85rem;background:var(--soft)}
.chip.on{outline:2px solid var(--link)} .dead-names{color:var(--err)} .alive-n{color:var(--go)}
ul.findings{margin:6px 0 10px;padding-left:20px} ul.findings li{margin:2px 0}
svg.lagchart .band{opacity:.85} svg.lagchart .mark{stroke-width:1.5}
table.marks td{font-size:.85rem}
"""


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


def _e(value: Any) -> str:
    return escape("-" if value is None else str(value), quote=True)


def status_badge(status: str, title: str | None = None) -> str:
    tip = f' title="{_e(title)}"' if title else ""
    return f'<span class="status {STATUS_CLASS.get(status, "unknown")}" data-status="{_e(status)}"{tip}>{_e(status)}</span>'


def seconds_text(value: Any) -> str:
    return "-" if value is None else duration_text(float(value))


def catch_up_text(row: Mapping[str, Any]) -> str:
    if row.get("never_catches_up"):
        return "never"
    return seconds_text(row.get("catch_up_s"))


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


def consumers_cell(row: Mapping[str, Any]) -> str:
    """'3 alive', or '1 alive · 1 dead: w1' with the versions each live instance runs."""
    alive = int(row.get("alive") or 0)
    parts = [f'<span class="{"alive-n" if alive else "muted"}">{alive} alive</span>']
    dead = [i["instance"] for i in row.get("instances") or () if i.get("state") == "dead"]
    if dead:
        parts.append(f'<span class="dead-names">{len(dead)} dead: {_e(", ".join(dead[:4]))}</span>')
    elif row.get("dead"):
        parts.append(f'<span class="dead-names">{int(row["dead"])} dead</span>')
    versions = row.get("versions") or {}
    if versions and row.get("plan_version") is not None:
        behind = {i: v for i, v in versions.items() if v != row["plan_version"]}
        if behind:
            runs = (f"{i} runs v{v}" if v is not None else f"{i}: no plan" for i, v in sorted(behind.items()))
            parts.append(_e(", ".join(runs)))
    return " · ".join(parts)


def last_plan_cell(plan: Mapping[str, Any] | None, up: str = "") -> str:
    if not plan:
        return '<span class="muted">never planned</span>'
    outcome = Outcome(
        plan.get("outcome_kind") or "unknown", plan.get("outcome") or "?", None, plan.get("reason") or ""
    )
    stamp = (
        datetime.fromisoformat(str(plan["created_at"]).replace("Z", "+00:00"))
        if plan.get("created_at")
        else None
    )
    why = f'<span class="why">{_e(plan["reason"])}</span>' if plan.get("reason") else ""
    return (
        f'{badge(outcome)} <a href="{up}plans/{int(plan["plan_id"])}">plan {int(plan["plan_id"])}</a> '
        f'<span class="muted">{when(stamp, "mdhm")} · {_e(plan.get("trigger"))}</span>{why}'
    )


def source_html(ov: Any, now: datetime) -> str:
    """Where the figures come from: read now, or the health job's record and its age."""
    age = max(0.0, (now - ov.observed_at).total_seconds())
    cluster = _e(ov.cluster or "unknown")
    if ov.fresh:
        return f'<p class="muted">Cluster <code>{cluster}</code>, read {when(ov.observed_at)}.</p>'
    whose = "the health job recorded" if ov.source == "health job" else "this page read"
    return (
        f'<div class="banner stale"><strong>Not read now.</strong> The cluster could not be read within the '
        f"page's time limit; these are the figures {whose} at {when(ov.observed_at)} "
        f"({_e(duration_text(age))} ago) for cluster <code>{cluster}</code>.</div>"
    )


def history_note(window_s: float, newest: datetime | None, now: datetime) -> str:
    """Whether the health job keeps a window for the rules (STALL, STOP and WARN need one)."""
    if newest is None:
        return (
            '<div class="banner">No observations from the health job (<code>lagassign_health</code>) yet: '
            "statuses judge this one look only, so STALL, STOP and WARN cannot show. Unpause the DAG, "
            "or run <code>lagassign groups --record</code> from cron.</div>"
        )
    age = (now - newest).total_seconds()
    if age > max(300.0, window_s):
        return (
            f'<div class="banner">The health job last observed the cluster {_e(duration_text(age))} ago: '
            f"STALL, STOP and WARN need its observations of the last {_e(duration_text(window_s))}.</div>"
        )
    return ""


def _th(query: ListQuery, key: str, label: str, num: bool = False) -> str:
    cls = ' class="num"' if num else ""
    if query.sort == key:
        arrow = " ↑" if query.desc else " ↓"
        href = query.href(sort=key, order="" if query.desc else "desc")
    else:
        arrow, href = "", query.href(sort=key, order="")
    return f'<th{cls}><a href="{_e(href)}">{_e(label)}{arrow}</a></th>'


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
    chips = [
        f'<a href="{_e(query.href(status=[]))}"><span class="chip{" on" if not query.statuses else ""}">'
        f"all {fmt_int(len(ov.groups))}</span></a>"
    ]
    for s in sorted(counts, key=lambda x: (-SEVERITY[x], x)):
        on = " on" if s in query.statuses else ""
        chips.append(
            f'<a href="{_e(query.href(status=[s]))}"><span class="chip{on}">{status_badge(s)} '
            f"{fmt_int(counts[s])}</span></a>"
        )
    options = "".join(
        f'<label><input type="checkbox" name="status" value="{s}"{" checked" if s in query.statuses else ""}> {s}</label>'
        for s in STATUSES
        if s in counts or s in query.statuses
    )
    sorts = "".join(
        f'<option value="{k}"{" selected" if k == query.sort else ""}>{_e(v)}</option>'
        for k, v in SORT_LABELS.items()
    )
    form = (
        '<form class="filters" method="get" action="groups">'
        f'<label>name contains<input name="q" value="{_e(query.q) if query.q else ""}" size="24"></label>'
        f'<label>sort<select name="sort">{sorts}</select></label>'
        f'<fieldset class="chips" style="border:0;padding:0;margin:0">{options}</fieldset>'
        '<button type="submit">show</button></form>'
    )
    head = (
        "<tr>"
        + _th(query, "name", "group")
        + _th(query, "status", "status")
        + _th(query, "lag", "lag (messages)", True)
        + '<th class="num">max partition lag</th>'
        + _th(query, "lag-s", "lag time", True)
        + _th(query, "catch-up", "catch-up", True)
        + "<th>consumers</th><th>plan in force</th><th>last plan</th></tr>"
    )
    body = []
    for r in rows:
        kind = r.get("group_type") or ("assign()" if r.get("kind") == "assign" else "")
        tag = f'<span class="tag">{_e(kind)}</span>' if kind else ""
        reason = r.get("reason") if r["status"] != "OK" else ""
        version = f"v{int(r['plan_version'])}" if r.get("plan_version") is not None else "-"
        body.append(
            f'<tr data-group="{_e(r["group"])}" data-status="{_e(r["status"])}">'
            f'<td class="name"><a href="{_e(group_href(r["group"]))}">{_e(r["group"])}</a>{tag}</td>'
            f'<td class="state">{status_badge(r["status"])}'
            + (f'<span class="why">{_e(_short(reason))}</span>' if reason else "")
            + "</td>"
            f'<td class="num">{fmt_int(r.get("total_lag"))}</td>'
            f'<td class="num">{fmt_int(r.get("max_lag"))}</td>'
            f'<td class="num">{_e(seconds_text(r.get("max_lag_s")))}</td>'
            f'<td class="num">{_e(catch_up_text(r))}</td>'
            f"<td>{consumers_cell(r)}</td><td>{version}</td>"
            f"<td>{last_plan_cell(r.get('last_plan'))}</td></tr>"
        )
    shown = len(rows)
    count = f"{fmt_int(shown)} of {fmt_int(total if total is not None else len(ov.groups))} groups"
    table = (
        f'<table class="groups"><thead>{head}</thead><tbody>{"".join(body)}</tbody></table>'
        if rows
        else '<p class="muted">No group matches.</p>'
    )
    warnings = "".join(f"<li>{_e(w)}</li>" for w in ov.warnings[:5])
    warn = (
        f"<details><summary>{len(ov.warnings)} warnings while reading</summary><ul>{warnings}</ul></details>"
        if warnings
        else ""
    )
    return page(
        "lagassign: consumer groups",
        f"<style>{_CSS}</style>"
        '<p><a href="plans">rebalance plans →</a></p><h1>Consumer groups</h1>'
        + source_html(ov, now)
        + note
        + f'<div class="chips">{"".join(chips)}</div>'
        + form
        + f'<p class="muted count">{count}</p>'
        + table
        + warn,
    )


def _short(text: Any, limit: int = 160) -> str:
    s = " ".join(str(text or "").split())
    return s if len(s) <= limit else s[: limit - 1].rstrip() + "…"


# -- one group ----------------------------------------------------------------------------------


def marks_table(marks: Sequence[Mark]) -> str:
    """Every plan and failover of the period, newest first, linked to its plan."""
    if not marks:
        return ""
    rows = []
    for m in sorted(marks, key=lambda m: m.at, reverse=True):
        label = f'<a href="{_e(m.href)}">{_e(m.label)}</a>' if m.href else _e(m.label)
        outcome = badge(m.outcome) if m.outcome else ""
        why = f' <span class="why">{_e(m.detail)}</span>' if m.detail else ""
        rows.append(
            f"<tr><td>{when(m.at)}</td><td>{_e(m.kind)}</td><td>{label}</td><td>{outcome}{why}</td></tr>"
        )
    head = "<tr><th>when</th><th>what</th><th>plan</th><th>outcome</th></tr>"
    return f'<table class="marks">{head}{"".join(rows)}</table>'


def _consumers_table(row: Mapping[str, Any]) -> str:
    def parts(tps: Any) -> str:
        names = [f"{t}-{p}" for t, p in tps or ()]
        return _e(", ".join(names)) if names else '<span class="muted">none</span>'

    if row.get("kind") == "assign":
        if not row.get("instances"):
            return '<p class="muted">No instance ever announced itself on the status topic.</p>'
        body = "".join(
            f'<tr data-instance="{_e(i["instance"])}" data-state="{_e(i["state"])}"><td>{_e(i["instance"])}</td>'
            f'<td class="{"go" if i["alive"] else "err"}">{_e(i["state"])}'
            + (f'<span class="why">{_e(i["why"])}</span>' if i.get("why") and i["state"] != "left" else "")
            + f"</td><td>{'v' + _e(i['version']) if i.get('version') is not None else '-'}</td>"
            f"<td>{'yes' if i.get('in_plan') else 'no'}</td><td>{parts(i.get('partitions'))}</td>"
            f"<td>{parts(i.get('pending'))}</td><td>{_e(i.get('host'))}</td>"
            f"<td>{_when_text(i.get('last_seen'))}</td></tr>"
            for i in row["instances"]
        )
        return (
            "<table><tr><th>instance</th><th>state</th><th>runs</th><th>in plan in force</th>"
            f"<th>consumes</th><th>waits for</th><th>host</th><th>last seen</th></tr>{body}</table>"
        )
    if not row.get("members"):
        return '<p class="muted">No member: nobody consumes this group.</p>'
    body = "".join(
        f"<tr><td><code>{_e(m['id'])}</code></td><td>{_e(m.get('client_id'))}</td><td>{_e(m.get('host'))}</td>"
        f"<td>{parts(m.get('partitions'))}</td></tr>"
        for m in row["members"]
    )
    return f"<table><tr><th>member</th><th>client id</th><th>host</th><th>partitions</th></tr>{body}</table>"


def _when_text(text: Any) -> str:
    if not text:
        return "-"
    try:
        return when(datetime.fromisoformat(str(text).replace("Z", "+00:00")))
    except ValueError:
        return _e(text)


def _partitions_table(row: Mapping[str, Any]) -> str:
    if not row.get("partitions"):
        return '<p class="muted">No partition figures in this view.</p>'
    body = "".join(
        f'<tr data-partition="{_e(p["topic"])}-{_e(p["partition"])}"><td>{_e(p["topic"])}-{_e(p["partition"])}</td>'
        f'<td class="num">{fmt_int(p.get("end"))}</td><td class="num">{fmt_int(p.get("committed"))}</td>'
        f'<td class="num">{fmt_int(p.get("lag"))}</td><td class="num">{_e(seconds_text(p.get("lag_s")))}</td>'
        f"<td>{_e(p.get('owner'))}</td><td>{status_badge(p['status'], p.get('reason'))}</td></tr>"
        for p in row["partitions"]
    )
    return (
        '<table class="partitions"><tr><th>partition</th><th class="num">end offset</th>'
        '<th class="num">committed</th><th class="num">lag (messages)</th><th class="num">lag time</th>'
        f"<th>owner</th><th>status</th></tr>{body}</table>"
    )


def actions_html(row: Mapping[str, Any], info: GroupPage) -> str:
    """Plan now (a ``lagassign_rebalance`` run of this group, apply off), fail over now (for
    assign()-mode groups: a ``lagassign_failover`` run), open the plan in force."""
    hidden = f'<input type="hidden" name="group" value="{_e(row["group"])}">'
    out = [
        f'<form class="action" method="post" action="actions/plan">{hidden}'
        '<button type="submit" class="primary">plan now</button></form>'
    ]
    if row.get("kind") == "assign":
        out.append(
            f'<form class="action" method="post" action="actions/failover">{hidden}'
            '<button type="submit">fail over now</button></form>'
        )
    if info.plan_in_force is not None:
        out.append(
            f'<a href="../plans/{int(info.plan_in_force)}">open the plan in force (v{_e(row.get("plan_version"))})</a>'
        )
    out.append(f' · <a href="../history?{urlencode({"group": row["group"]})}">plans of this group</a>')
    return '<div class="actions">' + "".join(out) + "</div>"


def group_html(
    row: Mapping[str, Any], ov: Any, info: GroupPage, now: datetime, notice: str = "", note: str = ""
) -> str:
    """One group: status and every finding, figures, actions, chart, consumers, partitions."""
    kind = row.get("group_type") or ("assign() mode" if row.get("kind") == "assign" else "type unknown")
    findings = row.get("findings") or []
    items = "".join(f"<li>{status_badge(f['status'])} {_e(f['reason'])}</li>" for f in findings) or (
        f"<li>{_e(row.get('reason'))}</li>"
    )
    start = now - timedelta(hours=info.hours)
    facts = [
        ("type", _e(kind) + (f" · state {_e(row['state'])}" if row.get("state") else "")),
        (
            "lag",
            f"{fmt_int(row.get('total_lag'))} messages (largest partition {fmt_int(row.get('max_lag'))})",
        ),
        ("lag time", _e(seconds_text(row.get("max_lag_s")))),
        ("catch-up", _e(catch_up_text(row))),
        ("consumers", consumers_cell(row)),
        ("plan in force", f"v{_e(row['plan_version'])}" if row.get("plan_version") is not None else "-"),
        ("last plan", last_plan_cell(row.get("last_plan"), "../")),
    ]
    if row.get("not_read"):
        facts.append(
            (
                "not read any more",
                _e(", ".join(row["not_read"])) + ' <span class="muted">(old commits, not lag)</span>',
            )
        )
    dl = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in facts)
    ranges = " · ".join(
        f'<a href="{_e(group_href(row["group"], "../") + "&" + urlencode({"hours": h}))}">{label}</a>'
        for h, label in ((1, "1 h"), (6, "6 h"), (24, "24 h"), (72, "3 days"))
    )
    alerts = "".join(
        f"<tr><td>{when(a['created_at'])}</td><td>{_e(a['kind'])}</td><td>{_e(a['text'])}</td>"
        f"<td>{'sent' if a.get('sent_at') else _e('not sent: ' + str(a.get('error') or 'pending'))}</td></tr>"
        for a in info.alerts
    )
    alerts_html = (
        f"<table><tr><th>when</th><th>kind</th><th>alert</th><th>delivery</th></tr>{alerts}</table>"
        if alerts
        else '<p class="muted">No alert about this group.</p>'
    )
    body = (
        f"<style>{_CSS}</style>"
        '<p><a href="../groups">← all groups</a></p>'
        f"<h1>{_e(row['group'])} {status_badge(row['status'])}</h1>"
        + source_html(ov, now)
        + notice
        + note
        + f'<ul class="findings">{items}</ul>'
        + f'<dl class="meta">{dl}</dl>'
        + actions_html(row, info)
        + f'<h2>Lag over time</h2><p class="muted">{ranges}</p>'
        + lag_history_svg(info.series, info.marks, start, now)
        + marks_table([m for m in info.marks if m.at >= start])
        + f"<h2>{'Instances' if row.get('kind') == 'assign' else 'Members'}</h2>"
        + _consumers_table(row)
        + "<h2>Partitions</h2>"
        + _partitions_table(row)
        + "<h2>Alerts</h2>"
        + alerts_html
    )
    return page(f"lagassign: group {row['group']}", body)


def not_found_html(group: str, cluster: str) -> str:
    return error_page(404, f"no group {group!r} on cluster {cluster or 'unknown'} now", "../groups")


def quote_group(group: str) -> str:
    return quote(group, safe="")
