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
from collections.abc import Iterable, Mapping
from datetime import date, datetime
from html import escape
from typing import Any

BASELINE = "current"

# (topic, partition, from member or None, to member or None)
Move = tuple[str, int, str | None, str | None]

_CURRENT_COLOUR = "#8a8f98"
_CHOSEN_COLOUR = "#d9480f"
_OTHER_COLOURS = (
    "#4c6ef5",
    "#12b886",
    "#fab005",
    "#7950f2",
    "#15aabf",
    "#e64980",
    "#82c91e",
    "#fd7e14",
    "#228be6",
    "#40c057",
    "#be4bdb",
    "#868e96",
)

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1f2328;background:#fff}
main{padding:16px 24px;max-width:1400px}
h1{font-size:1.4rem;margin:0 0 12px} h2{font-size:1.15rem;margin:28px 0 6px;border-top:1px solid #d0d7de;
padding-top:14px} h3{font-size:1rem;margin:16px 0 6px}
a{color:#0969da} table{border-collapse:collapse;margin:6px 0 10px;font-size:.9rem}
th,td{border:1px solid #d0d7de;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f6f8fa} td.num{text-align:right;font-variant-numeric:tabular-nums}
tr.chosen td{background:#fff4e6} tr.refused td{color:#6e7781}
.go{color:#1a7f37;font-weight:600} .stop{color:#9a6700;font-weight:600} .err{color:#cf222e}
.tag{display:inline-block;font-size:.75rem;border-radius:8px;padding:0 6px;margin-left:4px;background:#eaeef2}
.tag.chosen{background:#ffd8a8} .tag.best{background:#d3f9d8} .tag.optimal{background:#d0ebff}
form.filters{display:flex;gap:12px;align-items:end;flex-wrap:wrap;margin-bottom:12px}
form.filters label{display:flex;flex-direction:column;font-size:.8rem;gap:2px}
dl.meta{display:grid;grid-template-columns:max-content auto;gap:2px 12px;margin:0;font-size:.9rem}
dl.meta dt{font-weight:600} dl.meta dd{margin:0} code{font-size:.85rem;word-break:break-all}
.muted{color:#6e7781} svg.chart{max-width:100%;height:auto;border:1px solid #eaeef2}
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


def chart_series(group: Mapping[str, Any]) -> list[tuple[str, dict[str, int]]]:
    """(strategy, lag per member) to draw: ``current``, then the chosen one, then every other
    measured strategy in evaluation order. Refused strategies have no lag and are left out."""
    measured = [r for r in group.get("results") or () if isinstance(r.get("metrics"), Mapping)]
    first = [BASELINE, target_strategy(group)]
    ordered = [r for name in dict.fromkeys(first) for r in measured if r["strategy"] == name]
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


def _colours(names: list[str], chosen: str | None) -> dict[str, str]:
    out, others = {}, iter(_OTHER_COLOURS * (1 + len(names) // len(_OTHER_COLOURS)))
    for name in names:
        if name == BASELINE:
            out[name] = _CURRENT_COLOUR
        else:
            out[name] = _CHOSEN_COLOUR if name == chosen else next(others)
    return out


# --------------------------------------------------------------------------------------------
# SVG chart


def lag_chart_svg(group: Mapping[str, Any]) -> str:
    """Grouped bars: per consumer, its lag under ``current``, the chosen plan and every other
    strategy, with a y axis, a dashed line at the lower bound on max lag and a legend."""
    series = chart_series(group)
    if not series:
        return '<p class="muted">no measured assignment to chart</p>'
    members = sorted({m for _, lags in series for m in lags})
    chosen = target_strategy(group)
    colours = _colours([name for name, _ in series], chosen)
    bound = group.get("lower_bound_max_lag")
    top = max([0, *(v for _, lags in series for v in lags.values()), *([bound] if bound else [])])
    step = _nice_step(top) if top > 0 else 1
    y_max = step * max(1, math.ceil(top / step))

    bar, gap, pad_l, pad_r, pad_t, plot_h = 9, 22, 64, 16, 12, 240
    width = max(720, pad_l + pad_r + len(members) * (len(series) * bar + gap))
    group_w = (width - pad_l - pad_r) / len(members)
    bar = max(bar, min(18, int((group_w - gap) / len(series))))
    legend_cols = max(1, (width - pad_l - pad_r) // 170)
    legend_h = 20 * math.ceil(len(series) / legend_cols) + 8
    height = pad_t + plot_h + 44 + legend_h
    go = bool((group.get("decision") or {}).get("go"))

    def y(v: float) -> float:
        return pad_t + plot_h - plot_h * v / y_max

    title = f"lag per consumer, group {group.get('group')}"
    out = [
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{_e(title)}">',
        f"<title>{_e(title)}</title>",
    ]
    ticks = round(y_max / step)
    for i in range(ticks + 1):
        v = step * i
        out.append(
            f'<line x1="{pad_l}" x2="{width - pad_r}" y1="{y(v):.1f}" y2="{y(v):.1f}" stroke="#eaeef2"/>'
        )
        out.append(
            f'<text x="{pad_l - 6}" y="{y(v) + 4:.1f}" font-size="11" text-anchor="end" '
            f'fill="#57606a">{_e(_compact(v))}</text>'
        )
    mid = f"{pad_t + plot_h / 2:.0f}"
    out.append(
        f'<text x="14" y="{mid}" font-size="11" fill="#57606a" '
        f'transform="rotate(-90 14 {mid})" text-anchor="middle">lag (messages)</text>'
    )
    for mi, member in enumerate(members):
        x0 = pad_l + mi * group_w + (group_w - len(series) * bar) / 2
        for si, (name, lags) in enumerate(series):
            v = lags.get(member, 0)
            x = x0 + si * bar
            out.append(
                f'<rect x="{x:.1f}" y="{y(v):.1f}" width="{bar - 1}" height="{y(0) - y(v):.1f}" '
                f'fill="{colours[name]}"><title>{_e(member)} under {_e(name)}: '
                f"{_e(_int(v))}</title></rect>"
            )
        label_x = x0 + len(series) * bar / 2
        out.append(
            f'<text x="{label_x:.1f}" y="{pad_t + plot_h + 16}" font-size="11" text-anchor="middle" '
            f'fill="#1f2328">{_e(member)}</text>'
        )
    out.append(f'<line x1="{pad_l}" x2="{width - pad_r}" y1="{y(0):.1f}" y2="{y(0):.1f}" stroke="#57606a"/>')
    if bound:
        out.append(
            f'<line x1="{pad_l}" x2="{width - pad_r}" y1="{y(bound):.1f}" y2="{y(bound):.1f}" '
            f'stroke="#1f2328" stroke-dasharray="5 4"><title>lower bound on max lag: '
            f"{_e(_int(bound))}</title></line>"
        )
        out.append(
            f'<text x="{width - pad_r - 2}" y="{y(bound) - 4:.1f}" font-size="10" text-anchor="end" '
            f'fill="#1f2328">lower bound {_e(_compact(bound))}</text>'
        )
    ly = pad_t + plot_h + 34
    col_w = (width - pad_l - pad_r) / legend_cols
    for si, (name, _) in enumerate(series):
        lx = pad_l + (si % legend_cols) * col_w
        yy = ly + 20 * (si // legend_cols)
        mark = (" (chosen)" if go else " (candidate)") if name == chosen and name != BASELINE else ""
        label = name + mark
        out.append(
            f'<rect x="{lx:.1f}" y="{yy}" width="12" height="12" fill="{colours[name]}"/>'
            f'<text x="{lx + 17:.1f}" y="{yy + 10}" font-size="12" fill="#1f2328">{_e(label)}</text>'
        )
    out.append("</svg>")
    return "".join(out)


# --------------------------------------------------------------------------------------------
# HTML pieces


def page(title: str, body: str) -> str:
    """A complete HTML document: inline CSS, nothing loaded from elsewhere."""
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body><main>{body}</main></body></html>"
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
        return '<span class="muted">no decision</span>'
    return '<span class="go">go</span>' if d.get("go") else '<span class="stop">stop</span>'


def plans_list_html(
    plans: Iterable[Mapping[str, Any]],
    details: Mapping[int, Mapping[str, Any]],
    group: str | None = None,
    since: str | None = None,
    until: str | None = None,
    plan_href: str = "plans/",
) -> str:
    """The list of plans, newest first: time, trigger and who, per group the gate's decision,
    the chosen strategy and the published version, with the filter form on top.

    ``details`` maps plan id to ``get_plan`` output (for per-group columns); a plan missing from
    it shows only its counts.
    """
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
            names = "<br>".join(_e(g["group"]) for g in groups)
            gates = "<br>".join(_gate(g) for g in groups)
            chosen = "<br>".join(_e((g.get("decision") or {}).get("chosen")) for g in groups)
            published = "<br>".join(_e(_published(g)) for g in groups)
        else:
            names = f'<span class="muted">{_e(p.get("groups", 0))} groups</span>'
            gates = f"{_e(p.get('go', 0))} go"
            chosen = "-"
            published = f"{_e(p.get('published', 0))} published"
        status = _e(p.get("status"))
        if p.get("error"):
            status = f'<span class="err" title="{_e(p["error"])}">{status}</span>'
        rows.append(
            f"<tr><td>{link}</td><td>{_e(_time(p.get('created_at')))}</td><td>{status}</td>"
            f"<td>{_e(_trigger(p))}</td><td>{names}</td><td>{gates}</td><td>{chosen}</td>"
            f"<td>{published}</td></tr>"
        )
    table = (
        '<table class="plans"><thead><tr><th>plan</th><th>created (UTC)</th><th>status</th>'
        "<th>trigger</th><th>groups</th><th>gate</th><th>chosen</th><th>published</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
        if rows
        else '<p class="muted">no plans match</p>'
    )
    return page("lagassign: rebalance plans", f"<h1>Rebalance plans</h1>{form}{table}")


def metrics_table_html(group: Mapping[str, Any]) -> str:
    """Per strategy: max lag, ratio to the lower bound, imbalance, spreads, moves; chosen and
    best marked; refusals and unconsumed partitions said in words."""
    chosen, best = target_strategy(group), group.get("best")
    go = bool((group.get("decision") or {}).get("go"))
    bound = group.get("lower_bound_max_lag")
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
        if "metrics" not in r or r.get("refused") is not None:
            rows.append(
                f'<tr class="refused"><td>{_e(name)}{tags}</td>'
                f'<td colspan="6">refused: {_e(r.get("refused"))}</td></tr>'
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
        rows.append(
            f"<tr{cls}><td>{_e(name)}{tags}{note}</td><td class=num>{_e(_int(m.get('max_lag')))}</td>"
            f"<td class=num>{_e(vs)}</td><td class=num>{_e(_ratio(m.get('imbalance')))}</td>"
            f"<td class=num>{_e(_int(m.get('lag_spread')))}</td>"
            f"<td class=num>{_e(_int(m.get('count_spread')))}</td>"
            f"<td class=num>{_e(_int(m.get('moves')))}</td></tr>"
        )
    return (
        '<table class="metrics"><thead><tr><th>strategy</th><th>max lag</th><th>vs lower bound</th>'
        "<th>imbalance</th><th>lag spread</th><th>count spread</th><th>moves</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def moves_table_html(group: Mapping[str, Any]) -> str:
    """Moves from the current assignment to the chosen (else candidate, else best) strategy."""
    target = target_strategy(group)
    cur, tgt = _result(group, BASELINE), _result(group, target)
    if target is None or target == BASELINE or cur is None or tgt is None or "assignment" not in tgt:
        return '<p class="muted">no moves: nothing to move to</p>'
    moves = compute_moves(cur.get("assignment"), tgt.get("assignment"))
    head = f"<h3>Moves: current → {_e(target)} ({len(moves)})</h3>"
    if not moves:
        return head + '<p class="muted">the same assignment: no partition moves</p>'
    rows = "".join(
        f"<tr><td>{_e(t)}</td><td class=num>{_e(p)}</td><td>{_e(a)}</td><td>{_e(b)}</td></tr>"
        for t, p, a, b in moves
    )
    return (
        head + '<table class="moves"><thead><tr><th>topic</th><th>partition</th><th>from</th>'
        f"<th>to</th></tr></thead><tbody>{rows}</tbody></table>"
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


def group_html(group: Mapping[str, Any]) -> str:
    """One group of a plan: decision and reason, publications, chart, metrics table, moves."""
    name = group.get("group")
    d = group.get("decision")
    out = [f'<section class="group" id="group-{_e(name)}"><h2>group {_e(name)}</h2>']
    if d is None:
        out.append('<p class="muted">no gate decision recorded</p>')
    else:
        verdict = '<span class="go">go</span>' if d.get("go") else '<span class="stop">stop</span>'
        out.append(f"<p>gate: {verdict}: {_e(d.get('reason'))}</p>")
    out.append(_publications_html(group))
    if group.get("error"):
        out.append(f'<p class="err">not evaluated: {_e(group["error"])}</p></section>')
        return "".join(out)
    out.append(
        f'<p class="muted">{_e(group.get("members"))} members, {_e(group.get("partitions"))} '
        f"partitions, lower bound on max lag {_e(_int(group.get('lower_bound_max_lag')))}, "
        f"best {_e(group.get('best'))}</p>"
    )
    out.append(lag_chart_svg(group))
    out.append(metrics_table_html(group))
    out.append(moves_table_html(group))
    out.append("</section>")
    return "".join(out)


def plan_html(plan: Mapping[str, Any], list_href: str = "../plans") -> str:
    """One plan: header (status, trigger and who, times, DAG run, snapshot, parameters), then
    every group."""
    meta = [
        ("status", plan.get("status")),
        ("trigger", _trigger(plan)),
        ("created", f"{_time(plan.get('created_at'))} UTC"),
        ("finished", f"{_time(plan.get('finished_at'))} UTC" if plan.get("finished_at") else "-"),
        ("DAG run", " / ".join(x for x in (plan.get("dag_id"), plan.get("run_id")) if x) or "-"),
        (
            "snapshot",
            f"{plan.get('snapshot_uri') or '-'} (taken {_time(plan.get('snapshot_at'))} UTC)"
            if plan.get("snapshot_uri") or plan.get("snapshot_at")
            else "-",
        ),
    ]
    rows = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in meta)
    params = plan.get("parameters")
    if params is not None:
        shown = json.dumps(params, sort_keys=True, default=str)
        rows += f"<dt>parameters</dt><dd><code>{_e(shown)}</code></dd>"
    if plan.get("error"):
        rows += f'<dt>error</dt><dd class="err">{_e(plan["error"])}</dd>'
    groups = plan.get("groups") or []
    body = "".join(group_html(g) for g in groups) or '<p class="muted">no groups recorded</p>'
    return page(
        f"lagassign: plan {plan.get('id')}",
        f'<p><a href="{_e(list_href)}">← all plans</a></p><h1>Plan {_e(plan.get("id"))}</h1>'
        f'<dl class="meta">{rows}</dl>{body}',
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
