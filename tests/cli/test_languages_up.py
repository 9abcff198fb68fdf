"""JavaScript and C bots in ``tacocat up``'s arena, for real: written by ``tacocat new-bot
--language``, submitted as folders with ``tacocat submit DIR``, built in the sandbox,
smoke-tested, played in the demo ladder and rated; a C bot that does not compile is
rejected, and its owner reads why with ``tacocat bot build-log``."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .helpers import alive, as_foreground_job, clean_env, descendants

pytestmark = pytest.mark.slow

TINY = ["--port", "0", "--web-port", "0", "--games-per-pairing", "4", "--games-per-match", "2"]


def test_javascript_and_c_bots_are_smoke_tested_play_the_ladder_and_get_rated(
        tmp_path: Path) -> None:
    up = subprocess.Popen(
        [sys.executable, "-m", "tacocat.cli", "up", *TINY],
        cwd=tmp_path, env=clean_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, preexec_fn=as_foreground_job)  # noqa: PLW1509
    assert up.stdout is not None
    lines: list[str] = []
    children: list[int] = []
    try:
        deadline = time.monotonic() + 120
        for line in up.stdout:
            lines.append(line)
            if "tacocat leaderboard demo --watch" in line or time.monotonic() > deadline:
                break
        text = "".join(lines)
        banner = text[text.index("Enter a bot of your own"):].splitlines()[1:]
        setup = [line.strip() for line in banner if line.startswith("  export")
                 or "tacocat user create" in line]
        script = "\n".join([*setup,
                            "tacocat new-bot jsbot --language javascript",
                            "tacocat new-bot cbot --language c",
                            "tacocat new-bot broken --language c",
                            "echo 'int main(void) { return nope; }' > broken/bot.c",
                            "tacocat submit jsbot --ladder demo --wait",
                            "tacocat submit cbot/ --ladder demo --wait",
                            "tacocat submit broken --wait || echo broken-rejected",
                            "tacocat bot build-log alice/broken@1",
                            "for i in $(seq 240); do",
                            "  board=$(tacocat leaderboard demo)",
                            "  if echo \"$board\" | grep -Eq 'jsbot +@1 +alice +[1-9]' && "
                            "echo \"$board\" | grep -Eq 'cbot +@1 +alice +[1-9]'; then break; fi",
                            "  sleep 0.5",
                            "done",
                            "echo \"$board\""])
        pasted = subprocess.run(
            ["bash", "-ec", script], cwd=tmp_path,
            env=clean_env(PATH=f"{Path(sys.executable).parent}{os.pathsep}"
                               f"{os.environ['PATH']}"),
            capture_output=True, text=True, timeout=300, check=False)
        out = pasted.stdout + pasted.stderr
        assert pasted.returncode == 0, out
        assert "alice/jsbot@1 is active and plays in ladder demo" in out, out
        assert "alice/cbot@1 is active and plays in ladder demo" in out, out
        assert "alice/broken@1 was rejected: the build failed: exit code 1" in out, out
        assert "broken-rejected" in out
        assert re.search(r"error: .nope. undeclared", out), out  # the build log, its owner's
        assert re.search(r"jsbot\s+@1\s+alice\s+[1-9]", out), out
        assert re.search(r"cbot\s+@1\s+alice\s+[1-9]", out), out
        children = descendants(up.pid)
        up.send_signal(signal.SIGINT)
        up.communicate(timeout=60)
    finally:
        if up.poll() is None:
            up.kill()
            up.wait()
    time.sleep(0.2)
    assert not [pid for pid in children if alive(pid)], "processes left behind"
