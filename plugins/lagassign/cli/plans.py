"""``lagassign plans list``, ``plans show ID`` and ``plans history GROUP``: the audit trail for
people without Airflow; ``plans claim``: plans recorded before lagassign knew clusters, assigned
to the cluster they were made on.

Cheap to import: the store (and SQLAlchemy with it) is imported inside the handlers. Readers
never create a database: a missing store is one clear error line.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from ..core.catchup import catch_up_change, duration_text
from ..core.clusters import cluster_label
from ..core.errors import LagassignError
from ..core.inflow import lag_time_text
from ..core.outcome import outcome_of, summary
from ..core.report import evaluation_table
from ..core.strategies import cluster_text, kafka_choice
from ..kafka.cluster import cluster_of
from ..tables.snapshot import partition_lag_seconds
from . import add_commands
from .kafka import _add_connection_args, _client_config

if TYPE_CHECKING:  # the command line starts without the pipeline
    from ..pipeline.ports import AuditTrailPort

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
    p.set_defaults(func=_cmd_list)

    p = sub.add_parser("show", help="one plan: parameters, evaluations, decisions, publications")
    p.add_argument("id", type=_plan_id, metavar="ID", help="plan id (see `lagassign plans list`), or latest")
    p.add_argument("--json", action="store_true", help="JSON for machines instead of text")
    p.add_argument("--db", help=_DB_HELP)
    p.set_defaults(func=_cmd_show)

    p = sub.add_parser(
        "history", help="one group across plans: gate, max lag and catch-up now and under the plan"
    )
    p.add_argument("group", metavar="GROUP", help="consumer group id")
    p.add_argument("--cluster", help=_CLUSTER_HELP)
    p.add_argument("--limit", type=_positive, default=50, help="at most this many plans (default 50)")
    p.add_argument("--json", action="store_true", help="JSON for machines instead of a table")
    p.add_argument("--db", help=_DB_HELP)
    p.set_defaults(func=_cmd_history)

    p = sub.add_parser(
        "claim",
        help="assign plans of unknown cluster (recorded before lagassign knew clusters) to a cluster",
        description="Plans recorded before lagassign keyed its audit store by Kafka cluster, whose "
        "cluster could not be traced, are listed as cluster 'unknown' and form a version line of "
        "their own. Claim them for the cluster they were made on (named, or asked of its brokers) "
        "so that their versions join its line.",
    )
    p.add_argument("--cluster", metavar="KEY", help="the cluster's key (its id, as `plans list` shows it)")
    _add_connection_args(p)
    p.add_argument(
        "--plan",
        type=_positive,
        action="append",
        metavar="ID",
        help="claim only this plan (repeatable; default: every plan of unknown cluster)",
    )
    p.add_argument("--json", action="store_true", help="JSON for machines")
    p.add_argument("--db", help=_DB_HELP)
    p.set_defaults(func=_cmd_claim)


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


def _read(args: argparse.Namespace, query: Callable[[Any], Any]) -> Any:
    """Run one read against the store; a database failure becomes one line (no traceback)."""
    from sqlalchemy.exc import DBAPIError

    from ..store import AuditStore

    with AuditStore(args.db, create=False) as store:
        try:
            return query(store)
        except DBAPIError as exc:
            first = (str(exc.orig).strip().splitlines() or [type(exc.orig).__name__])[0]
            raise LagassignError(f"audit store {store.safe_url}: {first}") from None


def _cmd_list(args: argparse.Namespace) -> int:
    def query(store: AuditTrailPort) -> list[dict[str, Any]]:
        found = store.list_plans(
            group=args.group, since=args.since, until=args.until, limit=args.limit, cluster=args.cluster
        )
        return with_outcomes(found, store.plan_details(p["id"] for p in found))

    plans = _read(args, query)
    if args.json:
        _dump(plans)
    elif not plans:
        narrowed = any(v is not None for v in (args.group, args.cluster, args.since, args.until))
        print(f"no plans {'match in' if narrowed else 'in'} the audit store {_store_url(args)}")
    else:
        print(plans_table(plans, with_cluster=args.group is not None))
    return 0


def with_outcomes(plans: list[dict[str, Any]], details: dict[int, dict[str, Any]]) -> list[dict[str, Any]]:
    """Each plan with ``outcome``: its groups' outcome badges in one line, as the pages say them."""
    out = []
    for p in plans:
        plan = details.get(p["id"], p)
        groups = plan.get("groups") or []
        text = summary((g["group"], outcome_of(plan, g)) for g in groups) if groups else p["status"]
        out.append({**p, "outcome": text})
    return out


