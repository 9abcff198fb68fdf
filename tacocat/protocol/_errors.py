"""The protocol's one exception::

    ProtocolError   a peer sent something the game protocol does not allow: a frame over
                    the size limit or cut short, an undecodable message, a request for an
                    unknown decision, a ruleset the engine refuses
"""

from __future__ import annotations


class ProtocolError(Exception):
    """A peer broke the game protocol; the message says what it sent and what was expected."""
