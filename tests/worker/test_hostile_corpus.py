"""The hostile-bot corpus (``hostile_bots/``), each bot run through the real worker path.

Every hostile bot is a submitted, activated version that plays a 2-game match against a healthy
bot in a ladder of its own, on a real ``tacocat worker`` (2 RQ workers, sandboxed bots, real
Redis). A bot misbehaves on its first duel decision. A bot that sees its hostile action
succeed raises ``ESCAPED: ...``; one that is refused raises ``blocked: ...`` with what
stopped it; resource abuse ends in the natural fault (timeout, crash, protocol). For each:

- contained: no ``ESCAPED`` anywhere, and every game of its match is its forfeit with the
  expected fault and detail (``--max-strikes 1``: the first fault makes it give up); what
  the bot says (``blocked: ...``) is in its owner's log, never in the public record;
- the healthy bot never forfeits, and the same worker processes then play a normal match;
- nothing is left running: no process of a bot slot's uid, nothing in (and no trace of) the
  pids cgroups the match jobs made, nothing below ``tacocat worker`` after it stops.
"""

from __future__ import annotations

import os
import secrets
import tempfile
import threading
import time
from pathlib import Path

import pytest
import redis as redis_py

from tacocat.engine import Fault, Reason
from tacocat.worker.sandbox import SandboxPolicy
from tacocat.worker.sandbox._cgroups import pids_base

from .worker_helpers import (
    SANDBOX,
    ArenaField,
    Trees,
    children_of,
    good_bot,
    make_field,
    wait_for,
    wait_ladder_done,
)

pytestmark = pytest.mark.timeout(180)

BOTS = Path(__file__).parent / "hostile_bots"
CHECKOUT = Path(__file__).resolve().parents[2]

# bot file -> (fault of every game of its match, what the first forfeit's detail says)
CORPUS: dict[str, tuple[Fault, str]] = {
    "fork_bomb": (Fault.CRASH, "blocked: BlockingIOError"),
    "memory_hog": (Fault.CRASH, "MemoryError"),
    "cpu_spin": (Fault.TIMEOUT, "no answer within "),
    "endless_sleep": (Fault.TIMEOUT, "no answer within "),
    "stdout_flood": (Fault.TIMEOUT, "no answer within "),
    "frame_flood": (Fault.PROTOCOL, "exceeds"),
    "garbage_frames": (Fault.PROTOCOL, "exceeds"),
    "truncated_frame": (Fault.PROTOCOL, "a truncated frame by the deadline"),
    "network": (Fault.CRASH, "blocked: tcp PermissionError"),
    "write_outside_tmp": (Fault.CRASH, "blocked: /bot/planted.py"),
    "read_files": (Fault.CRASH, "blocked: "),
    "env_secrets": (Fault.CRASH, "blocked: no secret"),
    "ptrace_parent": (Fault.CRASH, "blocked: ptrace"),
    "kill_others": (Fault.CRASH, "blocked: "),
    "affinity_escape": (Fault.CRASH, "blocked: sched_setaffinity PermissionError"),
    "host_wide": (Fault.CRASH, "blocked: openpty after 0: FileNotFoundError"),
    "covert_cards": (Fault.ILLEGAL_ACTION, "more cards than hand"),
    "covert_exit": (Fault.CRASH, "its process exited"),
}
# bot file -> what must never be in its match's public record (besides its own words); a
# covert_cards bot logs the "cards" it packed what it read into as "payload: 1,2,...".
NEVER_PUBLIC: dict[str, list[str]] = {"covert_exit": ["173"]}
SLOT_UIDS = range(SandboxPolicy.uid_base, SandboxPolicy.uid_base + SandboxPolicy.uid_slots)


