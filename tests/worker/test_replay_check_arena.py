"""``tacocat replay check`` on a real arena match: the games a bot played in the sandbox,
through the protocol, re-fed to the same bot file in this process match decision by
decision (the observations the arena sent are the ones the engine rebuilds)."""

from __future__ import annotations

from pathlib import Path

import pytest
import redis as redis_py

from tests.cli.helpers import tacocat

from .worker_helpers import Trees, good_bot, make_field, source, wait_decided, wait_ladder_done

pytestmark = pytest.mark.timeout(150)

# RandomBot(7)'s every answer depends on all the calls before it: one observation asked out
# of order or different in what it uses shows up.
SEEDED = source("""
    from tacocat.engine.bots import RandomBot


    class Seeded(RandomBot):
        def __init__(self) -> None:
            super().__init__(7)
""")


def test_replay_check_reproduces_an_arena_match(redis: redis_py.Redis, trees: Trees,
                                                tmp_path: Path) -> None:
    field = make_field(redis)
    arena = field.arena
    arena.ladders.create(field.admin, "main", games_per_pairing=6, games_per_match=6)
    versions = [field.submit("ann", "seeded", SEEDED), field.submit("bob", "greedy",
                                                                   good_bot("g"))]
    trees(workers=1)
    field.join("ann", "seeded", "main")
    field.join("bob", "greedy", "main")
    assert wait_decided(arena, versions) == dict.fromkeys(versions, "")
    wait_ladder_done(arena, "main")
    (entry,) = arena.ladders.recent_matches("main")
    (tmp_path / "match.jsonl.gz").write_bytes(arena.matches.replays_blob(entry.match))
    (tmp_path / "seeded.py").write_bytes(SEEDED)

    done = tacocat("replay", "check", "match.jsonl.gz", "--bot", "seeded.py", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "6 games" in done.stdout and "every answer matched the record" in done.stdout
    assert "seat 0 (ann/seeded@1)" in done.stdout and "seat 1 (ann/seeded@1)" in done.stdout
    # A different bot in its place does not match, and the exit status says so.
    done = tacocat("replay", "check", "match.jsonl.gz", "--bot", "house:random", "--seat", "0",
                   cwd=tmp_path)
    assert done.returncode == 1 and "did not" in done.stdout
