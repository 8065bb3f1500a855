"""Shared test setup: hypothesis profiles and a runner for the ``lagassign`` command.

Profiles: ``ci`` (default: derandomized, sized so the suite stays near a minute on two cores)
and ``dev`` (random, five times the examples). Choose with HYPOTHESIS_PROFILE=dev.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=100,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", deadline=None, max_examples=750)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

_SCRIPT = Path(sys.executable).parent / "lagassign"
# The installed console script is the contract (DESIGN.md); fall back to the module.
LAGASSIGN = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "lagassign.cli"]


def run_cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``lagassign ARGS`` as a separate process and capture its output."""
    return subprocess.run(
        [*LAGASSIGN, *args], input=stdin, capture_output=True, text=True, timeout=60, check=False
    )


@pytest.fixture
def cli():
    """``run_cli`` as a fixture: test modules cannot import this conftest reliably."""
    return run_cli


@pytest.fixture
def case_file(tmp_path):
    """Write a case (a dict, or raw text) to a file and return its path as a string."""

    def write(case: dict | str, name: str = "case.json") -> str:
        path = tmp_path / name
        path.write_text(case if isinstance(case, str) else json.dumps(case), encoding="utf-8")
        return str(path)

    return write
