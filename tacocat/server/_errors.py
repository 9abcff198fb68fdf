"""The referee's exceptions::

    ServerError
     ├── ConfigError     a referee setting is out of range (port, time limit, limits)
     └── StartError      the referee cannot start (the port is taken, the host unknown)
"""

from __future__ import annotations


class ServerError(Exception):
    """Root of every error raised by :mod:`tacocat.server`."""


class ConfigError(ServerError, ValueError):
    """A referee setting is invalid; the message names it."""


class StartError(ServerError):
    """The referee could not start listening."""
