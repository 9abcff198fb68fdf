"""``tacocat bench scale`` and ``tacocat bench refit`` on small ladders: they run the real
arena to the end and report figures that hold together."""

from __future__ import annotations

import json
import subprocess
import sys


def bench(*args: str) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-m", "tacocat.cli", "bench", *args],
                          capture_output=True, text=True, timeout=300, check=True)
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_bench_scale_completes_the_round_robin_in_both_orders() -> None:
    result = bench("scale", "--bots", "8", "--games-per-pairing", "8", "--check-every", "0.1")
    rr = result["round_robin"]
    assert isinstance(rr, dict)
    # 9 bots with the entrant, 36 pairings of 4 matches each: every one recorded.
    for run in (result, rr):
        assert run["planned_matches"] == run["recorded_matches"] == 144
        assert isinstance(run["longest_wait"], int) and run["longest_wait"] > 0
    assert result["order"] == "converge" and rr["order"] == "round-robin"


def test_bench_refit_reports_its_figures() -> None:
    result = bench("refit", "--bots", "6", "--repeat", "2")
    assert result["pairs"] == 15
    for name in ("refit_cold_s", "refit_s", "fit_s", "status_ms", "ladder_page_ms"):
        value = result[name]
        assert isinstance(value, float) and value > 0, name


def test_bench_scale_until_converged_stops_early() -> None:
    result = bench("scale", "--bots", "6", "--games-per-pairing", "400", "--order", "converge",
                   "--entrant-at", "0.05", "--check-every", "0.05", "--until-converged")
    planned, recorded = result["planned_matches"], result["recorded_matches"]
    converged, entrant = result["converged_at"], result["entrant_matches_to_50"]
    assert isinstance(planned, int) and isinstance(recorded, int)
    assert isinstance(converged, int) and isinstance(entrant, int), result
    # 7 bots, 21 pairings of 200 matches: 4,200 planned; converged long before.
    assert planned == 4200 and converged <= recorded < planned
