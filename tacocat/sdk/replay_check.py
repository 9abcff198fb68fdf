"""Re-feed a recorded game's decisions to a bot: "why did my bot lose that arena game?".

:func:`check_game` replays a :class:`~tacocat.engine.GameRecord` (its recorded decks, so the
same hands) through :meth:`~tacocat.engine.GameRecord.replay` and, at every decision of the
checked seat, asks the bot the same observation it was asked when the game was played, in
the same order (a fresh bot per game and seat, told the same seat and opponent, its round
hooks fired as they were), then compares its answer with the recorded one. Decisions both
seats made at once are observed together before either is applied, as the referee does. A
game the seat forfeited (a crash, a timeout, an illegal answer) ends with the decision it
never answered: the bot is asked that one too, which reproduces a crash, unless it was a
defence (the attack it answered is not in the record, which keeps whole tricks only).

Used by ``tacocat replay check``; bots run in this process, without a time limit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from tacocat.engine import (
    Bot,
    BotDriver,
    GameRecord,
    GameState,
    IllegalActionError,
    Observation,
    Round,
    describe_exception,
)


@dataclass(frozen=True)
class Difference:
    """A decision where the bot did not do what the record says."""

    seat: int
    observation: Observation
    recorded: tuple[int, ...] | None
    """The recorded answer; ``None`` for the decision the seat never answered (its forfeit)."""
    answered: tuple[int, ...] | None
    """The bot's answer now; ``None`` when it raised."""
    problem: str
    """``different``, ``illegal: why`` or ``raised: Error: message at file:line``."""


@dataclass
class GameCheck:
    """The outcome of re-feeding one game to a bot."""

    decisions: int = 0
    differences: list[Difference] = field(default_factory=list)
    note: str = ""
    """Why the seat's forfeit could not be re-asked, when it could not."""

    @property
    def matched(self) -> bool:
        return not self.differences


def check_game(record: GameRecord, make_bot: Callable[[], Bot], seats: Sequence[int]) -> GameCheck:
    """Ask a fresh bot from ``make_bot`` every decision of each seat in ``seats``."""
    check = GameCheck()
    drivers: dict[int, BotDriver] = {}
    for seat in seats:
        driver = BotDriver(make_bot())
        driver.start(seat, record.ruleset, record.players[1 - seat])
        drivers[seat] = driver
    pending: dict[int, Observation] = {}

    def on_decision(state: GameState, seat: int, recorded: tuple[int, ...] | None) -> None:
        if seat not in pending:  # a step: every seat asked now sees the same state
            for asked in state.to_act:
                pending[asked] = state.observation(asked)
        observation = pending.pop(seat)
        driver = drivers.get(seat)
        if driver is None:
            return
        check.decisions += 1
        try:
            answer = driver.decide(observation)
        except Exception as exc:  # the bot's failure is what the author wants to see
            check.differences.append(Difference(seat, observation, recorded, None,
                                                f"raised: {describe_exception(exc)}"))
            return
        if answer == recorded:
            return
        try:
            state.check(seat, answer)
        except IllegalActionError as exc:
            problem = f"illegal: {exc.reason}"
        else:
            problem = "different" if recorded is not None else "legal now"
        check.differences.append(Difference(seat, observation, recorded, answer, problem))

    record.replay(on_decision)
    result = record.result
    if result.offender in drivers and all(d.recorded is not None for d in check.differences):
        check.note = (f"seat {result.offender} forfeited ({result.detail}) at a decision the "
                      "record cannot rebuild (a record written before cut rounds were kept "
                      "lacks the attack it was answering)")
    return check


def describe(observation: Observation) -> str:
    """An observation for a terminal, a few lines."""
    o = observation
    decision = o.decision.value if o.decision is not None else "nothing"
    lines = [
        f"seat {o.seat} asked to {decision} in round {o.round + 1}; Tacocat on {o.position}, "
        f"covered {''.join('x' if c else '.' for c in o.covered)}, rounds won {o.score}",
        f"hand {list(o.hand)}; opponent holds {o.opponent_cards}; pile {o.pile_size}",
    ]
    if o.discards:
        lines.append(f"discards this round {list(o.discards)}")
    if o.replaced != (None, None):
        lines.append(f"replaced {[list(r) if r is not None else None for r in o.replaced]}")
    if o.duels:
        lines.append(f"duels {[list(d) for d in o.duels]}")
    if o.tricks:
        lines.append("tricks " + "; ".join(
            f"seat {t.attacker} {list(t.attack)} -> {list(t.response)}" for t in o.tricks))
    if o.attack:
        lines.append(f"attack to answer {list(o.attack)}")
    if o.decision is not None and o.decision.value == "replace":
        lines.append(f"may replace up to {o.replace_cap}")
    lines.append(f"earlier rounds: {_rounds(o.history)}")
    return "\n".join(lines)


def _rounds(history: Sequence[Round]) -> str:
    if not history:
        return "none"
    return ", ".join(f"{r.showdown}->" + ("tie" if r.winner is None else f"seat {r.winner}")
                     for r in history)
