"""Leaderboard deltas for ``WatchLeaderboard``: send a stream only the rows that changed.

At 200 versions a leaderboard is 200 standings and 19,900 crosstable pairs (~1.5 MB); a
result changes the counts of one pair and, through the refit, every rating and likelihood
a little. Each stream keeps, per row, the shown values it last sent (ratings at 0.1 Elo,
likelihoods at 0.001, counts and rank exactly) and sends the rows whose shown values
differ, so the client's merged table stays that close to the server's. A full table goes
first and every :data:`FULL_EVERY` updates, which also bounds the cost of a lost merge.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from google.protobuf.message import Message

from tacocat.protocol.proto.v1 import arena_pb2 as apb

FULL_EVERY: Final = 100
"""A full table every this many updates of a stream (the first one included)."""

_Shown = tuple[object, ...]


class DeltaEncoder:
    """Turns one stream's sequence of full updates into a full update and then deltas."""

    def __init__(self) -> None:
        self._standings: dict[str, _Shown] = {}
        self._pairs: dict[str, _Shown] = {}
        self._updates = 0

    def encode(self, update: apb.LeaderboardUpdate) -> apb.LeaderboardUpdate:
        board = update.leaderboard
        standings = {s.version: (_shown_standing(s), s) for s in board.standings}
        pairs = {f"{p.a}|{p.b}": (_shown_pair(p), p) for p in board.pairs}
        full = self._updates % FULL_EVERY == 0
        self._updates += 1
        if full:
            self._standings = {key: shown for key, (shown, _) in standings.items()}
            self._pairs = {key: shown for key, (shown, _) in pairs.items()}
            return update
        out = apb.LeaderboardUpdate(event=update.event, delta=True)
        out.status.CopyFrom(update.status)
        out.leaderboard.ladder = board.ladder
        out.leaderboard.version = board.version
        out.leaderboard.computed_at = board.computed_at
        _changed(standings, self._standings, out.leaderboard.standings,
                 out.removed_versions)
        _changed(pairs, self._pairs, out.leaderboard.pairs, out.removed_pairs)
        return out


def _changed(current: Mapping[str, tuple[_Shown, Message]], sent: dict[str, _Shown],
             rows: Any, removed: Any) -> None:
    """Append the rows whose shown values differ from ``sent`` and note them as sent; list
    the keys that are gone."""
    for key, (shown, message) in current.items():
        if sent.get(key) != shown:
            rows.add().CopyFrom(message)
            sent[key] = shown
    for key in [k for k in sent if k not in current]:
        del sent[key]
        removed.append(key)


def _shown_standing(s: apb.Standing) -> _Shown:
    rating = (round(s.rating, 1) if s.HasField("rating") else None,
              round(s.low, 1) if s.HasField("low") else None,
              round(s.high, 1) if s.HasField("high") else None)
    return (s.rank, s.active, *rating, round(s.elo, 1), s.matches, s.games, s.wins, s.ties,
            s.losses, s.aborted, tuple(sorted(s.forfeits.items())))


def _shown_pair(p: apb.PairStanding) -> _Shown:
    return (p.matches, p.games, p.wins, p.ties, p.losses, p.aborted, round(p.los, 3),
            round(p.fit_los, 3) if p.HasField("fit_los") else None)
