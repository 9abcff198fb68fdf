"""The bot sandbox's set-up: whether it is available here, what it refuses, the seccomp
program's form, and the worker's own path through it (``HostProcess`` playing a match
sandboxed, and the unsandboxed command house bots get).
"""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap
from dataclasses import replace

import pytest

from tacocat.engine import duplicate_pairs
from tacocat.referee import HostProcess, ProcessSeat, play_match
from tacocat.worker import sandbox
from tacocat.worker.sandbox import (
    SandboxPolicy,
    SandboxUnavailableError,
    sandboxed_command,
    unsandboxed_command,
)

from .sandbox_helpers import MEMORY, POLICY, REPO, STARTUP, Bots

pytestmark = [pytest.mark.timeout(60),
              pytest.mark.usefixtures("secrets_in_parent", "no_leftover_cgroups")]


# ---------------------------------------------------------------------------- status


def test_sandbox_is_available_here() -> None:
    status = sandbox.sandbox_status()
    assert status.available, status.describe()
    assert status.process_bound in ("cgroup+nproc", "cgroup", "nproc")
    assert sandbox.sandbox_available()
    assert sandbox.use_sandbox() is True


def test_without_bwrap_the_sandbox_says_so_and_is_refused(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TACOCAT_BWRAP", "/nonexistent/bwrap")  # no bubblewrap here
    sandbox.sandbox_status.cache_clear()
    try:
        status = sandbox.sandbox_status()
        assert not status.available and not sandbox.sandbox_available()
        assert "apt-get install bubblewrap" in status.describe()
        with pytest.raises(SandboxUnavailableError, match="--insecure-no-sandbox"):
            sandbox.use_sandbox()
        with pytest.raises(SandboxUnavailableError, match="bubblewrap"):
            sandboxed_command(POLICY, "/", [sys.executable])
    finally:
        sandbox.sandbox_status.cache_clear()


def test_insecure_mode_is_explicit_and_loud(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        assert sandbox.use_sandbox(insecure_no_sandbox=True) is False
    assert any(r.levelno == logging.CRITICAL and "INSECURE" in r.getMessage()
               for r in caplog.records)


def test_policy_and_arguments_are_checked(bots: Bots) -> None:
    with pytest.raises(ValueError, match="max_processes"):
        SandboxPolicy(max_processes=0)
    with pytest.raises(ValueError, match="process_bound"):
        SandboxPolicy(process_bound="none")  # type: ignore[arg-type]
    bot_dir = bots.make("alice", {"bot.py": ""})
    with pytest.raises(ValueError, match="not visible"):
        sandboxed_command(POLICY, bot_dir, ["/opt/elsewhere/bin/python", "bot.py"])
    with pytest.raises(ValueError, match="absolute"):
        sandboxed_command(POLICY, bot_dir, ["python", "bot.py"])
    for path in (str(REPO), "/opt"):  # a checkout (with .git) or a whole top-level directory
        with pytest.raises(SandboxUnavailableError, match="refusing to show"):
            sandboxed_command(replace(POLICY, extra_ro_paths=(path,)), bot_dir,
                              [sys.executable, "bot.py"])


def test_seccomp_program_is_well_formed() -> None:
    program = sandbox.seccomp_program("x86_64")
    assert program == sandbox.seccomp_program("aarch64")  # one program serves both ABIs
    assert len(program) % 8 == 0 and len(program) // 8 < 4096
    first = program[:8]
    assert first[:2] == (0x20).to_bytes(2, "little")  # load the arch word first
    assert int.from_bytes(first[4:], "little") == 4
    with pytest.raises(SandboxUnavailableError):
        sandbox.seccomp_program("riscv64")


# ---------------------------------------------------------------------------- the real host


BOT = """
    from tacocat.engine.bots import {base}

    class Sandboxed{base}({base}):
        pass
"""


def test_host_process_plays_a_match_sandboxed(bots: Bots) -> None:
    """The worker's path: HostProcess with the sandboxed command, real frames, restarts."""
    commands = []
    hosts = []
    for name, base in (("ann", "RandomBot"), ("bob", "GreedyBot")):
        bot_dir = bots.make(name, {"bot.py": BOT.format(base=base)})
        cmd = sandboxed_command(POLICY, bot_dir, [sys.executable, "-m", "tacocat.sdk.host",
                                                  "bot.py"])
        commands.append(cmd)
        hosts.append(HostProcess(name, startup_timeout=STARTUP, **cmd.host_process_kwargs()))
    try:
        assert hosts[0].start() == "random"  # the Hello came through the sandbox
        hosts[0].kill()
        assert hosts[0].start() == "random"  # a restart reads the seccomp program afresh
        assert hosts[0].starts == 2
        assert hosts[1].start() == "greedy"
        games = play_match((ProcessSeat(hosts[0], 2.0), ProcessSeat(hosts[1], 2.0)),
                           duplicate_pairs(2, "sandbox"), names=("A", "B")).games
        assert len(games) == 2
        for game in games:
            assert game.record.result.fault is None, game.record.result
    finally:
        for host, cmd in zip(hosts, commands, strict=True):
            host.close()
            cmd.close()
    assert all(not c.pids() for c in commands)


def test_unsandboxed_command_keeps_rlimits_and_a_clean_environment(bots: Bots) -> None:
    probe = textwrap.dedent(MEMORY) + "import os\nprint(sorted(os.environ))\n"
    bot_dir = bots.make("house", {"probe.py": probe})
    cmd = unsandboxed_command(POLICY, bot_dir, [sys.executable, "probe.py"])
    with cmd:
        done = subprocess.run(capture_output=True, timeout=30, check=False,
                              **cmd.popen_kwargs())
    assert cmd.sandboxed is False
    out = done.stdout.decode()
    assert '"MemoryError"' in out
    assert "REDIS_URL" not in out and "TACOCAT_ADMIN_TOKEN" not in out

