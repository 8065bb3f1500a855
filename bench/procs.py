"""Sampling processes from /proc for the Spark benches (``spark_ratio``, ``spark_scale``): each
process's stat fields and command line, and a thread that samples at a fixed period until
stopped. What is summed, and over which processes, is each bench's own ``sample``."""

from __future__ import annotations

import os
import threading
from pathlib import Path

PAGE = os.sysconf("SC_PAGE_SIZE")
TICKS = os.sysconf("SC_CLK_TCK")
# Indexes into ``stats()``'s fields (those after the command name in /proc/PID/stat).
PPID, UTIME, STIME, STARTTIME, RSS = 1, 11, 12, 19, 21


def stats() -> dict[int, list[str]]:
    """pid -> the fields of /proc/PID/stat after the command name, for every process now."""
    out = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                stat = Path(entry.path, "stat").read_text()
                out[int(entry.name)] = stat[stat.rindex(")") + 2 :].split()
            except (OSError, ValueError):
                continue  # the process ended meanwhile
    return out


def cmdline(pid: int) -> str | None:
    """The process's command line, spaces between arguments (None once it has ended)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return None


def boot_time() -> float:
    """When the machine booted (epoch seconds): a process started at boot + STARTTIME / TICKS."""
    for line in Path("/proc/stat").read_text().splitlines():
        if line.startswith("btime "):
            return float(line.split()[1])
    return 0.0


class Sampler(threading.Thread):
    """Calls ``sample`` every ``every`` seconds from ``start()`` until ``halt()``."""

    def __init__(self, every: float) -> None:
        super().__init__(daemon=True)
        self.every = every
        self._halt = threading.Event()

    def sample(self) -> None:
        raise NotImplementedError

    def run(self) -> None:
        while not self._halt.is_set():
            self.sample()
            self._halt.wait(self.every)

    def halt(self) -> None:
        self._halt.set()
        self.join()
