"""Memory hog: allocate and touch 32 MB blocks until something gives."""

from tacocat.engine.bots import GreedyBot


def misbehave() -> None:
    hoard = []
    while True:
        hoard.append(bytearray(32 << 20))
        if len(hoard) > 64:
            raise RuntimeError(f"ESCAPED: holding {len(hoard) * 32} MB")


class Hostile(GreedyBot):
    name = "memory-hog"

    def duel(self, obs):  # type: ignore[no-untyped-def]
        misbehave()
        return super().duel(obs)
