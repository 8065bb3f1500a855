"""A group's lag over time from the health job's records: total and largest-partition lag, a
band under it coloured by status, and the group's plans and failovers as vertical lines."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from ...core.outcome import Outcome
from ..formats import esc
from .colours import STATUS_CLASS, STATUS_COLOUR
from .frame import Frame, Series, axis_margin, svg_open, time_axis, value_axis, value_scale


class Event(Protocol):
    """Something that happened to a group, drawn as a vertical line: a plan or a failover."""

    @property
    def at(self) -> datetime: ...
    @property
    def kind(self) -> str: ...  # "plan" | "failover"
    @property
    def label(self) -> str: ...
    @property
    def outcome(self) -> Outcome | None: ...
    @property
    def detail(self) -> str: ...


#: The status band's height under the plot, in pixels.
_BAND = 10
#: The lag lines.
_LINES = (
    Series("total_lag", "#0969da", "total lag"),
    Series("max_lag", "#8250df", "largest partition", ' stroke-dasharray="5 3"'),
)
#: (colour, dash, name) of each line the legend explains.
_LEGEND = (
    *((line.colour, line.dash, line.name) for line in _LINES),
    ("#1a7f37", "", "plan published"),
    ("#6e7781", ' stroke-dasharray="2 3"', "plan, nothing published"),
    ("#cf222e", ' stroke-dasharray="6 3"', "failover"),
)


def lag_history_svg(
    series: Sequence[Mapping[str, Any]], marks: Sequence[Event], start: datetime, end: datetime
) -> str:
    """Total and largest-partition lag (messages) over time, on a time axis from ``start`` to
    ``end``; a band under it coloured by status; plans and failovers as vertical lines (solid:
    published, dotted: other outcomes, red dashed: failover), each with a tooltip."""
    points = [
        r for r in series if isinstance(r.get("observed_at"), datetime) and start <= r["observed_at"] <= end
    ]
    marks = [m for m in marks if start <= m.at <= end]
    if not points and not marks:
        return (
            '<p class="muted">Nothing recorded in this period: the health job records a point a minute.</p>'
        )
    # the axis starts where the records start when they cover less than the period (at least
    # ten minutes before the end): a young history is drawn across the chart, not in its corner
    first = min([*(r["observed_at"] for r in points), *(m.at for m in marks)])
    start = max(start, min(first - timedelta(minutes=1), end - timedelta(minutes=10)))
    scale = value_scale(max([1, *(int(r.get("total_lag") or 0) for r in points)]), ticks=4)
    frame = Frame(900, 26 + 200 + _BAND + 70, axis_margin(scale.labels, base=30), 20, 26, 200, scale)
    x = frame.time_x(start, end)
    title = "lag over time, in messages, with plans and failovers"
    out = [svg_open("chart lagchart", frame, "lag over time", title), *value_axis(frame, "lag (messages)")]
    out += time_axis(frame, start, end, frame.bottom + _BAND + 16)
    out += _status_band(frame, x, points, end)
    for line in _LINES:
        out += _lag_line(frame, x, points, line)
    out += _events(frame, x, marks)
    out += _legend(frame, frame.bottom + _BAND + 36)
    out.append("</svg>")
    return "".join(out)


def _status_band(
    frame: Frame, x: Callable[[datetime], float], points: list[Mapping[str, Any]], end: datetime
) -> list[str]:
    """Under the plot, each observation's status until the next one (gaps over 3 minutes stay empty)."""
    out = []
    for a, b in zip(points, [*points[1:], None], strict=False):  # (no points: no band)
        t1 = b["observed_at"] if b is not None else a["observed_at"] + timedelta(minutes=1)
        if (t1 - a["observed_at"]).total_seconds() > 180:
            t1 = a["observed_at"] + timedelta(minutes=1)
        cls = STATUS_CLASS.get(a.get("status") or "", "unknown")
        x0 = x(a["observed_at"])
        out.append(
            f'<rect class="band {cls}" x="{x0:.1f}" y="{frame.bottom + 1}" '
            f'width="{max(1.0, x(min(t1, end)) - x0 + 0.6):.1f}" height="{_BAND - 2}" '
            f'fill="{STATUS_COLOUR[cls]}"><title>{esc(a.get("status"))}</title></rect>'
        )
    return out


