"""The stdio transport with real subprocesses: the host, and the referee's end of it
(:class:`HostProcess` under a :class:`ProcessSeat`, played by the one match loop)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from tacocat.engine import Fault, MatchGame, Reason, duplicate_pairs
from tacocat.engine.bots import GreedyBot, RandomBot
from tacocat.protocol.logs import CappedLog, split_games
from tacocat.referee import (
    HostError,
    HostProcess,
    InProcessSeat,
    PlayedMatch,
    ProcessSeat,
    play_match,
)
from tacocat.sdk import play_local

HERE = Path(__file__).parent
BOTS = HERE / "bots"
FAKE_HOST = HERE / "fake_host.py"


def fake(mode: str) -> HostProcess:
    return HostProcess(f"fake:{mode}", command=[sys.executable, str(FAKE_HOST), mode])


def play(a: HostProcess, games: int = 2, time_limit: float = 2.0, seed: str = "t",
         batch: int = 1) -> PlayedMatch:
    return play_match((ProcessSeat(a, time_limit), InProcessSeat(GreedyBot)),
                      duplicate_pairs(games, seed), names=("bot", "house:greedy"), batch=batch)


def match(a: HostProcess, games: int = 2, time_limit: float = 2.0, seed: str = "t",
          batch: int = 1) -> list[MatchGame]:
    return play(a, games, time_limit, seed, batch).games


def forfeit_of(game: MatchGame) -> tuple[Fault | None, str]:
    result = game.record.result
    assert result.reason is Reason.FORFEIT, result
    assert result.offender == game.a_seat, result
    return result.fault, result.detail


@pytest.mark.parametrize("batch", [1, 4, 16])
def test_host_plays_the_same_games_as_local_play(batch: int) -> None:
    with HostProcess("house:random") as a, HostProcess("house:greedy") as b:
        hosted = play_match((ProcessSeat(a, 2.0), ProcessSeat(b, 2.0)),
                            duplicate_pairs(10, "same"), names=("r", "house:greedy"),
                            batch=batch)
        assert a.starts == b.starts == 1
        assert a.name == "random"
    local = [r.record for r in play_local(RandomBot, "house:greedy", 10, "same", name="r")]
    assert [g.record.to_json() for g in hosted.games] == [r.to_json() for r in local]


def test_a_bot_that_prints_to_stdout_does_not_corrupt_the_frames() -> None:
    with HostProcess(str(BOTS / "printing_bot.py")) as host:
        games = match(host, games=2)
        assert all(g.record.result.reason is not Reason.FORFEIT for g in games)
        assert "thinking about the duel" in host.stderr_tail(50)
        assert "raw bytes on fd 1" in host.stderr_tail(50)
        assert "bytes via sys.stdout.buffer" in host.stderr_tail(50)


@pytest.mark.parametrize("batch", [1, 8])
def test_a_bot_that_raises_forfeits_with_crash_and_plays_on(batch: int) -> None:
    log = CappedLog()
    with HostProcess(str(BOTS / "crashing_bot.py"), log=log) as host:
        games = match(host, games=8, batch=batch)
        for game in games:
            fault, detail = forfeit_of(game)
            assert fault is Fault.CRASH
            # The public record says a fixed text, never the bot's words ...
            assert detail.endswith(": the bot raised an exception"), detail
            assert "boom" not in detail
        assert host.starts == 1  # the process survived its bot's exceptions
    # ... which its owner reads in its log, traceback included, game by game.
    text = log.data.decode()
    assert "RuntimeError: boom in attack" in text and "Traceback" in text
    assert 'crashing_bot.py", line' in text
    parts = split_games(text)
    assert sorted(k for k in parts if k is not None) == list(range(8))
    assert all("boom in attack" in parts[g] for g in range(8))


def test_a_host_that_dies_forfeits_with_crash_and_is_restarted() -> None:
    log = CappedLog()
    with HostProcess(str(BOTS / "exiting_bot.py"), log=log) as host:
        played = play(host, games=2)
        for game in played.games:
            fault, detail = forfeit_of(game)
            assert fault is Fault.CRASH
            assert detail.endswith("its process exited"), detail  # its last words: not here
        assert host.starts == 2
        text = log.data.decode()
        assert text.count("goodbye, cruel world") == 2  # ... but in its owner's log
        assert ("[referee] crash: its process exited (exited with code 3); the game it was "
                "deciding forfeits, the others are played again") in text  # the code: its owner's
        assert "[referee] the bot's process is restarted" in text
        assert played.sides[0].restarts == 2 and played.sides[0].gave_up is None


def test_a_dead_host_forfeits_the_game_it_died_in_and_the_others_are_played_again() -> None:
    with HostProcess(str(BOTS / "exiting_bot.py")) as host:
        played = play(host, games=12, batch=6)
    side = played.sides[0]
    # Step 1: six games in flight, the process dies deciding game 0: game 0 forfeits (one
    # strike), games 1 to 5 are played again from their start, one at a time (a strike
    # stands): games 1 and 2 die too, three strikes in a row: it gives up. As with batch 1.
    assert host.starts == 3 and side.restarts == 3 and len(side.failures) == 3
    details = [forfeit_of(g)[1] for g in played.games]
    assert all("its process exited" in d for d in details[:3]), details
    assert all("gave up after 3 faults in a row; last: crash: its process exited" in d
               for d in details[3:]), details
    with HostProcess(str(BOTS / "exiting_bot.py")) as host:
        alone = play(host, games=12, batch=1)
    assert [g.record for g in alone.games] == [g.record for g in played.games]


def test_a_bot_that_sleeps_past_the_deadline_times_out() -> None:
    with HostProcess(str(BOTS / "sleeping_bot.py")) as host:
        start = time.monotonic()
        (game,) = match(host, games=1, time_limit=0.3)
        assert time.monotonic() - start < 5
        fault, detail = forfeit_of(game)
        assert fault is Fault.TIMEOUT
        assert detail.endswith("no answer within 1.5 s (the limit is 0.3 s)"), detail


def test_a_hung_bot_costs_five_limits_a_game_whatever_the_batch() -> None:
    # Eight games at once, each asks for a duel at the same step: the sleeper never answers.
    # The referee waits for the frame's first answer for 5 x 0.3 s (not 8 x 0.3 s), then
    # forfeits the game the bot was deciding; the other seven are played again, one at a
    # time: two more such games and the bot gives up. The same records as with batch 1.
    records = []
    for batch in (8, 1):
        with HostProcess(str(BOTS / "sleeping_bot.py")) as host:
            start = time.monotonic()
            played = play(host, games=8, time_limit=0.3, batch=batch)
            waited = time.monotonic() - start
        assert 4.5 <= waited < 15  # three games at 5 limits each, and three process starts
        details = [forfeit_of(g) for g in played.games]
        assert all(f is Fault.TIMEOUT and d.endswith("no answer within 1.5 s (the limit is "
                                                     "0.3 s)") for f, d in details[:3]), details
        assert all("gave up after 3 faults" in d for _, d in details[3:])
        records.append([g.record for g in played.games])
    assert records[0] == records[1]


def test_a_slow_honest_bot_sends_a_long_frame_in_parts_and_is_not_cut_off() -> None:
    # Sixteen duels of 0.15 s in one frame: 2.4 s, past the 5 x 0.4 s the referee waits for
    # progress. The host sends its answers every quarter limit, so nothing forfeits.
    with HostProcess(str(BOTS / "slow_bot.py")) as host:
        played = play(host, games=16, time_limit=0.4, batch=16)
        assert host.starts == 1
    assert all(g.record.result.reason is not Reason.FORFEIT for g in played.games)
    assert played.sides[0].failures == []


def test_a_decision_over_its_limit_forfeits_on_time_even_inside_the_batch_deadline() -> None:
    host = fake("liar")
    try:
        played = play(host, games=4, time_limit=0.5, batch=4)
    finally:
        host.close(timeout=0.05)
    for game in played.games:
        fault, detail = forfeit_of(game)
        assert fault is Fault.TIMEOUT
        assert detail.endswith("answered after the limit of 0.5 s")  # not its "10 s"
    assert host.starts == 1  # it answered: no restart needed


def test_an_illegal_answer_in_a_batch_forfeits_that_game_only() -> None:
    class IllegalInOddGames(GreedyBot):
        """Plays a card it does not hold in its first duel of odd-numbered games."""

        def on_game_start(self, seat: int, ruleset, opponent: str) -> None:  # type: ignore[no-untyped-def]
            self.odd = seat == 1

        def duel(self, obs):  # type: ignore[no-untyped-def]
            return 99 if self.odd else super().duel(obs)

    played = play_match((InProcessSeat(IllegalInOddGames), InProcessSeat(GreedyBot)),
                        duplicate_pairs(8, "ill"), names=("ill", "greedy"), batch=8)
    for game in played.games:
        result = game.record.result
        if game.a_seat == 1:
            assert result.fault is Fault.ILLEGAL_ACTION and result.offender == 1
        else:
            assert result.reason is not Reason.FORFEIT
    assert played.sides[0].strikes == 0 and played.sides[0].gave_up is None


@pytest.mark.parametrize(("mode", "fault", "words"), [
    ("oversize", Fault.PROTOCOL, "a message over the 65536-byte limit"),
    ("garbage", Fault.PROTOCOL, "an undecodable message"),
    ("truncate", Fault.PROTOCOL, "a truncated frame by the deadline"),
    ("halfexit", Fault.PROTOCOL, "output ended inside a frame"),
    ("wrongkind", Fault.PROTOCOL, "unexpected hello message"),
    ("badid", Fault.PROTOCOL, "an answer to a request that was never asked"),
    ("silent", Fault.TIMEOUT, "no answer within 2 s"),
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


def test_a_host_of_another_protocol_version_does_not_start() -> None:
    host = fake("oldhello")
    with pytest.raises(HostError, match="speaks another protocol than this referee's 2"):
        host.start()
    host.close(timeout=0.05)


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


def test_cpu_besides_decisions_counts_against_the_bot() -> None:
    """``cpu_usage`` (the bot tree's CPU; here a stand-in clock a test can advance) beyond
    its decisions' time and 1 ms per decision adds up; past one decision's limit the
    frame's games forfeit on time and the process restarts with a clean slate."""
    used = [0.0]

    def cpu_usage() -> float:
        used[0] += 0.03  # 30 ms of background work between any two readings
        return used[0]

    with HostProcess("house:greedy") as host:
        seat = ProcessSeat(host, 0.1, cpu_usage=cpu_usage)
        played = play_match((seat, InProcessSeat(GreedyBot)), duplicate_pairs(4, "cpu"),
                            names=("spinner", "house:greedy"), batch=1)
    results = [g.record.result for g in played.games]
    assert results[0].fault is Fault.TIMEOUT, results[0]
    assert "CPU besides its decisions, more than one decision's 0.1 s" in results[0].detail
    assert played.sides[0].restarts >= 1 and host.starts >= 2
    with HostProcess("house:greedy") as honest:  # no background work: never a forfeit
        calm = ProcessSeat(honest, 0.1, cpu_usage=lambda: 1.0)
        fine = play_match((calm, InProcessSeat(GreedyBot)), duplicate_pairs(4, "cpu"),
                          names=("calm", "house:greedy"), batch=1)
    assert all(g.record.result.reason is not Reason.FORFEIT for g in fine.games)
    assert calm.background_cpu == 0.0
