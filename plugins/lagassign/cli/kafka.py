"""The ``snapshot``, ``publish`` and ``read-plans`` subcommands: thin shells over the Kafka edge.

Their arguments are in ``cli.kafka_args``; this module is imported when one of them runs (and
by the other subcommands that reach Kafka, for ``_client_config`` and ``ProgressBar``).
"""

from __future__ import annotations

import argparse
import getpass
import json
import logging
import sys
import threading
import time
from dataclasses import asdict
from datetime import datetime
from typing import Any, TextIO

from ..core.clock import parse_utc, utc_now
from ..core.gate import GateDecision
from ..core.plans import next_plan
from ..core.publishing import PublishFacts, decide_publication
from ..kafka.admin import AdminHook
from ..kafka.applier import Outcome, apply_publication
from ..kafka.cluster import cluster_of
from ..kafka.config import build_config, check
from ..kafka.errors import PlanError
from ..kafka.groupsfile import fill_capacities, load_capacities, load_groups_file
from ..kafka.plans import PlanStore
from ..kafka.snapshot import compile_regex, take_snapshot
from ..pipeline.ports import AuditTrailPort, PublishingStore
from .planfiles import export_json, read_export, read_plan_file

RDKAFKA_LOGGER = "lagassign.kafka.librdkafka"


def _client_config(args: argparse.Namespace) -> dict[str, Any]:
    conf = build_config(args.bootstrap_server, args.config, args.config_file)
    # librdkafka logs through Python logging: silent unless --verbose (a NullHandler stops the
    # lastResort handler), so an unreachable broker is one line, not a stream of retries.
    logger = logging.getLogger(RDKAFKA_LOGGER)
    if not logger.handlers:
        logger.addHandler(logging.NullHandler())
    if args.verbose:
        logging.basicConfig(
            level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
        )
    conf["logger"] = logger
    check(conf)
    return conf


class ProgressBar:
    """A one-line progress bar on a terminal (stderr); callable as ``bar(done, total)``."""

    def __init__(self, label: str, stream: TextIO = sys.stderr, width: int = 30) -> None:
        self.label, self.stream, self.width = label, stream, width
        self.started = time.monotonic()
        self._last = 0.0
        self._lock = threading.Lock()

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        with self._lock:
            if done < total and now - self._last < 0.1:
                return
            self._last = now
            filled = int(self.width * done / total) if total else self.width
            bar = "#" * filled + "-" * (self.width - filled)
            self.stream.write(f"\r{self.label} [{bar}] {done}/{total} {now - self.started:5.1f}s")
            if done >= total:
                self.stream.write("\n")
            self.stream.flush()


def cmd_snapshot(args: argparse.Namespace) -> int:
    """``lagassign snapshot``: the groups, offsets and members as Parquet tables in ``--out``."""
    compile_regex(args.groups)
    declared = load_groups_file(args.groups_file) if args.groups_file else []
    conf = _client_config(args)
    hook = AdminHook(conf, timeout=args.timeout, concurrency=args.concurrency)
    show = sys.stderr.isatty() and not args.no_progress
    snap = take_snapshot(
        hook,
        groups_regex=args.groups,
        assign_groups=declared,
        auto_offset_reset=args.auto_offset_reset,
        plan_topic=args.plan_topic,
        progress=ProgressBar("groups") if show else None,
        log=(lambda m: print(m, file=sys.stderr)) if show else None,
    )
    if args.groups_file:  # capacities the file configures, for members that state none
        fill_capacities(snap.members, load_capacities(args.groups_file))
    snap.write(args.out)
    c, m = snap.manifest["counts"], snap.manifest
    print(
        f"snapshot: {c['groups']} groups ({c['failed']} failed), {c['partitions']} partitions, "
        f"{c['members']} members -> {args.out} in {m['duration_s']:.1f}s "
        f"({m['admin_calls']['total']} AdminClient calls)"
    )
    for f in m["failed"][:5]:
        print(f"  failed: {f['group']}: {f['error']}", file=sys.stderr)
    return 0


