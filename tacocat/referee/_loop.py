"""THE match loop: every match of every referee is played here.

:func:`referee_match` plays a match's schedule (:func:`~tacocat.engine.duplicate_pairs`)
between two :class:`~tacocat.referee.Seat` s, ``batch`` games at once in lockstep. Each step
asks every seat that must decide in every game in flight, sends each bot everything waiting
for it at once (both bots think at the same time), then settles the answers game by game in
the order of the schedule and, within a game, seat by seat, exactly as one game alone would:
a game's record depends only on the bots' answers, so the same bots give byte-identical
records for every batch size, in this process, through the sandbox and live. Faults follow
the one policy (:mod:`tacocat.referee._policy`), and so does each side's time bank: after
every step, a side whose seat has :attr:`~Seat.spent` more than its bank gives up.

:func:`play_match` runs it without an event loop for seats that never suspend (a bot in this
process, a bot process): local play, the workers, the benchmarks. The live referee awaits
:func:`referee_match` on its event loop.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeVar

from tacocat.engine import (
    STANDARD,
    Bot,
    Fault,
    IllegalActionError,
    MatchGame,
    Reason,
    Ruleset,
    ScheduledGame,
    Table,
)

from ._errors import NoBotStartedError
from ._feed import Answer, Failure
from ._policy import FaultPolicy, SideReport, is_costly
from ._seats import InProcessSeat, Seat

DEFAULT_BATCH: Final = 64
"""Games a match plays at once unless told otherwise (measured: docs/WORKER.md, "Batching")."""

GameSink = Callable[[MatchGame], Awaitable[None] | None]
"""Called with every game as soon as it ends (in the order games end)."""


@dataclass
class PlayedMatch:
    """A match as played: its games in schedule order, and what happened to each side."""

    games: list[MatchGame]
    sides: tuple[SideReport, SideReport]
    ended: str = ""
    """Why the match stopped before its schedule did (a live client left or gave up)."""


class _Game:
    """A game in flight."""

    __slots__ = ("asked", "index", "plan", "players", "sides", "state", "table")

    def __init__(self, plan: ScheduledGame, players: tuple[str, str], rules: Ruleset) -> None:
        self.plan = plan
        self.index = plan.index
        self.players = players
        self.table = Table(rules, plan.seed, players)
        self.state = self.table.state
        self.sides = (0, 1) if plan.a_seat == 0 else (1, 0)
        """The side (0: bot A, 1: bot B) in each seat."""
        self.asked: tuple[int, ...] = ()
        """The seats asked in the current step."""

    def side(self, seat: int) -> int:
        """0 for bot A, 1 for bot B."""
        return self.sides[seat]


async def referee_match(seats: Sequence[Seat], schedule: Sequence[ScheduledGame], *,
                        names: tuple[str, str], rules: Ruleset = STANDARD, batch: int = 1,
                        policy: FaultPolicy | None = None,
                        on_game: GameSink | None = None) -> PlayedMatch:
    """Play ``schedule`` between ``seats`` (bot A, bot B), ``batch`` games at once.

    ``names`` name A and B in the records. ``on_game`` gets every game as it ends. Raises
    :class:`NoBotStartedError` when neither bot's process ever starts (the machine's fault);
    every fault of a bot is a forfeit in the records instead. Cancelled (the live referee
    shutting down), the games in flight are aborted and reported to ``on_game`` first.
    """
    if batch < 1:
        raise ValueError(f"batch must be at least 1, got {batch}")
    policy = policy or FaultPolicy()
    reports = (SideReport(names[0]), SideReport(names[1]))
    games = len(schedule)
    banks = (policy.bank(seats[0].time_limit, games), policy.bank(seats[1].time_limit, games))
    finished: dict[int, MatchGame] = {}
    active: list[_Game] = []
    upcoming = iter(schedule)
    replays: list[ScheduledGame] = []
    """Games lost with a bot's process that did not cause it, to be played again first."""
    ended = ""
    first_step = True

    async def finish(game: _Game) -> None:
        outcome = game.table.state.outcome
        assert outcome is not None
        if outcome.offender is not None:  # the other side played this game cleanly
            reports[game.sides[1 - outcome.offender]].clean_game()
        elif outcome.reason is not Reason.ABORTED:
            reports[0].clean_game()
            reports[1].clean_game()
        rounds = game.table.public_rounds()
        for seat in (0, 1):
            seats[game.side(seat)].end(game.plan.index, outcome, rounds)
        done = MatchGame(game.plan.index, game.table.record(), game.plan.a_seat)
        finished[done.index] = done
        if on_game is not None:
            result = on_game(done)
            if inspect.isawaitable(result):
                await result

    try:
        while True:
            # After a strike, one game at a time until the side plays a game cleanly.
            room = 1 if reports[0].strikes or reports[1].strikes else batch
            while len(active) < room and not ended:
                plan = replays.pop(0) if replays else next(upcoming, None)
                if plan is None:
                    break
                game = _Game(plan, plan.players(*names), rules)
                if _forfeit_out(game, reports):
                    await finish(game)
                    continue
                for seat in (0, 1):
                    seats[game.sides[seat]].start(plan.index, games, seat, rules,
                                                  game.players[1 - seat])
                active.append(game)
            if not active:
                break

            # The hot path (once per decision): locals, no helper calls.
            asks = (seats[0].ask, seats[1].ask)
            for game in active:
                state, index, sides = game.state, game.index, game.sides
                game.asked = to_act = state.to_act
                for seat in to_act:
                    asks[sides[seat]](index, state.observation(seat))
            for seat_io in seats:
                await seat_io.send()
            answers = (await seats[0].answers(), await seats[1].answers())
            if first_step:
                first_step = False
                if all(s.broken is not None and s.never_started for s in seats):
                    raise NoBotStartedError(
                        "neither bot process started, which points at the machine, not the "
                        "bots: " + "; ".join(f"{name}: {s.broken.detail}" for name, s in
                                             zip(names, seats, strict=True) if s.broken))

            costly: list[Failure | None] = [None, None]
            blamed = [False, False]
            cursor = [0, 0]
            broken_now = (seats[0].broken, seats[1].broken)
            for game in active:
                state, sides = game.state, game.sides
                for seat in game.asked:
                    side = sides[seat]
                    answer: Answer = answers[side][cursor[side]]
                    cursor[side] += 1
                    if state.outcome is not None:
                        continue  # the other seat's answer already ended the game
                    if not isinstance(answer, Failure):
                        try:
                            state.apply(seat, answer)
                        except IllegalActionError as exc:
                            game.table.refuse(seat, exc)
                            failure = Failure(Fault.ILLEGAL_ACTION, exc.reason)
                        else:
                            continue
                    else:
                        failure = answer
                        if failure is broken_now[side]:
                            # The process was lost: the first decision it did not answer
                            # (the host answers in the order asked) is the one it was on.
                            if not blamed[side]:
                                blamed[side] = True
                                state.forfeit(seat, failure.fault, failure.detail)
                            continue  # counted once, below; the other games are replayed
                        state.forfeit(seat, failure.fault, failure.detail)
                    reports[side].failures.append(failure)
                    if is_costly(failure):
                        costly[side] = failure
                    seats[side].refuse(game.index, failure)

            lost: set[int] = set()
            for side in (0, 1):
                seat_io, report = seats[side], reports[side]
                broken = seat_io.broken
                if broken is not None:
                    report.failures.append(broken)
                    costly[side] = broken
                    if seat_io.lost is None:  # its other games go on with a new process
                        lost.update(g.index for g in active if not g.table.is_over)
                    else:
                        _forfeit_all(active, side, broken)
                    seat_io.restart()
                    report.restarts += 1
                fault = costly[side]
                if fault is not None and report.strike(policy, fault):
                    assert report.gave_up is not None
                    _forfeit_all(active, side, report.gave_up)
                    seat_io.give_up(report.gave_up)
                    if policy.end_match_on_give_up:
                        ended = f"{report.name} gave up: {report.gave_up.detail}"
                bank = banks[side]
                if bank is not None and report.gave_up is None:
                    overdrawn = bank.overdrawn(seat_io.spent)
                    if overdrawn is not None:
                        report.run_out(overdrawn)
                        _forfeit_all(active, side, overdrawn)
                        seat_io.give_up(overdrawn)
                        if policy.end_match_on_give_up:
                            ended = f"{report.name} ran out of time: {overdrawn.detail}"
                if seat_io.lost is not None and not ended:
                    ended = f"{report.name} left: {seat_io.lost}"

            still: list[_Game] = []
            for game in active:
                if game.table.is_over:
                    await finish(game)
                elif game.index in lost:
                    _set_aside(game, seats)
                    replays.append(game.plan)
                else:
                    still.append(game)
            active = still
            if lost:
                replays.sort(key=lambda plan: plan.index)
        for seat_io in seats:
            await seat_io.send()  # the last results
    except asyncio.CancelledError:
        for game in active:
            game.table.state.abort("the referee shut down")
            await finish(game)
        raise
    return PlayedMatch([finished[i] for i in sorted(finished)], reports, ended)


