"""The ``lagassign`` command.

Every operational error becomes one line on stderr and exit code 2: a LagassignError (what
people can cause and fix), and what the world around raises when it fails (a file, the network,
the broker, the database). A bare command (``lagassign``, ``lagassign plans``) prints its usage.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from .. import __version__
from ..core.case import load_case_text, parse_case
from ..core.errors import LagassignError
from ..core.evaluate import evaluate_group, run_strategy
from ..core.report import evaluation_table
from ..core.strategies import strategy_names
from ..kafka.errors import reason
from ..kafka.textfiles import read_user_file
from . import groups_args, kafka_args, plan_args, plans_args
from .options import add_lag_optimal_options, non_negative, strategy_list
from .parser import Parser, add_commands


def _read_case(path: str) -> dict[str, Any]:
    if path == "-":
        return load_case_text(sys.stdin.read(), "stdin")
    return load_case_text(read_user_file(path, "case", LagassignError), path)


def _cmd_assign(args: argparse.Namespace) -> int:
    group = parse_case(_read_case(args.case))
    options = {
        "max_moves": args.max_moves,
        "count_slack": args.count_slack,
        "exact_budget": args.exact_budget,
        "rack": args.rack,
    }
    result = run_strategy(group, args.strategy, **{k: v for k, v in options.items() if v is not None})
    json.dump(result.to_dict(), sys.stdout, indent=args.indent)
    sys.stdout.write("\n")
    return 0


def _cmd_evaluate(args: argparse.Namespace) -> int:
    strategies = list(args.strategies) if args.strategies else None
    group = parse_case(_read_case(args.case))
    options = {"max_moves": args.max_moves, "exact_budget": args.exact_budget}
    evaluation = evaluate_group(group, strategies, **options).to_dict()
    if args.json:
        json.dump(evaluation, sys.stdout, indent=args.indent)
        sys.stdout.write("\n")
    else:
        print(evaluation_table(evaluation))
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The whole command line: ``assign`` and ``evaluate`` run here on the core alone; the other
    subcommands' arguments come from the ``*_args`` modules, their handlers imported when run."""
    parser = Parser(prog="lagassign", description="Lag-aware rebalance plans for Kafka consumer groups.")
    parser.add_argument("--version", action="version", version=f"lagassign {__version__}")
    sub = add_commands(parser, "commands")

    p = sub.add_parser("assign", help="assign a case's partitions with one strategy (JSON out)")
    p.add_argument("--strategy", required=True, help=f"one of: {', '.join(strategy_names())}")
    p.add_argument("case", help="case file (JSON), or - for stdin")
    add_lag_optimal_options(p, count_slack=True)
    p.add_argument(
        "--rack",
        choices=("off", "prefer", "require"),
        help="lag-aware and lag-optimal: rack-local partitions (KIP-881) preferred or required",
    )
    p.add_argument("--indent", type=non_negative, default=None, help="pretty-print JSON with this indent")
    p.set_defaults(func=_cmd_assign)

    p = sub.add_parser("evaluate", help="run every strategy on a case and compare them")
    p.add_argument("case", help="case file (JSON), or - for stdin")
    p.add_argument("--json", action="store_true", help="JSON for machines instead of a table")
    p.add_argument(
        "--strategies", type=strategy_list, help="comma-separated subset of strategies (default: all)"
    )
    add_lag_optimal_options(p)
    p.add_argument("--indent", type=non_negative, default=None, help="pretty-print JSON with this indent")
    p.set_defaults(func=_cmd_evaluate)

    for commands in (kafka_args, plans_args, plan_args, groups_args):
        commands.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        print("lagassign: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:
        line = operational_error(exc)
        if line is None:
            raise  # a bug: its traceback is what a report needs
        print(f"lagassign: error: {line}", file=sys.stderr)
        return 2


def operational_error(exc: BaseException) -> str | None:
    """The one line for an error of operation (bad input, or the world around failing: a file,
    the network, the broker, the database), or None for a bug in lagassign."""
    if isinstance(exc, LagassignError):
        return _one_line(str(exc)) or type(exc).__name__
    if isinstance(exc, OSError):
        if exc.filename is not None and exc.strerror:
            return _one_line(f"{exc.filename}: {exc.strerror}")
        return _one_line(str(exc)) or type(exc).__name__
    kafka = sys.modules.get("confluent_kafka")
    if kafka is not None and isinstance(exc, kafka.KafkaException):
        return _one_line(f"Kafka: {reason(exc)}")
    sqlalchemy = sys.modules.get("sqlalchemy.exc")
    if sqlalchemy is not None and isinstance(exc, sqlalchemy.DBAPIError):
        return _one_line(f"audit store: {exc.orig}")
    return None


def _one_line(text: str) -> str:
    return " ".join(text.split())


if __name__ == "__main__":
    sys.exit(main())
