"""Processes the tests start, found and ended: nothing may outlive the test session.

Every process a test starts inherits the session's marker (``SESSION_VAR`` in its environment,
set by ``tests/conftest.py``), also when it moves to a process group or session of its own, so
the session can tell at its end which of them are still alive (``alive_with_marker``), whoever
started them. ``end_group`` ends what a fixture started with ``start_new_session=True``: the
whole process group and every descendant, not only the leader (``airflow standalone`` exits on
SIGTERM while its scheduler's LocalExecutor workers may still be running). Linux only (``/proc``).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Iterable
from pathlib import Path

#: The environment variable that marks the processes of one test session.
SESSION_VAR = "LAGASSIGN_TEST_SESSION"
PROC = Path("/proc")


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, parent pid, process group) of ``pid``, or None when it is gone."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()  # after "pid (comm) "
    return fields[0], int(fields[1]), int(fields[2])


def _live(pid: int) -> bool:
    found = _stat(pid)
    return found is not None and found[0] not in ("Z", "X")  # a zombie has ended already


def _pids() -> list[int]:
    return [int(p.name) for p in PROC.iterdir() if p.name.isdigit()]


def cmdline(pid: int) -> str:
    try:
        raw = (PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return "?"
    return raw.replace(b"\0", b" ").decode("utf-8", "replace").strip() or "?"


def alive_with_marker(value: str, var: str = SESSION_VAR) -> list[int]:
    """Live processes (not this one) whose environment holds ``var=value``."""
    needle = f"{var}={value}".encode()
    out = []
    for pid in _pids():
        if pid == os.getpid():
            continue
        try:
            env = (PROC / str(pid) / "environ").read_bytes()
        except OSError:
            continue
        if needle in env.split(b"\0") and _live(pid):
            out.append(pid)
    return sorted(out)


def descendants(root: int) -> set[int]:
    """``root``'s live descendants (through parent links, as they are now)."""
    parents: dict[int, list[int]] = {}
    for pid in _pids():
        found = _stat(pid)
        if found is not None:
            parents.setdefault(found[1], []).append(pid)
    out: set[int] = set()
    todo = [root]
    while todo:
        for child in parents.get(todo.pop(), ()):
            if child not in out:
                out.add(child)
                todo.append(child)
    return {p for p in out if _live(p)}


def group_members(pgid: int) -> set[int]:
    found = {pid: _stat(pid) for pid in _pids()}
    return {pid for pid, s in found.items() if s is not None and s[2] == pgid and s[0] not in ("Z", "X")}


def end_processes(pids: Iterable[int], grace: float = 30.0) -> list[int]:
    """SIGTERM each of ``pids`` and its process group (never the group of this test process),
    wait up to ``grace`` seconds for all to end, SIGKILL the rest. Returns those SIGKILLed."""
    pids = {p for p in pids if p != os.getpid()}
    mine = os.getpgrp()
    groups = set()
    for pid in pids:
        found = _stat(pid)
        if found is not None and found[2] != mine:
            groups.add(found[2])
    everyone = pids | {p for g in groups for p in group_members(g)}
    _signal(everyone, groups, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(_live(p) for p in everyone):
        time.sleep(0.2)
    left = sorted(p for p in everyone if _live(p))
    if left:
        _signal(set(left), groups, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(_live(p) for p in left):
            time.sleep(0.1)
    return left


def _signal(pids: set[int], groups: set[int], sig: int) -> None:
    for g in groups:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(g, sig)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def end_group(proc: subprocess.Popen, grace: float = 60.0) -> None:
    """End ``proc`` (started with ``start_new_session=True``), its process group and every process
    it started, also those that left the group; then reap ``proc``."""
    tree = {proc.pid} | descendants(proc.pid) if proc.poll() is None else descendants(proc.pid)
    tree |= group_members(proc.pid)
    end_processes(tree, grace)
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)
