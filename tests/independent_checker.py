"""Independent checker of Tacocat replay records (RULES.md §8).

Re-simulates every game of a replay record from the recorded decks and choices and reports every
broken rule it finds.  It is written from RULES.md alone and deliberately imports nothing from the
``tacocat`` package: it is a second implementation whose job is to catch engine bugs.

Usage: ``python tests/independent_checker.py records.jsonl [more.jsonl ...]``
(prints a summary; exit status 1 if any record has a problem, 2 on a usage or I/O error).
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

try:
    from tests.independent_rules import (
        N_SPACES,
        Ruleset,
        cards_of,
        check_ruleset,
        is_int,
        is_rank_list,
    )
except ImportError:  # run as a script: python tests/independent_checker.py
    from independent_rules import (  # type: ignore[no-redef]
        N_SPACES,
        Ruleset,
        cards_of,
        check_ruleset,
        is_int,
        is_rank_list,
    )

FORMAT = "tacocat-replay/1"
REASONS = ("goal", "round_limit", "forfeit", "aborted")
# The parts of a round record in the order they happen; a truncated round stops at one of them.
STAGES = ("space", "deck", "replace", "duels", "tricks", "showdown", "winner")


class _StopError(Exception):
    """A problem was recorded; the rest of the record cannot be re-simulated."""


class _TruncatedError(Exception):
    """The legitimately truncated last round of a forfeited/aborted game ends here.

    `phase` is the decision the game was waiting for there (None once no decision was due),
    `waiting` the seats it was waiting for.
    """

    def __init__(self, phase: str | None = None, waiting: tuple[int, ...] = ()) -> None:
        super().__init__(phase)
        self.phase, self.waiting = phase, waiting


class _RoundChecker:
    """Re-simulates one round record against the state Tacocat should be in."""

    def __init__(
        self,
        rules: Ruleset,
        index: int,
        rnd: dict[str, Any],
        *,
        space: int,
        covered: set[int],
        may_truncate: bool,
        problems: list[str],
    ) -> None:
        self.rules, self.index, self.rnd, self.space = rules, index, rnd, space
        self.covered, self.may_truncate, self.problems = covered, may_truncate, problems
        self.hands: list[Counter[int]] = [Counter(), Counter()]

    def fail(self, message: str, trick: int | None = None) -> NoReturn:
        where = f"round {self.index}" + ("" if trick is None else f" trick {trick}")
        self.problems.append(f"{where}: {message}")
        raise _StopError

    def truncate(self, stage: str, phase: str | None, waiting: tuple[int, ...]) -> NoReturn:
        """End a truncated round at `stage`: nothing of a later stage may be recorded."""
        for later in STAGES[STAGES.index(stage) + 1 :]:
            if self.rnd.get(later) not in (None, []):
                self.fail(f"{later!r} is recorded although the round stops at {stage!r}")
        raise _TruncatedError(phase, waiting)

    def get(self, stage: str, phase: str | None = None, waiting: tuple[int, ...] = ()) -> Any:
        value = self.rnd.get(stage)
        if value is None:
            if self.may_truncate:
                self.truncate(stage, phase, waiting)
            self.fail(f"missing {stage!r}")
        return value

    def ranks(self, value: object, what: str, trick: int | None = None) -> list[int]:
        if not is_rank_list(value):
            self.fail(f"{what} must be a list of ranks, got {value!r}", trick)
        return list(value)

    def size(self) -> int:
        return self.hands[0].total()

    def take(self, seat: int, cards: list[int], what: str, trick: int | None = None) -> None:
        """Remove `cards` from a seat's hand, failing if the hand does not hold them all."""
        absent = Counter(cards) - self.hands[seat]
        if absent:
            self.fail(
                f"{what} {cards} uses {cards_of(absent)}, not in seat {seat}'s hand "
                f"{cards_of(self.hands[seat])}",
                trick,
            )
        self.hands[seat] -= Counter(cards)

    def run(self) -> tuple[_TruncatedError | None, int | None]:
        """Return (where a truncated round stops, round winner); raise _StopError after
        recording a problem."""
        try:
            return None, self._run()
        except _TruncatedError as stop:
            return stop, None

    def _run(self) -> int | None:
        space = self.get("space")
        if space != self.space or not is_int(space):
            note = " (a covered space)" if is_int(space) and space in self.covered else ""
            self.fail(f"space is {space!r}{note}, but Tacocat should be on space {self.space}")
        deck = self.get("deck")
        if not is_rank_list(deck) or Counter(deck) != self.rules.deck:
            got = Counter(deck) if is_rank_list(deck) else Counter()
            self.fail(
                f"deck is not a permutation of the ruleset deck: extra "
                f"{cards_of(got - self.rules.deck)}, missing {cards_of(self.rules.deck - got)}"
            )
        h = self.rules.hand_sizes[space]
        self.hands = [Counter(deck[0 : 2 * h : 2]), Counter(deck[1 : 2 * h : 2])]
        arrow = self.rules.arrow_seat(space)
        self.replace(self.get("replace", "replace", (0, 1) if arrow is None else (arrow,)),
                     deck[2 * h :])
        attacker = self.duels(self.get("duels", "duel", (0, 1)))
        self.tricks(self.get("tricks", "attack", (attacker,) if attacker is not None else ()),
                    attacker)
        return self.showdown(self.get("showdown"))

    def replace(self, value: object, pile: list[int]) -> None:
        if not (isinstance(value, list) and len(value) == 2):
            self.fail(f"replace must be [seat 0 discards, seat 1 discards], got {value!r}")
        arrow = self.rules.arrow_seat(self.space)
        order = (0, 1) if arrow is None else (arrow, 1 - arrow)
        if None in value and self.may_truncate:
            # A seat that had not replaced when the game ended (null, never an empty list).
            waiting = tuple(seat for seat in order if value[seat] is None)
            if arrow is not None and value[arrow] is None and value[1 - arrow] is not None:
                self.fail(f"seat {1 - arrow} replaced before seat {arrow}, the arrow's seat")
            for seat in order:
                if value[seat] is not None:
                    self.take(seat, self.ranks(value[seat], f"replace[{seat}]"),
                              f"replace[{seat}]")
            self.truncate("replace", "replace", waiting)
        discards = [self.ranks(value[seat], f"replace[{seat}]") for seat in (0, 1)]
        if arrow is not None and len(discards[1 - arrow]) > len(discards[arrow]):
            self.fail(
                f"one-arrow space {self.space}: seat {1 - arrow} discarded "
                f"{len(discards[1 - arrow])} cards {discards[1 - arrow]}, more than the "
                f"{len(discards[arrow])} discarded by seat {arrow} (the arrow's seat)"
            )
        top = 0
        for seat in order:
            self.take(seat, discards[seat], f"replace[{seat}]")
            self.hands[seat].update(pile[top : top + len(discards[seat])])
            top += len(discards[seat])

    def duels(self, value: object) -> int | None:
        if not isinstance(value, list):
            self.fail(f"duels must be a list, got {value!r}")
        attacker: int | None = None
        done = 0
        while attacker is None and self.size() > 1:
            if done >= len(value):
                if self.may_truncate:
                    self.truncate("duels", "duel", (0, 1))
                self.fail(
                    f"{len(value)} duel(s) recorded, but another duel is due "
                    f"(hands hold {self.size()} cards each)"
                )
            pair = value[done]
            last = done == len(value) - 1
            if self.may_truncate and last and isinstance(pair, list) and None in pair:
                if len(pair) != 2 or pair == [None, None]:
                    self.fail(f"duel {done} must hold at least one card, got {pair!r}")
                for seat in (0, 1):
                    if pair[seat] is not None:
                        self.take(seat, self.ranks(pair[seat : seat + 1], f"duel {done}"),
                                  f"duel {done} seat {seat} card")
                self.truncate("duels", "duel", tuple(s for s in (0, 1) if pair[s] is None))
            if not (is_rank_list(pair) and len(pair) == 2):
                self.fail(f"duel {done} must be [seat 0 card, seat 1 card], got {pair!r}")
            self.take(0, pair[:1], f"duel {done} seat 0 card")
            self.take(1, pair[1:], f"duel {done} seat 1 card")
            done += 1
            if pair[0] != pair[1]:
                attacker = 0 if pair[0] > pair[1] else 1
        if done < len(value):
            reason = (
                "the duel was already decided"
                if attacker is not None
                else ("both seats hold one card, so there is no duel")
            )
            self.fail(f"extra duel {done} {value[done]!r}: {reason}")
        return attacker

    def tricks(self, value: object, attacker: int | None) -> None:
        if not isinstance(value, list):
            self.fail(f"tricks must be a list, got {value!r}")
        done = 0
        while self.size() > 1:
            if done >= len(value):
                if self.may_truncate:
                    self.truncate("tricks", "attack", (attacker,) if attacker is not None else ())
                self.fail(
                    f"{len(value)} trick(s) recorded, but play continues "
                    f"(hands hold {self.size()} cards each)"
                )
            assert attacker is not None  # a decided duel precedes any trick
            attacker = self.trick(done, value[done], attacker, last=done == len(value) - 1)
            done += 1
        if done < len(value):
            self.fail(f"extra trick {value[done]!r}: hands already hold one card each", done)

    def trick(self, t: int, trick: object, expected: int, last: bool) -> int:
        """Check one trick; return the seat that attacks next."""
        if not isinstance(trick, dict):
            self.fail(f"trick must be an object, got {trick!r}", t)
        seat = trick.get("attacker")
        if seat != expected or not is_int(seat):
            self.fail(f"attacker is {seat!r}, but seat {expected} should attack", t)
        attack = self.ranks(trick.get("attack"), "attack", t)
        n = self.size()
        shape = _attack_shape_problem(attack)
        if shape:
            self.fail(f"attack {attack} is {shape}", t)
        if len(attack) > n - 1:
            self.fail(
                f"attack {attack} of {len(attack)} cards would empty seat {seat}'s hand of "
                f"{n} cards (at most {n - 1} may be played)",
                t,
            )
        self.take(expected, attack, "attack", t)
        defender = 1 - expected
        if trick.get("response") is None and self.may_truncate and last:
            self.truncate("tricks", "defend", (defender,))
        response = self.ranks(trick.get("response"), "response", t)
        if len(response) != len(attack):
            self.fail(
                f"response {response} has {len(response)} cards for the "
                f"{len(attack)}-card attack {attack}",
                t,
            )
        hand = cards_of(self.hands[defender])
        self.take(defender, response, "response", t)
        sacrificed = sorted(r for a, r in zip(attack, response, strict=True) if r < a)
        if sacrificed != hand[: len(sacrificed)]:
            self.fail(
                f"seat {defender} sacrificed {sacrificed} (response {response} to attack "
                f"{attack}), but a sacrifice must be its {len(sacrificed)} lowest card(s) "
                f"{hand[: len(sacrificed)]} of hand {hand}",
                t,
            )
        return expected if sacrificed else defender

    def showdown(self, value: object) -> int | None:
        final = [cards_of(self.hands[0])[0], cards_of(self.hands[1])[0]]
        if value != final or not is_rank_list(value):
            self.fail(f"showdown is {value!r}, but the seats' last cards are {final}")
        expected = 0 if final[0] < final[1] else 1 if final[0] > final[1] else None
        if expected is None and self.rules.tie_rule == "arrow":
            expected = self.rules.arrow_seat(self.space)
        if "winner" not in self.rnd:
            if self.may_truncate:
                raise _TruncatedError
            self.fail("missing 'winner'")
        winner = self.rnd["winner"]
        if winner is None and expected is not None and self.may_truncate:
            raise _TruncatedError
        if winner != expected or (winner is not None and not is_int(winner)):
            self.fail(
                f"winner is {winner!r}, but showdown {final} (tie_rule "
                f"{self.rules.tie_rule!r}, space {self.space}) gives {expected!r}"
            )
        return expected


