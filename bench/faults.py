#!/usr/bin/env python3
"""Inject the faults of issue 8 for real and print what lagassign did, as one table.

Scenarios (tests/kafka/faultkit.py, the same code tests/kafka/test_faults.py asserts on):
broker unreachable; broker stopped mid-snapshot; Spark job killed (``airflow dags test``);
audit database unreachable; crash between the plans topic and the audit store, reconciled by
the next run; broker restarted under three PlanConsumers.

The broker is started through scripts/brokerctl.py (LAGASSIGN_BROKER, default noida) and
stopped at the end if this script started it; the faults that stop a broker stop a second
noida broker of this script's own. Usage: bench/faults.py [--no-spark] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "kafka"))

import faultkit as fk  # noqa: E402
from faultkit import brokerctl  # noqa: E402

HEAD = ("fault injected", "what the system did", "produced", "processed", "lost", "plans published",
        "audit records", "s")


def _cell(value: object) -> str:
    return "-" if value is None else str(value)


def table(outcomes: list[fk.Outcome]) -> str:
    rows = [HEAD] + [(o.fault, o.did[:120], _cell(o.produced), _cell(o.processed), _cell(o.lost),
                      str(o.published), str(o.audit_records), f"{o.seconds:.1f}") for o in outcomes]
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEAD))]
    lines = [" | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--no-spark", action="store_true", help="skip the Airflow + Spark scenario (~1-2 min)")
    ap.add_argument("--json", help="also write the rows as JSON here")
    args = ap.parse_args()

    kind = brokerctl.kind_from_env()
    already = brokerctl.running(kind)
    broker = brokerctl.start(kind)
    outcomes: list[fk.Outcome] = []
    try:
        with tempfile.TemporaryDirectory(prefix="lagassign-faults-") as tmp_name:
            tmp = Path(tmp_name)
            with fk.SpareBroker(tmp / "spare") as spare:
                steps = [
                    lambda: fk.broker_unreachable(tmp / "1"),
                    lambda: fk.broker_stopped_mid_snapshot(spare, tmp / "2"),
                    lambda: fk.audit_db_unreachable(broker, tmp / "3"),
                    lambda: fk.crash_between_topic_and_store(broker, tmp / "4"),
                    lambda: fk.consumers_across_broker_restart(spare),
                ]
                if not args.no_spark:
                    steps.insert(2, lambda: fk.spark_job_killed(
                        broker, fk.airflow_home(tmp / "airflow", broker), tmp / "5"))
                for step in steps:
                    started = time.monotonic()
                    outcomes.append(step())
                    print(f"# {outcomes[-1].fault}: {time.monotonic() - started:.1f}s", file=sys.stderr)
    finally:
        if not already:
            brokerctl.stop(kind)
    print(table(outcomes))
    if args.json:
        Path(args.json).write_text(json.dumps([
            {k: getattr(o, k) for k in ("fault", "did", "produced", "processed", "lost", "published",
                                        "audit_records", "seconds")} for o in outcomes], indent=1))
    return 1 if any(o.lost for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
