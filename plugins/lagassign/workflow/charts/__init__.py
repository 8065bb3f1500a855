"""The pages' charts as inline SVG strings, each drawn in the same steps (scale, frame, axes,
series, labels): lag per consumer under each strategy, a group's max lag across plans, and a
group's lag over time with its plans and failovers.

Every value from the store is escaped and nothing is loaded from anywhere. The charts return
plain ``str``, which callers put into their HTML as it is.
"""

from .colours import STATUS_CLASS, STATUS_COLOUR, STRATEGY_COLOURS, colour_of
from .frame import time_ticks
from .group_lag import Event, lag_history_svg
from .plan_history import history_chart_svg
from .strategies import lag_chart_svg

__all__ = [
    "STATUS_CLASS",
    "STATUS_COLOUR",
    "STRATEGY_COLOURS",
    "Event",
    "colour_of",
    "history_chart_svg",
    "lag_chart_svg",
    "lag_history_svg",
    "time_ticks",
]
