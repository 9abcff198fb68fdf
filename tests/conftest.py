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
"""

from __future__ import annotations

import os
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
    with redis_url_or_embedded(os.environ.get("TACOCAT_TEST_REDIS_URL"), data_dir) as url:
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

