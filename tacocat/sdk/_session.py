"""The bot's half of the protocol, for any transport: server messages in, replies out.

:class:`BotSession` turns each ``ServerMessage`` into calls on a :class:`BotDriver` (so the
bot sees engine types only) and says what to send back. The live client and the sandbox host
are I/O around it.
"""

from __future__ import annotations

import logging
import time
from contextvars import ContextVar
from dataclasses import dataclass

from tacocat.engine import Bot, BotDriver, GameRecord, Outcome, Round, Ruleset

from . import _codec
from ._errors import ProtocolError, RefereeError, describe
from .proto.v1 import game_pb2 as pb

log = logging.getLogger("tacocat.sdk")

_deadline: ContextVar[float | None] = ContextVar("tacocat_decision_deadline", default=None)


def time_left() -> float | None:
    """Seconds left for the decision being made now, or ``None`` without a time limit.

    Call it from inside a bot's ``replace/duel/attack/defend`` to budget a search.
    """
    deadline = _deadline.get()
    return None if deadline is None else max(0.0, deadline - time.monotonic())


@dataclass(frozen=True, slots=True)
class GameResult:
    """One finished game from this bot's seat."""

    game: int
    seat: int
    opponent: str
    outcome: Outcome
    rounds: tuple[Round, ...]
    """The game's public rounds (no decks)."""
    record: GameRecord | None = None
    """The full replay record, where this side has it (local play)."""

    @property
    def won(self) -> bool:
        return self.outcome.winner == self.seat

    @property
    def lost(self) -> bool:
        return self.outcome.winner is not None and self.outcome.winner != self.seat

    @property
    def score(self) -> float:
        """1 for a win, 0.5 for a draw or an aborted game, 0 for a loss."""
        return 0.5 if self.outcome.winner is None else float(self.won)

    @property
    def forfeited(self) -> bool:
        """Whether this bot forfeited (timeout, illegal action, crash, ...)."""
        return self.outcome.offender == self.seat


class BotSession:
    """Plays one match for ``bot``: feed it every ``ServerMessage``, send what it returns."""

    def __init__(self, bot: Bot) -> None:
        self.driver = BotDriver(bot)
        self.results: list[GameResult] = []
        self.finished = False
        """Set by the match's end."""
        self.errors: list[tuple[str, str]] = []
        """Non-fatal errors the referee reported: (code, message)."""
        self.end_detail = ""
        self._ruleset: Ruleset | None = None
        self._game = 0
        self._seat = 0
        self._opponent = ""
        self._time_limit = 0.0
        self._history: tuple[Round, ...] = ()

    def handle(self, msg: pb.ServerMessage) -> pb.ClientMessage | None:
        """React to one message; the reply to send, if any.

        Raises :class:`RefereeError` for a fatal error and :class:`ProtocolError` for a
        message that makes no sense here. A bot that raises does not: the reply then
        reports the failure, and the referee forfeits that game.
        """
        kind = msg.WhichOneof("kind")
        if kind == "request":
            return self._decide(msg.request)
        if kind == "game_start":
            self._start(msg.game_start)
        elif kind == "result":
            self._finish(msg.result)
        elif kind == "match_end":
            self.finished = True
            self.end_detail = msg.match_end.detail
        elif kind == "error":
            code = _codec.error_code_name(msg.error.code)
            text = _without_code(code, msg.error.message)
            if msg.error.fatal:
                raise RefereeError(code, text)
            self.errors.append((code, text))
            log.warning("referee: %s: %s", code, text)
        else:
            raise ProtocolError("a server message of no known kind")
        return None

    def _start(self, start: pb.GameStart) -> None:
        self._ruleset = _codec.ruleset_from_pb(start.ruleset)
        self._game, self._seat, self._opponent = start.game, start.seat, start.opponent
        if start.seat not in (0, 1):
            raise ProtocolError(f"game start for seat {start.seat}")
        self._time_limit = start.time_limit_ms / 1000
        self._history = ()
        try:
            self.driver.start(start.seat, self._ruleset, start.opponent)
        except Exception:
            # A hook's failure costs nothing by itself; a broken bot shows when it decides.
            log.exception("on_game_start raised")

    def _decide(self, request: pb.DecisionRequest) -> pb.ClientMessage:
        if self._ruleset is None:
            raise ProtocolError("a decision request before any game start")
        if request.new_rounds:
            self._history += tuple(_codec.round_from_pb(r) for r in request.new_rounds)
        obs = _codec.observation_from_pb(request, self._seat, self._ruleset, self._history)
        reply = pb.ClientMessage()
        token = _deadline.set(time.monotonic() + request.time_left_ms / 1000
                              if request.time_left_ms else None)
        try:
            cards = self.driver.decide(obs)
        except Exception as exc:  # any bot failure is reported, never fatal to the session
            log.exception("the bot raised in %s", obs.decision)
            reply.failure.request_id = request.request_id
            reply.failure.message = describe(exc)
            return reply
        finally:
            _deadline.reset(token)
        action = reply.action
        action.request_id = request.request_id
        try:
            action.cards.extend(cards)
        except (TypeError, ValueError) as exc:  # not ranks at all: still the bot's failure
            reply.Clear()
            reply.failure.request_id = request.request_id
            reply.failure.message = f"the bot answered {cards!r}, not card ranks: {exc}"
        return reply

    def _finish(self, result: pb.GameResult) -> None:
        if self._ruleset is None:
            raise ProtocolError("a game result before any game start")
        if result.new_rounds:
            self._history += tuple(_codec.round_from_pb(r) for r in result.new_rounds)
        outcome = _codec.outcome_from_pb(result.outcome)
        try:
            self.driver.finish(outcome, self._history)
        except Exception:
            log.exception("on_round_end/on_game_end raised")
        self.results.append(GameResult(result.game, self._seat, self._opponent, outcome,
                                       self._history))


def _without_code(code: str, message: str) -> str:
    """The referee's text without a leading repeat of its code: a forfeit's message starts
    with the fault (``illegal_action: ...``), which the code (``ILLEGAL_ACTION``) already
    says, and ``ILLEGAL_ACTION: illegal_action: ...`` reads as a stutter."""
    head, sep, rest = message.partition(":")
    if sep and head.strip().lower() == code.lower():
        return rest.strip() or message
    return message
