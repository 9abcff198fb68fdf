"""The bot's half of the protocol, for any transport: server messages in, replies out.

:class:`BotSession` turns each ``ServerMessage`` into calls on a :class:`BotDriver` (so the
bot sees engine types only) and says what to send back. A match may play several games at
once (protocol 2), so the session keeps one bot object per game, made fresh for each game
(:func:`~tacocat.engine.bot_factory`). The live client and the sandbox host are I/O around
it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextvars import ContextVar
from typing import TYPE_CHECKING

from tacocat import protocol
from tacocat.engine import (
    Bot,
    BotDriver,
    bot_factory,
    describe_exception,
)
from tacocat.protocol import ObservationDecoder
from tacocat.protocol.proto.v1 import game_pb2 as pb

from ._errors import ProtocolError, RefereeError
from ._game_result import GameResult
from ._own_time import own_elapsed, own_start

if TYPE_CHECKING:
    import logging


def _log() -> logging.Logger:
    """The SDK's logger, imported on first use: ``logging`` (and ``traceback`` with it) would
    cost every bot host's start 5 ms, and a bot that never fails never needs it."""
    import logging  # noqa: PLC0415

    return logging.getLogger("tacocat.sdk")

_deadline: ContextVar[float | None] = ContextVar("tacocat_decision_deadline", default=None)


def time_left() -> float | None:
    """Seconds left for the decision being made now, or ``None`` without a time limit.

    Call it from inside a bot's ``replace/duel/attack/defend`` to budget a search.
    """
    deadline = _deadline.get()
    return None if deadline is None else max(0.0, deadline - time.monotonic())


class _Game:
    """One game in flight, bot side."""

    __slots__ = ("broken", "decoder", "driver", "game", "opponent", "time_limit")

    def __init__(self, game: int, driver: BotDriver | None, decoder: ObservationDecoder,
                 opponent: str, time_limit: float) -> None:
        self.game = game
        self.driver = driver
        self.broken = ""
        """Why this game has no bot (its construction raised)."""
        self.decoder = decoder
        self.opponent = opponent
        self.time_limit = time_limit


