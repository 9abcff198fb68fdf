"""One bound per bot, whatever it forks: the tree's memory, its core, its background CPU.

Each bot of a hostile corpus (``hostile_bots/``) plays a short match through the real
:class:`MatchPlayer` (sandboxed bot processes, their cgroups) against a healthy bot; every
forfeited record passes the independent checker.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tacocat.engine import STANDARD, Fault, Reason, duplicate_pairs
from tacocat.worker import Launcher, MatchPlayer
from tacocat.worker.match import MatchRun
from tacocat.worker.sandbox import SandboxPolicy
from tests.independent_checker import check_record

from .sandbox_helpers import STARTUP
from .worker_helpers import SANDBOX, bot_folder, good_bot, slow_bot

pytestmark = pytest.mark.timeout(90)

BOTS = Path(__file__).parent / "hostile_bots"


def _match(tmp_path: Path, hostile: str, *, policy: SandboxPolicy | None = None,
           opponent: bytes | None = None, time_limit: float = 1.0, games: int = 2,
           ) -> tuple[list[str], MatchRun]:
    assert SANDBOX, "bubblewrap is required: hostile bots never run unsandboxed"
    launcher = Launcher(policy or SandboxPolicy(), sandbox=True, cpu=0)
    good = bot_folder(tmp_path / "good", "good@1", opponent or good_bot("good"))
    bad = bot_folder(tmp_path / "bad", f"{hostile}@1", (BOTS / f"{hostile}.py").read_bytes())
    with MatchPlayer(launcher, good, bad, STANDARD, time_limit=time_limit,
                     max_strikes=1, startup_timeout=STARTUP) as player:
        played = player.play(duplicate_pairs(games, "tree"))
        trees = [side.command.tree for side in player._sides]
        assert all(trees), "sandboxed bots have memory, CPU and cpuset cgroups"
    assert not any(path.exists() for tree in trees for path in tree), "cgroups left behind"
    for record in played.records:
        assert check_record(record.to_json()) == [], record.dumps()
        assert "ESCAPED" not in record.result.detail, record.result.detail
    # A hostile bot says what it got away with in its stderr (its owner's log).
    assert b"ESCAPED" not in played.logs[1], played.logs[1][-2000:]
    return [r.result.detail for r in played.records], played


def _forfeits(played: MatchRun, fault: Fault) -> None:
    for index, record in enumerate(played.records):
        result = record.result
        assert result.reason is Reason.FORFEIT and result.fault is fault, result
        assert result.offender == 1 - played.a_seats[index]


def test_forked_children_share_one_memory_bound(tmp_path: Path) -> None:
    # 512 MB of address space per process, 256 MB for the whole tree: each of the four
    # children may take its 100 MB, all four together may not.
    policy = SandboxPolicy(address_space=512 << 20, memory_bytes=256 << 20)
    details, played = _match(tmp_path, "forked_memory", policy=policy, time_limit=5.0)
    _forfeits(played, Fault.CRASH)
    # What the bot reports is in its owner's log; the record says only what kind of crash.
    said = played.logs[1].decode()
    assert "then a child was killed by signal 9" in said or "signal 9" in said, said[-2000:]
    assert "signal 9" not in details[0], details[0]


def test_a_bot_cannot_leave_its_core_or_change_its_scheduling(tmp_path: Path) -> None:
    details, played = _match(tmp_path, "affinity_escape")
    _forfeits(played, Fault.CRASH)
    assert "blocked: sched_setaffinity PermissionError, sched_setscheduler PermissionError" \
        in played.logs[1].decode(), played.logs[1][-2000:]
    assert "blocked" not in details[0], details[0]


def test_a_background_spinner_forfeits_on_time(tmp_path: Path) -> None:
    # The opponent thinks 20 ms a decision: the CPU the spinner's children and threads take
    # besides its decisions, past one decision's 0.3 s, forfeits it on time (unless its
    # spinners slowed its own decisions past the limit first: a timeout as well).
    details, played = _match(tmp_path, "background_spinner",
                                     opponent=slow_bot("thinker", 0.02), time_limit=0.3,
                                     games=4)
    assert any(r.result.fault is Fault.TIMEOUT for r in played.records), details
    spinner = next(r for r in played.records if r.result.fault is Fault.TIMEOUT)
    detail = spinner.result.detail
    assert "CPU besides its decisions" in detail or "the limit is 0.3 s" in detail, detail
    assert all(r.result.offender in (None, 1 - played.a_seats[i])
               for i, r in enumerate(played.records))
    assert os.sched_getaffinity(0)  # the test process itself was never touched
