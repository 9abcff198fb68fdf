"""``tacocat worker``'s process tree: N RQ worker processes and the dispatcher loop.

::

    tacocat worker (this supervisor: dispatcher loop, restarts dead workers)
     ├── python -m tacocat.worker --index 0   pinned to core 0  (RQ worker)
     │    └── work horse (one per job)         core 0
     │         ├── bot A host (sandboxed)      core 0
     │         └── bot B host (sandboxed)      core 0
     └── python -m tacocat.worker --index 1   pinned to core 1 ...

Every level carries PR_SET_PDEATHSIG (SIGKILL), so killing any process, even with SIGKILL,
takes everything below it along: no bot outlives its match's worker. Workers run in their
own process groups, so a terminal's Ctrl-C reaches only the supervisor, which then stops
them in order: SIGTERM (RQ's warm shutdown: finish the running match) for ``grace`` seconds,
SIGTERM again (cold: RQ kills the work horse, whose bots die with it), then SIGKILL. A
match cut short stays scheduled and is re-run (its lease lapses; the dispatcher re-enqueues).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import FrameType
from typing import Final

from redis import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from tacocat.arena import Arena, as_unavailable

from ._folders import IDLE_SWEEP_EVERY, sweep_if_due
from .bounds import MatchTimeouts
from .dispatcher import DEFAULT_WAIT, Dispatcher
from .launch import pin_to, set_parent_death_signal, warm_bytecode, worker_cpu
from .queue import MatchQueue
from .settings import WorkerSettings

log = logging.getLogger("tacocat.worker")

RESTART_BACKOFF: Final = (0.5, 1.0, 2.0, 5.0, 10.0, 30.0)
"""Seconds before restarting a worker that died, by how many times it died quickly."""
QUICK_DEATH: Final = 10.0


class _StopSignalError(Exception):
    """Raised from the signal handler to leave a blocking call at once."""


@dataclass
class _Child:
    index: int
    proc: subprocess.Popen[bytes]
    started: float
    quick_deaths: int = 0
    restart_at: float | None = None


@dataclass
class WorkerPool:
    """Run ``workers`` RQ worker processes on ``url`` (and the dispatcher) until stopped."""

    url: str
    settings: WorkerSettings = field(default_factory=WorkerSettings)
    workers: int = 0
    """0: one per CPU this process may use."""
    dispatch: bool = True
    grace: float = 10.0
    """Seconds running matches get to finish at shutdown before their horses are killed."""
    wait: float = DEFAULT_WAIT
    log_level: str = "INFO"
    _children: list[_Child] = field(default_factory=list, init=False, repr=False)
    _stopping: bool = field(default=False, init=False, repr=False)
    _hurry: bool = field(default=False, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.workers <= 0:
            self.workers = len(os.sched_getaffinity(0))

    # -- running -------------------------------------------------------------------------------

    def run(self, ready: Callable[[WorkerPool], None] | None = None) -> int:
        """Start everything, dispatch until SIGINT/SIGTERM/SIGHUP, stop everything. Returns 0."""
        previous = {sig: signal.signal(sig, self._on_signal)
                    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
        dispatcher: Dispatcher | None = None
        try:
            warm_bytecode()
            self.start()
            if self.dispatch:
                # The dispatcher blocks in BLPOP for up to ``wait`` seconds: redis-py's
                # default socket timeout (5 s) would cut that read short.
                redis = Redis.from_url(self.url, socket_timeout=self.wait + 30)
                arena = Arena(redis, prefix=self.settings.prefix)
                dispatcher = Dispatcher(arena, MatchQueue(
                    arena.redis, prefix=self.settings.prefix,
                    match_queue=self.settings.match_queue, smoke_queue=self.settings.smoke_queue,
                    job_timeout=self.settings.job_timeout, stray_grace=self.settings.lease,
                    match_timeout=MatchTimeouts(arena, self.settings)),
                    wait=self.wait,
                    # A SIGKILLed dispatcher cannot give its lock up: its successor takes
                    # over within a lease, as a dead worker's match is re-run.
                    grace=self.settings.lease, lock_ttl=self.settings.lease)
            if ready is not None:
                ready(self)
            while not self._stopping:
                self._supervise()
                # Folders of horses that died with their whole worker, even on an idle host.
                sweep_if_due(every=IDLE_SWEEP_EVERY)
                self._dispatch_once(dispatcher)
        except _StopSignalError:
            pass
        finally:
            # A second Ctrl-C during shutdown skips the grace period; it never leaves workers
            # behind (the handler only sets a flag).
            for sig in previous:
                signal.signal(sig, self._on_second_signal)
            if dispatcher is not None:
                with contextlib.suppress(RedisConnectionError, RedisTimeoutError):
                    dispatcher.release()
            self.stop()
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        return 0

    def start(self) -> None:
        """Start the worker processes (idempotent for those running)."""
        for index in range(self.workers):
            if index >= len(self._children):
                self._children.append(self._spawn(index))

    def stop(self) -> None:
        """Warm, then cold, then hard shutdown of every worker process (module docs)."""
        live = [c for c in self._children if c.proc.poll() is None]
        if live:
            log.info("stopping %d worker%s (running matches get %.0f s to finish)", len(live),
                     "s" * (len(live) != 1), self.grace)
        for child in live:
            _signal(child, signal.SIGTERM)
        live = self._wait_all(live, self.grace)
        if live:
            time.sleep(1.1)  # RQ ignores a repeated signal within one second
            for child in live:
                _signal(child, signal.SIGTERM)
            live = self._wait_all(live, 5.0)
        for child in live:
            log.warning("worker %d did not stop; killing it", child.index)
            _signal(child, signal.SIGKILL, group=True)
        self._hurry = False
        self._wait_all(live, 5.0)
        self._children.clear()

    @property
    def pids(self) -> list[int]:
        return [c.proc.pid for c in self._children if c.proc.poll() is None]

    # -- internals -----------------------------------------------------------------------------

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        if not self._stopping:
            self._stopping = True
            log.info("%s: shutting down (again to stop running matches at once)",
                     signal.Signals(signum).name)
            raise _StopSignalError

    def _on_second_signal(self, signum: int, frame: FrameType | None) -> None:
        self._hurry = True

    def _wait_all(self, children: list[_Child], timeout: float) -> list[_Child]:
        """Wait up to ``timeout`` for ``children`` to exit (less after a second signal)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not self._hurry:
            if all(c.proc.poll() is not None for c in children):
                break
            time.sleep(0.05)
        return [c for c in children if c.proc.poll() is None]

    def _dispatch_once(self, dispatcher: Dispatcher | None) -> None:
        # Not the lock holder (or no dispatcher): poll the lock and the children each second.
        if dispatcher is None or not run_dispatch_step(dispatcher):
            time.sleep(min(1.0, self.wait))

    def _spawn(self, index: int) -> _Child:
        settings = self.settings
        cpu = worker_cpu(index) if settings.pinning == "all" else None

        def preexec() -> None:
            pin_to(cpu)
            set_parent_death_signal()

        command = [sys.executable, "-m", "tacocat.worker", "--url", self.url,
                   "--index", str(index), "--settings", settings.to_json(),
                   "--log-level", self.log_level]
        proc = subprocess.Popen(command, preexec_fn=preexec,  # noqa: PLW1509 - no threads here
                                process_group=0)
        log.info("worker %d started (pid %d%s)", index, proc.pid,
                 f", core {cpu}" if cpu is not None else "")
        return _Child(index, proc, time.monotonic())

    def _supervise(self) -> None:
        """Restart worker processes that died, backing off when they die quickly."""
        now = time.monotonic()
        for position, child in enumerate(self._children):
            code = child.proc.poll()
            if code is None:
                continue
            if child.restart_at is None:
                quick = now - child.started < QUICK_DEATH
                child.quick_deaths = child.quick_deaths + 1 if quick else 0
                delay = RESTART_BACKOFF[min(child.quick_deaths, len(RESTART_BACKOFF) - 1)]
                child.restart_at = now + delay
                log.warning("worker %d (pid %d) exited with %s; restarting in %.1f s%s",
                            child.index, child.proc.pid, _status(code), delay,
                            f" (it died within {QUICK_DEATH:.0f} s of starting "
                            f"{child.quick_deaths} times in a row: the lines above say why)"
                            if child.quick_deaths > 1 else "")
            if now >= child.restart_at:
                fresh = self._spawn(child.index)
                fresh.quick_deaths = child.quick_deaths
                self._children[position] = fresh


def run_dispatch_step(dispatcher: Dispatcher) -> bool:
    """One dispatcher pass that survives a Redis outage or a bad ladder (logged: the workers
    must keep playing whatever the dispatcher hits); True if it ran."""
    try:
        return dispatcher.step() is not None
    except _StopSignalError:
        raise
    except Exception as exc:
        unavailable = as_unavailable(exc)
        if unavailable is not None:
            log.error("dispatcher: %s; retrying", unavailable)
        else:
            log.exception("dispatcher: pass failed (a bug: please report it with this "
                          "traceback); retrying, and the workers keep playing meanwhile")
    return False


def _signal(child: _Child, sig: int, *, group: bool = False) -> None:
    try:
        if group:
            os.killpg(child.proc.pid, sig)
        else:
            child.proc.send_signal(sig)
    except (ProcessLookupError, PermissionError):
        pass


def _status(code: int) -> str:
    if code < 0:
        try:
            return signal.Signals(-code).name
        except ValueError:
            return f"signal {-code}"
    return f"code {code}"
