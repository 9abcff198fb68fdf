"""``tacocat bench refit``: a refit and the ladder page of a ladder whose every pairing met.

Starts an embedded Redis, enters ``--bots`` bots in one ladder and writes one played match
per pairing straight into the ladder's counters (results drawn from known strengths; what
``arena.matches.record`` would have left, without playing half a million matches first). Then, each
``--repeat`` times, median reported:

- refit_cold_s: a refit that reads every pair's counters (the ``pairs`` hash: what every
  refit did before the snapshot kept them as arrays, and what the first refit of a ladder
  written by an older arena still does);
- refit_s: a refit after one more recorded match, as a worker does it: the snapshot's
  arrays plus the new log entry, the fit warm-started, the snapshot stored;
- fit_s: the fit alone, from the arrays, warm-started;
- status_ms: the ladder status (round-robin progress);
- ladder_page_ms / ladder_page_last_ms: the web ladder page as its handler builds it (read
  ladder, standings, crosstable block, status, recent matches, history; render the HTML),
  first and last standings page and crosstable block.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ._help import doc_parser

if TYPE_CHECKING:
    from tacocat.arena import Arena

LADDER: Final = "refit"
_CHUNK: Final = 20_000


def add_parser(kinds: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = doc_parser(kinds, "refit", "refit and ladder page of a ladder whose every pairing "
                   "met", __doc__)
    p.add_argument("--bots", type=int, default=200, help="bots in the ladder (default 200)")
    p.add_argument("--repeat", type=int, default=5, help="runs per figure (default 5)")
    p.add_argument("--seed", type=int, default=1, help="seed of strengths and results")
    p.set_defaults(run=bench_refit)


def bench_refit(args: argparse.Namespace) -> int:
    if args.bots < 2 or args.repeat < 1:
        print("tacocat bench refit: --bots must be >= 2 and --repeat >= 1", file=sys.stderr)
        return 2
    from redis import Redis  # noqa: PLC0415

    from tacocat.arena import (  # noqa: PLC0415
        Arena,
        EmbeddedValkey,
        Scheduling,
    )

    try:
        with tempfile.TemporaryDirectory(prefix="tacocat-refit-") as folder, \
                EmbeddedValkey(Path(folder) / "redis") as server:
            client = Redis.from_url(server.url)
            try:
                # A shallow queue: the refits need a few more matches, not half a million.
                arena = Arena(client, scheduling=Scheduling(queue_depth=args.repeat + 1))
                queue = _full_ladder(arena, args.bots, random.Random(args.seed))
                result = _measure(arena, queue, args.repeat)
            finally:
                client.close()
    except KeyboardInterrupt:
        print("tacocat bench refit: interrupted", file=sys.stderr)
        return 130
    result.update(bots=args.bots, pairs=args.bots * (args.bots - 1) // 2,
                  load_average=round(os.getloadavg()[0], 2))
    print(json.dumps(result), flush=True)
    return 0


def _full_ladder(arena: Arena, bots: int, rng: random.Random) -> list[str]:
    """Every pairing with one recorded 2-game match in the counters; returns the ids of
    the second round's matches (scheduled, for the refits after one more result)."""
    from tacocat.arena.ratings import expected_score  # noqa: PLC0415

    token = arena.users.bootstrap_admin()
    assert token is not None
    admin = arena.users.authenticate(token)
    arena.ladders.create(admin, LADDER, games_per_pairing=4, games_per_match=2)
    versions = []
    for i in range(bots):
        version = arena.bots.submit(admin, f"bot{i:04d}", "bot.py",
                                    f"# {i}\nfrom tacocat.engine import Bot\n".encode())
        arena.bots.activate(version.id)
        arena.ladders.join(admin, f"bot{i:04d}", LADDER)
        versions.append(version.id)
    versions.sort()
    truth = [rng.gauss(0.0, 200.0) for _ in versions]
    keys, redis = arena.keys, arena.redis
    pairs: dict[str, int] = {}
    stats: dict[str, int] = {}
    for x, a in enumerate(versions):
        for y in range(x + 1, len(versions)):
            p = expected_score(truth[x], truth[y])
            wins = sum(rng.random() < p for _ in range(2))
            field = f"{a}|{versions[y]}"
            pairs.update({f"{field}|matches": 1, f"{field}|games": 2, f"{field}|wins": wins,
                          f"{field}|losses": 2 - wins, f"{field}|ties": 0,
                          f"{field}|aborted": 0, f"{field}|scheduled": 1})
            for vid, won in ((a, wins), (versions[y], 2 - wins)):
                for counter, value in (("matches", 1), ("games", 2), ("wins", won),
                                       ("losses", 2 - won), ("ties", 0), ("aborted", 0)):
                    stats[f"{vid}|{counter}"] = stats.get(f"{vid}|{counter}", 0) + value
    matches = len(versions) * (len(versions) - 1) // 2
    for target, values in ((keys.pairs(LADDER), pairs), (keys.stats(LADDER), stats)):
        items = list(values.items())
        for start in range(0, len(items), _CHUNK):
            redis.hset(target, mapping=dict(items[start:start + _CHUNK]))
    redis.hset(keys.counters(LADDER), mapping={"results": matches, "games": 2 * matches,
                                               "created": matches})
    queue: list[str] = []
    arena.matches.schedule(LADDER, queue.append)
    return queue


