"""Processes as /proc shows them (whatever their process groups and sessions), and waiting.

Shared by the chaos suite and the worker tests: finding a worker's horse and bots, telling
a live process from a zombie, signalling a whole tree.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterable
from typing import TypeVar

_T = TypeVar("_T")


class ChaosError(Exception):
    """A chaos run could not go on: a process did not start, a wait ran out, the machine
    cannot build the hosts. The message says which."""


def wait_for(condition: Callable[[], _T | None], timeout: float, what: str,
             interval: float = 0.05) -> _T:
    """Poll ``condition`` until it is truthy and return its value; :class:`ChaosError`
    naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise ChaosError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)


def _stat(pid: int) -> list[bytes] | None:
    """The fields of /proc/PID/stat after the command name (state, ppid, ...)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()
    except OSError:
        return None


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie does not)."""
    stat = _stat(pid)
    return stat is not None and stat[0] != b"Z"


def parent(pid: int) -> int:
    """The parent's pid, or -1 if ``pid`` is gone."""
    stat = _stat(pid)
    return int(stat[1]) if stat is not None else -1


def cmdline(pid: int) -> str:
    """The command line, arguments joined by spaces ("" if gone)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def children_of(pid: int) -> list[int]:
    """Every live descendant of ``pid``, parents before their children."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (stat := _stat(int(entry))) is not None and stat[0] != b"Z":
            parents.setdefault(int(stat[1]), []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in parents.get(todo.pop(0), []):
            found.append(child)
            todo.append(child)
    return found


def signal_all(pids: Iterable[int], sig: int) -> None:
    """Send ``sig`` to each process that still exists."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)
