"""The bot sandbox, tested with real bwrap, real subprocesses and small hostile scripts.

Each hostile script runs as ``python script.py`` inside exactly the command the worker
uses for a bot (not through the game protocol: the game-level corpus goes through the
worker). Most tests run in both process-bound modes: ``auto`` (a pids cgroup where the
hierarchy is writable, as on the CI machine, plus RLIMIT_NPROC on the bot's uid as root) and
``nproc`` (the fallback without a cgroup). A missing bwrap is a failure here, never a skip.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

import tacocat
from tacocat.sdk import HostProcess, play_hosted_match
from tacocat.worker import sandbox
from tacocat.worker.sandbox import (
    BOT_DIR,
    SandboxedCommand,
    SandboxPolicy,
    SandboxUnavailableError,
    sandboxed_command,
    unsandboxed_command,
)

pytestmark = pytest.mark.timeout(60)

REPO = Path(tacocat.__file__).resolve().parent.parent
POLICY = SandboxPolicy(cpu_seconds=20, address_space=512 << 20, file_size=1 << 20,
                       max_processes=12, tmp_size=4 << 20)
SECRET = "redis://:hunter2@10.0.0.1:6379/0"


@pytest.fixture(params=["auto", "nproc"])
def policy(request: pytest.FixtureRequest) -> SandboxPolicy:
    return replace(POLICY, process_bound=request.param)


@pytest.fixture(autouse=True)
def _secrets_in_parent(monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker's environment holds secrets; none may reach a bot."""
    monkeypatch.setenv("REDIS_URL", SECRET)
    monkeypatch.setenv("TACOCAT_ADMIN_TOKEN", "tok-hunter2")


@dataclass
class Bots:
    """A directory of bot directories, like the worker's: one per bot."""

    root: Path

    def make(self, name: str, files: dict[str, str]) -> Path:
        path = self.root / name
        path.mkdir(parents=True, exist_ok=True)
        path.chmod(0o755)  # the bot's own unprivileged uid must read it
        for file, text in files.items():
            (path / file).write_text(textwrap.dedent(text))
        return path


@pytest.fixture
def bots(tmp_path: Path) -> Bots:
    root = tmp_path / "bots"
    root.mkdir()
    root.chmod(0o755)
    return Bots(root)


def processes_with(marker: str, *, bwrap: bool = True) -> list[int]:
    """Host pids whose command line mentions ``marker`` (sandboxed ones included; bwrap's
    own two processes too unless ``bwrap`` is false)."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = Path(entry.path, "cmdline").read_bytes()
            state = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if not bwrap and os.path.basename(cmdline.split(b"\0")[0]) == b"bwrap":
            continue
        if marker.encode() in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


def host_uid(pid: int) -> int:
    """The real uid of ``pid`` as the host sees it."""
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("Uid:")).split()[1])


def wait_until_gone(marker: str, timeout: float = 3.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while (left := processes_with(marker)) and time.monotonic() < deadline:
        time.sleep(0.01)
    return left


@dataclass
class Run:
    code: int
    out: str
    err: str
    seconds: float

    def json(self) -> dict[str, Any]:
        try:
            data: dict[str, Any] = json.loads(self.out.strip().splitlines()[-1])
        except (IndexError, ValueError):
            raise AssertionError(f"no JSON from the script (exit {self.code}):\n"
                                 f"{self.out}\n{self.err}") from None
        return data


def run_script(bots: Bots, policy: SandboxPolicy, script: str, *args: str,
               timeout: float = 30) -> Run:
    """Run ``script`` sandboxed to its end; assert nothing it started is left afterwards."""
    marker = f"hostile_{uuid.uuid4().hex[:12]}.py"
    bot_dir = bots.make("mallory", {marker: script})
    cmd = sandboxed_command(policy, bot_dir, [sys.executable, marker, *args])
    start = time.monotonic()
    proc = subprocess.Popen(stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, **cmd.popen_kwargs())
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        proc.kill()
        proc.wait()
        cmd.close()
    assert not processes_with(marker), "processes left running after close()"
    assert cmd.cgroup is None or not cmd.cgroup.exists()
    return Run(proc.returncode, out.decode(), err.decode(), time.monotonic() - start)


# ---------------------------------------------------------------------------- status


def test_sandbox_is_available_here() -> None:
    status = sandbox.sandbox_status()
    assert status.available, status.describe()
    assert status.process_bound in ("cgroup+nproc", "cgroup", "nproc")
    assert sandbox.sandbox_available()
    assert sandbox.use_sandbox() is True


def test_without_bwrap_the_sandbox_says_so_and_is_refused(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "_bwrap_path", lambda: None)
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


# ---------------------------------------------------------------------------- containment


IDENTITY = """
    import json, os, socket, sys
    def status(key):
        for line in open("/proc/self/status"):
            if line.startswith(key + ":"):
                return line.split()[1]
    fds = sorted(int(f) for f in os.listdir("/proc/self/fd"))[:-1]  # minus listdir's own
    environs = ""
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            for name in ("environ", "cmdline"):
                try:
                    environs += open(f"/proc/{pid}/{name}", "rb").read().decode("latin-1")
                except OSError:
                    pass
    import tacocat.sdk.host  # the real host imports inside
    print(json.dumps({
        "uid": os.getuid(), "euid": os.geteuid(), "gid": os.getgid(),
        "groups": os.getgroups(), "pid": os.getpid(), "cwd": os.getcwd(),
        "env": dict(os.environ), "fds": fds, "cap_eff": status("CapEff"),
        "cap_bnd": status("CapBnd"), "nnp": status("NoNewPrivs"), "seccomp": status("Seccomp"),
        "hostname": socket.gethostname(), "pids": sorted(int(p) for p in os.listdir("/proc")
                                                        if p.isdigit()),
        "secret_in_proc": "hunter2" in environs, "root": sorted(os.listdir("/")),
    }))
