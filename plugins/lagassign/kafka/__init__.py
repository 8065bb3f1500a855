"""The Kafka edge: the only code of lagassign that talks to Kafka (through confluent-kafka).

* Reaching a cluster: ``config`` (librdkafka settings from flags, a properties file and the
  environment; ``redact``), ``connection`` (fail fast on credentials and TLS), ``cluster``
  (which cluster it is), ``errors``.
* The snapshot: ``snapshot`` (the entry point: reads in order, rows, manifest),
  ``snapshot_reads``, ``snapshot_rows`` (pure), ``admin`` (bounded, counted AdminClient calls,
  kept in flight by ``fanout``), ``groupdescribe`` (KIP-848 groups from their coordinators; its
  bytes in ``groupdescribe_wire``), ``overview`` (every group, for the groups overview).
* lagassign's own topics: ``plans`` (static assignments on a compacted topic), ``status``
  (instances' announcements), ``topicadmin`` (finding and creating them), ``reader`` (reading
  one to its end), ``follower`` (following both).
* ``groupsfile`` (the YAML file that declares groups running in manual ``assign()`` mode),
  ``textfiles`` (reading a file a user named), and ``applier`` (carrying out a publish decision)
  through the store's ``ledger_port``.

Nothing here is imported by the core; ``confluent_kafka`` is imported inside the functions that
need it, so that ``lagassign assign`` and an application importing ``PlanConsumer`` start
without it.
"""
