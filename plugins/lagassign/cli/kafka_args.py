"""The arguments of ``snapshot``, ``publish`` and ``read-plans``; their handlers are in
``cli.kafka``, imported when one of them runs."""

from __future__ import annotations

from typing import Any

from ..core.lag import RESET_POLICIES
from ..core.topics import PLAN_TOPIC
from .options import add_connection_options, add_db_option, groups_file, positive
from .parser import Handler


def register(subparsers: Any) -> None:
    """Add the Kafka subcommands to the ``lagassign`` parser."""
    p = subparsers.add_parser("snapshot", help="snapshot groups, offsets and members into Parquet tables")
    add_connection_options(p)
    p.add_argument(
        "--groups",
        metavar="REGEX",
        help="discovered groups whose whole id matches REGEX (default: every group)",
    )
    p.add_argument(
        "--groups-file",
        type=groups_file,
        metavar="FILE",
        help="YAML file declaring groups in manual assign() mode",
    )
    p.add_argument(
        "--auto-offset-reset",
        choices=RESET_POLICIES,
        default="latest",
        help="reset policy of groups that do not declare one (default latest)",
    )
    p.add_argument(
        "--plan-topic",
        default=PLAN_TOPIC,
        help="where assign()-mode groups' current plans are read (default lagassign.plans)",
    )
    p.add_argument(
        "--concurrency", type=positive, default=64, help="AdminClient requests in flight (default 64)"
    )
    p.add_argument("--out", required=True, metavar="DIR", help="folder for the Parquet tables and manifest")
    p.add_argument("--no-progress", action="store_true", help="no progress bar even on a terminal")
    p.set_defaults(func=Handler(".kafka", "cmd_snapshot"))

    p = subparsers.add_parser("publish", help="publish a plan as a static assignment (topic or JSON file)")
    add_connection_options(p)
    p.add_argument(
        "plan",
        metavar="PLAN.json",
        help='`lagassign assign` output plus "group": {"group", "strategy", "assignment"}',
    )
    p.add_argument("--topic", default=PLAN_TOPIC, help=f"plans topic (default {PLAN_TOPIC})")
    p.add_argument("--export", metavar="FILE", help="also write the plan in force to this JSON file")
    p.add_argument(
        "--export-only",
        action="store_true",
        help="do not touch Kafka: version against the existing --export file",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="publish even a plan computed from a snapshot older than the one in force",
    )
    add_db_option(p)
    p.set_defaults(func=Handler(".kafka", "cmd_publish"))

    p = subparsers.add_parser("read-plans", help="print the newest published plan per group from the topic")
    add_connection_options(p)
    p.add_argument("--topic", default=PLAN_TOPIC, help=f"plans topic (default {PLAN_TOPIC})")
    p.add_argument("--group", action="append", default=None, help="only this group (repeatable)")
    p.set_defaults(func=Handler(".kafka", "cmd_read_plans"))
