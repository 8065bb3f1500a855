"""``lagassign groups`` and ``lagassign groups show GROUP``: every consumer group of a cluster
with its status (``core.health``), lag in messages and seconds, catch-up time, members or
instances and the plan in force; ``--record`` runs the health job once (for cron, without
Airflow): it records the observation and sends the alerts due to ``--notify-url``.

The cluster is read now; the audit store (``--db``) gives the observations of the rules'
window and the last plans (without a store every group is judged on this one observation: no
STALL, STOP or WARN, which need a window). When the cluster cannot be read and the health job
recorded statuses, those are shown with their age (stderr says so).

Its arguments are in ``cli.groups_args``; this module is imported when it runs.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from ..core.clock import iso_z, utc_now
from ..core.errors import LagassignError
from ..core.health import STATUSES
from ..kafka.groupsfile import load_groups_file
from ..kafka.snapshot import compile_regex
from ..pipeline.alerts import webhook_sender
from ..pipeline.health import health_run
from ..pipeline.overview import (
    DEFAULT_WINDOW_S,
    HealthSettings,
    build_overview,
    catch_up_text,
    observe,
    seconds_text,
    sort_rows,
    stored_overview,
)
from .kafka import _client_config


def _settings(args: argparse.Namespace) -> Any:
    window = args.window
    if window is None:
        text = os.environ.get("LAGASSIGN_HEALTH_WINDOW")
        try:
            window = float(text) if text else DEFAULT_WINDOW_S
        except ValueError:
            raise LagassignError(f"LAGASSIGN_HEALTH_WINDOW={text!r} is not a number of seconds") from None
        if not window > 0:
            raise LagassignError(f"LAGASSIGN_HEALTH_WINDOW={text!r} is not a positive number of seconds")
    return HealthSettings(
        window_s=window,
        groups=args.groups,
        groups_file=args.groups_file,
        plan_topic=args.plan_topic,
        status_topic=args.status_topic,
        session_timeout_ms=int(args.session_timeout * 1000) if args.session_timeout else None,
    )


def _statuses(text: str | None) -> set[str] | None:
    if text is None:
        return None
    wanted = {s.strip().upper() for s in text.split(",") if s.strip()}
    unknown = sorted(wanted - set(STATUSES))
    if unknown or not wanted:
        raise LagassignError(f"--status: expected some of {', '.join(STATUSES)}, got {text!r}")
    return wanted


def cmd_groups(args: argparse.Namespace) -> int:
    """``lagassign groups`` (every group, a table or JSON) and ``groups show GROUP`` (one in full)."""
    words = list(args.words)
    if words and (words[0] != "show" or len(words) != 2):
        raise LagassignError("expected `lagassign groups` or `lagassign groups show GROUP`")
    if args.notify_url and not args.record:
        raise LagassignError("--notify-url needs --record (alerts are sent by the health job)")
    if args.record and args.no_db:
        raise LagassignError("--record needs the audit store (it records there): drop --no-db")
    wanted = _statuses(args.status)
    compile_regex(args.groups)
    settings = _settings(args)
    if args.groups_file:
        load_groups_file(args.groups_file)  # a bad file is one line now
    ov = _overview(args, settings)
    rows = ov.groups
    if words:
        found = [r for r in rows if r["group"] == words[1]]
        if not found:
            raise LagassignError(f"no group {words[1]!r} on cluster {ov.cluster or 'unknown'}")
        if args.json:
            _dump({**found[0], "cluster": ov.cluster, "fresh": ov.fresh})
        else:
            print(group_text(found[0], ov))
        return 0
    if wanted is not None:
        rows = [r for r in rows if r["status"] in wanted]
    rows = sort_rows(rows, args.sort)
    if args.json:
        out = ov.to_dict()
        out["groups"] = [{k: v for k, v in r.items() if k != "partitions"} for r in rows]
        _dump(out)
    else:
        print(groups_table(rows, ov))
    return 0


def _overview(args: argparse.Namespace, settings: Any) -> Any:
    """Read the cluster (and the store's window), or fall back to what the health job recorded."""
    config = _client_config(args)
    store = _open_store(args)
    try:
        if args.record:  # the health job once: what it recorded is what is shown
            send = webhook_sender(args.notify_url) if args.notify_url else None
            return health_run(store, config, settings, send, log=_quiet, timeout=args.timeout)[0]
        try:
            view = observe(config, settings, args.timeout)
        except LagassignError as exc:
            stored = stored_overview(store) if store is not None else None
            if stored is None:
                raise
            _say(f"the cluster cannot be read ({exc}); showing what the health job recorded")
            return stored
        return build_overview(view, store, settings)
    finally:
        if store is not None:
            store.close()


def _open_store(args: argparse.Namespace) -> Any:
    """The audit store (created only by --record), or None with a note when there is none."""
    if args.no_db:
        return None
    from ..store import AuditStore, StoreNotFoundError

    try:
        return AuditStore(args.db, create=bool(args.record))
    except StoreNotFoundError as exc:
        _say(f"{exc}: statuses judge this observation alone (no STALL, STOP or WARN without a window)")
        return None


def _say(message: str) -> None:
    print(f"lagassign: {message}", file=sys.stderr)


def _quiet(message: str) -> None:
    """The health job's log lines worth a cron mail: alerts that could not be delivered."""
    if message.startswith(("alert not delivered", "alert (no notifier")):
        _say(message)


def _dump(data: Any) -> None:
    json.dump(data, sys.stdout, indent=1, default=str)
    sys.stdout.write("\n")


# -- text for people ----------------------------------------------------------------------------


def _source(ov: Any) -> str:
    age = (utc_now() - ov.observed_at).total_seconds()
    how = "read now" if ov.fresh else f"recorded by the {ov.source} {seconds_text(age)} ago"
    return f"cluster {ov.cluster or 'unknown'}, {iso_z(ov.observed_at, 'seconds')} ({how})"


def instances_text(row: dict[str, Any]) -> str:
    """'2 alive' or '1 alive, 1 dead (w1)'."""
    text = f"{row.get('alive') or 0} alive"
    dead = [i["instance"] for i in row.get("instances") or [] if i["state"] == "dead"]
    if dead:
        text += f", {len(dead)} dead ({', '.join(dead)})"
    return text


def groups_table(rows: list[dict[str, Any]], ov: Any) -> str:
    """The groups as an aligned table, after a line saying where and when they were read."""
    head = (
        "GROUP",
        "TYPE",
        "STATUS",
        "LAG",
        "MAX LAG",
        "LAG TIME",
        "CATCH-UP",
        "CONSUMERS",
        "PLAN",
        "LAST PLAN",
    )
    lines = []
    for r in rows:
        plan = r.get("last_plan")
        lines.append(
            (
                r["group"],
                r.get("group_type") or ("assign()" if r.get("kind") == "assign" else "-"),
                r["status"],
                f"{r.get('total_lag') or 0:,}",
                f"{r.get('max_lag') or 0:,}",
                seconds_text(r.get("max_lag_s")),
                catch_up_text(r),
                instances_text(r),
                f"v{r['plan_version']}" if r.get("plan_version") else "-",
                f"#{plan['plan_id']} {plan['outcome']}" if plan else "-",
            )
        )
    widths = [max(len(str(x)) for x in col) for col in zip(head, *lines, strict=False)]
    out = [_source(ov)]
    for w in ov.warnings[:5]:
        out.append(f"warning: {w}")
    out.append("  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)).rstrip())
    for line in lines:
        out.append("  ".join(str(c).ljust(w) for c, w in zip(line, widths, strict=True)).rstrip())
    if not lines:
        out.append("(no groups)")
    return "\n".join(out)


def group_text(row: dict[str, Any], ov: Any) -> str:
    """One group in full: status and every finding, figures, consumers, partitions."""
    kind = row.get("group_type") or ("assign() mode" if row.get("kind") == "assign" else "unknown type")
    out = [
        f"group {row['group']} ({kind}, state {row.get('state') or '-'}): {row['status']}",
        _source(ov),
    ]
    for f in row.get("findings") or []:
        out.append(f"  {f['status']}: {f['reason']}")
    if not row.get("findings"):
        out.append(f"  {row.get('reason')}")
    out.append(
        f"lag {row.get('total_lag') or 0:,} messages (max {row.get('max_lag') or 0:,}), "
        f"lag time {seconds_text(row.get('max_lag_s'))}, catch-up {catch_up_text(row)}"
    )
    if row.get("not_read"):
        out.append(f"not read any more: {', '.join(row['not_read'])}")
    if row.get("plan_version"):
        out.append(f"plan in force: v{row['plan_version']}")
    plan = row.get("last_plan")
    if plan:
        why = f": {plan['reason']}" if plan.get("reason") else ""
        out.append(
            f"last plan: #{plan['plan_id']} {plan['created_at']} ({plan['trigger']}) {plan['outcome']}{why}"
        )
    if row.get("instances"):
        out.append("instances:")
        for i in row["instances"]:
            parts = ", ".join(f"{t}-{p}" for t, p in i["partitions"]) or "-"
            version = f"v{i['version']}" if i.get("version") is not None else "no plan"
            why = f" ({i['why']})" if i.get("why") else ""
            out.append(f"  {i['instance']}: {i['state']}{why}, runs {version}, partitions {parts}")
    if row.get("members"):
        out.append("members:")
        for m in row["members"]:
            parts = ", ".join(f"{t}-{p}" for t, p in m["partitions"]) or "-"
            out.append(f"  {m['id']} ({m.get('client_id') or '-'} {m.get('host') or ''}): {parts}")
    if row.get("partitions"):
        out.append("partitions:")
        head = ("PARTITION", "END", "COMMITTED", "LAG", "LAG TIME", "OWNER", "STATUS")
        lines = [
            (
                f"{p['topic']}-{p['partition']}",
                "-" if p["end"] is None else f"{p['end']:,}",
                "-" if p["committed"] is None else f"{p['committed']:,}",
                "-" if p["lag"] is None else f"{p['lag']:,}",
                seconds_text(p.get("lag_s")),
                p.get("owner") or "-",
                p["status"],
            )
            for p in row["partitions"]
        ]
        widths = [max(len(str(x)) for x in col) for col in zip(head, *lines, strict=False)]
        for line in (head, *lines):
            out.append("  " + "  ".join(str(c).ljust(w) for c, w in zip(line, widths, strict=True)).rstrip())
    return "\n".join(out)
