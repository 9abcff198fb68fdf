"""Host-wide kernel resources and what a bot's mounts say, tested with hostile scripts.

A kernel object counted per host (ptys) or per uid (inotify instances, message queues: a
bot of a non-root worker runs as the worker's own uid) must be out of a bot's reach; what
it can still make (descriptors, memfds, processes) is bounded per bot. docs/SECURITY.md,
"Host-wide kernel resources", has the table these tests back. And ``/proc/self/mountinfo``
names no host path but the read-only system and Python the bot runs on: not its match
folder (named after the worker's pid) nor any file of the worker's. Each script runs in
exactly the worker's command, in both process-bound modes (the ``policy`` fixture).
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from tacocat.worker.sandbox import BOT_DIR, SandboxPolicy, sandboxed_command

from .sandbox_helpers import Bots, run_script

pytestmark = [pytest.mark.timeout(60),
              pytest.mark.usefixtures("secrets_in_parent", "no_leftover_cgroups")]

PTYS = """
    import errno, json, os, pty
    got = {}
    try:
        os.openpty()
        got["openpty"] = "opened"
    except OSError as exc:
        got["openpty"] = errno.errorcode[exc.errno]
    for path in ("/dev/ptmx", "/dev/pts/ptmx", "/dev/tty", "/dev/console", "/dev/ptyp0"):
        try:
            os.close(os.open(path, os.O_RDWR | os.O_NOCTTY))
            got[path] = "opened"
        except OSError as exc:
            got[path] = errno.errorcode[exc.errno]
    try:
        pty.fork()  # after /dev/ptmx, the old BSD ptys (/dev/ptyp0 ...)
        got["pty.fork"] = "forked"
    except OSError as exc:
        got["pty.fork"] = str(exc)
    got["dev"] = sorted(os.listdir("/dev"))
    print(json.dumps(got))
"""


def test_no_pty_can_be_had(bots: Bots, policy: SandboxPolicy) -> None:
    # Issue 30: bwrap's --dev gave /dev/ptmx; one bot held 855 ptys, four took the host's
    # whole allowance (kernel.pty.nr 3,071) and every container on it was refused one.
    got = run_script(bots, policy, PTYS).json()
    assert got["openpty"] == "ENOENT" and got["pty.fork"] == "out of pty devices", got
    assert all(got[p] == "ENOENT" for p in ("/dev/ptmx", "/dev/pts/ptmx", "/dev/tty",
                                             "/dev/console", "/dev/ptyp0")), got
    assert got["dev"] == ["fd", "full", "null", "random", "shm", "stderr", "stdin", "stdout",
                          "urandom", "zero"]


KERNEL_OBJECTS = """
    import ctypes, errno, json, os, platform, select
    libc = ctypes.CDLL(None, use_errno=True)
    def outcome(result):
        return "made" if result >= 0 else errno.errorcode[ctypes.get_errno()]
    add_key = {"x86_64": 248, "aarch64": 217}[platform.machine()]
    got = {
        "inotify_init1": outcome(libc.inotify_init1(0)),
        "fanotify_init": outcome(libc.fanotify_init(0, 0)),
        "mq_open": outcome(libc.mq_open(b"/hostile", os.O_CREAT | os.O_RDWR, 0o600, None)),
        "msgget": outcome(libc.msgget(0, 0o1000 | 0o600)),
        "semget": outcome(libc.semget(0, 1, 0o1000 | 0o600)),
        "shmget": outcome(libc.shmget(0, 1 << 20, 0o1000 | 0o600)),
        "add_key": outcome(libc.syscall(add_key, b"user", b"hostile", b"x", 1, -4)),
    }
    try:
        os.open("/dev/shm/hostile", os.O_CREAT | os.O_RDWR, 0o600)
        got["shm_file"] = "made"
    except OSError as exc:
        got["shm_file"] = errno.errorcode[exc.errno]
    # What it may make is bounded by its open-file limit, whatever the kind.
    for kind, make in (("eventfd", lambda: os.eventfd(0)), ("epoll", lambda: select.epoll()),
                       ("memfd", lambda: os.memfd_create("m")), ("pipe", os.pipe)):
        held = []
        try:
            while len(held) < 100000:
                held.append(make())
        except OSError as exc:
            got[kind] = [len(held), errno.errorcode[exc.errno]]
        for item in held:
            if isinstance(item, select.epoll):
                item.close()
            else:
                for fd in (item if isinstance(item, tuple) else (item,)):
                    os.close(fd)
    print(json.dumps(got))
