"""House bots: always available as ``house:NAME``."""

from __future__ import annotations

from collections.abc import Callable

from .._bot import Bot
from ._greedy import GreedyBot
from ._random import RandomBot
from ._strong import StrongBot

HOUSE_BOTS: dict[str, Callable[[], Bot]] = {
    "random": RandomBot,
    "greedy": GreedyBot,
    "strong": StrongBot,
}

__all__ = ["HOUSE_BOTS", "GreedyBot", "RandomBot", "StrongBot", "house_bot"]


def house_bot(name: str) -> Bot:
    """A fresh house bot by name; the error lists the names there are."""
    try:
        factory = HOUSE_BOTS[name]
    except KeyError:
        raise KeyError(f"no house bot {name!r}; house bots are "
                       f"{', '.join(sorted(HOUSE_BOTS))}") from None
    return factory()
