"""The background processes the scripts start and find again by pid file (``brokerctl``'s
brokers, ``sparkcluster``'s daemons): started in a session of their own with their output in a
log next to the pid file, and told alive or gone.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path


def spawn(folder: Path, name: str, argv: list[str], env: dict[str, str] | None = None) -> int:
    """Start ``argv`` in ``folder`` (created) as a session leader, stdout and stderr appended to
    ``NAME.log`` there; its pid goes to ``NAME.pid``. Returns the pid."""
    folder.mkdir(parents=True, exist_ok=True)
    log = open(folder / f"{name}.log", "ab")  # noqa: SIM115 - handed to the child
    proc = subprocess.Popen(
        argv,
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        cwd=folder,
        env=env,
        start_new_session=True,
    )
    log.close()
    (folder / f"{name}.pid").write_text(f"{proc.pid}\n")
    return proc.pid


def alive(pid: int) -> bool:
    """Whether ``pid`` still runs: a zombie child of ours has ended (it is reaped here)."""
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            return False
    except ChildProcessError:
        pass  # not our child: signal 0 tells
    return _reached(os.kill, pid)


def group_alive(pgid: int) -> bool:
    """Whether any process of process group ``pgid`` is left."""
    return _reached(os.killpg, pgid)


def _reached(kill: Callable[[int, int], None], target: int) -> bool:
    """Whether signal 0 through ``kill`` (``os.kill`` or ``os.killpg``) finds ``target``; one
    of another user's counts as there."""
    try:
        kill(target, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