"""


def test_host_wide_kernel_objects_are_out_of_reach_or_bounded(bots: Bots,
                                                              policy: SandboxPolicy) -> None:
    got = run_script(bots, policy, KERNEL_OBJECTS).json()
    for call in ("inotify_init1", "fanotify_init", "mq_open", "msgget", "semget", "shmget",
                 "add_key"):
        assert got[call] == "EPERM", (call, got)
    assert got["shm_file"] in ("EROFS", "EACCES"), got  # /dev is read-only: no POSIX shm
    for kind in ("eventfd", "epoll", "memfd"):
        count, error = got[kind]
        assert error == "EMFILE" and count <= policy.open_files, (kind, got)
    assert got["pipe"][1] == "EMFILE" and 2 * got["pipe"][0] <= policy.open_files, got


MEMFDS = """
    import json, os, signal
    # memfd pages are nobody's address space: only the bot's memory cgroup counts them.
    # Each file stays under RLIMIT_FSIZE (SIGXFSZ otherwise); together they pass the bound.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    chunk, per_file, files, written = b"x" * (1 << 20), 3, [], 0
    try:
        while written < (256 << 20):
            fd = os.memfd_create("hog")
            files.append(fd)
            for _ in range(per_file):
                os.write(fd, chunk)
                written += len(chunk)
            print(json.dumps({"written": written}), flush=True)
    except OSError as exc:
        print(json.dumps({"written": written, "error": exc.errno}), flush=True)
"""


def test_memfds_are_bounded_by_the_bots_memory(bots: Bots, policy: SandboxPolicy) -> None:
    bounded = replace(policy, memory_bytes=96 << 20, open_files=256)
    run = run_script(bots, bounded, MEMFDS)
    lines = [json.loads(line) for line in run.out.splitlines() if line.startswith("{")]
    assert lines, run.err
    # Killed by the cgroup (SIGKILL) or refused: never the whole 256 MiB.
    assert lines[-1]["written"] <= bounded.memory_bytes + (8 << 20), (lines[-1], run)
    assert run.code != 0 or "error" in lines[-1], run


MOUNTS = """
    import json, os
    mounts = []
    for line in open("/proc/self/mountinfo"):
        fields = line.split(" - ")[0].split()
        mounts.append([fields[3], fields[4]])  # the root inside its filesystem, the mount point
    nested = open("/bot/pkg/data.txt").read()
    print(json.dumps({"mounts": mounts, "text": open("/proc/self/mountinfo").read(),
                      "nested": nested, "listing": sorted(os.listdir("/bot")),
                      "mode": oct(os.stat("/bot/pkg/data.txt").st_mode & 0o777)}))
