"""Loading the repository's DAG folder as Airflow's DAG processor does, in a fresh interpreter
(Airflow reads its settings once per process), and reading back what a test asks of the DagBag.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from testpaths import REPO

#: the DAGs the repository's ``dags/`` folder defines, sorted
REPO_DAGS = [
    "lagassign_daily",
    "lagassign_failover",
    "lagassign_health",
    "lagassign_rebalance",
    "lagassign_review",
]

_LOAD = (
    "import json, sys\n"
    "from airflow.dag_processing.dagbag import DagBag\n"
    "bag = DagBag(dag_folder=sys.argv[1])\n"
)


def bare_airflow_env(home: Path) -> dict[str, str]:
    """An ``airflow`` process's environment with its own home and nothing else: no examples,
    no connections, no inherited settings."""
    return {"AIRFLOW_HOME": str(home), "AIRFLOW__CORE__LOAD_EXAMPLES": "False", "PATH": "/usr/bin:/bin"}


def dagbag_report(report: str, env: dict[str, str], timeout: float = 180) -> Any:
    """What ``report`` prints last as JSON, run after ``bag = DagBag(<repo>/dags)`` under ``env``
    (``json`` and ``sys`` imported)."""
    out = subprocess.run(
        [sys.executable, "-c", _LOAD + report, str(REPO / "dags")],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])
