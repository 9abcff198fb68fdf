"""``arena.users``: users and their API tokens, with who may manage them.

- creating and listing users takes an admin;
- a user manages its own tokens; another user's take an admin;
- self-service registration is rate limited per client address (whether it is open is the
  server's decision, not checked here).
"""

from __future__ import annotations

from tacocat.models import TokenInfo, User

from . import ratelimit, users
from ._area import Area, area, require_admin
from ._redis import Clock, Redis
from .errors import PermissionDenied
from .ids import check_name
from .keys import Keys
from .ratelimit import RateLimits


@area
class UserArea(Area):
    """``arena.users``. Every ``actor`` is a :class:`User` from :meth:`authenticate`."""

    def __init__(self, redis: Redis, keys: Keys, clock: Clock, *,
                 rate_limits: RateLimits) -> None:
        super().__init__(redis, keys, clock)
        self.rate_limits = rate_limits

    def bootstrap_admin(self, name: str = users.ADMIN) -> str | None:
        """Create the admin and its token on first start: returns the plaintext token once
        (print it), None ever after."""
        return users.bootstrap_admin(self.redis, self.keys, name=name, clock=self.clock)

    def authenticate(self, token: str | None) -> User:
        """The user holding ``token``; :class:`Unauthenticated` for none, a malformed, an
        unknown or a revoked one."""
        return users.authenticate(self.redis, self.keys, token)

    def create(self, actor: User, name: str, *, admin: bool = False) -> User:
        """Create a user (admins only)."""
        require_admin(actor, "create users")
        return users.create_user(self.redis, self.keys, name, admin=admin, clock=self.clock)

    def register(self, name: str, *, client: str, label: str = "") -> tuple[User, str]:
        """Self-service: a new non-admin user and its first token (plaintext, shown once),
        for the anonymous ``client`` (``ip:ADDRESS``: the rate limit's subject). Whether
        registration is open is the server's decision, not checked here."""
        limit = self.rate_limits.registrations
        if limit is not None:
            self._take_rate(ratelimit.REGISTER, client, limit,
                            what=f"registrations from {client.removeprefix('ip:')}")
        user = users.create_user(self.redis, self.keys, name, admin=False, clock=self.clock)
        token = users.issue_token(self.redis, self.keys, user.name, label=label,
                                  clock=self.clock)
        return user, token

    def get(self, name: str) -> User:
        return users.get_user(self.redis, self.keys, name)

    def all(self, actor: User) -> list[User]:
        """All users, by name (admins only)."""
        require_admin(actor, "list users")
        return users.list_users(self.redis, self.keys)

    def create_token(self, actor: User, user: str | None = None, *, label: str = "") -> str:
        """A new token for ``user`` (default: the actor); returns the plaintext, shown once.
        A token for another user takes an admin."""
        target = _self_or_admin(actor, user, "create tokens")
        return users.issue_token(self.redis, self.keys, target, label=label, clock=self.clock)

    def tokens(self, actor: User, user: str | None = None) -> list[TokenInfo]:
        """The tokens of ``user`` (default: the actor)."""
        target = _self_or_admin(actor, user, "list tokens")
        return users.list_tokens(self.redis, self.keys, target)

    def revoke_token(self, actor: User, token_id: str, user: str | None = None) -> None:
        target = _self_or_admin(actor, user, "revoke tokens")
        users.revoke_token(self.redis, self.keys, target, token_id)


def _self_or_admin(actor: User, user: str | None, what: str) -> str:
    target = actor.name if user is None else check_name("user", user)
    if target != actor.name and not actor.admin:
        raise PermissionDenied(
            f"{actor.name!r} may {what} only for itself; for {target!r} ask an admin"
        )
    return target
