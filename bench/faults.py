#!/usr/bin/env python3
"""Inject faults for real and print what lagassign did, as one table.

Planning faults (tests/support/faultkit.py, asserted on by tests/kafka/test_faults.py): broker
unreachable; broker stopped mid-snapshot; Spark job killed (``airflow dags test``); audit
database unreachable; crash between the plans topic and the audit store, reconciled by the next
run; broker restarted under three PlanConsumers.

Following a plan (tests/support/followkit.py, asserted on by test_following_safely.py and
test_failover_airflow.py), with Kafka's defaults (5 s commit interval, 30 s session timeout):
how far commits trail processing; messages replayed after a ``kill -9``; duplicates over 20
switches under load; seconds from ``kill -9`` to a plan without the dead instance, with
``lagassign watch`` and with the Airflow triggerer; a newcomer's share; ten planners at once
(the ledger against the topic); a plan too large; bad credentials and TLS.

The broker is the tests' one (scripts/brokerctl.py, LAGASSIGN_BROKER, default kafka4: Apache
Kafka 4; instance ``test``, never the demo's), stopped at the end if this script started it;
the faults that stop a broker stop a second broker of the same kind of this script's own.
Usage: bench/faults.py [--no-spark] [--no-airflow] [--only planning|following] [--json FILE] [--private]
(``--private``: a fresh broker of the bench's own on free ports, so that no test run shares it.)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "tests" / "support"), str(REPO / "scripts")]  # the tests' kits

import faultkit as fk  # noqa: E402
import followkit  # noqa: E402
from faultkit import brokerctl  # noqa: E402

HEAD = (
    "fault injected",
    "what the system did",
    "produced",
    "processed",
    "lost",
    "plans published",
    "audit records",
    "s",
)


def _cell(value: object) -> str:
    return "-" if value is None else str(value)


def table(outcomes: list[fk.Outcome]) -> str:
    rows = [HEAD] + [
        (
            o.fault,
            o.did[:120],
            _cell(o.produced),
            _cell(o.processed),
            _cell(o.lost),
            str(o.published),
            str(o.audit_records),
            f"{o.seconds:.1f}",
        )
        for o in outcomes
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEAD))]
    lines = [" | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--no-spark", action="store_true", help="skip the Airflow + Spark scenario (~1-2 min)")
    ap.add_argument("--no-airflow", action="store_true", help="skip the Airflow triggerer scenario (~3 min)")
    ap.add_argument("--only", choices=("planning", "following"), help="one half of the table")
    ap.add_argument("--json", help="also write the rows as JSON here")
    ap.add_argument(
        "--private", action="store_true", help="a fresh broker of the bench's own, not the tests' one"
    )
    args = ap.parse_args()

    os.environ.setdefault("LAGASSIGN_BROKER_INSTANCE", "test")  # not the demo's broker
    kind = brokerctl.kind_from_env(default="kafka4")
    os.environ["LAGASSIGN_BROKER"] = kind  # what the scenarios start (workers, watchers) uses it too
    private = Path(tempfile.mkdtemp(prefix=f"lagassign-faults-{kind}-")) if args.private else None
    already = private is not None or brokerctl.running(kind)
    broker = brokerctl.start_private(kind, private) if private is not None else brokerctl.start(kind)
    outcomes: list[fk.Outcome] = []
    try:
        with tempfile.TemporaryDirectory(prefix="lagassign-faults-") as tmp_name:
            tmp = Path(tmp_name)
            with fk.SpareBroker(tmp / "spare", kind) as spare:
                steps = []
                if args.only != "following":
                    steps += [
                        lambda: fk.broker_unreachable(tmp / "1"),
                        lambda: fk.broker_stopped_mid_snapshot(spare, tmp / "2"),
                        lambda: fk.audit_db_unreachable(broker, tmp / "3"),
                        lambda: fk.crash_between_topic_and_store(broker, tmp / "4"),
                        lambda: fk.consumers_across_broker_restart(spare),
                    ]
                    if not args.no_spark:
                        steps.insert(
                            2,
                            lambda: fk.spark_job_killed(
                                broker, fk.airflow_home(tmp / "airflow", broker), tmp / "5"
                            ),
                        )
                if args.only != "planning":
                    db = f"sqlite:///{tmp / 'race.db'}"
                    fu = followkit
                    steps += [
                        lambda: fu.commits_follow_processing(broker, tmp / "f1", 5000, seconds=15),
                        lambda: fu.replay_after_kill9(broker, tmp / "f2", interval_ms=5000, run_for=12),
                        lambda: fu.switches_under_load(broker, tmp / "f3", switches=20),
                        lambda: fu.failover_after_kill9(broker, tmp / "f4", session_timeout=30),
                        lambda: fu.newcomer_gets_a_share(broker, tmp / "f5", session_timeout=30),
                        lambda: fu.racing_planners(broker, tmp / "f6", db, planners=10),
                        lambda: fu.plan_too_large(broker, tmp / "f7", f"sqlite:///{tmp / 'big.db'}"),
                        lambda: fu.auth_failures(broker, tmp / "f8"),
                    ]
                    if not args.no_airflow:
                        steps.insert(
                            len(steps) - 4,
                            lambda: fu.airflow_failover_after_kill9(broker, tmp / "f9", session_timeout=30),
                        )
                for step in steps:
                    started = time.monotonic()
                    outcomes.append(step())
                    print(f"# {outcomes[-1].fault}: {time.monotonic() - started:.1f}s", file=sys.stderr)
    finally:
        if private is not None:
            brokerctl.stop_private(private)
            shutil.rmtree(private, ignore_errors=True)
        if not already:
            brokerctl.stop(kind)
    print(table(outcomes))
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                [
                    {
                        k: getattr(o, k)
                        for k in (
                            "fault",
                            "did",
                            "produced",
                            "processed",
                            "lost",
                            "published",
                            "audit_records",
                            "seconds",
                        )
                    }
                    for o in outcomes
                ],
                indent=1,
            )
        )
    return 1 if any(o.lost for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
