"""The replay viewer's steps: :mod:`tacocat.engine.replay_steps`, shared with
``tacocat replay show`` (which must not need the web's dependencies)."""

from tacocat.engine.replay_steps import replay_view

__all__ = ["replay_view"]
