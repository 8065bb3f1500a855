"""Recording what a plan found and decided per group: evaluations, gate decisions and the
outcome of publishing."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import sqlalchemy as sa

from ..core.clock import utc_now
from ..core.results import GroupEvaluation, ResultShapeError, StrategyResult
from .base import StoreBase
from .errors import StoreError
from .schema import DECISION_FIELDS, GROUP_FIELDS, MAX_ERROR_CHARS, decisions_t, evaluations_t, plan_groups_t


class EvaluationRecords(StoreBase):
    """Each group's evaluation, the gate's decision on it and what publishing then did."""

    def record_evaluations(
        self, plan_id: int, evaluations: Iterable[GroupEvaluation | Mapping[str, Any]]
    ) -> int:
        """Record groups' evaluations (also as their dict form); return how many groups.

        A group that could not be evaluated carries its error. Re-recording a group for the
        same plan replaces it (task retries are harmless).
        """
        count = 0
        with self._engine.begin() as conn:
            self._plan_row(conn, plan_id)
            for given in evaluations:
                try:
                    ev = GroupEvaluation.of(given)
                except ResultShapeError as exc:
                    raise StoreError(f"plan {plan_id}: {exc}") from None
                name = ev.group
                for t in (evaluations_t, plan_groups_t):
                    conn.execute(sa.delete(t).where(t.c.plan_id == plan_id, t.c.group_name == name))
                conn.execute(
                    sa.insert(plan_groups_t).values(
                        plan_id=plan_id, group_name=name, **{k: getattr(ev, k) for k in GROUP_FIELDS}
                    )
                )
                rows = [_evaluation_row(plan_id, name, i, r) for i, r in enumerate(ev.results)]
                if rows:
                    conn.execute(sa.insert(evaluations_t), rows)
                count += 1
        return count

    def record_decision(self, plan_id: int, decision: Any) -> None:
        """Record the gate's decision for one group (a GateDecision or its ``to_dict()``)."""
        self.record_decisions(plan_id, [decision])

    def record_decisions(self, plan_id: int, decisions: Iterable[Any]) -> int:
        """Record the gate's decisions, also the ones that stop; re-recording replaces."""
        count = 0
        with self._engine.begin() as conn:
            self._plan_row(conn, plan_id)
            for d in decisions:
                d = d.to_dict() if hasattr(d, "to_dict") else dict(d)
                name, reason = d.get("group"), d.get("reason")
                if not isinstance(name, str) or not isinstance(reason, str) or "go" not in d:
                    raise StoreError(f"plan {plan_id}: a decision needs group, go and reason")
                conn.execute(
                    sa.delete(decisions_t).where(
                        decisions_t.c.plan_id == plan_id, decisions_t.c.group_name == name
                    )
                )
                conn.execute(
                    sa.insert(decisions_t).values(
                        plan_id=plan_id,
                        group_name=name,
                        decided_at=d.get("decided_at") or utc_now(),
                        **{k: d.get(k) for k in DECISION_FIELDS},
                    )
                )
                count += 1
        return count

    def record_outcome(self, plan_id: int, group: str, outcome: str) -> None:
        """What publishing did for a group that passed the gate: one line for people."""
        where = (decisions_t.c.plan_id == plan_id, decisions_t.c.group_name == group)
        with self._engine.begin() as conn:
            done = conn.execute(
                sa.update(decisions_t).where(*where).values(outcome=str(outcome)[:MAX_ERROR_CHARS])
            ).rowcount
        if not done:
            raise StoreError(f"plan {plan_id}, group {group}: no gate decision to attach an outcome to")


def _evaluation_row(plan_id: int, group: str, position: int, result: StrategyResult) -> dict[str, Any]:
    """The columns of one result: the result's own dict form, split over the frozen columns."""
    data = result.to_dict()
    metrics = result.metrics or {}
    return {
        "plan_id": plan_id,
        "group_name": group,
        "position": position,
        "strategy": result.strategy,
        "refused": result.refused,
        "max_lag": metrics.get("max_lag"),
        "imbalance": metrics.get("imbalance"),
        "moves": metrics.get("moves"),
        "metrics": data.get("metrics"),
        "assignment": data.get("assignment"),
        "withheld": data.get("withheld"),
        "unassigned": data.get("unassigned"),
    }
