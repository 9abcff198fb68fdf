"""A hostile C or JavaScript bot is contained as a Python one is (tests/worker/
test_sandbox_limits.py and test_sandbox.py have the Python versions): a fork (or spawn) bomb
hits the process bound, a memory hog the address-space limit, a network attempt is refused;
nothing it started outlives it. The C program is built the arena's way (in the sandbox,
:func:`build_bot`) and run as a bot is; as a submitted bot, its fault is a recorded forfeit,
never a crashed worker. The JavaScript one runs under the worker's default policy, the one
node runs under in the arena (V8 reserves more address space at start than the C tests'
512 MiB)."""

from __future__ import annotations

import shutil
import subprocess
import uuid
from dataclasses import replace
from pathlib import Path

import pytest
import redis as redis_py

from tacocat.cli._newbot import write_starter
from tacocat.protocol.manifest import load_manifest
from tacocat.worker import JobContext, Launcher, WorkerSettings, run_smoke_test
from tacocat.worker.build import build_bot
from tacocat.worker.sandbox import (
    BOT_DIR,
    SandboxedCommand,
    SandboxPolicy,
    sandboxed_command,
)

from .sandbox_helpers import POLICY, Bots, processes_with, wait_until_gone
from .worker_helpers import SANDBOX, make_field

pytestmark = [pytest.mark.timeout(90),
              pytest.mark.usefixtures("secrets_in_parent", "no_leftover_cgroups")]

HOSTILE_C = r"""
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "fork") == 0) {
        int made = 0;
        for (;;) {
            pid_t pid = fork();
            if (pid == 0) { pause(); _exit(0); }
            if (pid < 0) break;
            made++;
        }
        printf("bounded after %d forks: errno %d\n", made, errno);
        fflush(stdout);
        pause();
    }
    if (argc > 1 && strcmp(argv[1], "memory") == 0) {
        char *hog = malloc((size_t)1 << 30);
        if (hog) memset(hog, 1, (size_t)1 << 30);
        printf("hog %s\n", hog ? "allocated" : "refused");
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "network") == 0) {
        int inet = socket(AF_INET, SOCK_STREAM, 0);
        printf("inet %s errno %d\n", inet < 0 ? "refused" : "opened", inet < 0 ? errno : 0);
        if (inet >= 0) {
            struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(53),
                                     .sin_addr.s_addr = htonl(0x01010101)};
            printf("connect %d\n", connect(inet, (struct sockaddr *)&to, sizeof to));
        }
        int local[2];
        printf("unix %s\n", socketpair(AF_UNIX, SOCK_STREAM, 0, local) == 0 ? "ok" : "refused");
        return 0;
    }
    return 2;
}
"""


def _built(bots: Bots, marker: str) -> Path:
    folder = bots.make("mallory", {"hostile.c": HOSTILE_C,
                                   "bot.toml": f'build = ["cc", "-O1", "-o", "{marker}", '
                                               f'"hostile.c"]\ncommand = ["./{marker}"]\n'})
    build_bot(Launcher(POLICY, sandbox=SANDBOX), folder, load_manifest(folder))
    assert (folder / marker).is_file()
    return folder


def _run(bots: Bots, mode: str, policy: SandboxPolicy = POLICY) -> str:
    marker = f"hostile_{uuid.uuid4().hex[:12]}"
    folder = _built(bots, marker)
    return _output(sandboxed_command(policy, folder, [f"{BOT_DIR}/{marker}", mode]), marker)


def _output(cmd: SandboxedCommand, marker: str) -> str:
    """What the sandboxed ``cmd`` printed, run to its end; nothing of it left running."""
    try:
        done = subprocess.run(stdin=subprocess.DEVNULL, capture_output=True, timeout=30,
                              check=False, **cmd.popen_kwargs())
    finally:
        cmd.close()
    assert not processes_with(marker), "processes left running after close()"
    return done.stdout.decode() + done.stderr.decode()


def _bounded_then_killed(cmd: SandboxedCommand, marker: str, refusal: str,
                         max_processes: int) -> None:
    """A bomb's first line says the process bound refused it (``refusal``), it runs at most
    ``max_processes`` processes (threads count against the bound too), and killing the
    command leaves none of them."""
    proc = subprocess.Popen(stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, **cmd.popen_kwargs())
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().decode()
        assert line.startswith("bounded after") and refusal in line, line
        running = processes_with(marker, bwrap=False)
        assert 1 < len(running) <= max_processes, running
        cmd.kill()
        assert not processes_with(marker, bwrap=False)
        assert not wait_until_gone(marker)
    finally:
        proc.kill()
        proc.wait()
        cmd.close()
    assert not processes_with(marker)


def test_a_c_memory_hog_hits_the_address_space_limit(bots: Bots) -> None:
    assert "hog refused" in _run(bots, "memory")


