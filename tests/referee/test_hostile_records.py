"""Hostile bots that try to publish what they chose through the public record (issue 30).

Each bot is a real host process (``python -m tacocat.sdk.host``) whose bot code encodes a
marker in something the referee might quote: the cards of an illegal answer (64 int32s,
or a few), a forged think time, its exit code, the signal it kills itself with, the name
of its exception's class, a Hello naming another protocol. The record (every game's JSON,
as replays, pages and the API show it) must hold none of it; the owner's log keeps it.
And what a bot writes to stderr reaches its owner's terminal and page as text: escape
sequences shown, never obeyed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tacocat.arena.logs import MatchLog
from tacocat.cli._logs_cmds import log_text
from tacocat.engine import Fault, duplicate_pairs
from tacocat.engine.bots import GreedyBot
from tacocat.protocol.logs import CappedLog, shown_as_text
from tacocat.referee import HostProcess, InProcessSeat, PlayedMatch, ProcessSeat, play_match
from tacocat.sdk import arena as sdk_arena
from tacocat.web._logs_view import logs_panel

SECRET = "/tmp/tacocat-match-4242-q/a boot=6f1c uid=1600000007"


def _int32s(text: str) -> list[int]:
    data = text.encode() + b"\0" * (-len(text) % 4)
    return [int.from_bytes(data[i:i + 4], "little", signed=True) for i in range(0, len(data), 4)]


PAYLOAD = _int32s(SECRET)
HEADER = ("import os, signal, sys\nfrom tacocat.engine.bots import GreedyBot\n\n\n"
          "class Hostile(GreedyBot):\n    name = 'hostile'\n\n")

BOTS: dict[str, tuple[str, Fault, list[str]]] = {
    # name: (the duel method's body and anything before the class, the fault, markers that
    # must stay out of the record)
    "many_cards": ("    def replace(self, obs):\n"
                   f"        return {(PAYLOAD * 4)[:64]!r}\n",
                   Fault.ILLEGAL_ACTION, [str(v) for v in PAYLOAD]),
    "few_cards": ("    def replace(self, obs):\n"
                  f"        return {PAYLOAD[:3]!r}\n",
                  Fault.ILLEGAL_ACTION, [str(v) for v in PAYLOAD[:3]]),
    "exit_code": ("    def duel(self, obs):\n        os._exit(173)\n",
                  Fault.CRASH, ["173"]),
    "signal": ("    def duel(self, obs):\n        os.kill(os.getpid(), signal.SIGUSR2)\n",
               Fault.CRASH, ["SIGUSR2", "signal 12"]),
    "class_name": ("    def duel(self, obs):\n"
                   "        raise type('Uid1600000007BootId6f1c', (Exception,), {})('x')\n",
                   Fault.CRASH, ["Uid1600000007", "6f1c"]),
    "builtin_class": ("    def duel(self, obs):\n        raise UnicodeTranslateError("
                      "'a', 0, 1, 'r')\n", Fault.CRASH, ["UnicodeTranslateError"]),
}
FORGED = ("import tacocat.sdk._session as session\n"  # the host is the bot's to rewrite
          "session._micros = lambda since: 9_223_372_036_854_775\n")


def _play(tmp_path: Path, name: str, source: str,
          timed: list[float] | None = None) -> tuple[PlayedMatch, str]:
    bot = tmp_path / f"{name}.py"
    bot.write_text(source)
    log = CappedLog()
    with HostProcess(str(bot), log=log) as host:
        seat = ProcessSeat(host, 2.0, on_decision=None if timed is None else timed.append)
        played = play_match((seat, InProcessSeat(GreedyBot)),
                            duplicate_pairs(2, "covert"), names=("hostile", "house:greedy"))
    return played, log.data.decode()


def _public(played: PlayedMatch) -> str:
    return "\n".join(json.dumps(g.record.to_json()) for g in played.games)


@pytest.mark.parametrize("name", sorted(BOTS))
def test_a_bot_publishes_nothing_it_chose_through_its_forfeits(tmp_path: Path,
                                                               name: str) -> None:
    body, fault, markers = BOTS[name]
    played, _ = _play(tmp_path, name, HEADER + body)
    results = [g.record.result for g in played.games]
    assert all(r.fault is fault for r in results), results
    public = _public(played)
    for marker in markers:
        assert marker not in public, (marker, [r.detail for r in results])
    assert SECRET not in public


def test_the_owner_reads_what_the_record_leaves_out(tmp_path: Path) -> None:
    played, said = _play(tmp_path, "exit_code", HEADER + BOTS["exit_code"][0])
    assert all(g.record.result.detail.endswith("its process exited") for g in played.games)
    assert "exited with code 173" in said  # the referee's note in the owner's log


def test_a_forged_think_time_is_never_quoted(tmp_path: Path) -> None:
    # Issue 30: "timeout: took 9.22e+12 s", a number of the bot's choosing, in the record.
    timed: list[float] = []  # what the worker's decision metrics hear
    played, _ = _play(tmp_path, "forged", FORGED + HEADER + "    pass\n", timed)
    public = _public(played)
    for marker in ("9.22e", "9223372036", "9.2e"):
        assert marker not in public, public
    assert timed and max(timed) < 30, timed  # never the 9.2e12 s it reported


ESCAPES = "\x1b]0;owned\x07\x1b[2J\x1b[1;1H\r\u202eevil\x9b31m"


def test_a_bots_escape_sequences_are_shown_as_text(tmp_path: Path) -> None:
    source = (HEADER + "    def duel(self, obs):\n"
              f"        print({ESCAPES!r}, file=sys.stderr)\n"
              "        return super().duel(obs)\n")
    played, said = _play(tmp_path, "escapes", source)
    assert all(g.record.result.fault is None for g in played.games)  # printing is no fault
    assert ESCAPES in said  # the owner's log keeps the bytes as they were written
    owner = sdk_arena.BotLog(side="a", version="mal/escapes@1", text=said, stored=True)
    for shown in (log_text(owner), log_text(owner, game=1), str(logs_panel(
            [MatchLog("m", "a", "mal/escapes@1", said, True)], None))):
        assert not any(c in shown for c in "\x1b\x07\r\u202e\x9b"), repr(shown)
        assert "\\x1b]0;owned\\x07\\x1b[2J" in shown and "\\u202eevil\\x9b31m" in shown
    assert shown_as_text("tab\tand\nnewline stay") == "tab\tand\nnewline stay"
