"""``WatchLeaderboard`` sends a full table, then only the rows that changed."""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Iterator

import grpc
import pytest
import redis as redis_py

from tacocat.arena import Arena
from tacocat.protocol.proto.v1 import arena_pb2 as apb
from tacocat.protocol.proto.v1 import arena_pb2_grpc as apb_grpc
from tacocat.sdk import ArenaApiError, ArenaClient
from tacocat.sdk.arena import LeaderboardUpdate
from tacocat.server._arena_delta import FULL_EVERY, DeltaEncoder

from ..arena.helpers import make_field
from .arena_server import ServerThread, serve_in_thread


@pytest.fixture(scope="module")
def running(redis_url: str) -> Iterator[ServerThread]:
    with serve_in_thread(Arena(redis_py.Redis.from_url(redis_url)),
                         watch_debounce=0.02) as server:
        yield server


def test_watch_sends_deltas_and_the_merged_table_is_the_servers(
    redis: redis_py.Redis, running: ServerThread
) -> None:
    field = make_field(redis)
    arena = field.arena
    arena.ladders.create(field.admin, "main", games_per_pairing=2, games_per_match=2)
    kinds = ["greedy", "random", "random2", "passive", "greedy", "random"]
    for i, kind in enumerate(kinds):
        field.add_bot(f"user{i}", kind, kind)
        arena.ladders.join(field.users[f"user{i}"], kind, "main")
    arena.matches.schedule("main", field.enqueue, rounds_ahead=None)
    for _ in range(8):  # a crosstable to start from: 8 of the 15 pairs met
        match = arena.matches.get(field.queue.pop(0))
        arena.matches.record(match.id, field.play(match))

    raw: queue.Queue[apb.LeaderboardUpdate] = queue.Queue()
    merged: queue.Queue[LeaderboardUpdate] = queue.Queue()
    channel = grpc.insecure_channel(running.address)
    stream = apb_grpc.ArenaStub(channel).WatchLeaderboard(
        apb.WatchLeaderboardRequest(ladder="main"))
    client = ArenaClient(running.address, None, timeout=10.0)

    def pump() -> None:
        with contextlib.suppress(grpc.RpcError):  # cancelled at the end
            for message in stream:
                raw.put(message)

    def watch() -> None:
        with contextlib.suppress(ArenaApiError):  # closed at the end
            for update in client.watch("main"):
                merged.put(update)

    threads = [threading.Thread(target=pump, daemon=True),
               threading.Thread(target=watch, daemon=True)]
    for thread in threads:
        thread.start()
    try:
        first = raw.get(timeout=10)
        assert not first.delta and len(first.leaderboard.pairs) == 8
        assert len(first.leaderboard.standings) == 6
        match = arena.matches.get(field.queue.pop(0))
        arena.matches.record(match.id, field.play(match))
        delta = raw.get(timeout=10)
        while delta.leaderboard.version < 9:
            assert delta.delta
            delta = raw.get(timeout=10)
        assert delta.delta and delta.event in ("result", "standings")
        # The pair that played is there. (In a ladder this small one result moves every
        # likelihood by more than 0.001, so most pairs are too: see the encoder's own test.)
        played = {(p.a, p.b) for p in delta.leaderboard.pairs}
        assert tuple(sorted((match.a, match.b))) in played
        assert not delta.removed_versions and not delta.removed_pairs

        # The SDK merges deltas: its table is the server's, to the precision deltas keep.
        update = merged.get(timeout=10)
        while update.leaderboard.version < 9:
            update = merged.get(timeout=10)
        server = arena.ladders.leaderboard("main")
        assert [s.version for s in update.leaderboard.standings] == [
            s.version for s in server.standings]
        for mine, theirs in zip(update.leaderboard.standings, server.standings, strict=True):
            assert theirs.rating is not None and mine.rating is not None
            assert mine.rating == pytest.approx(theirs.rating, abs=0.1)
            assert (mine.games, mine.wins, mine.losses) == (theirs.games, theirs.wins,
                                                            theirs.losses)
        assert len(update.leaderboard.pairs) == 9
        for mine_pair, theirs_pair in zip(update.leaderboard.pairs, server.pairs, strict=True):
            assert (mine_pair.a, mine_pair.b, mine_pair.games, mine_pair.wins) == (
                theirs_pair.a, theirs_pair.b, theirs_pair.games, theirs_pair.wins)
            assert mine_pair.fit_los == pytest.approx(theirs_pair.fit_los, abs=1e-3)
    finally:
        stream.cancel()
        client.close()
        channel.close()
        for thread in threads:
            thread.join(5)


def _board(version: int, ratings: list[float], pair_games: dict[tuple[int, int], int],
           los_shift: float) -> apb.LeaderboardUpdate:
    update = apb.LeaderboardUpdate(event="result")
    board = update.leaderboard
    board.ladder, board.version = "big", version
    order = sorted(range(len(ratings)), key=lambda i: -ratings[i])
    for rank, i in enumerate(order, 1):
        board.standings.add(rank=rank, version=f"v{i:03d}", rating=ratings[i],
                            low=ratings[i] - 40, high=ratings[i] + 40, elo=ratings[i],
                            games=sum(g for pair, g in pair_games.items() if i in pair))
    for (i, j), games in sorted(pair_games.items()):
        board.pairs.add(a=f"v{i:03d}", b=f"v{j:03d}", matches=games // 2, games=games,
                        wins=games // 2, losses=games - games // 2, los=0.5,
                        fit_los=min(1.0, 0.3 + 0.001 * (i + j) % 0.4 + los_shift))
    return update


def test_a_result_in_a_200_version_ladder_is_a_small_delta() -> None:
    n = 200
    ratings = [1500.0 + 7.3 * i for i in range(n)]
    games = {(i, j): 2 for i in range(n) for j in range(i + 1, n)}
    encoder = DeltaEncoder()
    full = encoder.encode(_board(100, ratings, games, 0.0))
    assert not full.delta and len(full.leaderboard.pairs) == 19_900
    # One result between v003 and v004: their pair's counts change, every rating moves a
    # hundredth of a point, and every fit likelihood by 1e-5 (below what deltas show).
    games[(3, 4)] += 2
    ratings = [r + 0.01 for r in ratings]
    ratings[3] += 2.0
    delta = encoder.encode(_board(101, ratings, games, 1e-5))
    assert delta.delta and delta.leaderboard.version == 101
    assert [(p.a, p.b) for p in delta.leaderboard.pairs] == [("v003", "v004")]
    assert {s.version for s in delta.leaderboard.standings} == {"v003", "v004"}
    assert delta.ByteSize() < full.ByteSize() / 1000
    # Small moves add up: once a value has drifted by a shown step, it is sent.
    drifted = encoder.encode(_board(102, [r + 0.1 for r in ratings], games, 1e-5))
    assert len(drifted.leaderboard.standings) == n
    # A version that left the table is named, with its pairs.
    ratings_without = ratings[:-1]
    games_without = {pair: g for pair, g in games.items() if n - 1 not in pair}
    gone = encoder.encode(_board(103, [r + 0.1 for r in ratings_without], games_without,
                                 1e-5))
    assert list(gone.removed_versions) == [f"v{n - 1:03d}"]
    assert len(gone.removed_pairs) == n - 1
    small = _board(104, ratings[:3], {(0, 1): 2, (1, 2): 2}, 0.0)
    for _ in range(FULL_EVERY - 4):
        assert encoder.encode(small).delta
    assert not encoder.encode(small).delta  # every FULL_EVERY updates: the whole table
