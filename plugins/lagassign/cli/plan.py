"""``lagassign plan``: the whole pipeline without Airflow (snapshot, evaluate, gate, publish, record),
and ``lagassign watch``: the failover loop without Airflow. Their arguments are in
``cli.plan_args``; this module is imported when one of them runs."""

from __future__ import annotations

import argparse
import getpass
import json
import signal
import sys
import threading
from typing import Any

from ..core.clock import now_text
from ..core.gate import GateDecision
from ..core.report import plan_table
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
from .kafka import ProgressBar, _client_config


def cmd_watch(args: argparse.Namespace) -> int:
    """``lagassign watch``: fail over assign()-mode groups until SIGINT or SIGTERM."""
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


def cmd_plan(args: argparse.Namespace) -> int:
    """``lagassign plan``: one planning run, recorded in the audit store as a manual plan."""
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
