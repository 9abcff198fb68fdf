"""The arena API end to end: real gRPC over loopback, a real embedded Redis, the SDK's
:class:`ArenaClient` on the other side. Matches are played in-process by the engine and
recorded through ``arena.matches.record`` (the workers are tested elsewhere)."""

from __future__ import annotations

import gzip
import io
import os
import queue
import stat
import threading
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import redis as redis_py

import tacocat.server._arena_service as arena_service
from tacocat.arena import Arena, RateLimit, RateLimits
from tacocat.cli._arena_cmds import match_text, status_line
from tacocat.engine import STANDARD, Ruleset
from tacocat.sdk import (
    AlreadyExistsError,
    ArenaClient,
    AuthError,
    InvalidRequestError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitedError,
    ServerUnavailableError,
)
from tacocat.sdk.arena import LeaderboardUpdate, MatchStatus, VersionStatus
from tacocat.server import ArenaAuthenticator, bootstrap_admin_token

from ..arena.helpers import Field, bot_source
from .arena_server import ServerThread, serve_in_thread

ClientFactory = Callable[..., ArenaClient]


@pytest.fixture(autouse=True)
def _no_ambient_token(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No token from the environment or a local .tacocat/ of whoever runs the tests."""
    for name in ("TACOCAT_TOKEN", "TACOCAT_TOKEN_FILE", "TACOCAT_ADDRESS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)


@pytest.fixture(scope="module")
def running(redis_url: str) -> Iterator[ServerThread]:
    arena = Arena(redis_py.Redis.from_url(redis_url))
    with serve_in_thread(arena, watch_debounce=0.02) as server:
        yield server


@dataclass
class ApiField(Field):
    admin_token: str = ""


@pytest.fixture
def field(redis: redis_py.Redis) -> ApiField:
    """A flushed arena with its admin and the admin's token."""
    arena = Arena(redis)
    token = arena.users.bootstrap_admin()
    assert token is not None
    return ApiField(arena, arena.users.authenticate(token), admin_token=token)


@pytest.fixture
def connect(running: ServerThread) -> Iterator[ClientFactory]:
    clients: list[ArenaClient] = []

    def make(token: str | None = None) -> ArenaClient:
        client = ArenaClient(running.address, token, timeout=10.0)
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


def admin(field: ApiField, connect: ClientFactory) -> ArenaClient:
    return connect(field.admin_token)


def user(field: ApiField, connect: ClientFactory, name: str) -> ArenaClient:
    boss = admin(field, connect)
    boss.create_user(name)
    return connect(boss.create_token(name, label="test").token)


def write_bot(folder: Path, name: str, tag: str | None = None) -> Path:
    path = folder / name
    path.write_bytes(bot_source(tag or name))
    return path


# ------------------------------------------------------------------------------------ auth


def test_no_token_may_read_but_not_change(field: ApiField, connect: ClientFactory,
                                          tmp_path: Path) -> None:
    anonymous = connect()
    assert anonymous.token is None
    assert anonymous.list_bots() == []
    assert anonymous.server_info().max_submission_bytes == 1024 * 1024
    with pytest.raises(AuthError, match="needs a token") as caught:
        anonymous.submit(write_bot(tmp_path, "mybot.py"))
    assert caught.value.status == "UNAUTHENTICATED"
    with pytest.raises(AuthError, match="needs a token"):
        anonymous.create_ladder("main")
    with pytest.raises(AuthError, match="needs a token"):
        anonymous.whoami()


def test_a_wrong_token_is_refused_even_for_reads(field: ApiField, connect: ClientFactory) -> None:
    for token in ("tct_" + "x" * 43, "hunter2"):
        client = connect(token)
        with pytest.raises(AuthError) as caught:
            client.list_bots()
        assert caught.value.status == "UNAUTHENTICATED"
        assert "the token argument" in str(caught.value)  # says where the token came from
        with pytest.raises(AuthError):
            client.whoami()


def test_a_revoked_token_is_refused(field: ApiField, connect: ClientFactory) -> None:
    alice = user(field, connect, "alice")
    assert alice.whoami().name == "alice"
    spare = alice.create_token(label="spare")
    assert spare.info.user == "alice" and spare.info.label == "spare"
    assert {t.label for t in alice.list_tokens()} == {"test", "spare"}
    alice.revoke_token(spare.info.id)
    with pytest.raises(AuthError, match=r"revoked|unknown"):
        connect(spare.token).whoami()


def test_another_users_bot_is_refused(field: ApiField, connect: ClientFactory,
                                      tmp_path: Path) -> None:
    alice = user(field, connect, "alice")
    bob = user(field, connect, "bob")
    alice.submit(write_bot(tmp_path, "tacobot.py", "alice"))
    with pytest.raises(PermissionDeniedError, match="belongs to 'alice'") as caught:
        bob.submit(write_bot(tmp_path, "other.py", "bob"), bot="alice/tacobot")
    assert caught.value.status == "PERMISSION_DENIED"
    admin(field, connect).create_ladder("main", games_per_pairing=4, games_per_match=2)
    with pytest.raises(PermissionDeniedError, match="only its owner"):
        bob.join("main", "alice/tacobot")
    with pytest.raises(PermissionDeniedError, match="only admins may create users"):
        bob.create_user("carol")
    with pytest.raises(PermissionDeniedError, match="ask an admin"):
        bob.create_token("alice")


# ------------------------------------------------------------------------------------ bots


def test_submit_list_and_versions(field: ApiField, connect: ClientFactory, tmp_path: Path) -> None:
    alice = user(field, connect, "alice")
    first = alice.submit(write_bot(tmp_path, "Taco Bot.py", "v1"))
    assert first.version.id == "alice/taco-bot@1"  # named after the file
    assert first.version.status is VersionStatus.PENDING
    assert first.version.kind == "py" and first.entry is None and not first.joined
    archive = tmp_path / "bundle.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("bot.py", bot_source("v2"))
        zipped.writestr("data/table.txt", "1 2 3\n")
    second = alice.submit(archive, bot="taco-bot")
    assert second.version.id == "alice/taco-bot@2" and second.version.kind == "zip"

    (bot,) = connect().list_bots()
    assert (bot.id, bot.owner, bot.versions, bot.current_version) == (
        "alice/taco-bot", "alice", 2, None)
    assert connect().list_bots(owner="bob") == []
    versions = connect().list_versions("alice/taco-bot")
    assert [v.number for v in versions] == [1, 2]
    assert alice.list_versions("taco-bot") == versions  # a bare name is the caller's bot

    field.arena.bots.activate("alice/taco-bot@2")
    (bot,) = alice.list_bots()
    assert bot.current_version == "alice/taco-bot@2"
    assert alice.list_versions("taco-bot")[1].status is VersionStatus.ACTIVE

    with pytest.raises(AlreadyExistsError, match="identical to alice/taco-bot@1"):
        alice.submit(write_bot(tmp_path, "again.py", "v1"), bot="taco-bot")
    with pytest.raises(NotFoundError, match="no bot"):
        connect().list_versions("alice/nothing")


def test_bad_uploads_are_refused_with_the_rule(field: ApiField, connect: ClientFactory,
                                               tmp_path: Path) -> None:
    alice = user(field, connect, "alice")
    broken = tmp_path / "broken.py"
    broken.write_text("def oops(:\n")
    with pytest.raises(InvalidRequestError, match="syntax") as caught:
        alice.submit(broken)
    assert caught.value.status == "INVALID_ARGUMENT"
    with pytest.raises(InvalidRequestError, match=r"neither a \.py file, a \.zip nor a bot folder"):
        alice.submit(tmp_path / "notes.txt")
    with pytest.raises(InvalidRequestError, match="cannot read"):
        alice.submit(tmp_path / "missing.py")
    with pytest.raises(InvalidRequestError, match=r"bot\.py"):
        alice.submit_bytes("empty.zip", _zip({"main.py": b"x = 1\n"}), "zipped")
    # Just over the arena's limit: the arena's own refusal, through gRPC's size limit.
    big = b"# " + b"x" * (1024 * 1024) + b"\n"
    words = "more than the server accepts; keep a submission under 1024 KiB"
    with pytest.raises(InvalidRequestError, match=words) as caught:
        alice.submit_bytes("big.py", big, "big")
    assert caught.value.status == "INVALID_ARGUMENT"
    # Far over it: gRPC refuses the message; the client says the same words.
    with pytest.raises(InvalidRequestError, match=words):
        alice.submit_bytes("huge.py", big * 2, "huge")
    with pytest.raises(InvalidRequestError, match="bot name"):
        alice.submit_bytes("x.py", bot_source("x"), "Bad Name")


def _zip(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zipped:
        for name, data in files.items():
            zipped.writestr(name, data)
    return buffer.getvalue()


# ------------------------------------------------------------------------------------ ladders


def test_ladders_are_admin_made_and_bots_join(field: ApiField, connect: ClientFactory,
                                              tmp_path: Path) -> None:
    alice = user(field, connect, "alice")
    with pytest.raises(PermissionDeniedError, match="only admins may create ladders"):
        alice.create_ladder("main")
    short = Ruleset.from_dict({**STANDARD.to_dict(), "name": "short", "max_rounds": 5})
    ladder = admin(field, connect).create_ladder(
        "main", ruleset=short, games_per_pairing=40, games_per_match=10, decision_seconds=0.5)
    assert (ladder.name, ladder.games_per_pairing, ladder.games_per_match, ladder.rounds,
            ladder.decision_seconds, ladder.created_by) == ("main", 40, 10, 4, 0.5, "admin")
    assert ladder.ruleset == short
    assert alice.ladder("main") == ladder
    with pytest.raises(AlreadyExistsError):
        admin(field, connect).create_ladder("main")
    with pytest.raises(InvalidRequestError, match="games_per_match must be an even"):
        admin(field, connect).create_ladder("odd", games_per_match=3, games_per_pairing=9)
    with pytest.raises(InvalidRequestError, match="games_per_pairing must be a positive"):
        admin(field, connect).create_ladder("bad", games_per_pairing=30, games_per_match=20)

    # Submitting with a ladder joins it; submitting again keeps the entry.
    done = alice.submit(write_bot(tmp_path, "tacobot.py", "v1"), ladder="main")
    assert done.joined and done.entry is not None
    assert (done.entry.ladder, done.entry.bot, done.entry.version) == (
        "main", "alice/tacobot", None)  # pending: nothing plays yet
    again = alice.submit(write_bot(tmp_path, "tacobot.py", "v2"), ladder="main")
    assert not again.joined and again.entry is not None and again.entry.bot == "alice/tacobot"
    with pytest.raises(AlreadyExistsError):
        alice.join("main", "tacobot")
    with pytest.raises(NotFoundError, match="no ladder"):
        alice.submit(write_bot(tmp_path, "other.py", "v3"), ladder="nope")
    assert [b.name for b in alice.list_bots()] == ["tacobot"]  # nothing stored for "nope"

    field.arena.bots.activate("alice/tacobot@2")
    status = connect().ladder_status("main")
    # One bot alone is waiting for opponents, never "complete" (issue 13).
    assert (status.entries, status.playing, status.complete) == (1, 1, False)
    assert status.waiting_for_opponents
    with pytest.raises(NotFoundError, match="no ladder"):
        connect().ladder_status("nope")


# ------------------------------------------------------------------------------------ results


def _play_one_round(field: Field) -> list[str]:
    """Three active bots in ladder ``main``; every match of the first round played and
    recorded. Returns the recorded match ids."""
    arena = field.arena
    arena.ladders.create(field.admin, "main", games_per_pairing=8, games_per_match=4)
    for owner, kind in (("alice", "greedy"), ("bob", "random"), ("carol", "passive")):
        field.add_bot(owner, "bot", kind)
        arena.ladders.join(field.users[owner], "bot", "main")
    arena.matches.schedule("main", field.enqueue, rounds_ahead=1)
    recorded = []
    for match_id in list(field.queue):
        match = arena.matches.get(match_id)
        arena.matches.record(match_id, field.play(match))
        recorded.append(match_id)
    field.queue.clear()
    return recorded


def test_leaderboard_matches_and_replays(field: ApiField, connect: ClientFactory,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    recorded = _play_one_round(field)
    assert len(recorded) == 3
    client = connect()
    board = client.leaderboard("main")
    assert board.version == 3
    assert [s.rank for s in board.standings] == [1, 2, 3]
    assert {s.owner for s in board.standings} == {"alice", "bob", "carol"}
    expected = field.arena.ladders.leaderboard("main")
    for got, want in zip(board.standings, expected.standings, strict=True):
        assert (got.version, got.rating, got.low, got.high, got.elo, got.games, got.wins,
                got.ties, got.losses) == (want.version, want.rating, want.low, want.high,
                                          want.elo, want.games, want.wins, want.ties,
                                          want.losses)
        assert got.margin is not None and got.margin > 0
        assert got.active
    assert len(board.pairs) == 3
    assert board.standing("alice/bot") is not None

    matches = client.matches("main", status=MatchStatus.RECORDED)
    assert sorted(m.id for m in matches) == sorted(recorded)
    match = client.match(recorded[0])
    stored = field.arena.matches.get(recorded[0])
    assert match.status is MatchStatus.RECORDED and match.seed == stored.seed
    assert match.seq is not None and match.recorded_at is not None
    assert match.result is not None and len(match.result.games) == 4
    assert stored.result is not None
    assert (match.result.wins, match.result.ties, match.result.losses) == (
        stored.result.wins, stored.result.ties, stored.result.losses)
    assert [g.a_seat for g in match.result.games] == [0, 1, 0, 1]

    want_records = field.arena.matches.replays(recorded[0])
    monkeypatch.setattr(arena_service, "REPLAY_CHUNK_BYTES", 512)  # several chunks
    blob = client.replays_blob(recorded[0])
    assert gzip.decompress(blob) == gzip.decompress(field.arena.matches.replays_blob(recorded[0]))
    records = client.replays(recorded[0])
    assert [r.dumps() for r in records] == [r.dumps() for r in want_records]
    assert records[0].replay() is not None  # the rules accept the record

    with pytest.raises(NotFoundError, match="no match"):
        client.match("main.1.0000000000000000")
    with pytest.raises(InvalidRequestError, match=r"LADDER\.ROUND\.DIGEST"):
        client.match("garbage")


def test_a_scheduled_match_keeps_its_seed_secret(field: ApiField, connect: ClientFactory) -> None:
    arena = field.arena
    arena.ladders.create(field.admin, "main", games_per_pairing=4, games_per_match=2)
    for owner in ("alice", "bob"):
        field.add_bot(owner, "bot", "greedy")
        arena.ladders.join(field.users[owner], "bot", "main")
    arena.matches.schedule("main", field.enqueue)
    match = connect().match(field.queue[0])
    assert match.status is MatchStatus.SCHEDULED
    assert match.seed is None and match.result is None
    assert connect().replays(field.queue[0]) == []


def test_an_aborted_match_says_why_through_the_api_and_the_cli_text(
        field: ApiField, connect: ClientFactory) -> None:
    arena = field.arena
    arena.ladders.create(field.admin, "main", games_per_pairing=2, games_per_match=2)
    for owner in ("alice", "bob"):
        field.add_bot(owner, "bot", "greedy")
        arena.ladders.join(field.users[owner], "bot", "main")
    arena.matches.schedule("main", field.enqueue)
    reason = "it ran past its job timeout of 9 s; 3 runs failed this way"
    assert arena.matches.abort(field.queue[0], reason)
    client = connect()
    match = client.match(field.queue[0])
    assert match.status is MatchStatus.ABORTED and match.reason == reason
    assert [m.id for m in client.matches("main", status=MatchStatus.ABORTED)] == [match.id]
    assert f"aborted: {reason}" in match_text(match)
    status = client.ladder_status("main")
    assert (status.matches_aborted, status.games_aborted, status.complete) == (1, 2, True)
    assert "1 aborted" in status_line(status)


# ------------------------------------------------------------------------------------ watch


def _watch(client: ArenaClient, ladder: str
           ) -> tuple[queue.Queue[LeaderboardUpdate | BaseException], threading.Thread]:
    updates: queue.Queue[LeaderboardUpdate | BaseException] = queue.Queue()

    def run() -> None:
        try:
            for update in client.watch(ladder):
                updates.put(update)
        except BaseException as exc:  # handed to the test thread
            updates.put(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return updates, thread


def _next(updates: queue.Queue[LeaderboardUpdate | BaseException]) -> LeaderboardUpdate:
    item = updates.get(timeout=10)
    if isinstance(item, BaseException):
        raise item
    return item


def test_watch_sends_a_snapshot_then_every_change(field: ApiField, connect: ClientFactory,
                                                 running: ServerThread) -> None:
    arena = field.arena
    arena.ladders.create(field.admin, "main", games_per_pairing=4, games_per_match=2)
    for owner in ("alice", "bob"):
        field.add_bot(owner, "bot", "greedy" if owner == "alice" else "random")
        arena.ladders.join(field.users[owner], "bot", "main")
    watcher = connect()
    updates, thread = _watch(watcher, "main")
    first = _next(updates)
    assert first.event == "snapshot"
    assert first.leaderboard.version == 0 and first.status.playing == 2
    assert [s.rating for s in first.leaderboard.standings] == [None, None]

    arena.matches.schedule("main", field.enqueue, rounds_ahead=1)
    scheduled = _next(updates)
    assert scheduled.status.matches_pending == 1
    match = arena.matches.get(field.queue[0])
    arena.matches.record(match.id, field.play(match))
    update = _next(updates)
    while update.leaderboard.version < 1:  # a burst may arrive in two updates
        update = _next(updates)
    assert update.event in ("result", "standings")
    assert update.status.matches_recorded == 1 and update.status.games_played == 2
    assert all(s.games == 2 for s in update.leaderboard.standings)
    assert running.service.feeds.watched == {"main": 1}

    watcher.close()  # the client goes away: the server drops its feed
    thread.join(5)
    _wait_for(lambda: running.service.feeds.watched == {})


def test_watch_of_an_unknown_ladder_is_not_found(field: ApiField, connect: ClientFactory) -> None:
    with pytest.raises(NotFoundError, match="no ladder"):
        next(connect().watch("nope"))


def test_server_shutdown_ends_watches_with_unavailable(redis_url: str, field: ApiField) -> None:
    field.arena.ladders.create(field.admin, "main", games_per_pairing=4, games_per_match=2)
    arena = Arena(redis_py.Redis.from_url(redis_url))
    with serve_in_thread(arena) as server:
        client = ArenaClient(server.address, timeout=5.0)
        updates, thread = _watch(client, "main")
        assert _next(updates).event == "snapshot"
        server.stop(grace=0.0)
        with pytest.raises(ServerUnavailableError, match=r"shutting down|reconnect"):
            _next(updates)
        thread.join(5)
        client.close()


def _wait_for(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    import time  # noqa: PLC0415

    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.02)


# ------------------------------------------------------------------------------------ server


def test_referee_authenticator_and_admin_token_file(field: ApiField, tmp_path: Path) -> None:
    import asyncio  # noqa: PLC0415

    arena = field.arena
    auth = ArenaAuthenticator(arena)
    assert asyncio.run(auth.authenticate(field.admin_token)) == "admin"
    assert asyncio.run(auth.authenticate("tct_" + "y" * 43)) is None

    path = tmp_path / "data" / "admin.token"
    # The arena of `field` is bootstrapped already: no token to show, none in the file.
    assert bootstrap_admin_token(arena, path).token is None
    recovered = bootstrap_admin_token(arena, path, recover=True)
    assert recovered.created and recovered.token is not None
    assert arena.users.authenticate(recovered.token).admin
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert path.read_text().strip() == recovered.token
    again = bootstrap_admin_token(arena, path, recover=True)
    assert (again.token, again.created) == (recovered.token, False)  # the file still works

    field.arena.redis.flushall()
    fresh = bootstrap_admin_token(Arena(field.arena.redis), path)
    assert fresh.created and fresh.token != recovered.token
    assert path.read_text().strip() == fresh.token


def test_the_referee_on_the_same_port_knows_arena_tokens(field: ApiField,
                                                         running: ServerThread) -> None:
    from tacocat.engine.bots import GreedyBot  # noqa: PLC0415
    from tacocat.sdk import RefereeError, connect  # noqa: PLC0415

    arena = field.arena
    arena.users.create(field.admin, "alice")
    token = arena.users.create_token(field.admin, "alice")
    results = connect(GreedyBot(), running.address, token, games=2, opponent="house:random",
                      name="live")
    assert len(results) == 2
    assert all("alice/live" in record.players for record in running.server.records.records())
    with pytest.raises(RefereeError) as refused:
        connect(GreedyBot(), running.address, "tct_" + "z" * 43, games=2,
                opponent="house:random")
    assert refused.value.code == "UNAUTHENTICATED"


def test_registration_is_off_by_default_and_open_on_request(redis: redis_py.Redis) -> None:
    closed = Arena(redis)
    with serve_in_thread(closed) as server, ArenaClient(server.address, timeout=10.0) as anon:
        with pytest.raises(InvalidRequestError, match="does not take registrations") as no:
            anon.register("mallory")
        assert no.value.status == "FAILED_PRECONDITION"
        assert "--open-registration" in str(no.value)
    assert redis.exists(closed.keys.user("mallory")) == 0  # nothing stored

    # Open: anyone makes a user and its first token, without an admin; two per IP here.
    limited = Arena(redis, rate_limits=RateLimits(submissions=None,
                                                  registrations=RateLimit(2, 1 / 3600)))
    with serve_in_thread(limited, open_registration=True) as server, \
            ArenaClient(server.address, timeout=10.0) as anon:
        made = anon.register("erin", label="laptop")
        assert made.token.startswith("tct_") and made.info.user == "erin"
        with ArenaClient(server.address, made.token, timeout=10.0) as erin:
            me = erin.whoami()
            assert me.name == "erin" and not me.admin
            assert [t.label for t in erin.list_tokens()] == ["laptop"]
            erin.submit_bytes("bot.py", b"# erin's bot\n", "first")  # a real user
        with pytest.raises(AlreadyExistsError):
            anon.register("erin")  # the name is taken (this costs a registration too)
        with pytest.raises(RateLimitedError, match=r"too many registrations from 127\.0\.0\.1"):
            anon.register("frank")
    assert redis.exists(limited.keys.user("frank")) == 0
