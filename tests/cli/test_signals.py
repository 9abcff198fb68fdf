"""Every command that starts processes leaves none behind on SIGINT, SIGTERM or SIGHUP.

Each command runs for real (its embedded Valkey included) until it is mid-run, then gets
the signal; afterwards no process of its tree may be alive.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from .helpers import as_foreground_job, clean_env
from .test_up import alive, descendants

pytestmark = pytest.mark.slow

SIGNALS = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP]

# command, the output line that says it is mid-run, the processes its tree has by then
COMMANDS = {
    "serve": (["serve", "--port", "0", "--web-port", "0"], "referee listening on",
              ["valkey-server"]),
    "worker": (["worker", "--workers", "1", "--grace", "1"], "Ctrl-C stops",
               ["valkey-server", "-m tacocat.worker"]),
    "bench": (["bench", "ladder", "--games-per-pairing", "400", "--workers", "1",
               "--no-baseline", "--insecure-no-sandbox"], "bench ladder:",
              ["valkey-server"]),
    "up": (["up", "--port", "0", "--web-port", "0", "--games-per-pairing", "4",
            "--games-per-match", "2", "--workers", "1"], "tacocat up: server at",
           ["valkey-server", "serve", "worker"]),
}


def _cmdlines(pids: set[int]) -> str:
    found = []
    for pid in pids:
        with contextlib.suppress(OSError):
            found.append(Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
                         .decode(errors="replace"))
    return "\n".join(found)


# tests/cli/test_up.py sends `up` a Ctrl-C after its demo.
CASES = [(name, sig) for name in sorted(COMMANDS) for sig in SIGNALS
         if (name, sig) != ("up", signal.SIGINT)]


@pytest.mark.parametrize(("name", "sig"), CASES,
                         ids=[f"{n}-{signal.Signals(s).name}" for n, s in CASES])
def test_a_signal_mid_run_leaves_no_process_behind(name: str, sig: int, tmp_path: Path) -> None:
    arguments, marker, expected = COMMANDS[name]
    process = subprocess.Popen(
        [sys.executable, "-m", "tacocat.cli", *arguments], cwd=tmp_path, env=clean_env(),
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        preexec_fn=as_foreground_job)  # noqa: PLW1509
    assert process.stdout is not None
    lines: list[str] = []
    seen = threading.Event()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)
            if marker in line:
                seen.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    tree: set[int] = set()
    try:
        assert seen.wait(120), "".join(lines)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # until every expected process runs
            tree = descendants(process.pid)
            running = _cmdlines(tree)
            if all(word in running for word in expected):
                break
            time.sleep(0.1)
        assert all(word in _cmdlines(tree) for word in expected), _cmdlines(tree)
        process.send_signal(sig)
        process.wait(60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        reader.join(5)
        time.sleep(0.2)
        left = {pid for pid in tree if alive(pid)}
        for pid in left:  # a failed run must not leave its tree running either
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    assert not left, f"left behind: {_cmdlines(left)}\n{''.join(lines)}"
    assert process.returncode in (0, 130), "".join(lines)
