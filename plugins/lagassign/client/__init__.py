"""Run a consumer in manual ``assign()`` mode from the plans lagassign publishes.

``PlanConsumer`` wraps a confluent-kafka ``Consumer``. Given its group and instance id it reads
the group's newest plan from the compacted plans topic, consumes the partitions the plan gives
it, and follows the topic to every newer version. Example::

    from lagassign.client import PlanConsumer

    conf = {"bootstrap.servers": "kafka:9092", "auto.offset.reset": "earliest"}
    with PlanConsumer(conf, group="orders-workers", instance_id="w0") as consumer:
        while running:
            msg = consumer.poll(1.0)
            if msg is None:
                continue
            handle(msg)          # processed once poll() is called again

What it guarantees, with Kafka's own consumer group protocol as the yardstick:

* **Commits** (Kafka's auto-commit): processed offsets are committed every
  ``auto.commit.interval.ms`` (default 5000) from ``poll()``, at every switch and at ``close()``.
  A message returned by ``poll()`` counts as processed when ``poll()`` (or ``commit()``/
  ``close()``) is called next. A crash replays at most one interval of work; the lag a planner
  reads from the committed offsets is real. ``enable.auto.commit=false`` leaves the interval
  commits to you (``commit()``); switches and ``close()`` still commit.
* **Handover without duplicates** (Kafka's cooperative rebalancing: revoke before assign):
  when a plan moves a partition between live instances, the giver stops fetching it and commits
  what it processed, marked *released* under the new version, before it announces that version;
  the taker starts the partition only then, or once the giver is known dead (``handover``
  has the rule). Every commit carries that marker in its metadata.
* **Liveness** (Kafka Connect's status topic): a background thread announces this instance on
  the compacted status topic every ``heartbeat.interval.ms`` (default 3000): plan version in
  force, partitions, pending partitions, processed messages per second, lag, time. ``close()``
  writes a tombstone. An instance silent for ``session.timeout.ms`` (default 30000) is dead;
  so is one whose application has not called ``poll()`` for ``max.poll.interval.ms`` (default
  300000: it stops heartbeating). ``lagassign watch`` (or the Airflow ``lagassign_failover``
  DAG) then publishes a plan without it; newcomers are given a share the same way.
* Under one plan version an instance only returns messages of the partitions that version gives
  it (messages fetched before a switch took a partition away are dropped).

Edge cases: no plans topic yet, or no plan for the group: nothing is assigned and ``poll()``
returns None while it keeps watching. A plan record that does not parse, or whose version is not
newer than the one in force, is ignored (logged). A partition without a committed offset starts
at ``auto.offset.reset`` (resolved to an offset, so it can be committed at once). A wrong
password or a TLS failure raises ``KafkaAuthError`` from ``poll()``. A group with live members
of the group protocol (a ``subscribe()`` consumer of the same group id, either protocol) raises
``GroupMembersError`` from ``poll()``: Kafka refuses commits from outside the protocol while a
group has members. Offsets of partitions that receive nothing are committed again before
Kafka's offset retention could expire them (``PlanConsumer``'s docstring; docs/kafka4.md).

Two librdkafka consumers per instance: one for the data, one that follows the plans topic and
the group's status partition (assign() only; it never commits). Sharing one would put a new plan
behind all the data librdkafka has prefetched, so a switch would wait for a backlog that is no
longer this instance's to process.
"""

from .consumer import PlanConsumer
from .kafka_rules import GroupMembersError

__all__ = ["GroupMembersError", "PlanConsumer"]