def _measure(arena: Arena, queue: list[str], repeat: int) -> dict[str, Any]:
    from tacocat.arena import MatchGameResult, MatchResult, standings  # noqa: PLC0415
    from tacocat.arena.paircounts import read_pair_counts  # noqa: PLC0415
    from tacocat.arena.ratings import fit_arrays  # noqa: PLC0415
    from tacocat.arena.recording import record_match  # noqa: PLC0415
    from tacocat.engine import Reason  # noqa: PLC0415
    from tacocat.web import LadderView, Static, ladder_page, load_ladder  # noqa: PLC0415

    redis, keys = arena.redis, arena.keys

    def cold() -> None:
        redis.hdel(keys.standings(LADDER), "version", "pairs_meta", "pairs")
        standings.update_standings(redis, keys, LADDER)

    def warm() -> None:
        standings.update_standings(redis, keys, LADDER)

    def one_more() -> None:
        result = MatchResult((MatchGameResult(0, Reason.GOAL, "a"),
                              MatchGameResult(1, Reason.GOAL, "b")),
                             0.0)
        record_match(redis, keys, queue.pop(), result, fsync_timeout=None)

    out: dict[str, Any] = {"refit_cold_s": _median(cold, repeat),
                           "refit_s": _median(warm, repeat, before=one_more)}
    counts = read_pair_counts(redis, keys, LADDER)
    board = arena.ladders.leaderboard(LADDER)
    start = {s.version: s.rating for s in board.standings if s.rating is not None}
    wins, losses, ties = (counts.column(c) for c in ("wins", "losses", "ties"))
    out["fit_s"] = _median(lambda: fit_arrays(counts.names, counts.i, counts.j, wins, losses,
                                              ties, start=start), repeat)
    out["status_ms"] = round(1000 * _median(lambda: arena.ladders.status(LADDER), repeat), 1)
    static = Static()
    for name, view in (("ladder_page_ms", LadderView()),
                       ("ladder_page_last_ms", LadderView(page=10**5, block=10**5))):
        def page(view: LadderView = view) -> None:
            ladder_page(static, load_ladder(arena, LADDER, view=view), "/e")
        out[name] = round(1000 * _median(page, repeat), 1)
    out["refit_cold_over_warm"] = round(out["refit_cold_s"] / out["refit_s"], 1)
    return out


def _median(run: Callable[[], object], repeat: int,
            before: Callable[[], object] | None = None) -> float:
    times = []
    for _ in range(repeat):
        if before is not None:
            before()
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return round(statistics.median(times), 4)
