"""The audit trail: plans, their groups' evaluations and the gate's decisions.

What a plan run leaves behind, so that anyone can later tell what was decided and why:
``plans`` (one row per run: time, DAG run, trigger and by whom, parameters, snapshot, status,
and for a failed run its error and ``failed_step``, the step it stopped at),
``plan_groups`` (per group: the evaluation's summary, or why it could not be evaluated),
``evaluations`` (per group and strategy: metrics and assignment, or the refusal) and
``decisions`` (per group: the gate's decision, its reason and numbers, and what publishing did).
Every method returns plain dicts (datetimes in UTC). Its rooms: ``plans`` (a run's row from
start to end), ``clusters`` (the cluster each plan belongs to), ``plan_reads`` (plans read back),
``group_history`` (one group across plans), ``evaluations`` (evaluations, decisions, outcomes).
"""

from __future__ import annotations

from .clusters import PlanClusters
from .evaluations import EvaluationRecords
from .group_history import GroupHistory
from .plan_reads import DEFAULT_LIST_LIMIT
from .plans import PlanRecords

__all__ = ["DEFAULT_LIST_LIMIT", "AuditTrail"]


class AuditTrail(PlanRecords, PlanClusters, GroupHistory, EvaluationRecords):
    """Plans, evaluations and decisions."""
