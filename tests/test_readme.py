"""The README works pasted in order: every ``sh`` block of README.md, except those marked
``<!-- readme-test: skip (why) -->`` on the line before, runs in one shell, in order, against
a real arena (``tacocat serve`` with its embedded Redis, one sandboxed ``tacocat worker``),
from a fresh folder as a newcomer's would be. A block that breaks fails this test, naming it.

Rewritten on the way, and only this: ``.venv/bin/`` (also ``../.venv/bin/``) becomes the
running venv's bin folder, and ``tacocat`` at a command's start becomes that folder's
``tacocat`` (the README says the examples mean either). The arena listens on free ports;
``$TACOCAT_ADDRESS`` points the commands at it, as the README says it does.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from .cli.helpers import ROOT, ArenaProcesses, clean_env

pytestmark = pytest.mark.slow

README = ROOT / "README.md"
SKIP = "<!-- readme-test: skip"
VENV_BIN = Path(sys.executable).parent


@dataclass(frozen=True)
class Block:
    line: int  # 1-based line of the opening fence
    text: str


def shell_blocks(text: str) -> tuple[list[Block], list[Block]]:
    """The README's ``sh`` blocks: (to run, skipped), each in order."""
    run: list[Block] = []
    skipped: list[Block] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```sh":
            end = lines.index("```", i + 1)
            before = next((x.strip() for x in reversed(lines[:i]) if x.strip()), "")
            block = Block(i + 1, "\n".join(lines[i + 1:end]))
            (skipped if before.startswith(SKIP) else run).append(block)
            i = end
        i += 1
    return run, skipped


def rewrite(command: str) -> str:
    bin_dir = str(VENV_BIN) + "/"
    command = re.sub(r"(\.\./)?\.venv/bin/", bin_dir, command)
    return re.sub(r"(?m)(^|\$\(|&&\s*|;\s*)tacocat\b", lambda m: m.group(1) + bin_dir + "tacocat",
                  command)


def script(blocks: list[Block]) -> str:
    parts = ["set -eu"]
    for block in blocks:
        parts.append(f"echo '### README.md line {block.line}' >&2")
        parts.append(rewrite(block.text))
    return "\n".join(parts) + "\n"


@pytest.fixture
def arena(tmp_path: Path) -> Iterator[tuple[ArenaProcesses, str]]:
    running = ArenaProcesses(tmp_path)
    try:
        address = running.start()
        yield running, address
    finally:
        running.stop()


def test_the_readme_blocks_are_found_and_every_skip_says_why() -> None:
    run, skipped = shell_blocks(README.read_text(encoding="utf-8"))
    text = README.read_text(encoding="utf-8")
    assert len(run) >= 4 and skipped
    assert text.count(SKIP) == len(skipped)  # no marker that skips nothing
    assert all(re.search(r"skip \(\w[^)]*\) -->", line) for line in text.splitlines()
               if line.startswith(SKIP))
    assert rewrite("x=$(tacocat token create)") == f"x=$({VENV_BIN}/tacocat token create)"
    assert rewrite("../.venv/bin/python a.py") == f"{VENV_BIN}/python a.py"
    # A broken block stops the script, and the last marker names it.
    broken = subprocess.run(["bash", "-c", script([Block(3, "true"), Block(7, "false"),
                                                   Block(9, "echo never")])],
                            capture_output=True, text=True, timeout=10, check=False)
    assert broken.returncode == 1 and "never" not in broken.stdout
    assert broken.stderr.strip().splitlines()[-1] == "### README.md line 7"


def test_the_readme_shell_blocks_work_pasted_in_order(arena: tuple[ArenaProcesses, str]) -> None:
    running, address = arena
    run, _ = shell_blocks(README.read_text(encoding="utf-8"))
    shell = subprocess.Popen(["bash", "-c", script(run)], cwd=running.home,
                             env=clean_env(TACOCAT_ADDRESS=address), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        stdout, stderr = shell.communicate(timeout=240)
    finally:  # a command that hangs must not outlive the test: its whole session goes
        with contextlib.suppress(ProcessLookupError):
            os.killpg(shell.pid, signal.SIGKILL)
        shell.wait(10)
    done = subprocess.CompletedProcess(shell.args, shell.returncode, stdout, stderr)
    if done.returncode != 0:
        failed = re.findall(r"### (README.md line \d+)", done.stderr)
        pytest.fail(f"the README block at {failed[-1] if failed else '?'} failed "
                    f"(exit {done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
                    f"\narena log:\n{''.join(running.logs)[-2000:]}", pytrace=False)
    out = done.stdout
    # What each step should have shown, beyond not failing.
    assert "into " in out and "mybot/" in out                    # new-bot says where
    assert "1,000 games" in out or "1000 games" in out             # tacocat play
    assert "created ladder main" in out and "house bots:" in out   # house bots by default
    assert "alice, token from $TACOCAT_TOKEN" in out              # the export took
    assert "alice/mybot@1 is active and plays in ladder main" in out
    assert re.search(r"ladder main · \d+ match(es)? recorded", out)
    assert "10 games:" in out                                      # the live games


USER_DOCS = [README, *sorted((ROOT / "docs").glob("*.md"))]
"""What users read: the README and docs/*.md (docs/measurements/ keeps the dated history)."""


def test_user_docs_are_guides_not_diaries() -> None:
    for path in USER_DOCS:
        text = path.read_text(encoding="utf-8")
        found = re.findall(r"(?i)\b(?:session \d+|(?:first|second|third|fourth|fifth) session|"
                           r"issue \d+)\b", text)
        assert not found, f"{path.name} mentions {found}: dated history goes to docs/measurements/"


BATCH_DEFAULT = re.compile(r"(?i)batch[^.;]{0,80}?\bdefault (?:is )?(\d+)|"
                           r"default(?: batch)? (?:is )?(\d+)[^.;]{0,40}?batch|"
                           r"arena's default is (\d+)")
"""A sentence that states the batch default: "--batch K ... (default 64)" and the like."""


def test_docs_agree_with_the_code_on_the_batch_default() -> None:
    from tacocat.referee import DEFAULT_BATCH  # noqa: PLC0415

    said = [(path.name, int(next(n for n in found.groups() if n)))
            for path in USER_DOCS
            for found in BATCH_DEFAULT.finditer(" ".join(path.read_text(encoding="utf-8")
                                                         .split()))]
    assert len(said) >= 3, f"fewer documents than expected state the batch default: {said}"
    assert all(n == DEFAULT_BATCH for _, n in said), said
