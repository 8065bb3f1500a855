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

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import fields
from datetime import UTC, date, datetime, timedelta
from html import escape
from typing import Any
from urllib.parse import quote, urlencode

from ..core.catchup import catch_up_change, duration_text
from ..core.explain import hint
from ..core.inflow import lag_time_text
from ..core.outcome import Outcome, outcome_of
from ..core.strategies import cluster_text, kafka_choice
from ..pipeline.params import PlanParams
from .guard import OVERRIDE, PRIMARY, Guard, publish_guard

BASELINE = "current"

# (topic, partition, from member or None, to member or None)
Move = tuple[str, int, str | None, str | None]

#: One fixed colour per strategy, wherever it is drawn (Okabe-Ito and Tableau hues, told apart
#: also with colour-blindness); the chosen plan is marked by its label and outline, not a colour.
STRATEGY_COLOURS: dict[str, str] = {
    "current": "#7f7f7f",
    "lag-optimal": "#e69f00",
    "lag-aware": "#0072b2",
    "lag": "#009e73",
    "range": "#cc79a7",
    "roundrobin": "#56b4e9",
    "sticky": "#d55e00",
    "cooperative-sticky": "#8c564b",
    "constrained-sticky": "#9467bd",
    "fair": "#bcbd22",
    "drain-optimal": "#17becf",
    "uniform": "#393b79",
}
_SPARE_COLOURS = ("#1f77b4", "#2ca02c", "#ff7f0e", "#637939")

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


def compute_moves(current: Mapping[str, Any] | None, target: Mapping[str, Any] | None) -> list[Move]:
    """Partitions whose consumer differs between two assignments (``{member: [[topic, p], ...]}``).

    ``from`` is None for a partition nobody consumes now, ``to`` None for one the target leaves
    out. Sorted by topic, then partition.
    """
    before, after = _owners(current or {}), _owners(target or {})
    moves = [
        (t, p, before.get((t, p)), after.get((t, p)))
        for (t, p) in set(before) | set(after)
        if before.get((t, p)) != after.get((t, p))
    ]
    return sorted(moves, key=lambda m: (m[0], m[1]))


def _owners(assignment: Mapping[str, Any]) -> dict[tuple[str, int], str]:
    return {(str(tp[0]), int(tp[1])): str(member) for member, tps in assignment.items() for tp in tps or ()}


def target_strategy(group: Mapping[str, Any]) -> str | None:
    """The strategy a group's moves are shown for: the gate's choice, else its candidate, else the best."""
    decision = group.get("decision") or {}
    return decision.get("chosen") or decision.get("candidate") or group.get("best")


def _result(group: Mapping[str, Any], strategy: str | None) -> Mapping[str, Any] | None:
    return next((r for r in group.get("results") or () if r.get("strategy") == strategy), None)


def chart_series(group: Mapping[str, Any], every: bool = False) -> list[tuple[str, dict[str, int]]]:
    """(strategy, lag per member) to draw: ``current`` and the chosen (or candidate) plan; with
    ``every``, then every other measured strategy in evaluation order. Refused strategies have
    no lag and are left out."""
    measured = [
        r for r in group.get("results") or () if isinstance((r.get("metrics") or {}).get("lag"), Mapping)
    ]
    first = [BASELINE, target_strategy(group)]
    ordered = [r for name in dict.fromkeys(first) for r in measured if r["strategy"] == name]
    if every:
        ordered += [r for r in measured if r not in ordered]
    return [
        (str(r["strategy"]), {str(k): int(v) for k, v in (r["metrics"].get("lag") or {}).items()})
        for r in ordered
    ]


def dead_instances(change: str | None) -> list[str]:
    """The instances a failover's recorded change says died ("w1 silent for 31 s; w3 joined")."""
    return [
        part.split()[0]
        for part in str(change or "").split(";")
        if part.strip() and not part.strip().endswith(" joined")
    ]


# --------------------------------------------------------------------------------------------
# Formatting helpers: one number format, lag with its unit, times as <time> in UTC


def _e(value: Any) -> str:
    return escape("-" if value is None else str(value), quote=True)


def fmt_int(value: Any) -> str:
    """The one number format of the pages: 1,120 (and '-' for unknown)."""
    return "-" if value is None else f"{round(value):,}"


_int = fmt_int


def fmt_rate(value: Any) -> str:
    """A rate in the same format, with one decimal where it has one: 1,120 or 120.5."""
    if value is None:
        return "-"
    return fmt_int(value) if float(value).is_integer() else f"{float(value):,.1f}"


def lag_text(value: Any) -> str:
    """Lag with its unit: '1,120 messages' ('-' for unknown)."""
    return "-" if value is None else f"{fmt_int(value)} messages"


