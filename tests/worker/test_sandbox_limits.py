"""The bot sandbox's limits and lifetime, tested with real bwrap and hostile scripts.

A memory hog, a CPU spin and a fork bomb hit their bounds; a bot dies with whatever kills it
(``SandboxedCommand.kill``, a SIGKILL to bwrap's process group, the death of the worker)
and leaves nothing running. Most tests run in both process-bound modes, ``auto`` (a pids
cgroup plus RLIMIT_NPROC as root) and ``nproc`` (the fallback without a cgroup).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from dataclasses import replace
from pathlib import Path

import pytest

from tacocat.worker.sandbox import SandboxedCommand, SandboxPolicy, sandboxed_command
from tacocat.worker.sandbox._bwrap import BWRAP_PROCESSES

from .sandbox_helpers import (
    BOUNDS,
    MEMORY,
    POLICY,
    Bots,
    host_uid,
    processes_with,
    run_script,
    wait_until_gone,
)

pytestmark = [pytest.mark.timeout(60),
              pytest.mark.usefixtures("secrets_in_parent", "no_leftover_cgroups")]


def test_memory_hog_hits_the_address_space_limit(bots: Bots, policy: SandboxPolicy) -> None:
    assert run_script(bots, policy, MEMORY).json() == {"hog": "MemoryError"}


SPIN = """
    while True:
        pass
"""


def test_cpu_spin_is_killed(bots: Bots) -> None:
    run = run_script(bots, replace(POLICY, cpu_seconds=1), SPIN)
    # bwrap exits 128 + the signal that ended the bot: SIGXCPU at the soft limit, SIGKILL
    # at the hard one a second later.
    assert run.code in (128 + signal.SIGXCPU, 128 + signal.SIGKILL), run.err
    assert run.seconds < 10


FORK_BOMB = """
    import os, sys, time
    made = 0
    try:
        while True:
            if os.fork() == 0:  # a child that double-forks and sleeps
                try:
                    if os.fork() == 0:
                        os.setsid()
                        time.sleep(600)
                except OSError:
                    pass
                time.sleep(600)
                os._exit(0)
            made += 1
    except OSError as exc:
        print(f"bounded after {made} forks: errno {exc.errno}", flush=True)
    time.sleep(600)
"""


def start_bomb(bots: Bots, policy: SandboxPolicy) -> tuple[str, SandboxedCommand,
                                                          subprocess.Popen[bytes], str]:
    marker = f"bomb_{uuid.uuid4().hex[:12]}.py"
    bot_dir = bots.make("bomber", {marker: FORK_BOMB})
    cmd = sandboxed_command(policy, bot_dir, [sys.executable, marker])
    proc = subprocess.Popen(stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, **cmd.popen_kwargs())
    assert proc.stdout is not None
    line = proc.stdout.readline().decode()
    return marker, cmd, proc, line


def test_fork_bomb_is_bounded_and_killed(bots: Bots, policy: SandboxPolicy) -> None:
    marker, cmd, proc, line = start_bomb(bots, policy)
    try:
        assert line.startswith("bounded after"), (line, proc.stderr and proc.stderr.read())
        assert "errno 11" in line  # EAGAIN from the pids cgroup or RLIMIT_NPROC
        running = processes_with(marker, bwrap=False)
        assert 1 < len(running) <= policy.max_processes
        if cmd.cgroup is not None:
            current = int((cmd.cgroup / "pids.current").read_text())
            assert current <= policy.max_processes + BWRAP_PROCESSES
        assert set(cmd.pids()) >= set(running)
        if os.geteuid() == 0:  # as root every bot process runs as the slot's own uid
            assert cmd.uid is not None and cmd.uid > 0
            assert {host_uid(pid) for pid in running} == {cmd.uid}
        cmd.kill()
        assert not processes_with(marker, bwrap=False)
        # Without a cgroup bwrap's two root processes are not the uid's: they end by themselves
        # once the bot is gone (and HostProcess.kill ends them in the worker anyway).
        assert not wait_until_gone(marker)
    finally:
        proc.kill()
        proc.wait()
        cmd.close()
    assert not processes_with(marker)


def test_killing_bwrap_alone_ends_the_whole_namespace(bots: Bots) -> None:
    """What HostProcess.kill does (SIGKILL to bwrap's process group) is already enough:
    the namespace's init dies with bwrap, and the kernel kills everything in it."""
    marker, cmd, proc, line = start_bomb(bots, POLICY)
    try:
        assert line.startswith("bounded after")
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        assert not wait_until_gone(marker)
    finally:
        proc.kill()
        proc.wait()
        cmd.close()


LAUNCHER = """
    import subprocess, sys, time
    from tacocat.worker.sandbox import SandboxPolicy, sandboxed_command
    cmd = sandboxed_command(SandboxPolicy(process_bound=sys.argv[3]), sys.argv[1],
                            [sys.executable, sys.argv[2]])
    proc = subprocess.Popen(stdout=subprocess.PIPE, **cmd.popen_kwargs())
    print(proc.stdout.readline().decode().strip(), cmd.cgroup, flush=True)
    time.sleep(600)
"""


@pytest.mark.parametrize("bound", BOUNDS)
def test_bots_die_with_the_worker(bots: Bots, bound: str) -> None:
    """SIGKILL the process that started a bot: the bot and all it forked die too."""
    marker = f"orphan_{uuid.uuid4().hex[:12]}.py"
    bot_dir = bots.make("orphan", {marker: FORK_BOMB})
    launcher = bots.root / "launcher.py"
    launcher.write_text(textwrap.dedent(LAUNCHER))
    worker = subprocess.Popen([sys.executable, str(launcher), str(bot_dir), marker, bound],
                              stdout=subprocess.PIPE)
    assert worker.stdout is not None
    line = worker.stdout.readline().decode()
    assert line.startswith("bounded after"), line
    assert processes_with(marker)
    worker.kill()
    worker.wait()
    assert not wait_until_gone(marker)
    cgroup = line.split()[-1]
    if cgroup != "None":  # the dead worker's cgroup (a later sweep would remove it too)
        deadline = time.monotonic() + 5
        while Path(cgroup).exists():
            try:
                Path(cgroup).rmdir()
            except OSError:  # busy until the dead bwrap's zombie is reaped by init
                assert time.monotonic() < deadline, f"{cgroup} stays busy"
                time.sleep(0.01)

