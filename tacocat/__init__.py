"""Tacocat Arena: rules engine, bot SDK and tournament server for *Tacocat Spelled Backwards*.

The import root of the ``tacocat-arena`` distribution. Parts (see ``docs/ARCHITECTURE.md``):

- :mod:`tacocat.engine`: the rules (standard library only).
- :mod:`tacocat.sdk`: what a bot author uses.
- :mod:`tacocat.arena`, :mod:`tacocat.worker`, :mod:`tacocat.server`: the tournament side.
"""

__version__ = "0.1.0"
