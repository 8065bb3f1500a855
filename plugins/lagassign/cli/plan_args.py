"""The arguments of ``plan`` and ``watch``; their handlers are in ``cli.plan``, imported when
one of them runs."""

from __future__ import annotations

import argparse
from typing import Any

from ..core.gate import DEFAULT_MIN_IMPROVEMENT, DEFAULT_THRESHOLD
from ..core.lag import RESET_POLICIES
from ..core.topics import PLAN_TOPIC
from .options import (
    add_connection_options,
    add_db_option,
    add_lag_optimal_options,
    add_topic_options,
    groups_file,
    positive_seconds,
    strategy_list,
)
from .parser import Handler


def register(subparsers: Any) -> None:
    """Add ``plan`` and ``watch`` to the ``lagassign`` parser."""
    _add_plan_command(subparsers)
    _add_watch_command(subparsers)


def _add_plan_command(subparsers: Any) -> None:
    p = subparsers.add_parser("plan", help="snapshot, evaluate every strategy, gate, publish and record")
    add_connection_options(p)
    p.add_argument("--groups", metavar="REGEX", help="groups whose whole id matches (default: all)")
    p.add_argument(
        "--groups-file", type=groups_file, metavar="FILE", help="YAML file declaring groups in assign() mode"
    )
    p.add_argument(
        "--strategies", type=strategy_list, help="comma-separated strategies to evaluate (default: all)"
    )
    _add_gate_args(p)
    p.add_argument(
        "--auto-offset-reset",
        choices=RESET_POLICIES,
        default="latest",
        help="reset policy of groups that declare none (default latest)",
    )
    p.add_argument("--apply", action="store_true", help="publish plans that pass the gate")
    p.add_argument("--dry-run", action="store_true", help="go through publishing without writing to Kafka")
    p.add_argument("--force", action="store_true", help="publish even a plan older than the one in force")
    p.add_argument("--plan-topic", default=PLAN_TOPIC, help=f"plans topic (default {PLAN_TOPIC})")
    p.add_argument("--spark", action="store_true", help="evaluate with spark-submit instead of in-process")
    p.add_argument("--spark-master", default="local[2]", help="Spark master for --spark (default local[2])")
    p.add_argument("--base-dir", help="where snapshots and evaluations go (default $AIRFLOW_HOME/lagassign)")
    add_db_option(p)
    p.add_argument("--json", action="store_true", help="print the decisions as JSON")
    p.set_defaults(func=Handler(".plan", "cmd_plan"))


def _add_gate_args(p: argparse.ArgumentParser) -> None:
    """The gate's thresholds and lag-optimal's options, as ``plan`` takes them."""
    p.add_argument(
        "--threshold",
        type=float,
        default=DEFAULT_THRESHOLD,
        help=f"current imbalance (max/mean lag) above which a group may move (default {DEFAULT_THRESHOLD})",
    )
    p.add_argument(
        "--min-improvement",
        type=float,
        default=DEFAULT_MIN_IMPROVEMENT,
        help=f"fraction the plan must lower max member lag by (default {DEFAULT_MIN_IMPROVEMENT})",
    )
    add_lag_optimal_options(p)
    p.add_argument(
        "--max-catch-up",
        type=positive_seconds,
        metavar="SECONDS",
        help="groups whose members state capacities also go on when their slowest member needs "
        "longer than this to catch up (default: off)",
    )


def _add_watch_command(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "watch", help="fail over assign()-mode groups: a new plan when an instance dies or joins"
    )
    add_connection_options(p)
    p.add_argument("--groups", metavar="REGEX", help="groups whose whole id matches (default: all)")
    p.add_argument(
        "--session-timeout",
        type=positive_seconds,
        default=30.0,
        metavar="SECONDS",
        help="an instance silent this long is dead (default 30)",
    )
    p.add_argument(
        "--groups-file",
        type=groups_file,
        metavar="FILE",
        help="YAML file that pins groups' instances and topics (optional)",
    )
    p.add_argument(
        "--auto-offset-reset",
        choices=RESET_POLICIES,
        default="latest",
        help="reset policy of groups that declare none (default latest)",
    )
    add_topic_options(p)
    p.add_argument("--base-dir", help="where snapshots go (default $AIRFLOW_HOME/lagassign)")
    add_db_option(p)
    p.set_defaults(func=Handler(".plan", "cmd_watch"))
