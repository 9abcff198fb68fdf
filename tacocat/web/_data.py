"""What the pages and the JSON API show, read from the synchronous :class:`Arena`.

The loaders here block (they talk to Redis through the sync client); the handlers run them in
a worker thread (``asyncio.to_thread``). The ``*_json`` functions are the JSON API's shapes,
shared by the HTML pages so both always show the same data.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from tacocat.arena import (
    Arena,
    Ladder,
    LadderStatus,
    Leaderboard,
    LogEntry,
    Match,
    MatchStatus,
    PairStanding,
    Standing,
)
from tacocat.arena.history import RatingHistory, rating_history
from tacocat.arena.live import LiveMatch
from tacocat.engine import GameRecord
from tacocat.models import SIDES

from ._replay import replay_view

RECENT_MATCHES = 15
"""Recent matches on the ladder page."""
CROSSTABLE_LIMIT = 24
"""Versions in one block of the crosstable (a block at a time; the JSON endpoint has them
all)."""
STANDINGS_PER_PAGE = 50
"""Rows on one page of the standings table."""


def split_version(version: str) -> tuple[str, str, str]:
    """``(owner, bot name, number)`` of ``owner/name@N``, for any string (never raises:
    the parts of a malformed id come back as they are, to be shown escaped)."""
    bot, _, number = version.rpartition("@")
    if not bot:
        bot, number = version, ""
    owner, slash, name = bot.partition("/")
    if not slash:
        owner, name = "", bot
    return owner, name, number


# -- ladders ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class LadderSummary:
    ladder: Ladder
    status: LadderStatus
    leaders: tuple[Standing, ...] = ()


@dataclass(frozen=True)
class LadderView:
    """Which part of a big ladder the page shows: standings page ``page`` (of
    :data:`STANDINGS_PER_PAGE` rows) and crosstable block ``block`` (the versions ranked
    ``(block - 1) * CROSSTABLE_LIMIT + 1`` onwards, against each other)."""

    page: int = 1
    block: int = 1

    @classmethod
    def from_query(cls, query: Mapping[str, str]) -> LadderView:
        """From the URL's ``?page=&block=``; ValueError saying what is wrong."""
        values = {}
        for name in ("page", "block"):
            raw = query.get(name, "1")
            if not (raw.isascii() and raw.isdigit() and 1 <= int(raw) <= 100_000):
                raise ValueError(f"{name} must be a whole number from 1, got {raw[:20]!r}")
            values[name] = int(raw)
        return cls(**values)

    @property
    def query(self) -> str:
        """The URL query that selects this view ("" for the first page and block)."""
        return "" if self == LadderView() else f"?page={self.page}&block={self.block}"


@dataclass(frozen=True)
class LadderSnapshot:
    """Everything the ladder page shows, read at about the same moment."""

    ladder: Ladder
    status: LadderStatus
    board: Leaderboard
    recent: tuple[LogEntry, ...]
    history: RatingHistory
    view: LadderView = field(default_factory=LadderView)
    live: tuple[LiveMatch, ...] = ()
    """Matches being played now."""

    @property
    def version(self) -> int:
        return max(self.board.version, self.status.version)


LEADERS = 3
"""Best versions shown per ladder on the home page."""


def load_ladders(arena: Arena) -> list[LadderSummary]:
    ladders = sorted(arena.ladders.all(), key=lambda lad: lad.name)
    out = []
    for lad in ladders:
        board = arena.ladders.leaderboard(lad.name)
        # Retired versions keep their results but are not "the leaders" any more.
        leaders = tuple(s for s in board.standings
                        if s.rating is not None and s.active)[:LEADERS]
        out.append(LadderSummary(lad, arena.ladders.status(lad.name), leaders))
    return out


def load_ladder(arena: Arena, name: str, *, recent: int = RECENT_MATCHES,
                view: LadderView | None = None) -> LadderSnapshot:
    """Raises :class:`~tacocat.arena.NotFound` (or ``InvalidArgument`` for a bad name)."""
    ladder = arena.ladders.get(name)
    board = arena.ladders.leaderboard(name)
    status = arena.ladders.status(name)
    log = arena.ladders.recent_matches(name, recent)
    history = _history(arena, name)
    return LadderSnapshot(ladder, status, board, tuple(log), history, view or LadderView(),
                          tuple(arena.live.matches(name)))


_histories: dict[tuple[int, str, str], RatingHistory] = {}
_histories_lock = threading.Lock()


