"""lagassign: lag-aware rebalance plans for Kafka consumer groups.

The core needs only the standard library: ``assign`` and ``evaluate`` take case objects
(the contract in docs/ARCHITECTURE.md) and return JSON-shaped results.
"""

from .core.errors import LagassignError
from .core.evaluate import assign, evaluate
from .core.strategies import strategy_names

__version__ = "0.1.0"

__all__ = ["LagassignError", "__version__", "assign", "evaluate", "strategy_names"]
