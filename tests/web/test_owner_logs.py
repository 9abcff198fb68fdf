"""Bot logs are their owner's only, end to end: ``tacocat serve`` and a sandboxed ``tacocat
worker`` as processes, a bot that prints a secret and raises exceptions quoting it, and every
way to read a match: its owner sees the stderr (gRPC, ``ArenaClient.logs``, ``tacocat match
--logs``, the JSON API with the owner's token, the viewer through the signed link in
Chromium); its opponent's owner, another user and anonymous readers never do, and the public
record, pages, API answers, metrics and the servers' own logs hold none of the bot's words."""

from __future__ import annotations

import gzip
import json
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tacocat.sdk.arena import ArenaClient, AuthError, MatchStatus, PermissionDeniedError

from ..cli.helpers import ArenaProcesses, clean_env, tacocat

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(240)]

SECRET = "hunter2-0d5e"
ESCAPED = "leaky: \\x1b]0;owned\\x07\\x1b[2Jcleared"  # as the owner reads it

# Plays greedy against the house bots (so it passes its smoke test); against bob's bot it
# prints the secret it "read" and raises in its attack: a built-in exception in seat 0, one
# of its own class (whose name is the secret too) in seat 1.
LEAKY = f'''\
import sys

from tacocat.engine.bots import GreedyBot

print("leaky: starting up", file=sys.stderr)


class Leak_{SECRET.replace("-", "_")}(Exception):
    pass


class Leaky(GreedyBot):
    opponent = ""

    def on_game_start(self, seat, ruleset, opponent):
        self.opponent, self.seat = opponent, seat

    def duel(self, obs):
        print("leaky: thinking about the duel, secret {SECRET}", file=sys.stderr)
        print("leaky: \\x1b]0;owned\\x07\\x1b[2Jcleared", file=sys.stderr)
        return super().duel(obs)

    def attack(self, obs):
        if "bob/" not in self.opponent:
            return super().attack(obs)
        if self.seat == 0:
            raise RuntimeError("I read {SECRET} in my sandbox")
        raise Leak_{SECRET.replace("-", "_")}("{SECRET}")
'''.encode()
GREEDY = b'''\
import sys

from tacocat.engine.bots import GreedyBot


class Plain(GreedyBot):
    def duel(self, obs):
        print("bob: my own words", file=sys.stderr)
        return super().duel(obs)
'''


def _played(running: ArenaProcesses, tmp_path: Path) -> tuple[str, dict[str, str]]:
    """A recorded match between alice's leaky bot and bob's plain one; the users' tokens."""
    admin_token = (tmp_path / ".tacocat" / "data" / "admin.token").read_text().strip()
    tokens: dict[str, str] = {}
    with ArenaClient(running.address, admin_token) as admin:
        admin.create_ladder("logs", games_per_pairing=4, games_per_match=4)
        for owner, bot, source in (("alice", "leaky", LEAKY), ("bob", "plain", GREEDY),
                                   ("carol", None, b"")):
            admin.create_user(owner)
            tokens[owner] = admin.create_token(owner).token
            if bot is not None:
                with ArenaClient(running.address, tokens[owner]) as client:
                    client.submit_bytes(f"{bot}.py", source, bot, "logs")
        deadline = time.monotonic() + 150
        while time.monotonic() < deadline:
            done = admin.matches("logs", status=MatchStatus.RECORDED)
            if done:
                tokens["admin"] = admin_token
                return done[0].id, tokens
            time.sleep(0.5)
    raise AssertionError("the match was not recorded in time:\n" + "".join(running.logs))