def _history(arena: Arena, ladder: str) -> RatingHistory:
    """The ladder's rating history, read on from the one this process read last (the log
    only grows; ``rating_history`` starts afresh for a ladder made anew)."""
    key = (id(arena.redis), arena.keys.prefix, ladder)
    with _histories_lock:
        since = _histories.get(key)
    history = rating_history(arena.redis, arena.keys, ladder, since=since)
    with _histories_lock:
        _histories[key] = history
    return history


def ladder_json(ladder: Ladder) -> dict[str, Any]:
    return {
        "name": ladder.name,
        "ruleset": ladder.ruleset.to_dict(),
        "games_per_pairing": ladder.games_per_pairing,
        "games_per_match": ladder.games_per_match,
        "rounds": ladder.rounds,
        "decision_seconds": ladder.decision_seconds,
        "created_at": ladder.created_at,
        "created_by": ladder.created_by,
    }


def status_json(status: LadderStatus) -> dict[str, Any]:
    return {**asdict(status), "complete": status.complete,
            "waiting_for_opponents": status.waiting_for_opponents}


def ranked(board: Leaderboard) -> list[tuple[int | None, Standing]]:
    """Standings with their rank (None for versions without a rated game yet)."""
    out: list[tuple[int | None, Standing]] = []
    rank = 0
    for row in board.standings:
        if row.rating is None:
            out.append((None, row))
        else:
            rank += 1
            out.append((rank, row))
    return out


def standing_json(rank: int | None, row: Standing) -> dict[str, Any]:
    owner, name, number = split_version(row.version)
    return {
        "rank": rank, "version": row.version, "bot": row.bot, "owner": owner, "name": name,
        "number": number, "active": row.active, "rating": row.rating, "low": row.low,
        "high": row.high, "margin": row.margin, "elo": row.elo, "matches": row.matches,
        "games": row.games, "wins": row.wins, "ties": row.ties, "losses": row.losses,
        "aborted": row.aborted, "forfeits": dict(row.forfeits),
    }


def pair_json(pair: PairStanding) -> dict[str, Any]:
    return asdict(pair)


def log_json(entry: LogEntry) -> dict[str, Any]:
    return {"seq": entry.seq, "match": entry.match, "a": entry.a, "b": entry.b,
            "games": len(entry.scores), "wins": entry.wins, "ties": entry.ties,
            "losses": entry.losses, "recorded_at": entry.recorded_at}


def summary_json(summary: LadderSummary) -> dict[str, Any]:
    return {**ladder_json(summary.ladder), "status": status_json(summary.status),
            "leaders": [standing_json(rank, row)
                        for rank, row in enumerate(summary.leaders, 1)]}


def snapshot_json(snap: LadderSnapshot) -> dict[str, Any]:
    return {
        "ladder": ladder_json(snap.ladder),
        "version": snap.board.version,
        "computed_at": snap.board.computed_at,
        "status": status_json(snap.status),
        "standings": [standing_json(rank, row) for rank, row in ranked(snap.board)],
        "recent": [log_json(e) for e in snap.recent],
    }


@dataclass(frozen=True)
class Cell:
    """Row version against column version, from the row's side."""

    games: int
    wins: int
    ties: int
    losses: int
    los: float
    fit_los: float | None

    @property
    def score(self) -> float | None:
        """The row's score share (ties half), None without rated games."""
        rated = self.wins + self.ties + self.losses
        return (self.wins + self.ties / 2) / rated if rated else None


def crosstable(board: Leaderboard, limit: int | None = None, *, offset: int = 0
               ) -> tuple[list[str], list[list[Cell | None]]]:
    """Versions in standings order (``limit`` of them from ``offset``) and the matrix of
    their cells."""
    order = [row.version for row in board.standings][offset:]
    if limit is not None:
        order = order[:limit]
    # One lookup for the block's cells: a page reads its cells, not the ladder's pairs.
    found = iter(board.pairs_of([(a, b) for a in order for b in order if a != b]))
    matrix: list[list[Cell | None]] = []
    for a in order:
        line: list[Cell | None] = []
        for b in order:
            pair = next(found) if a != b else None
            line.append(None if pair is None else Cell(pair.games, pair.wins, pair.ties,
                                                       pair.losses, pair.los, pair.fit_los))
        matrix.append(line)
    return order, matrix


