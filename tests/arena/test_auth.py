"""Users, tokens and the authorization rules of the Arena facade, on a real Redis."""

from __future__ import annotations

import hashlib

import pytest
import redis as redis_py

from tacocat.arena import (
    AlreadyExists,
    Arena,
    ArenaError,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    Unauthenticated,
)
from tacocat.arena.users import TOKEN_PREFIX

from .helpers import bot_source, make_field, snapshot


def test_admin_is_bootstrapped_once_and_its_token_works(redis: redis_py.Redis) -> None:
    arena = Arena(redis)
    token = arena.users.bootstrap_admin()
    assert token is not None and token.startswith(TOKEN_PREFIX)
    assert arena.users.bootstrap_admin() is None
    assert Arena(redis).users.bootstrap_admin() is None  # a second server start
    admin = arena.users.authenticate(token)
    assert admin.name == "admin" and admin.admin


def test_tokens_are_stored_only_as_sha256(redis: redis_py.Redis) -> None:
    field = make_field(redis)
    token = field.arena.users.create_token(field.admin, label="laptop")
    dump = repr(snapshot(redis))  # every key and value; tokens and digests are printable
    assert token not in dump
    assert hashlib.sha256(token.encode()).hexdigest() in dump
    (info,) = [t for t in field.arena.users.tokens(field.admin) if t.label == "laptop"]
    assert hashlib.sha256(token.encode()).hexdigest().startswith(info.id)


@pytest.mark.parametrize("token", [None, "", "   "])
def test_no_token_is_refused(redis: redis_py.Redis, token: str | None) -> None:
    arena = make_field(redis).arena
    with pytest.raises(Unauthenticated, match="no token"):
        arena.users.authenticate(token)


@pytest.mark.parametrize("token", ["hunter2", TOKEN_PREFIX + "short", "x" * 47])
def test_malformed_token_is_refused(redis: redis_py.Redis, token: str) -> None:
    arena = make_field(redis).arena
    with pytest.raises(Unauthenticated, match="malformed"):
        arena.users.authenticate(token)


def test_wrong_and_revoked_tokens_are_refused(redis: redis_py.Redis) -> None:
    field = make_field(redis)
    arena = field.arena
    token = arena.users.create_token(field.admin)
    wrong = token[:-1] + ("A" if token[-1] != "A" else "B")
    with pytest.raises(Unauthenticated, match="unknown or revoked"):
        arena.users.authenticate(wrong)
    assert arena.users.authenticate(token).name == "admin"
    (info,) = [t for t in arena.users.tokens(field.admin)
               if hashlib.sha256(token.encode()).hexdigest().startswith(t.id)]
    arena.users.revoke_token(field.admin, info.id)
    with pytest.raises(Unauthenticated, match="unknown or revoked"):
        arena.users.authenticate(token)


def test_errors_carry_grpc_status_names() -> None:
    assert Unauthenticated.status == "UNAUTHENTICATED"
    assert PermissionDenied.status == "PERMISSION_DENIED"
    assert NotFound.status == "NOT_FOUND"
    assert AlreadyExists.status == "ALREADY_EXISTS"
    assert InvalidArgument.status == "INVALID_ARGUMENT"
    for error in (Unauthenticated, PermissionDenied, NotFound, AlreadyExists, InvalidArgument):
        assert issubclass(error, ArenaError)


def test_only_admins_create_users_and_ladders(redis: redis_py.Redis) -> None:
    field = make_field(redis)
    arena = field.arena
    alice = arena.users.create(field.admin, "alice")
    assert not alice.admin
    with pytest.raises(PermissionDenied, match="only admins may create users"):
        arena.users.create(alice, "mallory")
    with pytest.raises(PermissionDenied, match="only admins may create ladders"):
        arena.ladders.create(alice, "main")
    with pytest.raises(AlreadyExists):
        arena.users.create(field.admin, "alice")
    ladder = arena.ladders.create(field.admin, "main", games_per_pairing=40, games_per_match=10)
    assert ladder.rounds == 4 and ladder.created_by == "admin"
    with pytest.raises(AlreadyExists):
        arena.ladders.create(field.admin, "main")
    assert [lad.name for lad in arena.ladders.all()] == ["main"]


def test_tokens_for_others_need_an_admin(redis: redis_py.Redis) -> None:
    field = make_field(redis)
    arena = field.arena
    arena.users.create(field.admin, "alice")
    arena.users.create(field.admin, "bob")
    alice = arena.users.authenticate(arena.users.create_token(field.admin, "alice"))
    assert arena.users.authenticate(arena.users.create_token(alice)).name == "alice"
    with pytest.raises(PermissionDenied, match="only for itself"):
        arena.users.create_token(alice, "bob")
    with pytest.raises(NotFound):
        arena.users.create_token(field.admin, "nobody")


def test_another_users_bot_is_refused(redis: redis_py.Redis) -> None:
    field = make_field(redis)
    arena = field.arena
    field.add_bot("alice", "tacobot", "greedy")
    field.add_bot("bob", "other", "random")
    alice, bob = field.users["alice"], field.users["bob"]
    arena.ladders.create(field.admin, "main", games_per_pairing=20, games_per_match=10)
    with pytest.raises(PermissionDenied, match="belongs to 'alice'"):
        arena.bots.submit(bob, "alice/tacobot", "bot.py", bot_source("evil"))
    with pytest.raises(PermissionDenied, match="belongs to 'alice'"):
        arena.ladders.join(bob, "alice/tacobot", "main")
    # The same name in bob's own namespace is bob's own bot.
    assert arena.bots.submit(bob, "tacobot", "bot.py", bot_source("b")).id == "bob/tacobot@1"
    assert arena.ladders.join(alice, "tacobot", "main").bot == "alice/tacobot"
    assert arena.ladders.join(field.admin, "bob/other", "main").bot == "bob/other"  # admin may
    with pytest.raises(AlreadyExists, match="already joined"):
        arena.ladders.join(alice, "alice/tacobot", "main")
    with pytest.raises(NotFound, match="no ladder"):
        arena.ladders.join(alice, "tacobot", "nope")
    with pytest.raises(NotFound, match="no bot"):
        arena.ladders.join(alice, "ghost", "main")


@pytest.mark.parametrize("name", ["", "Alice", "a b", "a/b", "x" * 41, "-lead", "é"])
def test_bad_names_are_refused(redis: redis_py.Redis, name: str) -> None:
    field = make_field(redis)
    with pytest.raises(InvalidArgument, match="lowercase letters"):
        field.arena.users.create(field.admin, name)
    with pytest.raises(InvalidArgument, match="lowercase letters"):
        field.arena.ladders.create(field.admin, name)


@pytest.mark.parametrize(("pairing", "match"), [(20, 3), (20, 0), (30, 20), (0, 10), (25, 10)])
def test_bad_ladder_settings_are_refused(redis: redis_py.Redis, pairing: int, match: int) -> None:
    field = make_field(redis)
    with pytest.raises(InvalidArgument, match="games_per"):
        field.arena.ladders.create(field.admin, "main", games_per_pairing=pairing,
                                   games_per_match=match)


def test_a_decoding_client_is_refused(redis_url: str) -> None:
    client = redis_py.Redis.from_url(redis_url, decode_responses=True)
    with pytest.raises(InvalidArgument, match="decode_responses"):
        Arena(client)
    client.close()