def _plan_id(text: str) -> int | None:
    """A plan id, or None for ``latest``."""
    if text == "latest":
        return None
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a plan id or 'latest', got {text!r}") from None


def _cmd_show(args: argparse.Namespace) -> int:
    def query(store: AuditTrailPort) -> dict[str, Any]:
        if args.id is not None:
            return store.get_plan(args.id)
        newest = store.list_plans(limit=1)
        if not newest:
            from ..store import PlanNotFoundError

            raise PlanNotFoundError("the audit store holds no plan yet")
        return store.get_plan(newest[0]["id"])

    plan = _read(args, query)
    if args.json:
        _dump(with_kafka_choice(plan))
    else:
        print(plan_text(plan))
    return 0


def with_kafka_choice(plan: dict[str, Any]) -> dict[str, Any]:
    """``plan`` with each result row of a group whose type and assignor are known flagged
    ``kafka_choice`` (true on the row that is what Kafka itself would do: the broker's choice
    for a consumer-type group, the members' assignor for a classic one)."""
    groups = []
    for g in plan.get("groups") or ():
        kafka = kafka_choice(g.get("group_type"), g.get("assignor"))
        if kafka is not None:
            results = [{**r, "kafka_choice": r.get("strategy") == kafka[0]} for r in g.get("results") or ()]
            g = {**g, "results": results}
        groups.append(g)
    return {**plan, "groups": groups}


def _cmd_history(args: argparse.Namespace) -> int:
    rows = _read(args, lambda store: store.group_history(args.group, limit=args.limit, cluster=args.cluster))
    if args.json:
        _dump(rows)
    elif not rows:
        print(f"no plan has looked at group {args.group}")
    else:
        print(history_table(rows))
    return 0


def _store_url(args: argparse.Namespace) -> str:
    """The store's URL as people may see it (no password)."""
    import sqlalchemy as sa

    from ..store import resolve_url

    return sa.make_url(resolve_url(args.db)).render_as_string(hide_password=True)


def _cmd_claim(args: argparse.Namespace) -> int:
    from ..store import AuditStore

    if args.cluster is not None and args.bootstrap_server:
        raise LagassignError("give --cluster or --bootstrap-server, not both")
    if args.cluster is not None:
        cluster = args.cluster.strip()
    elif args.bootstrap_server or args.config or args.config_file:
        cluster = cluster_of(_client_config(args), args.timeout)
    else:
        raise LagassignError("name the cluster: --cluster KEY, or --bootstrap-server HOST:PORT to ask it")
    with AuditStore(args.db, create=False) as store:
        done = store.claim_cluster(cluster, args.plan)
    if args.json:
        _dump(done)
    elif not done["plans"]:
        print("no plan of unknown cluster to claim")
    else:
        ids = ", ".join(str(i) for i in done["plans"])
        plans, pubs = len(done["plans"]), done["publications"]
        print(
            f"claimed {plans} plan{'s' * (plans != 1)} ({ids}) and {pubs} publication{'s' * (pubs != 1)} "
            f"for cluster {done['cluster']}"
        )
    return 0


