"""The strategy registry: name (a contract) -> class, from the classes' own names.

Adding a strategy is one module (a ``Strategy`` subclass with a worked example in its
docstring) and one line in ``STRATEGIES``.
"""

from __future__ import annotations

from ..errors import StrategyOptionError, UnknownStrategyError
from .base import Strategy
from .constrained_sticky import ConstrainedStickyStrategy
from .cooperative_sticky import CooperativeStickyStrategy
from .current import CurrentStrategy
from .drain_optimal import DrainOptimalStrategy
from .fair import FairStrategy
from .lag import LagStrategy
from .lag_aware import LagAwareStrategy
from .lag_optimal import LagOptimalStrategy
from .range import RangeStrategy
from .roundrobin import RoundRobinStrategy
from .sticky import StickyStrategy
from .uniform import UniformStrategy

#: Every strategy, in the order reports list them. Each class carries its own ``name``.
STRATEGIES: tuple[type[Strategy], ...] = (
    RangeStrategy,
    RoundRobinStrategy,
    StickyStrategy,
    CooperativeStickyStrategy,
    UniformStrategy,
    ConstrainedStickyStrategy,
    FairStrategy,
    LagStrategy,
    LagAwareStrategy,
    LagOptimalStrategy,
    DrainOptimalStrategy,
    CurrentStrategy,
)
REGISTRY: dict[str, type[Strategy]] = {cls.name: cls for cls in STRATEGIES}


def strategy_names() -> list[str]:
    """Every registered strategy, in registry order."""
    return list(REGISTRY)


def get_strategy(name: str, **options: object) -> Strategy:
    """An instance of the named strategy, configured with ``options``."""
    try:
        cls = REGISTRY[name]
    except KeyError:
        raise UnknownStrategyError(f"unknown strategy {name!r}; known: {', '.join(REGISTRY)}") from None
    unknown = sorted(set(options) - set(cls.options))
    if unknown:
        takes = ", ".join(cls.options) or "none"
        raise StrategyOptionError(f"strategy {name} takes no option {unknown[0]!r} (options: {takes})")
    return cls(**options)


def applicable_options(name: str, options: dict[str, object]) -> dict[str, object]:
    """The subset of ``options`` (None values dropped) that the named strategy takes."""
    cls = REGISTRY.get(name)
    return {k: v for k, v in options.items() if cls and k in cls.options and v is not None}


#: the assignor names Kafka reports for a group -> the strategy that reproduces it. Classic
#: groups report their client assignor's protocol name (Java's and librdkafka's are the same);
#: consumer groups (KIP-848) the broker's: ``uniform``, or ``range`` (reproduced by ``range``).
KAFKA_ASSIGNORS: dict[str, dict[str, str]] = {
    "classic": {
        "range": "range",
        "roundrobin": "roundrobin",
        "sticky": "sticky",
        "cooperative-sticky": "cooperative-sticky",
    },
    "consumer": {"uniform": "uniform", "range": "range"},
}


def kafka_counterpart(group_type: str | None, assignor: str | None) -> str | None:
    """The strategy that does what the cluster does for a group of this type and assignor: the
    row to compare the others with; None for an unknown or custom assignor. A group whose type
    the broker did not report (brokers before Kafka 4) is taken as classic.

    >>> kafka_counterpart("consumer", "uniform"), kafka_counterpart(None, "cooperative-sticky")
    ('uniform', 'cooperative-sticky')
    >>> kafka_counterpart("classic", "my-assignor") is None
    True
    """
    if not assignor:
        return None
    return KAFKA_ASSIGNORS.get(group_type or "classic", {}).get(assignor)


def kafka_choice(group_type: str | None, assignor: str | None) -> tuple[str, str] | None:
    """(strategy, label) of the row that is what Kafka itself would do for the group: the
    broker's choice for a ``consumer``-type group (KIP-848: the broker assigns), Kafka's choice
    for a classic one (the client assignor its members run); None when no strategy does it.

    >>> kafka_choice("consumer", "uniform"), kafka_choice("classic", "range")
    (('uniform', "broker's choice"), ('range', "Kafka's choice"))
    """
    twin = kafka_counterpart(group_type, assignor)
    if twin is None:
        return None
    return twin, "broker's choice" if group_type == "consumer" else "Kafka's choice"


def cluster_text(group_type: str | None, assignor: str | None) -> str | None:
    """What the cluster runs for a group, in one line for the plans page and ``plans show``;
    None when the snapshot did not say (case files, synthetic snapshots, older plans).

    >>> cluster_text("consumer", "uniform")
    "group type consumer · assignor uniform · Kafka's row: uniform"
    >>> cluster_text("classic", "my-assignor")
    'group type classic · assignor my-assignor (no lagassign strategy reproduces it)'
    """
    if not group_type and not assignor:
        return None
    parts = [f"group type {group_type}"] if group_type else []
    if assignor:
        parts.append(f"assignor {assignor}")
    text = " · ".join(parts)
    twin = kafka_counterpart(group_type, assignor)
    if twin is not None:
        return f"{text} · Kafka's row: {twin}"
    return f"{text} (no lagassign strategy reproduces it)" if assignor else text


__all__ = [
    "KAFKA_ASSIGNORS",
    "REGISTRY",
    "Strategy",
    "applicable_options",
    "cluster_text",
    "get_strategy",
    "kafka_choice",
    "kafka_counterpart",
    "strategy_names",
]
