"""Command-line options that several subcommands share, with one-line errors for bad values."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from ..core.strategies import strategy_names
from ..core.topics import PLAN_TOPIC, STATUS_TOPIC
from ..kafka.errors import GroupsFileError
from ..kafka.groupsfile import load_capacities, load_groups_file


def non_negative(text: str) -> int:
    """argparse type: a whole number >= 0."""
    return _whole_number(text, 0, "a non-negative integer")


def positive(text: str) -> int:
    """argparse type: a whole number >= 1."""
    return _whole_number(text, 1, "a whole number >= 1")


def _whole_number(text: str, least: int, expected: str) -> int:
    """``text`` as a whole number of at least ``least``; else an argparse error "expected
    ``expected``, got ..."."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {value}")
    return value


def add_topic_options(p: argparse.ArgumentParser) -> None:
    """``--plan-topic`` and ``--status-topic``: lagassign's own topics, for commands that read both."""
    p.add_argument("--plan-topic", default=PLAN_TOPIC, help=f"plans topic (default {PLAN_TOPIC})")
    p.add_argument("--status-topic", default=STATUS_TOPIC, help=f"status topic (default {STATUS_TOPIC})")


def add_connection_options(p: argparse.ArgumentParser) -> None:
    """How to reach Kafka: bootstrap servers, librdkafka settings, the request timeout, and
    ``--verbose`` for librdkafka's own messages."""
    p.add_argument(
        "--bootstrap-server",
        metavar="HOST:PORT",
        help="Kafka bootstrap servers (or bootstrap.servers in --config / --config-file)",
    )
    p.add_argument(
        "--config",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help="librdkafka setting, repeatable (e.g. security.protocol=SASL_SSL)",
    )
    p.add_argument(
        "--config-file",
        metavar="FILE",
        help="librdkafka settings as a properties file; LAGASSIGN_KAFKA_* variables also apply",
    )
    p.add_argument(
        "--timeout",
        type=positive_seconds,
        default=30.0,
        metavar="SECONDS",
        help="timeout of each Kafka request (default 30)",
    )
    p.add_argument("--verbose", "-v", action="store_true", help="log librdkafka's messages to stderr")


def add_db_option(p: argparse.ArgumentParser) -> None:
    """``--db``: the audit store's URL."""
    p.add_argument("--db", help="audit store URL (default: LAGASSIGN_DB_URL, else SQLite under AIRFLOW_HOME)")


def strategy_list(text: str) -> tuple[str, ...]:
    """argparse type: comma-separated strategy names, at least one, each known."""
    names = tuple(s.strip() for s in text.split(","))
    if not text.strip() or any(not s for s in names):
        raise argparse.ArgumentTypeError(
            f"expected comma-separated strategy names (leave the option out for all), got {text!r}"
        )
    unknown = [s for s in names if s not in strategy_names()]
    if unknown:
        raise argparse.ArgumentTypeError(
            f"unknown strategy {unknown[0]!r}; known: {', '.join(strategy_names())}"
        )
    return names


def groups_file(text: str) -> str:
    """argparse type: a groups file that reads and declares at least one group (its path)."""
    try:
        declared = load_groups_file(text)
        configured = load_capacities(text)
    except GroupsFileError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if not declared and not configured:
        raise argparse.ArgumentTypeError(f"groups file {text} declares no groups")
    return text


def seconds(text: str) -> float:
    """argparse type: a finite number of seconds >= 0."""
    return _seconds(text, "non-negative", lambda v: v >= 0)


def positive_seconds(text: str) -> float:
    """argparse type: a finite number of seconds > 0 (a timeout)."""
    return _seconds(text, "positive", lambda v: v > 0)


def _seconds(text: str, kind: str, ok: Callable[[float], bool]) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not (ok(value) and value < float("inf")):
        raise argparse.ArgumentTypeError(f"expected a {kind} number of seconds, got {text}")
    return value


def add_lag_optimal_options(p: argparse.ArgumentParser, count_slack: bool = False) -> None:
    """--max-moves, --exact-budget (and --count-slack) for lag-optimal."""
    p.add_argument(
        "--max-moves", type=non_negative, help="most partitions a plan may move (default: no limit)"
    )
    if count_slack:
        p.add_argument("--count-slack", type=non_negative, help="lag-optimal: extra count skew allowed")
    p.add_argument(
        "--exact-budget",
        type=seconds,
        metavar="SECONDS",
        help="lag-optimal and drain-optimal: up to SECONDS of exact solving per group to prove "
        "the plan optimal (in lag, or in catch-up time) or improve it (needs the certify extra: highspy)",
    )
