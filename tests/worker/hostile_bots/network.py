"""Network: a TCP connection to the worker's Redis and to the internet, and a DNS lookup."""

import socket

from tacocat.engine.bots import GreedyBot

REDIS_PORT = int("__REDIS_PORT__")


def misbehave() -> None:
    blocked = []
    for address in (("127.0.0.1", REDIS_PORT), ("1.1.1.1", 53)):
        try:
            with socket.create_connection(address, timeout=2):
                raise RuntimeError(f"ESCAPED: connected to {address}")
        except OSError as exc:
            blocked.append(f"tcp {type(exc).__name__}: {exc}")
    try:
        found = socket.getaddrinfo("example.com", 80)
        raise RuntimeError(f"ESCAPED: resolved example.com to {found[0][4]}")
    except OSError as exc:
        blocked.append(f"dns {type(exc).__name__}: {exc}")
    raise RuntimeError("blocked: " + "; ".join(blocked))


class Hostile(GreedyBot):
    name = "network"

    def duel(self, obs):  # type: ignore[no-untyped-def]
        misbehave()
        return super().duel(obs)
