"""A group's max lag across plans: now and under each plan, one point per plan on a time axis."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from ..formats import esc, lag_text, utc_text
from .colours import colour_of
from .frame import Frame, Series, axis_margin, svg_open, time_axis, value_axis, value_scale


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
    largest = [
        1,
        *(int(r["current_max_lag"]) for r in points),
        *(int(r.get("plan_max_lag") or 0) for r in points),
    ]
    scale = value_scale(max(largest))
    frame = Frame(760, 12 + 200 + 64, axis_margin(scale.labels), 24, 12, 200, scale)
    start, end = _at_least_ten_minutes(points[0]["created_at"], points[-1]["created_at"])
    out = [svg_open("chart history", frame, "max lag over time", "max member lag over time, in messages")]
    out += value_axis(frame, "max lag (messages)")
    out += time_axis(frame, start, end, frame.bottom + 16)
    x = frame.time_x(start, end)
    for series in (
        Series("current_max_lag", colour_of("current"), "now (current)"),
        Series("plan_max_lag", colour_of("lag-optimal"), "under the plan"),
    ):
        out += _plan_points(frame, x, [r for r in points if r.get(series.key) is not None], series)
    ly = frame.bottom + 38
    out.append(
        f'<rect x="{frame.left}" y="{ly}" width="12" height="3" fill="{colour_of("current")}"/>'
        f'<text x="{frame.left + 17}" y="{ly + 5}" font-size="12">max lag now (current)</text>'
        f'<rect x="{frame.left + 200}" y="{ly}" width="12" height="3" fill="{colour_of("lag-optimal")}"/>'
        f'<text x="{frame.left + 217}" y="{ly + 5}" font-size="12">under the plan (filled: published)</text>'
    )
    out.append("</svg>")
    return "".join(out)


def _at_least_ten_minutes(first: datetime, last: datetime) -> tuple[datetime, datetime]:
    """The span from ``first`` to ``last`` in UTC, widened about its middle to ten minutes at
    least, so that the time axis has labelled steps."""
    start, end = first.astimezone(UTC), last.astimezone(UTC)
    short = timedelta(minutes=10) - (end - start)
    if short > timedelta(0):
        start, end = start - short / 2, end + short / 2
    return start, end


def _plan_points(
    frame: Frame, x: Callable[[datetime], float], rows: list[dict[str, Any]], series: Series
) -> list[str]:
    """One series of the history: a line through its plans and a point per plan with its
    tooltip, filled when the plan was published."""
    key, colour = series.key, series.colour
    out = []
    if rows:
        path = " ".join(f"{x(r['created_at']):.1f},{frame.y(int(r[key])):.1f}" for r in rows)
        out.append(
            f'<polyline data-series="{key}" fill="none" stroke="{colour}" stroke-width="2" points="{path}"/>'
        )
    for r in rows:
        filled = colour if r.get("published") else "none"
        out.append(
            f'<circle cx="{x(r["created_at"]):.1f}" cy="{frame.y(int(r[key])):.1f}" r="4" fill="{filled}" '
            f'stroke="{colour}"><title>plan {esc(r["plan_id"])} ({esc(utc_text(r["created_at"]))} UTC): '
            f"{esc(series.name)} {esc(lag_text(r[key]))}</title></circle>"
        )
    return out