def _get(url: str, token: str | None = None) -> tuple[int, str, dict[str, str]]:
    request = urllib.request.Request(url)
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.read().decode(), dict(answer.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(), dict(exc.headers)


def test_a_bots_logs_reach_its_owner_and_nobody_else(running: ArenaProcesses, page: Any,
                                                     tmp_path: Path) -> None:
    match_id, tokens = _played(running, tmp_path)

    # The owner, over gRPC: the whole stderr, tracebacks and game markers included.
    with ArenaClient(running.address, tokens["alice"]) as alice:
        # The worker stores the logs right after recording the match: a moment later.
        deadline = time.monotonic() + 20
        (log,) = alice.logs(match_id).logs
        while not log.stored and time.monotonic() < deadline:
            time.sleep(0.1)
            (log,) = alice.logs(match_id).logs
        match = alice.match(match_id)
        records = alice.replays(match_id)
        blob = alice.replays_blob(match_id)
    assert log.stored and log.version == "alice/leaky@1"
    assert log.side == ("a" if match.a == "alice/leaky@1" else "b")
    assert "leaky: starting up" in log.games()[None]
    games = log.games()
    assert sorted(k for k in games if k is not None) == [1, 2, 3, 4]
    assert all(f"secret {SECRET}" in games[g] for g in (1, 2, 3, 4))
    assert f"RuntimeError: I read {SECRET} in my sandbox" in log.text
    assert "Traceback (most recent call last)" in log.text and 'bot.py", line' in log.text
    assert "bob: my own words" not in log.text  # the opponent's output is not hers
    assert "leaky: \x1b]0;owned\x07" in log.text  # the bytes as written, for a program

    # The public record: the fault and a fixed description, none of the bot's words.
    assert match.result is not None
    leaky = match.result.forfeits_a if log.side == "a" else match.result.forfeits_b
    assert leaky.get("crash", 0) >= 2, match.result
    details = sorted({r.result.detail.split(": ", 2)[-1] for r in records
                      if r.result.fault is not None})
    assert details == ["the bot raised an exception"], details
    assert SECRET.encode() not in gzip.decompress(blob)

    # The opponent's owner sees their own side only; another user, an admin and anonymous
    # callers nothing, with a message saying why.
    with ArenaClient(running.address, tokens["bob"]) as bob:
        (theirs,) = bob.logs(match_id).logs
    assert theirs.version == "bob/plain@1" and "bob: my own words" in theirs.text
    assert SECRET not in theirs.text
    for token in (tokens["carol"], tokens["admin"]):
        with ArenaClient(running.address, token) as other, \
                pytest.raises(PermissionDeniedError, match="owners' only"):
            other.logs(match_id)
    with ArenaClient(running.address) as anonymous:
        anonymous.token = None  # whatever token this machine holds
        with pytest.raises(AuthError, match="this call needs a token"):
            anonymous.logs(match_id)

    # The CLI, as the owner: the log and a signed link to the viewer.
    cli = tacocat("match", match_id, "--logs", "--game", "2", "--server", running.address,
                  "--token", tokens["alice"], cwd=tmp_path, env=clean_env())
    assert cli.returncode == 0, cli.stderr
    assert "--- alice/leaky@1" in cli.stdout and ", game 2:" in cli.stdout
    assert f"secret {SECRET}" in cli.stdout and "=== game" not in cli.stdout
    # Its escape sequences are shown, not handed to the owner's terminal.
    assert ESCAPED in cli.stdout and "\x1b" not in cli.stdout and "\x07" not in cli.stdout
    link = cli.stderr.strip().rsplit(" ", 1)[-1]
    assert link.startswith(f"{running.web}/matches/") and "logs=" in link, cli.stderr
    bad = tacocat("match", match_id, "--logs", "--game", "0", "--server", running.address,
                  "--token", tokens["alice"], cwd=tmp_path, env=clean_env())
    assert bad.returncode == 2 and "--game counts games from 1, not 0" in bad.stderr
    helped = tacocat("match", "--help", cwd=tmp_path, env=clean_env())
    assert "--logs" in helped.stdout and "its owner only" in helped.stdout
    refused = tacocat("match", match_id, "--logs", "--server", running.address, "--token",
                      tokens["carol"], cwd=tmp_path, env=clean_env())
    assert refused.returncode != 0 and "owners' only" in refused.stderr
    assert SECRET not in refused.stdout + refused.stderr

    # The web: public pages and JSON hold nothing of it.
    web = running.web
    for path in (f"/matches/{match_id}", f"/matches/{match_id}?game=1",
                 f"/api/matches/{match_id}", f"/api/matches/{match_id}/games/1",
                 f"/api/matches/{match_id}/games/2", "/ladders/logs", "/metrics",
                 "/bots/alice/leaky", "/api/bots/alice/leaky"):
        status, body, _ = _get(web + path)
        assert status == 200, (path, status, body)
        assert SECRET not in body and "in my sandbox" not in body, path
    # ... and the logs API answers the owner's token only.
    status, body, headers = _get(f"{web}/api/matches/{match_id}/logs", tokens["alice"])
    assert status == 200 and headers["Cache-Control"] == "private, no-store"
    (shown,) = json.loads(body)["logs"]
    assert SECRET in shown["games"]["3"] and shown["version"] == "alice/leaky@1"
    for token in (tokens["carol"], None, "tct_forged"):
        status, body, _ = _get(f"{web}/api/matches/{match_id}/logs", token)
        assert status == 403 and SECRET not in body, (token, status, body)

    # The viewer through the link: game 1's part beside its replay; the game links keep it.
    page.goto(link)
    page.wait_for_selector("#viewer[data-step]")
    panel = page.inner_text("#logs")
    assert "Your bot's logs" in panel and f"secret {SECRET}" in panel
    assert "alice/leaky@1 (side" in panel and ": game 1" in panel, panel[:300]
    assert ESCAPED in panel and "\x1b" not in panel, panel[:300]
    page.screenshot(path=str(tmp_path / "owner-logs.png"), full_page=True)
    page.click("a[aria-label='Replay game 3']")
    page.wait_for_selector("#logs")
    assert ": game 3" in page.inner_text("#logs")

    # A forged, altered or expired link shows nothing but why.
    token = link.split("logs=", 1)[1].split("&", 1)[0]
    sides, expires, mac = token.split(".")
    forged = [f"{sides}.{expires}.{'0' * 32}", f"ab.{expires}.{mac}",
              f"{sides}.{int(expires) + 3600}.{mac}", "nonsense"]
    for bad in forged:
        status, body, _ = _get(f"{web}/matches/{match_id}?logs={bad}")
        assert status == 403 and SECRET not in body, (bad, status)
    with ArenaClient(running.address, tokens["alice"]) as alice:
        short = alice.logs(match_id, link_seconds=1).link
    time.sleep(2.2)
    status, body, _ = _get(f"{web}/matches/{match_id}?logs={short}")
    assert status == 403 and "expired" in body and SECRET not in body
    # Nor did the server or the worker write the bot's words into their own logs.
    assert not [line for line in running.logs if SECRET in line]
