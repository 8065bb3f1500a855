"""The ``snapshot``, ``publish`` and ``read-plans`` subcommands: thin shells over the Kafka edge.

Registered by ``lagassign.cli`` through ``register(subparsers)``. Nothing Kafka-related is
imported at module level (confluent-kafka, pyarrow and yaml load inside the handlers), so
``lagassign assign`` stays fast and works without the kafka extra installed.
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
from ..core.lag import RESET_POLICIES
from ..core.plans import next_plan
from ..core.publishing import PublishFacts, decide_publication
from ..core.topics import PLAN_TOPIC
from ..kafka.admin import AdminHook
from ..kafka.applier import Outcome, apply_publication
from ..kafka.cluster import cluster_of
from ..kafka.config import build_config, check
from ..kafka.errors import PlanError
from ..kafka.groupsfile import fill_capacities, load_capacities, load_groups_file
from ..kafka.plans import PlanStore
from ..kafka.snapshot import compile_regex, take_snapshot
from ..pipeline.ports import AuditTrailPort, PublishingStore
from .options import add_db_option, groups_file, positive, positive_seconds
from .planfiles import export_json, read_export, read_plan_file

RDKAFKA_LOGGER = "lagassign.kafka.librdkafka"


def _add_connection_args(p: argparse.ArgumentParser) -> None:
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


def register(subparsers: Any) -> None:
    """Add the Kafka subcommands to the ``lagassign`` parser."""
    p = subparsers.add_parser("snapshot", help="snapshot groups, offsets and members into Parquet tables")
    _add_connection_args(p)
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
    p.set_defaults(func=_cmd_snapshot)

    p = subparsers.add_parser("publish", help="publish a plan as a static assignment (topic or JSON file)")
    _add_connection_args(p)
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
    p.set_defaults(func=_cmd_publish)

    p = subparsers.add_parser("read-plans", help="print the newest published plan per group from the topic")
    _add_connection_args(p)
    p.add_argument("--topic", default=PLAN_TOPIC, help=f"plans topic (default {PLAN_TOPIC})")
    p.add_argument("--group", action="append", default=None, help="only this group (repeatable)")
    p.set_defaults(func=_cmd_plans)


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


def _cmd_snapshot(args: argparse.Namespace) -> int:
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


def _cmd_publish(args: argparse.Namespace) -> int:
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


def _cmd_plans(args: argparse.Namespace) -> int:
    with PlanStore(_client_config(args), args.topic, args.timeout) as store:
        plans = store.read(args.group)
    json.dump({g: asdict(p) for g, p in sorted(plans.items())}, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0