def _forfeit_all(active: Sequence[_Game], side: int, failure: Failure) -> None:
    """Side ``side`` forfeits every game in flight that is not over."""
    for game in active:
        if not game.table.is_over:
            seat = game.sides.index(side)
            game.table.fault(seat, failure.fault, failure.detail)


def _set_aside(game: _Game, seats: Sequence[Seat]) -> None:
    """End ``game`` unrecorded, to be played again from its start: a bot's process was lost
    in it without being at fault in it, so the games are the same for every batch size (in
    a batch of one it would not have been in flight). The other bot is told the game was
    aborted; the lost process's seat knows no game any more."""
    state = game.table.state
    state.abort("played again from the start: the other bot's process was restarted")
    outcome = state.outcome
    assert outcome is not None
    rounds = game.table.public_rounds()
    for seat in (0, 1):
        seats[game.side(seat)].end(game.plan.index, outcome, rounds)


def _forfeit_out(game: _Game, reports: Sequence[SideReport]) -> bool:
    """Settle a game a side that gave up cannot play; False when both can play it."""
    out = [(seat, reports[game.side(seat)]) for seat in (0, 1)
           if reports[game.side(seat)].gave_up is not None]
    if not out:
        return False
    state = game.table.state
    if len(out) == 2:
        state.abort("neither bot could play: " + "; ".join(
            f"{r.name}: {r.gave_up.fault.value}: {r.gave_up.detail}" for _, r in out
            if r.gave_up is not None))
    else:
        seat, report = out[0]
        assert report.gave_up is not None
        game.table.fault(seat, report.gave_up.fault, report.gave_up.detail)
    return True


