"""Turning a bot spec into a :class:`Bot`: ``house:NAME`` or ``path/to/bot.py[:Class]``.

:func:`load_bot` and :func:`load_bot_file` are also the package's; the command line plays
each game with a fresh bot, so it takes :func:`load_bot_class`'s factory (and
:func:`split_spec` for a sandboxed bot's file).
"""

from __future__ import annotations

import importlib.util
import os
import sys
import zlib
from collections.abc import Callable

from tacocat.engine import HOUSE_BOTS, Bot

from ._errors import BotLoadError

HOUSE_PREFIX = "house:"


def load_bot(spec: str) -> Bot:
    """A fresh bot from ``spec``.

    ``house:NAME`` is a house bot. ``path/to/bot.py`` imports that file and instantiates the
    one :class:`Bot` subclass it defines (or the one named after a colon, ``bot.py:MyBot``).
    """
    return make_bot(load_bot_class(spec))


def load_bot_class(spec: str) -> Callable[[], Bot]:
    """What makes a fresh bot of ``spec`` for each game (:func:`load_bot`'s forms): a house
    bot's factory or the bot file's class."""
    if spec.startswith(HOUSE_PREFIX):
        name = spec[len(HOUSE_PREFIX):]
        if name not in HOUSE_BOTS:
            raise BotLoadError(f"no house bot {name!r} in {spec!r}; house bots are "
                               + ", ".join(f"house:{n}" for n in sorted(HOUSE_BOTS)))
        return HOUSE_BOTS[name]
    path_text, class_name = split_spec(spec)
    return _bot_class(path_text, class_name or None)


def split_spec(spec: str) -> tuple[str, str]:
    """``path/to/bot.py[:ClassName]`` as its path and class name (``""``: the file's one
    bot class); a Windows drive's colon is part of the path."""
    path_text, _, class_name = spec.partition(":") if spec.count(":") == 1 and not (
        len(spec) > 1 and spec[1] == ":") else (spec, "", "")
    return path_text, class_name


def load_bot_file(path: str | os.PathLike[str], class_name: str | None = None) -> Bot:
    """Import ``path`` and instantiate its bot class (see :func:`load_bot`)."""
    return make_bot(_bot_class(path, class_name))


def make_bot(factory: Callable[[], Bot]) -> Bot:
    """``factory()``, its failure turned into a :class:`BotLoadError` that says why."""
    try:
        return factory()
    except Exception as exc:
        name = getattr(factory, "__name__", repr(factory))
        raise BotLoadError(f"{name}() failed: {type(exc).__name__}: {exc}") from exc


def _bot_class(path_like: str | os.PathLike[str], class_name: str | None) -> type[Bot]:
    # os.path, not pathlib: every bot's start comes through here, and pathlib (with what it
    # imports) would cost it 5 ms.
    path = os.fspath(path_like)
    if not os.path.isfile(path):
        raise BotLoadError(f"bot file {path!r} does not exist; give a .py file, or "
                           f"house:NAME for a house bot")
    # A unique module name per file path, so two bots in files of the same name coexist
    # (a checksum, not hashlib: importing OpenSSL would cost every bot's start 3 ms).
    digest = f"{zlib.crc32(os.path.realpath(path).encode()):08x}"
    stem = os.path.splitext(os.path.basename(path))[0]
    module_name = f"tacocat_bot_{stem}_{digest}"
    loader_spec = importlib.util.spec_from_file_location(module_name, path)
    if loader_spec is None or loader_spec.loader is None:
        raise BotLoadError(f"{path!r} cannot be imported as Python")
    module = importlib.util.module_from_spec(loader_spec)
    sys.modules[module_name] = module
    try:
        loader_spec.loader.exec_module(module)
    except SyntaxError as exc:
        raise BotLoadError(f"{path}:{exc.lineno}: syntax error: {exc.msg}") from exc
    except Exception as exc:
        raise BotLoadError(f"importing {path!r} failed: {type(exc).__name__}: {exc}") from exc
    if class_name is not None:
        cls = getattr(module, class_name, None)
        if not (isinstance(cls, type) and issubclass(cls, Bot)):
            raise BotLoadError(f"{path!r} has no Bot subclass named {class_name!r}")
        return cls
    found = [v for v in vars(module).values() if isinstance(v, type) and issubclass(v, Bot)
             and v.__module__ == module_name]
    if len(found) != 1:
        names = ", ".join(c.__name__ for c in found) or "none"
        raise BotLoadError(
            f"{path!r} must define exactly one Bot subclass, found {names}; "
            f"name one with {path}:ClassName"
        )
    return found[0]


def name_of(bot: Bot | Callable[[], Bot]) -> str:
    """A bot's ``name`` (a class attribute, so a bot class has it too)."""
    name = getattr(bot, "name", None)
    return name if isinstance(name, str) else "bot"
