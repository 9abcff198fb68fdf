"""``tacocat worker --check``, and a worker on a host that cannot sandbox submitted bots:
it says so once at start (with the fix), refuses to start unless told whose bots are the
operator's own, then plays only those and reports itself on ``/metrics`` and ``/healthz``.

A host without bubblewrap is made with ``$TACOCAT_BWRAP`` pointing nowhere.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis as redis_py
from prometheus_client import CollectorRegistry

from tacocat.arena import VersionStatus
from tacocat.server.metrics import ArenaCollector, unsandboxed_workers
from tacocat.worker.sandbox import check_host
from tacocat_lab.chaos.procs import wait_for

from .worker_helpers import Trees, good_bot, make_field, wait_decided

pytestmark = pytest.mark.timeout(120)

NO_BWRAP = {"TACOCAT_BWRAP": "/nonexistent/bwrap"}


def _tacocat(*args: str, env: dict[str, str] | None = None,
             timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tacocat.cli", *args], capture_output=True,
                          text=True, timeout=timeout, check=False, stdin=subprocess.DEVNULL,
                          env={**os.environ, **(env or {})})


def test_check_passes_here_and_lists_every_bound() -> None:
    report = check_host()
    assert report.ready, report.table()
    names = [c.name for c in report.checks]
    for wanted in ("bubblewrap", "seccomp", "bot identity", "cgroup version",
                   "cgroup delegation", "controller memory", "controller cpu",
                   "controller cpuset", "controller pids", "match folders",
                   "sandboxed test process"):
        assert wanted in names, names
    assert report.summary() == "sandbox ready: every bound available"


def test_check_says_what_is_missing_and_how_to_fix_it() -> None:
    done = _tacocat("worker", "--check", env=NO_BWRAP)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "MISSING  bubblewrap" in done.stdout
    assert "fix: apt-get install bubblewrap" in done.stdout
    assert "submitted bots cannot run here" in done.stdout
    assert "ok       controller memory" in done.stdout  # what works is still listed


def test_a_worker_that_cannot_sandbox_refuses_to_start_and_says_why(
        redis: redis_py.Redis, redis_url: str) -> None:
    started = time.monotonic()
    done = _tacocat("worker", "--redis-url", redis_url, "--workers", "1", env=NO_BWRAP)
    assert done.returncode == 2, done.stdout + done.stderr
    assert time.monotonic() - started < 30
    assert "this host cannot sandbox submitted bots" in done.stderr
    assert "MISSING  bubblewrap" in done.stderr and "--trust-owner" in done.stderr
    assert not redis.smembers("rq:workers")


def test_a_worker_without_a_sandbox_plays_only_its_owners_bots_and_says_so(
        redis: redis_py.Redis, trees: Trees) -> None:
    field = make_field(redis)  # a fresh arena: the fixture empties the session's Valkey
    tree = trees("--trust-owner", "house", workers=1, env=NO_BWRAP)
    # Said once at start, with the fix.
    wait_for(lambda: "playing only the bots of house" in tree.text, 30, "the start-up warning")
    assert tree.text.count("this host cannot sandbox submitted bots") == 1, tree.text
    # On the server's /metrics (and /healthz, through the same reading).
    wait_for(lambda: unsandboxed_workers(redis), 30, "the worker's registration")
    (name, why), = unsandboxed_workers(redis)
    assert name.endswith("-w0") and not name.startswith("rq:"), name
    assert "bubblewrap: not installed" in why and "apt-get install bubblewrap" in why
    registry = CollectorRegistry()
    registry.register(ArenaCollector(redis))
    assert registry.get_sample_value("tacocat_workers_without_sandbox") == 1
    # The operator's own bot is smoke-tested (outside the sandbox); a user's waits, blamed
    # for nothing.
    house = field.submit("house", "mine", good_bot("mine"))
    user = field.submit("ann", "theirs", good_bot("theirs"))
    assert wait_decided(field.arena, [house]) == {house: ""}
    time.sleep(3)
    version = field.arena.bots.version(user)
    assert version.status is VersionStatus.PENDING, version
    assert "not started: this worker cannot sandbox submitted bots" in tree.text
    assert tree.stop() == 0
    assert not any(Path(f"/proc/{p}").exists() for p in tree.worker_pids())
