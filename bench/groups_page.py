"""Benchmark: the groups page with 1,000 groups (issue 29's goal: it renders in under 2 s).

Builds, without a broker, what one read of a cluster of G groups gives (``kafka.overview``'s
``ClusterView``: a quarter assign()-mode groups of three instances with a plan in force, the
rest subscribe() groups of three members; P partitions each) and an audit store (SQLite in a
temporary folder) holding the health job's window for them (an observation a minute for the
window and a half) and a plan of each group. Then times, each the median of ``--repeat`` runs:

* ``judge``: ``pipeline.overview.build_overview`` (the window read from the store, every group
  judged by ``core.health``, last plans and their outcomes), what a page does after a read;
* ``record``: ``pipeline.health.record``, the health job's writes of one run (every group
  partition's observation, pruned to the window, and every group's status);
* ``html``: ``workflow.groups_page.groups_list_html`` of every group, sorted worst first;
* ``route``: ``GET /lagassign/groups`` through the plugin's FastAPI app in process (login
  bypassed), the overview cached as after a read: what a browser waits for;
* ``route, cold``: the same with the overview's cache empty and the cluster read replaced by
  the built view (so: judge + html + the request), what the first visitor after a read waits.

The Kafka read itself is ``bench/snapshot_speed.py``'s figure (plus the status and plans
topics); the page does not wait for it longer than ``LAGASSIGN_GROUPS_READ_TIMEOUT``.

    .venv/bin/python bench/groups_page.py [--groups 1000] [--partitions 8] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "plugins"))

from lagassign.core.clock import iso_z, utc_now  # noqa: E402
from lagassign.core.liveness import InstanceStatus, Liveness  # noqa: E402
from lagassign.core.model import TopicPartition  # noqa: E402
from lagassign.core.plans import Plan  # noqa: E402
from lagassign.kafka.overview import ClusterView  # noqa: E402
from lagassign.pipeline.health import record  # noqa: E402
from lagassign.pipeline.overview import HealthSettings, build_overview, sort_rows  # noqa: E402
from lagassign.store import AuditStore  # noqa: E402
from lagassign.tables.snapshot import Snapshot  # noqa: E402

CLUSTER = "bench-cluster"


def build_view(groups: int, partitions: int) -> ClusterView:
    """A read of a cluster of ``groups`` groups (see the module doc), observed now."""
    now = utc_now()
    now_ms = int(now.timestamp() * 1000)
    rows, parts, members = [], [], []
    liveness = Liveness(30_000)
    plans: dict[str, Plan] = {}
    for g in range(groups):
        name = f"group-{g:05d}"
        topic = f"topic-{g % 50:02d}"
        assign = g % 4 == 0
        rows.append(
            {
                "group": name,
                "kind": "assign" if assign else "subscribe",
                "state": "Empty" if assign else "Stable",
                "protocol": None if assign else "range",
                "auto_offset_reset": "latest",
                "error": None,
                "plan_version": 3 if assign else None,
                "group_type": None if assign else ("consumer" if g % 3 else "classic"),
            }
        )
        owners = {p: f"{'w' if assign else 'm'}{p % 3}" for p in range(partitions)}
        for p in range(partitions):
            end = 1_000_000 + 1_000 * g + p
            lag = (g * 7 + p * 13) % 500 if g % 10 else 50_000 + p
            parts.append(
                {
                    "group": name,
                    "topic": topic,
                    "partition": p,
                    "begin": 0,
                    "end": end,
                    "committed": end - lag,
                    "lag": lag,
                }
            )
        if assign:
            layout = {
                f"w{i}": [[topic, p] for p in range(partitions) if owners[p] == f"w{i}"] for i in range(3)
            }
            plans[name] = Plan(f"plan-{g}", name, 3, iso_z(now) or "", "lag-optimal", None, layout)
            for i in range(3):
                alive = not (g % 20 == 0 and i == 1)
                status = InstanceStatus(
                    name,
                    f"w{i}",
                    now_ms - (1_000 if alive else 120_000),
                    version=3,
                    partitions=tuple(TopicPartition(topic, p) for _t, p in layout[f"w{i}"]),
                    rate=100.0,
                    lag=10,
                    host=f"pod-{i}",
                )
                liveness.apply(name, f"w{i}", status, now_ms)
        else:
            for i in range(3):
                members.append(
                    {
                        "group": name,
                        "member_id": f"m{i}",
                        "instance_id": None,
                        "client_id": "app",
                        "host": f"/10.0.{g % 250}.{i}",
                        "topics": [topic],
                        "assignment": [
                            {"topic": topic, "partition": p}
                            for p in range(partitions)
                            if owners[p] == f"m{i}"
                        ],
                    }
                )
    snap = Snapshot(rows, parts, members, {"cluster_id": CLUSTER, "finished_at": iso_z(now)})
    return ClusterView(CLUSTER, now, snap, liveness, plans)


def fill_store(store: AuditStore, view: ClusterView, window_s: float) -> None:
    """The health job's observations of the window and a half, a minute apart, and a plan per group."""
    from lagassign.core.gate import GateDecision

    now = view.observed_at
    minutes = int(window_s * 1.5 / 60)
    for m in range(minutes, 0, -1):
        at = now - timedelta(minutes=m)
        rows = [
            (
                r["group"],
                r["topic"],
                r["partition"],
                r["end"] - 600 * m,
                r["committed"] - 600 * m,
                r["lag"],
                None,
            )
            for r in view.snapshot.partitions
        ]
        store.record_observation(CLUSTER, at, rows, timedelta(seconds=window_s * 1.5 + 120))
    plan_id = store.start_plan(
        "scheduled", None, "lagassign_daily", "bench__1", {"apply": True}, cluster=CLUSTER
    )
    names = [r["group"] for r in view.snapshot.groups]
    store.record_evaluations(plan_id, [{"group": g, "members": 3, "results": []} for g in names])
    store.record_decisions(
        plan_id, [GateDecision(g, False, "imbalance 1.02 is under the threshold 1.1") for g in names]
    )
    store.finish_plan(plan_id, "succeeded")


