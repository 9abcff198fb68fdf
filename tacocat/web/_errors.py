"""The web UI's exceptions::

    WebError
     └── WebStartError   the web UI cannot listen (the port is taken, the host unknown)
"""

from __future__ import annotations


class WebError(Exception):
    """Root of every error raised by :mod:`tacocat.web`."""


class WebStartError(WebError):
    """The web UI could not start listening; the message names the address and why."""
