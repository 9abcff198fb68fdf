"""Fixtures: the referee as a real ``tacocat serve`` process (shared by a module's tests)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.live_referee import ServeProcess


@pytest.fixture(scope="module")
def referee(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    server = ServeProcess(tmp_path_factory.mktemp("referee") / "records.jsonl",
                          "--queue-timeout", "20", time_limit=0.5)
    yield server
    assert server.alive(), "the referee died during the tests"
    assert server.stop() == 0
