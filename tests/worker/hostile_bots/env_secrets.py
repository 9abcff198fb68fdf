"""Looks for the worker's secrets in its environment and in every /proc/*/environ."""

import os

from tacocat.engine.bots import GreedyBot

SECRET = "__SECRET__"


def misbehave() -> None:
    for name, value in os.environ.items():
        if SECRET in value or name in ("REDIS_URL", "TACOCAT_TOKEN"):
            raise RuntimeError(f"ESCAPED: {name} in the environment")
    seen = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                data = f.read()
        except OSError:
            continue
        seen += 1
        if SECRET.encode() in data or b"REDIS_URL=" in data:
            raise RuntimeError(f"ESCAPED: secret in /proc/{entry}/environ")
    raise RuntimeError(f"blocked: no secret in the environment or {seen} readable environs "
                       f"(variables: {sorted(os.environ)})")


class Hostile(GreedyBot):
    name = "env-secrets"

    def duel(self, obs):  # type: ignore[no-untyped-def]
        misbehave()
        return super().duel(obs)
