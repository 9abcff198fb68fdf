"""Protobuf <-> engine types, both ways: the one place that knows both vocabularies.

Bots only ever see the engine's :class:`Observation`, :class:`Round`, :class:`Outcome` and
:class:`Ruleset`; the referee builds messages from the same types. Decoding is exact: an
observation that crosses the wire compares equal to the one the engine made, so a bot plays
the same game over every transport.
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


def ruleset_from_pb(msg: pb.Ruleset) -> Ruleset:
    """The validated ruleset; a message the engine refuses raises :class:`ProtocolError`."""
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
    out.replace_0.extend(r.replace[0])
    out.replace_1.extend(r.replace[1])
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


def outcome_from_pb(msg: pb.Outcome) -> Outcome:
    try:
        reason = REASON_FROM_PB[msg.reason]
    except KeyError:
        raise ProtocolError(f"game result with unknown reason {msg.reason}") from None
    return Outcome(
        msg.winner if msg.HasField("winner") else None, reason, msg.detail,
        FAULT_FROM_PB.get(msg.fault), msg.offender if msg.HasField("offender") else None,
    )


def _tricks_from_pb(tricks: Sequence[pb.Trick]) -> tuple[Trick, ...]:
    return tuple([_new_tuple(Trick, (t.attacker, tuple(t.attack[:]), tuple(t.response[:])))
                  for t in tricks])


# ------------------------------------------------------------------------ observations


def request_to_pb(obs: Observation, request_id: int, time_left_ms: int,
                  new_rounds: Sequence[Round], out: pb.DecisionRequest) -> None:
    """Fill ``out`` with what ``obs.seat`` is asked and may know: its observation, minus the
    ruleset (sent at game start) and minus the rounds it was already sent."""
    out.request_id = request_id
    out.decision = DECISION_TO_PB[obs.decision]  # type: ignore[index]
    out.time_left_ms = time_left_ms
    for r in new_rounds:
        round_to_pb(r, out.new_rounds.add())
    out.round = obs.round
    out.position = obs.position
    out.covered.extend(obs.covered)
    out.hand.extend(obs.hand)
    out.opponent_cards = obs.opponent_cards
    out.pile_size = obs.pile_size
    out.discards.extend(obs.discards)
    first, second = obs.replaced
    # Presence matters: an empty but present list means "replaced nothing", unset means
    # "not revealed yet".
    if first is not None:
        out.replaced_0.SetInParent()
        out.replaced_0.cards.extend(first)
    if second is not None:
        out.replaced_1.SetInParent()
        out.replaced_1.cards.extend(second)
    for c0, c1 in obs.duels:
        out.duels.add(seat_0=c0, seat_1=c1)
    for t in obs.tricks:
        out.tricks.add(attacker=t.attacker, attack=t.attack, response=t.response)
    if obs.attacker is not None:
        out.attacker = obs.attacker
    out.attack.extend(obs.attack)
    out.replace_cap = obs.replace_cap
    out.score.extend(obs.score)


def observation_from_pb(msg: pb.DecisionRequest, seat: int, ruleset: Ruleset,
                        history: tuple[Round, ...]) -> Observation:
    """The :class:`Observation` a request stands for (``history``: the rounds so far)."""
    decision = DECISION_FROM_PB.get(msg.decision)
    if decision is None:
        raise ProtocolError(f"decision request {msg.request_id} asks for unknown decision "
                            f"{msg.decision}")
    score = msg.score[:]
    if len(score) != 2:
        raise ProtocolError(f"decision request {msg.request_id} has a score of {len(score)} "
                            "entries, not 2")
    has = msg.HasField
    # This runs once per decision: ``tuple(field[:])`` is twice as fast as ``tuple(field)``
    # on upb containers, and tuple.__new__ skips the named tuples' Python-level __new__.
    return _new_tuple(Observation, (
        seat, decision, ruleset, msg.round, msg.position, tuple(msg.covered[:]),
        tuple(msg.hand[:]), msg.opponent_cards, msg.pile_size, tuple(msg.discards[:]),
        (tuple(msg.replaced_0.cards[:]) if has("replaced_0") else None,
         tuple(msg.replaced_1.cards[:]) if has("replaced_1") else None),
        tuple([(d.seat_0, d.seat_1) for d in msg.duels]) if msg.duels else (),
        _tricks_from_pb(msg.tricks) if msg.tricks else (),
        msg.attacker if has("attacker") else None, tuple(msg.attack[:]),
        msg.replace_cap, (score[0], score[1]), history,
    ))