def _ratio(value: Any) -> str:
    return "-" if value is None else f"{float(value):.3f}"


def _iso(value: datetime) -> str:
    return (
        value.astimezone(UTC).isoformat(timespec="seconds") if value.tzinfo else value.isoformat() + "+00:00"
    )


def when(value: datetime | None, fmt: str = "full") -> str:
    """A time as ``<time>``: written in UTC, shown by the page's script in the Airflow UI's zone."""
    if not isinstance(value, datetime):
        return "-"
    utc = value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)
    return f'<time datetime="{_iso(utc)}" data-f="{fmt}">{utc.strftime("%Y-%m-%d %H:%M:%S")} UTC</time>'


def _time(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S") if isinstance(value, datetime) else "-"


def _nice_step(top: float, ticks: int = 5) -> float:
    raw = top / ticks
    power = 10 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)


def colour_of(strategy: str) -> str:
    """The strategy's fixed colour (an unknown name gets a stable spare one)."""
    if strategy in STRATEGY_COLOURS:
        return STRATEGY_COLOURS[strategy]
    return _SPARE_COLOURS[sum(strategy.encode()) % len(_SPARE_COLOURS)]


def badge(outcome: Outcome) -> str:
    """The outcome as the badge every page shows (the recorded line as its tooltip)."""
    title = f' title="{_e(outcome.detail)}"' if outcome.detail and outcome.detail != outcome.label else ""
    return f'<span class="badge {_e(outcome.kind)}" data-outcome="{_e(outcome.kind)}"{title}>{_e(outcome.label)}</span>'


def _axis_pad(labels: Iterable[str]) -> int:
    return 26 + 7 * max((len(x) for x in labels), default=1)


# --------------------------------------------------------------------------------------------
# SVG chart


