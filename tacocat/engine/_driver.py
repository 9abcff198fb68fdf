"""The bot-side driver: turns observations into :class:`~tacocat.engine.Bot` method calls.

Apart from :mod:`._bot` because it is on the hot path of every decision and is compiled with
the engine (``_compiled.py``), while :class:`Bot` must stay a Python class that bot authors
can subclass (a compiled class cannot have interpreted subclasses).
"""

from __future__ import annotations

from collections.abc import Sequence

from ._bot import Bot
from ._ruleset import Ruleset
from ._types import Decision, Observation, Outcome, Round

# Module constants: Enum attribute lookups cost more than a global on this hot path.
_REPLACE, _DUEL, _ATTACK, _DEFEND = (Decision.REPLACE, Decision.DUEL, Decision.ATTACK,
                                      Decision.DEFEND)


class BotDriver:
    """Bot side of a game: turns observations into method calls and fires the hooks.

    Round ends are learnt from ``obs.history`` growing, so no transport needs a message of its
    own for them: the news rides on the next request, or on the game result.
    """

    __slots__ = ("_history", "_rounds_seen", "bot", "seat")

    def __init__(self, bot: Bot) -> None:
        self.bot = bot
        self.seat = 0
        self._rounds_seen = 0
        self._history: Sequence[Round] = ()

    def start(self, seat: int, ruleset: Ruleset, opponent: str) -> None:
        self.seat = seat
        self._rounds_seen = 0
        self._history = ()
        self.bot.on_game_start(seat, ruleset, opponent)

    def decide(self, obs: Observation) -> tuple[int, ...]:
        # The engine shares one history tuple until a round ends, so an identity test
        # usually settles "anything new?" (other transports build a new one every time).
        if obs.history is not self._history:
            self._catch_up(obs.history)
        decision = obs.decision
        bot = self.bot
        # Most frequent first: a game has about 24 attacks, 24 defences, 13 duels, 12 replaces.
        if decision is _ATTACK:
            return tuple(bot.attack(obs))
        if decision is _DEFEND:
            return tuple(bot.defend(obs))
        if decision is _DUEL:
            return (bot.duel(obs),)
        if decision is _REPLACE:
            return tuple(bot.replace(obs))
        raise ValueError(f"seat {obs.seat} was asked nothing (decision {decision!r})")

    def finish(self, outcome: Outcome, rounds: Sequence[Round]) -> None:
        self._catch_up(rounds)
        self.bot.on_game_end(outcome, self.seat)

    def _catch_up(self, rounds: Sequence[Round]) -> None:
        self._history = rounds
        while self._rounds_seen < len(rounds):
            self.bot.on_round_end(rounds[self._rounds_seen])
            self._rounds_seen += 1
