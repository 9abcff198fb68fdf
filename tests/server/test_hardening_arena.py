"""Arena API hardening: every call that changes something needs a token, tokens are stored
hashed and compared in constant time, owners and admins are checked, submissions are
rate-limited per user, and every refusal has the right gRPC status and a message a person
can act on. Real gRPC over loopback, a real Redis."""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import grpc
import pytest
import redis as redis_py

import tacocat.arena.users as users_module
from tacocat.arena import Arena, RateLimit, RateLimits, Unauthenticated
from tacocat.arena.users import MAX_TOKENS_PER_USER, issue_token
from tacocat.protocol.proto.v1 import arena_pb2 as apb
from tacocat.sdk import ArenaApiError, ArenaClient
from tacocat.sdk.arena import ARENA_SERVICE, RateLimitedError
from tests.arena.helpers import bot_source, snapshot

from .arena_server import ServerThread, serve_in_thread

READS = {"GetServerInfo", "ListBots", "ListVersions", "ListLadders", "GetLeaderboard",
         "WatchLeaderboard", "GetLadderStatus", "ListMatches", "GetMatch", "GetMatchReplays",
         "GetTrial", "WatchTrial", "ListTrials"}
"""The calls that may be anonymous. Every other one (and any added later) needs a token."""
SELF_SERVICE = {"RegisterUser"}
"""Anonymous by design, and refused unless the server opens registration (tested in
tests/server/test_arena_api.py): it makes a user, never an admin."""


