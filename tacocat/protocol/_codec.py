"""Protobuf <-> engine types, both ways: the one place that knows both vocabularies.

Bots only ever see the engine's :class:`Observation`, :class:`Round`, :class:`Outcome` and
:class:`Ruleset`; the referee builds messages from the same types. Decoding is exact: an
observation that crosses the wire compares equal to the one the engine made, so a bot plays
the same game over every transport. Requests are incremental (:class:`RequestEncoder` and
:class:`ObservationDecoder` are the two halves).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from tacocat.engine import (
    BOTH,
    Decision,
    EngineError,
    Fault,
    Observation,
    Outcome,
    Reason,
    Round,
    Ruleset,
    TieRule,
    Trick,
)

from ._errors import ProtocolError
from .proto.v1 import game_pb2 as pb

DECISION_TO_PB: Final = {
    Decision.REPLACE: pb.DECISION_REPLACE, Decision.DUEL: pb.DECISION_DUEL,
    Decision.ATTACK: pb.DECISION_ATTACK, Decision.DEFEND: pb.DECISION_DEFEND,
}
DECISION_FROM_PB: Final = {v: k for k, v in DECISION_TO_PB.items()}
REASON_TO_PB: Final = {
    Reason.GOAL: pb.REASON_GOAL, Reason.ROUND_LIMIT: pb.REASON_ROUND_LIMIT,
    Reason.FORFEIT: pb.REASON_FORFEIT, Reason.ABORTED: pb.REASON_ABORTED,
}
REASON_FROM_PB: Final = {v: k for k, v in REASON_TO_PB.items()}
FAULT_TO_PB: Final = {
    Fault.TIMEOUT: pb.FAULT_TIMEOUT, Fault.ILLEGAL_ACTION: pb.FAULT_ILLEGAL_ACTION,
    Fault.CRASH: pb.FAULT_CRASH, Fault.DISCONNECT: pb.FAULT_DISCONNECT,
    Fault.PROTOCOL: pb.FAULT_PROTOCOL,
}
FAULT_FROM_PB: Final = {v: k for k, v in FAULT_TO_PB.items()}
FAULT_ERROR_CODE: Final = {  # a disconnected seat is told nothing
    Fault.TIMEOUT: pb.ERROR_CODE_TIMEOUT, Fault.ILLEGAL_ACTION: pb.ERROR_CODE_ILLEGAL_ACTION,
    Fault.CRASH: pb.ERROR_CODE_CRASH, Fault.PROTOCOL: pb.ERROR_CODE_PROTOCOL,
}
_ARROW_TO_PB: Final = {0: pb.ARROW_SEAT_0, 1: pb.ARROW_SEAT_1, BOTH: pb.ARROW_BOTH}
_ARROW_FROM_PB: Final = {v: k for k, v in _ARROW_TO_PB.items()}
_TIE_TO_PB: Final = {TieRule.NO_MOVE: pb.TIE_RULE_NO_MOVE, TieRule.ARROW: pb.TIE_RULE_ARROW}
_TIE_FROM_PB: Final = {v: k for k, v in _TIE_TO_PB.items()}
_new_tuple = tuple.__new__


def error_code_name(code: int) -> str:
    """``ERROR_CODE_TIMEOUT`` -> ``TIMEOUT`` (unknown codes keep their number)."""
    try:
        return pb.ErrorCode.Name(code).removeprefix("ERROR_CODE_")  # type: ignore[arg-type]
    except ValueError:
        return str(code)


# ------------------------------------------------------------------------ ruleset


def ruleset_to_pb(rules: Ruleset, out: pb.Ruleset) -> None:
    out.name = rules.name
    for rank, count in rules.deck.items():
        out.deck[rank] = count
    out.hand_sizes.extend(rules.hand_sizes)
    out.arrows.extend(_ARROW_TO_PB[a] for a in rules.arrows)
    out.start_space = rules.start_space
    out.tie_rule = _TIE_TO_PB[rules.tie_rule]
    out.max_rounds = rules.max_rounds


_RULESET_CACHE_SIZE: Final = 16
_rulesets_seen: dict[bytes, Ruleset] = {}
_rulesets_sent: dict[Ruleset, bytes] = {}


def ruleset_to_pb_cached(rules: Ruleset, out: pb.Ruleset) -> None:
    """:func:`ruleset_to_pb`, remembering the bytes: every game start of a match sends the
    same ruleset."""
    data = _rulesets_sent.get(rules)
    if data is None:
        if len(_rulesets_sent) >= _RULESET_CACHE_SIZE:
            _rulesets_sent.clear()
        message = pb.Ruleset()
        ruleset_to_pb(rules, message)
        data = _rulesets_sent[rules] = message.SerializeToString()
    out.MergeFromString(data)


def ruleset_from_pb(msg: pb.Ruleset) -> Ruleset:
    """The validated ruleset; a message the engine refuses raises :class:`ProtocolError`.

    The same ruleset arrives with every game start, so it is validated once per process."""
    key = msg.SerializeToString()
    known = _rulesets_seen.get(key)
    if known is not None:
        return known
    if len(_rulesets_seen) >= _RULESET_CACHE_SIZE:
        _rulesets_seen.clear()
    known = _rulesets_seen[key] = _ruleset_from_pb(msg)
    return known


def _ruleset_from_pb(msg: pb.Ruleset) -> Ruleset:
    try:
        return Ruleset.from_dict({
            "name": msg.name,
            "deck": {str(rank): count for rank, count in sorted(msg.deck.items())},
            "hand_sizes": list(msg.hand_sizes),
            "arrows": [_ARROW_FROM_PB[a] for a in msg.arrows],
            "start_space": msg.start_space,
            "tie_rule": _TIE_FROM_PB[msg.tie_rule].value,
            "max_rounds": msg.max_rounds,
        })
    except (KeyError, EngineError) as exc:
        raise ProtocolError(f"unusable ruleset in GameStart: {exc}") from exc


# ------------------------------------------------------------------------ rounds, outcomes


def round_to_pb(r: Round, out: pb.PublicRound) -> None:
    """The public part of a round: never its deck."""
    out.space = r.space
    # The wire has no "not yet": a seat a forfeit stopped before it replaced shows none.
    out.replace_0.extend(r.replace[0] or ())
    out.replace_1.extend(r.replace[1] or ())
    for c0, c1 in r.duels:
        out.duels.add(seat_0=c0, seat_1=c1)
    for t in r.tricks:
        out.tricks.add(attacker=t.attacker, attack=t.attack, response=t.response)
    if r.showdown is not None:
        out.showdown.seat_0, out.showdown.seat_1 = r.showdown
    if r.winner is not None:
        out.winner = r.winner


def round_from_pb(msg: pb.PublicRound) -> Round:
    showdown = (msg.showdown.seat_0, msg.showdown.seat_1) if msg.HasField("showdown") else None
    return Round(
        msg.space, None, (tuple(msg.replace_0[:]), tuple(msg.replace_1[:])),
        tuple((d.seat_0, d.seat_1) for d in msg.duels), _tricks_from_pb(msg.tricks),
        showdown, msg.winner if msg.HasField("winner") else None,
    )


def outcome_to_pb(outcome: Outcome, out: pb.Outcome) -> None:
    if outcome.winner is not None:
        out.winner = outcome.winner
    out.reason = REASON_TO_PB[outcome.reason]
    out.detail = outcome.detail
    if outcome.fault is not None:
        out.fault = FAULT_TO_PB[outcome.fault]
    if outcome.offender is not None:
        out.offender = outcome.offender
    if outcome.phase is not None:
        out.phase = DECISION_TO_PB[outcome.phase]


def outcome_from_pb(msg: pb.Outcome) -> Outcome:
    try:
        reason = REASON_FROM_PB[msg.reason]
    except KeyError:
        raise ProtocolError(f"game result with unknown reason {msg.reason}") from None
    return Outcome(
        msg.winner if msg.HasField("winner") else None, reason, msg.detail,
        FAULT_FROM_PB.get(msg.fault), msg.offender if msg.HasField("offender") else None,
        DECISION_FROM_PB.get(msg.phase),
    )


def _tricks_from_pb(tricks: Sequence[pb.Trick]) -> tuple[Trick, ...]:
    return tuple([_new_tuple(Trick, (t.attacker, tuple(t.attack[:]), tuple(t.response[:])))
                  for t in tricks])


# ------------------------------------------------------------------------ observations


_NOT_REVEALED = -1
_NO_ATTACKER = -1
_covered_bits: dict[tuple[bool, ...], int] = {}
_covered_of: dict[tuple[int, int], tuple[bool, ...]] = {}


def _bits(covered: tuple[bool, ...]) -> int:
    bits = _covered_bits.get(covered)
    if bits is None:
        bits = _covered_bits[covered] = sum(1 << i for i, c in enumerate(covered) if c)
    return bits


def _unbits(bits: int, spaces: int) -> tuple[bool, ...]:
    covered = _covered_of.get((bits, spaces))
    if covered is None:
        covered = _covered_of[(bits, spaces)] = tuple(bool(bits >> i & 1)
                                                      for i in range(spaces))
    return covered


class RequestEncoder:
    """One seat's requests in one game, referee side (protocol 2: packed and incremental).

    Each public fact goes out once: finished rounds as ``new_rounds``, and within a round
    only the discards, duels and tricks added since the seat's previous request; the rest
    of the seat's view is packed into ``view`` (its layout is in ``game.proto``). The
    :class:`ObservationDecoder` on the bot's side rebuilds the very observation the engine
    made.
    """

    __slots__ = ("_discards", "_duels", "_round", "_tricks", "rounds_sent")

    def __init__(self) -> None:
        self.rounds_sent = 0
        self._round = -1
        self._discards = self._duels = self._tricks = 0

    def encode(self, obs: Observation, request_id: int, game: int, time_left_ms: int,
               out: pb.DecisionRequest) -> None:
        """Fill ``out`` with what ``obs.seat`` is asked and has not been told yet."""
        out.request_id = request_id
        out.game = game
        out.decision = DECISION_TO_PB[obs.decision]  # type: ignore[index]
        out.time_left_ms = time_left_ms
        history = obs.history
        if len(history) > self.rounds_sent:
            for r in history[self.rounds_sent:]:
                round_to_pb(r, out.new_rounds.add())
            self.rounds_sent = len(history)
        if obs.round != self._round:
            self._round = obs.round
            self._discards = self._duels = self._tricks = 0
        score = obs.score
        attacker = obs.attacker
        hand, attack = obs.hand, obs.attack
        view = [obs.round, obs.position, _bits(obs.covered), obs.opponent_cards,
                obs.pile_size, obs.replace_cap, score[0], score[1],
                _NO_ATTACKER if attacker is None else attacker, len(hand), *hand,
                len(attack), *attack]
        discards = obs.discards
        view.append(len(discards) - self._discards)
        view += discards[self._discards:]
        self._discards = len(discards)
        for replaced in obs.replaced:
            if replaced is None:
                view.append(_NOT_REVEALED)
            else:
                view.append(len(replaced))
                view += replaced
        duels = obs.duels
        view.append(len(duels) - self._duels)
        for pair in duels[self._duels:]:
            view += pair
        self._duels = len(duels)
        tricks = obs.tricks
        view.append(len(tricks) - self._tricks)
        for trick in tricks[self._tricks:]:
            view.append(trick.attacker)
            view.append(len(trick.attack))
            view += trick.attack
            view += trick.response
        self._tricks = len(tricks)
        out.view.extend(view)

    def finish(self, rounds: Sequence[Round], out: pb.GameResult) -> None:
        """Add the rounds the seat has not been sent (all of ``rounds`` is the game's)."""
        for r in rounds[self.rounds_sent:]:
            round_to_pb(r, out.new_rounds.add())
        self.rounds_sent = len(rounds)


class ObservationDecoder:
    """One game's requests, bot side: keeps what :class:`RequestEncoder` sent once (the
    history, this round's discards, duels and tricks) and rebuilds each observation."""

    __slots__ = ("_discards", "_duels", "_round", "_spaces", "_tricks", "history", "ruleset",
                 "seat")

    def __init__(self, seat: int, ruleset: Ruleset) -> None:
        self.seat = seat
        self.ruleset = ruleset
        self.history: tuple[Round, ...] = ()
        self._spaces = len(ruleset.hand_sizes)
        self._round = -1
        self._discards: tuple[int, ...] = ()
        self._duels: tuple[tuple[int, int], ...] = ()
        self._tricks: tuple[Trick, ...] = ()

    def add_rounds(self, rounds: Sequence[pb.PublicRound]) -> tuple[Round, ...]:
        """Append finished rounds to the history (a request's or a result's)."""
        if rounds:
            self.history += tuple([round_from_pb(r) for r in rounds])
        return self.history

    def decode(self, msg: pb.DecisionRequest) -> Observation:
        """The :class:`Observation` a request stands for."""
        decision = DECISION_FROM_PB.get(msg.decision)
        if decision is None:
            raise ProtocolError(f"decision request {msg.request_id} asks for unknown decision "
                                f"{msg.decision}")
        history = self.add_rounds(msg.new_rounds) if msg.new_rounds else self.history
        view = msg.view[:]
        try:
            return self._unpack(view, decision, history)
        except (IndexError, ValueError) as exc:
            raise ProtocolError(f"decision request {msg.request_id} has a malformed view of "
                                f"{len(view)} numbers: {exc}") from None

    def _unpack(self, view: list[int], decision: Decision,
                history: tuple[Round, ...]) -> Observation:
        (round_, position, covered, opponent_cards, pile_size, replace_cap, score_0, score_1,
         attacker, n) = view[:10]
        if round_ != self._round:
            self._round = round_
            self._discards, self._duels, self._tricks = (), (), ()
        # Counts are trusted only as far as they cannot loop or reach backwards (negative
        # indices are valid Python): a view that does not add up raises at the end.
        at = 10
        hand = tuple(view[at:at + n])
        at += n
        n = view[at]
        attack = tuple(view[at + 1:at + 1 + n])
        at += 1 + n
        n = view[at]
        if n:
            self._discards += tuple(view[at + 1:at + 1 + n])
        at += 1 + n
        replaced: list[tuple[int, ...] | None] = []
        for _ in (0, 1):
            n = view[at]
            if n == _NOT_REVEALED:
                replaced.append(None)
                at += 1
            else:
                replaced.append(tuple(view[at + 1:at + 1 + n]))
                at += 1 + n
        n = view[at]
        at += 1
        if n:
            self._duels += tuple([(view[i], view[i + 1]) for i in range(at, at + 2 * n, 2)])
            at += 2 * n
        n = view[at]
        at += 1
        if n:
            if not 0 < n <= len(view):
                raise ValueError(f"{n} tricks")
            tricks = []
            for _ in range(n):
                trick_attacker, k = view[at], view[at + 1]
                if k < 0:
                    raise ValueError(f"a trick of {k} cards")
                at += 2
                tricks.append(_new_tuple(Trick, (trick_attacker, tuple(view[at:at + k]),
                                                 tuple(view[at + k:at + 2 * k]))))
                at += 2 * k
            self._tricks += tuple(tricks)
        if at != len(view) or len(hand) != view[9] or min(view[9], len(attack)) < 0:
            raise ValueError(f"{len(view) - at} numbers left over")
        # tuple.__new__ skips the named tuple's Python-level __new__: this runs per decision.
        return _new_tuple(Observation, (
            self.seat, decision, self.ruleset, round_, position,
            _unbits(covered, self._spaces), hand, opponent_cards, pile_size, self._discards,
            (replaced[0], replaced[1]), self._duels, self._tricks,
            None if attacker == _NO_ATTACKER else attacker, attack, replace_cap,
            (score_0, score_1), history,
        ))