def crosstable_json(board: Leaderboard) -> dict[str, Any]:
    order, matrix = crosstable(board)
    return {
        "ladder": board.ladder,
        "version": board.version,
        "versions": order,
        "cells": [[None if c is None else {**asdict(c), "score": c.score} for c in line]
                  for line in matrix],
        "pairs": [pair_json(p) for p in board.pairs],
    }


# -- matches ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class MatchView:
    match: Match
    ladder: Ladder
    records: tuple[GameRecord, ...]
    places: tuple[int, ...] = ()
    """Each record's place in the match's schedule (0-based) when it is not its position:
    a running match's finished games (:func:`live_view`), some of which may be missing."""

    def place(self, position: int) -> int:
        """The schedule place (0-based; shown from 1) of ``records[position]``."""
        return self.places[position] if self.places else position


def load_match(arena: Arena, match_id: str, *, replays: bool = True) -> MatchView:
    match = arena.matches.get(match_id)
    ladder = arena.ladders.get(match.ladder)
    records: tuple[GameRecord, ...] = ()
    if replays and match.status is MatchStatus.RECORDED:
        records = tuple(arena.matches.replays(match_id))
    return MatchView(match, ladder, records)


def side_version(match: Match, side: str) -> str:
    return match.a if side == "a" else match.b


def match_json(view: MatchView) -> dict[str, Any]:
    match = view.match
    recorded = match.status is MatchStatus.RECORDED
    data: dict[str, Any] = {
        "id": match.id, "ladder": match.ladder, "round": match.round, "a": match.a,
        "b": match.b, "games": match.games, "status": match.status.value,
        "created_at": match.created_at, "recorded_at": match.recorded_at, "seq": match.seq,
        # The seed of an unplayed match would let a bot author predict its deals.
        "seed": match.seed if recorded else None,
        "replays": len(view.records),
        "result": None,
        "reason": match.reason or None,
    }
    result = match.result
    if result is not None:
        data["result"] = {
            "wins": result.wins, "ties": result.ties, "losses": result.losses,
            "aborted": result.aborted, "seconds": result.seconds,
            "forfeits": {side_version(match, s): result.forfeits(s) for s in SIDES},
            "games": [{"index": i, **g.to_json(),
                       "winner_version": None if g.winner is None
                       else side_version(match, g.winner)}
                      for i, g in enumerate(result.games)],
        }
    return data


def game_json(view: MatchView, index: int) -> dict[str, Any]:
    """The replay viewer's data for ``view.records[index]`` (IndexError if there is none);
    its ``game`` is the game's number in the match's schedule, from 1, as pages and URLs
    show it."""
    if not 0 <= index < len(view.records):
        raise IndexError(index)
    record = view.records[index]
    place = view.place(index)
    data = replay_view(record)
    a_seat = view.match.schedule()[place].a_seat
    result = view.match.result
    if result is not None and place < len(result.games):
        a_seat = result.games[place].a_seat
    return {"match": view.match.id, "ladder": view.match.ladder, "game": place + 1,
            "games": view.match.games if view.places else len(view.records),
            "a_seat": a_seat, **data}


def schedule_places(match: Match, finished: Sequence[GameRecord]) -> list[int | None]:
    """Where each of a running match's finished games (in the order they finished, as the
    worker's live copy keeps them) sits in the match's schedule (0-based; None: not one of
    its games). Batched games end out of order, so the n-th to finish is rarely game n: a
    game is found by its deal and who sat where (both games of a duplicate pair share the
    deal, with seats swapped)."""
    free: dict[tuple[str, tuple[str, str]], list[int]] = {}
    for game in match.schedule():
        free.setdefault((game.seed, game.players(match.a, match.b)), []).append(game.index)
    found: list[int | None] = []
    for record in finished:
        places = free.get((record.seed, (record.players[0], record.players[1])))
        found.append(places.pop(0) if places else None)
    return found


def newest_place(match: Match, finished: Sequence[GameRecord]) -> int | None:
    """The schedule place of the game that ended last (None: none has)."""
    return next((p for p in reversed(schedule_places(match, finished)) if p is not None), None)


def live_view(match: Match, ladder: Ladder, finished: Sequence[GameRecord]) -> MatchView:
    """A running match's view: its finished games in schedule order, each at its place
    (:func:`schedule_places`)."""
    placed = {place: record for place, record in zip(schedule_places(match, finished),
                                                     finished, strict=True)
              if place is not None}
    order = tuple(sorted(placed))
    return MatchView(match, ladder, tuple(placed[p] for p in order), order)
