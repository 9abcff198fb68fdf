"""The referee's half of the protocol, for any transport.

:func:`referee_game` is the one loop every referee runs around the engine's :class:`Table`:
ask each seat that must decide (both at once for simultaneous decisions, so both think in
parallel), then settle the answers in seat order, exactly as the local runner does, so the
same bots give the same game everywhere. A :class:`Seat` is whatever does the I/O: a live
gRPC stream, a bot process, a bot in this process. The gRPC referee awaits the loop on its
event loop; the sandbox driver runs it with :func:`run_blocking`, its seats blocking instead
of suspending.

A :class:`SeatFeed` is one seat's message stream as a remote seat keeps it: it numbers the
requests, sends every finished round exactly once, and sorts what comes back into an action,
a :class:`Failure` (the seat's fault), or nothing (a late answer to a request that is no
longer pending).
"""

from __future__ import annotations

from collections.abc import Coroutine, Sequence
from typing import Any, NamedTuple, Protocol, TypeVar

from google.protobuf.message import DecodeError

from tacocat.engine import Fault, Observation, Outcome, Round, Ruleset, Table

from . import _codec
from ._protocol import MAX_ACTION_CARDS, MAX_CLIENT_MESSAGE
from .proto.v1 import game_pb2 as pb

DETAIL_LIMIT = 300
"""Characters of a seat's own words (a crash message) kept in the record."""


class Failure(NamedTuple):
    """A seat failed to answer properly: it forfeits the game for ``fault``."""

    fault: Fault
    detail: str


Answer = tuple[int, ...] | Failure
"""What a seat's turn comes to: the cards it plays, or its failure."""


class SeatFeed:
    """One seat's side of a match, as the referee sees it."""

    __slots__ = ("_issued", "_pending", "_rounds_sent", "time_limit_ms")

    def __init__(self, time_limit: float) -> None:
        self.time_limit_ms = max(1, round(time_limit * 1000))
        self._issued = 0          # request ids grow over the whole match, never reused
        self._pending = 0         # the id awaiting an answer, 0 for none
        self._rounds_sent = 0

    # ------------------------------------------------------------ referee -> seat

    def game_start(self, game: int, games: int, seat: int, rules: Ruleset,
                   opponent: str) -> bytes:
        self._rounds_sent = 0
        self._pending = 0
        msg = pb.ServerMessage()
        start = msg.game_start
        start.game, start.games, start.seat = game, games, seat
        _codec.ruleset_to_pb(rules, start.ruleset)
        start.opponent = opponent
        start.time_limit_ms = self.time_limit_ms
        return msg.SerializeToString()

    def request(self, obs: Observation, time_left: float | None = None) -> bytes:
        """Ask the seat ``obs.seat`` for ``obs.decision``; its answer becomes pending."""
        self._issued += 1
        self._pending = self._issued
        history = obs.history
        new_rounds = history[self._rounds_sent:] if len(history) > self._rounds_sent else ()
        self._rounds_sent = len(history)
        left = self.time_limit_ms if time_left is None else max(0, round(time_left * 1000))
        msg = pb.ServerMessage()
        _codec.request_to_pb(obs, self._issued, left, new_rounds, msg.request)
        return msg.SerializeToString()

    def result(self, game: int, outcome: Outcome, rounds: Sequence[Round]) -> bytes:
        """The game's end; ``rounds`` are all its rounds (the ones not yet sent go out)."""
        self._pending = 0
        msg = pb.ServerMessage()
        result = msg.result
        result.game = game
        _codec.outcome_to_pb(outcome, result.outcome)
        for r in rounds[self._rounds_sent:]:
            _codec.round_to_pb(r, result.new_rounds.add())
        self._rounds_sent = len(rounds)
        return msg.SerializeToString()

    def refusal(self, failure: Failure) -> bytes:
        """Why the seat forfeits (sent just before the game result)."""
        return error_message(_codec.FAULT_ERROR_CODE.get(failure.fault, pb.ERROR_CODE_PROTOCOL),
                             f"{failure.fault.value}: {failure.detail}", fatal=False)

    # ------------------------------------------------------------ seat -> referee

    @property
    def pending(self) -> bool:
        return self._pending != 0

    def abandon(self) -> None:
        """Stop waiting for the pending answer (the game ended without it)."""
        self._pending = 0

    def read(self, data: bytes) -> Answer | None:
        """Sort one message from the seat. ``None``: a late answer, to be dropped."""
        if len(data) > MAX_CLIENT_MESSAGE:  # a transport may allow more (other services)
            return Failure(Fault.PROTOCOL, f"a message of {len(data)} bytes exceeds the "
                                           f"{MAX_CLIENT_MESSAGE}-byte limit")
        try:
            msg = pb.ClientMessage.FromString(data)
        except DecodeError:
            return Failure(Fault.PROTOCOL, f"undecodable message ({len(data)} bytes)")
        kind = msg.WhichOneof("kind")
        if kind in ("action", "failure"):
            request_id = msg.action.request_id if kind == "action" else msg.failure.request_id
            if request_id != self._pending or request_id == 0:
                if 0 < request_id <= self._issued:
                    return None  # answers a request the referee gave up on: drop it
                expected = f"request {self._pending}" if self._pending else "no request"
                return Failure(Fault.PROTOCOL, f"answer to request {request_id}, but "
                                               f"{expected} is pending")
            self._pending = 0
            if kind == "failure":
                return Failure(Fault.CRASH, clean_text(msg.failure.message) or "the bot failed")
            cards = tuple(msg.action.cards)
            if len(cards) > MAX_ACTION_CARDS:
                return Failure(Fault.ILLEGAL_ACTION,
                               f"an action of {len(cards)} cards: no hand holds that many")
            return cards
        if kind is None:
            return Failure(Fault.PROTOCOL, "a message of no known kind")
        return Failure(Fault.PROTOCOL, f"unexpected {kind} message during a game")


