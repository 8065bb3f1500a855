"""The ids of lagassign's DAGs, named once: the DAG factories build them, the pages trigger,
follow and unpause them, and the listener writes their runs' notes."""

from __future__ import annotations

REBALANCE = "lagassign_rebalance"  # on demand, from the trigger form or the pages' re-plan
DAILY = "lagassign_daily"  # the scheduled plan
REVIEW = "lagassign_review"  # publish a reviewed plan, roll back to a published version
FAILOVER = "lagassign_failover"  # a membership change's plan, started by the triggerer
HEALTH = "lagassign_health"  # the groups' health, every minute

#: the DAGs whose runs make or publish plans
PLANNING = (REBALANCE, DAILY, REVIEW, FAILOVER)
