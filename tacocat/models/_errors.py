"""The value types' one exception::

    ModelError   a value type was given a value it cannot hold (a seat other than 0 or 1,
                 a forfeit without its offender, a negative duration); the message names
                 the field and the value
"""

from __future__ import annotations


class ModelError(ValueError):
    """A value type refused a value; the message says which field, what it got and what it
    takes."""
