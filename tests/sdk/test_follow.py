"""The followers' reconnection rule (``tacocat.sdk._follow``): a stream that delivered is
opened again after a lost server, with growing delays, saying so; anything else raises.
(Across a real server restart: tests/cli/test_followers.py.)"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tacocat.sdk import ServerUnavailableError
from tacocat.sdk._follow import RECONNECT_DELAYS, lost_server, reconnecting
from tacocat.sdk.arena import ArenaApiError, NotFoundError


class Told:
    def __init__(self) -> None:
        self.said: list[str] = []

    def lost(self, error: Exception, delay: float, attempt: int) -> None:
        self.said.append(f"lost {attempt} {delay:g}")

    def resumed(self) -> None:
        self.said.append("resumed")


def test_a_stream_that_delivered_is_opened_again_with_growing_delays() -> None:
    plan: list[list[object]] = [[1, ServerUnavailableError("UNAVAILABLE", "Socket closed")],
                                [ServerUnavailableError("UNAVAILABLE", "failed to connect")],
                                [ArenaApiError("UNKNOWN", "Stream removed")], [2, 3]]

    def stream() -> Iterator[int]:
        for step in plan.pop(0):
            if isinstance(step, Exception):
                raise step
            assert isinstance(step, int)
            yield step

    told, slept = Told(), []
    assert list(reconnecting(stream, told, sleep=slept.append)) == [1, 2, 3]
    assert slept == list(RECONNECT_DELAYS[:3])
    assert told.said == ["lost 1 0.5", "lost 2 1", "lost 3 2", "resumed"]


def test_a_stream_that_never_delivered_or_was_refused_raises() -> None:
    def down() -> Iterator[int]:
        raise ServerUnavailableError("UNAVAILABLE", "failed to connect")
        yield 0

    with pytest.raises(ServerUnavailableError):  # a wrong address is the user's to fix
        list(reconnecting(down, Told(), sleep=lambda _: None))

    def refused() -> Iterator[int]:
        yield 1
        raise NotFoundError("NOT_FOUND", "no ladder 'x'")

    with pytest.raises(NotFoundError):
        list(reconnecting(refused, Told(), sleep=lambda _: None))
    assert not lost_server(ArenaApiError("UNKNOWN", "a bug in the server"))
    assert lost_server(ArenaApiError("INTERNAL", "RST_STREAM with error code 2"))
