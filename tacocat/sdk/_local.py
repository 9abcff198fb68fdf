"""Local play: a bot against a house bot (or any bot) in this process, no referee needed."""

from __future__ import annotations

from tacocat.engine import STANDARD, Bot, Round, Ruleset, play_match

from ._loader import load_bot
from ._session import GameResult


def play_local(bot: Bot, opponent: str | Bot = "house:greedy", games: int = 2,
               seed: str | int = "local", *, rules: Ruleset = STANDARD,
               name: str | None = None) -> list[GameResult]:
    """Play ``games`` games against ``opponent`` and return them from ``bot``'s seat.

    ``opponent`` is ``house:NAME``, ``path/to/bot.py[:Class]`` or a :class:`Bot`. Games come
    in duplicate pairs (game ``2k`` puts ``bot`` in seat 0, game ``2k + 1`` in seat 1, both
    with the seed ``"{seed}/{k}"``), exactly as the live referee plays a house match with the
    same seed, so the same bots give the same games here and there. Each result carries its
    replay record; ``name`` is this bot's name in it (default ``bot.name``).
    """
    other = load_bot(opponent) if isinstance(opponent, str) else opponent
    names = (name or bot.name, opponent if isinstance(opponent, str) else other.name)
    results = []
    for game in play_match(bot, other, games, seed, rules, names):
        record = game.record
        public = tuple(Round(r.space, None, r.replace, r.duels, r.tricks, r.showdown, r.winner)
                       for r in record.rounds)
        results.append(GameResult(game.index, game.a_seat, names[1], record.result, public,
                                  record))
    return results
