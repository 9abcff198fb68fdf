"""The match folders a work horse unpacks both bots' sources into, and sweeping dead ones.

A horse removes its folder when the match ends; a horse that is killed (the worker's
``SIGKILL``, the OOM killer, a machine reboot of a persistent ``/tmp``) cannot, and the
folder keeps both bots' sources. Each folder is named after its horse's pid, so:

- the RQ worker process removes its horse's folders as soon as the horse has ended, however
  it ended (:func:`remove_folders_of`: it reaps the horse, so it knows at once);
- the ``tacocat worker`` supervisor sweeps every :data:`IDLE_SWEEP_EVERY` seconds, idle or
  not, for the folders of horses whose whole worker died (:func:`sweep_if_due`);
- a worker process sweeps as it starts, and before a job when the last sweep is old.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Final

from .sandbox import pid_alive

log = logging.getLogger("tacocat.worker")

PREFIXES: Final = ("tacocat-match-", "tacocat-smoke-")
SWEEP_EVERY: Final = 60.0
"""Seconds between sweeps before jobs (a worker also sweeps once as it starts)."""
IDLE_SWEEP_EVERY: Final = 3.0
"""Seconds between the supervisor's sweeps (a listing of the temporary folder)."""
_lock = threading.Lock()
_last_sweep = 0.0


def match_folder(kind: str = "match") -> tempfile.TemporaryDirectory[str]:
    """A fresh folder for one match (or smoke test), named after this process (the horse)."""
    return tempfile.TemporaryDirectory(prefix=f"tacocat-{kind}-{os.getpid()}-")


def _owner(name: str) -> int | None:
    pid = name.split("-", 3)[2]
    return int(pid) if pid.isdigit() else None


def sweep_match_folders(root: str | Path | None = None) -> list[str]:
    """Remove match folders whose horse is dead; returns their names."""
    global _last_sweep
    with _lock:
        _last_sweep = time.monotonic()
    removed = []
    folder = Path(root if root is not None else tempfile.gettempdir())
    with contextlib.suppress(OSError):
        for entry in folder.iterdir():
            if not entry.name.startswith(PREFIXES) or not entry.is_dir() or entry.is_symlink():
                continue
            owner = _owner(entry.name)
            if owner is not None and pid_alive(owner):
                continue
            # Older folders (no pid in the name) are dead horses' too once an hour old.
            if owner is None and time.time() - entry.stat().st_mtime < 3600:
                continue
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry.name)
    if removed:
        log.info("swept %d stale match folder(s): %s", len(removed), ", ".join(removed))
    return removed


def sweep_if_due(root: str | Path | None = None, every: float = SWEEP_EVERY) -> list[str]:
    """:func:`sweep_match_folders` when the last sweep is ``every`` seconds old."""
    with _lock:
        due = time.monotonic() - _last_sweep >= every
    return sweep_match_folders(root) if due else []


def match_folders_of(pid: int, root: str | Path | None = None) -> list[Path]:
    """The match (and smoke test) folders on disk of the process ``pid``."""
    folder = Path(root if root is not None else tempfile.gettempdir())
    return [entry for prefix in PREFIXES for entry in folder.glob(f"{prefix}{pid}-*")
            if entry.is_dir() and not entry.is_symlink()]


def remove_folders_of(pid: int, root: str | Path | None = None) -> list[str]:
    """Remove the match folders of the process ``pid``, which has ended (its parent reaped
    it); returns their names."""
    removed = []
    for entry in match_folders_of(pid, root):
        shutil.rmtree(entry, ignore_errors=True)
        removed.append(entry.name)
    if removed:
        log.warning("removed the match folder(s) of work horse %d, which ended without "
                    "removing them (killed?): %s", pid, ", ".join(removed))
    return removed
