"""Local play: a bot against a house bot (or any bot) in this process, no server needed."""

from __future__ import annotations

from collections.abc import Callable

from tacocat.engine import STANDARD, Bot, Ruleset, duplicate_pairs
from tacocat.referee import play_in_process

from ._game_result import GameResult
from .loader import load_bot_class, name_of


def play_local(bot: Bot | Callable[[], Bot],
               opponent: str | Bot | Callable[[], Bot] = "house:greedy", games: int = 2,
               seed: str | int = "local", *, rules: Ruleset = STANDARD,
               name: str | None = None, batch: int = 1,
               time_limit: float | None = None) -> list[GameResult]:
    """Play ``games`` games against ``opponent`` and return them from ``bot``'s seat.

    ``opponent`` is ``house:NAME``, ``path/to/bot.py[:Class]``, a :class:`Bot` or a bot
    class. Every game gets its own bot object: a copy of the one passed (or a new instance
    of the class), so a bot keeps per-game memory in its attributes. Games come in duplicate
    pairs (game ``2k`` puts ``bot`` in seat 0, game ``2k + 1`` in seat 1, both with the seed
    ``"{seed}/{k}"``), exactly as the live referee plays a house match with the same seed,
    so the same bots give the same games here and there; ``batch`` games are played at once
    (the same games, whatever the batch). ``time_limit`` forfeits a decision that took
    longer, as the arena would. Each result carries its replay record; ``name`` is this
    bot's name in it (default the bot's ``name``).
    """
    other = load_bot_class(opponent) if isinstance(opponent, str) else opponent
    names = (name or name_of(bot), opponent if isinstance(opponent, str) else name_of(other))
    played = play_in_process(bot, other, duplicate_pairs(games, seed), names=names, rules=rules,
                             batch=batch, time_limit=time_limit)
    results = []
    for game in played.games:
        record = game.record
        public = tuple(r._replace(deck=None) for r in record.rounds)
        results.append(GameResult(game.index, game.a_seat, names[1], record.result, public,
                                  record))
    return results

