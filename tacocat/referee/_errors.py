"""The referee's exceptions::

    MatchRuntimeError
     ├── HostError            a bot host process could not be started or did not say Hello
     └── NoBotStartedError    neither bot of a match ever started: the machine is at fault,
                              not the bots (a worker fails the job so it is retried)

Bot faults are never exceptions: they are forfeits in the records.
"""

from __future__ import annotations


class MatchRuntimeError(Exception):
    """Root of every error raised by :mod:`tacocat.referee`."""


class HostError(MatchRuntimeError):
    """A bot host process could not be started or did not announce itself in time.

    ``public`` says what happened in the referee's words (a record may quote it); the
    message adds ``said``, the end of what the process wrote (the bot's words: its owner's
    only, never in a record)."""

    def __init__(self, public: str, said: str = "") -> None:
        super().__init__(f"{public}: {said}" if said else public)
        self.public = public
        self.said = said


class NoBotStartedError(MatchRuntimeError):
    """Neither bot process of a match started, which points at the machine, not the bots."""
