"""Errors of the Kafka edge that people can cause and fix; each is one line on stderr."""

from ..errors import LagassignError


class KafkaConfigError(LagassignError):
    """A bad librdkafka setting (--config, properties file, environment)."""


class BrokerUnavailableError(LagassignError):
    """The cluster did not answer within the bounded retries and timeouts."""


class GroupsFileError(LagassignError):
    """The groups file (assign()-mode groups) cannot be read or is malformed."""


class PlanError(LagassignError):
    """A plan file or record is malformed, or a plan could not be published or read."""
