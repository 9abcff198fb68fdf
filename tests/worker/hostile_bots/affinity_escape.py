"""Affinity escape: move onto every core, or into the real-time class, to crowd other work."""

import os

from tacocat.engine.bots import GreedyBot


def misbehave() -> None:
    mine = os.sched_getaffinity(0)
    if len(mine) != 1:
        raise RuntimeError(f"ESCAPED: runs on cores {sorted(mine)}, not one")
    refused = []
    for what, attempt in (
            ("sched_setaffinity", lambda: os.sched_setaffinity(0, set(range(os.cpu_count() or 2)))),
            ("sched_setscheduler", lambda: os.sched_setscheduler(0, os.SCHED_FIFO,
                                                                 os.sched_param(1))),
            ("sched_setscheduler idle", lambda: os.sched_setscheduler(0, os.SCHED_BATCH,
                                                                      os.sched_param(0)))):
        try:
            attempt()
        except OSError as exc:
            refused.append(f"{what} {type(exc).__name__}")
        else:
            cores = sorted(os.sched_getaffinity(0))
            raise RuntimeError(f"ESCAPED: {what} succeeded, cores {cores}")
    raise RuntimeError("blocked: " + ", ".join(refused))


class Hostile(GreedyBot):
    name = "affinity-escape"

    def duel(self, obs):  # type: ignore[no-untyped-def]
        misbehave()
        return super().duel(obs)
