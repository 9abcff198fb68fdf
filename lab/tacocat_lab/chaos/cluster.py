"""An arena spread over namespace hosts: Redis on one, ``tacocat serve`` on another (when
asked for), a ``tacocat worker`` on each of the others; the observer (this process) sees
Redis over the bridge like any host.

:class:`Cluster` starts and stops the processes and finds them for fault injection: each
worker host runs one ``tacocat worker --workers 1`` (a *supervisor*), whose child is the
RQ worker process, whose child while a match runs is the *work horse*, whose children are
the two (sandboxed) bot hosts.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Final

from redis import Redis

from tacocat.arena import Arena, EmbeddedValkey
from tacocat.worker.queue import lease_key

from .hosts import Network
from .procs import ChaosError, children_of, cmdline, parent, signal_all, wait_for

REDIS_PORT: Final = 6379
SERVE_PORT: Final = 50051
SLOW_PORT: Final = 6380


# -- the cluster --------------------------------------------------------------------------------


@dataclass
class WorkerHost:
    """One worker host's ``tacocat worker`` (restartable) and its log."""

    host: str
    log_path: Path
    proc: subprocess.Popen[bytes] | None = None
    starts: int = 0

    @property
    def supervisor(self) -> int | None:
        proc = self.proc
        return proc.pid if proc is not None and proc.poll() is None else None

    def rq_workers(self) -> list[int]:
        pid = self.supervisor
        return [] if pid is None else [c for c in children_of(pid)
                                       if parent(c) == pid and "tacocat.worker" in cmdline(c)]

    def horses(self) -> list[int]:
        return [c for w in self.rq_workers() for c in children_of(w)
                if parent(c) == w and "tacocat.worker" in cmdline(c)]

    def tree(self) -> list[int]:
        pid = self.supervisor
        return [] if pid is None else [pid, *children_of(pid)]

    @property
    def text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""


@dataclass
class ClusterSettings:
    workers: int = 2
    """Worker hosts (one ``tacocat worker --workers 1`` each)."""
    lease: float = 3.0
    wait: float = 1.0
    serve: bool = False
    appendfsync: str = "everysec"
    sandbox: bool = True
    redis_dir: Path | None = None
    """Where Redis keeps its data (default: a folder of the run's); a small tmpfs for the
    full-disk fault."""
    worker_args: list[str] = field(default_factory=list)
    slow_link: bool = False
    """Workers reach Redis through :mod:`tacocat_lab.chaos.slowlink` on their host (+50 ms
    round trip, 1% of chunks held back a retransmission timeout)."""


