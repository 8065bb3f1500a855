"""Errors that lagassign reports to people as one clear line."""


class LagassignError(Exception):
    """Base of every error the CLI turns into one line on stderr and a non-zero exit."""


class CaseError(LagassignError):
    """The case (a group's members and partitions) is malformed or inconsistent."""


class UnknownStrategyError(LagassignError):
    """A strategy name that is not in the registry."""


class StrategyRefusedError(LagassignError):
    """A strategy cannot serve this group (for example mixed subscriptions for constrained-sticky)."""


class StrategyOptionError(LagassignError):
    """A strategy option (such as max_moves) with a value the strategy cannot use."""