def history_table(rows: list[dict[str, Any]]) -> str:
    """A group's history as an aligned table, newest first: per plan the gate's verdict, max
    lag now and under the plan's chosen (or candidate) strategy, and, where the group was
    planned in time, max catch-up now and under the plan (the page's history table)."""
    timed = any("current_max_catch_up_s" in r for r in rows)

    cols: tuple[str, ...] = (
        "plan",
        "created (UTC)",
        "cluster",
        "trigger",
        "gate",
        "max lag now",
        "plan strategy",
        "max lag under plan",
    )
    if timed:
        cols += ("catch-up now", "catch-up under plan")
    cols += ("versions",)

    def num(value: Any) -> str:
        return f"{value:,}" if isinstance(value, int) else "-"

    def when(r: dict[str, Any], key: str) -> str:
        return duration_text(r[key]) if key in r else "-"

    table = []
    for r in rows:
        gate = "-" if r.get("go") is None else ("go" if r["go"] else "stop")
        row: tuple[str, ...] = (
            str(r["plan_id"]),
            _time(r.get("created_at")),
            cluster_label(r.get("cluster")),
            _trigger({"trigger": r.get("trigger"), "triggered_by": r.get("triggered_by")}),
            gate,
            num(r.get("current_max_lag")),
            str(r.get("strategy") or "-"),
            num(r.get("plan_max_lag")),
        )
        if timed:
            row += (when(r, "current_max_catch_up_s"), when(r, "plan_max_catch_up_s"))
        versions = ", ".join(f"v{v['version']} {v['state']}" for v in r.get("publications") or ())
        table.append((*row, versions or "-"))
    widths = [max(len(c), *(len(t[i]) for t in table)) for i, c in enumerate(cols)]
    right = {0, 5, 7, *((8, 9) if timed else ())}

    def line(row: tuple[str, ...]) -> str:
        pairs = enumerate(zip(row, widths, strict=True))
        return "  ".join(f"{v:>{w}}" if i in right else f"{v:<{w}}" for i, (v, w) in pairs).rstrip()

    return "\n".join([line(cols), *(line(t) for t in table)])


def _dump(value: Any) -> None:
    json.dump(value, sys.stdout, default=_json_default, indent=2)
    sys.stdout.write("\n")


def _json_default(value: Any) -> str:
    if isinstance(value, datetime | date):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON-serialisable")


def _time(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S") if value is not None else "-"


def _stamp(value: datetime | None) -> str:
    return f"{_time(value)} UTC" if value is not None else "-"


def _trigger(plan: dict[str, Any]) -> str:
    by = plan.get("triggered_by")
    return f"{plan['trigger']} by {by}" if by else plan["trigger"]


def plans_table(plans: list[dict[str, Any]], with_cluster: bool = False) -> str:
    """The list of plans as an aligned table (times in UTC); ``with_cluster`` (a list for one
    group) adds what the cluster ran for it: group type / assignor, "-" when unknown."""
    cols: tuple[str, ...] = (
        "id",
        "created (UTC)",
        "cluster",
        "status",
        "trigger",
        "groups",
        "go",
        "published",
        "dag run",
        "outcome",
    )
    rows: list[tuple[str, ...]] = [
        (
            str(p["id"]),
            _time(p["created_at"]),
            cluster_label(p.get("cluster")),
            p["status"],
            _trigger(p),
            str(p["groups"]),
            str(p["go"]),
            str(p["published"]),
            " / ".join(x for x in (p.get("dag_id"), p.get("run_id")) if x) or "-",
            str(p.get("outcome") or "-"),
        )
        for p in plans
    ]
    if with_cluster:
        cols += ("type / assignor",)
        rows = [
            (*r, " / ".join(x or "-" for x in (p.get("group_type"), p.get("assignor"))))
            for r, p in zip(rows, plans, strict=True)
        ]
    widths = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(cols)]
    right = {0, 5, 6, 7}

    def line(row: tuple[str, ...]) -> str:
        pairs = enumerate(zip(row, widths, strict=True))
        cells = (f"{v:>{w}}" if i in right else f"{v:<{w}}" for i, (v, w) in pairs)
        return "  ".join(cells).rstrip()

    return "\n".join([line(cols), *(line(r) for r in rows)])


def _lag_times(snapshot_uri: str | None) -> dict[str, dict[tuple[str, int], float]]:
    """Per group, lag in seconds per partition from the plan's snapshot; empty when the snapshot
    is gone, unreadable or older than lag in seconds."""
    if not snapshot_uri:
        return {}
    try:
        return partition_lag_seconds(snapshot_uri)
    except Exception:
        return {}


