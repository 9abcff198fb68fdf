"""The referee's half of the protocol for one remote bot: messages out, answers sorted.

A :class:`SeatFeed` is one bot's message stream over a whole match, whatever the transport
(a sandboxed host process, a live gRPC stream). It numbers the requests (ids grow over the
whole match, never reused), keeps one :class:`~tacocat.protocol.RequestEncoder` per game
in flight so each public fact is sent once, and sorts what comes back into an action, a
:class:`Failure` (the bot's fault), or nothing (a late answer to a request that is no
longer pending).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, NamedTuple

from google.protobuf.message import DecodeError

from tacocat.engine import Fault, Observation, Outcome, Round, Ruleset
from tacocat.protocol import (
    FAULT_ERROR_CODE,
    MAX_ACTION_CARDS,
    MAX_CLIENT_MESSAGE,
    RequestEncoder,
    outcome_to_pb,
    ruleset_to_pb_cached,
)
from tacocat.protocol.proto.v1 import game_pb2 as pb

DETAIL_LIMIT = 300
"""Characters of a bot's own words (a crash message) kept in the record."""


class Failure(NamedTuple):
    """A seat failed to answer properly: it forfeits the game for ``fault``.

    ``detail`` is public (records, pages, the other bot): only what the rules and the
    referee define, never a value the bot chose (a size, an id, a reported time, an exit
    code, a class name), since a hostile bot would publish what it read through it.
    ``said`` is the same with the bot's values, for its owner's log only.
    """

    fault: Fault
    detail: str
    said: str = ""


Answer = tuple[int, ...] | Failure
"""What a seat's turn comes to: the cards it plays, or its failure."""