def cmd_publish(args: argparse.Namespace) -> int:
    """``lagassign publish``: a plan file published through the audit ledger, or with
    ``--export-only`` versioned against the export file alone."""
    spec = read_plan_file(args.plan)
    if args.export_only:
        if not args.export:
            raise PlanError("--export-only needs --export FILE")
        previous = read_export(args.export)
        if previous is not None and previous.group != spec["group"]:
            raise PlanError(f"{args.export} holds the plan of group {previous.group}, not {spec['group']}")
        plan = next_plan(previous, spec["group"], spec["strategy"], spec["members"], spec["snapshot_at"])
        written = plan is not None
        plan = plan or previous
        assert plan is not None
        export_json(plan, args.export)
        json.dump(
            {
                "group": plan.group,
                "version": plan.version,
                "plan_id": plan.plan_id,
                "published": written,
                "topic": None,
                "export": args.export,
            },
            sys.stdout,
        )
        sys.stdout.write("\n")
        return 0
    outcome, plan = publish_by_hand(
        spec,
        _client_config(args),
        args.topic,
        args.db,
        args.timeout,
        args.force,
        source=args.plan,
        want_plan=bool(args.export),
    )
    if plan is not None:
        export_json(plan, args.export)
    json.dump(
        {
            "group": spec["group"],
            "version": outcome.version,
            "published": outcome.published,
            "reason": outcome.reason,
            "topic": args.topic,
            "export": args.export,
        },
        sys.stdout,
    )
    sys.stdout.write("\n")
    return 0


def publish_by_hand(
    spec: dict[str, Any],
    config: dict[str, Any],
    topic_name: str,
    db: str | None,
    timeout: float,
    force: bool,
    source: str,
    want_plan: bool = False,
) -> tuple[Any, Any]:
    """Publish a plan file through the audit ledger, as a planning run would: recorded (trigger
    manual), decided by ``publishing``, written by the applier. Returns (outcome, the plan in
    force afterwards when ``want_plan``, else None)."""
    from ..store import AuditStore

    group, strategy = spec["group"], spec["strategy"]
    snapshot_at = parse_utc(spec["snapshot_at"]) or utc_now()
    with AuditStore(db) as store, PlanStore(config, topic_name, timeout) as topic:
        parameters = {
            "publish": source,
            "group": group,
            "strategy": strategy,
            "plan_topic": topic_name,
            "force": force,
        }
        plan_id = store.start_plan("manual", getpass.getuser(), parameters=parameters)
        try:
            cluster = cluster_of(config, timeout)
            _record_by_hand(store, plan_id, spec, source, snapshot_at, cluster)
            outcome = _publish_spec(store, topic, plan_id, spec, snapshot_at, cluster, force)
        except BaseException as exc:
            store.finish_plan(plan_id, "failed", error=str(exc) or type(exc).__name__)
            raise
        if outcome.action in ("failed", "refuse"):
            store.finish_plan(plan_id, "failed", error=outcome.reason)
            raise PlanError(f"group {group}: {outcome.reason}")
        store.finish_plan(plan_id, "succeeded")
        return outcome, (topic.read([group]).get(group) if want_plan else None)


def _record_by_hand(
    store: AuditTrailPort,
    plan_id: int,
    spec: dict[str, Any],
    source: str,
    snapshot_at: datetime,
    cluster: str,
) -> None:
    """The plan file as a planning run records it: its assignment as the one evaluation (no
    metrics: nothing was measured) and a go decision that says where it came from."""
    group, strategy = spec["group"], spec["strategy"]
    store.set_snapshot(plan_id, None, snapshot_at, cluster)
    store.record_evaluations(
        plan_id,
        [
            {
                "group": group,
                "members": len(spec["members"]),
                "results": [{"strategy": strategy, "metrics": {}, "assignment": spec["members"]}],
            }
        ],
    )
    store.record_decisions(
        plan_id,
        [GateDecision(group, True, f"published by hand from {source}", chosen=strategy, candidate=strategy)],
    )


def _publish_spec(
    store: PublishingStore,
    topic: PlanStore,
    plan_id: int,
    spec: dict[str, Any],
    snapshot_at: datetime,
    cluster: str,
    force: bool,
) -> Outcome:
    """Decide and carry out the plan file's publication against the plan in force and the
    ledger, as ``publish_step`` does for one group."""
    group = spec["group"]
    topic.ensure_topic()
    in_force = topic.read([group]).get(group)
    facts = PublishFacts.now(
        group,
        spec["strategy"],
        spec["members"],
        in_force,
        store.ledger_state([group], cluster)[group],
        plan_id=plan_id,
        snapshot_at=snapshot_at,
        snapshot_version=in_force.version if in_force else None,
    )
    decision = decide_publication(facts, force=force)
    return apply_publication(store, topic, plan_id, facts, decision, force)


def cmd_read_plans(args: argparse.Namespace) -> int:
    """``lagassign read-plans``: the newest plan per group on the plans topic, as JSON."""
    with PlanStore(_client_config(args), args.topic, args.timeout) as store:
        plans = store.read(args.group)
    json.dump({g: asdict(p) for g, p in sorted(plans.items())}, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0