def _lag_line(
    frame: Frame, x: Callable[[datetime], float], points: list[Mapping[str, Any]], line: Series
) -> list[str]:
    """One lag series as lines, broken where the records have a gap over 15 minutes (a lone
    point as a dot)."""
    key, colour = line.key, line.colour
    segments: list[list[str]] = [[]]
    prev: datetime | None = None
    for r in points:
        if r.get(key) is None:
            continue
        if prev is not None and (r["observed_at"] - prev).total_seconds() > 900:
            segments.append([])  # no line across a gap in the records
        segments[-1].append(f"{x(r['observed_at']):.1f},{frame.y(float(r[key])):.1f}")
        prev = r["observed_at"]
    out = []
    for seg in segments:
        if len(seg) == 1:
            cx, cy = seg[0].split(",")
            out.append(f'<circle cx="{cx}" cy="{cy}" r="2.5" fill="{colour}"/>')
        elif seg:
            out.append(
                f'<polyline data-series="{key}" fill="none" stroke="{colour}" stroke-width="2"{line.dash} '
                f'points="{" ".join(seg)}"><title>{line.name}</title></polyline>'
            )
    return out


def _event_style(event: Event) -> tuple[str, str]:
    """(colour, dash) of an event's line: red dashed a failover, solid green a published plan,
    dotted grey any other plan."""
    if event.kind == "failover":
        return "#cf222e", ' stroke-dasharray="6 3"'
    if event.outcome is not None and event.outcome.kind == "published":
        return "#1a7f37", ""
    return "#6e7781", ' stroke-dasharray="2 3"'


def _events(frame: Frame, x: Callable[[datetime], float], events: list[Event]) -> list[str]:
    """A vertical line per event with its tooltip, and its label above the plot where it does
    not run into the previous one (the table under the chart lists them all)."""
    out = []
    last_label_x = -1e9
    for m in sorted(events, key=lambda m: m.at):
        mx = x(m.at)
        colour, dash = _event_style(m)
        tip = f"{m.label} ({m.at.astimezone(UTC).strftime('%Y-%m-%d %H:%M:%S')} UTC)" + (
            f": {m.detail}" if m.detail else ""
        )
        out.append(
            f'<line class="mark {m.kind}" data-kind="{m.kind}" x1="{mx:.1f}" x2="{mx:.1f}" '
            f'y1="{frame.top - 4}" y2="{frame.bottom}" stroke="{colour}"{dash}>'
            f"<title>{esc(tip)}</title></line>"
        )
        if mx - last_label_x < 90:
            continue
        text = esc(_short_label(m.label, 16))
        if mx > frame.width - frame.right - 90:  # near the right edge: the label ends at its line
            out.append(
                f'<text x="{mx - 3:.1f}" y="{frame.top - 8}" font-size="10" text-anchor="end" '
                f'fill="{colour}">{text}</text>'
            )
        else:
            out.append(
                f'<text x="{mx + 3:.1f}" y="{frame.top - 8}" font-size="10" fill="{colour}">{text}</text>'
            )
        last_label_x = mx
    return out


def _short_label(text: str, limit: int) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis."""
    s = " ".join(str(text or "").split())
    return s if len(s) <= limit else s[: limit - 1].rstrip() + "…"


def _legend(frame: Frame, y: int) -> list[str]:
    """The lines' legend in a row, and what the band's colours mean below it."""
    out = []
    lx = frame.left
    for colour, dash, text in _LEGEND:
        out.append(
            f'<line x1="{lx}" x2="{lx + 18}" y1="{y}" y2="{y}" stroke="{colour}" stroke-width="2"{dash}/>'
            f'<text x="{lx + 23}" y="{y + 4}" font-size="11">{esc(text)}</text>'
        )
        lx += 30 + 7 * len(text)
    out.append(
        f'<text x="{frame.left}" y="{y + 22}" font-size="11">band: status at each observation '
        "(green OK, yellow WARN/SWITCHING, orange STALL/OVERLOAD/UNCONSUMED, red STOP/DEAD)</text>"
    )
    return out
