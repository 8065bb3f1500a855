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


__all__ = ["REGISTRY", "Strategy", "applicable_options", "get_strategy", "strategy_names"]