def _attack_shape_problem(attack: list[int]) -> str | None:
    """Why `attack` is not a single card, a set or a sequence (None if it is one)."""
    if not attack:
        return "empty"
    if len(set(attack)) == 1:
        return None  # a single card, or a set of two or more equal ranks
    ranks = sorted(attack)
    if len(set(ranks)) == len(ranks) and ranks[-1] - ranks[0] == len(ranks) - 1:
        return None if len(ranks) >= 3 else "a sequence of only 2 ranks (a sequence needs 3+)"
    return "neither a single card, a set of equal ranks nor a sequence of consecutive ranks"


@dataclass(frozen=True)
class _Outcome:
    goal_winner: int | None
    rounds: int  # complete rounds
    truncated: bool
    space: int
    stop: _TruncatedError | None = None  # where a truncated last round stops


def _simulate(
    rules: Ruleset, rounds: list[Any], partial_end: bool, problems: list[str]
) -> _Outcome | None:
    """Replay all rounds; None if a problem stopped the replay."""
    space, covered = rules.start_space, set[int]()
    goal: int | None = None
    for index, rnd in enumerate(rounds):
        if goal is not None:
            problems.append(
                f"round {index}: recorded after the game ended "
                f"(seat {goal} reached its goal in round {index - 1})"
            )
            return None
        if index >= rules.max_rounds:
            problems.append(
                f"round {index}: recorded after the round limit "
                f"(max_rounds={rules.max_rounds}) ended the game"
            )
            return None
        if not isinstance(rnd, dict):
            problems.append(f"round {index}: must be an object, got {rnd!r}")
            return None
        may_truncate = partial_end and index == len(rounds) - 1
        checker = _RoundChecker(
            rules,
            index,
            rnd,
            space=space,
            covered=covered,
            may_truncate=may_truncate,
            problems=problems,
        )
        try:
            stop, winner = checker.run()
        except _StopError:
            return None
        if stop is not None:
            return _Outcome(None, index, True, space, stop)
        if winner is not None:
            covered.add(space)
            step = -1 if winner == 0 else 1
            space += step
            while 0 <= space < N_SPACES and space in covered:
                space += step
            if not 0 <= space < N_SPACES:
                goal = winner
    return _Outcome(goal, len(rounds), False, space)