"""


def _expected_mount_points() -> set[str]:
    """Where the sandbox mounts things: the system, each bound Python directory, the bot's
    copy, /proc and its read-only parts, /dev and its devices, /tmp, the stand-ins."""
    from tacocat.worker.sandbox._mounts import DEVICES, _visible_python_paths  # noqa: PLC0415

    points = {"/", "/usr", "/tmp", BOT_DIR, "/proc", "/proc/1/cmdline",
              "/proc/1/task/1/cmdline", "/dev", "/etc/ld.so.cache", "/etc/localtime",
              "/etc/alternatives", *(f"/dev/{name}" for name in DEVICES)}
    points.update(f"/{name}" for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
                  if os.path.isdir(f"/{name}") and not os.path.islink(f"/{name}"))
    points.update(_visible_python_paths(SandboxPolicy()))
    return points


def test_mounts_name_no_host_path_but_the_system_and_python(bots: Bots, policy: SandboxPolicy,
                                                            tmp_path: Path) -> None:
    # Issue 30: mountinfo showed the match folder (the worker's pid in its name) and the
    # bind sources. The bot's directory is now a copy; only the read-only system and Python
    # directories are binds, each at its own path.
    pkg = bots.root / "mallory" / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "data.txt").write_text("nested file\n")
    (bots.root / "mallory" / "odd.").mkdir()
    (bots.root / "mallory" / "odd." / "x").write_text("")
    os.mkfifo(bots.root / "mallory" / "fifo")  # not copied (opening one would block) ...
    (bots.root / "mallory" / "link").symlink_to("/etc/passwd")  # ... nor links
    got = run_script(bots, policy, MOUNTS).json()
    assert got["nested"] == "nested file\n" and got["mode"] == "0o444"
    assert {"pkg", "odd."} <= set(got["listing"]) and not {"fifo", "link"} & set(got["listing"])
    text = got["text"]
    for host in (str(bots.root), str(tmp_path), "pytest-of", "tacocat-sandbox",
                 "tacocat-match"):
        assert host not in text, (host, text)
    expected = _expected_mount_points()
    for root, point in got["mounts"]:
        if point.startswith("/proc/") and point not in expected:
            assert root == point.removeprefix("/proc"), (root, point)  # bwrap's read-only
            continue                                                 # parts of /proc
        assert point in expected, (point, text)
        # A mount's root says where in its filesystem it comes from: the same path (a
        # system or Python bind; /etc/localtime is a link into /usr's zoneinfo), or a
        # filesystem of the sandbox's own.
        assert root in ("/", point, point.removeprefix("/dev")) or root.startswith(
            ("/usr/", "/bindfile")) or (root, point) == ("/newroot", "/"), (root, point)


def test_a_restarted_bot_gets_its_files_again(bots: Bots, policy: SandboxPolicy) -> None:
    # bwrap copies the bot's files from descriptors at each start; the referee restarts a
    # crashed bot with the same command, so each start must read them from the beginning.
    import subprocess  # noqa: PLC0415

    bot_dir = bots.make("again", {"bot.py": "print(open('/bot/bot.py').read().count('x'))\n"
                                            "# xxx\n"})
    cmd = sandboxed_command(policy, bot_dir, [sys.executable, "bot.py"])
    try:
        outs = [subprocess.run(capture_output=True, timeout=30, check=False,
                               **cmd.popen_kwargs()).stdout for _ in range(3)]
    finally:
        cmd.close()
    assert outs == [b"4\n"] * 3, outs  # an empty copy would print nothing


FILES = """
    import json, os
    fds = sorted(int(f) for f in os.listdir("/proc/self/fd"))[:-1]  # minus listdir's own
    names = sorted(os.listdir("/bot"))
    print(json.dumps({"fds": fds, "count": len(names),
                      "last": open("/bot/data199.txt").read()}))
"""


def test_a_bot_of_200_files_starts_and_holds_none_of_their_descriptors(
        bots: Bots, policy: SandboxPolicy) -> None:
    # An upload may hold 200 files: each is a descriptor handed to bwrap, above the bot's
    # RLIMIT_NOFILE (which bwrap runs under already) so bwrap keeps room for its own.
    folder = bots.root / "mallory"
    folder.mkdir(parents=True)
    for index in range(200):
        (folder / f"data{index}.txt").write_text(f"file {index}\n")
    got = run_script(bots, policy, FILES).json()
    assert got["count"] == 201 and got["last"] == "file 199\n"  # and the script itself
    assert got["fds"] == [0, 1, 2]
