"""What durable results cost: recording a match under each persistence setting.

The arena's choice (docs/WORKER.md, "Faults we test"): ``appendfsync everysec`` and
``WAITAOF`` after each recorded result, so a result is acknowledged only once it is on
disk. This measures, on one embedded server per setting with its data on this machine's
disk, the time of :func:`tacocat.arena.recording.record_match` for the same matches:

- ``everysec``: no wait (a killed Redis loses nothing; a crashed machine up to a second);
- ``everysec+waitaof``: the arena's choice;
- ``always``: every write fsynced before its reply; its cost here is one fsync per
  recording, but it also charges one to every other write the workers make (leases, RQ's
  bookkeeping, counters: dozens per match), which ``waitaof`` leaves alone.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Final

from redis import Redis

from tacocat.arena import Arena, EmbeddedValkey, MatchResult
from tacocat.arena.recording import FSYNC_TIMEOUT, record_match
from tacocat.engine.bots import RandomBot
from tacocat.referee import play_in_process

MODES: Final = (("everysec", False), ("everysec+waitaof", True), ("always", False))
_BOT: Final = b"from tacocat.engine.bots import RandomBot\n\n\nclass B(RandomBot):\n    pass\n"


def record_costs(folder: Path, bots: int = 12, games: int = 2) -> dict[str, float]:
    """Median milliseconds per recorded match, by setting (``bots`` choose 2 matches each)."""
    costs = {}
    for mode, wait in MODES:
        server = EmbeddedValkey(folder / mode.replace("+", "-"),
                                appendfsync=mode.split("+")[0])
        with server:
            redis = Redis.from_url(server.url)
            try:
                costs[mode] = statistics.median(_record_all(Arena(redis), bots, games, wait))
            finally:
                redis.close()
    return costs


def _record_all(arena: Arena, bots: int, games: int, wait: bool) -> list[float]:
    token = arena.users.bootstrap_admin()
    assert token is not None  # a fresh server
    admin = arena.users.authenticate(token)
    arena.ladders.create(admin, "cost", games_per_pairing=games, games_per_match=games)
    for i in range(bots):
        arena.bots.activate(arena.bots.submit(admin, f"b{i}", "bot.py", _BOT).id)
        arena.ladders.join(admin, f"b{i}", "cost")
    matches = arena.matches.schedule("cost", lambda _: None)
    seconds = []
    for match in matches:
        played = [g.record for g in play_in_process(RandomBot(1), RandomBot(2), match.schedule(),
                                                    names=(match.a, match.b)).games]
        result = MatchResult.from_records(played, match.a, match.b, 0.0)
        started = time.perf_counter()
        done = record_match(arena.redis, arena.keys, match.id, result,
                            fsync_timeout=FSYNC_TIMEOUT if wait else None)
        seconds.append(1000 * (time.perf_counter() - started))
        assert done.recorded
    return seconds
