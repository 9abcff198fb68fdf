"""Writes outside its private /tmp: its own directory, the system, the checkout, the root."""

import os

from tacocat.engine.bots import GreedyBot

TARGETS = ["/bot/planted.py", "/usr/lib/planted", "/planted", "/etc/cron.d/planted",
           "__CHECKOUT__/planted", "/dev/shm/planted", "/var/tmp/planted"]


def misbehave() -> None:
    with open("/tmp/allowed", "w") as f:  # its own tmp: fine
        f.write("ok")
    blocked = []
    for path in TARGETS:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
        except OSError as exc:
            blocked.append(f"{path}: {type(exc).__name__}")
            continue
        os.write(fd, b"planted")
        os.close(fd)
        raise RuntimeError(f"ESCAPED: wrote {path}")
    raise RuntimeError("blocked: " + "; ".join(blocked))


class Hostile(GreedyBot):
    name = "write-outside-tmp"

    def duel(self, obs):  # type: ignore[no-untyped-def]
        misbehave()
        return super().duel(obs)