def _check_result_shape(result: object, problems: list[str]) -> tuple[str, int | None] | None:
    if not isinstance(result, dict):
        problems.append(f"result: missing or not an object: {result!r}")
        return None
    reason, winner, detail = result.get("reason"), result.get("winner"), result.get("detail", "")
    if reason not in REASONS:
        problems.append(f"result: reason must be one of {REASONS}, got {reason!r}")
        return None
    if "winner" not in result or not (winner is None or (is_int(winner) and winner in (0, 1))):
        problems.append(f"result: winner must be 0, 1 or null, got {winner!r}")
        return None
    if not isinstance(detail, str):
        problems.append(f"result: detail must be a string, got {detail!r}")
    if reason in ("goal", "forfeit") and winner is None:
        problems.append(f"result: reason {reason!r} needs a winner seat, got null")
    if reason in ("round_limit", "aborted") and winner is not None:
        problems.append(f"result: reason {reason!r} must have winner null, got {winner!r}")
    if reason == "forfeit" and not (isinstance(detail, str) and detail.strip()):
        problems.append("result: a forfeit needs a detail naming the offence")
    return str(reason), winner


def _check_result(
    rules: Ruleset, end: _Outcome, reason: str, winner: int | None, problems: list[str]
) -> None:
    if end.goal_winner is not None:
        if reason != "goal" or winner != end.goal_winner:
            problems.append(
                f"result: Tacocat entered seat {end.goal_winner}'s goal in round "
                f"{end.rounds - 1}, so the result must be winner {end.goal_winner} "
                f"reason 'goal', got winner {winner!r} reason {reason!r}"
            )
    elif not end.truncated and end.rounds == rules.max_rounds:
        if reason != "round_limit":
            problems.append(
                f"result: {end.rounds} rounds (max_rounds) were played without a "
                f"goal, so the reason must be 'round_limit', got {reason!r}"
            )
    elif reason == "goal":
        problems.append(
            f"result: reason 'goal' but Tacocat never entered a goal (on space "
            f"{end.space} after {end.rounds} rounds): the record ends early"
        )
    elif reason == "round_limit":
        problems.append(
            f"result: reason 'round_limit' after only {end.rounds} rounds "
            f"(max_rounds={rules.max_rounds}): the record ends early"
        )


