"""One finished game as a bot author sees it: :class:`GameResult`, from the bot's seat.

Its own module because the session makes it and the errors carry it (``results``):
neither imports the other.
"""

from __future__ import annotations

from dataclasses import dataclass

from tacocat.engine import GameRecord, Outcome, Round


@dataclass(frozen=True, slots=True)
class GameResult:
    """One finished game from this bot's seat."""

    game: int
    seat: int
    opponent: str
    outcome: Outcome
    rounds: tuple[Round, ...]
    """The game's public rounds (no decks)."""
    record: GameRecord | None = None
    """The full replay record, where this side has it (local play)."""

    @property
    def won(self) -> bool:
        return self.outcome.winner == self.seat

    @property
    def lost(self) -> bool:
        return self.outcome.winner is not None and self.outcome.winner != self.seat

    @property
    def score(self) -> float:
        """1 for a win, 0.5 for a draw or an aborted game, 0 for a loss."""
        return 0.5 if self.outcome.winner is None else float(self.won)

    @property
    def forfeited(self) -> bool:
        """Whether this bot forfeited (timeout, illegal action, crash, ...)."""
        return self.outcome.offender == self.seat
