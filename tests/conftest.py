"""Shared fixtures: a real Redis-compatible server, never a mock (arena, server, worker and
CLI tests all use them).

- ``redis_url`` (session): one embedded valkey-server for the whole run, or the server named
  by ``TACOCAT_TEST_REDIS_URL``. That server is FLUSHALLed before every test using
  ``redis``, so point the variable at a throwaway server only.
- ``redis`` (function): a client on that server (``decode_responses=False``, as RQ needs),
  with every database flushed before the test.
- ``valkey_factory`` (function): unstarted :class:`EmbeddedValkey` servers in fresh temporary
  data dirs, for tests that start, kill or restart a server of their own; all are stopped at
  teardown.

``./dev test`` spreads the suite over one process per core (pytest-xdist, ``--dist
loadfile``): :func:`pytest_collection_modifyitems` below says what starts first.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis as redis_py

from tacocat.arena._valkey import EmbeddedValkey, redis_url_or_embedded


class ValkeyFactory:
    """Makes embedded servers in fresh temp dirs and stops them all in :meth:`close`."""

    def __init__(self, tmp_path_factory: pytest.TempPathFactory) -> None:
        self._tmp = tmp_path_factory
        self._servers: list[EmbeddedValkey] = []

    def __call__(self, port: int | None = None, data_dir: Path | None = None) -> EmbeddedValkey:
        server = EmbeddedValkey(data_dir or self._tmp.mktemp("valkey"), port)
        self._servers.append(server)
        return server

    def close(self) -> None:
        for server in self._servers:
            try:
                server.stop()
            finally:
                # A server that would not stop must not outlive the test run.
                server.kill()


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    data_dir = tmp_path_factory.mktemp("valkey-session")
    given = os.environ.get("TACOCAT_TEST_REDIS_URL")
    if given and os.environ.get("PYTEST_XDIST_WORKER"):
        # Every test flushes the whole server: two processes on one would wipe each other.
        pytest.fail(f"TACOCAT_TEST_REDIS_URL={given} names one server for the whole run, and "
                    "each test flushes it, so the suite cannot share it between processes: "
                    "run pytest in one process (-n 0; ./dev test does so when the variable "
                    "is set) or unset the variable", pytrace=False)
    with redis_url_or_embedded(given, data_dir) as url:
        yield url


@pytest.fixture(name="redis")
def redis_client(redis_url: str) -> Iterator[redis_py.Redis]:
    client = redis_py.Redis.from_url(redis_url)
    client.flushall()
    try:
        yield client
    finally:
        client.close()


@pytest.fixture
def valkey_factory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ValkeyFactory]:
    factory = ValkeyFactory(tmp_path_factory)
    try:
        yield factory
    finally:
        factory.close()



_RESTORED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@pytest.fixture(autouse=True)
def _restore_signal_handlers() -> Iterator[None]:
    """Tests that run an RQ worker in this process (``worker.work(burst=True)``) leave its
    handlers installed, and Ctrl-C (pytest's, or a later test's) would then only ask that
    long-gone worker to stop: put back what each test found."""
    saved = {sig: signal.getsignal(sig) for sig in _RESTORED_SIGNALS}
    yield
    for sig, handler in saved.items():
        if handler is not None and signal.getsignal(sig) is not handler:
            signal.signal(sig, handler)


# How the suite is spread over processes (pytest-xdist, `--dist loadfile
# --no-loadscope-reorder`, as ./dev test runs it): each module runs whole in one process, in
# order (module fixtures, tests that build on each other). Not `loadgroup`: with pytest 9
# its groups never reach the scheduler (xdist writes them into `Item._nodeid`, which pytest 9
# no longer reads), and every test was handed out alone. The chaos modules, whose hosts share
# bridges and subnets of the one machine, take turns through a lock (tests/chaos/conftest.py).
# Modules handed out first, slowest first, so that no long one starts last and leaves the
# other cores idle at the end: the cgroup-v2 VM (minutes of QEMU, one test), then the long
# integration folders. The rest follow in collection order.
_FIRST = ("tests/hosts/", "tests/chaos/", "tests/web/test_owner_logs.py",
          "tests/server/test_load.py", "tests/test_readme.py")


def _rank(item: pytest.Item) -> int:
    return next((n for n, prefix in enumerate(_FIRST) if item.nodeid.startswith(prefix)),
                len(_FIRST))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # A stable sort by a rank that is the same for a whole module keeps each module together.
    items.sort(key=_rank)