def check_record(record: object) -> list[str]:
    """Return the problems of one replay record (an empty list means it is valid)."""
    if not isinstance(record, dict):
        return [f"record must be a JSON object, got {type(record).__name__}"]
    problems: list[str] = []
    if record.get("format") != FORMAT:
        problems.append(f"format must be {FORMAT!r}, got {record.get('format')!r}")
    if "seed" not in record:
        problems.append("missing 'seed'")
    players = record.get("players")
    if not (
        isinstance(players, list) and len(players) == 2 and all(isinstance(p, str) for p in players)
    ):
        problems.append(f"players must be a list of two names, got {players!r}")
    shape = _check_result_shape(record.get("result"), problems)
    rules, ruleset_problems = check_ruleset(record.get("ruleset"))
    problems.extend(ruleset_problems)
    rounds = record.get("rounds")
    if not isinstance(rounds, list):
        problems.append(f"rounds must be a list, got {rounds!r}")
        return problems
    if rules is None:
        return problems
    partial_end = shape is not None and shape[0] in ("forfeit", "aborted")
    end = _simulate(rules, rounds, partial_end, problems)
    if end is not None and shape is not None:
        _check_result(rules, end, shape[0], shape[1], problems)
        if shape[0] == "forfeit":
            _check_offence(record["result"], end, shape[1], problems)
    return problems


