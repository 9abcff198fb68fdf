"""How the worker starts a bot's interpreter: ``python -S`` (no ``site``) for its own
interpreter, whose site-packages folders it then puts on ``PYTHONPATH``; another
interpreter keeps its own ``site``, since those folders would be the wrong ones for it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from tacocat.worker.launch import BotSpec, Launcher

HOUSE = BotSpec("greedy", Path("/tmp"), "house:greedy", trusted=True)


def test_the_workers_own_interpreter_starts_without_site_and_gets_its_folders() -> None:
    command = Launcher(sandbox=False).command(HOUSE)
    try:
        assert command.argv[:3] == [sys.executable, "-S", "-m"]
        path = command.env["PYTHONPATH"].split(os.pathsep)
        assert [p for p in sys.path if p.endswith("-packages")] == \
            [p for p in path if p.endswith("-packages")]
    finally:
        command.close()


def test_another_interpreter_keeps_its_site(tmp_path: Path) -> None:
    other = tmp_path / "python3"
    other.symlink_to("/bin/true")  # never run: only its path matters
    command = Launcher(sandbox=False, python=str(other)).command(HOUSE)
    try:
        assert command.argv[:2] == [str(other), "-m"]
        path = command.env.get("PYTHONPATH", "").split(os.pathsep)
        assert not any(p.endswith("-packages") for p in path)
    finally:
        command.close()
