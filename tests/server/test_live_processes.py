"""The referee and its clients as real processes over real gRPC on loopback."""

from __future__ import annotations

import pytest

from tacocat.engine import Fault, Reason
from tests.live_referee import PLAYERS, ServeProcess, client_report, run_client


def test_a_full_match_against_a_house_bot(referee: ServeProcess) -> None:
    report = client_report(run_client("healthy", referee.address, "solo", "4", "house:greedy"))
    results = report["results"]
    assert [r["seat"] for r in results] == [0, 1, 0, 1]
    assert all(r["reason"] in ("goal", "round_limit") for r in results)
    records = referee.records(lambda r: "anonymous/solo" in r.players, expect=4)
    assert len(records) == 4
    assert [r.players for r in records[:2]] == [("anonymous/solo", "house:greedy"),
                                                 ("house:greedy", "anonymous/solo")]
    assert records[0].seed.endswith("/0") and records[2].seed.endswith("/1")
    for record in records:
        record.replay()  # every record re-checks under the rules


def test_two_live_clients_are_paired(referee: ServeProcess) -> None:
    a = run_client("healthy", referee.address, "one", "4", "live", PLAYERS["alice"])
    b = run_client("healthy", referee.address, "two", "4", "live", PLAYERS["bob"])
    first, second = client_report(a), client_report(b)
    assert len(first["results"]) == len(second["results"]) == 4
    for x, y in zip(first["results"], second["results"], strict=True):
        assert x["seat"] != y["seat"]
        assert x["winner"] == y["winner"] and x["reason"] == y["reason"]
    records = referee.records(lambda r: "alice/one" in r.players, expect=4)
    assert len(records) == 4
    assert {frozenset(r.players) for r in records} == {frozenset({"alice/one", "bob/two"})}


@pytest.mark.parametrize(("mode", "fault"), [
    ("stall", Fault.TIMEOUT),
    ("illegal", Fault.ILLEGAL_ACTION),
    ("garbage", Fault.PROTOCOL),
    ("malformed", Fault.PROTOCOL),
    ("disconnect", Fault.DISCONNECT),
])
def test_a_faulty_client_forfeits_and_others_play_on(referee: ServeProcess, mode: str,
                                                     fault: Fault) -> None:
    healthy = run_client("healthy", referee.address, f"ok-{mode}", "6", "house:random")
    faulty = run_client(mode, referee.address, f"bad-{mode}")
    bad_report = client_report(faulty)
    player = f"anonymous/bad-{mode}"
    (first, *_) = referee.records(lambda r: player in r.players, expect=1)
    result = first.result
    assert result.reason is Reason.FORFEIT, result
    assert result.fault is fault, result
    assert first.players[result.offender] == player
    first.replay()
    if mode in ("garbage", "malformed"):
        # Told why, then the result; the match then went on with its next game.
        assert bad_report["seen"][:5] == ["game_start", "request", f"error:{3}", "result",
                                          "game_start"]
    good = client_report(healthy)
    assert good["exit"] == 0 and len(good["results"]) == 6
    assert not [r for r in good["results"] if r["reason"] == "forfeit"]
    assert referee.alive()