"""


def test_identity_privileges_and_environment(bots: Bots, policy: SandboxPolicy) -> None:
    got = run_script(bots, policy, IDENTITY).json()
    assert got["cwd"] == BOT_DIR
    assert got["uid"] == got["euid"] != 0
    assert got["gid"] != 0
    assert got["cap_eff"] == "0000000000000000"
    assert got["nnp"] == "1" and got["seccomp"] == "2"  # no-new-privs, seccomp filter mode
    assert got["fds"] == [0, 1, 2], "descriptors leaked into the sandbox"
    assert got["hostname"] == "tacocat-bot"
    assert max(got["pids"]) < 10, "not in its own PID namespace"
    env = got["env"]
    assert isinstance(env, dict)
    assert "REDIS_URL" not in env and "TACOCAT_ADMIN_TOKEN" not in env
    assert set(env) <= {"PATH", "HOME", "TMPDIR", "LANG", "PYTHONDONTWRITEBYTECODE",
                        "PYTHONNOUSERSITE", "PYTHONPATH", "PWD"}
    assert env["HOME"] == "/tmp"
    assert got["secret_in_proc"] is False
    assert set(got["root"]) <= {
        "bin", "bot", "dev", "etc", "lib", "lib32", "lib64", "libx32", "proc", "sbin", "tmp",
        "usr", *(p.split("/")[1] for p in (sys.prefix, sys.base_prefix, str(REPO)))}


def test_a_parent_with_many_open_files_still_starts_bots(bots: Bots,
                                                         policy: SandboxPolicy) -> None:
    """A worker holding more descriptors than a bot may (RLIMIT_NOFILE) still launches it:
    the launch must not open or move a descriptor after lowering that limit."""
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(policy.open_files + 100)]
    try:
        got = run_script(bots, policy, IDENTITY).json()
    finally:
        for fd in held:
            os.close(fd)
    assert got["fds"] == [0, 1, 2] and got["seccomp"] == "2"


NETWORK = """
    import asyncio, json, socket, threading
    result = {}
    for name in ("AF_INET", "AF_INET6", "AF_NETLINK", "AF_PACKET"):
        try:
            socket.socket(getattr(socket, name), socket.SOCK_RAW if name == "AF_PACKET"
                          else socket.SOCK_DGRAM if name == "AF_NETLINK" else socket.SOCK_STREAM)
            result[name] = "opened"
        except OSError as exc:
            result[name] = exc.errno
    try:
        socket.create_connection(("1.1.1.1", 53), timeout=2)
        result["tcp"] = "connected"
    except OSError as exc:
        result["tcp"] = type(exc).__name__
    try:
        socket.getaddrinfo("example.com", 80)
        result["dns"] = "resolved"
    except OSError as exc:
        result["dns"] = type(exc).__name__
    a, b = socket.socketpair()  # AF_UNIX stays: asyncio's self-pipe needs it
    a.send(b"x"); result["unix"] = b.recv(1).decode()
    async def main(): await asyncio.sleep(0); return "ok"
    result["asyncio"] = asyncio.run(main())
    t = threading.Thread(target=lambda: result.__setitem__("thread", "ok")); t.start(); t.join()
    result["interfaces"] = sorted(line.split(":")[0].strip()
                                  for line in open("/proc/net/dev").readlines()[2:])
    print(json.dumps(result))
