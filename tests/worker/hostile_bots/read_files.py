"""Reads what is not its own: the other bot's source, the checkout, the Redis data dir."""

import glob
import os
import sys

from tacocat.engine.bots import GreedyBot

PATHS = ["__CHECKOUT__/pyproject.toml", "__CHECKOUT__/.git/HEAD", "__REDIS_DIR__",
         "/etc/shadow", "/root/.ssh", "/root/.bash_history", "/proc/1/root/etc/hostname"]
PATTERNS = ["__TMPROOT__/tacocat-match-*/*/bot.py", "/tmp/tacocat-match-*/*/bot.py",
            "__TMPROOT__/pytest-of-*/*/*"]


def beside_the_runtime(folder: str) -> list[str]:
    """What ``folder`` shows besides the way down to the Python installation (bound
    read-only: the bot needs it), e.g. ``/root`` when Python lives in ``/root/.pyenv``.
    The interpreter's own path counts: a bot host runs without ``site`` (``-S``), so its
    ``sys.prefix`` is the base installation even when the interpreter is a venv's."""
    needed = {part for prefix in {sys.base_prefix, sys.prefix, sys.exec_prefix,
                                  os.path.dirname(os.path.dirname(sys.executable))}
              for part in prefix.split("/")}
    try:
        return [name for name in os.listdir(folder) if name not in needed]
    except OSError:
        return []


def misbehave() -> None:
    blocked = []
    for folder in ("/root", "/home", "/work", "/srv", "/opt"):
        extra = beside_the_runtime(folder)
        if extra:
            raise RuntimeError(f"ESCAPED: {folder} shows {extra[:5]}")
    for pattern in PATTERNS:
        for path in glob.glob(pattern):
            if not path.startswith("/bot"):
                raise RuntimeError(f"ESCAPED: can see {path}")
        blocked.append(f"{pattern}: nothing")
    for path in PATHS:
        try:
            if os.path.isdir(path):
                found = repr(os.listdir(path)[:3])
            else:
                with open(path, "rb") as f:
                    found = repr(f.read(64))
        except OSError as exc:
            blocked.append(f"{path}: {type(exc).__name__}")
            continue
        raise RuntimeError(f"ESCAPED: read {path}: {found}")
    raise RuntimeError("blocked: " + "; ".join(blocked))


class Hostile(GreedyBot):
    name = "read-files"

    def duel(self, obs):  # type: ignore[no-untyped-def]
        misbehave()
        return super().duel(obs)