_T = TypeVar("_T")


def run_blocking(coroutine: Coroutine[Any, Any, _T]) -> _T:
    """Run a coroutine whose awaits never suspend (its seats block instead), with no loop."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    coroutine.close()
    raise RuntimeError("a seat suspended: seats that wait on an event loop need asyncio")


def play_match(seats: Sequence[Seat], schedule: Sequence[ScheduledGame], *,
               names: tuple[str, str], rules: Ruleset = STANDARD, batch: int = 1,
               policy: FaultPolicy | None = None,
               on_game: Callable[[MatchGame], None] | None = None) -> PlayedMatch:
    """:func:`referee_match` for seats that block rather than suspend, without asyncio."""
    return run_blocking(referee_match(seats, schedule, names=names, rules=rules, batch=batch,
                                      policy=policy, on_game=on_game))


def play_in_process(a: Bot | Callable[[], Bot], b: Bot | Callable[[], Bot],
                    schedule: Sequence[ScheduledGame], *, names: tuple[str, str] = ("A", "B"),
                    rules: Ruleset = STANDARD, batch: int = DEFAULT_BATCH,
                    time_limit: float | None = None,
                    on_game: Callable[[MatchGame], None] | None = None) -> PlayedMatch:
    """:func:`play_match` between two bots in this process (:class:`InProcessSeat` s: each
    game gets its own bot object), e.g. ``play_in_process(RandomBot, GreedyBot,
    duplicate_pairs(100, "seed"))``."""
    return play_match((InProcessSeat(a, time_limit=time_limit),
                       InProcessSeat(b, time_limit=time_limit)), schedule, names=names,
                      rules=rules, batch=batch, on_game=on_game)
