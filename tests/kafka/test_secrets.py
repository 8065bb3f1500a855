"""A recognisable secret given to ``lagassign plan`` never shows up in its output, the snapshot
manifest, the audit store, the published plans or an error message."""

from __future__ import annotations

import sqlite3
import uuid
from pathlib import Path

from kafkakit import config_flags, only_declared, run_cli

SECRET = "S3cr3t-" + uuid.uuid4().hex


def _everything_under(folder: Path) -> str:
    return "\n".join(p.read_bytes().decode("latin-1") for p in folder.rglob("*") if p.is_file())


def test_a_secret_appears_nowhere(broker, tmp_path):
    from demo_groups import build
    from lagassign.kafka.plans import PlanStore

    prefix = f"sec{uuid.uuid4().hex[:6]}-"
    groups_file = build(broker.config(), broker.create_topic, tmp_path / "demo", prefix=prefix)
    db = tmp_path / "audit.db"
    # The broker ignores SASL settings on a plaintext listener; librdkafka still holds them.
    secret_flags = ["--config", f"sasl.password={SECRET}", "--config", "sasl.username=planner"]
    run = run_cli(
        "plan",
        *config_flags(broker),
        *secret_flags,
        "--groups",
        only_declared(groups_file),
        "--groups-file",
        str(groups_file),
        "--apply",
        "--base-dir",
        str(tmp_path / "runs"),
        "--db",
        f"sqlite:///{db}",
        "--verbose",
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert "published" in run.stderr  # the run did its work, so every place below was written

    failing = run_cli(
        "plan",
        "--bootstrap-server",
        "127.0.0.1:1",
        *secret_flags,
        "--timeout",
        "2",
        "--base-dir",
        str(tmp_path / "runs2"),
        "--db",
        f"sqlite:///{db}",
    )
    assert failing.returncode != 0

    places = {
        "plan output": run.stdout + run.stderr,
        "error output": failing.stdout + failing.stderr,
        "snapshots and evaluations": _everything_under(tmp_path / "runs"),
        "audit store": db.read_bytes().decode("latin-1"),
    }
    with sqlite3.connect(db) as conn:
        places["audit rows"] = repr(conn.execute("select * from plans").fetchall())
    with PlanStore(broker.config()) as topic:
        places["published plans"] = repr(topic.read([f"{prefix}orders-enricher"]))
    leaked = [name for name, text in places.items() if SECRET in text]
    assert leaked == [], f"secret found in: {leaked}"
