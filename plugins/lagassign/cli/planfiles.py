"""Plan files: a plan to publish (``lagassign assign`` output plus its group) and JSON exports
of published plans, for people who ship assignments another way."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..core.plans import Plan, PlanError, normalize_members


def read_plan_file(path: str | Path) -> dict[str, Any]:
    """A plan file to publish: ``lagassign assign`` output plus ``group`` (and ``snapshot_at``)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise PlanError(f"cannot read plan file {path}: {exc.strerror}") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise PlanError(f"plan file {path} is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise PlanError(f"plan file {path}: expected a JSON object")
    group, strategy = data.get("group"), data.get("strategy")
    if not isinstance(group, str) or not group:
        raise PlanError(f"plan file {path}: needs 'group' (the consumer group id)")
    if not isinstance(strategy, str) or not strategy:
        raise PlanError(f"plan file {path}: needs 'strategy'")
    members = normalize_members(data.get("assignment"), f"plan file {path}")
    snapshot_at = data.get("snapshot_at")
    if snapshot_at is not None and not isinstance(snapshot_at, str):
        raise PlanError(f"plan file {path}: 'snapshot_at' must be a timestamp string")
    return {"group": group, "strategy": strategy, "members": members, "snapshot_at": snapshot_at}


def export_json(plan: Plan, path: str | Path) -> None:
    """Write one plan as a JSON file (for people who ship assignments another way)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(asdict(plan), indent=2, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(path)


def read_export(path: str | Path) -> Plan | None:
    """The plan of an earlier export, or None when the file does not exist."""
    path = Path(path)
    if not path.exists():
        return None
    try:
        return Plan.from_value(path.read_text(encoding="utf-8"))
    except (PlanError, OSError) as exc:
        raise PlanError(f"existing export {path} is not a plan: {exc}") from None
