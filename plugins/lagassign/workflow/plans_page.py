"""HTML pages of the plans audit trail for the Airflow UI: pure functions, no I/O, no web framework.

The FastAPI wiring lives in ``ui.py``; everything here takes plain plan dicts (``AuditStore``'s
``list_plans`` / ``get_plan`` shapes) and returns strings, so it is tested without a server.
Every value from the store goes through ``html.escape`` (group, member and strategy names come
from Kafka clusters and parameters from people). Charts are inline SVG drawn here; the pages
load nothing from anywhere (no script, stylesheet, font or image URL).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from datetime import date, datetime
from html import escape
from typing import Any
from urllib.parse import quote, urlencode

from ..core.catchup import catch_up_change, duration_text
from ..core.explain import hint
from ..core.inflow import lag_time_text

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

_CSS = """
:root{--fg:#1f2328;--bg:#fff;--muted:#6e7781;--line:#d0d7de;--soft:#f6f8fa;--grid:#eaeef2;--link:#0969da;
--go:#1a7f37;--stop:#9a6700;--err:#cf222e;--hl:#fff4e6;--tag:#eaeef2;color-scheme:light}
@media (prefers-color-scheme:dark){:root:not([data-theme=light]){--fg:#e6edf3;--bg:#0d1117;--muted:#8b949e;
--line:#30363d;--soft:#161b22;--grid:#21262d;--link:#58a6ff;--go:#3fb950;--stop:#d29922;--err:#f85149;
--hl:#2d2212;--tag:#21262d;color-scheme:dark}}
:root[data-theme=dark]{--fg:#e6edf3;--bg:#0d1117;--muted:#8b949e;--line:#30363d;--soft:#161b22;
--grid:#21262d;--link:#58a6ff;--go:#3fb950;--stop:#d29922;--err:#f85149;--hl:#2d2212;--tag:#21262d;
color-scheme:dark}
body{font-family:Inter,system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:var(--fg);
background:var(--bg);font-size:14px}
main{padding:16px 24px;max-width:1400px}
h1{font-size:1.4rem;margin:0 0 12px} h2{font-size:1.15rem;margin:28px 0 6px;border-top:1px solid var(--line);
padding-top:14px} h3{font-size:1rem;margin:16px 0 6px}
a{color:var(--link)} table{border-collapse:collapse;margin:6px 0 10px;font-size:.9rem}
th,td{border:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top}
th{background:var(--soft)} td.num{text-align:right;font-variant-numeric:tabular-nums}
tr.chosen td{background:var(--hl)} tr.refused td{color:var(--muted)}
.go{color:var(--go);font-weight:600} .stop{color:var(--stop);font-weight:600} .err{color:var(--err)}
.tag{display:inline-block;font-size:.75rem;border-radius:8px;padding:0 6px;margin-left:4px;background:var(--tag)}
.tag.chosen{outline:2px solid var(--fg)} .tag.best{background:#2da44e33} .tag.optimal{background:#218bff33}
.swatch{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:5px;vertical-align:middle}
form.filters{display:flex;gap:12px;align-items:end;flex-wrap:wrap;margin-bottom:12px}
form.filters label{display:flex;flex-direction:column;font-size:.8rem;gap:2px}
form.action{display:inline-block;margin:4px 8px 4px 0}
button,input{font:inherit;color:var(--fg);background:var(--soft);border:1px solid var(--line);border-radius:6px;
padding:3px 10px} button{cursor:pointer} button.primary{background:#017cee;color:#fff;border-color:#017cee}
dl.meta{display:grid;grid-template-columns:max-content auto;gap:2px 12px;margin:0;font-size:.9rem}
dl.meta dt{font-weight:600} dl.meta dd{margin:0} code{font-size:.85rem;word-break:break-all}
.muted{color:var(--muted)} svg.chart{max-width:100%;height:auto;border:1px solid var(--grid)}
svg.chart text{fill:var(--fg)} svg.chart .grid{stroke:var(--grid)} svg.chart .axis{stroke:var(--muted)}
svg.chart .bound{stroke:var(--fg)} .cause{border-left:3px solid var(--err);padding:4px 10px;background:var(--soft)}
details summary{cursor:pointer;color:var(--link)} nav.pages{margin:8px 0}
"""
# Follows the Airflow UI's colour mode (same origin: next-themes keeps it in localStorage 'theme'),
# else the system's.
_THEME_JS = (
    "try{var m=localStorage.getItem('theme');"
    "if(m==='dark'||m==='light')document.documentElement.dataset.theme=m}catch(e){}"
)


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
    measured = [r for r in group.get("results") or () if isinstance(r.get("metrics"), Mapping)]
    first = [BASELINE, target_strategy(group)]
    ordered = [r for name in dict.fromkeys(first) for r in measured if r["strategy"] == name]
    if every:
        ordered += [r for r in measured if r not in ordered]
    return [
        (str(r["strategy"]), {str(k): int(v) for k, v in (r["metrics"].get("lag") or {}).items()})
        for r in ordered
    ]


# --------------------------------------------------------------------------------------------
# Formatting helpers


def _e(value: Any) -> str:
    return escape("-" if value is None else str(value), quote=True)


def _int(value: Any) -> str:
    return "-" if value is None else f"{int(value):,}"


def _ratio(value: Any) -> str:
    return "-" if value is None else f"{float(value):.3f}"


def _time(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S") if isinstance(value, datetime) else "-"


def _compact(value: float) -> str:
    """Axis labels: 1.5k, 3M, 2.5G."""
    for size, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= size:
            return f"{value / size:.3g}{suffix}"
    return f"{value:.3g}" if value != int(value) else str(int(value))


def _nice_step(top: float, ticks: int = 5) -> float:
    raw = top / ticks
    power = 10 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)


def colour_of(strategy: str) -> str:
    """The strategy's fixed colour (an unknown name gets a stable spare one)."""
    if strategy in STRATEGY_COLOURS:
        return STRATEGY_COLOURS[strategy]
    return _SPARE_COLOURS[sum(strategy.encode()) % len(_SPARE_COLOURS)]


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
    chosen = target_strategy(group)
    bound = group.get("lower_bound_max_lag")
    top = max([0, *(v for _, lags in series for v in lags.values()), *([bound] if bound else [])])
    step = _nice_step(top) if top > 0 else 1
    y_max = step * max(1, math.ceil(top / step))

    bar, gap, pad_l, pad_r, pad_t, plot_h = 9, 22, 64, 16, 12, 240
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
    title = f"lag per consumer, group {group.get('group')} ({kind})"
    out = [
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{_e(title)}">',
        f"<title>{_e(title)}</title>",
    ]
    ticks = round(y_max / step)
    for i in range(ticks + 1):
        v = step * i
        out.append(
            f'<line class="grid" x1="{pad_l}" x2="{width - pad_r}" y1="{y(v):.1f}" y2="{y(v):.1f}" '
            'stroke="#eaeef2"/>'
        )
        out.append(
            f'<text x="{pad_l - 6}" y="{y(v) + 4:.1f}" font-size="11" text-anchor="end">{_e(_compact(v))}</text>'
        )
    mid = f"{pad_t + plot_h / 2:.0f}"
    out.append(
        f'<text x="14" y="{mid}" font-size="11" transform="rotate(-90 14 {mid})" '
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
                f"{_e(name)}: {_e(_int(v))}</title></rect>"
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
            f"{_e(_int(bound))}</title></line>"
        )
        out.append(
            f'<text x="{width - pad_r - 2}" y="{y(bound) - 4:.1f}" font-size="10" text-anchor="end">'
            f"lower bound {_e(_compact(bound))}</text>"
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
    """A complete HTML document: inline CSS (light and dark, as Airflow's UI), nothing loaded
    from elsewhere."""
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><script>{_THEME_JS}</script><style>{_CSS}</style></head>"
        f"<body><main>{body}</main></body></html>"
    )


def error_page(status: int, message: str, back: str = "plans") -> str:
    """A short error page (bad filter, unknown plan) with a link back to the list."""
    return page(
        f"lagassign: {status}",
        f'<h1>{status}</h1><p class="err">{_e(message)}</p><p><a href="{_e(back)}">all plans</a></p>',
    )


def _trigger(plan: Mapping[str, Any]) -> str:
    by = plan.get("triggered_by")
    return f"{plan.get('trigger')} by {by}" if by else str(plan.get("trigger"))


def _published(group: Mapping[str, Any]) -> str:
    done = [p for p in group.get("publications") or () if p.get("state") == "published"]
    if done:
        return f"v{done[-1]['version']}"
    other = (group.get("publications") or [None])[-1]
    return f"v{other['version']} {other['state']}" if other else "-"


def _gate(group: Mapping[str, Any]) -> str:
    d = group.get("decision")
    if d is None:
        if group.get("error"):
            return '<span class="err">not evaluated</span>'
        return '<span class="muted">no decision</span>'
    return '<span class="go">go</span>' if d.get("go") else '<span class="stop">stop</span>'


def _reason(group: Mapping[str, Any]) -> str:
    d = group.get("decision") or {}
    return str(d.get("reason") or group.get("error") or "-")


def _lag_change(group: Mapping[str, Any]) -> str:
    """Max member lag now → under the chosen (or candidate) plan, from the gate's numbers."""
    d = group.get("decision") or {}
    before, after = d.get("current_max_lag"), d.get("chosen_max_lag")
    if before is None:
        return "-"
    if after is None or not (d.get("chosen") or d.get("candidate")):
        return _int(before)
    return f"{_int(before)} → {_int(after)}" + ("" if d.get("go") else " (not applied)")


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
    """The plan's DAG run in Airflow's UI (a task: its log), or None when not run by Airflow."""
    dag, run = plan.get("dag_id"), plan.get("run_id")
    if not dag or not run:
        return None
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
) -> str:
    """The list of plans, newest first: time, DAG and trigger and who, per group the gate's
    decision and reason, max lag before → after (and max catch-up time before → after, for
    groups planned in time), the chosen strategy and the published version, with the filter
    form on top and paging links below.

    ``details`` maps plan id to ``get_plan`` output (for per-group columns); a plan missing from
    it shows only its counts. ``catch_up``: ``AuditStore.max_catch_up`` of these plans (the
    catch-up column appears when some group on the page has times). ``more``: a next page exists.
    """
    catch_up = catch_up or {}
    in_time = bool(catch_up)
    form = (
        '<form class="filters" method="get" action="plans">'
        f'<label>group<input name="group" value="{_e(group or "")}" placeholder="any"></label>'
        f'<label>since<input type="date" name="since" value="{_e(since or "")}"></label>'
        f'<label>until<input type="date" name="until" value="{_e(until or "")}"></label>'
        '<button type="submit">filter</button> <a href="plans">clear</a></form>'
    )
    rows = []
    for p in plans:
        pid = int(p["id"])
        link = f'<a href="{_e(plan_href)}{pid}">plan {pid}</a>'
        d = details.get(pid)
        groups = (d or {}).get("groups") or []
        if groups:
            names = "<br>".join(
                f'<a href="history?group={_e(quote(g["group"]))}">{_e(g["group"])}</a>' for g in groups
            )
            gates = "<br>".join(_gate(g) for g in groups)
            reasons = "<br>".join(_e(_reason(g)) for g in groups)
            lags = "<br>".join(_e(_lag_change(g)) for g in groups)
            times = "<br>".join(_e(catch_up_change_short(catch_up, pid, g) or "-") for g in groups)
            chosen = "<br>".join(_e((g.get("decision") or {}).get("chosen")) for g in groups)
            published = "<br>".join(_e(_published(g)) for g in groups)
        else:
            names = f'<span class="muted">{_e(p.get("groups", 0))} groups</span>'
            gates = f"{_e(p.get('go', 0))} go"
            reasons = lags = times = chosen = "-"
            published = f"{_e(p.get('published', 0))} published"
        status = _e(p.get("status"))
        if p.get("error"):
            status = f'<span class="err" title="{_e(p["error"])}">{status}</span><br><small>{_e(p["error"])}</small>'
        run = airflow_run_href(p)
        dag = f'<a target="_top" href="{_e(run)}">{_e(p.get("dag_id"))}</a>' if run else _e(p.get("dag_id"))
        rows.append(
            f"<tr><td>{link}</td><td>{_e(_time(p.get('created_at')))}</td><td>{status}</td>"
            f"<td>{dag}</td><td>{_e(_trigger(p))}</td><td>{names}</td><td>{gates}</td><td>{reasons}</td>"
            f"<td class=num>{lags}</td>"
            + (f'<td class="num catch-up">{times}</td>' if in_time else "")
            + f"<td>{chosen}</td><td>{published}</td></tr>"
        )
    table = (
        '<table class="plans"><thead><tr><th>plan</th><th>created (UTC)</th><th>status</th><th>DAG</th>'
        "<th>trigger</th><th>groups</th><th>gate</th><th>reason</th><th>max lag now → plan</th>"
        + ("<th>max catch-up now → plan</th>" if in_time else "")
        + "<th>chosen</th><th>published</th></tr></thead>"
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
    return page("lagassign: rebalance plans", f"<h1>Rebalance plans</h1>{form}{table}{pages}")


def metrics_table_html(group: Mapping[str, Any]) -> str:
    """Per strategy: max lag, ratio to the lower bound, imbalance, spreads, moves; chosen and
    best marked; refusals and unconsumed partitions said in words."""
    chosen, best = target_strategy(group), group.get("best")
    go = bool((group.get("decision") or {}).get("go"))
    bound = group.get("lower_bound_max_lag")
    in_time = timed(group)
    rows = []
    for r in group.get("results") or ():
        name = r.get("strategy")
        tags = ""
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
        if "metrics" not in r or r.get("refused") is not None:
            rows.append(
                f'<tr class="refused"><td>{swatch}{_e(name)}{tags}</td>'
                f'<td colspan="{7 if in_time else 6}">refused: {_e(r.get("refused"))}</td></tr>'
            )
            continue
        m = r["metrics"]
        # Against the bound for count-balanced plans where recorded (older plans: the general one).
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
        rows.append(
            f"<tr{cls}><td>{swatch}{_e(name)}{tags}{note}</td><td class=num>{_e(_int(m.get('max_lag')))}</td>"
            f"<td class=num>{_e(vs)}</td>{catch_up}<td class=num>{_e(_ratio(m.get('imbalance')))}</td>"
            f"<td class=num>{_e(_int(m.get('lag_spread')))}</td>"
            f"<td class=num>{_e(_int(m.get('count_spread')))}</td>"
            f"<td class=num>{_e(_int(m.get('moves')))}</td></tr>"
        )
    return (
        '<table class="metrics"><thead><tr><th>strategy</th><th>max lag</th><th>vs lower bound</th>'
        + ("<th>max catch-up</th>" if in_time else "")
        + "<th>imbalance</th><th>lag spread</th><th>count spread</th><th>moves</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _moves_rows(
    moves: list[Move],
    lags: Mapping[tuple[str, int], int] | None,
    times: Mapping[tuple[str, int], float] | None = None,
) -> str:
    def lag(t: str, p: int) -> str:
        text = _int((lags or {}).get((t, p)))
        seconds = (times or {}).get((t, p))
        return text if seconds is None else f"{text} ({duration_text(seconds)})"

    return "".join(
        f"<tr><td>{_e(t)}</td><td class=num>{_e(p)}</td>"
        f"<td class=num>{_e(lag(t, p))}</td><td>{_e(a)}</td><td>{_e(b)}</td></tr>"
        for t, p, a, b in moves
    )


def moves_table_html(
    group: Mapping[str, Any],
    lags: Mapping[tuple[str, int], int] | None = None,
    times: Mapping[tuple[str, int], float] | None = None,
) -> str:
    """Moves from the current assignment to the chosen strategy, with each partition's lag
    (``lags``, from the plan's snapshot, when it can be read) and lag in seconds (``times``,
    when the snapshot knows it). A group the gate stopped moves nothing: its candidate's moves
    are shown folded, as what would have moved."""
    target = target_strategy(group)
    cur, tgt = _result(group, BASELINE), _result(group, target)
    if target is None or target == BASELINE or cur is None or tgt is None or "assignment" not in tgt:
        return '<p class="muted">no moves: nothing to move to</p>'
    moves = compute_moves(cur.get("assignment"), tgt.get("assignment"))
    go = bool((group.get("decision") or {}).get("go"))
    table = (
        '<table class="moves"><thead><tr><th>topic</th><th>partition</th><th>lag</th><th>from</th>'
        f"<th>to</th></tr></thead><tbody>{_moves_rows(moves, lags, times)}</tbody></table>"
    )
    if not go:
        return (
            '<p class="stop">Nothing moves: the gate stopped this plan.</p>'
            f"<details><summary>what {_e(target)} would move if published ({len(moves)} "
            f"partitions)</summary>{table if moves else ''}</details>"
        )
    head = f"<h3>Moves: current → {_e(target)} ({len(moves)})</h3>"
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

    def catch_up(metrics: Mapping[str, Any], member: str) -> str:
        times = metrics.get("catch_up_s") or {}
        return duration_text(times[member]) if member in times else "-"

    rows = []
    for m in members:
        parts = sorted(tuple(tp) for tp in (tgt.get("assignment") or {}).get(m) or ())
        shown = ", ".join(f"{t}-{p}" for t, p in parts)
        times = f"<td class=num>{_e(catch_up(cm, m))} → {_e(catch_up(tm, m))}</td>" if in_time else ""
        rows.append(
            f"<tr><td>{_e(m)}</td><td class=num>{_e(_int((cm.get('lag') or {}).get(m)))} → "
            f"{_e(_int((tm.get('lag') or {}).get(m)))}</td>{times}<td class=num>{_e((cm.get('count') or {}).get(m))} → "
            f"{_e((tm.get('count') or {}).get(m))}</td><td><code>{_e(shown)}</code></td></tr>"
        )
    return (
        f"<h3>Members under {_e(target)}</h3>"
        '<table class="members"><thead><tr><th>member</th><th>lag now → plan</th>'
        + ("<th>catch-up now → plan</th>" if in_time else "")
        + "<th>partitions now → plan</th>"
        f"<th>partitions under the plan</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _publications_html(group: Mapping[str, Any]) -> str:
    pubs = group.get("publications") or []
    if not pubs:
        return '<p>published: <span class="muted">nothing published for this plan</span></p>'
    items = []
    for pub in pubs:
        text = f"version {pub.get('version')} ({pub.get('strategy', '-')}): {pub.get('state')}"
        if pub.get("published_at"):
            text += f" at {_time(pub['published_at'])} UTC"
        if pub.get("forced"):
            text += " (forced)"
        if pub.get("error"):
            text += f": {pub['error']}"
        items.append(f"<li>{_e(text)}</li>")
    return f"<p>published:</p><ul>{''.join(items)}</ul>"


def changes_since(group: Mapping[str, Any], previous: Mapping[str, Any] | None) -> list[str]:
    """What changed for a group since its previous plan: members, partitions, max lag now,
    the best strategy, the gate's verdict. Empty when there is no previous plan."""
    if previous is None:
        return []
    out = []
    for key, label in (("members", "members"), ("partitions", "partitions"), ("best", "best strategy")):
        if previous.get(key) != group.get(key):
            out.append(f"{label} {previous.get(key)} → {group.get(key)}")
    was, now = previous.get("decision") or {}, group.get("decision") or {}
    if was.get("current_max_lag") != now.get("current_max_lag"):
        out.append(f"max lag now {_int(was.get('current_max_lag'))} → {_int(now.get('current_max_lag'))}")
    if bool(was.get("go")) != bool(now.get("go")) and was and now:
        out.append(f"gate {'go' if was.get('go') else 'stop'} → {'go' if now.get('go') else 'stop'}")
    return out or ["nothing that the gate looks at"]


def _actions_html(plan: Mapping[str, Any], group: Mapping[str, Any], kind: str | None = None) -> str:
    """Buttons that trigger Airflow runs (authorised and recorded by Airflow): publish this
    group's plan when it was not published (not for a subscribe() group: its consumers cannot
    follow a static plan), re-plan the group now."""
    name = str(group.get("group"))
    d = group.get("decision") or {}
    target = d.get("chosen") or d.get("candidate")
    published = any(p.get("state") == "published" for p in group.get("publications") or ())
    hidden = f'<input type="hidden" name="plan_id" value="{_e(plan.get("id"))}"><input type="hidden" name="group" value="{_e(name)}">'
    out = []
    if (
        target
        and target != BASELINE
        and not published
        and not group.get("error")
        and plan.get("status") == "succeeded"
        and kind == "subscribe"
    ):
        out.append(
            '<span class="muted">not publishable: a subscribe() group, assigned by its group '
            "coordinator (run its consumers in assign() mode with PlanConsumer to follow plans)</span> "
        )
    elif (
        target
        and target != BASELINE
        and not published
        and not group.get("error")
        and plan.get("status") == "succeeded"
    ):
        out.append(
            f'<form class="action" method="post" action="../actions/publish">{hidden}'
            f'<button class="primary" type="submit">publish this plan ({_e(target)})</button> '
            '<label><input type="checkbox" name="dry_run" value="true"> dry run</label></form>'
        )
    out.append(
        f'<form class="action" method="post" action="../actions/replan">{hidden}'
        '<button type="submit">re-plan this group</button></form>'
    )
    out.append(f'<a href="../history?group={_e(quote(name))}">history of this group</a>')
    return f'<div class="actions">{"".join(out)}</div>'


def group_html(
    group: Mapping[str, Any],
    plan: Mapping[str, Any] | None = None,
    previous: tuple[int, Mapping[str, Any]] | None = None,
    lags: Mapping[tuple[str, int], int] | None = None,
    kind: str | None = None,
    times: Mapping[tuple[str, int], float] | None = None,
) -> str:
    """One group of a plan (``kind``: assign or subscribe, from its snapshot, when known):
    decision and reason, actions, what changed since the previous plan,
    publications, chart (current, chosen, lower bound; every strategy folded), catch-up times
    and lag in seconds (``times``: per partition, from the snapshot) when known, metrics,
    members and moves."""
    name = group.get("group")
    d = group.get("decision")
    out = [f'<section class="group" id="group-{_e(name)}"><h2>group {_e(name)}</h2>']
    if d is None:
        out.append('<p class="muted">no gate decision recorded</p>')
    else:
        verdict = '<span class="go">go</span>' if d.get("go") else '<span class="stop">stop</span>'
        out.append(f"<p>gate: {verdict}: {_e(d.get('reason'))}</p>")
        if d.get("outcome"):
            out.append(f"<p>publishing: {_e(d['outcome'])}</p>")
    if plan is not None:
        out.append(_actions_html(plan, group, kind))
    if previous is not None:
        pid, prev = previous
        changed = "; ".join(changes_since(group, prev))
        out.append(f'<p class="changes">since <a href="{pid}">plan {pid}</a>: {_e(changed)}</p>')
    out.append(_publications_html(group))
    if group.get("error"):
        out.append(f"<p>not evaluated:</p>{_cause_html(str(group['error']))}</section>")
        return "".join(out)
    out.append(
        f'<p class="muted">{_e(group.get("members"))} members, {_e(group.get("partitions"))} '
        f"partitions, lower bound on max lag {_e(_int(group.get('lower_bound_max_lag')))}, "
        f"best {_e(group.get('best'))}</p>"
    )
    in_time = [x for x in (catch_up_line(group), lag_time_text(times)) if x]
    if in_time:
        out.append(f'<p class="catch-up">{_e("; ".join(in_time))}</p>')
    out.append(lag_chart_svg(group))
    out.append(
        f'<details class="every"><summary>every strategy</summary>{lag_chart_svg(group, every=True)}</details>'
    )
    out.append(metrics_table_html(group))
    out.append(members_table_html(group))
    out.append(moves_table_html(group, lags, times))
    out.append("</section>")
    return "".join(out)


def plan_html(
    plan: Mapping[str, Any],
    list_href: str = "../plans",
    previous: Mapping[str, tuple[int, Mapping[str, Any]]] | None = None,
    lags: Mapping[str, Mapping[tuple[str, int], int]] | None = None,
    notice: str | None = None,
    kinds: Mapping[str, str] | None = None,
    times: Mapping[str, Mapping[tuple[str, int], float]] | None = None,
) -> str:
    """One plan: header (status, trigger and who, times, DAG run linked to Airflow, snapshot,
    parameters), the root cause of a failure with a link to the failed step's log, then every
    group (``previous``: group -> its previous plan; ``lags``: group -> per-partition lag;
    ``times``: group -> per-partition lag in seconds)."""
    run_href = airflow_run_href(plan)
    run_text = " / ".join(x for x in (plan.get("dag_id"), plan.get("run_id")) if x) or "-"
    meta = [
        ("status", _e(plan.get("status"))),
        ("trigger", _e(_trigger(plan))),
        ("created", _e(f"{_time(plan.get('created_at'))} UTC")),
        ("finished", _e(f"{_time(plan.get('finished_at'))} UTC" if plan.get("finished_at") else "-")),
        (
            "DAG run",
            f'<a target="_top" href="{_e(run_href)}">{_e(run_text)}</a>' if run_href else _e(run_text),
        ),
        (
            "snapshot",
            _e(
                f"{plan.get('snapshot_uri') or '-'} (taken {_time(plan.get('snapshot_at'))} UTC)"
                if plan.get("snapshot_uri") or plan.get("snapshot_at")
                else "-"
            ),
        ),
    ]
    rows = "".join(f"<dt>{_e(k)}</dt><dd>{v}</dd>" for k, v in meta)
    params = plan.get("parameters")
    if params is not None:
        shown = json.dumps(params, sort_keys=True, default=str)
        rows += f"<dt>parameters</dt><dd><code>{_e(shown)}</code></dd>"
    cause = ""
    if plan.get("error"):
        step = failed_step(plan)
        cause = "<h3>Why it failed</h3>" + _cause_html(
            str(plan["error"]), airflow_run_href(plan, step) if step else run_href
        )
    groups = plan.get("groups") or []
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
            )
            for g in groups
        )
        or '<p class="muted">no groups recorded</p>'
    )
    note = f'<p class="notice">{_e(notice)}</p>' if notice else ""
    return page(
        f"lagassign: plan {plan.get('id')}",
        f'<p><a href="{_e(list_href)}">← all plans</a></p>{note}<h1>Plan {_e(plan.get("id"))}</h1>'
        f'<dl class="meta">{rows}</dl>{cause}{body}',
    )


def history_chart_svg(rows: list[dict[str, Any]]) -> str:
    """Max member lag of a group over time (oldest left): now (current) and under the plan
    (chosen or candidate), one point per plan; published plans marked."""
    points = [
        r for r in rows if r.get("current_max_lag") is not None and isinstance(r.get("created_at"), datetime)
    ]
    if len(points) < 1:
        return '<p class="muted">no measured plan to chart</p>'
    points = sorted(points, key=lambda r: r["created_at"])
    top = max(
        [1, *(int(r["current_max_lag"]) for r in points), *(int(r.get("plan_max_lag") or 0) for r in points)]
    )
    step = _nice_step(top)
    y_max = step * max(1, math.ceil(top / step))
    width, pad_l, pad_r, pad_t, plot_h = 760, 64, 16, 12, 200
    height = pad_t + plot_h + 60
    span = max(1, len(points) - 1)

    def x(i: int) -> float:
        return pad_l + (width - pad_l - pad_r) * (i / span if len(points) > 1 else 0.5)

    def y(v: float) -> float:
        return pad_t + plot_h - plot_h * v / y_max

    out = [
        f'<svg class="chart history" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="max lag over time">'
        "<title>max member lag over time</title>"
    ]
    for i in range(round(y_max / step) + 1):
        v = step * i
        out.append(
            f'<line class="grid" x1="{pad_l}" x2="{width - pad_r}" y1="{y(v):.1f}" y2="{y(v):.1f}" stroke="#eaeef2"/>'
        )
        out.append(
            f'<text x="{pad_l - 6}" y="{y(v) + 4:.1f}" font-size="11" text-anchor="end">{_e(_compact(v))}</text>'
        )
    for key, colour, label in (
        ("current_max_lag", colour_of("current"), "now (current)"),
        ("plan_max_lag", colour_of("lag-optimal"), "under the plan"),
    ):
        pts = [(x(i), y(int(r[key]))) for i, r in enumerate(points) if r.get(key) is not None]
        if pts:
            path = " ".join(f"{px:.1f},{py:.1f}" for px, py in pts)
            out.append(
                f'<polyline data-series="{key}" fill="none" stroke="{colour}" stroke-width="2" points="{path}"/>'
            )
        for i, r in enumerate(points):
            if r.get(key) is None:
                continue
            filled = colour if r.get("published") else "none"
            out.append(
                f'<circle cx="{x(i):.1f}" cy="{y(int(r[key])):.1f}" r="4" fill="{filled}" stroke="{colour}">'
                f"<title>plan {_e(r['plan_id'])}: {_e(label)} {_e(_int(r[key]))}</title></circle>"
            )
    for i, r in enumerate(points):
        if len(points) <= 12 or i in (0, len(points) - 1):
            anchor = (
                "start" if i == 0 and len(points) > 1 else "end" if i == len(points) - 1 and i else "middle"
            )
            out.append(
                f'<text x="{x(i):.1f}" y="{pad_t + plot_h + 16}" font-size="10" text-anchor="{anchor}">'
                f"{_e(r['created_at'].strftime('%m-%d %H:%M'))}</text>"
            )
    ly = pad_t + plot_h + 40
    out.append(
        f'<rect x="{pad_l}" y="{ly}" width="12" height="3" fill="{colour_of("current")}"/>'
        f'<text x="{pad_l + 17}" y="{ly + 5}" font-size="12">max lag now (current)</text>'
        f'<rect x="{pad_l + 200}" y="{ly}" width="12" height="3" fill="{colour_of("lag-optimal")}"/>'
        f'<text x="{pad_l + 217}" y="{ly + 5}" font-size="12">under the plan (filled: published)</text>'
    )
    out.append("</svg>")
    return "".join(out)


def history_html(group: str, rows: list[dict[str, Any]], status: list[dict[str, Any]] | None = None) -> str:
    """A group across plans (newest first): per plan the gate's verdict, max lag and imbalance of
    current and of the plan (and max catch-up time, where the group was planned in time),
    versions published, failovers; a lag-over-time chart; roll-back buttons for published
    versions; the group's live instances (``status``)."""
    in_time = any("current_max_catch_up_s" in r for r in rows)

    def catch_up(r: Mapping[str, Any], key: str) -> str:
        if not in_time:
            return ""
        shown = duration_text(r[key]) if key in r else "-"
        return f'<td class="num catch-up">{_e(shown)}</td>'

    body = [f'<p><a href="plans">← all plans</a></p><h1>Group {_e(group)}</h1>']
    if status is not None:
        body.append(live_instances_html(status))
    else:
        body.append(
            '<h2>Live instances</h2><p class="muted">the status topic lagassign.status cannot be read '
            "from the Airflow API server (no reachable lagassign_kafka connection)</p>"
        )
    body.append("<h2>Max lag over time</h2>" + history_chart_svg(rows))
    trs = []
    newest = max(
        (v["version"] for r in rows for v in r.get("publications") or () if v.get("state") == "published"),
        default=None,
    )
    for r in rows:
        back = "".join(
            f'<form class="action" method="post" action="actions/rollback"><input type="hidden" name="plan_id" value="{_e(r["plan_id"])}">'
            f'<input type="hidden" name="group" value="{_e(group)}"><input type="hidden" name="version" value="{_e(v["version"])}">'
            f'<button type="submit">roll back to version {_e(v["version"])}</button> '
            '<label><input type="checkbox" name="dry_run" value="true"> dry run</label></form>'
            for v in r.get("publications") or ()
            if v.get("state") == "published" and v["version"] != newest
        )
        verdict = (
            "-"
            if r.get("go") is None
            else ('<span class="go">go</span>' if r["go"] else '<span class="stop">stop</span>')
        )
        versions = ", ".join(f"v{v['version']} {v['state']}" for v in r.get("publications") or ()) or "-"
        by = f" by {r['triggered_by']}" if r.get("triggered_by") else ""
        trigger = _e(f"{r.get('trigger')}{by}")
        if r.get("trigger") == "failover":  # an instance died or joined: stands out in the history
            trigger = f'<span class="stop">{trigger}</span>'
        trs.append(
            f'<tr class="{_e(r.get("trigger"))}"><td><a href="plans/{_e(r["plan_id"])}#group-{_e(group)}">plan {_e(r["plan_id"])}</a></td>'
            f"<td>{_e(_time(r.get('created_at')))}</td><td>{trigger}</td><td>{verdict}</td>"
            f"<td>{_e(r.get('reason') or r.get('error'))}</td>"
            f"<td class=num>{_e(_int(r.get('current_max_lag')))}</td><td class=num>{_e(_ratio(r.get('current_imbalance')))}</td>"
            f"{catch_up(r, 'current_max_catch_up_s')}"
            f"<td>{_e(r.get('strategy'))}</td><td class=num>{_e(_int(r.get('plan_max_lag')))}</td>"
            f"<td class=num>{_e(_ratio(r.get('plan_imbalance')))}</td>{catch_up(r, 'plan_max_catch_up_s')}"
            f"<td>{_e(versions)}{back}</td></tr>"
        )
    body.append(
        "<h2>Plans</h2>"
        + (
            '<table class="history"><thead><tr><th>plan</th><th>created (UTC)</th><th>trigger</th><th>gate</th>'
            "<th>reason</th><th>max lag now</th><th>imbalance now</th>"
            + ("<th>max catch-up now</th>" if in_time else "")
            + "<th>plan</th><th>max lag under plan</th><th>imbalance under plan</th>"
            + ("<th>max catch-up under plan</th>" if in_time else "")
            + f"<th>versions</th></tr></thead><tbody>{''.join(trs)}</tbody></table>"
            if trs
            else '<p class="muted">no plan has looked at this group</p>'
        )
    )
    return page(f"lagassign: group {group}", "".join(body))


def live_instances_html(instances: list[dict[str, Any]]) -> str:
    """The group's instances as their status records say (``liveness`` view): alive or dead,
    plan version, lag, rate, last seen."""
    if not instances:
        return '<h2>Live instances</h2><p class="muted">no instance announces itself on lagassign.status</p>'
    rows = "".join(
        f"<tr><td>{_e(i.get('instance'))}</td><td>{'<span class=go>alive</span>' if i.get('alive') else '<span class=err>dead</span>'}</td>"
        f"<td class=num>{_e(i.get('version'))}</td><td class=num>{_e(_int(i.get('lag')))}</td>"
        f"<td class=num>{_e(i.get('rate'))}</td><td>{_e(i.get('last_seen'))}</td><td>{_e(i.get('host'))}</td></tr>"
        for i in instances
    )
    return (
        '<h2>Live instances</h2><table class="instances"><thead><tr><th>instance</th><th>state</th>'
        "<th>plan version</th><th>lag</th><th>rate (msg/s)</th><th>last seen (UTC)</th><th>host</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>"
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
