"""Lag per consumer under each strategy of a plan: grouped bars, one colour per strategy."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ..formats import esc, fmt_int, lag_text
from ..plan_facts import BASELINE, chart_series, target_strategy
from .colours import colour_of
from .frame import Frame, Scale, axis_margin, svg_open, value_axis, value_scale


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
    scale = value_scale(
        max([0, *(v for _, lags in series for v in lags.values()), *([bound] if bound else [])])
    )
    legend = [(name, colour_of(name)) for name, _ in series] + ([("lower bound", "")] if bound else [])
    frame, bar, columns = _bar_frame(scale, len(members), len(series), len(legend), every)
    kind = "every strategy" if every else "current, chosen and lower bound"
    title = f"lag per consumer in messages, group {group.get('group')} ({kind})"
    out = [svg_open("chart", frame, title, title), *value_axis(frame, "lag (messages)")]
    out += _bars(frame, members, series, bar, chosen)
    y0 = frame.y(0)
    out.append(
        f'<line class="axis" x1="{frame.left}" x2="{frame.width - frame.right}" y1="{y0:.1f}" '
        f'y2="{y0:.1f}" stroke="#57606a"/>'
    )
    if bound:
        out += _bound_line(frame, bound)
    go = bool((group.get("decision") or {}).get("go"))
    marks = (
        {chosen: " (chosen)" if go else " (candidate, not applied)"} if chosen and chosen != BASELINE else {}
    )
    out += _bar_legend(frame, legend, columns, marks)
    out.append("</svg>")
    return "".join(out)


def _bar_frame(scale: Scale, members: int, series: int, legend: int, every: bool) -> tuple[Frame, int, int]:
    """The bar chart's frame (wide enough for every member's bars, at least 720 px), each bar's
    width and the legend's columns."""
    bar, gap, right, top, plot_h = 9, 22, 16, 12, 240
    left = axis_margin(scale.labels)
    width = max(720, left + right + members * (series * bar + gap))
    group_w = (width - left - right) / members
    bar = max(bar, min(28 if not every else 18, int((group_w - gap) / series)))
    columns = max(1, (width - left - right) // 230)
    legend_h = 20 * math.ceil(legend / columns) + 8
    return Frame(width, top + plot_h + 44 + legend_h, left, right, top, plot_h, scale), bar, columns


def _bars(
    frame: Frame, members: list[str], series: list[tuple[str, dict[str, int]]], bar: int, chosen: str | None
) -> list[str]:
    """Per member its bars side by side, one per strategy, and the member's name below."""
    out = []
    group_w = frame.plot_w / len(members)
    for mi, member in enumerate(members):
        x0 = frame.left + mi * group_w + (group_w - len(series) * bar) / 2
        for si, (name, lags) in enumerate(series):
            v = lags.get(member, 0)
            outline = (
                ' stroke="currentColor" stroke-width="1.5"' if name == chosen and name != BASELINE else ""
            )
            out.append(
                f'<rect data-strategy="{esc(name)}" x="{x0 + si * bar:.1f}" y="{frame.y(v):.1f}" '
                f'width="{bar - 1}" height="{frame.y(0) - frame.y(v):.1f}" fill="{colour_of(name)}"{outline}>'
                f"<title>{esc(member)} under {esc(name)}: {esc(lag_text(v))}</title></rect>"
            )
        label_x = x0 + len(series) * bar / 2
        out.append(
            f'<text x="{label_x:.1f}" y="{frame.bottom + 16}" font-size="11" text-anchor="middle">'
            f"{esc(member)}</text>"
        )
    return out


def _bound_line(frame: Frame, bound: float) -> list[str]:
    """The dashed line at the lower bound on max lag, labelled at its right end."""
    y = frame.y(bound)
    return [
        f'<line class="bound" x1="{frame.left}" x2="{frame.width - frame.right}" y1="{y:.1f}" y2="{y:.1f}" '
        f'stroke="#1f2328" stroke-dasharray="5 4"><title>lower bound on max lag: '
        f"{esc(lag_text(bound))}</title></line>",
        f'<text x="{frame.width - frame.right - 2}" y="{y - 4:.1f}" font-size="10" text-anchor="end">'
        f"lower bound {esc(fmt_int(bound))}</text>",
    ]


def _bar_legend(
    frame: Frame, legend: list[tuple[str, str]], columns: int, marks: Mapping[str, str]
) -> list[str]:
    """The legend in ``columns`` columns below the plot: a swatch per strategy (a dashed line
    for the lower bound) and its name, with ``marks`` added after some names."""
    out = []
    ly = frame.bottom + 34
    col_w = frame.plot_w / columns
    for i, (name, colour) in enumerate(legend):
        lx = frame.left + (i % columns) * col_w
        yy = ly + 20 * (i // columns)
        if colour:
            out.append(f'<rect x="{lx:.1f}" y="{yy}" width="12" height="12" fill="{colour}"/>')
        else:
            out.append(
                f'<line class="bound" x1="{lx:.1f}" x2="{lx + 12:.1f}" y1="{yy + 6}" y2="{yy + 6}" '
                'stroke="#1f2328" stroke-dasharray="4 2"/>'
            )
        out.append(
            f'<text x="{lx + 17:.1f}" y="{yy + 10}" font-size="12">{esc(name + marks.get(name, ""))}</text>'
        )
    return out
