"""What every chart is drawn on: a value scale on round steps, the frame (size, margins, plot
area), the value axis and a time axis whose labels never collide."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from ..formats import esc, fmt_int, iso_utc


@dataclass(frozen=True)
class Scale:
    """A value axis from 0 on round steps: the step, the top and each step's label."""

    step: float
    top: float
    labels: list[str]


def value_scale(largest: float, ticks: int = 5) -> Scale:
    """About ``ticks`` round steps (1, 2, 2.5 or 5 times a power of ten) up to ``largest``."""
    step = 1.0
    if largest > 0:
        raw = largest / ticks
        power = 10 ** math.floor(math.log10(raw))
        step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    top = step * max(1, math.ceil(largest / step))
    return Scale(step, top, [fmt_int(step * i) for i in range(round(top / step) + 1)])


def axis_margin(labels: Iterable[str], base: int = 26) -> int:
    """The left margin that fits the widest value label."""
    return base + 7 * max((len(x) for x in labels), default=1)


@dataclass(frozen=True)
class Frame:
    """A chart's size and its plot area (margins left, right and top; the plot's height)."""

    width: int
    height: int
    left: int
    right: int
    top: int
    plot_h: int
    scale: Scale

    @property
    def plot_w(self) -> int:
        return self.width - self.left - self.right

    @property
    def bottom(self) -> int:
        return self.top + self.plot_h

    def y(self, value: float) -> float:
        """The vertical position of a value."""
        return self.top + self.plot_h - self.plot_h * value / self.scale.top

    def time_x(self, start: datetime, end: datetime) -> Callable[[datetime], float]:
        """The horizontal position of a time between ``start`` and ``end``."""
        span = max((end - start).total_seconds(), 60.0)
        return lambda t: self.left + self.plot_w * (t - start).total_seconds() / span


@dataclass(frozen=True)
class Series:
    """One series of a time chart: the record field it draws, its colour, name and dash."""

    key: str
    colour: str
    name: str
    dash: str = ""


def svg_open(kind: str, frame: Frame, label: str, title: str) -> str:
    """The ``<svg>`` start tag of a chart of class ``kind`` and its title."""
    w, h = frame.width, frame.height
    return (
        f'<svg class="{esc(kind)}" xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
        f'viewBox="0 0 {w} {h}" role="img" aria-label="{esc(label)}"><title>{esc(title)}</title>'
    )


# -- axes ---------------------------------------------------------------------------------------


def value_axis(frame: Frame, name: str) -> list[str]:
    """A grid line and label per step of the value scale, and the axis' name turned upright."""
    out = []
    for i, label in enumerate(frame.scale.labels):
        y = frame.y(frame.scale.step * i)
        out.append(
            f'<line class="grid" x1="{frame.left}" x2="{frame.width - frame.right}" y1="{y:.1f}" '
            f'y2="{y:.1f}" stroke="#eaeef2"/>'
        )
        out.append(
            f'<text x="{frame.left - 6}" y="{y + 4:.1f}" font-size="11" text-anchor="end">{esc(label)}</text>'
        )
    mid = f"{frame.top + frame.plot_h / 2:.0f}"
    out.append(
        f'<text x="12" y="{mid}" font-size="11" transform="rotate(-90 12 {mid})" '
        f'text-anchor="middle">{esc(name)}</text>'
    )
    return out


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
_TICK_FORMAT = {"hm": "%H:%M", "mdhm": "%m-%d %H:%M", "md": "%m-%d", "ymd": "%Y-%m-%d"}


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


def time_axis(frame: Frame, start: datetime, end: datetime, label_y: int) -> list[str]:
    """A grid line and a label per tick of the time axis; the page's script shows each label
    in the Airflow UI's timezone (``data-t``: the tick in UTC, ``data-f``: its format)."""
    x = frame.time_x(start, end)
    ticks, fmt = time_ticks(start, end, frame.plot_w)
    out = []
    for t in ticks:
        tx = x(t)
        out.append(
            f'<line class="grid" x1="{tx:.1f}" x2="{tx:.1f}" y1="{frame.top}" y2="{frame.bottom}" '
            'stroke="#eaeef2"/>'
        )
        out.append(
            f'<text class="tick" x="{tx:.1f}" y="{label_y}" font-size="11" text-anchor="middle" '
            f'data-t="{iso_utc(t)}" data-f="{fmt}">{esc(t.strftime(_TICK_FORMAT[fmt]))}</text>'
        )
    return out
