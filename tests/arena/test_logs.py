"""Bot logs in the arena (:mod:`tacocat.arena.logs`), on a real Valkey: stored compressed per
side, read by each side's owner only, and signed links that refuse forgery and expiry."""

from __future__ import annotations

import gzip
from dataclasses import dataclass

import pytest
import redis as redis_py

from tacocat.arena import Arena, InvalidArgument, Match, NotFound, PermissionDenied, User
from tacocat.arena.logs import check_link, owner_of

from .helpers import Field, make_field

A_LOG = b"=== game 1 ===\nann's secret\n[referee] crash: exited with code 1\n"
B_LOG = b"bob was here \xff\n"


@dataclass
class Played:
    """A recorded match of ann's bot against bob's (cat owns a bot, not in it), on a clock
    the test moves."""

    field: Field
    match: Match
    now: list[float]

    @property
    def arena(self) -> Arena:
        return self.field.arena

    def owner(self, side: str) -> User:
        return self.field.users[str(owner_of(self.match.a if side == "a" else self.match.b))]


@pytest.fixture
def played(redis: redis_py.Redis) -> Played:
    now = [1000.0]
    field = make_field(redis, clock=lambda: now[0])
    arena = field.arena
    arena.ladders.create(field.admin, "main", games_per_pairing=2, games_per_match=2)
    for owner, kind in (("ann", "greedy"), ("bob", "random")):
        field.add_bot(owner, "bot", kind)
        arena.ladders.join(field.users[owner], "bot", "main")
    field.add_bot("cat", "bot", "passive")
    (match, *_) = arena.matches.schedule("main", field.enqueue)
    arena.matches.record(match.id, field.play(match))
    return Played(field, arena.matches.get(match.id), now)


def test_each_owner_reads_their_own_side_and_nobody_else_reads_any(
        redis: redis_py.Redis, played: Played) -> None:
    field, arena, match, match_id = played.field, played.arena, played.match, played.match.id
    by_owner = {owner_of(match.a): "a", owner_of(match.b): "b"}
    logs = {by_owner["ann"]: A_LOG, by_owner["bob"]: B_LOG}
    assert arena.matches.logs(field.users["ann"], match_id)[0].stored is False  # not yet
    arena.matches.store_logs(match_id, logs)
    # Compressed in Redis, beside the replays.
    raw = redis.get(arena.keys.match_logs("main", match_id, by_owner["ann"]))
    assert isinstance(raw, bytes) and gzip.decompress(raw) == A_LOG

    (ann,) = arena.matches.logs(field.users["ann"], match_id)
    assert (ann.side, ann.text, ann.stored) == (by_owner["ann"], A_LOG.decode(), True)
    assert ann.version == (match.a if ann.side == "a" else match.b)
    (bob,) = arena.matches.logs(field.users["bob"], match_id)
    assert bob.text == "bob was here \ufffd\n" and "secret" not in bob.text
    for stranger in (field.users["cat"], field.admin, None):
        with pytest.raises(PermissionDenied, match="you own neither"):
            arena.matches.logs(stranger, match_id)
        if stranger is not None:
            with pytest.raises(PermissionDenied):
                arena.matches.logs_link(stranger, match_id)
    with pytest.raises(NotFound):
        arena.matches.logs(field.users["ann"], "main.9.0000000000000000")
    assert owner_of("house:strong") is None


def test_a_signed_link_shows_its_sides_until_it_expires_and_refuses_forgeries(
        redis: redis_py.Redis, played: Played) -> None:
    arena, match_id, now = played.arena, played.match.id, played.now
    arena.matches.store_logs(match_id, {"a": b"side a\n", "b": b"side b\n"})
    owner_a = played.owner("a")
    link, expires = arena.matches.logs_link(owner_a, match_id, seconds=600)
    assert expires == 1600.0 and link.startswith("a.1600.")
    assert [log.text for log in arena.matches.logs_by_link(match_id, link)] == ["side a\n"]

    _, when, mac = link.split(".")
    refusals = {
        f"ab.{when}.{mac}": "not valid",        # another side added
        f"b.{when}.{mac}": "not valid",         # the other side
        f"a.{int(when) + 1}.{mac}": "not valid",  # a later expiry
        f"a.{when}.{'0' * 32}": "not valid",    # a made-up signature
        "a.1600": "malformed", "": "malformed", f"a.{when}.{mac}x": "malformed",
    }
    for bad, why in refusals.items():
        with pytest.raises(PermissionDenied, match=why):
            arena.matches.logs_by_link(match_id, bad)
    with pytest.raises(PermissionDenied, match="not valid"):  # signed for one match only
        check_link(redis, arena.keys, "main.2.0123456789abcdef", link, now[0])
    now[0] = 1600.0
    assert arena.matches.logs_by_link(match_id, link)  # up to its last second
    now[0] = 1601.0
    with pytest.raises(PermissionDenied, match="expired"):
        arena.matches.logs_by_link(match_id, link)
    for seconds in (0, -1, 8 * 24 * 3600):
        with pytest.raises(InvalidArgument, match="at most"):
            arena.matches.logs_link(owner_a, match_id, seconds=seconds)


def test_the_link_secret_is_shared_by_every_arena_on_the_redis_and_not_guessable(
        redis: redis_py.Redis, played: Played) -> None:
    link, _ = played.arena.matches.logs_link(played.owner("a"), played.match.id)
    # Another server process of the same arena (same Redis) honours it.
    again = Arena(redis, clock=lambda: played.now[0])
    assert again.matches.logs_by_link(played.match.id, link)
    secret = redis.get(played.arena.keys.log_link_secret())
    assert isinstance(secret, bytes) and len(secret) == 64
