"""Kafka's own assignors replayed, step for step, as yardsticks and starts for lagassign's
sticky strategies (the fidelity tests compare them with Kafka's Java code).

* ``general`` and ``constrained``: the two builders of Kafka's sticky assignor.
* ``cooperative``: the cooperative protocol's rounds over either builder.
* ``racks``: Kafka's rack rules (KIP-881), sticky's start with racks.
* ``java_hash``: the iteration order of Java's hash maps and sets, which the builders follow.
* ``dominance``: the layout sticky returns, one that matches or beats Kafka's per group.
"""
