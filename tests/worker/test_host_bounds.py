"""The bounds a host gives a bot's whole tree, whatever the host: cgroup v1 or v2, a root
worker or a non-root one in a delegated subtree. This machine runs them on cgroup v1 as root;
``tests/hosts`` runs them again in a cgroup-v2 VM, as root and as a delegated non-root user.

Each test plays through the worker's real path (:class:`MatchPlayer`, sandboxed bot
processes, their cgroups) and checks that nothing is left behind: no process, no cgroup.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tacocat.engine import STANDARD, Fault, Reason, duplicate_pairs
from tacocat.worker import BotSpec, Launcher, MatchPlayer
from tacocat.worker.sandbox import SandboxPolicy
from tacocat.worker.sandbox._cgroups import cgroup_mode

from .sandbox_helpers import STARTUP
from .worker_helpers import good_bot, source

pytestmark = [pytest.mark.timeout(300), pytest.mark.usefixtures("no_leftover_cgroups")]

MB = 1 << 20
FORKED_300MB = source("""
    import os, select

    from tacocat.engine.bots import GreedyBot

    CHILDREN, MB = 4, 300


    class Hostile(GreedyBot):
        def duel(self, obs):
            read, write = os.pipe()
            kids = []
            for _ in range(CHILDREN):
                pid = os.fork()
                if pid == 0:  # touch every page, say so, hold it
                    os.close(read)
                    block = bytearray(b"\\x01") * (MB << 20)
                    os.write(write, b"+")
                    select.select([], [], [], 60)
                    os._exit(0)
                kids.append(pid)
            os.close(write)
            held, ended = b"", []
            while not ended and len(held) < CHILDREN:
                ready, _, _ = select.select([read], [], [], 0.1)
                if ready:
                    held += os.read(read, CHILDREN)
                for pid in kids:
                    done, status = os.waitpid(pid, os.WNOHANG)
                    if done and os.WIFSIGNALED(status):
                        ended.append(os.WTERMSIG(status))
            if len(held) == CHILDREN:
                raise RuntimeError(f"ESCAPED: {CHILDREN} children hold {CHILDREN * MB} MB")
            raise RuntimeError(f"blocked: {len(held)} of {CHILDREN} children got {MB} MB, "
                               f"then a child was killed by signal {ended[0]}")
""")


def _bot(folder: Path, name: str, data: bytes) -> BotSpec:
    folder.mkdir(mode=0o755)
    (folder / "bot.py").write_bytes(data)
    (folder / "bot.py").chmod(0o644)
    return BotSpec(name, folder)


def _peak_bytes(cgroup: Path) -> int | None:
    for name in ("memory.peak", "memory.max_usage_in_bytes"):  # v2 (5.19+), v1
        if (cgroup / name).exists():
            return int((cgroup / name).read_text())
    return None


def test_worker_check_passes_here() -> None:
    """Every test below needs every bound: the host check says it has them all."""
    done = subprocess.run([sys.executable, "-m", "tacocat.cli", "worker", "--check"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "submitted bots can run here with every bound" in done.stdout
    assert "MISSING" not in done.stdout
    expected = {"v2": "v2 (unified)", "hybrid": "hybrid", "v1": "v1"}[cgroup_mode()]
    assert f"cgroup version          {expected}" in done.stdout, done.stdout


def test_four_forked_300mb_children_are_bounded_as_one_tree(tmp_path: Path) -> None:
    # 512 MB of address space per process, 640 MB for the whole tree: each child may take
    # its 300 MB, all four together (1.2 GB) may not.
    policy = SandboxPolicy(address_space=512 * MB, memory_bytes=640 * MB)
    launcher = Launcher(policy, sandbox=True, cpu=0)
    good = _bot(tmp_path / "good", "good@1", good_bot("good"))
    bad = _bot(tmp_path / "bad", "hog@1", FORKED_300MB)
    with MatchPlayer(launcher, good, bad, STANDARD, time_limit=20.0, max_strikes=1,
                     startup_timeout=STARTUP) as player:
        played = player.play(duplicate_pairs(2, "hog"))
        tree = player._sides[1].command.tree
        peaks = [p for p in map(_peak_bytes, tree) if p is not None]
    assert peaks, f"no memory peak in {tree}"
    print(f"\nhost-bounds: cgroup {cgroup_mode()}, uid {os.geteuid()}: forked hog's tree peak "
          f"{max(peaks) / MB:.0f} MB of a {policy.memory_bytes / MB:.0f} MB bound")
    assert max(peaks) <= policy.memory_bytes
    assert not any(path.exists() for path in tree), "cgroups left behind"
    for index, record in enumerate(played.records):
        assert record.result.reason is Reason.FORFEIT, record.result
        assert record.result.fault is Fault.CRASH, record.result
        assert record.result.offender == 1 - played.a_seats[index]
    said = played.logs[1].decode()
    assert "ESCAPED" not in said and "killed by signal 9" in said, said[-2000:]


def test_house_bots_play_clean_sandboxed_games(tmp_path: Path) -> None:
    launcher = Launcher(SandboxPolicy(), sandbox=True, cpu=0)
    a = _bot(tmp_path / "a", "a@1", good_bot("a"))
    b = _bot(tmp_path / "b", "b@1", good_bot("b", "RandomBot"))
    with MatchPlayer(launcher, a, b, STANDARD, time_limit=10.0,
                     startup_timeout=STARTUP) as player:
        played = player.play(duplicate_pairs(4, "clean"))
        commands = [side.command for side in player._sides]
        assert all(c.sandboxed and c.cgroup is not None and c.tree for c in commands)
    assert [r.result.reason for r in played.records].count(Reason.FORFEIT) == 0
    assert len(played.records) == 4
    for command in commands:
        assert not command.pids(), "processes left behind"
        assert not any(p.exists() for p in (command.cgroup, *command.tree) if p)