def test_a_c_bot_reaches_no_network(bots: Bots) -> None:
    out = _run(bots, "network")
    assert "inet refused errno 1" in out or "inet refused errno 13" in out, out
    assert "unix ok" in out, out  # as for Python: AF_UNIX stays (it reaches nothing)


def test_a_c_fork_bomb_is_bounded_and_killed(bots: Bots) -> None:
    marker = f"bomb_{uuid.uuid4().hex[:12]}"
    folder = _built(bots, marker)
    policy = replace(POLICY, process_bound="auto")
    cmd = sandboxed_command(policy, folder, [f"{BOT_DIR}/{marker}", "fork"])
    _bounded_then_killed(cmd, marker, "errno 11", policy.max_processes)


def test_a_submitted_c_bot_that_fork_bombs_forfeits_and_the_worker_carries_on(
        redis: redis_py.Redis, tmp_path: Path) -> None:
    """The starter, with a fork bomb at its first decision: the smoke game records the
    forfeit, the version is rejected, nothing of it keeps running."""
    write_starter("bomber", "c", tmp_path)
    folder = tmp_path / "bomber"
    bot = (folder / "bot.c").read_text().replace(
        "int decide(const tc_request *req, int32_t *cards) {\n",
        "#include <unistd.h>\nint decide(const tc_request *req, int32_t *cards) {\n"
        "    for (;;) if (fork() < 0) { for (;;) {} }\n", 1)
    (folder / "bot.c").write_text(bot)
    marker = f"bomber_{uuid.uuid4().hex[:12]}"  # the binary's name: what to look for after
    (folder / "bot.toml").write_text(f'language = "c"\nbuild = ["cc", "-o", "{marker}", '
                                     f'"bot.c", "tacocat.c"]\ncommand = ["./{marker}"]\n')
    import io  # noqa: PLC0415
    import zipfile  # noqa: PLC0415

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in folder.iterdir():
            archive.write(path, path.name)
    settings = WorkerSettings(smoke_decision_seconds=0.5, lease=3, sandbox=SANDBOX)
    context = JobContext(settings, Launcher(settings.sandbox_policy(), sandbox=SANDBOX), "t")
    field = make_field(redis)
    version = field.arena.bots.submit(field.user("eve"), "bomber", "b.zip",
                                      buffer.getvalue()).id
    report = run_smoke_test(field.arena, version, context)
    assert report.outcome == "rejected", report
    assert "timeout" in report.reason, report.reason
    assert not wait_until_gone(marker)


HOSTILE_JS = r"""
const mode = process.argv[2];
if (mode === "memory") {
  try { const hog = Buffer.alloc(1 << 30, 1); console.log("hog allocated " + hog.length); }
  catch (e) { console.log("hog refused: " + e.message); }
} else if (mode === "network") {
  const inet = require("net").connect(53, "1.1.1.1");
  inet.on("connect", () => { console.log("inet connected"); process.exit(0); });
  inet.on("error", (e) => { console.log("inet refused " + e.code); process.exit(0); });
} else if (mode === "spawn") {
  const { spawn } = require("child_process");
  let made = 0, refused = false;
  const refuse = (e) => {
    if (!refused) { refused = true; console.log("bounded after " + made + " spawns: " + e.code); }
  };
  const more = () => {
    if (refused) return;
    try {
      const child = spawn(process.execPath, [__filename, "idle"], { stdio: "ignore" });
      child.on("error", refuse);
      made++;
      setTimeout(more, 5);
    } catch (e) { refuse(e); }
  };
  more();
  setInterval(() => {}, 1000);
} else if (mode === "idle") {
  setInterval(() => {}, 1000);
}
"""
JS_POLICY = replace(WorkerSettings().sandbox_policy(), process_bound="auto")
"""The worker's default bot policy: what a JavaScript bot gets in the arena."""


def _js(bots: Bots, marker: str, mode: str) -> SandboxedCommand:
    folder = bots.make("mallory-js", {f"{marker}.js": HOSTILE_JS})
    node = shutil.which("node")
    assert node is not None, "node is not installed: ./dev setup installs nodejs"
    return sandboxed_command(JS_POLICY, folder, [node, f"{BOT_DIR}/{marker}.js", mode])


def _run_js(bots: Bots, mode: str) -> str:
    marker = f"hostile_{uuid.uuid4().hex[:12]}"
    return _output(_js(bots, marker, mode), marker)


def test_a_javascript_memory_hog_is_refused_its_gigabyte(bots: Bots) -> None:
    out = _run_js(bots, "memory")
    assert "hog refused" in out, out


def test_a_javascript_bot_reaches_no_network(bots: Bots) -> None:
    out = _run_js(bots, "network")
    assert "inet refused EPERM" in out or "inet refused EACCES" in out, out


def test_a_javascript_spawn_bomb_is_bounded_and_killed(bots: Bots) -> None:
    marker = f"bomb_{uuid.uuid4().hex[:12]}"
    _bounded_then_killed(_js(bots, marker, "spawn"), marker, "EAGAIN", JS_POLICY.max_processes)