def lag_chart_svg(group: Mapping[str, Any], every: bool = False) -> str:
    """Grouped bars: per consumer, its lag under ``current`` and the chosen (or candidate) plan
    (``every``: and every other strategy), each strategy in its fixed colour, the chosen one
    outlined, with a y axis, a dashed line at the lower bound on max lag and a legend."""
    series = chart_series(group, every)
    if not series:
        return '<p class="muted">no measured assignment to chart</p>'
    members = sorted({m for _, lags in series for m in lags})
    if not members:
        return '<p class="muted">no consumer to chart</p>'
    chosen = target_strategy(group)
    bound = group.get("lower_bound_max_lag")
    top = max([0, *(v for _, lags in series for v in lags.values()), *([bound] if bound else [])])
    step = _nice_step(top) if top > 0 else 1
    y_max = step * max(1, math.ceil(top / step))
    ticks = round(y_max / step)
    tick_labels = [fmt_int(step * i) for i in range(ticks + 1)]

    bar, gap, pad_r, pad_t, plot_h = 9, 22, 16, 12, 240
    pad_l = _axis_pad(tick_labels)
    width = max(720, pad_l + pad_r + len(members) * (len(series) * bar + gap))
    group_w = (width - pad_l - pad_r) / len(members)
    bar = max(bar, min(28 if not every else 18, int((group_w - gap) / len(series))))
    legend = [(name, colour_of(name)) for name, _ in series] + ([("lower bound", "")] if bound else [])
    legend_cols = max(1, (width - pad_l - pad_r) // 230)
    legend_h = 20 * math.ceil(len(legend) / legend_cols) + 8
    height = pad_t + plot_h + 44 + legend_h
    go = bool((group.get("decision") or {}).get("go"))

    def y(v: float) -> float:
        return pad_t + plot_h - plot_h * v / y_max

    kind = "every strategy" if every else "current, chosen and lower bound"
    title = f"lag per consumer in messages, group {group.get('group')} ({kind})"
    out = [
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{_e(title)}">',
        f"<title>{_e(title)}</title>",
    ]
    for i, label in enumerate(tick_labels):
        v = step * i
        out.append(
            f'<line class="grid" x1="{pad_l}" x2="{width - pad_r}" y1="{y(v):.1f}" y2="{y(v):.1f}" '
            'stroke="#eaeef2"/>'
        )
        out.append(
            f'<text x="{pad_l - 6}" y="{y(v) + 4:.1f}" font-size="11" text-anchor="end">{_e(label)}</text>'
        )
    mid = f"{pad_t + plot_h / 2:.0f}"
    out.append(
        f'<text x="12" y="{mid}" font-size="11" transform="rotate(-90 12 {mid})" '
        'text-anchor="middle">lag (messages)</text>'
    )
    for mi, member in enumerate(members):
        x0 = pad_l + mi * group_w + (group_w - len(series) * bar) / 2
        for si, (name, lags) in enumerate(series):
            v = lags.get(member, 0)
            x = x0 + si * bar
            outline = (
                ' stroke="currentColor" stroke-width="1.5"' if name == chosen and name != BASELINE else ""
            )
            out.append(
                f'<rect data-strategy="{_e(name)}" x="{x:.1f}" y="{y(v):.1f}" width="{bar - 1}" '
                f'height="{y(0) - y(v):.1f}" fill="{colour_of(name)}"{outline}><title>{_e(member)} under '
                f"{_e(name)}: {_e(lag_text(v))}</title></rect>"
            )
        label_x = x0 + len(series) * bar / 2
        out.append(
            f'<text x="{label_x:.1f}" y="{pad_t + plot_h + 16}" font-size="11" text-anchor="middle">'
            f"{_e(member)}</text>"
        )
    out.append(
        f'<line class="axis" x1="{pad_l}" x2="{width - pad_r}" y1="{y(0):.1f}" y2="{y(0):.1f}" stroke="#57606a"/>'
    )
    if bound:
        out.append(
            f'<line class="bound" x1="{pad_l}" x2="{width - pad_r}" y1="{y(bound):.1f}" y2="{y(bound):.1f}" '
            f'stroke="#1f2328" stroke-dasharray="5 4"><title>lower bound on max lag: '
            f"{_e(lag_text(bound))}</title></line>"
        )
        out.append(
            f'<text x="{width - pad_r - 2}" y="{y(bound) - 4:.1f}" font-size="10" text-anchor="end">'
            f"lower bound {_e(fmt_int(bound))}</text>"
        )
    ly = pad_t + plot_h + 34
    col_w = (width - pad_l - pad_r) / legend_cols
    for si, (name, colour) in enumerate(legend):
        lx = pad_l + (si % legend_cols) * col_w
        yy = ly + 20 * (si // legend_cols)
        mark = (
            (" (chosen)" if go else " (candidate, not applied)")
            if name == chosen and name != BASELINE
            else ""
        )
        if colour:
            out.append(f'<rect x="{lx:.1f}" y="{yy}" width="12" height="12" fill="{colour}"/>')
        else:
            out.append(
                f'<line class="bound" x1="{lx:.1f}" x2="{lx + 12:.1f}" y1="{yy + 6}" y2="{yy + 6}" '
                'stroke="#1f2328" stroke-dasharray="4 2"/>'
            )
        out.append(f'<text x="{lx + 17:.1f}" y="{yy + 10}" font-size="12">{_e(name + mark)}</text>')
    out.append("</svg>")
    return "".join(out)


# --------------------------------------------------------------------------------------------
# HTML pieces


def page(title: str, body: str) -> str:
    """A complete HTML document: inline CSS (light and dark, as Airflow's UI) and script,
    nothing loaded from elsewhere."""
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><script>{_SCRIPT}</script><style>{_CSS}</style></head>"
        f"<body><main>{body}</main></body></html>"
    )


def error_page(status: int, message: str, back: str = "plans") -> str:
    """A short error page (bad filter, unknown plan) with a link back to the list."""
    titles = {400: "Cannot show that", 403: "Not allowed", 404: "Not found", 409: "Not done"}
    heading = titles.get(status, "Something went wrong")
    return page(
        f"lagassign: {heading}",
        f'<p><a href="{_e(back)}">← all plans</a></p><h1>{_e(heading)}</h1><p class="err">{_e(message)}</p>',
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
        f'<li><a target="_top" href="/dags/{_e(quote(dag))}"><code>{_e(dag)}</code></a> is paused: '
        f"{_e(DAG_ROLES[dag])}. "
        f'<form class="action" method="post" action="{_e(action)}"><input type="hidden" name="dag_id" '
        f'value="{_e(dag)}"><button type="submit">unpause {_e(dag)}</button></form></li>'
        for dag in off
    )
    return f'<div class="banner paused"><strong>Paused in Airflow</strong><ul>{items}</ul></div>'


def notice_html(notice: Mapping[str, Any] | None) -> str:
    """A run an action just triggered: linked to Airflow, its state brought up to date by the
    page's script (``status``: this app's route for it), and its plan once it has one. Only
    values the app checked go in here (never text from the URL)."""
    if not notice:
        return ""
    run = (
        f'<a target="_top" href="{_e(notice["href"])}">{_e(notice["dag_id"])} run {_e(notice["run_id"])}</a>'
    )
    return (
        f'<div class="notice" data-status="{_e(notice["status"])}">Triggered {run}: '
        f'<span class="state">{_e(notice.get("text") or "queued")}</span> '
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


def timed(group: Mapping[str, Any]) -> bool:
    """Whether the group was planned in time (its members stated capacities): the current
    assignment's metrics carry catch-up times."""
    cur = _result(group, BASELINE)
    return bool(cur) and "max_catch_up_s" in ((cur or {}).get("metrics") or {})


def catch_up_line(group: Mapping[str, Any]) -> str | None:
    """Max catch-up now → under the chosen (or candidate) plan, and the bound
    (``core.catchup.catch_up_change``); None for a group planned without capacities."""
    target = target_strategy(group)
    current = _result(group, BASELINE) or {}
    tgt = (_result(group, target) or {}).get("metrics") if target != BASELINE else None
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
    out = f'<div class="cause"><p class="err">{_e(error)}</p>'
    if why:
        out += f"<p>what to do: {_e(why)}</p>"
    if log_href:
        out += f'<p><a target="_top" href="{_e(log_href)}">open the task log in Airflow</a></p>'
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
        rows.append(f"<tr><td>{_e(label)}</td><td>{_e(param_value(key, value))}{mark}</td></tr>")
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
        f'<label>group<input name="group" value="{_e(group or "")}" placeholder="any"></label>'
        f'<label>since (YYYY-MM-DD)<input name="since" value="{_e(since or "")}" placeholder="2026-05-01" '
        'pattern="\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2})?)?" size="12"></label>'
        f'<label>until (YYYY-MM-DD)<input name="until" value="{_e(until or "")}" placeholder="2026-05-31" '
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
        dag = f'<a target="_top" href="{_e(run)}">{_e(p.get("dag_id"))}</a>' if run else _e(p.get("dag_id"))
        span = max(1, len(groups))
        lead = (
            f'<td rowspan="{span}" class="id"><a href="{_e(plan_href)}{pid}">plan {pid}</a></td>'
            f'<td rowspan="{span}" class="when">{when(p.get("created_at"))}</td>'
            f'<td rowspan="{span}" class="name">{dag}<span class="why">{_e(_trigger(p))}</span></td>'
        )
        if not groups:
            plan_view = {**p, "groups": []}
            if p.get("status") == "failed":
                out = outcome_of(plan_view, {"group": "-"})
                cell = badge(out)
            elif p.get("status") == "running":
                cell = '<span class="badge running">running</span>'
            else:
                cell = f'<span class="muted">{_e(p.get("groups", 0))} groups</span>'
            rows.append(f'<tr class="plan-start">{lead}<td>-</td><td colspan="{cols - 4}">{cell}</td></tr>')
            continue
        plan_dict = d or p
        for i, g in enumerate(groups):
            name = g["group"]
            out = outcome_of(plan_dict, g)
            reason = _reason(g)
            times = (
                f'<td class="num catch-up">{_e(catch_up_change_short(catch_up, pid, g) or "-")}</td>'
                if in_time
                else ""
            )
            rows.append(
                f'<tr class="{"plan-start" if i == 0 else "more"}" data-plan="{pid}" data-group="{_e(name)}">'
                + (lead if i == 0 else "")
                + f'<td class="name"><a href="history?group={_e(quote(name))}">{_e(name)}</a></td>'
                f'<td class="outcome">{badge(out)}'
                + (f'<span class="why">{_e(reason)}</span>' if reason else "")
                + f"</td><td class=num>{_e(_lag_change(g))}</td>{times}"
                f"<td>{_e(target_strategy(g) if g.get('decision') else None)}</td></tr>"
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
        return f'<a class="page" href="{_e("plans" + ("?" + query if query else ""))}">{label}</a>'

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
    current = _result(group, BASELINE)
    unconsumed_now = {(str(t), int(p)) for t, p in (current or {}).get("unassigned") or ()}
    rows = []
    for r in group.get("results") or ():
        name = r.get("strategy")
        if r.get("refused") is None and "max_lag" not in (r.get("metrics") or {}):
            continue  # recorded without lag (a roll back): its counts are in the members table
        tags = ""
        if twin is not None and name == twin[0]:  # broker's choice (consumer group), else Kafka's
            tags += (
                f'<span class="tag kafka" title="does what Kafka does for this group">{_e(twin[1])}</span>'
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
                f'<tr class="refused"><td>{swatch}{_e(name)}{tags}</td>'
                f'<td colspan="{7 if in_time else 6}">refused: {_e(r.get("refused"))}</td></tr>'
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
            f"<td class=num>{_e(duration_text(m.get('max_catch_up_s')) if 'max_catch_up_s' in m else '-')}</td>"
            if in_time
            else ""
        )
        moves = fmt_int(m.get("moves"))
        taken = len(unconsumed_now & set(_owners(r.get("assignment") or {}))) if name != BASELINE else 0
        if taken:
            moves += f" + {taken} taken over"
        rows.append(
            f"<tr{cls}><td>{swatch}{_e(name)}{tags}{note}</td><td class=num>{_e(fmt_int(m.get('max_lag')))}</td>"
            f"<td class=num>{_e(vs)}</td>{catch_up}<td class=num>{_e(_ratio(m.get('imbalance')))}</td>"
            f"<td class=num>{_e(fmt_int(m.get('lag_spread')))}</td>"
            f"<td class=num>{_e(fmt_int(m.get('count_spread')))}</td>"
            f"<td class=num>{_e(moves)}</td></tr>"
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
            return _e(a)
        if gone:
            return f'<span class="err">{_e(", ".join(gone))} (dead)</span>'
        return '<span class="muted">nobody (unconsumed)</span>'

    return "".join(
        f"<tr><td>{_e(t)}</td><td class=num>{_e(p)}</td>"
        f"<td class=num>{_e(lag(t, p))}</td><td>{source(a)}</td><td>{_e(b)}</td></tr>"
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
    cur, tgt = _result(group, BASELINE), _result(group, target)
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
            f"<details><summary>what {_e(target)} would move if published ({len(moves)} "
            f"partitions)</summary>{table if moves else ''}</details>"
        )
    taken = sum(1 for m in moves if m[2] is None)
    changed = len(moves) - taken
    counts = f"{changed} change consumer" + (
        f", {taken} unconsumed taken over" + (f" from {', '.join(gone)} (dead)" if gone else "")
        if taken
        else ""
    )
    head = f"<h3>Moves: {_e(current_label)} → {_e(target)} ({_e(counts)})</h3>"
    if not moves:
        return head + '<p class="muted">the same assignment: no partition moves</p>'
    return head + table


def members_table_html(group: Mapping[str, Any]) -> str:
    """Per member, under current and under the chosen (or candidate) plan: lag, catch-up time
    (when planned in time), partition count, and the partitions it ends with."""
    target = target_strategy(group)
    cur, tgt = _result(group, BASELINE), _result(group, target)
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
        times = f"<td class=num>{_e(catch_up(cm, m))} → {_e(catch_up(tm, m))}</td>" if in_time else ""
        lag = (
            f"<td class=num>{_e(fmt_int((cm.get('lag') or {}).get(m)))} → "
            f"{_e(fmt_int((tm.get('lag') or {}).get(m)))}</td>"
            if measured
            else ""
        )
        rows.append(
            f"<tr><td>{_e(m)}</td>{lag}{times}<td class=num>{_e(count(cur, cm, m))} → "
            f"{_e(count(tgt, tm, m))}</td><td><code>{_e(shown)}</code></td></tr>"
        )
    return (
        f"<h3>Members under {_e(target)}</h3>"
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
        text = f"version {_e(pub.get('version'))} ({_e(pub.get('strategy', '-'))}): {_e(pub.get('state'))}"
        if pub.get("published_at"):
            text += f" at {when(pub['published_at'])}"
        if pub.get("forced"):
            text += " (forced)"
        if pub.get("error"):
            text += f": {_e(pub['error'])}"
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
    cur, tgt = _result(group, BASELINE), _result(group, target)
    moves = compute_moves((cur or {}).get("assignment"), (tgt or {}).get("assignment")) if cur and tgt else []
    items = "".join(
        f"<li>{_e(t)}-{_e(p)}: {_e(a or 'nobody')} → {_e(b or 'nobody')}</li>" for t, p, a, b in moves
    )
    change = lag_change_line(d)
    return (
        f'<p class="stop">{_e(why)}</p>'
        + (f"<p>{_e(change)}</p>" if change else "")
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
        f'<input type="hidden" name="plan_id" value="{_e(plan.get("id"))}">'
        f'<input type="hidden" name="group" value="{_e(name)}">'
    )
    dry = '<label><input type="checkbox" name="dry_run" value="true"> dry run</label>'
    out = []
    if guard.mode == PRIMARY:
        change = lag_change_line(group.get("decision") or {})
        out.append(
            f'<form class="action" method="post" action="{action_base}/publish">{hidden}'
            f'<button class="primary" type="submit">publish this plan ({_e(target)})</button> {dry}'
            + (f' <span class="muted">{_e(change)}</span>' if change else "")
            + "</form>"
        )
    elif guard.mode == OVERRIDE:
        out.append(
            f'<details class="override"><summary>publish anyway ({_e(target)})…</summary>'
            f'<form class="action confirm" method="post" action="{action_base}/publish">{hidden}'
            f'<input type="hidden" name="override" value="yes">{_confirmation(group, guard.why)}'
            '<label><input type="checkbox" name="confirm" value="yes" required> I have read this and '
            f"want to publish {_e(target)} against the gate</label><br>"
            f'<button class="danger" type="submit">publish anyway</button> {dry}</form></details>'
        )
    elif guard.why:
        out.append(f'<span class="muted not-publishable">{_e(guard.why)}</span> ')
    if not (plan.get("parameters") or {}).get("action"):
        replan = "primary" if guard.stale else ""
        out.append(
            f'<form class="action" method="post" action="{action_base}/replan">{hidden}'
            f'<button class="{replan}" type="submit">re-plan this group</button></form>'
        )
    history = "../history" if action_base.startswith("..") else "history"
    out.append(f'<a href="{history}?group={_e(quote(name))}">history of this group</a>')
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
    html = [f'<section class="group" id="group-{_e(name)}"><h2>group {_e(name)} {badge(out)}</h2>']
    cluster = cluster_text(group.get("group_type"), group.get("assignor"))
    if cluster:
        html.append(f'<p class="cluster muted">{_e(cluster)}</p>')
    if d is None:
        html.append('<p class="muted">no gate decision recorded</p>')
    else:
        if (plan.get("parameters") or {}).get("action"):  # a review or roll back: what was asked
            html.append(f"<p>request: {_e(d.get('reason'))}</p>")
        else:
            verdict = '<span class="go">go</span>' if d.get("go") else '<span class="stop">stop</span>'
            html.append(f"<p>gate: {verdict}: {_e(d.get('reason'))}</p>")
    if out.detail and out.detail not in (out.label, (d or {}).get("reason")):
        html.append(f'<p class="outcome-detail">{badge(out)} {_e(out.detail)}</p>')
    if plan.get("id") is not None:
        html.append(actions_html(plan, group, guard or publish_guard(plan, group, kind)))
    if previous is not None:
        pid, prev = previous
        changed = "; ".join(changes_since(group, prev))
        html.append(f'<p class="changes">since <a href="{pid}">plan {pid}</a>: {_e(changed)}</p>')
    html.append(_publications_html(group))
    if group.get("error"):
        html.append(f"<p>not evaluated:</p>{_cause_html(str(group['error']))}</section>")
        return "".join(html)
    rollback = (plan.get("parameters") or {}).get("action") == "rollback"
    if group.get("members") is not None or group.get("partitions") is not None:
        facts = [f"{_e(group.get('members'))} members", f"{_e(group.get('partitions'))} partitions"]
        if group.get("lower_bound_max_lag") is not None:
            facts.append(f"lower bound on max lag {_e(lag_text(group.get('lower_bound_max_lag')))}")
        if group.get("best"):
            facts.append(f"best {_e(group.get('best'))}")
        html.append(f'<p class="muted">{", ".join(facts)}</p>')
    in_time = [x for x in (catch_up_line(group), lag_time_text(times)) if x]
    if in_time:
        html.append(f'<p class="catch-up">{_e("; ".join(in_time))}</p>')
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
    outcomes = " ".join(f"{_e(g['group'])} {badge(outcome_of(plan, g))}" for g in groups[:6])
    if len(groups) > 6:
        outcomes += f' <span class="muted">and {len(groups) - 6} more groups below</span>'
    status = str(plan.get("status") or "-")
    meta = [
        ("status", _e(status) + (f" · {outcomes}" if outcomes else "")),
        ("trigger", _e(_trigger(plan))),
        ("created", when(plan.get("created_at"))),
        ("finished", when(plan.get("finished_at"))),
        (
            "DAG run",
            f'<a target="_top" href="{_e(run_href)}">{_e(run_text)}</a>' if run_href else _e(run_text),
        ),
        ("snapshot taken", when(plan.get("snapshot_at"))),
    ]
    params = plan.get("parameters")
    reviewed = (params or {}).get("reviewed_plan")
    if reviewed:
        meta.append(("reviewed plan", f'<a href="{_e(reviewed)}">plan {_e(reviewed)}</a>'))
    rows = "".join(f"<dt>{_e(k)}</dt><dd>{v}</dd>" for k, v in meta)
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
        f'<p><a href="{_e(list_href)}">← all plans</a></p>{notice_html(notice)}{paused_html(paused, "../actions/unpause")}'
        f'<h1>Plan {_e(plan.get("id"))}</h1><dl class="meta">{rows}</dl>{cause}{body}',
    )


# -- a group's history -------------------------------------------------------------------------


_TICK_STEPS = (
    (timedelta(minutes=1), "hm"),
    (timedelta(minutes=5), "hm"),
    (timedelta(minutes=15), "hm"),
    (timedelta(hours=1), "hm"),
    (timedelta(hours=3), "hm"),
    (timedelta(hours=6), "mdhm"),
    (timedelta(hours=12), "mdhm"),
    (timedelta(days=1), "md"),
    (timedelta(days=2), "md"),
    (timedelta(days=7), "md"),
    (timedelta(days=14), "md"),
    (timedelta(days=30), "ymd"),
    (timedelta(days=91), "ymd"),
    (timedelta(days=365), "ymd"),
)
#: The widest label of each format in pixels at the chart's font size (with a gap): ticks are
#: never closer than this, so labels never collide.
_LABEL_PX = {"hm": 44, "mdhm": 84, "md": 48, "ymd": 80}


def time_ticks(start: datetime, end: datetime, width: float) -> tuple[list[datetime], str]:
    """Tick times between ``start`` and ``end`` (UTC) on a round step wide enough that no two
    labels of its format overlap on ``width`` pixels; and that format (hm, mdhm, md, ymd)."""
    span = max((end - start).total_seconds(), 60.0)
    for step, fmt in _TICK_STEPS:
        if width * step.total_seconds() / span >= _LABEL_PX[fmt] + 12:
            break
    epoch = datetime(2000, 1, 1, tzinfo=UTC)
    s = step.total_seconds()
    first = epoch + timedelta(seconds=math.ceil((start - epoch).total_seconds() / s) * s)
    ticks: list[datetime] = []
    t = first
    while t <= end and len(ticks) < 200:
        ticks.append(t)
        t += step
    return ticks, fmt


def history_chart_svg(rows: list[dict[str, Any]]) -> str:
    """Max member lag of a group over time (a time axis: oldest left): now (current) and under
    the plan (chosen or candidate), one point per plan at the time it was made; published plans
    filled. Time labels sit on round steps far enough apart never to collide."""
    points = [
        r for r in rows if r.get("current_max_lag") is not None and isinstance(r.get("created_at"), datetime)
    ]
    if not points:
        return '<p class="muted">no measured plan to chart</p>'
    points = sorted(points, key=lambda r: r["created_at"])
    top = max(
        [1, *(int(r["current_max_lag"]) for r in points), *(int(r.get("plan_max_lag") or 0) for r in points)]
    )
    step = _nice_step(top)
    y_max = step * max(1, math.ceil(top / step))
    labels = [fmt_int(step * i) for i in range(round(y_max / step) + 1)]
    width, pad_r, pad_t, plot_h = 760, 24, 12, 200
    pad_l = _axis_pad(labels)
    height = pad_t + plot_h + 64
    times = [r["created_at"].astimezone(UTC) for r in points]
    t0, t1 = times[0], times[-1]
    short = timedelta(minutes=10) - (t1 - t0)
    if short > timedelta(0):  # a few minutes at least, so the axis has labelled steps
        t0, t1 = t0 - short / 2, t1 + short / 2
    span = (t1 - t0).total_seconds()
    plot_w = width - pad_l - pad_r

    def x(t: datetime) -> float:
        return pad_l + plot_w * (t.astimezone(UTC) - t0).total_seconds() / span

    def y(v: float) -> float:
        return pad_t + plot_h - plot_h * v / y_max

    out = [
        f'<svg class="chart history" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="max lag over time">'
        "<title>max member lag over time, in messages</title>"
    ]
    for i, label in enumerate(labels):
        v = step * i
        out.append(
            f'<line class="grid" x1="{pad_l}" x2="{width - pad_r}" y1="{y(v):.1f}" y2="{y(v):.1f}" stroke="#eaeef2"/>'
        )
        out.append(
            f'<text x="{pad_l - 6}" y="{y(v) + 4:.1f}" font-size="11" text-anchor="end">{_e(label)}</text>'
        )
    mid = f"{pad_t + plot_h / 2:.0f}"
    out.append(
        f'<text x="12" y="{mid}" font-size="11" transform="rotate(-90 12 {mid})" '
        'text-anchor="middle">max lag (messages)</text>'
    )
    ticks, fmt = time_ticks(t0, t1, plot_w)
    for t in ticks:
        tx = x(t)
        out.append(
            f'<line class="grid" x1="{tx:.1f}" x2="{tx:.1f}" y1="{pad_t}" y2="{pad_t + plot_h}" stroke="#eaeef2"/>'
        )
        label = {"hm": "%H:%M", "mdhm": "%m-%d %H:%M", "md": "%m-%d", "ymd": "%Y-%m-%d"}[fmt]
        out.append(
            f'<text class="tick" x="{tx:.1f}" y="{pad_t + plot_h + 16}" font-size="11" text-anchor="middle" '
            f'data-t="{_iso(t)}" data-f="{fmt}">{_e(t.strftime(label))}</text>'
        )
    for key, colour, label in (
        ("current_max_lag", colour_of("current"), "now (current)"),
        ("plan_max_lag", colour_of("lag-optimal"), "under the plan"),
    ):
        pts = [(x(r["created_at"]), y(int(r[key]))) for r in points if r.get(key) is not None]
        if pts:
            path = " ".join(f"{px:.1f},{py:.1f}" for px, py in pts)
            out.append(
                f'<polyline data-series="{key}" fill="none" stroke="{colour}" stroke-width="2" points="{path}"/>'
            )
        for r in points:
            if r.get(key) is None:
                continue
            filled = colour if r.get("published") else "none"
            out.append(
                f'<circle cx="{x(r["created_at"]):.1f}" cy="{y(int(r[key])):.1f}" r="4" fill="{filled}" '
                f'stroke="{colour}"><title>plan {_e(r["plan_id"])} ({_e(_time(r["created_at"]))} UTC): '
                f"{_e(label)} {_e(lag_text(r[key]))}</title></circle>"
            )
    ly = pad_t + plot_h + 38
    out.append(
        f'<rect x="{pad_l}" y="{ly}" width="12" height="3" fill="{colour_of("current")}"/>'
        f'<text x="{pad_l + 17}" y="{ly + 5}" font-size="12">max lag now (current)</text>'
        f'<rect x="{pad_l + 200}" y="{ly}" width="12" height="3" fill="{colour_of("lag-optimal")}"/>'
        f'<text x="{pad_l + 217}" y="{ly + 5}" font-size="12">under the plan (filled: published)</text>'
    )
    out.append("</svg>")
    return "".join(out)


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
        f"<li>{_e(t)}-{_e(p)}: {_e(a or 'nobody')} → {_e(b or 'nobody')}</li>" for t, p, a, b in moves
    )
    against = f"version {in_force.get('version')} in force" if in_force else "no version in force"
    diff = (
        f"<p>against {_e(against)}: {len(moves)} partition{'s' if len(moves) != 1 else ''} change consumer</p>"
        + (f"<ul>{items}</ul>" if items else "")
    )
    made = (
        f" ({version.get('strategy')}, published by plan {version.get('plan_id')})"
        if version.get("plan_id")
        else ""
    )
    return (
        f'<details class="rollback"><summary>roll back to version {_e(v)}{_e(made)}…</summary>'
        f'<form class="action confirm" method="post" action="{_e(action)}">'
        f'<input type="hidden" name="plan_id" value="{_e(plan_id)}"><input type="hidden" name="group" '
        f'value="{_e(group)}"><input type="hidden" name="version" value="{_e(v)}">{diff}'
        f'<label><input type="checkbox" name="confirm" value="yes" required> publish version {_e(v)}\'s '
        "assignment again as a new version</label><br>"
        f'<button class="danger" type="submit">roll back to version {_e(v)}</button> '
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
    body = [f'<p><a href="plans">← all plans</a></p>{paused_html(paused)}<h1>Group {_e(group)}</h1>']
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
        trigger = _e(f"{r.get('trigger')}{by}")
        if r.get("trigger") == "failover":  # an instance died or joined: stands out in the history
            trigger = f'<span class="stop">{trigger}</span>'
        reason = r.get("reason") or r.get("error")

        def pair(a: Any, b: Any, f: Any) -> str:
            return f"{f(a)} → {f(b)}" if b is not None else f(a)

        catch_up = (
            f'<td class="num catch-up">{_e(pair(r.get("current_max_catch_up_s"), r.get("plan_max_catch_up_s") if "plan_max_catch_up_s" in r else None, duration_text))}</td>'
            if in_time
            else ""
        )
        trs.append(
            f'<tr class="{_e(r.get("trigger"))}"><td><a href="plans/{_e(r["plan_id"])}#group-{_e(group)}">plan {_e(r["plan_id"])}</a></td>'
            f'<td class="when">{when(r.get("created_at"))}</td><td>{trigger}</td>'
            f'<td class="outcome">{badge(out)}'
            + (f'<span class="why">{_e(reason)}</span>' if reason else "")
            + "</td>"
            f"<td class=num>{_e(pair(r.get('current_max_lag'), r.get('plan_max_lag'), fmt_int))}</td>"
            f"<td class=num>{_e(pair(r.get('current_imbalance'), r.get('plan_imbalance'), _ratio))}</td>"
            f"{catch_up}<td>{_e(r.get('strategy'))}</td></tr>"
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
            f'<h2>Roll back</h2><p class="muted">{_e(against)}; each version below can be published '
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
        return _e(value)

    rows = "".join(
        f"<tr><td>{_e(i.get('instance'))}</td><td>{'<span class=go>alive</span>' if i.get('alive') else '<span class=err>dead</span>'}</td>"
        f"<td class=num>{_e(i.get('version'))}</td><td class=num>{_e(fmt_int(i.get('lag')))}</td>"
        f"<td class=num>{_e(fmt_rate(i.get('rate')))}</td><td class=when>{seen(i)}</td><td>{_e(i.get('host'))}</td></tr>"
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
