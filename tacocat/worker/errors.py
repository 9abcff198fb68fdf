"""The worker's exceptions::

    WorkerError
     ├── MatchError          a match cannot be played for reasons that are not the bots'
     │                       (neither bot process started): the job fails and is retried
     └── SandboxUnavailableError  the sandbox cannot run here and no --insecure-no-sandbox consent
                                  was given

Bot faults are never exceptions: they are forfeits in the match's records.
"""

from __future__ import annotations


class WorkerError(Exception):
    """Root of every error raised by :mod:`tacocat.worker`."""


class SandboxUnavailableError(WorkerError, RuntimeError):
    """The sandbox cannot run here (the message says why and what to install or change)."""