"""


def test_no_network(bots: Bots, policy: SandboxPolicy) -> None:
    got = run_script(bots, policy, NETWORK).json()
    for family in ("AF_INET", "AF_INET6", "AF_NETLINK", "AF_PACKET"):
        assert got[family] == 1, f"{family} socket: {got[family]} (want EPERM)"
    assert got["tcp"] == "PermissionError"
    assert got["dns"] == "gaierror"
    assert got["unix"] == "x" and got["asyncio"] == "ok" and got["thread"] == "ok"
    assert got["interfaces"] == ["lo"]  # the network namespace itself is empty


FILES = """
    import json, os, sys
    result = {"written": [], "read": [], "seen": []}
    for path in ["/", "/bot", "/usr", "/usr/lib", sys.prefix, sys.base_prefix, "/etc",
                 "/root", "/dev", "/dev/shm", "/proc/sys/kernel", "/work", "/var"]:
        try:
            with open(os.path.join(path, "planted"), "w") as f:
                f.write("x")
            result["written"].append(path)
        except OSError:
            pass
    for path in sys.argv[1:]:
        try:
            open(path, "rb").read(1)
            result["read"].append(path)
        except OSError:
            pass
        if os.path.exists(path):
            result["seen"].append(path)
    with open("/tmp/ok", "w") as f:
        f.write("fine")
    try:
        with open("/tmp/big", "wb") as f:
            f.write(b"x" * (3 << 20))
        result["big"] = "written"
    except OSError as exc:
        result["big"] = exc.errno
    os.unlink("/tmp/big")
    full = None
    for i in range(8):
        try:
            with open(f"/tmp/fill{i}", "wb") as f:
                f.write(b"x" * (1 << 20))
        except OSError as exc:
            full = exc.errno
            break
    result["tmp_full"] = full
    result["root_listing"] = os.listdir("/root") if os.path.isdir("/root") else []
    print(json.dumps(result))
"""


def test_filesystem_is_read_only_and_private(bots: Bots, policy: SandboxPolicy,
                                             tmp_path: Path) -> None:
    alice = bots.make("alice", {"bot.py": "SECRET_STRATEGY = 1\n"})
    redis_data = tmp_path / "valkey-data"
    redis_data.mkdir()
    (redis_data / "appendonly.aof").write_text("*3\r\n$3\r\nSET\r\n")
    targets = [str(alice / "bot.py"), str(alice), str(redis_data / "appendonly.aof"),
               str(REPO / ".git"), str(REPO / "pyproject.toml"),
               str(Path(sys.prefix).parent / ".git"), "/etc/shadow", "/etc/passwd",
               "/root/.bash_history", "/root/.ssh", str(tmp_path), "/sys/kernel"]
    got = run_script(bots, policy, FILES, *targets).json()
    assert got["written"] == [], f"wrote outside /tmp: {got['written']}"
    assert got["read"] == [] and got["seen"] == [], f"visible: {got['seen']}"
    assert got["big"] == 27  # EFBIG: RLIMIT_FSIZE (1 MiB)
    assert got["tmp_full"] == 28  # ENOSPC: /tmp is a 4 MiB tmpfs
    assert set(got["root_listing"]) <= {".pyenv"}


PROCESSES = """
    import ctypes, errno, json, os, signal, sys
    libc = ctypes.CDLL(None, use_errno=True)
    result = {}
    def ptrace(request, pid):
        rc = libc.ptrace(request, pid, None, None)
        return "ok" if rc == 0 else errno.errorcode[ctypes.get_errno()]
    result["attach_parent"] = ptrace(16, os.getppid())       # PTRACE_ATTACH
    result["attach_outside"] = ptrace(16, int(sys.argv[1]))
    result["traceme"] = ptrace(0, 0)                            # PTRACE_TRACEME
    for name, pid in (("victim", int(sys.argv[2])), ("worker", int(sys.argv[1])),
                      ("init", 1)):
        try:
            os.kill(pid, signal.SIGKILL)
            result[name] = "sent"
        except OSError as exc:
            result[name] = type(exc).__name__
    try:
        os.kill(-1, signal.SIGKILL)  # everything it may signal: only its own namespace
        result["everyone"] = "sent"
    except OSError as exc:
        result["everyone"] = type(exc).__name__
    for name, flag in (("unshare_user", 0x10000000), ("unshare_net", 0x40000000)):
        rc = libc.unshare(flag)
        result[name] = "ok" if rc == 0 else errno.errorcode[ctypes.get_errno()]
    print(json.dumps(result))
