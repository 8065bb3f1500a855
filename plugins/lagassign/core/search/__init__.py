"""The local search lag-optimal and drain-optimal share, and lag-optimal's numpy rounds for
very large groups.

* ``state``: one layout under count rules (``CountRule``) as a search changes it.
* ``engine``: ``Search``, whose costliest member exchanges partitions with cheaper ones until
  none helps; what a member costs is its objective's.
* ``lag_objective`` (a member's lag: lag-optimal), with ``lag_splits`` (its re-splits and
  trades of several partitions), and ``time_objective`` (its catch-up time: drain-optimal).
* ``bulk``: lag-optimal's search for groups of at least 10^8 members x partitions (Kafka's
  benchmark point): every member above a level handled in one numpy round.
* ``rack_swaps``: the rack-locality polish of a finished plan.
"""
