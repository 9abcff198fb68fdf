"""Users and their API tokens.

A token is ``tct_`` followed by 43 random URL-safe characters (256 bits from
:mod:`secrets`). Only its sha256 is stored, as the key of the token's record, so a leaked
database holds no usable token; a presented token is hashed and looked up, and the stored
digest is compared with :func:`hmac.compare_digest`. The plaintext exists only in the reply
that creates it.

On the first start nobody can create users, since that takes an admin: :func:`bootstrap_admin`
creates the ``admin`` user and its first token exactly once (a Lua script guards it), and
returns the plaintext for the caller to print.

Functions here check no permissions; :class:`tacocat.arena.Arena` does. :func:`issue_token`
is for local operators who hold the Redis itself (``tacocat token create`` run on the
server, e.g. to recover a lost admin token).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from typing import Final

from tacocat.models import TokenInfo, User

from ._redis import Clock, Redis, default_clock, script, text, text_map
from .errors import (
    AlreadyExists,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    Unauthenticated,
)
from .ids import check_name, shown
from .keys import Keys

TOKEN_PREFIX: Final = "tct_"
ADMIN: Final = "admin"
_TOKEN_ID_LENGTH: Final = 16
_TOKEN_BODY_LENGTH: Final = 43  # secrets.token_urlsafe(32)

_CREATE_USER: Final = """
-- KEYS: user hash, users set. ARGV: name, admin flag, created_at.
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'name', ARGV[1], 'admin', ARGV[2], 'created_at', ARGV[3])
redis.call('SADD', KEYS[2], ARGV[1])
return 1
"""

MAX_TOKENS_PER_USER: Final = 100
"""Live tokens one user may hold: creating tokens is self-service, so it is bounded."""
MAX_LABEL_LENGTH: Final = 100

_ADD_TOKEN: Final = """
-- KEYS: token hash, user's token set, user hash. ARGV: digest, user, label, created_at,
-- most tokens per user.
if redis.call('EXISTS', KEYS[3]) == 0 then return 0 end
if redis.call('SCARD', KEYS[2]) >= tonumber(ARGV[5]) then return -1 end
redis.call('HSET', KEYS[1], 'digest', ARGV[1], 'user', ARGV[2], 'label', ARGV[3],
           'created_at', ARGV[4])
redis.call('SADD', KEYS[2], ARGV[1])
return 1
"""

_BOOTSTRAP: Final = """
-- KEYS: bootstrap marker, user hash, users set, token hash, user's token set.
-- ARGV: name, created_at, digest, label.
-- One step, so a crash cannot leave a marker without an admin token (a locked-out arena).
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
if redis.call('EXISTS', KEYS[2]) == 0 then
  redis.call('HSET', KEYS[2], 'name', ARGV[1], 'created_at', ARGV[2])
end
redis.call('HSET', KEYS[2], 'admin', '1')
redis.call('SADD', KEYS[3], ARGV[1])
redis.call('HSET', KEYS[4], 'digest', ARGV[3], 'user', ARGV[1], 'label', ARGV[4],
           'created_at', ARGV[2])
redis.call('SADD', KEYS[5], ARGV[3])
redis.call('SET', KEYS[1], ARGV[2])
return 1
"""


def new_token() -> str:
    """A fresh random token (plaintext)."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def token_digest(token: str) -> str:
    """The hex sha256 under which a token is stored."""
    return hashlib.sha256(token.encode()).hexdigest()


def bootstrap_admin(
    redis: Redis, keys: Keys, *, name: str = ADMIN, clock: Clock = default_clock
) -> str | None:
    """Create the admin user and its first token, once per database.

    Returns the token's plaintext the first time (print it: it cannot be shown again), and
    None on every later call.
    """
    check_name("user", name)
    token = new_token()
    digest = token_digest(token)
    created = script(redis, "bootstrap", _BOOTSTRAP)(
        keys=[keys.bootstrap, keys.user(name), keys.users, keys.token(digest),
              keys.user_tokens(name)],
        args=[name, repr(clock()), digest, "bootstrap"],
    )
    return token if created else None


def create_user(
    redis: Redis, keys: Keys, name: str, *, admin: bool = False, clock: Clock = default_clock
) -> User:
    """Create a user; :class:`AlreadyExists` if the name is taken."""
    check_name("user", name)
    now = clock()
    created = script(redis, "create_user", _CREATE_USER)(
        keys=[keys.user(name), keys.users], args=[name, "1" if admin else "0", repr(now)]
    )
    if not created:
        raise AlreadyExists(f"user {name!r} already exists; pick another name")
    return User(name, admin, now)


def get_user(redis: Redis, keys: Keys, name: str) -> User:
    """The user ``name``; :class:`NotFound` if there is none."""
    fields = text_map(redis.hgetall(keys.user(name)))
    if not fields:
        raise NotFound(f"no user {name!r}; an admin creates users with `tacocat user create "
                       "NAME`")
    return _user(fields)


