"""Turning a bot spec into a :class:`Bot`: ``house:NAME`` or ``path/to/bot.py[:Class]``."""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from pathlib import Path

from tacocat.engine import HOUSE_BOTS, Bot

from ._errors import BotLoadError

HOUSE_PREFIX = "house:"


def load_bot(spec: str) -> Bot:
    """A fresh bot from ``spec``.

    ``house:NAME`` is a house bot. ``path/to/bot.py`` imports that file and instantiates the
    one :class:`Bot` subclass it defines (or the one named after a colon, ``bot.py:MyBot``).
    """
    if spec.startswith(HOUSE_PREFIX):
        name = spec[len(HOUSE_PREFIX):]
        if name not in HOUSE_BOTS:
            raise BotLoadError(f"no house bot {name!r} in {spec!r}; house bots are "
                               + ", ".join(f"house:{n}" for n in sorted(HOUSE_BOTS)))
        return HOUSE_BOTS[name]()
    path_text, _, class_name = spec.partition(":") if spec.count(":") == 1 and not (
        len(spec) > 1 and spec[1] == ":") else (spec, "", "")
    return load_bot_file(Path(path_text), class_name or None)


def load_bot_file(path: Path, class_name: str | None = None) -> Bot:
    """Import ``path`` and instantiate its bot class (see :func:`load_bot`)."""
    if not path.is_file():
        raise BotLoadError(f"bot file {str(path)!r} does not exist; give a .py file, or "
                           f"house:NAME for a house bot")
    # A unique module name per file content, so two bots in files of the same name coexist.
    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:12]
    module_name = f"tacocat_bot_{path.stem}_{digest}"
    loader_spec = importlib.util.spec_from_file_location(module_name, path)
    if loader_spec is None or loader_spec.loader is None:
        raise BotLoadError(f"{str(path)!r} cannot be imported as Python")
    module = importlib.util.module_from_spec(loader_spec)
    sys.modules[module_name] = module
    try:
        loader_spec.loader.exec_module(module)
    except SyntaxError as exc:
        raise BotLoadError(f"{path}:{exc.lineno}: syntax error: {exc.msg}") from exc
    except Exception as exc:
        raise BotLoadError(f"importing {str(path)!r} failed: {type(exc).__name__}: {exc}") \
            from exc
    if class_name is not None:
        cls = getattr(module, class_name, None)
        if not (isinstance(cls, type) and issubclass(cls, Bot)):
            raise BotLoadError(f"{str(path)!r} has no Bot subclass named {class_name!r}")
    else:
        found = [v for v in vars(module).values() if isinstance(v, type) and issubclass(v, Bot)
                 and v.__module__ == module_name]
        if len(found) != 1:
            names = ", ".join(c.__name__ for c in found) or "none"
            raise BotLoadError(
                f"{str(path)!r} must define exactly one Bot subclass, found {names}; "
                f"name one with {path}:ClassName"
            )
        cls = found[0]
    try:
        bot = cls()
    except Exception as exc:
        raise BotLoadError(f"{cls.__name__}() failed: {type(exc).__name__}: {exc}") from exc
    return bot
