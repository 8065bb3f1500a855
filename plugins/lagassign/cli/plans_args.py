"""The arguments of ``plans list``, ``show``, ``history`` and ``claim``; their handlers are in
``cli.plans``, imported when one of them runs."""

from __future__ import annotations

import argparse
from datetime import date, datetime
from typing import Any

from .options import add_connection_options
from .parser import Handler, add_commands

_DB_HELP = (
    "audit store URL (default: $LAGASSIGN_DB_URL, else sqlite:///$AIRFLOW_HOME/lagassign.db, "
    "AIRFLOW_HOME defaulting to ~/airflow)"
)
_CLUSTER_HELP = "only plans of this Kafka cluster (its key as `plans list` shows it; unknown: '')"


def register(subparsers: Any) -> None:
    """Add the ``plans`` command group to the ``lagassign`` parser."""
    plans = subparsers.add_parser("plans", help="read the audit trail of rebalance plans")
    sub = add_commands(plans, "commands")

    p = sub.add_parser("list", help="plans, newest first")
    p.add_argument("--group", help="only plans that evaluated or decided this consumer group")
    p.add_argument("--cluster", help=_CLUSTER_HELP)
    p.add_argument("--since", type=_when, help="from this date or time (ISO 8601, UTC unless given)")
    p.add_argument("--until", type=_when, help="up to this time, or through this whole date")
    p.add_argument("--limit", type=_positive, default=50, help="at most this many plans (default 50)")
    p.add_argument("--json", action="store_true", help="JSON for machines instead of a table")
    p.add_argument("--db", help=_DB_HELP)
    p.set_defaults(func=Handler(".plans", "cmd_list"))

    p = sub.add_parser("show", help="one plan: parameters, evaluations, decisions, publications")
    p.add_argument("id", type=_plan_id, metavar="ID", help="plan id (see `lagassign plans list`), or latest")
    p.add_argument("--json", action="store_true", help="JSON for machines instead of text")
    p.add_argument("--db", help=_DB_HELP)
    p.set_defaults(func=Handler(".plans", "cmd_show"))

    p = sub.add_parser(
        "history", help="one group across plans: gate, max lag and catch-up now and under the plan"
    )
    p.add_argument("group", metavar="GROUP", help="consumer group id")
    p.add_argument("--cluster", help=_CLUSTER_HELP)
    p.add_argument("--limit", type=_positive, default=50, help="at most this many plans (default 50)")
    p.add_argument("--json", action="store_true", help="JSON for machines instead of a table")
    p.add_argument("--db", help=_DB_HELP)
    p.set_defaults(func=Handler(".plans", "cmd_history"))

    p = sub.add_parser(
        "claim",
        help="assign plans of unknown cluster (recorded before lagassign knew clusters) to a cluster",
        description="Plans recorded before lagassign keyed its audit store by Kafka cluster, whose "
        "cluster could not be traced, are listed as cluster 'unknown' and form a version line of "
        "their own. Claim them for the cluster they were made on (named, or asked of its brokers) "
        "so that their versions join its line.",
    )
    p.add_argument("--cluster", metavar="KEY", help="the cluster's key (its id, as `plans list` shows it)")
    add_connection_options(p)
    p.add_argument(
        "--plan",
        type=_positive,
        action="append",
        metavar="ID",
        help="claim only this plan (repeatable; default: every plan of unknown cluster)",
    )
    p.add_argument("--json", action="store_true", help="JSON for machines")
    p.add_argument("--db", help=_DB_HELP)
    p.set_defaults(func=Handler(".plans", "cmd_claim"))


def _when(text: str) -> date | datetime:
    try:
        return date.fromisoformat(text) if len(text) == 10 else datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an ISO date (2024-05-01) or time (2024-05-01T06:00)"
        ) from None


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number ≥ 1")
    return value


def _plan_id(text: str) -> int | None:
    """A plan id, or None for ``latest``."""
    if text == "latest":
        return None
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a plan id or 'latest', got {text!r}") from None
