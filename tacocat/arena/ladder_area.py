"""``arena.ladders``: ladders, the bots entered in them, and their standings.

- creating a ladder takes an admin;
- a bot's owner, or an admin, may enter it in a ladder.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tacocat.engine import Ruleset
from tacocat.models import Entry, Ladder, LadderStatus, Leaderboard, User

from . import bots, ladders, recording, standings
from ._area import Area, area, bot_ref, require_admin
from .errors import PermissionDenied
from .ids import bot_id, check_name, split_bot_id
from .recording import EloReplay, LogEntry


@area
class LadderArea(Area):
    """``arena.ladders``. Every ``actor``/``user`` is a :class:`User` from
    ``arena.users.authenticate``."""

    def create(
        self, actor: User, name: str, *, ruleset: Ruleset | Mapping[str, Any] | None = None,
        games_per_pairing: int = ladders.DEFAULT_GAMES_PER_PAIRING,
        games_per_match: int = ladders.DEFAULT_GAMES_PER_MATCH,
        decision_seconds: float = ladders.DEFAULT_DECISION_SECONDS, batch: int = 0,
    ) -> Ladder:
        """Create a ladder (admins only). ``ruleset``: default the standard rules; ``batch``
        games of a match at once (0: the workers' default)."""
        require_admin(actor, "create ladders")
        return ladders.create_ladder(
            self.redis, self.keys, name, created_by=actor.name, ruleset=ruleset,
            games_per_pairing=games_per_pairing, games_per_match=games_per_match,
            decision_seconds=decision_seconds, batch=batch, clock=self.clock,
        )

    def get(self, name: str) -> Ladder:
        return ladders.get_ladder(self.redis, self.keys, check_name("ladder", name))

    def all(self) -> list[Ladder]:
        """All ladders, by name."""
        return ladders.list_ladders(self.redis, self.keys)

    def join(self, user: User, bot: str, ladder: str) -> Entry:
        """Enter a bot in a ladder (its owner, or an admin). Its newest active version
        plays, now or once one is active."""
        owner, name = bot_ref(user, bot)
        found = bots.get_bot(self.redis, self.keys, bot_id(owner, name))
        if found.owner != user.name and not user.admin:
            raise PermissionDenied(
                f"bot {found.id!r} belongs to {found.owner!r}; only its owner (or an admin) "
                "may enter it in a ladder"
            )
        check_name("ladder", ladder)
        entry = ladders.join_ladder(self.redis, self.keys, ladder, found.id, clock=self.clock)
        self._changed(ladder, "versions")
        return entry

    def of_bot(self, bot: str) -> list[str]:
        """The ladders ``owner/name`` joined, by name."""
        split_bot_id(bot)
        return ladders.bot_ladders(self.redis, self.keys, bot)

    def entries(self, ladder: str) -> list[Entry]:
        ladders.get_ladder(self.redis, self.keys, check_name("ladder", ladder))
        return ladders.entries(self.redis, self.keys, ladder)

    def leaderboard(self, ladder: str) -> Leaderboard:
        """Standings: rating ± 95% interval, live Elo, W/T/L, forfeits, crosstable."""
        check_name("ladder", ladder)
        return standings.leaderboard(self.redis, self.keys, ladder, clock=self.clock)

    def status(self, ladder: str) -> LadderStatus:
        return standings.ladder_status(self.redis, self.keys, check_name("ladder", ladder))

    def recent_matches(self, ladder: str, count: int = 20) -> list[LogEntry]:
        ladders.get_ladder(self.redis, self.keys, check_name("ladder", ladder))
        return standings.recent_matches(self.redis, self.keys, ladder, count)

    def recompute_ratings(self, ladder: str, *, store: bool = False) -> EloReplay:
        """Replay the results log into live Elo and compare (``store``: repair)."""
        ladders.get_ladder(self.redis, self.keys, ladder)
        return recording.recompute_ratings(self.redis, self.keys, ladder, store=store)

    def events_channel(self, ladder: str) -> str:
        """The pub/sub channel of the ladder's change events (JSON messages, see
        :mod:`tacocat.arena.standings`)."""
        return self.keys.events(check_name("ladder", ladder))
