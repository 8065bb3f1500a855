"""HTML pages of the plans audit trail for the Airflow UI: pure functions, no I/O, no web framework.

The FastAPI wiring lives in ``ui.py``; everything here takes plain plan dicts (``AuditStore``'s
``list_plans`` / ``get_plan`` shapes) and returns strings, so it is tested without a server.
Every value from the store goes through ``html.escape`` (group, member and strategy names come
from Kafka clusters and parameters from people). Charts are inline SVG drawn here; the pages
load nothing from anywhere (no script, stylesheet, font or image URL).

What a plan did for a group is one badge (``core.outcome``), the same on the list, the plan
page and the history. Numbers have one format (1,120) and lag its unit (messages). Times are
written in UTC and shown in the timezone the Airflow UI uses (its own setting, else the
browser's) by a few lines of inline script. Links to Airflow open in the top window also from
inside Airflow's sandboxed frame (see ``_SCRIPT``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import fields
from datetime import date, datetime
from typing import Any
from urllib.parse import quote, urlencode

from ..core.catchup import catch_up_change, duration_text
from ..core.explain import hint
from ..core.inflow import lag_time_text
from ..core.outcome import Outcome, outcome_of
from ..core.strategies import cluster_text, kafka_choice
from ..pipeline.params import PlanParams
from .charts import STRATEGY_COLOURS as STRATEGY_COLOURS
from .charts import colour_of, history_chart_svg, lag_chart_svg
from .formats import esc, fmt_int, fmt_rate, lag_text, ratio_text, when
from .guard import OVERRIDE, PRIMARY, Guard, publish_guard
from .plan_facts import (
    BASELINE,
    Move,
    chart_series,
    compute_moves,
    dead_instances,
    owners,
    result_of,
    target_strategy,
    timed,
)

#: The DAGs the pages' actions and promises depend on, and what stops while one is paused.
DAG_ROLES: dict[str, str] = {
    "lagassign_review": "publish and roll back from these pages wait in the queue",
    "lagassign_rebalance": "re-plan from these pages waits in the queue",
    "lagassign_failover": "failover is off: a dead instance's partitions are not given to the live ones",
    "lagassign_daily": "no scheduled plans are made",
}

_CSS = """
:root{--fg:#1f2328;--bg:#fff;--muted:#6e7781;--line:#d0d7de;--soft:#f6f8fa;--grid:#eaeef2;--link:#0969da;
--go:#1a7f37;--stop:#9a6700;--err:#cf222e;--hl:#fff4e6;--tag:#eaeef2;--info:#0969da;color-scheme:light}
@media (prefers-color-scheme:dark){:root:not([data-theme=light]){--fg:#e6edf3;--bg:#0d1117;--muted:#8b949e;
--line:#30363d;--soft:#161b22;--grid:#21262d;--link:#58a6ff;--go:#3fb950;--stop:#d29922;--err:#f85149;
--hl:#2d2212;--tag:#21262d;--info:#58a6ff;color-scheme:dark}}
:root[data-theme=dark]{--fg:#e6edf3;--bg:#0d1117;--muted:#8b949e;--line:#30363d;--soft:#161b22;
--grid:#21262d;--link:#58a6ff;--go:#3fb950;--stop:#d29922;--err:#f85149;--hl:#2d2212;--tag:#21262d;
--info:#58a6ff;color-scheme:dark}
*{box-sizing:border-box}
body{font-family:Inter,system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:var(--fg);
background:var(--bg);font-size:14px}
main{padding:16px 20px;max-width:1400px}
h1{font-size:1.4rem;margin:0 0 12px} h2{font-size:1.15rem;margin:28px 0 6px;border-top:1px solid var(--line);
padding-top:14px} h3{font-size:1rem;margin:16px 0 6px}
a{color:var(--link)} table{border-collapse:collapse;margin:6px 0 10px;font-size:.9rem}
th,td{border:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top;overflow-wrap:break-word}
th{background:var(--soft)} td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
table.plans,table.history{width:100%} td.when,td.id{white-space:nowrap} td.name{word-break:break-word;min-width:7em}
tr.chosen td{background:var(--hl)} tr.refused td{color:var(--muted)} tr.plan-start td{border-top:2px solid var(--line)}
.go{color:var(--go);font-weight:600} .stop{color:var(--stop);font-weight:600} .err{color:var(--err)}
.badge{display:inline-block;font-size:.8rem;font-weight:600;border-radius:8px;padding:1px 8px;
border:1px solid currentColor;max-width:32em;vertical-align:middle}
.badge.published{color:var(--go)} .badge.dry-run{color:var(--info)} .badge.stale,.badge.held,.badge.stop{color:var(--stop)}
.badge.failed{color:var(--err)} .badge.unchanged,.badge.off,.badge.skipped,.badge.running,.badge.publishing{color:var(--muted)}
.why{display:block;font-size:.8rem;color:var(--muted);margin-top:2px}
.tag{display:inline-block;font-size:.75rem;border-radius:8px;padding:0 6px;margin-left:4px;background:var(--tag)}
.tag.chosen{outline:2px solid var(--fg)} .tag.best{background:#2da44e33} .tag.optimal{background:#218bff33}
.tag.kafka{background:#bf873733} .tag.default{background:transparent;color:var(--muted);padding:0 2px}
.swatch{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:5px;vertical-align:middle}
form.filters{display:flex;gap:12px;align-items:end;flex-wrap:wrap;margin-bottom:12px}
form.filters label{display:flex;flex-direction:column;font-size:.8rem;gap:2px}
form.action{display:inline-block;margin:4px 8px 4px 0}
button,input{font:inherit;color:var(--fg);background:var(--soft);border:1px solid var(--line);border-radius:6px;
padding:3px 10px} button{cursor:pointer} button.primary{background:#017cee;color:#fff;border-color:#017cee}
button.danger{border-color:var(--err);color:var(--err)}
dl.meta{display:grid;grid-template-columns:max-content auto;gap:2px 12px;margin:0;font-size:.9rem}
dl.meta dt{font-weight:600} dl.meta dd{margin:0} code{font-size:.85rem;overflow-wrap:anywhere}
.muted{color:var(--muted)} svg.chart{max-width:100%;height:auto;border:1px solid var(--grid)}
svg.chart text{fill:var(--fg)} svg.chart .grid{stroke:var(--grid)} svg.chart .axis{stroke:var(--muted)}
svg.chart .bound{stroke:var(--fg)} .cause{border-left:3px solid var(--err);padding:4px 10px;background:var(--soft)}
details summary{cursor:pointer;color:var(--link)} nav.pages{margin:8px 0}
.notice,.banner{border:1px solid var(--line);border-left:4px solid var(--info);background:var(--soft);padding:8px 12px;
margin:8px 0;border-radius:4px} .banner{border-left-color:var(--stop)} .notice.failed{border-left-color:var(--err)}
.notice.success{border-left-color:var(--go)}
.confirm{border:1px solid var(--stop);border-radius:6px;padding:8px 12px;margin:6px 0;background:var(--soft)}
.confirm ul{margin:4px 0;padding-left:20px;max-height:12em;overflow:auto}
table.params td:first-child{white-space:nowrap}
@media (max-width:1100px){main{padding:12px 10px} th,td{padding:3px 5px} table{font-size:.85rem}}
"""

#: Inline script (the pages load nothing): follow the Airflow UI's colour mode and timezone
#: (same origin: its settings are in localStorage 'theme' and 'timezone'; else the system's),
#: open Airflow links in the top window, and bring a triggered run's notice up to date.
#:
#: Airflow 3 embeds the page in an iframe sandboxed with "allow-scripts allow-same-origin
#: allow-forms" and no "allow-top-navigation", so ``target=_top`` links do nothing there. The
#: frame is same-origin, so a click on such a link moves Airflow's own single-page router
#: (history.pushState and a popstate event on the top window, as its router listens to), or,
#: should that throw, clicks the same link from the top document.
_SCRIPT = r"""
(function(){
var d=document,w=window;
try{var m=localStorage.getItem('theme');if(m==='dark'||m==='light')d.documentElement.dataset.theme=m}catch(e){}
var tz;try{var v=localStorage.getItem('timezone');if(v){try{tz=JSON.parse(v)}catch(e){tz=v}}}catch(e){}
try{new Intl.DateTimeFormat('en',{timeZone:tz})}catch(e){tz=undefined}
tz=tz||Intl.DateTimeFormat().resolvedOptions().timeZone;
function parts(t){var o={timeZone:tz,hourCycle:'h23',year:'numeric',month:'2-digit',day:'2-digit',hour:'2-digit',
minute:'2-digit',second:'2-digit',timeZoneName:'short'},p={};
new Intl.DateTimeFormat('en-US',o).formatToParts(new Date(t)).forEach(function(x){p[x.type]=x.value});return p}
function show(el){var t=el.getAttribute('datetime')||el.getAttribute('data-t');if(!t)return;var p=parts(t),
f=el.getAttribute('data-f')||'full',day=p.year+'-'+p.month+'-'+p.day,hm=p.hour+':'+p.minute;
el.textContent=f==='hm'?hm:f==='md'?p.month+'-'+p.day:f==='ymd'?day:f==='mdhm'?p.month+'-'+p.day+' '+hm:
day+' '+hm+':'+p.second+' '+p.timeZoneName;if(el.tagName==='time')el.title=t.replace('+00:00',' UTC')}
function times(){d.querySelectorAll('time[datetime],text[data-t]').forEach(show);
d.querySelectorAll('.tzname').forEach(function(el){el.textContent=tz})}
d.addEventListener('DOMContentLoaded',times);
d.addEventListener('click',function(e){var a=e.target.closest&&e.target.closest('a[target=_top]');
if(!a||w.top===w||e.button!==0||e.ctrlKey||e.metaKey||e.shiftKey)return;e.preventDefault();
try{var h=w.top.history,s=h.state||{};h.pushState({usr:null,key:'lagassign',idx:(s.idx||0)+1},'',a.href);
w.top.dispatchEvent(new PopStateEvent('popstate',{state:h.state}))}catch(x){
try{var b=w.top.document.createElement('a');b.href=a.href;w.top.document.body.appendChild(b);b.click();b.remove()}
catch(y){w.location.href=a.href}}});
function poll(n){var u=n.getAttribute('data-status');fetch(u,{headers:{Accept:'application/json'}}).then(function(r){
return r.ok?r.json():null}).then(function(j){if(!j)return;var s=n.querySelector('.state');if(s)s.textContent=j.text;
if(j.done){n.className='notice '+(j.ok?'success':'failed');if(j.plan_href){var a=n.querySelector('.plan-link');
if(a){a.href=j.plan_href;a.textContent=j.plan_text;a.hidden=false}}}else setTimeout(function(){poll(n)},3000)})
.catch(function(){})}
d.addEventListener('DOMContentLoaded',function(){d.querySelectorAll('.notice[data-status]').forEach(poll)});
})();
"""


# --------------------------------------------------------------------------------------------
# Pure computations


# --------------------------------------------------------------------------------------------
# Formatting helpers: one number format, lag with its unit, times as <time> in UTC


def badge(outcome: Outcome) -> str:
    """The outcome as the badge every page shows (the recorded line as its tooltip)."""
    title = f' title="{esc(outcome.detail)}"' if outcome.detail and outcome.detail != outcome.label else ""
    return f'<span class="badge {esc(outcome.kind)}" data-outcome="{esc(outcome.kind)}"{title}>{esc(outcome.label)}</span>'


# --------------------------------------------------------------------------------------------
# SVG chart


# --------------------------------------------------------------------------------------------
# HTML pieces


def page(title: str, body: str) -> str:
    """A complete HTML document: inline CSS (light and dark, as Airflow's UI) and script,
    nothing loaded from elsewhere."""
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><script>{_SCRIPT}</script><style>{_CSS}</style></head>"
        f"<body><main>{body}</main></body></html>"
    )


def error_page(status: int, message: str, back: str = "plans") -> str:
    """A short error page (bad filter, unknown plan) with a link back to the list."""
    titles = {400: "Cannot show that", 403: "Not allowed", 404: "Not found", 409: "Not done"}
    heading = titles.get(status, "Something went wrong")
    return page(
        f"lagassign: {heading}",
        f'<p><a href="{esc(back)}">← all plans</a></p><h1>{esc(heading)}</h1><p class="err">{esc(message)}</p>',
    )


def paused_html(paused: Mapping[str, bool] | None, action: str = "actions/unpause") -> str:
    """A banner naming each lagassign DAG that is paused, what that stops, and a button that
    unpauses it (an Airflow API call as the logged-in user: Airflow decides whether they may)."""
    if not paused:
        return ""
    off = [dag for dag in DAG_ROLES if paused.get(dag)]
    if not off:
        return ""
    items = "".join(
        f'<li><a target="_top" href="/dags/{esc(quote(dag))}"><code>{esc(dag)}</code></a> is paused: '
        f"{esc(DAG_ROLES[dag])}. "
        f'<form class="action" method="post" action="{esc(action)}"><input type="hidden" name="dag_id" '
        f'value="{esc(dag)}"><button type="submit">unpause {esc(dag)}</button></form></li>'
        for dag in off
    )
    return f'<div class="banner paused"><strong>Paused in Airflow</strong><ul>{items}</ul></div>'


def notice_html(notice: Mapping[str, Any] | None) -> str:
    """A run an action just triggered: linked to Airflow, its state brought up to date by the
    page's script (``status``: this app's route for it), and its plan once it has one. Only
    values the app checked go in here (never text from the URL)."""
    if not notice:
        return ""
    run = f'<a target="_top" href="{esc(notice["href"])}">{esc(notice["dag_id"])} run {esc(notice["run_id"])}</a>'
    return (
        f'<div class="notice" data-status="{esc(notice["status"])}">Triggered {run}: '
        f'<span class="state">{esc(notice.get("text") or "queued")}</span> '
        '<a class="plan-link" hidden href="#"></a></div>'
    )


def _trigger(plan: Mapping[str, Any]) -> str:
    by = plan.get("triggered_by")
    return f"{plan.get('trigger')} by {by}" if by else str(plan.get("trigger"))


def _reason(group: Mapping[str, Any]) -> str:
    d = group.get("decision") or {}
    return str(d.get("reason") or group.get("error") or "")


def _lag_change(group: Mapping[str, Any]) -> str:
    """Max member lag now → under the chosen (or candidate) plan, from the gate's numbers."""
    d = group.get("decision") or {}
    before, after = d.get("current_max_lag"), d.get("chosen_max_lag")
    if before is None:
        return "-"
    if after is None or not (d.get("chosen") or d.get("candidate")):
        return fmt_int(before)
    return f"{fmt_int(before)} → {fmt_int(after)}" + ("" if d.get("go") else " (not applied)")


def lag_change_line(decision: Mapping[str, Any]) -> str | None:
    """'max lag 1,140 → 1,820 messages (60% worse)' for a confirmation; None when unknown."""
    before, after = decision.get("current_max_lag"), decision.get("chosen_max_lag")
    if before is None or after is None:
        return None
    if before:
        change = (after - before) / before
        how = (
            "no change" if abs(change) < 0.005 else f"{abs(change):.0%} {'worse' if change > 0 else 'better'}"
        )
    else:
        how = "no change" if after == before else "worse"
    return f"max lag {fmt_int(before)} → {fmt_int(after)} messages ({how})"


def catch_up_change_short(
    times: Mapping[tuple[int, str, str], Any], plan_id: int, group: Mapping[str, Any]
) -> str | None:
    """Max catch-up now → under the chosen (or candidate) plan, e.g. '2 h 10 min → 18 min',
    from ``AuditStore.max_catch_up``; None for a group planned without capacities."""
    name = str(group.get("group"))
    if (plan_id, name, "current") not in times:
        return None
    now = duration_text(times[(plan_id, name, "current")])
    d = group.get("decision") or {}
    strategy = str(d.get("chosen") or d.get("candidate") or "")
    if not strategy or (plan_id, name, strategy) not in times:
        return now
    return f"{now} → {duration_text(times[(plan_id, name, strategy)])}" + (
        "" if d.get("go") else " (not applied)"
    )


def catch_up_line(group: Mapping[str, Any]) -> str | None:
    """Max catch-up now → under the chosen (or candidate) plan, and the bound
    (``core.catchup.catch_up_change``); None for a group planned without capacities."""
    target = target_strategy(group)
    current = result_of(group, BASELINE) or {}
    tgt = (result_of(group, target) or {}).get("metrics") if target != BASELINE else None
    return catch_up_change(current.get("metrics") or {}, tgt, target, len(current.get("unassigned") or ()))


def airflow_run_href(plan: Mapping[str, Any], task: str | None = None, airflow: str = "") -> str | None:
    """The plan's DAG run in Airflow's UI (a task: its log), or None when not run by Airflow.
    A failover plan's run id carries ':group' after Airflow's own run id."""
    dag, run = plan.get("dag_id"), plan.get("run_id")
    if not dag or not run:
        return None
    group = (plan.get("parameters") or {}).get("group")
    if plan.get("trigger") == "failover" and group and str(run).endswith(f":{group}"):
        run = str(run)[: -len(group) - 1]  # one audit plan per group of the failover run
    href = f"{airflow}/dags/{quote(str(dag), safe='')}/runs/{quote(str(run), safe='')}"
    return f"{href}/tasks/{quote(task, safe='')}" if task else href


def failed_step(plan: Mapping[str, Any]) -> str | None:
    """The step a failed plan stopped at, read from its recorded error ("step snapshot failed: ...")."""
    found = re.match(r"step (\w+) failed", str(plan.get("error") or ""))
    return found.group(1) if found else None


def _cause_html(error: str, log_href: str | None = None) -> str:
    why = hint(error)
    out = f'<div class="cause"><p class="err">{esc(error)}</p>'
    if why:
        out += f"<p>what to do: {esc(why)}</p>"
    if log_href:
        out += f'<p><a target="_top" href="{esc(log_href)}">open the task log in Airflow</a></p>'
    return out + "</div>"


# -- parameters --------------------------------------------------------------------------------

_PARAM_LABELS = {
    "action": "action",
    "reviewed_plan": "reviewed plan",
    "group": "group",
    "version": "version",
    "groups": "groups (regular expression)",
    "groups_file": "groups file",
    "strategies": "strategies",
    "threshold": "imbalance threshold",
    "min_improvement": "minimum improvement",
    "max_moves": "max moves",
    "exact_budget": "exact budget",
    "max_catch_up_s": "max catch-up",
    "apply": "apply",
    "dry_run": "dry run",
    "force": "force",
    "auto_offset_reset": "auto.offset.reset",
    "plan_topic": "plans topic",
    "change": "change seen",
    "status_topic": "status topic",
    "session_timeout_ms": "session timeout",
}


def _param_defaults() -> dict[str, Any]:
    return {f.name: f.default for f in fields(PlanParams)}


def param_value(key: str, value: Any) -> str:
    """A parameter's value for people: on/off, lists joined, units, 'every' for none."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if value is None or value == "":
        return {
            "groups": "every group",
            "strategies": "every strategy",
            "max_moves": "no limit",
            "exact_budget": "off",
            "max_catch_up_s": "off",
            "groups_file": "none",
        }.get(key, "none")
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value)
    if key in ("exact_budget", "max_catch_up_s"):
        return f"{value} s"
    if key == "session_timeout_ms" and isinstance(value, int | float):
        return f"{value / 1000:g} s"
    if key == "min_improvement" and isinstance(value, int | float):
        return f"{value:g} ({value:.0%})"
    return str(value)


def params_table(parameters: Mapping[str, Any] | None) -> str:
    """The run's parameters as a key/value table; values equal to the default are marked."""
    if not parameters:
        return '<span class="muted">none recorded</span>'
    defaults = _param_defaults() if not parameters.get("action") else {}
    rows = []
    for key in sorted(
        parameters, key=lambda k: (list(_PARAM_LABELS).index(k) if k in _PARAM_LABELS else 99, k)
    ):
        value = parameters[key]
        same = key in defaults and (defaults[key] == value or (key == "groups" and value in (None, "", ".*")))
        mark = ' <span class="tag default">default</span>' if same else ""
        label = _PARAM_LABELS.get(key, key.replace("_", " "))
        rows.append(f"<tr><td>{esc(label)}</td><td>{esc(param_value(key, value))}{mark}</td></tr>")
    return f'<table class="params"><tbody>{"".join(rows)}</tbody></table>'


# -- the list ----------------------------------------------------------------------------------


def plans_list_html(
    plans: Iterable[Mapping[str, Any]],
    details: Mapping[int, Mapping[str, Any]],
    group: str | None = None,
    since: str | None = None,
    until: str | None = None,
    plan_href: str = "plans/",
    offset: int = 0,
    limit: int = 50,
    more: bool = False,
    catch_up: Mapping[tuple[int, str, str], Any] | None = None,
    paused: Mapping[str, bool] | None = None,
) -> str:
    """The list of plans, newest first, one row per group per plan: the plan (time, DAG run,
    trigger and who, on the plan's first row), the group, its outcome badge with the gate's
    reason, max lag before → after (and max catch-up time, for groups planned in time) and
    the strategy; the filter form on top and paging links below.

    ``details`` maps plan id to ``get_plan`` output (for per-group rows); a plan missing from
    it shows one row with its counts. ``catch_up``: ``AuditStore.max_catch_up`` of these plans.
    ``more``: a next page exists. ``paused``: DAG id -> paused, for the banner.
    """
    catch_up = catch_up or {}
    in_time = bool(catch_up)
    form = (
        '<form class="filters" method="get" action="plans">'
        f'<label>group<input name="group" value="{esc(group or "")}" placeholder="any"></label>'
        f'<label>since (YYYY-MM-DD)<input name="since" value="{esc(since or "")}" placeholder="2026-05-01" '
        'pattern="\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2})?)?" size="12"></label>'
        f'<label>until (YYYY-MM-DD)<input name="until" value="{esc(until or "")}" placeholder="2026-05-31" '
        'pattern="\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2})?)?" size="12"></label>'
        '<button type="submit">filter</button> <a href="plans">clear</a>'
        '<span class="muted">times in <span class="tzname">UTC</span></span></form>'
    )
    cols = 8 if in_time else 7
    rows = []
    for p in plans:
        pid = int(p["id"])
        d = details.get(pid)
        groups = (d or {}).get("groups") or []
        run = airflow_run_href(p)
        dag = (
            f'<a target="_top" href="{esc(run)}">{esc(p.get("dag_id"))}</a>' if run else esc(p.get("dag_id"))
        )
        span = max(1, len(groups))
        lead = (
            f'<td rowspan="{span}" class="id"><a href="{esc(plan_href)}{pid}">plan {pid}</a></td>'
            f'<td rowspan="{span}" class="when">{when(p.get("created_at"))}</td>'
            f'<td rowspan="{span}" class="name">{dag}<span class="why">{esc(_trigger(p))}</span></td>'
        )
        if not groups:
            plan_view = {**p, "groups": []}
            if p.get("status") == "failed":
                out = outcome_of(plan_view, {"group": "-"})
                cell = badge(out)
            elif p.get("status") == "running":
                cell = '<span class="badge running">running</span>'
            else:
                cell = f'<span class="muted">{esc(p.get("groups", 0))} groups</span>'
            rows.append(f'<tr class="plan-start">{lead}<td>-</td><td colspan="{cols - 4}">{cell}</td></tr>')
            continue
        plan_dict = d or p
        for i, g in enumerate(groups):
            name = g["group"]
            out = outcome_of(plan_dict, g)
            reason = _reason(g)
            times = (
                f'<td class="num catch-up">{esc(catch_up_change_short(catch_up, pid, g) or "-")}</td>'
                if in_time
                else ""
            )
            rows.append(
                f'<tr class="{"plan-start" if i == 0 else "more"}" data-plan="{pid}" data-group="{esc(name)}">'
                + (lead if i == 0 else "")
                + f'<td class="name"><a href="history?group={esc(quote(name))}">{esc(name)}</a></td>'
                f'<td class="outcome">{badge(out)}'
                + (f'<span class="why">{esc(reason)}</span>' if reason else "")
                + f"</td><td class=num>{esc(_lag_change(g))}</td>{times}"
                f"<td>{esc(target_strategy(g) if g.get('decision') else None)}</td></tr>"
            )
    table = (
        '<table class="plans"><thead><tr><th>plan</th><th>created</th><th>DAG run</th>'
        '<th>group</th><th>outcome</th><th class="num">max lag now → plan (messages)</th>'
        + ('<th class="num">max catch-up now → plan</th>' if in_time else "")
        + "<th>strategy</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
        if rows
        else '<p class="muted">no plans match</p>'
    )
    keep = {"group": group, "since": since, "until": until, "limit": limit if limit != 50 else None}

    def page_link(label: str, at: int) -> str:
        query = urlencode({k: v for k, v in {**keep, "offset": at or None}.items() if v})
        return f'<a class="page" href="{esc("plans" + ("?" + query if query else ""))}">{label}</a>'

    nav = []
    if offset > 0:
        nav.append(page_link("← newer", max(0, offset - limit)))
    if more:
        nav.append(page_link("older →", offset + limit))
    pages = f'<nav class="pages">{" ".join(nav)}</nav>' if nav else ""
    return page(
        "lagassign: rebalance plans", f"<h1>Rebalance plans</h1>{paused_html(paused)}{form}{table}{pages}"
    )


# -- one plan ----------------------------------------------------------------------------------


def metrics_table_html(group: Mapping[str, Any]) -> str:
    """Per strategy: max lag, ratio to the lower bound, imbalance, spreads, moves; chosen and
    best marked; refusals and unconsumed partitions said in words. Results recorded without
    metrics (a roll back: assignments only) are left out."""
    chosen, best = target_strategy(group), group.get("best")
    go = bool((group.get("decision") or {}).get("go"))
    bound = group.get("lower_bound_max_lag")
    in_time = timed(group)
    twin = kafka_choice(group.get("group_type"), group.get("assignor"))
    current = result_of(group, BASELINE)
    unconsumed_now = {(str(t), int(p)) for t, p in (current or {}).get("unassigned") or ()}
    rows = []
    for r in group.get("results") or ():
        name = r.get("strategy")
        if r.get("refused") is None and "max_lag" not in (r.get("metrics") or {}):
            continue  # recorded without lag (a roll back): its counts are in the members table
        tags = ""
        if twin is not None and name == twin[0]:  # broker's choice (consumer group), else Kafka's
            tags += (
                f'<span class="tag kafka" title="does what Kafka does for this group">{esc(twin[1])}</span>'
            )
        if name == chosen and name != BASELINE:
            tags += f'<span class="tag chosen">{"chosen" if go else "candidate"}</span>'
        if name == best:
            tags += '<span class="tag best">best</span>'
        if (r.get("metrics") or {}).get("optimal"):
            tags += (
                '<span class="tag optimal" title="no plan under the rules it keeps does better">'
                "optimal</span>"
            )
        swatch = f'<span class="swatch" style="background:{colour_of(str(name))}"></span>'
        if r.get("refused") is not None:
            rows.append(
                f'<tr class="refused"><td>{swatch}{esc(name)}{tags}</td>'
                f'<td colspan="{7 if in_time else 6}">refused: {esc(r.get("refused"))}</td></tr>'
            )
            continue
        m = r["metrics"]
        vs_bound = m.get("balanced_lower_bound_max_lag") or bound
        vs = f"{m['max_lag'] / vs_bound:.3f}×" if vs_bound and m.get("max_lag") is not None else "-"
        note = ""
        if r.get("unassigned"):
            note = f' <span class="err">(leaves {len(r["unassigned"])} unconsumed)</span>'
        if r.get("withheld"):
            note += f' <span class="muted">({len(r["withheld"])} withheld until revoked)</span>'
        cls = ' class="chosen"' if name == chosen and name != BASELINE else ""
        catch_up = (
            f"<td class=num>{esc(duration_text(m.get('max_catch_up_s')) if 'max_catch_up_s' in m else '-')}</td>"
            if in_time
            else ""
        )
        moves = fmt_int(m.get("moves"))
        taken = len(unconsumed_now & set(owners(r.get("assignment") or {}))) if name != BASELINE else 0
        if taken:
            moves += f" + {taken} taken over"
        rows.append(
            f"<tr{cls}><td>{swatch}{esc(name)}{tags}{note}</td><td class=num>{esc(fmt_int(m.get('max_lag')))}</td>"
            f"<td class=num>{esc(vs)}</td>{catch_up}<td class=num>{esc(ratio_text(m.get('imbalance')))}</td>"
            f"<td class=num>{esc(fmt_int(m.get('lag_spread')))}</td>"
            f"<td class=num>{esc(fmt_int(m.get('count_spread')))}</td>"
            f"<td class=num>{esc(moves)}</td></tr>"
        )
    if not rows:
        return ""
    return (
        '<table class="metrics"><thead><tr><th>strategy</th><th class="num">max lag (messages)</th>'
        '<th class="num">vs lower bound</th>'
        + ('<th class="num">max catch-up</th>' if in_time else "")
        + '<th class="num">imbalance</th><th class="num">lag spread (messages)</th>'
        '<th class="num">count spread</th><th class="num">moves</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _moves_rows(
    moves: list[Move],
    lags: Mapping[tuple[str, int], int] | None,
    times: Mapping[tuple[str, int], float] | None = None,
    gone: Sequence[str] = (),
) -> str:
    def lag(t: str, p: int) -> str:
        text = fmt_int((lags or {}).get((t, p)))
        seconds = (times or {}).get((t, p))
        return text if seconds is None else f"{text} ({duration_text(seconds)})"

    def source(a: str | None) -> str:
        if a is not None:
            return esc(a)
        if gone:
            return f'<span class="err">{esc(", ".join(gone))} (dead)</span>'
        return '<span class="muted">nobody (unconsumed)</span>'

    return "".join(
        f"<tr><td>{esc(t)}</td><td class=num>{esc(p)}</td>"
        f"<td class=num>{esc(lag(t, p))}</td><td>{source(a)}</td><td>{esc(b)}</td></tr>"
        for t, p, a, b in moves
    )


def moves_table_html(
    group: Mapping[str, Any],
    lags: Mapping[tuple[str, int], int] | None = None,
    times: Mapping[tuple[str, int], float] | None = None,
    gone: Sequence[str] = (),
    current_label: str = "current",
) -> str:
    """Moves from the current assignment to the chosen strategy, with each partition's lag
    (``lags``, from the plan's snapshot, when it can be read) and lag in seconds (``times``,
    when the snapshot knows it). Partitions nobody consumes now and the plan gives someone are
    counted apart from those that change consumer; ``gone``: the dead instances they were
    left by (a failover). A group the gate stopped moves nothing: its candidate's moves are
    shown folded, as what would have moved."""
    target = target_strategy(group)
    cur, tgt = result_of(group, BASELINE), result_of(group, target)
    if target is None or target == BASELINE or cur is None or tgt is None or "assignment" not in tgt:
        return '<p class="muted">no moves: nothing to move to</p>'
    moves = compute_moves(cur.get("assignment"), tgt.get("assignment"))
    go = bool((group.get("decision") or {}).get("go"))
    table = (
        '<table class="moves"><thead><tr><th>topic</th><th class="num">partition</th>'
        '<th class="num">lag (messages)</th><th>from</th>'
        f"<th>to</th></tr></thead><tbody>{_moves_rows(moves, lags, times, gone)}</tbody></table>"
    )
    if not go:
        return (
            '<p class="stop">Nothing moves: the gate stopped this plan.</p>'
            f"<details><summary>what {esc(target)} would move if published ({len(moves)} "
            f"partitions)</summary>{table if moves else ''}</details>"
        )
    taken = sum(1 for m in moves if m[2] is None)
    changed = len(moves) - taken
    counts = f"{changed} change consumer" + (
        f", {taken} unconsumed taken over" + (f" from {', '.join(gone)} (dead)" if gone else "")
        if taken
        else ""
    )
    head = f"<h3>Moves: {esc(current_label)} → {esc(target)} ({esc(counts)})</h3>"
    if not moves:
        return head + '<p class="muted">the same assignment: no partition moves</p>'
    return head + table


def members_table_html(group: Mapping[str, Any]) -> str:
    """Per member, under current and under the chosen (or candidate) plan: lag, catch-up time
    (when planned in time), partition count, and the partitions it ends with."""
    target = target_strategy(group)
    cur, tgt = result_of(group, BASELINE), result_of(group, target)
    if cur is None or tgt is None or target == BASELINE or "assignment" not in tgt:
        return ""
    cm, tm = cur.get("metrics") or {}, tgt.get("metrics") or {}
    members = sorted(set(tgt.get("assignment") or {}) | set(cur.get("assignment") or {}))
    in_time = timed(group)
    measured = "lag" in cm or "lag" in tm

    def catch_up(metrics: Mapping[str, Any], member: str) -> str:
        times = metrics.get("catch_up_s") or {}
        return duration_text(times[member]) if member in times else "-"

    def count(r: Mapping[str, Any], metrics: Mapping[str, Any], member: str) -> Any:
        known = (metrics.get("count") or {}).get(member)
        return known if known is not None else len((r.get("assignment") or {}).get(member) or ())

    rows = []
    for m in members:
        parts = sorted(tuple(tp) for tp in (tgt.get("assignment") or {}).get(m) or ())
        shown = ", ".join(f"{t}-{p}" for t, p in parts)
        times = f"<td class=num>{esc(catch_up(cm, m))} → {esc(catch_up(tm, m))}</td>" if in_time else ""
        lag = (
            f"<td class=num>{esc(fmt_int((cm.get('lag') or {}).get(m)))} → "
            f"{esc(fmt_int((tm.get('lag') or {}).get(m)))}</td>"
            if measured
            else ""
        )
        rows.append(
            f"<tr><td>{esc(m)}</td>{lag}{times}<td class=num>{esc(count(cur, cm, m))} → "
            f"{esc(count(tgt, tm, m))}</td><td><code>{esc(shown)}</code></td></tr>"
        )
    return (
        f"<h3>Members under {esc(target)}</h3>"
        '<table class="members"><thead><tr><th>member</th>'
        + ('<th class="num">lag now → plan (messages)</th>' if measured else "")
        + ('<th class="num">catch-up now → plan</th>' if in_time else "")
        + '<th class="num">partitions now → plan</th>'
        f"<th>partitions under the plan</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _publications_html(group: Mapping[str, Any]) -> str:
    pubs = group.get("publications") or []
    if not pubs:
        return ""
    items = []
    for pub in pubs:
        text = f"version {esc(pub.get('version'))} ({esc(pub.get('strategy', '-'))}): {esc(pub.get('state'))}"
        if pub.get("published_at"):
            text += f" at {when(pub['published_at'])}"
        if pub.get("forced"):
            text += " (forced)"
        if pub.get("error"):
            text += f": {esc(pub['error'])}"
        items.append(f"<li>{text}</li>")
    return f"<p>publications:</p><ul>{''.join(items)}</ul>"


def changes_since(group: Mapping[str, Any], previous: Mapping[str, Any] | None) -> list[str]:
    """What changed for a group since its previous plan: members, partitions, max lag now,
    the best strategy, the gate's verdict (values one of the two plans did not record are left
    out). Empty when there is no previous plan."""
    if previous is None:
        return []
    out = []
    for key, label in (("members", "members"), ("partitions", "partitions"), ("best", "best strategy")):
        was, now = previous.get(key), group.get(key)
        if was is not None and now is not None and was != now:
            out.append(f"{label} {was} → {now}")
    was_d, now_d = previous.get("decision") or {}, group.get("decision") or {}
    before, after = was_d.get("current_max_lag"), now_d.get("current_max_lag")
    if before is not None and after is not None and before != after:
        out.append(f"max lag now {fmt_int(before)} → {fmt_int(after)} messages")
    if bool(was_d.get("go")) != bool(now_d.get("go")) and was_d and now_d:
        out.append(f"gate {'go' if was_d.get('go') else 'stop'} → {'go' if now_d.get('go') else 'stop'}")
    return out or ["nothing that the gate looks at"]


def _confirmation(group: Mapping[str, Any], why: str) -> str:
    """What an override publishes: why there is no primary button, max lag before → after,
    and the partitions that would move."""
    d = group.get("decision") or {}
    target = target_strategy(group)
    cur, tgt = result_of(group, BASELINE), result_of(group, target)
    moves = compute_moves((cur or {}).get("assignment"), (tgt or {}).get("assignment")) if cur and tgt else []
    items = "".join(
        f"<li>{esc(t)}-{esc(p)}: {esc(a or 'nobody')} → {esc(b or 'nobody')}</li>" for t, p, a, b in moves
    )
    change = lag_change_line(d)
    return (
        f'<p class="stop">{esc(why)}</p>'
        + (f"<p>{esc(change)}</p>" if change else "")
        + f"<p>{len(moves)} partition{'s' if len(moves) != 1 else ''} would move:</p><ul>{items}</ul>"
    )


def actions_html(
    plan: Mapping[str, Any],
    group: Mapping[str, Any],
    guard: Guard,
    action_base: str = "../actions",
) -> str:
    """The buttons that trigger Airflow runs (authorised and recorded by Airflow): publish
    as ``guard`` allows (primary, an override behind a confirmation, or a line saying why
    not), re-plan the group now, its history."""
    name = str(group.get("group"))
    target = target_strategy(group)
    hidden = (
        f'<input type="hidden" name="plan_id" value="{esc(plan.get("id"))}">'
        f'<input type="hidden" name="group" value="{esc(name)}">'
    )
    dry = '<label><input type="checkbox" name="dry_run" value="true"> dry run</label>'
    out = []
    if guard.mode == PRIMARY:
        change = lag_change_line(group.get("decision") or {})
        out.append(
            f'<form class="action" method="post" action="{action_base}/publish">{hidden}'
            f'<button class="primary" type="submit">publish this plan ({esc(target)})</button> {dry}'
            + (f' <span class="muted">{esc(change)}</span>' if change else "")
            + "</form>"
        )
    elif guard.mode == OVERRIDE:
        out.append(
            f'<details class="override"><summary>publish anyway ({esc(target)})…</summary>'
            f'<form class="action confirm" method="post" action="{action_base}/publish">{hidden}'
            f'<input type="hidden" name="override" value="yes">{_confirmation(group, guard.why)}'
            '<label><input type="checkbox" name="confirm" value="yes" required> I have read this and '
            f"want to publish {esc(target)} against the gate</label><br>"
            f'<button class="danger" type="submit">publish anyway</button> {dry}</form></details>'
        )
    elif guard.why:
        out.append(f'<span class="muted not-publishable">{esc(guard.why)}</span> ')
    if not (plan.get("parameters") or {}).get("action"):
        replan = "primary" if guard.stale else ""
        out.append(
            f'<form class="action" method="post" action="{action_base}/replan">{hidden}'
            f'<button class="{replan}" type="submit">re-plan this group</button></form>'
        )
    history = "../history" if action_base.startswith("..") else "history"
    out.append(f'<a href="{history}?group={esc(quote(name))}">history of this group</a>')
    return f'<div class="actions">{"".join(out)}</div>'


def group_html(
    group: Mapping[str, Any],
    plan: Mapping[str, Any] | None = None,
    previous: tuple[int, Mapping[str, Any]] | None = None,
    lags: Mapping[tuple[str, int], int] | None = None,
    kind: str | None = None,
    times: Mapping[tuple[str, int], float] | None = None,
    guard: Guard | None = None,
) -> str:
    """One group of a plan (``kind``: assign or subscribe, from its snapshot, when known):
    its outcome badge, the gate's decision and reason, actions (``guard``: as decided by
    ``guard.publish_guard`` when the page renders), what changed since the previous plan,
    publications, chart (current, chosen, lower bound; every strategy folded), catch-up times
    and lag in seconds (``times``: per partition, from the snapshot) when known, metrics,
    members and moves."""
    name = group.get("group")
    d = group.get("decision")
    plan = plan or {}
    out = outcome_of(plan, group)
    html = [f'<section class="group" id="group-{esc(name)}"><h2>group {esc(name)} {badge(out)}</h2>']
    cluster = cluster_text(group.get("group_type"), group.get("assignor"))
    if cluster:
        html.append(f'<p class="cluster muted">{esc(cluster)}</p>')
    if d is None:
        html.append('<p class="muted">no gate decision recorded</p>')
    else:
        if (plan.get("parameters") or {}).get("action"):  # a review or roll back: what was asked
            html.append(f"<p>request: {esc(d.get('reason'))}</p>")
        else:
            verdict = '<span class="go">go</span>' if d.get("go") else '<span class="stop">stop</span>'
            html.append(f"<p>gate: {verdict}: {esc(d.get('reason'))}</p>")
    if out.detail and out.detail not in (out.label, (d or {}).get("reason")):
        html.append(f'<p class="outcome-detail">{badge(out)} {esc(out.detail)}</p>')
    if plan.get("id") is not None:
        html.append(actions_html(plan, group, guard or publish_guard(plan, group, kind)))
    if previous is not None:
        pid, prev = previous
        changed = "; ".join(changes_since(group, prev))
        html.append(f'<p class="changes">since <a href="{pid}">plan {pid}</a>: {esc(changed)}</p>')
    html.append(_publications_html(group))
    if group.get("error"):
        html.append(f"<p>not evaluated:</p>{_cause_html(str(group['error']))}</section>")
        return "".join(html)
    rollback = (plan.get("parameters") or {}).get("action") == "rollback"
    if group.get("members") is not None or group.get("partitions") is not None:
        facts = [f"{esc(group.get('members'))} members", f"{esc(group.get('partitions'))} partitions"]
        if group.get("lower_bound_max_lag") is not None:
            facts.append(f"lower bound on max lag {esc(lag_text(group.get('lower_bound_max_lag')))}")
        if group.get("best"):
            facts.append(f"best {esc(group.get('best'))}")
        html.append(f'<p class="muted">{", ".join(facts)}</p>')
    in_time = [x for x in (catch_up_line(group), lag_time_text(times)) if x]
    if in_time:
        html.append(f'<p class="catch-up">{esc("; ".join(in_time))}</p>')
    if chart_series(group):
        html.append(lag_chart_svg(group))
        html.append(
            f'<details class="every"><summary>every strategy</summary>{lag_chart_svg(group, every=True)}</details>'
        )
    html.append(metrics_table_html(group))
    html.append(members_table_html(group))
    gone = (
        dead_instances((plan.get("parameters") or {}).get("change"))
        if plan.get("trigger") == "failover"
        else []
    )
    label = "plan in force" if rollback else "current"
    html.append(moves_table_html(group, lags, times, gone, label))
    html.append("</section>")
    return "".join(html)


def plan_html(
    plan: Mapping[str, Any],
    list_href: str = "../plans",
    previous: Mapping[str, tuple[int, Mapping[str, Any]]] | None = None,
    lags: Mapping[str, Mapping[tuple[str, int], int]] | None = None,
    notice: Mapping[str, Any] | None = None,
    kinds: Mapping[str, str] | None = None,
    times: Mapping[str, Mapping[tuple[str, int], float]] | None = None,
    guards: Mapping[str, Guard] | None = None,
    paused: Mapping[str, bool] | None = None,
) -> str:
    """One plan: header (outcome per group, trigger and who, times, DAG run linked to Airflow,
    parameters as a table), the root cause of a failure with a link to the failed step's log,
    then every group (``previous``: group -> its previous plan; ``lags``: group -> per-partition
    lag; ``times``: group -> per-partition lag in seconds; ``guards``: group -> the publish
    action decided at render time; ``notice``: a run an action just triggered)."""
    run_href = airflow_run_href(plan)
    run_text = " / ".join(x for x in (plan.get("dag_id"), plan.get("run_id")) if x) or "-"
    groups = plan.get("groups") or []
    outcomes = " ".join(f"{esc(g['group'])} {badge(outcome_of(plan, g))}" for g in groups[:6])
    if len(groups) > 6:
        outcomes += f' <span class="muted">and {len(groups) - 6} more groups below</span>'
    status = str(plan.get("status") or "-")
    meta = [
        ("status", esc(status) + (f" · {outcomes}" if outcomes else "")),
        ("trigger", esc(_trigger(plan))),
        ("created", when(plan.get("created_at"))),
        ("finished", when(plan.get("finished_at"))),
        (
            "DAG run",
            f'<a target="_top" href="{esc(run_href)}">{esc(run_text)}</a>' if run_href else esc(run_text),
        ),
        ("snapshot taken", when(plan.get("snapshot_at"))),
    ]
    params = plan.get("parameters")
    reviewed = (params or {}).get("reviewed_plan")
    if reviewed:
        meta.append(("reviewed plan", f'<a href="{esc(reviewed)}">plan {esc(reviewed)}</a>'))
    rows = "".join(f"<dt>{esc(k)}</dt><dd>{v}</dd>" for k, v in meta)
    if params is not None:
        rows += f"<dt>parameters</dt><dd>{params_table(params)}</dd>"
    cause = ""
    if plan.get("error"):
        step = failed_step(plan)
        cause = "<h3>Why it failed</h3>" + _cause_html(
            str(plan["error"]), airflow_run_href(plan, step) if step else run_href
        )
    not_evaluated = [g for g in groups if g.get("error")]
    if groups and len(not_evaluated) == len(groups):
        cause += (
            f'<p class="stop">No group could be evaluated ({len(groups)}); first cause:</p>'
            + _cause_html(f"{groups[0]['group']}: {groups[0]['error']}")
        )
    body = (
        "".join(
            group_html(
                g,
                plan,
                (previous or {}).get(g["group"]),
                (lags or {}).get(g["group"]),
                (kinds or {}).get(g["group"]),
                (times or {}).get(g["group"]),
                (guards or {}).get(g["group"]),
            )
            for g in groups
        )
        or '<p class="muted">no groups recorded</p>'
    )
    return page(
        f"lagassign: plan {plan.get('id')}",
        f'<p><a href="{esc(list_href)}">← all plans</a></p>{notice_html(notice)}{paused_html(paused, "../actions/unpause")}'
        f'<h1>Plan {esc(plan.get("id"))}</h1><dl class="meta">{rows}</dl>{cause}{body}',
    )


# -- a group's history -------------------------------------------------------------------------


def rollback_html(
    group: str,
    version: Mapping[str, Any],
    in_force: Mapping[str, Any] | None,
    plan_id: int,
    action: str = "actions/rollback",
) -> str:
    """'roll back to vN' behind a confirmation that shows its diff against the version in force
    (the partitions that would change consumer)."""
    v = version.get("version")
    moves = compute_moves((in_force or {}).get("assignment"), version.get("assignment"))
    items = "".join(
        f"<li>{esc(t)}-{esc(p)}: {esc(a or 'nobody')} → {esc(b or 'nobody')}</li>" for t, p, a, b in moves
    )
    against = f"version {in_force.get('version')} in force" if in_force else "no version in force"
    diff = (
        f"<p>against {esc(against)}: {len(moves)} partition{'s' if len(moves) != 1 else ''} change consumer</p>"
        + (f"<ul>{items}</ul>" if items else "")
    )
    made = (
        f" ({version.get('strategy')}, published by plan {version.get('plan_id')})"
        if version.get("plan_id")
        else ""
    )
    return (
        f'<details class="rollback"><summary>roll back to version {esc(v)}{esc(made)}…</summary>'
        f'<form class="action confirm" method="post" action="{esc(action)}">'
        f'<input type="hidden" name="plan_id" value="{esc(plan_id)}"><input type="hidden" name="group" '
        f'value="{esc(group)}"><input type="hidden" name="version" value="{esc(v)}">{diff}'
        f'<label><input type="checkbox" name="confirm" value="yes" required> publish version {esc(v)}\'s '
        "assignment again as a new version</label><br>"
        f'<button class="danger" type="submit">roll back to version {esc(v)}</button> '
        '<label><input type="checkbox" name="dry_run" value="true"> dry run</label></form></details>'
    )


def history_html(
    group: str,
    rows: list[dict[str, Any]],
    status: list[dict[str, Any]] | None = None,
    paused: Mapping[str, bool] | None = None,
    details: Mapping[int, Mapping[str, Any]] | None = None,
) -> str:
    """A group across plans (newest first): per plan its outcome badge and the gate's reason,
    max lag and imbalance now → under the plan (and max catch-up, where the group was planned
    in time), the strategy; a lag-over-time chart; roll back (with its diff against the version
    in force) for versions published before; the group's live instances (``status``).
    ``details``: ``plan_details`` of the rows' plans, for their outcomes."""
    in_time = any("current_max_catch_up_s" in r for r in rows)
    body = [f'<p><a href="plans">← all plans</a></p>{paused_html(paused)}<h1>Group {esc(group)}</h1>']
    if status is not None:
        body.append(live_instances_html(status))
    else:
        body.append(
            '<h2>Live instances</h2><p class="muted">the status topic lagassign.status cannot be read '
            "from the Airflow API server (no reachable lagassign_kafka connection)</p>"
        )
    body.append("<h2>Max lag over time</h2>" + history_chart_svg(rows))
    published = [v for r in rows for v in r.get("publications") or () if v.get("state") == "published"]
    in_force = max(published, key=lambda v: v["version"], default=None)
    trs = []
    backs = [
        rollback_html(group, v, in_force, r["plan_id"])
        for r in rows
        for v in r.get("publications") or ()
        if v.get("state") == "published" and in_force is not None and v["version"] != in_force["version"]
    ]
    for r in rows:
        out = _row_outcome(group, r, (details or {}).get(r["plan_id"]))
        by = f" by {r['triggered_by']}" if r.get("triggered_by") else ""
        trigger = esc(f"{r.get('trigger')}{by}")
        if r.get("trigger") == "failover":  # an instance died or joined: stands out in the history
            trigger = f'<span class="stop">{trigger}</span>'
        reason = r.get("reason") or r.get("error")

        def pair(a: Any, b: Any, f: Any) -> str:
            return f"{f(a)} → {f(b)}" if b is not None else f(a)

        catch_up = (
            f'<td class="num catch-up">{esc(pair(r.get("current_max_catch_up_s"), r.get("plan_max_catch_up_s") if "plan_max_catch_up_s" in r else None, duration_text))}</td>'
            if in_time
            else ""
        )
        trs.append(
            f'<tr class="{esc(r.get("trigger"))}"><td><a href="plans/{esc(r["plan_id"])}#group-{esc(group)}">plan {esc(r["plan_id"])}</a></td>'
            f'<td class="when">{when(r.get("created_at"))}</td><td>{trigger}</td>'
            f'<td class="outcome">{badge(out)}'
            + (f'<span class="why">{esc(reason)}</span>' if reason else "")
            + "</td>"
            f"<td class=num>{esc(pair(r.get('current_max_lag'), r.get('plan_max_lag'), fmt_int))}</td>"
            f"<td class=num>{esc(pair(r.get('current_imbalance'), r.get('plan_imbalance'), ratio_text))}</td>"
            f"{catch_up}<td>{esc(r.get('strategy'))}</td></tr>"
        )
    body.append(
        "<h2>Plans</h2>"
        + (
            '<table class="history"><thead><tr><th>plan</th><th>created</th><th>trigger</th><th>outcome</th>'
            '<th class="num">max lag now → plan (messages)</th><th class="num">imbalance now → plan</th>'
            + ('<th class="num">max catch-up now → plan</th>' if in_time else "")
            + f"<th>strategy</th></tr></thead><tbody>{''.join(trs)}</tbody></table>"
            if trs
            else '<p class="muted">no plan has looked at this group</p>'
        )
    )
    if backs:
        against = f"version {in_force['version']} is in force" if in_force else ""
        body.append(
            f'<h2>Roll back</h2><p class="muted">{esc(against)}; each version below can be published '
            f"again as a new version (its diff against the version in force first)</p>{''.join(backs)}"
        )
    return page(f"lagassign: group {group}", "".join(body))


def _row_outcome(group: str, row: Mapping[str, Any], plan: Mapping[str, Any] | None) -> Outcome:
    """A history row's outcome: from its plan's details when given, else from the row itself."""
    found = next((g for g in (plan or {}).get("groups") or () if g.get("group") == group), None)
    if plan is not None and found is not None:
        return outcome_of(plan, found)
    decision = None if row.get("go") is None else {"go": row["go"], "reason": row.get("reason")}
    bare = {
        "group": group,
        "error": row.get("error"),
        "decision": decision,
        "publications": row.get("publications"),
    }
    return outcome_of({"id": row.get("plan_id"), "status": row.get("status")}, bare)


def live_instances_html(instances: list[dict[str, Any]]) -> str:
    """The group's instances as their status records say (``liveness`` view): alive or dead,
    plan version, lag, rate, last seen."""
    if not instances:
        return '<h2>Live instances</h2><p class="muted">no instance announces itself on lagassign.status</p>'

    def seen(i: Mapping[str, Any]) -> str:
        value = i.get("last_seen")
        if isinstance(value, datetime):
            return when(value)
        return esc(value)

    rows = "".join(
        f"<tr><td>{esc(i.get('instance'))}</td><td>{'<span class=go>alive</span>' if i.get('alive') else '<span class=err>dead</span>'}</td>"
        f"<td class=num>{esc(i.get('version'))}</td><td class=num>{esc(fmt_int(i.get('lag')))}</td>"
        f"<td class=num>{esc(fmt_rate(i.get('rate')))}</td><td class=when>{seen(i)}</td><td>{esc(i.get('host'))}</td></tr>"
        for i in instances
    )
    return (
        '<h2>Live instances</h2><table class="instances"><thead><tr><th>instance</th><th>state</th>'
        '<th class="num">plan version</th><th class="num">lag (messages)</th><th class="num">rate (messages/s)</th>'
        f"<th>last seen</th><th>host</th></tr></thead><tbody>{rows}</tbody></table>"
    )


def json_ready(value: Any) -> Any:
    """Plan dicts with datetimes as ISO strings (for the ``.json`` routes)."""
    if isinstance(value, Mapping):
        return {str(k): json_ready(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_ready(v) for v in value]
    if isinstance(value, datetime | date):
        return value.isoformat()
    return value
