"""The charts' colours: one fixed colour per strategy and per group status, wherever drawn."""

from __future__ import annotations

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

#: Group status -> CSS class of its badge and chart band.
STATUS_CLASS = {
    "OK": "ok",
    "UNKNOWN": "unknown",
    "WARN": "warn",
    "SWITCHING": "warn",
    "OVERLOAD": "bad",
    "STALL": "bad",
    "UNCONSUMED": "bad",
    "DEAD": "dead",
    "STOP": "dead",
}
STATUS_COLOUR = {
    "ok": "#2da44e",
    "unknown": "#8c959f",
    "warn": "#d4a72c",
    "bad": "#e16f24",
    "dead": "#cf222e",
}


def colour_of(strategy: str) -> str:
    """The strategy's fixed colour (an unknown name gets a stable spare one)."""
    if strategy in STRATEGY_COLOURS:
        return STRATEGY_COLOURS[strategy]
    return _SPARE_COLOURS[sum(strategy.encode()) % len(_SPARE_COLOURS)]
