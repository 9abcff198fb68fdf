"""Match folders hold both bots' sources: a sweep removes those of dead horses only."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from tacocat.worker._folders import match_folder, sweep_if_due, sweep_match_folders


def _dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def test_a_sweep_removes_the_folders_of_dead_horses_only(tmp_path: Path) -> None:
    dead, alive = _dead_pid(), os.getpid()
    folders = {name: tmp_path / name for name in (
        f"tacocat-match-{dead}-abc", f"tacocat-smoke-{dead}-def", f"tacocat-match-{alive}-ghi",
        "tacocat-match-legacy", "tacocat-matches", f"other-{dead}")}
    for folder in folders.values():
        (folder / "a").mkdir(parents=True)
        (folder / "a" / "bot.py").write_text("secret strategy\n")
    old = time.time() - 7200
    os.utime(folders["tacocat-match-legacy"], (old, old))

    removed = sweep_match_folders(tmp_path)

    assert sorted(removed) == sorted([f"tacocat-match-{dead}-abc", f"tacocat-smoke-{dead}-def",
                                      "tacocat-match-legacy"])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [f"tacocat-match-{alive}-ghi", "tacocat-matches", f"other-{dead}"])
    assert sweep_if_due(tmp_path) == []  # swept a moment ago: not due yet


def test_a_match_folder_is_named_after_its_process() -> None:
    with match_folder() as folder:
        assert Path(folder).name.startswith(f"tacocat-match-{os.getpid()}-")
        assert sweep_match_folders(Path(folder).parent).count(Path(folder).name) == 0
    assert not Path(folder).exists()
