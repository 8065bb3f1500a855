"""lagassign: lag-aware rebalance plans for Kafka consumer groups.

The core needs only the standard library: ``assign`` and ``evaluate`` take case objects
(DESIGN.md's contract) and return JSON-shaped results.
"""

from .api import assign, evaluate
from .errors import LagassignError
from .strategies import strategy_names

__version__ = "0.1.0"

__all__ = ["LagassignError", "__version__", "assign", "evaluate", "strategy_names"]
