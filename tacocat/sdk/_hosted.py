"""Refereeing games between bots in other processes: what the arena's workers call.

A seat is a bot process (:class:`ProcessSeat` over a :class:`HostProcess`) or a bot in this
process (:class:`LocalSeat`, e.g. a house bot for a smoke game). :func:`play_hosted_game`
runs the shared loop (:func:`referee_game`) synchronously: these seats block on their pipes
rather than suspend, so no event loop is involved and a worker calls it like any function.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Sequence

from tacocat.engine import (
    STANDARD,
    Bot,
    BotDriver,
    Fault,
    GameRecord,
    MatchGame,
    Observation,
    Outcome,
    Round,
    Ruleset,
    Table,
)

from ._errors import HostError, describe
from ._feed import Answer, Failure, Seat, SeatFeed, referee_game, run_blocking
from ._process import HostProcess
from ._protocol import DEFAULT_TIME_LIMIT


class LocalSeat:
    """A :class:`Bot` in this process; a bot that raises forfeits with ``crash``.

    Its methods never suspend, so it sits at an asyncio table (the gRPC referee's house
    bots) as well as at a blocking one.
    """

    __slots__ = ("_answer", "driver")

    def __init__(self, bot: Bot) -> None:
        self.driver = BotDriver(bot)
        self._answer: Answer = ()

    async def start(self, game: int, games: int, seat: int, rules: Ruleset,
                    opponent: str) -> None:
        self.driver.start(seat, rules, opponent)

    async def ask(self, obs: Observation) -> None:
        try:
            self._answer = self.driver.decide(obs)
        except Exception as exc:  # any bot failure is a forfeit
            self._answer = Failure(Fault.CRASH, describe(exc))

    async def answer(self) -> Answer:
        return self._answer

    async def refuse(self, failure: Failure) -> None:
        pass

    async def end(self, game: int, outcome: Outcome, rounds: Sequence[Round]) -> None:
        with contextlib.suppress(Exception):  # a hook failing after the game changes nothing
            self.driver.finish(outcome, rounds)


class ProcessSeat:
    """A bot in a :class:`HostProcess`, with ``time_limit`` seconds per decision.

    A process that is not running when a game starts is (re)started; one that cannot be
    started forfeits that game with ``crash``. The methods block on the pipes (no event
    loop): use it through :func:`play_hosted_game`, or from a thread.

    ``on_decision``, when given, is called with the seconds (``time.monotonic``) from each
    :meth:`ask` to the :meth:`answer` it got, failures included (a timeout, a crash,
    garbage): how a worker times sandboxed decisions.
    """

    def __init__(self, host: HostProcess, time_limit: float = DEFAULT_TIME_LIMIT, *,
                 on_decision: Callable[[float], None] | None = None) -> None:
        self.host = host
        self.time_limit = time_limit
        self.on_decision = on_decision
        self.feed = SeatFeed(time_limit)
        self.failure: Failure | None = None
        """This game's failure, once there is one."""
        self._deadline = 0.0

    async def start(self, game: int, games: int, seat: int, rules: Ruleset,
                    opponent: str) -> None:
        self.failure = None
        if not self.host.running:
            try:
                self.host.start()
            except HostError as exc:
                self.failure = Failure(Fault.CRASH, str(exc))
                return
        self._send(self.feed.game_start(game, games, seat, rules, opponent))

    async def ask(self, obs: Observation) -> None:
        self._deadline = time.monotonic() + self.time_limit
        self._send(self.feed.request(obs), self._deadline)

    async def answer(self) -> Answer:
        while self.failure is None:
            got = self.host.receive(self._deadline)
            if isinstance(got, Failure):
                self._fail(got)
                break
            answer = self.feed.read(got)
            if isinstance(answer, Failure):
                self._fail(answer)
            elif answer is not None:
                return self._answered(answer)
        assert self.failure is not None
        return self._answered(self.failure)

    def _answered(self, answer: Answer) -> Answer:
        """``answer``, once its time since :meth:`ask` went to ``on_decision``."""
        if self.on_decision is not None:
            asked = self._deadline - self.time_limit
            self.on_decision(max(0.0, time.monotonic() - asked))
        return answer

    async def refuse(self, failure: Failure) -> None:
        self.failure = self.failure or failure
        self._send(self.feed.refusal(failure))

    async def end(self, game: int, outcome: Outcome, rounds: Sequence[Round]) -> None:
        self._send(self.feed.result(game, outcome, rounds))

    def _send(self, data: bytes, deadline: float | None = None) -> None:
        if self.failure is not None and self.failure.fault is not Fault.ILLEGAL_ACTION:
            return  # a crashed, stuck or garbled process gets nothing more this game
        failed = self.host.send(data, deadline or time.monotonic() + self.time_limit)
        if failed is not None:
            self._fail(failed)

    def _fail(self, failure: Failure) -> None:
        if failure.fault is Fault.TIMEOUT and failure.detail == "no answer by the deadline":
            failure = Failure(Fault.TIMEOUT, f"no answer within {self.time_limit:g} s")
        self.failure = failure
        self.feed.abandon()


def play_hosted_game(seats: Sequence[Seat], players: Sequence[str], seed: str,
                     rules: Ruleset = STANDARD, *, game: int = 0,
                     games: int = 1) -> GameRecord:
    """Referee one game between two blocking seats and return its replay record."""
    table = Table(rules, seed, players)
    run_blocking(referee_game(table, seats, game=game, games=games))
    return table.record()


def play_hosted_match(a: HostProcess | Bot, b: HostProcess | Bot, games: int,
                      seed: str | int, rules: Ruleset = STANDARD,
                      names: Sequence[str] = ("A", "B"), *,
                      time_limit: float = DEFAULT_TIME_LIMIT) -> Iterator[MatchGame]:
    """Play ``games`` games between ``a`` and ``b`` in duplicate pairs, like
    :func:`tacocat.engine.play_match` (same seeds, same seating), with bot processes.

    A process that died, garbled its output or timed out (it may still be busy with a stale
    request) is killed after that game and restarted fresh for the next one; one whose bot
    merely raised plays on. Processes are left running at the end: close them (or use them
    as context managers).
    """
    seats: list[ProcessSeat | LocalSeat] = [
        ProcessSeat(x, time_limit) if isinstance(x, HostProcess) else LocalSeat(x)
        for x in (a, b)
    ]
    for index in range(games):
        pair_seed = f"{seed}/{index // 2}"
        a_seat = index % 2
        seated = (seats[0], seats[1]) if a_seat == 0 else (seats[1], seats[0])
        players = (names[0], names[1]) if a_seat == 0 else (names[1], names[0])
        record = play_hosted_game(seated, players, pair_seed, rules, game=index, games=games)
        for seat in seats:
            if isinstance(seat, ProcessSeat) and seat.failure is not None \
                    and seat.failure.fault is Fault.TIMEOUT:
                seat.host.kill()
        yield MatchGame(index, record, a_seat)
