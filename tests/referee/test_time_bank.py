"""The time bank (issue 30, item 4): a side that answers every decision legally but slowly
runs out of its match's bank and gives up on time, so every match has a bounded duration;
an honest side never meets it."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tacocat.engine import Fault, Observation, Reason, duplicate_pairs
from tacocat.engine.bots import GreedyBot
from tacocat.referee import (
    BANK_LIMITS_PER_GAME,
    FaultPolicy,
    HostProcess,
    InProcessSeat,
    PlayedMatch,
    ProcessSeat,
    match_bank,
    match_bound,
    play_match,
)

BOTS = Path(__file__).parent / "bots"


def _dawdler(pause: float) -> type[GreedyBot]:
    def paced(decide: Callable[[GreedyBot, Observation], Any]) -> Any:
        def slowly(self: GreedyBot, obs: Observation) -> Any:
            time.sleep(pause)
            return decide(self, obs)
        return slowly

    class Paced(GreedyBot):
        replace = paced(GreedyBot.replace)
        duel = paced(GreedyBot.duel)
        attack = paced(GreedyBot.attack)
        defend = paced(GreedyBot.defend)

    return Paced


def _forfeits_on_bank(played: PlayedMatch, side: int) -> list[int]:
    """The games side ``side`` forfeited on its time bank."""
    lost = []
    for game in played.games:
        result = game.record.result
        seat = game.a_seat if side == 0 else 1 - game.a_seat
        if result.reason is Reason.FORFEIT and result.offender == seat \
                and "time bank" in result.detail:
            assert result.fault is Fault.TIMEOUT
            lost.append(game.index)
    return lost


def test_a_slow_but_legal_bot_runs_out_of_its_bank_and_the_match_ends() -> None:
    limit, games = 0.05, 4
    slow = InProcessSeat(_dawdler(0.03), time_limit=limit)  # 60% of the limit, every time
    honest = InProcessSeat(GreedyBot, time_limit=limit)
    policy = FaultPolicy(bank_limits_per_game=2)
    bank = match_bank(limit, games, 2)
    started = time.monotonic()
    played = play_match((slow, honest), duplicate_pairs(games, "bank"), names=("slow", "g"),
                        batch=2, policy=policy)
    took = time.monotonic() - started

    slow_side, honest_side = played.sides
    assert slow_side.gave_up is not None and slow_side.gave_up.fault is Fault.TIMEOUT
    detail = slow_side.gave_up.detail
    assert f"used up its time bank of {bank:.3g} s" in detail, detail
    assert "decision limits of 0.05 s for 4 games" in detail, detail
    # Every game from the one it ran out in is its forfeit, recorded without asking it.
    lost = _forfeits_on_bank(played, 0)
    assert lost and lost == list(range(lost[0], games)), lost
    assert len(played.games) == games
    # What it was charged went past the bank by at most the step in flight (2 decisions).
    assert bank < slow.spent <= bank + 2 * limit + 0.5, (slow.spent, bank)
    assert took < match_bound(limit, games, batch=2, startup_timeout=0.0,
                              limits_per_game=2), took
    assert honest_side.gave_up is None and not honest_side.failures


def test_an_honest_bot_never_meets_the_default_bank() -> None:
    limit = 0.05
    # A tenth of the limit on every decision: a heavy thinker by the house bots' standard
    # (they take microseconds), far inside the bank's quarter of the limit per decision.
    thinker = InProcessSeat(_dawdler(0.005), time_limit=limit)
    played = play_match((thinker, InProcessSeat(GreedyBot, time_limit=limit)),
                        duplicate_pairs(2, "honest"), names=("thinker", "g"), batch=2)
    assert played.sides[0].gave_up is None
    assert not _forfeits_on_bank(played, 0)
    assert thinker.spent > 0
    assert thinker.spent < match_bank(limit, 2) / 2


def test_the_bank_is_off_without_a_limit_or_with_none() -> None:
    assert FaultPolicy().bank(None, 10) is None
    assert FaultPolicy(bank_limits_per_game=None).bank(1.0, 10) is None
    bank = FaultPolicy().bank(1.0, 10)
    assert bank is not None and bank.seconds == 11 * BANK_LIMITS_PER_GAME
    with pytest.raises(ValueError, match="bank_limits_per_game must be positive"):
        FaultPolicy(bank_limits_per_game=0)


@pytest.mark.parametrize("bot", ["dawdling_bot.py", "hiding_bot.py"])
def test_a_bot_process_is_charged_what_it_took_and_gives_up(bot: str) -> None:
    # The dawdler's host reports its time; the hider's claims 0 s: charged the wait.
    limit, games = 0.5, 2
    policy = FaultPolicy(bank_limits_per_game=2)
    bank = match_bank(limit, games, 2)  # 3 s: a game of it takes ~38 x 0.1 s
    with HostProcess(str(BOTS / bot)) as host:
        seat = ProcessSeat(host, limit)
        started = time.monotonic()
        played = play_match((seat, InProcessSeat(GreedyBot, time_limit=limit)),
                            duplicate_pairs(games, "hosted-bank"), names=("dawdler", "g"),
                            policy=policy)
        took = time.monotonic() - started
        assert not host.running  # given up: its process is released at once
    gave_up = played.sides[0].gave_up
    assert gave_up is not None and "time bank" in gave_up.detail, gave_up
    assert _forfeits_on_bank(played, 0)
    assert bank < seat.spent, (seat.spent, bank)
    assert took < match_bound(limit, games, batch=1, startup_timeout=10.0,
                              limits_per_game=2), took
