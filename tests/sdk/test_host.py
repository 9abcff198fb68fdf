"""The stdio transport with real subprocesses: the host, and the referee's end of it."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from tacocat.engine import Fault, Reason
from tacocat.engine.bots import GreedyBot, RandomBot
from tacocat.sdk import HostError, HostProcess, play_hosted_match, play_local

HERE = Path(__file__).parent
BOTS = HERE / "bots"
FAKE_HOST = HERE / "fake_host.py"


def fake(mode: str) -> HostProcess:
    return HostProcess(f"fake:{mode}", command=[sys.executable, str(FAKE_HOST), mode])


def match(a: HostProcess, games: int = 2, time_limit: float = 2.0, seed: str = "t") -> list:
    return list(play_hosted_match(a, GreedyBot(), games, seed, names=("bot", "house:greedy"),
                                  time_limit=time_limit))


def forfeit_of(game) -> tuple[Fault | None, str]:
    result = game.record.result
    assert result.reason is Reason.FORFEIT, result
    assert result.offender == game.a_seat, result
    return result.fault, result.detail


def test_host_plays_the_same_games_as_local_play() -> None:
    with HostProcess("house:random") as a, HostProcess("house:greedy") as b:
        hosted = [g.record for g in play_hosted_match(a, b, 6, "same", names=("r", "house:greedy"))]
        assert a.starts == b.starts == 1
        assert a.name == "random"
    local = [r.record for r in play_local(RandomBot(), "house:greedy", 6, "same", name="r")]
    assert [r.to_json() for r in hosted] == [r.to_json() for r in local]


def test_a_bot_that_prints_to_stdout_does_not_corrupt_the_frames() -> None:
    with HostProcess(str(BOTS / "printing_bot.py")) as host:
        games = match(host, games=2)
        assert all(g.record.result.reason is not Reason.FORFEIT for g in games)
        assert "thinking about the duel" in host.stderr_tail(50)
        assert "raw bytes on fd 1" in host.stderr_tail(50)


def test_a_bot_that_raises_forfeits_with_crash_and_plays_on() -> None:
    with HostProcess(str(BOTS / "crashing_bot.py")) as host:
        games = match(host, games=2)
        for game in games:
            fault, detail = forfeit_of(game)
            assert fault is Fault.CRASH
            assert "RuntimeError: boom in attack at crashing_bot.py" in detail
        assert host.starts == 1  # the process survived its bot's exception


def test_a_host_that_dies_forfeits_with_crash_and_is_restarted() -> None:
    with HostProcess(str(BOTS / "exiting_bot.py")) as host:
        games = match(host, games=2)
        for game in games:
            fault, detail = forfeit_of(game)
            assert fault is Fault.CRASH
            assert "exited with code 3" in detail
            assert "goodbye, cruel world" in detail
        assert host.starts == 2


def test_a_bot_that_sleeps_past_the_deadline_times_out() -> None:
    with HostProcess(str(BOTS / "sleeping_bot.py")) as host:
        start = time.monotonic()
        (game,) = match(host, games=1, time_limit=0.3)
        assert time.monotonic() - start < 5
        fault, detail = forfeit_of(game)
        assert fault is Fault.TIMEOUT
        assert detail.endswith("no answer within 0.3 s")


@pytest.mark.parametrize(("mode", "fault", "words"), [
    ("oversize", Fault.PROTOCOL, "exceeds the 65536-byte limit"),
    ("garbage", Fault.PROTOCOL, "undecodable message"),
    ("truncate", Fault.PROTOCOL, "truncated frame"),
    ("halfexit", Fault.PROTOCOL, "output ended inside a frame"),
    ("wrongkind", Fault.PROTOCOL, "unexpected hello message"),
    ("badid", Fault.PROTOCOL, "but request 1 is pending"),
    ("silent", Fault.TIMEOUT, "no answer within"),
])
def test_broken_frames_are_protocol_faults(mode: str, fault: Fault, words: str) -> None:
    host = fake(mode)
    try:
        (game,) = match(host, games=1, time_limit=0.4)
    finally:
        host.close(timeout=0.05)  # the fake lingers on purpose: do not wait for it
    got, detail = forfeit_of(game)
    assert got is fault
    assert words in detail


def test_a_bot_that_cannot_load_does_not_start() -> None:
    host = HostProcess(str(BOTS / "broken_import.py"))
    with pytest.raises(HostError, match="this bot needs a module"):
        host.start()
    # In a match, the same failure is that seat's crash, game after game.
    games = match(host, games=2)
    for game in games:
        fault, detail = forfeit_of(game)
        assert fault is Fault.CRASH
        assert "did not start" in detail
    host.close()


def test_close_ends_the_host_cleanly() -> None:
    host = HostProcess("house:greedy")
    host.start()
    assert host.running
    assert host.close() == 0
    assert not host.running


def test_host_usage_errors() -> None:
    done = subprocess.run([sys.executable, "-m", "tacocat.sdk.host"], check=False,
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    assert "usage" in done.stderr
    done = subprocess.run([sys.executable, "-m", "tacocat.sdk.host", "house:nobody"],
                          check=False, capture_output=True, text=True, timeout=30)
    assert done.returncode == 3
    assert "no house bot 'nobody'" in done.stderr
