"""The one small interface every bot implements, and the bot-side driver that calls it.

The same :class:`Bot` runs unchanged in the local runner, inside the arena's sandbox host and
over the live gRPC client: each transport only turns its messages into :class:`Observation`
objects and hands them to a :class:`~tacocat.engine.BotDriver` (``_driver.py``, compiled with
the engine; :class:`Bot` itself stays Python so that bot authors can subclass it).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import ClassVar, Final

from ._cards import best_defence, legal_attacks, lowest_response
from ._ruleset import Ruleset
from ._types import Observation, Outcome, Round

DEFAULT_TIME_LIMIT: Final = 1.0
"""Seconds a bot has for each decision unless a match says otherwise: the one default of
local play (``tacocat play``), ladders, trials, smoke games and the live referee. One second
(the arena's since its first ladder, and not the old local 2 s): a bot tested locally meets
the bound it will be held to, and a game's ~50 decisions stay well under a minute even for
a bot that uses all of it."""


class Bot:
    """Subclass this and override the decisions you care about.

    Every method gets the seat's :class:`Observation`. The defaults are legal but naive:
    keep every card, duel with the middle card, attack with the lowest single card, defend
    when possible and otherwise give up the lowest cards.
    """

    name: ClassVar[str] = "bot"

    def on_game_start(self, seat: int, ruleset: Ruleset, opponent: str) -> None:
        """A game begins; this bot sits in ``seat`` against ``opponent``."""

    def replace(self, obs: Observation) -> Sequence[int]:
        """Cards to discard and redraw, at most ``obs.replace_cap``."""
        return ()

    def duel(self, obs: Observation) -> int:
        """One card for the duel; the higher card attacks first."""
        return obs.hand[len(obs.hand) // 2]

    def attack(self, obs: Observation) -> Sequence[int]:
        """A single card, a set or a sequence, never the whole hand."""
        return legal_attacks(obs.hand)[0]

    def defend(self, obs: Observation) -> Sequence[int]:
        """One card per card of ``obs.attack``, in its order."""
        return best_defence(obs.hand, obs.attack) or lowest_response(obs.hand, obs.attack)

    def on_round_end(self, round: Round) -> None:
        """A round finished (public record: no deck)."""

    def on_game_end(self, outcome: Outcome, seat: int) -> None:
        """The game ended; ``seat`` is the seat this bot played."""


BotFactory = Callable[[], Bot]
"""Makes the bot of one game: every game gets its own, so games can be played at once."""


def bot_factory(bot: Bot | BotFactory) -> BotFactory:
    """A factory of fresh bots for each game.

    A :class:`Bot` subclass or any callable is used as it is; a bot object is copied
    (``copy.deepcopy``) for every game, so each game starts from the state it had when it
    was handed over, whatever the games before did to it.
    """
    if isinstance(bot, Bot):
        prototype = bot
        return lambda: copy.deepcopy(prototype)
    return bot


def describe_exception(exc: BaseException) -> str:
    """A bot's exception in one line, with where it was raised: for forfeit details."""
    import traceback  # noqa: PLC0415 - only a failing bot needs it; every host starts faster

    frames = traceback.extract_tb(exc.__traceback__) if exc.__traceback__ else []
    where = f" at {frames[-1].filename.rsplit('/', 1)[-1]}:{frames[-1].lineno}" if frames else ""
    return f"{type(exc).__name__}: {exc}{where}"
