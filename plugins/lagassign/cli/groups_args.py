"""The arguments of ``lagassign groups``; its handler is in ``cli.groups``, imported when it runs."""

from __future__ import annotations

from typing import Any

from ..core.health import STATUSES
from .options import add_connection_options, add_db_option, add_topic_options, positive_seconds
from .parser import Handler

# pipeline.overview.SORTS (what sort_rows takes), written here because importing it would load
# the whole pipeline at every start of the command; tests/cli/test_startup.py checks they agree.
SORTS = ("status", "name", "lag", "lag-s", "catch-up")


def register(subparsers: Any) -> None:
    """Add ``groups`` to the ``lagassign`` parser."""
    p = subparsers.add_parser(
        "groups",
        help="every consumer group: status, lag in messages and seconds, instances, plan in force",
        description="`lagassign groups` lists every group; `lagassign groups show GROUP` shows one.",
    )
    p.add_argument("words", nargs="*", metavar="show GROUP", help="show one group in full")
    add_connection_options(p)
    p.add_argument("--groups", metavar="REGEX", help="only groups whose whole id matches REGEX")
    p.add_argument("--groups-file", metavar="FILE", help="YAML file declaring assign()-mode groups")
    p.add_argument(
        "--status",
        metavar="STATUS[,STATUS]",
        help=f"only groups with these statuses ({', '.join(STATUSES)})",
    )
    p.add_argument(
        "--sort", choices=SORTS, default="status", help="worst first (default), or by name or figure"
    )
    p.add_argument(
        "--window",
        type=positive_seconds,
        default=None,
        metavar="SECONDS",
        help="the rules' window (default $LAGASSIGN_HEALTH_WINDOW, else 600)",
    )
    p.add_argument(
        "--session-timeout",
        type=positive_seconds,
        default=None,
        metavar="SECONDS",
        help="an instance silent this long is dead (default: the timeout it announced)",
    )
    add_topic_options(p)
    add_db_option(p)
    p.add_argument("--no-db", action="store_true", help="do not read the audit store")
    p.add_argument(
        "--record",
        action="store_true",
        help="run the health job once: record this observation and send the alerts due",
    )
    p.add_argument("--notify-url", metavar="URL", help="with --record: POST each alert as JSON to this URL")
    p.add_argument("--json", action="store_true", help="JSON for machines instead of a table")
    p.set_defaults(func=Handler(".groups", "cmd_groups"))
