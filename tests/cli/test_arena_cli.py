"""The arena commands end to end: ``tacocat serve`` (embedded Redis) in a subprocess, every
other command a subprocess too, as a user would type them."""

from __future__ import annotations

import json
import os
import re
import signal
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import redis as redis_py

from tacocat.arena import Arena
from tacocat.cli import build_parser, main
from tacocat.sdk import ArenaClient

from ..arena.helpers import HOUSE, play
from .helpers import clean_env, tacocat

COMMANDS = [
    ["submit"], ["bot", "list"], ["bot", "versions"], ["ladder", "create"], ["ladder", "join"],
    ["ladder", "status"], ["ladder", "list"], ["leaderboard"], ["match"], ["token", "create"],
    ["token", "list"], ["token", "revoke"], ["user", "create"], ["user", "register"],
    ["user", "whoami"], ["up"], ["replay"], ["play"],
]


@dataclass
class Served:
    home: Path
    address: str
    admin_token: str
    redis_url: str
    process: subprocess.Popen[str]
    stderr: list[str] = field(default_factory=list)

    def env(self, token: str | None = None) -> dict[str, str]:
        extra = {"TACOCAT_ADDRESS": self.address}
        if token is not None:
            extra["TACOCAT_TOKEN"] = token
        return clean_env(**extra)

    def run(self, *args: str, token: str | None = None,
            cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return tacocat(*args, cwd=cwd or self.home, env=self.env(token))


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    home = tmp_path_factory.mktemp("cli-home")
    data = home / ".tacocat" / "data"
    process = subprocess.Popen(
        [sys.executable, "-m", "tacocat.cli", "serve", "--port", "0", "--web-port", "0",
         "--data-dir", str(data), "--log-level", "WARNING"],
        cwd=home, env=clean_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None and process.stderr is not None
    stderr: list[str] = []
    reader = threading.Thread(target=lambda: stderr.extend(process.stderr or ()), daemon=True)
    reader.start()
    out = []
    address = ""
    for line in process.stdout:
        out.append(line)
        found = re.search(r"referee listening on (\S+)", line)
        if found:
            address = found.group(1)
            break
    assert address, f"serve did not start: {''.join(out)}{''.join(stderr)}"
    token = re.search(r"(tct_\S+)", "".join(out))
    assert token is not None, "the first start prints the admin token"
    url = re.search(r"at (redis://\S+)", "".join(stderr))
    assert url is not None, "".join(stderr)
    served = Served(home, address, token.group(1), url.group(1), process, stderr)
    try:
        yield served
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=20) == 0, "".join(stderr)
        reader.join(5)
        # The embedded Redis stopped with the server: its pid file is gone.
        assert not (data / "valkey.pid").exists()


def test_serve_saves_the_admin_token_for_local_tools(served: Served) -> None:
    path = served.home / ".tacocat" / "data" / "admin.token"
    assert path.read_text().strip() == served.admin_token
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    # No --token and no TACOCAT_TOKEN: the CLI on this machine uses the saved admin token.
    done = served.run("user", "whoami")
    assert done.returncode == 0, done.stderr
    assert "admin (admin), token from .tacocat/data/admin.token" in done.stdout
    # ... and says so, so nobody submits as admin without knowing.
    assert "no token given; using the local server's admin token" in done.stderr
    # A token given but empty never falls back to the admin token: it is an error.
    empty_flag = served.run("user", "whoami", "--token", "")
    assert empty_flag.returncode == 1 and "the token given is empty" in empty_flag.stderr
    assert "admin" not in empty_flag.stdout
    empty_env = served.run("user", "whoami", token="")
    assert empty_env.returncode == 1, empty_env.stdout
    assert "$TACOCAT_TOKEN is set but empty" in empty_env.stderr
    # A wrong one is refused, naming where it came from.
    wrong = served.run("user", "whoami", "--token", "tct_" + "y" * 43)
    assert wrong.returncode == 1 and "the token argument" in wrong.stderr
    assert "using the local server's admin token" not in wrong.stderr
    # ... but never sends it to another server, and a working directory without it is
    # anonymous.
    elsewhere = served.run("user", "whoami", cwd=served.home.parent)
    assert elsewhere.returncode == 1 and "needs a token" in elsewhere.stderr


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_every_command_has_help_with_an_example(command: list[str],
                                                capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        build_parser().parse_args([*command, "--help"])
    assert done.value.code == 0
    assert "example" in capsys.readouterr().out


def test_users_tokens_bots_and_ladders(served: Served, tmp_path: Path) -> None:
    admin = served.admin_token
    assert served.run("user", "create", "alice", token=admin).returncode == 0
    made = served.run("token", "create", "--user", "alice", "--label", "cli", token=admin)
    assert made.returncode == 0, made.stderr
    alice = made.stdout.strip()
    assert alice.startswith("tct_") and "\n" not in alice  # alone on stdout
    assert "shown once" in made.stderr

    bot = tmp_path / "mybot.py"
    bot.write_text("from tacocat.engine.bots import GreedyBot\n\n\n"
                   "class MyBot(GreedyBot):\n    pass\n")
    missing = served.run("submit", str(bot), "--ladder", "main", token=alice)
    assert missing.returncode == 1 and "no ladder 'main'" in missing.stderr
    assert "`tacocat ladder list` shows the ladders there are" in missing.stderr

    refused = served.run("ladder", "create", "main", token=alice)
    assert refused.returncode == 1 and "only admins may create ladders" in refused.stderr
    created = served.run("ladder", "create", "main", "--games-per-pairing", "4",
                         "--games-per-match", "2", "--no-house", token=admin)
    assert created.returncode == 0, created.stderr
    assert "4 games per pairing in 2 matches of 2" in created.stdout
    assert "house" not in created.stdout

    submitted = served.run("submit", str(bot), "--ladder", "main", token=alice)
    assert submitted.returncode == 0, submitted.stderr
    assert "submitted alice/mybot@1" in submitted.stdout
    # Not "joined": the smoke game may still reject it.
    assert "joined" not in submitted.stdout
    assert "plays in ladder main once its smoke game passes" in submitted.stdout
    # One bot alone: waiting, never "complete", and no "games 0/0 (100%)".
    lonely = served.run("ladder", "status", "main")
    assert "1 bot (0 playing) · waiting for opponents" in lonely.stdout, lonely.stdout
    assert "complete" not in lonely.stdout and "0/0" not in lonely.stdout

    # The same file for a second ladder: refused, saying how to enter the bot there.
    served.run("ladder", "create", "second", "--no-house", token=admin)
    again = served.run("submit", str(bot), "--ladder", "second", token=alice)
    assert again.returncode == 1
    assert ("mybot.py is already alice/mybot@1; add it to this ladder with `tacocat ladder "
            "join second mybot`") in again.stderr, again.stderr
    assert "joined" not in again.stdout
    joined = served.run("ladder", "join", "second", "mybot", token=alice)
    assert joined.returncode == 0 and "alice/mybot joined ladder second" in joined.stdout

    # By default a new ladder gets the house bots as baseline opponents.
    housed = served.run("ladder", "create", "housed", token=admin)
    assert housed.returncode == 0, housed.stderr
    assert re.search(r"house bots: house/random@\d+, house/greedy@\d+, house/strong@\d+",
                     housed.stdout), housed.stdout
    status = served.run("ladder", "status", "housed")
    assert "3 bots (0 playing) · waiting for opponents" in status.stdout, status.stdout
    # ... through a token made for it and revoked at once.
    tokens = served.run("token", "list", "--user", "house", token=admin)
    assert tokens.returncode == 0 and "house bots for ladder" not in tokens.stdout
    listed = served.run("bot", "list")
    assert re.search(r"mybot\s+alice\s+1\s+-", listed.stdout), listed.stdout
    versions = served.run("bot", "versions", "alice/mybot")
    assert "alice/mybot@1  pending" in versions.stdout
    assert "main" in served.run("ladder", "list").stdout

    # Refusals, each with its reason.
    anonymous = served.run("submit", str(bot), cwd=tmp_path)
    assert anonymous.returncode == 1 and "needs a token" in anonymous.stderr
    wrong = served.run("submit", str(bot), token="tct_" + "x" * 43)
    assert wrong.returncode == 1 and "unknown" in wrong.stderr and "$TACOCAT_TOKEN" in \
        wrong.stderr
    served.run("user", "create", "bob", token=admin)
    bob = served.run("token", "create", "--user", "bob", token=admin).stdout.strip()
    theft = served.run("submit", str(bot), "--name", "alice/mybot", token=bob)
    assert theft.returncode == 1 and "belongs to 'alice'" in theft.stderr
    joined = served.run("ladder", "join", "main", "alice/mybot", token=bob)
    assert joined.returncode == 1 and "only its owner" in joined.stderr
    # Self-service accounts are off unless the server opens them.
    register = served.run("user", "register", "carl", cwd=tmp_path)
    assert register.returncode == 1 and "does not take registrations" in register.stderr
    assert "--open-registration" in register.stderr


def test_the_latest_matches_of_a_ladder_of_over_a_thousand(served: Served) -> None:
    arena = Arena(redis_py.Redis.from_url(served.redis_url))
    admin = arena.users.authenticate(served.admin_token)
    arena.ladders.create(admin, "big", games_per_pairing=2, games_per_match=2)
    for i in range(47):  # 47 bots: 1,081 pairs, one match each
        version = arena.bots.submit(admin, f"b{i:02d}", "bot.py", f"# bot {i}\n".encode())
        arena.bots.activate(version.id)
        arena.ladders.join(admin, f"b{i:02d}", "big")
    created: list[str] = []
    arena.matches.schedule("big", created.append, rounds_ahead=1)
    assert len(created) == 1081
    in_order = [m.id for m in arena.matches.of_ladder("big", count=2000)]
    assert len(in_order) == 1081

    shown = served.run("match", "--ladder", "big", "--count", "3")
    assert shown.returncode == 0, shown.stderr
    rows = [line.split()[0] for line in shown.stdout.splitlines()[2:]]
    assert rows == in_order[-3:], shown.stdout  # the newest three, oldest of them first
    assert "the latest 3 of 1,081 matches in big (--count N shows more)" in shown.stderr

    # Past the server's 1,000 per request: the CLI fetches page after page.
    listed = served.run("match", "--ladder", "big", "--count", "1050", "--json")
    assert [m["id"] for m in json.loads(listed.stdout)] == in_order[-1050:]
    assert "the latest 1,050 of 1,081 matches" in listed.stderr
    everything = served.run("match", "--ladder", "big", "--count", "5000")
    assert everything.returncode == 0, everything.stderr
    assert len(everything.stdout.splitlines()) == 2 + 1081
    assert "the latest" not in everything.stderr  # all of them: nothing to say

    # The API pages from either end and says how many there are.
    with ArenaClient(served.address) as client:
        page = client.match_list("big", count=5000)
        assert [m.id for m in page.matches] == in_order[:1000]
        assert (page.total, page.max_count, page.partial) == (1081, 1000, True)
        tail = client.match_list("big", start=1000, count=1000)
        assert [m.id for m in tail.matches] == in_order[1000:] and tail.partial
        newest = client.match_list("big", count=2, newest_first=True, start=1)
        assert [m.id for m in newest.matches] == in_order[-2:-4:-1]


def test_leaderboard_status_match_and_replays(served: Served, tmp_path: Path) -> None:
    arena = Arena(redis_py.Redis.from_url(served.redis_url))
    admin = arena.users.authenticate(served.admin_token)
    arena.ladders.create(admin, "results", games_per_pairing=4, games_per_match=2)
    factories = {}
    for owner, kind in (("carol", "greedy"), ("dave", "random")):
        arena.users.create(admin, owner)
        user = arena.users.authenticate(arena.users.create_token(admin, owner))
        version = arena.bots.submit(user, "bot", "bot.py", f"# {owner}\n".encode())
        arena.bots.activate(version.id)
        arena.ladders.join(user, "bot", "results")
        factories[f"{owner}/bot"] = HOUSE[kind]
    queued: list[str] = []
    arena.matches.schedule("results", queued.append, rounds_ahead=1)
    (match_id,) = queued
    arena.matches.record(match_id, play(arena, arena.matches.get(match_id), factories))

    board = served.run("leaderboard", "results")
    assert board.returncode == 0, board.stderr
    assert "ladder results · 1 match recorded" in board.stdout  # not "1 matches"
    assert "ranked by rating" in board.stdout and "live Elo: the running per-game" in \
        board.stdout
    for header in ("#", "bot", "version", "owner", "rating", "95%", "Elo", "games", "W/T/L",
                   "forfeits"):
        assert header in board.stdout.splitlines()[1]
    assert re.search(r"1\s+bot\s+@1\s+carol\s+\d+\s+± \d+\s+\d+\s+2\s+\d/\d/\d", board.stdout)
    as_json = json.loads(served.run("leaderboard", "results", "--json").stdout)
    assert as_json["version"] == 1 and len(as_json["standings"]) == 2

    status = served.run("ladder", "status", "results")
    assert "round 1/2" in status.stdout and "matches 1 recorded" in status.stdout

    shown = served.run("match", match_id, "--replays", str(tmp_path / "m.jsonl"))
    assert shown.returncode == 0, shown.stderr
    assert f"match {match_id}" in shown.stdout and "seed" in shown.stdout
    numbers = [line.split()[0] for line in shown.stdout.splitlines()
               if re.match(r"\s*\d+\s+[01]\s", line)]
    assert numbers == ["1", "2"], shown.stdout  # games are numbered from 1, as on the web
    lines = (tmp_path / "m.jsonl").read_text().splitlines()
    assert len(lines) == 2 and json.loads(lines[0])["players"]
    assert match_id in served.run("match", "--ladder", "results").stdout

    # --watch: the first update arrives at once, as one JSON line.
    watch = subprocess.Popen(
        [sys.executable, "-m", "tacocat.cli", "leaderboard", "results", "--watch", "--json"],
        cwd=served.home, env=served.env(), stdout=subprocess.PIPE, text=True)
    try:
        assert watch.stdout is not None
        first = json.loads(watch.stdout.readline())
        assert first["event"] == "snapshot" and first["status"]["matches_recorded"] == 1
    finally:
        watch.terminate()
        watch.wait(10)


def test_leaderboard_help_says_which_column_ranks(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["leaderboard", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert 'Which column orders the table: "rating"' in text
    assert '"live Elo" is the per-game estimate' in text and "--retired" in text


def test_a_rejected_submission_never_said_it_joined(served: Served, tmp_path: Path) -> None:
    arena = Arena(redis_py.Redis.from_url(served.redis_url))
    admin = arena.users.authenticate(served.admin_token)
    arena.ladders.create(admin, "strict", games_per_pairing=4, games_per_match=2)
    arena.users.create(admin, "greta")
    token = arena.users.create_token(admin, "greta")
    bot = tmp_path / "fragile.py"
    bot.write_text("from tacocat.engine.bots import GreedyBot\n\n\n"
                   "class Fragile(GreedyBot):\n    pass\n")
    waiting = subprocess.Popen(
        [sys.executable, "-m", "tacocat.cli", "submit", str(bot), "--ladder", "strict",
         "--wait", "--wait-timeout", "60"],
        cwd=tmp_path, env=served.env(token), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)
    try:
        assert waiting.stdout is not None
        first = waiting.stdout.readline()
        assert "submitted greta/fragile@1" in first, first
        # The smoke game fails (as a worker would record it).
        arena.bots.reject("greta/fragile@1", "crash: the bot raised ValueError")
        out, err = waiting.communicate(timeout=30)
    finally:
        if waiting.poll() is None:
            waiting.kill()
            waiting.wait(10)
    assert waiting.returncode == 1, err
    assert "greta/fragile@1 was rejected: crash: the bot raised ValueError" in out
    assert "joined" not in first + out and "plays in ladder" not in first + out


def test_counts_are_said_in_the_right_number(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["play", "house:random", "house:greedy", "--games", "2", "--seed", "1"]) == 0
    assert "2 games (1 duplicate pair), seed '1'" in capsys.readouterr().out
    assert main(["play", "house:random", "house:greedy", "--games", "4", "--seed", "1"]) == 0
    assert "4 games (2 duplicate pairs)" in capsys.readouterr().out


def test_unreachable_servers_get_one_plain_line_in_cli_words(tmp_path: Path) -> None:
    unknown = tacocat("ladder", "list", "--server", "nosuchhost.invalid:50051", cwd=tmp_path)
    assert unknown.returncode == 1
    assert unknown.stderr.strip().splitlines() == [
        "tacocat ladder list: cannot find the host 'nosuchhost.invalid' of the arena server "
        "nosuchhost.invalid:50051: check the name (--server, $TACOCAT_ADDRESS) and this "
        "machine's network"], unknown.stderr
    closed = tacocat("ladder", "list", "--server", "127.0.0.1:1", cwd=tmp_path)
    assert closed.returncode == 1
    [line] = closed.stderr.strip().splitlines()
    assert "cannot reach the arena server at 127.0.0.1:1 (connection refused)" in line
    assert "add --tls (--tls-ca CA.pem for a private CA)" in line
    assert "tls=" not in line and "Python" not in line