def _proc_uid(pid: str) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("Uid:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return -1


def _pids_cgroup(pid: str) -> str:
    try:
        with open(f"/proc/{pid}/cgroup") as f:
            for line in f:
                parts = line.rstrip("\n").split(":", 2)
                if len(parts) == 3 and "pids" in parts[1].split(","):
                    return parts[2]
    except OSError:
        pass
    return ""


def _slot_processes() -> dict[str, str]:
    """Running processes of any bot slot uid: pid -> their pids cgroup."""
    return {p: _pids_cgroup(p) for p in os.listdir("/proc")
            if p.isdigit() and _proc_uid(p) in SLOT_UIDS}


class HorseWatch:
    """Samples the work horses (children of the RQ workers) while the corpus runs: the pids
    cgroups of their bots are named after them."""

    def __init__(self, workers: list[int]) -> None:
        self.workers = workers
        self.horses: set[int] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            for worker in self.workers:
                for pid in children_of(worker):
                    if _ppid(pid) == worker:
                        self.horses.add(pid)
            time.sleep(0.05)

    def stop(self) -> set[int]:
        self._stop.set()
        self._thread.join()
        return self.horses

    def ours(self, cgroup: str) -> bool:
        name = cgroup.rstrip("/").rsplit("/", 1)[-1]
        return name.split("-", 1)[0] in {str(h) for h in self.horses}


def _ppid(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return int(f.read().rsplit(b")", 1)[1].split()[1])
    except OSError:
        return -1


def _hostile_source(name: str, values: dict[str, str]) -> bytes:
    text = (BOTS / f"{name}.py").read_text()
    for key, value in values.items():
        text = text.replace(key, value)
    return text.encode()


def _play(field: ArenaField, ladder: str, versions: list[str]) -> None:
    field.arena.ladders.create(field.admin, ladder, games_per_pairing=2, games_per_match=2,
                               decision_seconds=0.5)
    for version in versions:
        found = field.arena.bots.version(version)
        field.join(found.bot.split("/", 1)[0], found.bot.split("/", 1)[1], ladder)


def test_the_hostile_corpus_is_contained_by_the_real_worker_path(
        redis: redis_py.Redis, redis_url: str, trees: Trees,
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert SANDBOX, "bubblewrap is required: the corpus never runs unsandboxed"
    secret = "tok-" + secrets.token_hex(12)
    # The worker holds secrets in its environment; no bot may see them.
    monkeypatch.setenv("REDIS_URL", redis_url)
    monkeypatch.setenv("TACOCAT_TOKEN", secret)
    before = set(_slot_processes())
    field = make_field(redis)
    arena = field.arena
    tree = trees("--max-strikes", "1", "--bot-memory-mb", "128", workers=2)
    workers = sorted(tree.worker_pids())
    watch = HorseWatch(workers)
    raw_dir: str | bytes | None = next(iter(redis.config_get("dir").values()), None)
    redis_dir = raw_dir.decode() if isinstance(raw_dir, bytes) else raw_dir or "/nonexistent"
    values = {
        "__CHECKOUT__": str(CHECKOUT),
        "__REDIS_DIR__": redis_dir,
        "__REDIS_PORT__": str(redis_py.Redis.from_url(redis_url).connection_pool
                              .connection_kwargs.get("port", 6379)),
        "__TMPROOT__": tempfile.gettempdir(),
        "__SECRET__": secret,
        "__WORKER_PIDS__": ",".join(map(str, [tree.proc.pid, *workers])),
    }

    good = field.submit("tess", "good", good_bot("good"))
    arena.bots.activate(good)
    hostile: dict[str, str] = {}
    for name in CORPUS:
        hostile[name] = field.submit("mal", name.replace("_", "-"),
                                     _hostile_source(name, values))
        arena.bots.activate(hostile[name])
    started = time.monotonic()
    for name, version in hostile.items():
        _play(field, f"h-{name.replace('_', '-')}", [good, version])
    for name in hostile:
        wait_ladder_done(arena, f"h-{name.replace('_', '-')}", timeout=120)
    corpus_seconds = time.monotonic() - started

    problems: list[str] = []
    summary: list[str] = []
    for name, version in hostile.items():
        fault, detail = CORPUS[name]
        (match,) = arena.matches.of_ladder(f"h-{name.replace('_', '-')}", count=10)
        assert match.result is not None
        side = "a" if match.a == version else "b"
        replays = arena.matches.replays(match.id)
        details = [r.result.detail for r in replays]
        # What the bot says (ESCAPED/blocked) reaches its owner's log only, never the record.
        (log,) = arena.matches.logs(arena.users.get("mal"), match.id)
        said = log.text
        faults = [g.fault.value if g.fault else None for g in match.result.games]
        summary.append(f"{name}: {faults} {details[0][:400]!r}")
        if "ESCAPED" in said or any("ESCAPED" in d for d in details):
            problems.append(f"{name} escaped: {details} {said[-2000:]}")
        if any("blocked" in d for d in details):
            problems.append(f"{name}: the bot's words are in the public record: {details}")
        payload = [line.removeprefix("payload: ") for line in said.splitlines()
                   if line.startswith("payload: ")]
        chosen = NEVER_PUBLIC.get(name, []) + [v for p in payload[:1] for v in p.split(",")]
        if name == "covert_cards" and not chosen:
            problems.append(f"{name}: no payload in its log: {said[-2000:]}")
        public = " ".join(details)
        if any(value in public for value in chosen if len(value) > 2):
            problems.append(f"{name}: what the bot chose is in the public record: {details}")
        for game in match.result.games:
            if (game.reason, game.offender, game.fault) != (Reason.FORFEIT, side, fault):
                problems.append(f"{name}: expected a {fault.value} forfeit, got {game}")
        if detail not in details[0] + said:
            problems.append(f"{name}: expected {detail!r} in {details[0]!r} or its log")
    print("\n".join(summary))
    print(f"corpus of {len(CORPUS)} hostile bots played in {corpus_seconds:.1f} s")
    assert not problems, "\n".join(problems + summary)

    # The worker and the healthy bot are unaffected: the same workers play a normal match.
    other = field.submit("una", "good", good_bot("other"))
    arena.bots.activate(other)
    _play(field, "after", [good, other])
    wait_ladder_done(arena, "after", timeout=60)
    (after,) = arena.matches.of_ladder("after", count=10)
    assert after.result is not None
    assert all(g.reason is not Reason.FORFEIT for g in after.result.games), after.result
    board = {name: arena.ladders.leaderboard(f"h-{name.replace('_', '-')}").standing(good)
             for name in CORPUS}
    assert all(s is not None and not s.forfeits and s.wins == 2 for s in board.values()), board
    assert sorted(tree.worker_pids()) == workers
    assert "restarting in" not in tree.text

    # Nothing left running: no slot-uid process of these matches, no cgroup of theirs.
    horses = watch.stop()
    assert horses, "no work horse was seen"

    def leftovers() -> list[str]:
        return [f"{p} in {c or 'no pids cgroup'}" for p, c in _slot_processes().items()
                if p not in before and (not c or watch.ours(c))]

    wait_for(lambda: not leftovers(), 5, "no bot process to be left")
    base, _ = pids_base()
    if base is not None:
        stale = [d.name for d in base.iterdir() if d.is_dir() and watch.ours(d.name)]
        assert not stale, f"pids cgroups left behind: {stale}"
    bots = [p for p in children_of(tree.proc.pid) if p not in workers]
    assert not bots, f"processes below the idle worker: {bots}"
