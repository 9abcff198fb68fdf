"""The SDK's exceptions::

    SdkError
     ├── BotLoadError    a bot file or spec cannot be turned into a Bot
     └── ...             (transport errors are added by the live client)
"""

from __future__ import annotations


class SdkError(Exception):
    """Root of every error raised by :mod:`tacocat.sdk`."""


class BotLoadError(SdkError, ValueError):
    """A bot spec (``house:NAME`` or ``path/to/bot.py[:Class]``) cannot be loaded."""