def median_time(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--groups", type=int, default=1000)
    ap.add_argument("--partitions", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    settings = HealthSettings()
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/audit.db"
        os.environ["LAGASSIGN_DB_URL"] = url
        os.environ["AIRFLOW_CONN_LAGASSIGN_KAFKA"] = (
            '{"conn_type": "generic", "extra": {"bootstrap.servers": "127.0.0.1:1"}}'
        )
        view = build_view(args.groups, args.partitions)
        t = time.perf_counter()
        with AuditStore(url) as store:
            fill_store(store, view, settings.window_s)
        setup = time.perf_counter() - t
        print(
            f"{args.groups:,} groups x {args.partitions} partitions; store: "
            f"{len(view.snapshot.partitions):,} partitions x {int(settings.window_s * 1.5 / 60)} "
            f"observations (built in {setup:.1f} s)"
        )
        from lagassign.workflow import group_overviews
        from lagassign.workflow.groups_page import ListQuery, filter_rows, groups_list_html
        from lagassign.workflow.plugin import app
        from lagassign.workflow.web import require_login

        with AuditStore(url, create=False) as store:
            judge, ov = median_time(lambda: build_overview(view, store, settings), args.repeat)
        query = ListQuery()
        html_s, html = median_time(
            lambda: groups_list_html(
                ov, sort_rows(filter_rows(ov.groups, query), "status"), query, utc_now()
            ),
            args.repeat,
        )
        from fastapi.testclient import TestClient

        app.dependency_overrides[require_login] = lambda: "bench"
        client = TestClient(app)

        def warm() -> Any:
            group_overviews.overviews.latest, group_overviews.overviews.read_at = ov, time.monotonic()
            r = client.get("/groups", headers={"Accept": "text/html"})
            assert r.status_code == 200 and r.text.count("<tr data-group=") == args.groups, r.status_code
            return r

        route_s, answer = median_time(warm, args.repeat)

        def fresh_read(self: Any) -> None:  # the cluster read replaced by the built view
            built = build_overview(view, group_overviews.store(), settings)
            with self.lock:
                self.latest, self.read_at = built, time.monotonic()

        group_overviews.Overviews._read = fresh_read  # type: ignore[method-assign]

        def cold() -> Any:
            group_overviews.overviews = group_overviews.Overviews()
            r = client.get("/groups", headers={"Accept": "text/html"})
            assert r.status_code == 200 and r.text.count("<tr data-group=") == args.groups
            return r

        cold_s, _ = median_time(cold, args.repeat)
        # last (it moves the view's time on): the health job's writes of a run, this observation
        # and the statuses, a minute after the previous one each time
        with AuditStore(url, create=False) as store:

            def write() -> Any:
                view.observed_at += timedelta(minutes=1)
                return record(store, view, ov, settings)

            write_s, _ = median_time(write, args.repeat)
    statuses: dict[str, int] = {}
    for r in ov.groups:
        statuses[r["status"]] = statuses.get(r["status"], 0) + 1
    print(f"statuses: {', '.join(f'{n} {s}' for s, n in sorted(statuses.items()))}")
    print(f"page size: {len(html) / 1e6:.2f} MB of HTML ({len(answer.content) / 1e6:.2f} MB served)")
    print(f"{'judge (build_overview)':28} {judge:6.3f} s")
    print(f"{'record (health job writes)':28} {write_s:6.3f} s")
    print(f"{'html (groups_list_html)':28} {html_s:6.3f} s")
    print(f"{'route, overview cached':28} {route_s:6.3f} s")
    print(
        f"{'route, cold (judge + html)':28} {cold_s:6.3f} s   goal < 2 s: {'met' if cold_s < 2 else 'MISSED'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
