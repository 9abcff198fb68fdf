"""Host-wide kernel objects: hoard ptys (issue 30: 855 per bot, the host's 3,071 in all),
inotify instances, message queues, SysV segments and keys, each counted per host or uid."""

import ctypes
import os
import platform

from tacocat.engine.bots import GreedyBot


def misbehave() -> None:
    held: list[tuple[int, int]] = []
    refused: list[str] = []
    try:
        while len(held) < 1000:
            held.append(os.openpty())
    except OSError as exc:
        refused.append(f"openpty after {len(held)}: {type(exc).__name__}")
    if held:
        raise RuntimeError(f"ESCAPED: held {len(held)} ptys")
    libc = ctypes.CDLL(None, use_errno=True)
    add_key = {"x86_64": 248, "aarch64": 217}[platform.machine()]
    for what, made in (
            ("inotify_init1", lambda: libc.inotify_init1(0)),
            ("fanotify_init", lambda: libc.fanotify_init(0, 0)),
            ("mq_open", lambda: libc.mq_open(b"/hoard", os.O_CREAT | os.O_RDWR, 0o600, None)),
            ("shmget", lambda: libc.shmget(0, 1 << 20, 0o1000 | 0o600)),
            ("semget", lambda: libc.semget(0, 1, 0o1000 | 0o600)),
            ("msgget", lambda: libc.msgget(0, 0o1000 | 0o600)),
            ("add_key", lambda: libc.syscall(add_key, b"user", b"hoard", b"x", 1, -4))):
        if made() >= 0:
            raise RuntimeError(f"ESCAPED: {what} made a kernel object")
        refused.append(f"{what} {os.strerror(ctypes.get_errno())}")
    raise RuntimeError("blocked: " + "; ".join(refused))


class Hostile(GreedyBot):
    name = "host-wide"

    def duel(self, obs):  # type: ignore[no-untyped-def]
        misbehave()
        return super().duel(obs)
