"""``arena.live``: matches being played now, for people watching (see
:mod:`tacocat.arena.live`). Writes are the worker's and take no user."""

from __future__ import annotations

from collections.abc import Sequence

from tacocat.engine import GameRecord
from tacocat.models import Match

from . import live
from ._area import Area, area
from .ids import check_name
from .live import LiveMatch
from .matches import get_match


@area
class LiveArea(Area):
    """``arena.live``."""

    def start(self, match: Match, worker: str = "") -> None:
        """``match`` starts playing (the worker says so, for people watching)."""
        live.start_live(self.redis, self.keys, match.ladder, match.id, a=match.a, b=match.b,
                        total=match.games, worker=worker, clock=self.clock)

    def add_game(self, match: Match, record: GameRecord) -> None:
        live.add_live_game(self.redis, self.keys, match.ladder, match.id, record)

    def add_games(self, match: Match, lines: Sequence[str]) -> None:
        """Finished games of ``match``, as :meth:`GameRecord.dumps` lines, for watchers."""
        live.add_live_games(self.redis, self.keys, match.ladder, match.id, lines)

    def end(self, match: Match) -> None:
        live.end_live(self.redis, self.keys, match.ladder, match.id)

    def matches(self, ladder: str) -> list[LiveMatch]:
        """The ladder's matches being played now, oldest first."""
        return live.live_matches(self.redis, self.keys, check_name("ladder", ladder),
                                 clock=self.clock)

    def match(self, match_id: str) -> tuple[Match, LiveMatch | None]:
        """A match, and how far it got if it is being played now."""
        match = get_match(self.redis, self.keys, match_id)
        return match, live.live_match(self.redis, self.keys, match.ladder, match.id)

    def games(self, match: Match, start: int = 0) -> list[GameRecord]:
        """The finished games of a match being played, from game ``start`` (0-based) on."""
        return live.live_games(self.redis, self.keys, match.ladder, match.id, start)