# A fault committed by answering a request: the offender was asked. A bot that crashes,
# disconnects, garbles its bytes or runs out of time forfeits every game it is playing,
# also those in which it was not asked (RULES.md §8).
ANSWER_FAULTS = ("illegal_action",)
PHASES = ("replace", "duel", "attack", "defend")


def _check_offence(
    result: dict[str, Any], end: _Outcome, winner: int | None, problems: list[str]
) -> None:
    """A forfeit's offender, phase and fault agree with where the record stops."""
    offender, phase, fault = result.get("offender"), result.get("phase"), result.get("fault")
    if offender is not None and (not is_int(offender) or offender not in (0, 1)):
        problems.append(f"result: offender must be seat 0 or 1, got {offender!r}")
        return
    if offender is not None and winner is not None and offender == winner:
        problems.append(f"result: seat {offender} forfeits but is named the winner")
    if phase is None:
        return  # records written before phases were recorded
    if phase not in PHASES:
        problems.append(f"result: phase must be one of {PHASES}, got {phase!r}")
        return
    if end.stop is None:
        problems.append(f"result: forfeit in {phase!r}, but every round is complete: a "
                        "forfeited game's last round stops at the offence")
        return
    if end.stop.phase != phase:
        problems.append(f"result: forfeit in {phase!r}, but round {end.rounds} stops "
                        f"waiting for {end.stop.phase!r}")
    elif fault in ANSWER_FAULTS and offender not in end.stop.waiting:
        problems.append(
            f"result: seat {offender} forfeits for {fault!r} in {phase!r}, but round "
            f"{end.rounds} stops waiting for seat(s) {list(end.stop.waiting)}")


def check_file(path: str | Path) -> tuple[int, dict[int, list[str]]]:
    """Check a JSON Lines file; return (records read, {record index: problems}).

    Record indices count non-blank lines from 0; records without problems are left out.
    """
    count = 0
    found: dict[int, list[str]] = {}
    with Path(path).open(encoding="utf-8") as lines:
        for line in lines:
            if not line.strip():
                continue
            index, count = count, count + 1
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                found[index] = [f"not valid JSON: {exc}"]
                continue
            problems = check_record(record)
            if problems:
                found[index] = problems
    return count, found


def main(argv: list[str] | None = None) -> int:
    paths = sys.argv[1:] if argv is None else argv
    if not paths:
        print("usage: python tests/independent_checker.py RECORDS.jsonl [...]", file=sys.stderr)
        return 2
    failing = 0
    for path in paths:
        try:
            count, found = check_file(path)
        except OSError as exc:
            print(f"{path}: cannot read: {exc}", file=sys.stderr)
            return 2
        for index, problems in sorted(found.items()):
            for problem in problems:
                print(f"{path}: record {index}: {problem}")
        print(f"{path}: {count} record(s) checked, {len(found)} with problems")
        failing += len(found)
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