class SeatFeed:
    """One bot's side of a match, as the referee sees it."""

    __slots__ = ("_encoders", "_issued", "_limit_us", "_pending", "time_limit_ms")

    def __init__(self, time_limit: float) -> None:
        self.time_limit_ms = max(1, round(time_limit * 1000))
        self._limit_us = time_limit * 1_000_000
        self._issued = 0
        self._pending: set[int] = set()
        self._encoders: dict[int, RequestEncoder] = {}

    # ------------------------------------------------------------ referee -> seat

    def game_start(self, out: pb.ServerMessage, game: int, games: int, seat: int,
                   rules: Ruleset, opponent: str) -> None:
        self._encoders[game] = RequestEncoder()
        start = out.game_start
        start.game, start.games, start.seat = game, games, seat
        ruleset_to_pb_cached(rules, start.ruleset)
        start.opponent = opponent
        start.time_limit_ms = self.time_limit_ms

    def request(self, out: pb.ServerMessage, game: int, obs: Observation,
                time_left: float | None = None) -> int:
        """Ask for ``obs.decision`` in ``game``; returns the request id, now pending."""
        self._issued += 1
        self._pending.add(self._issued)
        left = self.time_limit_ms if time_left is None else max(0, round(time_left * 1000))
        self._encoders[game].encode(obs, self._issued, game, left, out.request)
        return self._issued

    def result(self, out: pb.ServerMessage, game: int, outcome: Outcome,
               rounds: Sequence[Round]) -> None:
        """The game's end; ``rounds`` are all its rounds (the ones not yet sent go out)."""
        result = out.result
        result.game = game
        outcome_to_pb(outcome, result.outcome)
        self._encoders.pop(game).finish(rounds, result)

    def refusal(self, out: pb.ServerMessage, game: int, failure: Failure) -> None:
        """Why the seat forfeits ``game`` (sent just before the game result)."""
        error = out.error
        error.code = FAULT_ERROR_CODE.get(failure.fault, pb.ERROR_CODE_PROTOCOL)
        error.message = f"{failure.fault.value}: {failure.detail}"
        error.game = game

    def knows(self, game: int) -> bool:
        """Whether ``game`` was started on this stream and has not ended."""
        return game in self._encoders

    def forget(self) -> None:
        """The bot's process is gone: nothing in flight will be answered or told."""
        self._encoders.clear()
        self._pending.clear()

    # ------------------------------------------------------------ seat -> referee

    def abandon(self, request_id: int) -> None:
        """Stop waiting for an answer (the game ended without it)."""
        self._pending.discard(request_id)

    def read_bytes(self, data: bytes) -> tuple[int, Answer] | Failure | None:
        """:meth:`read` for one serialized message (a live stream's)."""
        if len(data) > MAX_CLIENT_MESSAGE:  # a transport may allow more (other services)
            return Failure(Fault.PROTOCOL, OVERSIZED, f"a message of {len(data)} bytes")
        try:
            msg = pb.ClientMessage.FromString(data)
        except DecodeError:
            return Failure(Fault.PROTOCOL, UNDECODABLE, f"{len(data)} bytes")
        return self.read(msg)

    def read(self, msg: pb.ClientMessage, *,
             timed: bool = True) -> tuple[int, Answer] | Failure | None:
        """Sort one message from the bot: ``(request id, answer)``, a failure of the whole
        stream (a protocol fault), or ``None`` for a late answer, to be dropped. ``timed``
        False: the think time reported is not held against the limit (the referee was
        stopped meanwhile)."""
        kind = msg.WhichOneof("kind")
        if kind == "action":
            request_id, think_us = msg.action.request_id, msg.action.think_us
        elif kind == "failure":
            request_id, think_us = msg.failure.request_id, msg.failure.think_us
        elif kind is None:
            return Failure(Fault.PROTOCOL, "a message of no known kind")
        else:
            return Failure(Fault.PROTOCOL, f"unexpected {kind} message during a game")
        if request_id not in self._pending:
            if 0 < request_id <= self._issued:
                return None  # answers a request the referee gave up on: drop it
            return Failure(Fault.PROTOCOL, "an answer to a request that was never asked",
                           f"request id {request_id}")
        self._pending.discard(request_id)
        if timed and think_us > self._limit_us:
            # Not the time the host reports, which is the bot's own words: the limit it passed
            # (the report goes to the owner's log only).
            return request_id, Failure(Fault.TIMEOUT, "answered after the limit of "
                                                      f"{self._limit_us / 1e6:g} s",
                                       f"reported {think_us} us")
        if kind == "failure":
            return request_id, Failure(Fault.CRASH, public_failure(msg.failure.message))
        cards = tuple(msg.action.cards)
        if len(cards) > MAX_ACTION_CARDS:
            return request_id, Failure(Fault.ILLEGAL_ACTION, f"an action of more than "
                                       f"{MAX_ACTION_CARDS} cards: no hand holds that many",
                                       f"{len(cards)} cards")
        return request_id, cards


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


_MADE: Final = "making the bot raised "
RAISED: Final = "an exception"
"""What a record says a bot raised: its class and text are its own words, owner's only."""
OVERSIZED: Final = f"a message over the {MAX_CLIENT_MESSAGE}-byte limit"
UNDECODABLE: Final = "an undecodable message"


def public_failure(message: str) -> str:
    """A remote bot's report of its own failure, as a public record may say it.

    The message is the bot's own words (its exception's text, which may quote anything it
    read inside its sandbox), and so is the name of the exception's class (a built-in one
    is a choice among dozens, a few bits a game), so records, pages and API answers get a
    fixed description: ``the bot raised an exception``, ``making the bot raised an
    exception`` or ``the bot's answer is not card ranks``. The whole message and traceback
    are in the bot's stderr, which its owner reads (:mod:`tacocat.protocol.logs`).
    """
    made = message.startswith(_MADE)
    text = message[len(_MADE):] if made else message
    if text.startswith("the bot answered "):
        return "the bot's answer is not card ranks"
    return _MADE + RAISED if made else "the bot raised " + RAISED


def clean_text(text: str, limit: int = DETAIL_LIMIT) -> str:
    """A bot's own words made safe for a record: printable, one line, bounded."""
    flat = "".join(c if c.isprintable() else " " for c in text[: limit * 2])
    return " ".join(flat.split())[:limit]
