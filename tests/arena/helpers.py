"""Shared helpers for arena tests: a populated arena, and matches played for real in-process.

The real worker (sandboxed processes) comes later; here the referee's ``play_in_process`` plays
each match with house bots in this process, and the result goes through the same
``MatchResult.from_records`` a worker uses.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier

import redis as redis_py

from tacocat.arena import Arena, Match, MatchResult, User
from tacocat.engine import Bot, Observation
from tacocat.engine.bots import GreedyBot, RandomBot
from tacocat.referee import play_in_process

BotFactory = Callable[[], Bot]


class PassiveBot(Bot):
    """The engine's default decisions: legal, naive, weaker than greedy."""

    name = "passive"


class CrashingBot(Bot):
    """Raises on its first attack: forfeits those games with ``crash``."""

    name = "crashing"

    def attack(self, obs: Observation) -> Sequence[int]:
        raise RuntimeError("boom")


HOUSE: dict[str, BotFactory] = {
    "greedy": GreedyBot,
    "random": lambda: RandomBot(1),
    "random2": lambda: RandomBot(2),
    "passive": PassiveBot,
    "crashing": CrashingBot,
}


def bot_source(tag: str) -> bytes:
    """A valid, distinct bot file per tag (distinct bytes: the arena refuses duplicates)."""
    return (
        f'"""Test bot {tag}."""\n'
        "from tacocat.engine.bots import GreedyBot\n\n\n"
        "class MyBot(GreedyBot):\n"
        f"    label = {tag!r}\n"
    ).encode()


@dataclass
class Field:
    """An arena with an admin, users owning one bot each, and an in-process player."""

    arena: Arena
    admin: User
    users: dict[str, User] = field(default_factory=dict)
    # bot id -> how to make a fresh instance of it (any version plays the same code here)
    factories: dict[str, BotFactory] = field(default_factory=dict)
    queue: list[str] = field(default_factory=list)

    def enqueue(self, match_id: str) -> None:
        self.queue.append(match_id)

    def add_bot(self, owner: str, name: str, kind: str, *, activate: bool = True) -> str:
        """Create ``owner`` if needed, submit ``owner/name`` and activate it; returns the
        version id."""
        if owner not in self.users:
            self.arena.users.create(self.admin, owner)
            self.users[owner] = self.arena.users.authenticate(
                self.arena.users.create_token(self.admin, owner))
        versions = len(self.arena.bots.versions(f"{owner}/{name}")) if name in [
            b.name for b in self.arena.bots.all(owner)] else 0
        version = self.arena.bots.submit(self.users[owner], name, "bot.py",
                                         bot_source(f"{owner}/{name}/{versions + 1}"))
        if activate:
            self.arena.bots.activate(version.id)
        self.factories[f"{owner}/{name}"] = HOUSE[kind]
        return version.id

    def play(self, match: Match) -> MatchResult:
        return play(self.arena, match, self.factories)

    def run(self, ladder: str, *, limit: int = 10_000) -> int:
        """Schedule, play and record until the ladder has nothing left to do; returns the
        number of matches recorded."""
        recorded = 0
        self.arena.matches.schedule(ladder, self.enqueue)
        while self.queue and limit:
            limit -= 1
            match = self.arena.matches.get(self.queue.pop(0))
            if self.arena.matches.record(match.id, self.play(match),
                                         enqueue=self.enqueue).recorded:
                recorded += 1
        return recorded


def play(arena: Arena, match: Match, factories: Mapping[str, BotFactory]) -> MatchResult:
    """Play ``match`` for real with the engine, as the worker will (duplicate pairs, the
    match seed, the ladder's rules), and build its result."""
    ladder = arena.ladders.get(match.ladder)
    started = time.perf_counter()
    games = play_in_process(
        factories[match.a.rpartition("@")[0]], factories[match.b.rpartition("@")[0]],
        match.schedule(), rules=ladder.ruleset, names=(match.a, match.b),
    ).games
    return MatchResult.from_records([g.record for g in games], match.a, match.b,
                                    time.perf_counter() - started)


def make_field(redis: redis_py.Redis, **arena_kwargs: object) -> Field:
    arena = Arena(redis, **arena_kwargs)  # type: ignore[arg-type]
    token = arena.users.bootstrap_admin()
    assert token is not None
    return Field(arena, arena.users.authenticate(token))


def stub_ladder(redis: redis_py.Redis, ladder: str, bots: int, *, games_per_pairing: int,
                games_per_match: int) -> tuple[Arena, list[str]]:
    """A ladder of ``bots`` admin-owned bots that nothing runs (results are made up by the
    test) and the ids of its scheduled matches, in queue order."""
    field = make_field(redis)
    arena = field.arena
    arena.ladders.create(field.admin, ladder, games_per_pairing=games_per_pairing,
                         games_per_match=games_per_match)
    for i in range(bots):
        version = arena.bots.submit(field.admin, f"bot{i:02d}", "bot.py",
                                    f"# bot {i}\nfrom tacocat.engine import Bot\n".encode())
        arena.bots.activate(version.id)
        arena.ladders.join(field.admin, f"bot{i:02d}", ladder)
    queue: list[str] = []
    arena.matches.schedule(ladder, queue.append)
    return arena, queue


def record_in_process(url: str, match_id: str, summary: dict[str, object], replays: bytes,
                      barrier: Barrier, outcomes: Queue[bool]) -> None:
    """Record a result from another process, released by ``barrier`` together with the
    others so that they commit the same match at the same moment; puts the outcome."""
    arena = Arena(redis_py.Redis.from_url(url))
    result = MatchResult.from_summary_json(summary, replays)
    arena.redis.ping()  # connect before the race starts
    barrier.wait()
    outcomes.put(arena.matches.record(match_id, result).recorded)


def snapshot(client: redis_py.Redis) -> dict[object, object]:
    """Every key with its full value, for before/after comparisons and content searches."""
    dump: dict[object, object] = {}
    for key in sorted(client.keys("*")):
        kind = client.type(key)
        if kind == b"hash":
            dump[key] = client.hgetall(key)
        elif kind == b"string":
            dump[key] = client.get(key)
        elif kind == b"set":
            dump[key] = client.smembers(key)
        elif kind == b"zset":
            dump[key] = client.zrange(key, 0, -1, withscores=True)
        elif kind == b"stream":
            dump[key] = client.xrange(key)
        elif kind == b"list":
            dump[key] = client.lrange(key, 0, -1)
    return dump
