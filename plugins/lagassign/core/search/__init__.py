"""The local search lag-optimal and drain-optimal share, and lag-optimal's numpy search for
very large groups.

* ``engine``: ``Search``, one layout under count rules whose costliest member exchanges
  partitions with cheaper ones until none helps; ``CountRule``, the counts it keeps.
* ``objectives``: what a member costs and which exchange or re-split between two members is
  best: ``LagObjective`` (its lag: lag-optimal) and ``TimeObjective`` (its catch-up time:
  drain-optimal).
* ``bulk``: lag-optimal's search for groups of at least 10^8 members x partitions (Kafka's
  benchmark point): every member above a level handled in one numpy round.
"""
