"""The bot log format (:mod:`tacocat.protocol.logs`): the cap, referee lines, game parts; and
a real host process whose output passes the cap."""

from __future__ import annotations

from pathlib import Path

from tacocat.engine import duplicate_pairs
from tacocat.engine.bots import GreedyBot
from tacocat.protocol.logs import LOG_CAP, CappedLog, LogCap, cut_notice, game_marker, split_games
from tacocat.referee import HostProcess, InProcessSeat, ProcessSeat, play_match


def test_the_cap_keeps_its_bytes_then_says_so_once() -> None:
    log = CappedLog(cap=10)
    log.write(b"12345")
    log.write(b"6789abcdef")
    log.write(b"more")
    assert log.cut and log.data == b"123456789a" + cut_notice(10)
    assert cut_notice(LOG_CAP) == b"\n[log cut at 64 KiB]\n"
    cap = LogCap(4)
    assert cap.take(b"abcd") == b"abcd" and not cap.cut and cap.take(b"") == b""
    assert cap.take(b"e").startswith(b"\n[log cut") and cap.take(b"f") == b""


def test_referee_lines_start_on_a_line_of_their_own() -> None:
    log = CappedLog()
    log.note("first")
    log.write(b"half a line")
    log.note("crash: exited with code 1\n")
    assert log.data == (b"[referee] first\nhalf a line\n"
                        b"[referee] crash: exited with code 1\n")


def test_a_log_splits_by_game_with_interleaved_parts_joined() -> None:
    text = ("start-up\n" + game_marker(0) + "one a\n" + game_marker(1) + "two\n"
            + game_marker(0) + "one b\n" + game_marker(2))
    assert split_games(text) == {None: "start-up\n", 0: "one a\none b\n", 1: "two\n"}
    assert split_games("") == {}


def test_a_host_that_floods_its_stderr_is_cut_at_the_cap(tmp_path: Path) -> None:
    bot = tmp_path / "loud.py"
    bot.write_text("import sys\nfrom tacocat.engine.bots import GreedyBot\n\n\n"
                   "class Loud(GreedyBot):\n    def duel(self, obs):\n"
                   "        print('x' * 10_000, file=sys.stderr)\n"
                   "        return super().duel(obs)\n")
    log = CappedLog()
    with HostProcess(str(bot), log=log) as host:
        played = play_match((ProcessSeat(host, 2.0), InProcessSeat(GreedyBot)),
                            duplicate_pairs(4, "loud"), names=("loud", "greedy"), batch=2)
    assert all(g.record.result.fault is None for g in played.games)  # printing is no fault
    assert log.cut and log.data.endswith(cut_notice())
    assert len(log.data) == LOG_CAP + len(cut_notice())
    assert log.data.startswith(game_marker(0).encode())
