"""The bot SDK: everything a bot author needs.

Exceptions::

    SdkError
     └── BotLoadError    a bot file or spec cannot be turned into a Bot
"""

from tacocat.engine import (
    Bot,
    Decision,
    Observation,
    Outcome,
    Round,
    Ruleset,
    Trick,
    attack_kind,
    best_defence,
    legal_attacks,
    legal_defences,
    lowest_response,
)

from ._errors import BotLoadError, SdkError
from ._loader import load_bot, load_bot_file

__all__ = [
    "Bot", "BotLoadError", "Decision", "Observation", "Outcome", "Round", "Ruleset", "SdkError",
    "Trick", "attack_kind", "best_defence", "legal_attacks", "legal_defences", "load_bot",
    "load_bot_file", "lowest_response",
]
