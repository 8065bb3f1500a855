"""Errors of the Kafka edge that people can cause and fix; each is one line on stderr."""

from typing import Any

from ..core.errors import LagassignError
from ..core.plans import PlanError

__all__ = ["BrokerUnavailableError", "GroupsFileError", "KafkaAuthError", "KafkaConfigError", "PlanError"]


class KafkaConfigError(LagassignError):
    """A bad librdkafka setting (--config, properties file, environment)."""


class BrokerUnavailableError(LagassignError):
    """The cluster did not answer within the bounded retries and timeouts."""


class GroupsFileError(LagassignError):
    """The groups file (assign()-mode groups) cannot be read or is malformed."""


class KafkaAuthError(LagassignError):
    """The cluster refused our credentials or the TLS handshake failed: retrying will not help."""


def reason(exc: BaseException | None) -> str:
    """librdkafka's message of an exception (``KafkaError.str()``), else the exception's text."""
    err: Any = exc.args[0] if exc is not None and exc.args else None
    if err is not None and hasattr(err, "str"):
        return str(err.str())
    return str(exc) or type(exc).__name__
