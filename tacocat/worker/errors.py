"""The worker's exceptions::

    WorkerError
     ├── MatchError          a match cannot be played for reasons that are not the bots'
     │                       (neither bot process started): the job fails and is retried
     ├── SandboxUnavailableError  the sandbox cannot run here and no --insecure-no-sandbox consent
     │                            was given
     ├── LanguageUnavailableError  this host lacks a bot's runtime or toolchain (node, cc)
     └── BuildFailedError    a bot's build failed (tacocat.worker.build): its version is rejected

Bot faults are never exceptions: they are forfeits in the match's records.
"""

from __future__ import annotations


class WorkerError(Exception):
    """Root of every error raised by :mod:`tacocat.worker`."""


class SandboxUnavailableError(WorkerError, RuntimeError):
    """The sandbox cannot run here (the message says why and what to install or change)."""


class LanguageUnavailableError(WorkerError, RuntimeError):
    """This host cannot run (or build) a bot's language: the job fails, nobody is blamed,
    and a worker that has the programs takes it."""
