"""Ladders and how far one got."""

from __future__ import annotations

from dataclasses import dataclass

from tacocat.engine import Ruleset


@dataclass(frozen=True)
class Ladder:
    """A competition between bots under one ruleset.

    Every pairing of the ladder's playing versions meets in matches of ``games_per_match``
    games (even: duplicate pairs), round after round, until it has played
    ``games_per_pairing`` games (a multiple of ``games_per_match``). A bot gets
    ``decision_seconds`` of wall-clock time per decision. A match plays ``batch`` of its
    games at once (0: as many as the worker's default; the records are the same either way).
    """

    name: str
    ruleset: Ruleset
    games_per_pairing: int
    games_per_match: int
    decision_seconds: float
    created_at: float
    created_by: str
    batch: int = 0

    @property
    def rounds(self) -> int:
        """Matches each pairing plays: ``games_per_pairing // games_per_match``."""
        return self.games_per_pairing // self.games_per_match


@dataclass(frozen=True)
class LadderStatus:
    """How far a ladder got. ``games_toward_target`` counts each playing pairing's games up
    to its target, so ``games_toward_target == games_target`` means the round robin is done
    for the versions that play now."""

    ladder: str
    version: int
    entries: int
    playing: int
    rounds: int
    rounds_completed: int
    matches_scheduled: int
    matches_recorded: int
    matches_pending: int
    matches_cancelled: int
    games_played: int
    games_target: int
    games_toward_target: int
    matches_aborted: int = 0
    """Matches given up after failing too often (``MatchStatus.ABORTED``): not rated, not
    played again; the ladder's schedule moved on without them."""
    games_aborted: int = 0
    """Their games: counted toward the target (nothing will play them), never rated."""

    @property
    def waiting_for_opponents(self) -> bool:
        """Fewer than two versions play: nothing can be scheduled, nothing is rated until
        another bot joins (or a pending version passes its smoke game)."""
        return self.playing < 2

    @property
    def complete(self) -> bool:
        """The round robin of the versions that play now is done."""
        # A ladder of one bot has reached its (empty) target but has not played anything.
        return (not self.waiting_for_opponents and self.matches_pending == 0
                and self.games_toward_target + self.games_aborted >= self.games_target)