class Cluster:
    """The hosts and their processes; use as a context manager (or :meth:`start`/:meth:`close`)."""

    def __init__(self, folder: Path, settings: ClusterSettings | None = None) -> None:
        self.folder = folder
        self.settings = settings = settings or ClusterSettings()
        names = ["redis", *(["serve"] if settings.serve else []),
                 *(f"w{i}" for i in range(settings.workers))]
        self.net = Network(names)
        self.workers = {f"w{i}": WorkerHost(f"w{i}", folder / f"w{i}.log")
                        for i in range(settings.workers)}
        redis_host = self.net["redis"]
        self.valkey = EmbeddedValkey(settings.redis_dir or folder / "redis", REDIS_PORT,
                                     bind=redis_host.address, command_prefix=redis_host.enter,
                                     appendfsync=settings.appendfsync)
        self.url = f"redis://{redis_host.address}:{REDIS_PORT}/0"
        # The observer's client: short timeouts, since Redis may be down or its host cut off.
        self.redis = Redis.from_url(self.url, socket_timeout=10, socket_connect_timeout=5)
        self.arena = Arena(self.redis)
        self.serve_proc: subprocess.Popen[bytes] | None = None
        self.serve_log = folder / "serve.log"
        self._relays: dict[str, subprocess.Popen[bytes]] = {}
        self._logs: list[IO[bytes]] = []

    # -- lifecycle -----------------------------------------------------------------------------

    def __enter__(self) -> Cluster:
        try:
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.net.build()
        self.valkey.start()
        for name in self.workers:
            self.start_worker(name)
        if self.settings.serve:
            self.start_serve()
        for host in self.workers.values():
            self.wait_worker(host)

    def wait_worker(self, host: WorkerHost, timeout: float = 60) -> None:
        """Wait until ``host``'s RQ worker process runs; :class:`ChaosError` if its
        ``tacocat worker`` exited instead."""
        wait_for(lambda: host.rq_workers() or host.supervisor is None, timeout,
                 f"the RQ worker on {host.host}")
        if host.supervisor is None:
            raise ChaosError(f"tacocat worker on {host.host} exited:\n{host.text[-2000:]}")

    def close(self) -> None:
        """Stop everything: workers (SIGTERM, short grace), serve, Redis; then the hosts."""
        try:
            # All at once: each may take its --grace to finish a match.
            for proc in [h.proc for h in self.workers.values()] + [self.serve_proc]:
                if proc is not None and proc.poll() is None:
                    signal_all([proc.pid], signal.SIGCONT)
                    proc.send_signal(signal.SIGTERM)
            for host in self.workers.values():
                self.stop_worker(host.host)
            self._stop(self.serve_proc)
            with contextlib.suppress(Exception):
                self.valkey.stop()
            self.valkey.kill()
            self.redis.close()
        finally:
            self.net.close()
            for log in self._logs:
                log.close()

    # -- processes -----------------------------------------------------------------------------

    def _log(self, path: Path) -> IO[bytes]:
        log = path.open("ab")
        self._logs.append(log)
        return log

    def start_worker(self, host: str) -> WorkerHost:
        """Start (or restart) the ``tacocat worker`` of ``host``."""
        worker = self.workers[host]
        url = self._slow_link(host) if self.settings.slow_link else self.url
        command = [sys.executable, "-m", "tacocat.cli", "worker", "--redis-url", url,
                   "--workers", "1", "--wait", str(self.settings.wait), "--lease",
                   str(self.settings.lease), "--smoke-decision-seconds", "1", "--grace", "2",
                   "--pin", "none", *self.settings.worker_args]
        if not self.settings.sandbox:
            command.append("--insecure-no-sandbox")
        worker.proc = self.net.popen(host, command, log=self._log(worker.log_path))
        worker.starts += 1
        return worker

    def _slow_link(self, host: str) -> str:
        """Start the slow relay to Redis on ``host`` (once); the URL through it."""
        if host not in self._relays:
            log_path = self.folder / f"{host}-slowlink.log"
            self._relays[host] = self.net.popen(
                host, [sys.executable, "-m", "tacocat_lab.chaos.slowlink",
                       f"127.0.0.1:{SLOW_PORT}", f"{self.net['redis'].address}:{REDIS_PORT}"],
                log=self._log(log_path))
            wait_for(lambda: "slowlink:" in log_path.read_text(errors="replace"), 30,
                     f"the slow link on {host}")
        return f"redis://127.0.0.1:{SLOW_PORT}/0"

    def stop_worker(self, host: str) -> None:
        worker = self.workers[host]
        self._stop(worker.proc)

    def start_serve(self, *args: str) -> subprocess.Popen[bytes]:
        command = [sys.executable, "-m", "tacocat.cli", "serve", "--host",
                   self.net["serve"].address, "--port", str(SERVE_PORT), "--redis-url", self.url,
                   "--data-dir", str(self.folder / "serve-data"), "--no-web", "--grace", "1",
                   *args]
        # The log is appended across restarts: wait for one more "listening" line.
        started = self.serve_text.count("listening on")
        self.serve_proc = self.net.popen("serve", command, log=self._log(self.serve_log))
        wait_for(lambda: self.serve_text.count("listening on") > started
                 or self.serve_proc.poll() is not None,  # type: ignore[union-attr]
                 60, "tacocat serve to listen")
        if self.serve_proc.poll() is not None:
            raise ChaosError(f"tacocat serve exited:\n{self.serve_text[-2000:]}")
        return self.serve_proc

    def stop_serve(self) -> None:
        """SIGTERM ``tacocat serve`` (running live games are aborted) and wait for it."""
        self._stop(self.serve_proc)

    def admin_token(self) -> str:
        """The admin token ``tacocat serve`` saved when it created the admin."""
        path = self.folder / "serve-data" / "admin.token"
        try:
            return path.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ChaosError(f"the arena has an admin but {path} holds no token ({exc}); "
                             "start from an empty Redis") from exc

    @property
    def serve_target(self) -> str:
        return f"{self.net['serve'].address}:{SERVE_PORT}"

    @property
    def serve_text(self) -> str:
        try:
            return self.serve_log.read_text(errors="replace")
        except OSError:
            return ""

    @staticmethod
    def _stop(proc: subprocess.Popen[bytes] | None, timeout: float = 15) -> None:
        if proc is None or proc.poll() is not None:
            return
        signal_all([proc.pid], signal.SIGCONT)  # a paused process cannot stop
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()

    # -- what runs where -----------------------------------------------------------------------

    def leases(self) -> dict[str, str]:
        """Running matches: match id -> the name of the RQ worker holding its lease."""
        prefix = lease_key(self.arena.keys.prefix, "")
        found = {}
        for key in self.redis.scan_iter(match=prefix + "*", count=1000):
            value = self.redis.get(key)
            if value is not None:
                found[reply_text(key)[len(prefix):]] = reply_text(value)
        return found

    def matches_of(self, rq_pids: list[int]) -> list[str]:
        """The matches whose lease is held by one of these RQ worker processes (a worker's
        name is ``HOST-PID-wN``)."""
        marks = {f"-{pid}-" for pid in rq_pids}
        return [m for m, holder in self.leases().items() if any(k in holder for k in marks)]

    def dispatcher_host(self) -> str | None:
        """The worker host whose supervisor logged last that it became the dispatcher."""
        active = [h for h in self.workers.values() if "dispatcher: active" in h.text]
        return active[-1].host if len(active) == 1 else None


def reply_text(reply: object) -> str:
    """A Redis reply as text: the cluster's client, shared with the arena, does not decode."""
    return reply.decode() if isinstance(reply, bytes) else str(reply)
