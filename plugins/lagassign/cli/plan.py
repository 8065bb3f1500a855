"""``lagassign plan``: the whole pipeline without Airflow (snapshot, evaluate, gate, publish, record),
and ``lagassign watch``: the failover loop without Airflow."""

from __future__ import annotations

import argparse
import getpass
import json
import signal
import sys
import threading
from typing import Any

from ..core.clock import now_text
from ..core.gate import DEFAULT_MIN_IMPROVEMENT, DEFAULT_THRESHOLD, GateDecision
from ..core.lag import RESET_POLICIES
from ..core.report import plan_table
from ..core.topics import PLAN_TOPIC
from ..kafka.cluster import cluster_of
from ..pipeline import (
    PlanParams,
    base_dir,
    evaluate_step,
    gate_step,
    publish_step,
    reconcile_step,
    record_step,
    run_dir,
    snapshot_step,
)
from ..pipeline.failover import FailoverSettings
from ..pipeline.ports import PlanningStore
from .kafka import ProgressBar, _add_connection_args, _client_config
from .options import (
    add_db_option,
    add_lag_optimal_options,
    add_topic_options,
    groups_file,
    positive_seconds,
    strategy_list,
)


def register(subparsers: Any) -> None:
    """Add ``plan`` and ``watch`` to the ``lagassign`` parser."""
    _add_plan_command(subparsers)
    _add_watch_command(subparsers)


def _add_plan_command(subparsers: Any) -> None:
    p = subparsers.add_parser("plan", help="snapshot, evaluate every strategy, gate, publish and record")
    _add_connection_args(p)
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
    p.set_defaults(func=_cmd_plan)


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
    _add_connection_args(p)
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
    p.set_defaults(func=_cmd_watch)


def _cmd_watch(args: argparse.Namespace) -> int:
    from ..pipeline.watch import Watcher
    from ..store import AuditStore

    config = _client_config(args)
    cluster_of(config, args.timeout)  # an unreachable broker: one line now, not a traceback later
    with AuditStore(args.db):  # unreachable or unusable: fail now, not at the first failover
        pass
    settings = FailoverSettings(
        args.plan_topic,
        args.status_topic,
        int(args.session_timeout * 1000),
        args.groups_file,
        args.auto_offset_reset,
    )
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())

    def say(message: str) -> None:
        stamp = now_text("seconds")
        print(f"{stamp} {message}", file=sys.stderr, flush=True)

    Watcher(
        config, args.db, settings, base_dir(args.base_dir), args.groups, log=say, timeout=args.timeout
    ).run(stop)
    say("stopped")
    return 0


def _cmd_plan(args: argparse.Namespace) -> int:
    from ..store import AuditStore

    params = _plan_params(args)
    config = _client_config(args)
    with AuditStore(args.db) as store:
        plan_id = store.start_plan("manual", getpass.getuser(), parameters=params.record())
        try:
            decisions, outcomes = _run_plan(store, plan_id, config, params, args)
        except BaseException as exc:
            store.finish_plan(plan_id, "failed", error=str(exc) or type(exc).__name__)
            raise
        store.finish_plan(plan_id, "succeeded")
    if args.json:
        json.dump(
            {"plan_id": plan_id, "decisions": [d.to_dict() for d in decisions], "publications": outcomes},
            sys.stdout,
            indent=1,
        )
        sys.stdout.write("\n")
    else:
        print(plan_table(plan_id, decisions, outcomes))
    return 0


def _plan_params(args: argparse.Namespace) -> PlanParams:
    """The run's parameters from the command line, checked as the DAGs' are."""
    return PlanParams.from_mapping(
        {
            "groups": args.groups,
            "groups_file": args.groups_file,
            "strategies": args.strategies,
            "threshold": args.threshold,
            "min_improvement": args.min_improvement,
            "max_moves": args.max_moves,
            "exact_budget": args.exact_budget,
            "max_catch_up_s": args.max_catch_up,
            "apply": args.apply,
            "dry_run": args.dry_run,
            "force": args.force,
            "auto_offset_reset": args.auto_offset_reset,
            "plan_topic": args.plan_topic,
        }
    )


def _run_plan(
    store: PlanningStore, plan_id: int, config: dict[str, Any], params: PlanParams, args: argparse.Namespace
) -> tuple[list[GateDecision], list[dict[str, Any]]]:
    """The planning run's steps in order (reconcile, snapshot, evaluate, record, gate, publish);
    the gate's decisions and the publications."""
    folder = run_dir(base_dir(args.base_dir), plan_id)
    tty = sys.stderr.isatty()

    def say(message: str) -> None:
        print(message, file=sys.stderr)

    reconcile_step(store, config, params.plan_topic, log=say, timeout=args.timeout)
    snapshot_step(
        store,
        plan_id,
        config,
        params,
        folder / "snapshot",
        progress=ProgressBar("snapshot") if tty else None,
        log=say,
        timeout=args.timeout,
    )
    evaluate_step(
        folder / "snapshot",
        folder / "evaluations",
        params,
        spark_master=args.spark_master if args.spark else None,
        progress=ProgressBar("evaluate") if tty else None,
        log=say,
    )
    evaluated = record_step(store, plan_id, folder / "evaluations", log=say)
    decisions = gate_step(store, plan_id, evaluated, params, log=say)
    outcomes = publish_step(store, plan_id, decisions, config, params, log=say)
    return decisions, outcomes
