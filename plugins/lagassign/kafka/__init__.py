"""The Kafka edge: the only code of lagassign that talks to Kafka (through confluent-kafka).

* ``config``: librdkafka settings from flags, a properties file and the environment; ``redact``.
* ``groupsfile``: the YAML file that declares groups running in manual ``assign()`` mode.
* ``snapshot``: AdminClient snapshot of groups, offsets and members into the Parquet tables.
* ``plans``: static assignments on a compacted topic (publish, read back) and JSON export.
* ``commands``: the ``snapshot`` and ``publish`` subcommands.

Nothing here is imported by the core; ``confluent_kafka`` is imported by the modules that need
it, never by ``commands`` at import time, so ``lagassign assign`` starts without it.
"""
