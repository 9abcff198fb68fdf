"""A bot's time is its own: an opponent cannot make an honest bot lose on time.

Both bots of an arena match share one core (the worker's pinning) and think at once. An
honest bot that uses 55% of its limit in CPU per duel plays attackers that forge their
reported think time, sleep while their children spin, or spin in a background thread,
through the real :class:`MatchPlayer` (sandboxed processes, their cgroups, pinned to one
core): it loses no game, and each attacker is charged the CPU its tree used beyond what it
reported (it forfeits with "of CPU besides its decisions").
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tacocat.engine import STANDARD, Fault, Reason, duplicate_pairs
from tacocat.worker import Launcher, MatchPlayer
from tacocat.worker.sandbox import SandboxPolicy
from tests.cli.helpers import slow_once_source

from .worker_helpers import SANDBOX, bot_folder, good_bot

pytestmark = pytest.mark.timeout(120)

LIMIT = 0.5

HONEST = f"""
import time
from tacocat.engine.bots import GreedyBot


class Honest(GreedyBot):
    name = "honest"

    def duel(self, obs):
        end = time.thread_time() + 0.55 * {LIMIT}  # 55% of the limit, in CPU
        while time.thread_time() < end:
            pass
        return super().duel(obs)
"""

ATTACKERS = {
    # Spins 90% of the limit per duel and reports every decision as instant.
    "forger": f"""
import time
import tacocat.sdk._session as session
from tacocat.engine.bots import GreedyBot

session._micros = lambda since: 0


class Forger(GreedyBot):
    def duel(self, obs):
        end = time.thread_time() + 0.9 * {LIMIT}
        while time.thread_time() < end:
            pass
        return super().duel(obs)
""",
    # Sleeps 45% of the limit per decision while two children spin without end.
    "sleeper": f"""
import os
import time
from tacocat.engine.bots import GreedyBot

SPAWNED = []


class Sleeper(GreedyBot):
    def duel(self, obs):
        if not SPAWNED:
            for _ in range(2):
                pid = os.fork()
                if pid == 0:
                    while True:
                        pass
                SPAWNED.append(pid)
        time.sleep(0.45 * {LIMIT})
        return super().duel(obs)
""",
    # Answers at once, while a thread of its own spins without end.
    "spinner": """
import threading
from tacocat.engine.bots import GreedyBot


def spin():
    while True:
        pass


class Spinner(GreedyBot):
    def duel(self, obs):
        if threading.active_count() == 1:
            threading.Thread(target=spin, daemon=True).start()
        return super().duel(obs)
""",
}


@pytest.mark.parametrize("attacker", sorted(ATTACKERS))
def test_an_honest_bot_loses_no_game_on_time_and_the_attacker_is_charged(
        tmp_path: Path, attacker: str) -> None:
    assert SANDBOX, "bubblewrap is required: hostile bots never run unsandboxed"
    launcher = Launcher(SandboxPolicy(), sandbox=True, cpu=0)  # one core, as a worker's
    honest = bot_folder(tmp_path / "honest", "honest@1", HONEST.encode())
    bad = bot_folder(tmp_path / "bad", f"{attacker}@1", ATTACKERS[attacker].encode())
    with MatchPlayer(launcher, honest, bad, STANDARD, time_limit=LIMIT) as player:
        played = player.play(duplicate_pairs(6, "fair"))
    victim, culprit = played.sides
    assert victim.failures == [], victim.failures
    for index, record in enumerate(played.records):
        result = record.result
        assert result.offender != played.a_seats[index], result  # never the honest bot
    assert culprit.failures, "the attacker used CPU it did not report, uncharged"
    assert "of CPU besides its decisions" in culprit.failures[0].detail, culprit.failures


def test_one_hung_decision_costs_its_game_only_with_the_same_records_for_every_batch(
        tmp_path: Path) -> None:
    # The arena's path: a bot that hangs in one decision of one game of 16. Its process is
    # killed; that game forfeits; the games it had in flight are played again from their
    # start, so batch 16 records exactly what batch 1 does.
    launcher = Launcher(SandboxPolicy(), sandbox=True, cpu=0)
    slow = bot_folder(tmp_path / "slow", "slow@1",
                      slow_once_source("once", 16, 30).encode())
    good = bot_folder(tmp_path / "good", "good@1", good_bot("good", "GreedyBot"))
    records = []
    for batch in (1, 16):
        with MatchPlayer(launcher, slow, good, STANDARD, time_limit=LIMIT,
                         batch=batch) as player:
            played = player.play(duplicate_pairs(16, "once"))
        forfeits = [r.result for r in played.records if r.result.reason is Reason.FORFEIT]
        assert len(forfeits) == 1 and forfeits[0].fault is Fault.TIMEOUT, forfeits
        assert forfeits[0].detail.endswith("no answer within 2.5 s (the limit is 0.5 s)")
        records.append([r.dumps() for r in played.records])
    assert records[0] == records[1]
