"""The bot sandbox's isolation, tested with real bwrap, real subprocesses and hostile scripts.

What a hostile bot can see, reach, signal or change: its identity and privileges, the
environment, the network, the filesystem, other processes and the kernel. Each hostile
script runs as ``python script.py`` inside exactly the command the worker uses for a bot
(not through the game protocol: the game-level corpus goes through the worker). Every test
runs in both process-bound modes: ``auto`` (a pids cgroup where the hierarchy is writable,
as on the CI machine, plus RLIMIT_NPROC on the bot's uid as root) and ``nproc`` (the
fallback without a cgroup). A missing bwrap is a failure here, never a skip. Limits and
lifetime are ``test_sandbox_limits.py``'s; status, policy and the worker's path through the
sandbox are ``test_sandbox_setup.py``'s.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import tacocat
from tacocat.worker.sandbox import BOT_DIR, SANDBOX_TMP, SandboxPolicy

from .sandbox_helpers import REPO, Bots, run_script

pytestmark = [pytest.mark.timeout(60),
              pytest.mark.usefixtures("secrets_in_parent", "no_leftover_cgroups")]


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
        "resuid": os.getresuid(), "resgid": os.getresgid(),
        "env": dict(os.environ), "fds": fds, "cap_eff": status("CapEff"),
        "cap_prm": status("CapPrm"), "cap_amb": status("CapAmb"),
        "cap_bnd": status("CapBnd"), "nnp": status("NoNewPrivs"), "seccomp": status("Seccomp"),
        "hostname": socket.gethostname(), "pids": sorted(int(p) for p in os.listdir("/proc")
                                                        if p.isdigit()),
        "secret_in_proc": "hunter2" in environs, "root": sorted(os.listdir("/")),
        "init_cmdline": [open(f"/proc/1/{p}cmdline", "rb").read().decode("latin-1")
                         for p in ("", "task/1/")],
    }))
"""


def test_identity_privileges_and_environment(bots: Bots, policy: SandboxPolicy) -> None:
    got = run_script(bots, policy, IDENTITY).json()
    assert got["cwd"] == BOT_DIR
    assert got["uid"] == got["euid"] != 0
    assert got["gid"] != 0
    assert len(set(got["resuid"])) == len(set(got["resgid"])) == 1  # saved ids dropped too
    assert got["cap_eff"] == got["cap_prm"] == got["cap_amb"] == "0000000000000000"
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
    assert got["init_cmdline"] == ["init\0", "init\0"], "bwrap's command line shows"
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


VISIBLE = """
    import json, os, sys
    args = json.loads(sys.argv[1])
    leaves = set(args["leaves"])
    seen, unlistable, written = [], [], []
    def walk(path):
        try:
            names = sorted(os.listdir(path))
        except OSError:
            unlistable.append(path)
            return
        for name in names:
            child = os.path.join(path, name)
            seen.append(child)
            if child not in leaves and os.path.isdir(child) and not os.path.islink(child):
                walk(child)
    walk("/")
    for path in args["write"]:
        try:
            with open(os.path.join(path, "planted"), "w") as f:
                f.write("x")
            written.append(path)
        except OSError:
            pass
    print(json.dumps({"seen": seen, "unlistable": unlistable, "written": written,
                      "exists": [p for p in args["hidden"] if os.path.lexists(p)]}))
"""

SYSTEM_ROOTS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")


def shown_python_paths() -> set[str]:
    """The host directories the sandbox must show for the interpreter and ``tacocat``, worked
    out here from ``sys`` and the package (not asked of the sandbox module): the prefixes and
    the package directory, minus those under the system or nested in another."""
    wanted = {os.path.realpath(p) for p in (sys.prefix, sys.exec_prefix, sys.base_prefix,
                                            sys.base_exec_prefix)}
    wanted.add(os.path.dirname(os.path.realpath(tacocat.__file__)))
    kept: set[str] = set()
    for path in sorted(wanted, key=len):
        if not any(path == root or path.startswith(root + "/") for root in (*SYSTEM_ROOTS,
                                                                                *kept)):
            kept.add(path)
    return kept


def test_nothing_of_the_host_is_visible_but_the_binds(bots: Bots, policy: SandboxPolicy,
                                                       tmp_path: Path) -> None:
    """Every path a bot can list is a bind, a directory made to hold one, or the sandbox's own
    ``/bot``, ``/tmp``, ``/proc``, ``/dev``; all of it read-only but ``/tmp``. Where the
    interpreter is a pyenv build under ``/root/.pyenv``, ``/root`` holds only the way down to
    it (docs/SECURITY.md says so): the host's other files beside each directory on the way
    (``/root``'s dotfiles, the checkout beside its ``tacocat`` package), a file the worker
    writes in its temp dir, and the host's other top-level directories do not exist inside."""
    planted = tmp_path / "outside" / "secret.txt"
    planted.parent.mkdir()
    planted.write_text("hunter2")
    python = shown_python_paths()
    system = {p for p in SYSTEM_ROOTS if os.path.islink(p) or os.path.isdir(p)}
    made = {str(q) for p in python for q in Path(p).parents if str(q) != "/"}
    expected = {BOT_DIR, "/dev", "/etc", "/proc", "/tmp", *system, *python, *made}
    hidden = [str(planted), "/root/.ssh"]
    for parent in sorted({"/", *made}):
        try:
            names = os.listdir(parent)
        except OSError:  # not the worker's to read: nor the bot's
            continue
        hidden += [path for name in names if (path := os.path.join(parent, name)) not in expected]
    leaves = sorted({BOT_DIR, "/dev", "/proc", *system, *python})
    # The sandbox's own /tmp is the one writable place, also when the checkout (and so the
    # way down to the venv) lies under the host's /tmp.
    writes = sorted({"/", "/etc", *made, *python} - {SANDBOX_TMP})
    got = run_script(bots, policy, VISIBLE, json.dumps(
        {"leaves": leaves, "write": writes, "hidden": hidden})).json()
    seen = set(got["seen"])
    etc = {p for p in seen if p.startswith("/etc/")}
    assert seen - etc == expected, f"extra: {sorted(seen - etc - expected)}, " \
        f"missing: {sorted(expected - seen)}"
    # /etc is made 0755 and holds just the two public files the loader and the clock read,
    # and the system's alternatives (links: /usr/bin/cc is one).
    public = ("/etc/ld.so.cache", "/etc/localtime", "/etc/alternatives")
    assert {p for p in etc if not p.startswith("/etc/alternatives/")} == {
        p for p in public if os.path.exists(p)}
    assert got["unlistable"] == []
    assert got["exists"] == [], f"host files visible: {got['exists']}"
    assert got["written"] == [], f"writable: {got['written']}"
    in_root = sorted(p for p in seen if p == "/root" or p.startswith("/root/"))
    assert in_root == sorted(p for p in expected if p == "/root" or p.startswith("/root/"))


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

