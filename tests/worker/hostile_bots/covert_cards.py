"""Covert channel: what the bot reads inside (its mounts, the boot id, its uid) packed into
64 int32 "cards" of an illegal answer, for a public replay to carry (issue 30: 793 bytes).
The payload goes to its owner's log too, so the test can look for it in the record."""

import os
import sys
from pathlib import Path

from tacocat.engine.bots import GreedyBot


def payload() -> list[int]:
    mounts = Path("/proc/self/mountinfo").read_text()
    if "tacocat-match" in mounts or "tacocat-smoke" in mounts:
        raise RuntimeError("ESCAPED: mountinfo names the worker's match folder")
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        boot = "?"
    data = f"{boot} uid={os.getuid()} {mounts}".encode()[:256]
    cards = [int.from_bytes(data[i:i + 4], "little", signed=True) for i in range(0, 256, 4)]
    print("payload: " + ",".join(map(str, cards)), file=sys.stderr, flush=True)
    return cards


class Hostile(GreedyBot):
    name = "covert-cards"

    def replace(self, obs):  # type: ignore[no-untyped-def]
        return payload()