def in_time(group: dict[str, Any], times: dict[tuple[str, int], float] | None = None) -> list[str]:
    """A group's time lines: max catch-up now → under the plan, per member, and lag in seconds;
    none for a group planned without capacities and without offset history."""
    results = {r.get("strategy"): r for r in group.get("results") or ()}
    d = group.get("decision") or {}
    name = d.get("chosen") or d.get("candidate") or group.get("best")
    current = (results.get("current") or {}).get("metrics") or {}
    target = (results.get(name) or {}).get("metrics") if name != "current" else None
    out = []
    unconsumed = len((results.get("current") or {}).get("unassigned") or ())
    change = catch_up_change(current, target, name, unconsumed)
    if change:
        out.append(change)
        now, then = current.get("catch_up_s") or {}, (target or {}).get("catch_up_s") or {}
        members = sorted(set(now) | set(then))
        if members and target is not None:
            shown = ", ".join(
                f"{m} {duration_text(now.get(m)) if m in now else '-'} → "
                f"{duration_text(then.get(m)) if m in then else '-'}"
                for m in members
            )
            out.append(f"catch-up per member now → {name}: {shown}")
    lag_time = lag_time_text(times)
    if lag_time:
        out.append(lag_time)
    return out


def plan_text(plan: dict[str, Any]) -> str:
    """One plan for people: header, then per group the decision, publications and evaluation."""
    out = [f"plan {plan['id']}: {plan['status']}, {_trigger(plan)}"]
    out.append(f"  cluster   {cluster_label(plan.get('cluster'))}")
    out.append(f"  created   {_stamp(plan['created_at'])}, finished {_stamp(plan['finished_at'])}")
    if plan.get("dag_id") or plan.get("run_id"):
        out.append(f"  dag run   {plan.get('dag_id') or '-'} / {plan.get('run_id') or '-'}")
    if plan.get("snapshot_uri") or plan.get("snapshot_at"):
        taken = _stamp(plan.get("snapshot_at"))
        out.append(f"  snapshot  {plan.get('snapshot_uri') or '-'} (taken {taken})")
    if plan.get("parameters") is not None:
        out.append(f"  parameters {json.dumps(plan['parameters'], sort_keys=True)}")
    if plan.get("error"):
        out.append(f"  error     {plan['error']}")
    if not plan["groups"]:
        out.append("\nno groups recorded")
    times = _lag_times(plan.get("snapshot_uri"))
    for g in plan["groups"]:
        out.append("")
        d = g["decision"]
        if d is None:
            out.append(f"group {g['group']}: no gate decision recorded")
        elif d["go"]:
            out.append(f"group {g['group']}: go: {d['reason']}")
        else:
            out.append(f"group {g['group']}: stop: {d['reason']}")

        cluster = cluster_text(g.get("group_type"), g.get("assignor"))
        if cluster:
            out.append(f"  {cluster}")
        out.append(f"  outcome   {outcome_of(plan, g).line()}")
        for pub in g["publications"]:
            line = f"  plan version {pub['version']} ({pub['strategy']}): {pub['state']}"
            if pub["published_at"] is not None:
                line += f" at {_stamp(pub['published_at'])}"
            if pub.get("forced"):
                line += " (forced)"
            if pub.get("error"):
                line += f": {pub['error']}"
            out.append(line)
        if not g["error"]:
            out.extend(f"  {line}" for line in in_time(g, times.get(g["group"])))
        if g["error"]:
            out.append(f"  not evaluated: {g['error']}")
        else:
            measured = [r for r in g["results"] if "refused" in r or _measured(r)]
            if measured and g["members"] is not None:
                shown = {**g, "results": measured, "lower_bound_max_lag": g["lower_bound_max_lag"] or 0}
                table = evaluation_table(shown)
                out.extend("  " + row if row else row for row in table.splitlines())
            out.extend(f"  {_unmeasured_line(r)}" for r in g["results"] if r not in measured)
    return "\n".join(out)


#: What a result's metrics hold when lagassign measured it (``lagassign publish`` records an
#: assignment from a plan file with no metrics: nothing to compare)
_MEASURES = ("max_lag", "imbalance", "lag_spread", "count_spread", "moves")


def _measured(result: dict[str, Any]) -> bool:
    metrics = result.get("metrics")
    return isinstance(metrics, dict) and all(metrics.get(k) is not None for k in _MEASURES)


def _unmeasured_line(result: dict[str, Any]) -> str:
    """A result recorded without metrics: its assignment in brief."""
    assignment = result.get("assignment") or {}
    parts = sum(len(v or ()) for v in assignment.values())
    each = ", ".join(f"{m} {len(v or ())}" for m, v in sorted(assignment.items()))
    return (
        f"{result.get('strategy')}: assignment recorded without lag figures: {len(assignment)} "
        f"members, {parts} partitions ({each or 'none'})"
    )
