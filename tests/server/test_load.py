"""The bounded loopback load test: live clients against one ``tacocat serve`` (with the arena)
while a ladder runs on real workers (``tacocat bench load``'s :func:`run_load`).

200 clients for 60 s by default; ``TACOCAT_LOAD_CLIENTS`` / ``TACOCAT_LOAD_SECONDS`` shrink
it on a busy machine. The assertions are about correctness, not throughput: no errors, every
live game ends with a result, every ladder match scheduled is recorded exactly once. The
figures (p50/p99 decision latency, decisions per second) are printed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import redis as redis_py

from tacocat_lab.bench.load import run_load

CLIENTS = int(os.environ.get("TACOCAT_LOAD_CLIENTS", "200"))
SECONDS = float(os.environ.get("TACOCAT_LOAD_SECONDS", "60"))

pytestmark = [pytest.mark.slow, pytest.mark.timeout(SECONDS + 300)]


def test_live_clients_under_load_with_a_ladder_lose_nothing(
        redis: redis_py.Redis, redis_url: str, tmp_path: Path) -> None:
    report = run_load(redis_url, clients=CLIENTS, seconds=SECONDS, folder=tmp_path)
    print("load:", json.dumps(report))
    logs = {p.name: p.read_text(errors="replace")[-2000:] for p in tmp_path.glob("*.log")}
    assert report["errors"] == 0, (report["error_samples"], logs)
    assert report["server_alive"], logs
    assert report["live_games"] >= CLIENTS  # every client finished at least one game
    assert report["decisions"] > 0 and report["p99_ms"] == report["p99_ms"]  # not NaN
    # Exactly once: every match scheduled is recorded, once in the ladder's log.
    assert report["ladder_matches_recorded"] == report["ladder_matches_scheduled"] > 0, report
    assert report["ladder_matches_logged"] == report["ladder_matches_recorded"], report
    assert report["ladder_games"] == report["ladder_games_target"], report
    assert report["ladder_ok"], report
