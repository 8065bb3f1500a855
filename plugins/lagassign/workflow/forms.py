"""The trigger forms of the lagassign DAGs, and where a scheduled run's settings come from.

``rebalance_params`` is the form of both planning DAGs (``lagassign_rebalance``, and
``lagassign_daily`` for runs triggered by hand); a scheduled ``lagassign_daily`` run takes the
form's defaults, then the optional JSON Variable ``lagassign_daily_params``, then ``apply`` from
the Variable ``lagassign_apply`` (``daily_settings``). ``review_params`` is the form of
``lagassign_review``, which the plans page fills in.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from airflow.sdk import Param, Variable

from ..core.gate import DEFAULT_MIN_IMPROVEMENT, DEFAULT_THRESHOLD
from ..core.lag import RESET_POLICIES
from ..core.strategies import strategy_names
from . import tasks


def rebalance_params(daily: bool = False) -> dict[str, Param]:
    """The trigger form of both planning DAGs; every field can be submitted with its default.

    Rules the form cannot show without changing what was typed live in the descriptions and are
    checked by the start task, which records a failed plan with a one-line reason: Airflow's form
    silently clamps a number to a schema ``minimum`` (threshold "0.5" became 1), and a schema
    ``format: regex`` error comes back after Trigger as a raw JSON-schema dump. Optional text
    fields allow null: the form treats an empty string as a missing required value.
    """
    return {
        **_selection_params(strategy_names()),
        **_gate_params(),
        **_publishing_params(daily),
        **_input_params(),
    }


def _optional(kind: str, title: str, description: str) -> Param:
    """A field that may be left empty (null: the form treats an empty string as missing), of
    JSON-schema type ``kind``."""
    return Param(None, type=["null", kind], title=title, description=description)


def _dry_run() -> Param:
    """Both forms' dry run switch."""
    return Param(
        False, type="boolean", title="Dry run", description="Go through publishing without writing to Kafka."
    )


def _selection_params(names: list[str]) -> dict[str, Param]:
    """Which groups and which strategies a run evaluates."""
    return {
        "groups": Param(
            ".*",
            type="string",
            title="Groups",
            description="Regular expression a group id must match in full (.* = every group). "
            "Checked when the run starts.",
        ),
        "strategies": Param(
            names,
            type="array",
            title="Strategies",
            items={"type": "string", "enum": names},
            examples=names,
            minItems=1,
            uniqueItems=True,
            description="Strategies to evaluate (current is always evaluated).",
        ),
    }


def _gate_params() -> dict[str, Param]:
    """The gate's thresholds and the limits on a plan."""
    return {
        "threshold": Param(
            DEFAULT_THRESHOLD,
            type="number",
            title="Imbalance threshold",
            description=f"A number ≥ 1.0 (default {DEFAULT_THRESHOLD}): go on only when the current "
            "assignment's max/mean member lag exceeds it. 1.10 = the busiest consumer may be 10% above "
            "the mean.",
        ),
        "min_improvement": Param(
            DEFAULT_MIN_IMPROVEMENT,
            type="number",
            title="Minimum improvement",
            description=f"A fraction in [0, 1) (default {DEFAULT_MIN_IMPROVEMENT}): how much the best "
            "plan must lower the max member lag, 0.05 = 5%.",
        ),
        "max_moves": _optional(
            "integer",
            "Max moves",
            "A whole number ≥ 0: most partitions a plan may move (empty: no limit).",
        ),
        "max_catch_up_s": _optional(
            "number",
            "Max catch-up (s)",
            "Seconds > 0: groups whose members state capacities also go on when their "
            "slowest member needs longer than this many seconds to catch up (empty: off).",
        ),
        "exact_budget": _optional(
            "number",
            "Exact budget (s)",
            "Seconds ≥ 0, lag-optimal and drain-optimal: exact solving per group to "
            "prove the plan optimal or improve it (empty: off; needs the certify extra, highspy).",
        ),
    }


def _publishing_params(daily: bool) -> dict[str, Param]:
    """Whether plans that pass the gate are published, and how."""
    apply_note = (
        " Scheduled runs take it from the Airflow Variable lagassign_apply (default off)." if daily else ""
    )
    return {
        "apply": Param(
            False,
            type="boolean",
            title="Apply",
            description="Publish plans that pass the gate (off: plan and record only)." + apply_note,
        ),
        "dry_run": _dry_run(),
    }


def _input_params() -> dict[str, Param]:
    """What the snapshot reads beside the cluster: declared groups and the reset policy."""
    return {
        "groups_file": _optional(
            "string",
            "Groups file",
            "Optional YAML file declaring groups in manual assign() mode that do not "
            "announce themselves on the status topic (empty: the workers' LAGASSIGN_GROUPS_FILE, if "
            "set; else none).",
        ),
        "auto_offset_reset": Param(
            "latest",
            type="string",
            enum=list(RESET_POLICIES),
            title="auto.offset.reset",
            description="Reset policy assumed for groups that declare none.",
        ),
    }


def daily_settings(
    defaults: Mapping[str, Any],
    variables: Mapping[str, Any],
    apply_variable: str | None,
    conf: Mapping[str, Any] | None,
) -> tuple[dict[str, Any], dict[str, str]]:
    """The settings of a ``lagassign_daily`` run and where each came from.

    Later wins: the form's defaults, the JSON Variable ``lagassign_daily_params``, the Variable
    ``lagassign_apply``, then what the run was triggered with (a manual trigger sends the form).
    Returns (settings, source per key) so the start task can log what applies.
    """
    settings, sources = dict(defaults), dict.fromkeys(defaults, "default")
    for key, value in variables.items():
        settings[key], sources[key] = value, "Variable lagassign_daily_params"
    if apply_variable is not None:
        settings["apply"] = str(apply_variable).strip().lower() in ("1", "true", "yes", "on")
        sources["apply"] = "Variable lagassign_apply"
    for key, value in (conf or {}).items():
        settings[key], sources[key] = value, "trigger"
    return settings, sources


def scheduled_settings(conf: Mapping[str, Any] | None) -> dict[str, Any]:
    """A ``lagassign_daily`` run's settings (``daily_settings``) from the form's defaults and
    the Variables, each logged with its source."""
    defaults = {k: v.value if isinstance(v, Param) else v for k, v in rebalance_params(daily=True).items()}
    variables = json.loads(Variable.get("lagassign_daily_params", default="{}") or "{}")
    apply = Variable.get("lagassign_apply", default=None)
    settings, sources = daily_settings(defaults, variables, apply, conf)
    for key in sorted(settings):
        tasks.log.info("setting %s = %s (%s)", key, json.dumps(settings[key], default=str), sources[key])
    return settings


def review_params() -> dict[str, Param]:
    """The form of ``lagassign_review`` (the plans page fills it in)."""
    return {
        "action": Param(
            "publish",
            type="string",
            enum=["publish", "rollback"],
            title="Action",
            description="publish: the group's plan from the reviewed plan; rollback: publish again "
            "the members of a version published before, as a new version.",
        ),
        "plan_id": _optional(
            "integer",
            "Plan",
            "publish: the reviewed plan's number (see Rebalance plans).",
        ),
        "version": _optional(
            "integer",
            "Version",
            "rollback: the published version to go back to.",
        ),
        "group": _optional("string", "Group", "The group to publish."),
        "dry_run": _dry_run(),
    }
