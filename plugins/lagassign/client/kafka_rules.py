"""Kafka's two rules for consumers outside the group protocol, as ``PlanConsumer`` checks them.

* Kafka accepts their offset commits only while the group has no members of the group protocol
  (classic or consumer; Kafka 4 answers others with UNKNOWN_MEMBER_ID): ``refuse_if_members``
  raises ``GroupMembersError`` naming them, and ``refused_by_members`` tells such a refusal
  from other commit failures.
* Their committed offsets expire ``offsets.retention.minutes`` after their last commit:
  ``offsets_refresh_interval`` says how often a held partition's offset is committed again.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from ..core.errors import LagassignError
from ..core.publishing import members_text
from ..kafka.admin import live_members
from ..kafka.errors import BrokerUnavailableError

log = logging.getLogger(__name__)

#: the longest a held partition's committed offset goes without being committed again
MAX_OFFSETS_REFRESH_S = 3600.0
#: librdkafka's names of the answers Kafka gives a commit from outside the group protocol while
#: the group has members (Kafka 4: UNKNOWN_MEMBER_ID, for classic and consumer groups alike)
_MEMBERS_REFUSE = ("UNKNOWN_MEMBER_ID", "ILLEGAL_GENERATION", "STALE_MEMBER_EPOCH", "FENCED_MEMBER_EPOCH")


class GroupMembersError(LagassignError):
    """The group has live members of the group protocol, so Kafka refuses this consumer's
    commits (Kafka accepts commits from outside the protocol only while a group has none)."""


def refused_by_members(exc: BaseException) -> str | None:
    """The error's name when a failed commit is Kafka refusing it because the group has
    members; None for other failures."""
    err: Any = exc.args[0] if exc.args else None
    name = str(err.name()) if hasattr(err, "name") else ""
    return name if name in _MEMBERS_REFUSE else None


def refuse_if_members(
    admin_conf: Mapping[str, Any], group: str, instance_id: str, timeout: float, what: str | None = None
) -> None:
    """Raise ``GroupMembersError`` when the group has live members of the group protocol;
    after a refused commit (``what``) also when the cluster cannot say who they are."""
    try:
        members = live_members(admin_conf, [group], timeout).get(group, [])
    except BrokerUnavailableError as exc:
        log.warning("%s/%s: cannot check the group's members: %s", group, instance_id, exc)
        members = None
    if members == [] or (members is None and what is None):
        return  # none (a refused commit's member left since: the next commit tries again)
    where = f"{group}/{instance_id}: " + (f"{what}: " if what else "")
    if members:
        text = members_text(group, members)
        raise GroupMembersError(f"{where}{text}; give this consumer a group id of its own")
    raise GroupMembersError(
        f"{where}Kafka accepts commits from assign() consumers only while the group has no "
        "members of the group protocol"
    )


def offsets_refresh_interval(admin_conf: Mapping[str, Any], md: Any, timeout: float, who: str) -> float:
    """A quarter of the broker's ``offsets.retention.minutes`` in seconds, at most
    ``MAX_OFFSETS_REFRESH_S``; that maximum when the broker does not say (``md``: the
    cluster's metadata, whose first broker is asked; ``who`` names the instance in the log)."""
    from confluent_kafka.admin import AdminClient, ConfigResource

    try:
        broker = min(md.brokers)
        resource = ConfigResource("BROKER", str(broker))
        admin = AdminClient(dict(admin_conf))
        [future] = admin.describe_configs([resource], request_timeout=timeout).values()
        minutes = float(future.result(timeout=timeout + 5)["offsets.retention.minutes"].value)
    except Exception as exc:  # no DescribeConfigs permission, an old broker, no answer
        log.info("%s: offsets.retention.minutes unknown (%s)", who, exc)
        return MAX_OFFSETS_REFRESH_S
    return max(1.0, min(MAX_OFFSETS_REFRESH_S, minutes * 60 / 4))
