"""Shared by the sandbox tests (``test_sandbox*.py``): the test policy, bot directories, running
a hostile script through exactly the worker's command, and finding what it left running.
Their fixtures are in ``conftest.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tacocat
from tacocat.worker.sandbox import SandboxPolicy, sandboxed_command

REPO = Path(tacocat.__file__).resolve().parent.parent
POLICY = SandboxPolicy(cpu_seconds=20, address_space=512 << 20, file_size=1 << 20,
                       max_processes=12, tmp_size=4 << 20)
SECRET = "redis://:hunter2@10.0.0.1:6379/0"
STARTUP = float(os.environ.get("TACOCAT_TEST_STARTUP", "10"))
"""Seconds a bot process has to say Hello: the worker's 10, more in an emulated VM
(tests/hosts sets it), where an interpreter start takes seconds."""
BOUNDS = ["auto", "nproc"] if os.geteuid() == 0 else ["auto"]
"""The process-bound modes this user can have: the RLIMIT_NPROC fallback needs root (a
dedicated uid per bot); a non-root worker has its delegated pids cgroup alone."""


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


MEMORY = """
    import json
    try:
        hog = bytearray(1 << 30)
        print(json.dumps({"hog": "allocated"}))
    except MemoryError:
        print(json.dumps({"hog": "MemoryError"}))
"""
