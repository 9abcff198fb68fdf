"""One bot, three transports, the same games: local play, the stdio host, live gRPC."""

from __future__ import annotations

from pathlib import Path

import pytest

from tacocat.engine import duplicate_pairs
from tacocat.engine.bots import RandomBot
from tacocat.referee import HostProcess, ProcessSeat, play_match
from tacocat.sdk import connect, play_local
from tests.live_referee import PLAYERS, ThreadReferee

BOT_FILE = Path(__file__).parents[1] / "referee" / "bots" / "seeded_random.py"
GAMES = 6
SEED = "same-everywhere"
NAMES = ("alice/seeded", "house:greedy")


@pytest.fixture(scope="module")
def referee():  # type: ignore[no-untyped-def]
    server = ThreadReferee(time_limit=5.0)
    yield server
    server.stop()


def test_the_same_bot_and_seed_give_identical_records(referee: ThreadReferee) -> None:
    local = [r.record for r in play_local(RandomBot(42), "house:greedy", GAMES, SEED,
                                          name=NAMES[0])]
    with HostProcess(str(BOT_FILE)) as host, HostProcess("house:greedy") as house:
        hosted = [g.record for g in play_match((ProcessSeat(host, 5.0), ProcessSeat(house, 5.0)),
                                               duplicate_pairs(GAMES, SEED), names=NAMES,
                                               batch=GAMES).games]
    results = connect(RandomBot(42), referee.address, PLAYERS["alice"], games=GAMES,
                      opponent="house:greedy", seed=SEED, name="seeded")
    live = referee.records([NAMES[0]])[-GAMES:]
    assert [r.to_json() for r in local] == [r.to_json() for r in hosted]
    assert [r.to_json() for r in local] == [r.to_json() for r in live]
    assert [r.outcome for r in results] == [r.result for r in local]
    assert len({r.result.winner for r in local}) > 1 or GAMES < 2  # real games, not a rerun