def list_users(redis: Redis, keys: Keys) -> list[User]:
    """Every user, by name."""
    names = sorted(text(n) for n in redis.smembers(keys.users))
    pipe = redis.pipeline(transaction=False)
    for name in names:
        pipe.hgetall(keys.user(name))
    return [_user(text_map(f)) for f in pipe.execute() if f]


def issue_token(
    redis: Redis, keys: Keys, user: str, *, label: str = "", clock: Clock = default_clock
) -> str:
    """A new token for ``user`` (no permission check); returns the plaintext, shown once.

    A user holds at most :data:`MAX_TOKENS_PER_USER` tokens (:class:`FailedPrecondition`
    past that: revoke unused ones); ``label`` is at most :data:`MAX_LABEL_LENGTH` printable
    characters.
    """
    check_label(label)
    token = new_token()
    digest = token_digest(token)
    added = script(redis, "add_token", _ADD_TOKEN)(
        keys=[keys.token(digest), keys.user_tokens(user), keys.user(user)],
        args=[digest, user, label, repr(clock()), MAX_TOKENS_PER_USER],
    )
    if added == -1:
        raise FailedPrecondition(
            f"user {user!r} already holds {MAX_TOKENS_PER_USER} tokens, the most one user may "
            "have; revoke unused ones first (tacocat token list / tacocat token revoke ID)"
        )
    if not added:
        raise NotFound(f"no user {user!r} to issue a token for; create the user first")
    return token


def check_label(label: object) -> str:
    """``label`` if it is a usable token label (short, printable), else raise."""
    if not isinstance(label, str) or len(label) > MAX_LABEL_LENGTH or not (
            label.isprintable()):
        raise InvalidArgument(
            f"token label {shown(label)} is not allowed: use at most {MAX_LABEL_LENGTH} printable "
            "characters (no newlines or control characters), e.g. 'laptop'"
        )
    return label


def authenticate(redis: Redis, keys: Keys, token: str | None) -> User:
    """The user a token belongs to, or :class:`Unauthenticated` saying what is wrong."""
    if token is None or not token.strip():
        raise Unauthenticated(
            "no token given; pass your API token (tacocat token create, or the admin token "
            "printed on the server's first start)"
        )
    if token != token.strip():
        raise Unauthenticated(
            "the token has leading or trailing whitespace; tokens are matched exactly: "
            "remove the spaces or newline around it (a copy and paste may add them)"
        )
    body = token[len(TOKEN_PREFIX):]
    if not token.startswith(TOKEN_PREFIX) or len(body) != _TOKEN_BODY_LENGTH:
        raise Unauthenticated(
            f"malformed token: arena tokens start with {TOKEN_PREFIX!r} and are "
            f"{len(TOKEN_PREFIX) + _TOKEN_BODY_LENGTH} characters long; check for a "
            "truncated copy"
        )
    digest = token_digest(token)
    fields = text_map(redis.hgetall(keys.token(digest)))
    # The lookup is by digest, so this comparison is a second line of defence; it is
    # constant-time so that it never becomes the weak one.
    if not fields or not hmac.compare_digest(fields.get("digest", ""), digest):
        raise Unauthenticated(
            "unknown or revoked token; ask an admin for a new one (tacocat token create)"
        )
    user = text_map(redis.hgetall(keys.user(fields["user"])))
    if not user:
        raise Unauthenticated(f"the token's user {fields['user']!r} no longer exists")
    return _user(user)


def list_tokens(redis: Redis, keys: Keys, user: str) -> list[TokenInfo]:
    """The user's tokens (never their plaintext), oldest first."""
    digests = sorted(text(d) for d in redis.smembers(keys.user_tokens(user)))
    pipe = redis.pipeline(transaction=False)
    for digest in digests:
        pipe.hgetall(keys.token(digest))
    infos = []
    for digest, raw in zip(digests, pipe.execute(), strict=True):
        fields = text_map(raw)
        if fields:
            infos.append(TokenInfo(digest[:_TOKEN_ID_LENGTH], fields["user"],
                                   fields.get("label", ""), float(fields["created_at"])))
    return sorted(infos, key=lambda info: (info.created_at, info.id))


def revoke_token(redis: Redis, keys: Keys, user: str, token_id: str) -> None:
    """Revoke the user's token whose id (digest prefix, see :class:`TokenInfo`) is given."""
    matches = [text(d) for d in redis.smembers(keys.user_tokens(user))
               if token_id and text(d).startswith(token_id)]
    if len(matches) != 1:
        raise NotFound(
            f"user {user!r} has no token with id {shown(token_id)}; `tacocat token list` shows "
            "the ids"
        )
    pipe = redis.pipeline(transaction=True)
    pipe.delete(keys.token(matches[0]))
    pipe.srem(keys.user_tokens(user), matches[0])
    pipe.execute()


def _user(fields: dict[str, str]) -> User:
    return User(fields["name"], fields.get("admin") == "1", float(fields["created_at"]))
