"""house:random with a fixed seed, as a bot file (for the three-transports test)."""

from tacocat.engine.bots import RandomBot


class SeededRandom(RandomBot):
    name = "seeded"

    def __init__(self) -> None:
        super().__init__(42)