class Seat(Protocol):
    """One side of a refereed game: the I/O the loop needs, nothing else."""

    async def start(self, game: int, games: int, seat: int, rules: Ruleset,
                    opponent: str) -> None:
        """A game begins."""

    async def ask(self, obs: Observation) -> None:
        """Ask for ``obs.decision``; the seat's clock starts now."""

    async def answer(self) -> Answer:
        """The answer to the last question, or the seat's failure."""

    async def refuse(self, failure: Failure) -> None:
        """Tell the seat it forfeits, and why."""

    async def end(self, game: int, outcome: Outcome, rounds: Sequence[Round]) -> None:
        """The game ended."""


async def referee_game(table: Table, seats: Sequence[Seat], *, game: int = 0,
                       games: int = 1) -> None:
    """Play ``table``'s game to its end between ``seats`` (seat 0, seat 1)."""
    state = table.state
    players = table.players
    for seat in (0, 1):
        await seats[seat].start(game, games, seat, state.rules, players[1 - seat])
    while state.outcome is None:
        asks = table.requests()
        for obs in asks:
            await seats[obs.seat].ask(obs)
        for obs in asks:
            failure = settle(table, obs.seat, await seats[obs.seat].answer())
            if failure is not None:
                await seats[obs.seat].refuse(failure)
            if state.outcome is not None:
                break
    outcome = state.outcome
    assert outcome is not None
    rounds = table.public_rounds()
    for seat in (0, 1):
        await seats[seat].end(game, outcome, rounds)


_T = TypeVar("_T")


def run_blocking(coroutine: Coroutine[Any, Any, _T]) -> _T:
    """Run a coroutine whose awaits never suspend (its seats block instead), with no loop."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    coroutine.close()
    raise RuntimeError("a seat suspended: seats that wait on an event loop need asyncio")


def settle(table: Table, seat: int, answer: Answer) -> Failure | None:
    """Apply ``seat``'s answer to the game; a failure or an illegal action forfeits it."""
    if isinstance(answer, Failure):
        table.fault(seat, answer.fault, answer.detail)
        return answer
    error = table.answer(seat, answer)
    if error is not None:
        return Failure(Fault.ILLEGAL_ACTION, error.reason)
    return None


def error_message(code: int, text: str, *, fatal: bool) -> bytes:
    msg = pb.ServerMessage()
    msg.error.code = code  # type: ignore[assignment]
    msg.error.message = text
    msg.error.fatal = fatal
    return msg.SerializeToString()


def match_end(games: int, detail: str = "") -> bytes:
    msg = pb.ServerMessage()
    msg.match_end.games = games
    msg.match_end.detail = detail
    return msg.SerializeToString()


def clean_text(text: str, limit: int = DETAIL_LIMIT) -> str:
    """A seat's own words made safe for a record: printable, one line, bounded."""
    flat = "".join(c if c.isprintable() else " " for c in text[: limit * 2])
    return " ".join(flat.split())[:limit]