"""


def test_cannot_trace_or_signal_outside(bots: Bots, policy: SandboxPolicy) -> None:
    victim = subprocess.Popen(["sleep", "60"])
    try:
        got = run_script(bots, policy, PROCESSES, str(os.getpid()), str(victim.pid)).json()
        assert victim.poll() is None, "the sandbox killed a process outside"
    finally:
        victim.kill()
        victim.wait()
    assert got["attach_parent"] == got["attach_outside"] == got["traceme"] == "EPERM"
    assert got["victim"] == got["worker"] == "ProcessLookupError"  # not in its namespace
    assert got["init"] in ("sent", "PermissionError")  # namespace init ignores it: harmless
    assert got["unshare_user"] == got["unshare_net"] == "EPERM"  # no new namespaces


KERNEL = """
    import json, os
    opened = []
    for path in ["/proc/sys/kernel/core_pattern", "/proc/sys/vm/drop_caches",
                 "/proc/sys/kernel/hostname", "/proc/sys/net/ipv4/ip_forward",
                 "/proc/sysrq-trigger", "/proc/1/mem", "/proc/1/environ", "/proc/kmsg",
                 "/sys/kernel/uevent_helper", "/dev/mem", "/dev/kmsg"]:
        try:
            os.close(os.open(path, os.O_WRONLY))  # opened only, never written
            opened.append(path)
        except OSError:
            pass
    print(json.dumps({"opened": opened}))
"""


def test_cannot_change_the_kernel(bots: Bots, policy: SandboxPolicy) -> None:
    """Sysctls grant write access by the global uid 0 alone: a bot mapped to uid 0 (a user
    namespace made by root) could set kernel.core_pattern and escape. Not here."""
    assert run_script(bots, policy, KERNEL).json() == {"opened": []}


MEMORY = """
    import json
    try:
        hog = bytearray(1 << 30)
        print(json.dumps({"hog": "allocated"}))
    except MemoryError:
        print(json.dumps({"hog": "MemoryError"}))
"""


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
            assert current <= policy.max_processes + sandbox.BWRAP_PROCESSES
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


@pytest.mark.parametrize("bound", ["auto", "nproc"])
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
        hosts.append(HostProcess(name, **cmd.host_process_kwargs()))
    try:
        assert hosts[0].start() == "random"  # the Hello came through the sandbox
        hosts[0].kill()
        assert hosts[0].start() == "random"  # a restart reads the seccomp program afresh
        assert hosts[0].starts == 2
        assert hosts[1].start() == "greedy"
        games = list(play_hosted_match(hosts[0], hosts[1], 2, seed="sandbox"))
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


@pytest.fixture(autouse=True, scope="module")
def _no_leftover_cgroups() -> Iterator[None]:
    yield
    base = sandbox._cgroup_base()[0]
    if base is not None:
        mine = [p.name for p in base.iterdir() if p.name.startswith(f"{os.getpid()}-")]
        assert not mine, f"cgroups left behind: {mine}"