class BotSession:
    """Plays one match for a bot: feed it every ``ServerMessage``, send what it returns.

    ``bot`` is a bot to copy for each game, or a factory of fresh ones.
    """

    def __init__(self, bot: Bot | Callable[[], Bot]) -> None:
        self.factory = bot_factory(bot)
        self.results: list[GameResult] = []
        self.finished = False
        """Set by the match's end."""
        self.errors: list[tuple[str, str]] = []
        """Non-fatal errors the referee reported: (code, message)."""
        self.end_detail = ""
        self._games: dict[int, _Game] = {}

    def handle(self, msg: pb.ServerMessage,
               reply: Callable[[], pb.ClientMessage] = pb.ClientMessage) -> pb.ClientMessage | None:
        """React to one message; the reply to send, if any, made by ``reply()`` (a frame's
        ``messages.add`` builds it in place).

        Raises :class:`RefereeError` for a fatal error and :class:`ProtocolError` for a
        message that makes no sense here. A bot that raises does not: the reply then
        reports the failure, and the referee forfeits that game.
        """
        try:
            return self._handle(msg, reply)
        except protocol.ProtocolError as exc:
            if isinstance(exc, ProtocolError):
                raise
            raise ProtocolError(str(exc)) from exc

    def _handle(self, msg: pb.ServerMessage,
                reply: Callable[[], pb.ClientMessage]) -> pb.ClientMessage | None:
        kind = msg.WhichOneof("kind")
        if kind == "request":
            return self._decide(msg.request, reply())
        if kind == "game_start":
            self._start(msg.game_start)
        elif kind == "result":
            self._finish(msg.result)
        elif kind == "match_end":
            self.finished = True
            self.end_detail = msg.match_end.detail
        elif kind == "error":
            code = protocol.error_code_name(msg.error.code)
            text = _without_code(code, msg.error.message)
            if msg.error.fatal:
                raise RefereeError(code, text)
            self.errors.append((code, text))
            _log().warning("referee: %s: %s", code, text)
        else:
            raise ProtocolError("a server message of no known kind")
        return None

    def _start(self, start: pb.GameStart) -> None:
        ruleset = protocol.ruleset_from_pb(start.ruleset)
        if start.seat not in (0, 1):
            raise ProtocolError(f"game start for seat {start.seat}")
        if start.game in self._games:
            raise ProtocolError(f"game {start.game} started twice")
        game = _Game(start.game, None, ObservationDecoder(start.seat, ruleset),
                     start.opponent, start.time_limit_ms / 1000)
        self._games[start.game] = game
        try:
            game.driver = BotDriver(self.factory())
        except Exception as exc:  # the game's first decision reports it
            _log().exception("making the bot for game %d raised", start.game)
            game.broken = f"making the bot raised {describe_exception(exc)}"
            return
        try:
            game.driver.start(start.seat, ruleset, start.opponent)
        except Exception:
            # A hook's failure costs nothing by itself; a broken bot shows when it decides.
            _log().exception("on_game_start raised")

    def _game(self, game: int, what: str) -> _Game:
        try:
            return self._games[game]
        except KeyError:
            raise ProtocolError(f"{what} for game {game}, which has not started") from None

    def _decide(self, request: pb.DecisionRequest, reply: pb.ClientMessage) -> pb.ClientMessage:
        game = self._games.get(request.game)
        if game is None:
            game = self._game(request.game, f"decision request {request.request_id}")
        obs = game.decoder.decode(request)
        token = _deadline.set(time.monotonic() + request.time_left_ms / 1000
                              if request.time_left_ms else None)
        started = own_start()
        try:
            if game.driver is None:
                raise RuntimeError(game.broken)
            cards = game.driver.decide(obs)
        except Exception as exc:  # any bot failure is reported, never fatal to the session
            _log().exception("the bot raised in %s", obs.decision)
            reply.failure.request_id = request.request_id
            reply.failure.message = game.broken or describe_exception(exc)
            reply.failure.think_us = _micros(started)
            return reply
        finally:
            _deadline.reset(token)
        action = reply.action
        action.request_id = request.request_id
        action.think_us = _micros(started)
        try:
            action.cards.extend(cards)
        except (TypeError, ValueError) as exc:  # not ranks at all: still the bot's failure
            reply.Clear()
            reply.failure.request_id = request.request_id
            reply.failure.message = f"the bot answered {cards!r}, not card ranks: {exc}"
            _log().error("%s", reply.failure.message)  # the referee's record says less
            reply.failure.think_us = _micros(started)
        return reply

    def _finish(self, result: pb.GameResult) -> None:
        game = self._game(result.game, "a game result")
        del self._games[result.game]
        history = game.decoder.add_rounds(result.new_rounds)
        outcome = protocol.outcome_from_pb(result.outcome)
        try:
            if game.driver is not None:
                game.driver.finish(outcome, history)
        except Exception:
            _log().exception("on_round_end/on_game_end raised")
        self.results.append(GameResult(result.game, game.decoder.seat, game.opponent, outcome,
                                       history))


def _micros(since: float) -> int:
    """Microseconds of the decision's own time since ``since`` (:func:`own_start`)."""
    return max(0, round(own_elapsed(since) * 1_000_000))


def _without_code(code: str, message: str) -> str:
    """The referee's text without a leading repeat of its code: a forfeit's message starts
    with the fault (``illegal_action: ...``), which the code (``ILLEGAL_ACTION``) already
    says, and ``ILLEGAL_ACTION: illegal_action: ...`` reads as a stutter."""
    head, sep, rest = message.partition(":")
    if sep and head.strip().lower() == code.lower():
        return rest.strip() or message
    return message
