"""Live referees for tests: ``tacocat serve`` as a real process, or one on a thread."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from tacocat.engine import GameRecord
from tacocat.server import RefereeConfig, RefereeServer, TokenTable
from tacocat.server.metrics import ServerMetrics

ROOT = Path(__file__).resolve().parent.parent
PLAYERS = {"alice": "tok-alice", "bob": "tok-bob", "carol": "tok-carol", "dave": "tok-dave"}


class ServeProcess:
    """``python -m tacocat.cli serve --port 0 ...`` with a records file; stop() ends it."""

    def __init__(self, records: Path, *extra: str, time_limit: float = 0.5) -> None:
        self.records_path = records
        command = [sys.executable, "-m", "tacocat.cli", "serve", "--port", "0",
                   "--time-limit", str(time_limit), "--records", str(records),
                   "--log-level", "WARNING", "--grace", "1", "--no-arena", *extra]
        for name, token in PLAYERS.items():
            command += ["--player", f"{name}={token}"]
        self.proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if "listening on" not in line:
            self.proc.kill()
            raise RuntimeError(f"tacocat serve did not start: {line!r}")
        self.address = line.rsplit(" ", 1)[1].strip()

    def records(self, where: Callable[[GameRecord], bool] = lambda r: True,
                expect: int = 0, timeout: float = 15.0) -> list[GameRecord]:
        """The records so far that match ``where``; waits until there are ``expect``."""
        deadline = time.monotonic() + timeout
        while True:
            lines = self.records_path.read_text().splitlines() if self.records_path.exists() \
                else []
            found = [r for r in map(GameRecord.loads, lines) if where(r)]
            if len(found) >= expect or time.monotonic() > deadline:
                return found
            time.sleep(0.05)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        return self.proc.wait()


def run_client(*args: str, timeout: float = 60.0) -> subprocess.Popen[str]:
    """Start tests/server/live_client.py with ``args`` (a real client process)."""
    return subprocess.Popen([sys.executable, str(ROOT / "tests" / "server" / "live_client.py"),
                             *args], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})


def client_report(proc: subprocess.Popen[str], timeout: float = 60.0) -> dict[str, Any]:
    out, err = proc.communicate(timeout=timeout)
    lines = [line for line in out.splitlines() if line.startswith("{")]
    assert lines, f"client printed no report (exit {proc.returncode}):\n{out}\n{err}"
    report: dict[str, Any] = json.loads(lines[-1])
    report["exit"] = proc.returncode
    report["stderr"] = err
    return report


class ThreadReferee:
    """A :class:`RefereeServer` on its own event loop in a daemon thread."""

    def __init__(self, metrics: ServerMetrics | None = None, **config: Any) -> None:
        config.setdefault("port", 0)
        self.config = RefereeConfig(**config)
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.server = RefereeServer(self.config, authenticator=TokenTable(
            {token: name for name, token in PLAYERS.items()}), metrics=metrics)
        self.call(self.server.start())
        self.address = self.server.address

    def call(self, coroutine: Any, timeout: float = 30.0) -> Any:
        future: Future[Any] = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
        return future.result(timeout)

    def records(self, players: Sequence[str] | None = None) -> list[GameRecord]:
        return [r for r in self.server.records.records()
                if players is None or any(p in r.players for p in players)]

    def stop(self, grace: float = 0.0) -> None:
        self.call(self.server.stop(grace))
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