@pytest.fixture(autouse=True)
def _no_ambient_token(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("TACOCAT_TOKEN", "TACOCAT_TOKEN_FILE", "TACOCAT_ADDRESS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)


@pytest.fixture(scope="module")
def running(redis_url: str) -> Iterator[ServerThread]:
    # Submissions: 3 at once, then one an hour (so the test sees the refusal at once).
    arena = Arena(redis_py.Redis.from_url(redis_url),
                  rate_limits=RateLimits(submissions=RateLimit(3, 1 / 3600)))
    with serve_in_thread(arena) as server:
        yield server


class World:
    def __init__(self, redis: redis_py.Redis, address: str) -> None:
        self.redis = redis
        self.arena = Arena(redis)
        token = self.arena.users.bootstrap_admin()
        assert token is not None
        self.admin_token = token
        self.address = address
        self.clients: list[ArenaClient] = []
        admin = self.arena.users.authenticate(token)
        self.tokens = {"admin": token}
        for name in ("alice", "bob"):
            self.arena.users.create(admin, name)
            self.tokens[name] = self.arena.users.create_token(admin, name, label="test")

    def client(self, who: str | None = None, token: str | None = None) -> ArenaClient:
        client = ArenaClient(self.address, token or (self.tokens[who] if who else None),
                             timeout=10)
        self.clients.append(client)
        return client

    def state(self) -> dict[object, object]:
        """Everything stored, but the rate-limit buckets (which a refused call may use)."""
        return {k: v for k, v in snapshot(self.redis).items()
                if b":ratelimit:" not in k}  # type: ignore[operator]


@pytest.fixture
def world(redis: redis_py.Redis, running: ServerThread) -> Iterator[World]:
    made = World(redis, running.address)
    yield made
    for client in made.clients:
        client.close()


def refused(call: Callable[[], object], status: str, *words: str) -> ArenaApiError:
    """``call`` fails with ``status`` and a message containing each of ``words``."""
    with pytest.raises(ArenaApiError) as caught:
        call()
    error = caught.value
    assert error.status == status, error
    for word in words:
        assert word in error.message, (word, error.message)
    return error


# ------------------------------------------------------------------ tokens


def _raw_call(address: str, method: str, token: str | None) -> grpc.RpcError:
    request_type = getattr(apb, apb.DESCRIPTOR.services_by_name["Arena"]
                           .methods_by_name[method].input_type.name)
    metadata = (("authorization", f"Bearer {token}"),) if token is not None else ()
    with grpc.insecure_channel(address) as channel:
        call = channel.unary_unary(f"/{ARENA_SERVICE}/{method}",
                                   request_serializer=lambda m: m.SerializeToString(),
                                   response_deserializer=lambda b: b)
        with pytest.raises(grpc.RpcError) as caught:
            call(request_type(), metadata=metadata, timeout=10)
    return caught.value


def test_every_call_that_is_not_a_read_needs_a_valid_token(world: World) -> None:
    methods = apb.DESCRIPTOR.services_by_name["Arena"].methods
    guarded = [m.name for m in methods if m.name not in READS | SELF_SERVICE]
    assert set(guarded) == {"WhoAmI", "CreateUser", "CreateToken", "ListTokens",
                            "RevokeToken", "SubmitBot", "CreateLadder", "JoinLadder",
                            "GetMatchLogs", "GetBuildLog", "CreateTrial", "CancelTrial"}
    assert all(not m.server_streaming for m in methods if m.name in guarded)
    before = world.state()
    for method in guarded:
        for token, words in [
            (None, "this call needs a token: send `authorization: Bearer TOKEN`"),
            ("", "this call needs a token"),
            ("tct_" + "x" * 43, "unknown or revoked token; ask an admin for a new one"),
            ("hunter2", "malformed token: arena tokens start with 'tct_' and are 47"),
        ]:
            error = _raw_call(world.address, method, token)
            assert error.code() is grpc.StatusCode.UNAUTHENTICATED, (method, token)
            assert words in (error.details() or ""), (method, token, error.details())
    assert world.state() == before  # nothing stored for any of them


def test_tokens_are_stored_hashed_and_checked_in_constant_time(
        world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    alice = world.client("alice")
    spare = alice.create_token(label="spare").token
    everything = repr(snapshot(world.redis)).encode()
    for token in (world.admin_token, world.tokens["alice"], spare):
        assert token.encode() not in everything
        assert hashlib.sha256(token.encode()).hexdigest().encode() in everything

    compared: list[tuple[str, str]] = []
    real = hmac.compare_digest

    def spy(a: str, b: str) -> bool:
        compared.append((a, b))
        return real(a, b)

    monkeypatch.setattr(users_module.hmac, "compare_digest", spy)
    assert world.client(token=spare).whoami().name == "alice"
    assert compared == [(hashlib.sha256(spare.encode()).hexdigest(),) * 2]


def test_tokens_per_user_and_labels_are_bounded(world: World) -> None:
    alice = world.client("alice")
    refused(lambda: alice.create_token(label="line\nbreak"), "INVALID_ARGUMENT",
            "token label", "printable")
    refused(lambda: alice.create_token(label="x" * 101), "INVALID_ARGUMENT",
            "at most 100 printable characters", "(103 characters)")
    for _ in range(MAX_TOKENS_PER_USER - len(alice.list_tokens())):
        issue_token(world.redis, world.arena.keys, "alice")
    before = world.state()
    refused(lambda: alice.create_token(label="one more"), "FAILED_PRECONDITION",
            "already holds 100 tokens", "revoke unused ones first")
    assert world.state() == before


# ------------------------------------------------------------------ owners and admins


def test_refusals_say_what_to_do(world: World) -> None:
    admin, alice, bob = world.client("admin"), world.client("alice"), world.client("bob")
    admin.create_ladder("main", games_per_pairing=4, games_per_match=2)
    alice.submit_bytes("bot.py", bot_source("alice"), "tacobot")
    spare = alice.create_token(label="spare")
    before = world.state()
    cases: list[tuple[Callable[[], object], str, tuple[str, ...]]] = [
        # Owners: only the owner submits; the owner or an admin enters a bot in a ladder.
        (lambda: bob.submit_bytes("bot.py", bot_source("bob"), "alice/tacobot"),
         "PERMISSION_DENIED", ("belongs to 'alice'; only its owner may submit versions",
                               "Submit under your own name, e.g. bob/tacobot")),
        (lambda: bob.join("main", "alice/tacobot"), "PERMISSION_DENIED",
         ("only its owner (or an admin) may enter it in a ladder",)),
        # Admins: users, ladders, other users' tokens.
        (lambda: alice.create_ladder("mine"), "PERMISSION_DENIED",
         ("only admins may create ladders; 'alice' is not an admin",)),
        (lambda: alice.create_user("carol"), "PERMISSION_DENIED", ("only admins may create",)),
        (lambda: bob.create_token("alice"), "PERMISSION_DENIED",
         ("'bob' may create tokens only for itself; for 'alice' ask an admin",)),
        (lambda: bob.list_tokens("alice"), "PERMISSION_DENIED", ("list tokens only for",)),
        (lambda: bob.revoke_token(spare.info.id, "alice"), "PERMISSION_DENIED",
         ("revoke tokens only for",)),
        # Unknown things are named, with where to look.
        (lambda: alice.join("nope", "tacobot"), "NOT_FOUND",
         ("no ladder 'nope'; `tacocat ladder list` shows the ladders there are",)),
        (lambda: alice.revoke_token("0123456789abcdef"), "NOT_FOUND",
         ("no token with id '0123456789abcdef'; `tacocat token list` shows the ids",)),
        (lambda: alice.list_versions("alice/nothing"), "NOT_FOUND", ("no bot 'alice/nothing'",)),
        # Malformed input says the rule.
        (lambda: admin.create_ladder("Main Ladder"), "INVALID_ARGUMENT",
         ("ladder name 'Main Ladder' is not allowed: use 1-40 lowercase letters",)),
        (lambda: admin.create_user("a" * 5000), "INVALID_ARGUMENT",
         ("is not allowed", "(5002 characters)")),
        (lambda: alice.submit_bytes("bot.py", b"def (:\n", "broken"), "INVALID_ARGUMENT",
         ("bot.py, line 1:", "it must be valid Python")),
        (lambda: admin.create_ladder("main"), "ALREADY_EXISTS",
         ("ladder 'main' already exists; pick another name",)),
    ]
    for call, status, words in cases:
        error = refused(call, status, *words)
        assert len(error.message) <= 1000
    assert world.state() == before  # no refusal stored anything


def test_submissions_are_rate_limited_per_user(world: World) -> None:
    alice, bob, admin = world.client("alice"), world.client("bob"), world.client("admin")
    for n in range(3):
        alice.submit_bytes("bot.py", bot_source(f"alice {n}"), "tacobot")
    before = world.state()
    error = refused(lambda: alice.submit_bytes("bot.py", bot_source("alice 3"), "tacobot"),
                    "RESOURCE_EXHAUSTED", "too many submissions by 'alice': the limit is 3 at "
                    "once, then 1 per hour; retry in ")
    assert isinstance(error, RateLimitedError)
    assert error.retry_after is not None and 3500 < error.retry_after <= 3600
    assert re.search(r"retry in (59 min \d+ s|60 min|1 h)$", error.message), error.message
    assert world.state() == before  # the refused upload was not stored
    assert len(alice.list_versions("tacobot")) == 3
    # Each user has a bucket of its own; admins have none.
    bob.submit_bytes("bot.py", bot_source("bob"), "tacobot")
    for n in range(5):
        admin.submit_bytes("bot.py", bot_source(f"admin {n}"), "house")


# ------------------------------------------------------------------ malformed input


def test_undecodable_bytes_answer_invalid_argument_without_a_traceback(
        world: World, caplog: pytest.LogCaptureFixture) -> None:
    methods = apb.DESCRIPTOR.services_by_name["Arena"].methods
    before = world.state()
    with caplog.at_level(logging.DEBUG), grpc.insecure_channel(world.address) as channel:
        for method in methods:
            raw = b"\xff\xff\xff\xff"  # a field number 0 of wire type 7: never a message
            metadata = (("authorization", f"Bearer {world.admin_token}"),)
            if method.server_streaming:
                call: Callable[..., object] = channel.unary_stream(
                    f"/{ARENA_SERVICE}/{method.name}")
                with pytest.raises(grpc.RpcError) as caught:
                    list(call(raw, metadata=metadata, timeout=10))  # type: ignore[call-overload]
            else:
                call = channel.unary_unary(f"/{ARENA_SERVICE}/{method.name}")
                with pytest.raises(grpc.RpcError) as caught:
                    call(raw, metadata=metadata, timeout=10)
            error = caught.value
            assert error.code() is grpc.StatusCode.INVALID_ARGUMENT, (method.name, error)
            assert f"not a valid {method.input_type.full_name} message" in (
                error.details() or ""), (method.name, error.details())
    logged = [r for r in caplog.records if r.exc_info or "Traceback" in r.getMessage()
              or "deserializ" in r.getMessage()]
    assert not logged, [r.getMessage() for r in logged]
    assert world.state() == before


def test_a_token_is_matched_exactly_never_trimmed(world: World) -> None:
    words = "leading or trailing whitespace; tokens are matched exactly"
    for token in (world.tokens["alice"] + " ", " " + world.tokens["alice"]):
        error = _raw_call(world.address, "WhoAmI", token)
        assert error.code() is grpc.StatusCode.UNAUTHENTICATED, repr(token)
        assert words in (error.details() or ""), (repr(token), error.details())
    # gRPC refuses a newline in metadata before it leaves the client; the facade too.
    with pytest.raises(Unauthenticated, match=words):
        world.arena.users.authenticate(world.tokens["alice"] + "\n")
    assert world.client("alice").whoami().name == "alice"


@pytest.mark.parametrize(("settings", "words"), [
    ({"games_per_pairing": 4_294_967_294, "games_per_match": 2}, "at most 100,000"),
    ({"decision_seconds": 1e-9}, "from 0.01 to 60 seconds"),
    ({"decision_seconds": 61.0}, "from 0.01 to 60 seconds"),
])
def test_ladder_settings_have_sane_bounds(world: World, settings: dict[str, float],
                                          words: str) -> None:
    before = world.state()
    refused(lambda: world.client("admin").create_ladder("bounded", **settings),  # type: ignore[arg-type]
            "INVALID_ARGUMENT", words)
    assert world.state() == before
