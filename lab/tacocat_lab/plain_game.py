"""A plain implementation of RULES.md: the baseline ``tacocat bench engine`` measures against.

Written from the rules alone, the way one would write it first: a dataclass state, one
method per phase, every action checked against the rules, a fresh observation (copies of
everything a seat may see) for every decision, and the replay record of RULES.md §8 kept as
the game goes. Nothing here is tuned. It never referees a real match (that is
:mod:`tacocat.referee` over :mod:`tacocat.engine`); it exists so that the engine's speed can
be quoted as a ratio against a straightforward implementation measured in the same
invocation, on the same core, rather than as an absolute figure that moves with the machine.

Its random player chooses the way ``house:random`` does (how many cards to replace, a card
for the duel, a single card or a Jumbo through a random card, a random answer that is
retried until legal), so both implementations play games of the same length; the benchmark
prints the decisions per game of each to show it.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

DECK = [rank for rank in range(1, 13) for _ in range(4 if rank in (6, 7) else 3)]
HAND_SIZES = [4, 6, 9, 7, 9, 6, 4]
ARROWS: list[int | None] = [1, 1, 1, None, 0, 0, 0]
"""The seat each space's arrow points at; ``None`` for two arrows."""
START_SPACE = 3
MAX_ROUNDS = 50


class PlainRuleError(Exception):
    """A player broke the rules (the plain game has no forfeits: its player never does)."""


@dataclass
class PlainObservation:
    """What a seat may know: the same information as the engine's ``Observation``."""

    seat: int
    decision: str
    round: int
    position: int
    covered: list[bool]
    hand: list[int]
    opponent_cards: int
    pile_size: int
    discards: list[int]
    replaced: list[list[int] | None]
    duels: list[list[int]]
    tricks: list[dict[str, Any]]
    attacker: int | None
    attack: list[int]
    replace_cap: int
    score: list[int]
    history: list[dict[str, Any]]


def is_jumbo(cards: list[int]) -> bool:
    """A set (two or more of one rank) or a sequence (three or more consecutive ranks)."""
    ranks = sorted(cards)
    if len(ranks) >= 2 and all(rank == ranks[0] for rank in ranks):
        return True
    return len(ranks) >= 3 and all(b == a + 1 for a, b in zip(ranks, ranks[1:], strict=False))


def holds(hand: list[int], cards: list[int]) -> bool:
    have = Counter(hand)
    have.subtract(Counter(cards))
    return all(count >= 0 for count in have.values())


def remove(hand: list[int], cards: list[int]) -> None:
    for card in cards:
        hand.remove(card)


@dataclass
class PlainGame:
    rng: random.Random
    space: int = START_SPACE
    covered: set[int] = field(default_factory=set)
    hands: list[list[int]] = field(default_factory=lambda: [[], []])
    pile: list[int] = field(default_factory=list)
    discards: list[int] = field(default_factory=list)
    rounds: list[dict[str, Any]] = field(default_factory=list)
    score: list[int] = field(default_factory=lambda: [0, 0])
    attacker: int | None = None
    decisions: int = 0

    def observe(self, seat: int, decision: str, attack: list[int] | None = None,
                replace_cap: int = 0) -> PlainObservation:
        self.decisions += 1
        current = self.rounds[-1]
        replaced: list[list[int] | None] = [list(cards) if cards is not None else None
                                            for cards in current["replace"]]
        history = [{key: value for key, value in done.items() if key != "deck"}
                   for done in self.rounds[:-1]]
        return PlainObservation(
            seat, decision, len(self.rounds) - 1, self.space,
            [space in self.covered for space in range(len(HAND_SIZES))],
            sorted(self.hands[seat]), len(self.hands[1 - seat]), len(self.pile),
            list(self.discards), replaced, [list(duel) for duel in current["duels"]],
            [dict(trick) for trick in current["tricks"]], self.attacker, list(attack or []),
            replace_cap, list(self.score), history)

    def play(self, players: list[PlainRandomPlayer]) -> dict[str, Any]:
        winner: int | None = None
        for _ in range(MAX_ROUNDS):
            round_winner = self.play_round(players)
            if round_winner is not None and self.move(round_winner):
                winner = round_winner
                break
        reason = "goal" if winner is not None else "round_limit"
        return {"format": "tacocat-replay/1", "rounds": self.rounds,
                "result": {"winner": winner, "reason": reason, "detail": ""}}

    def play_round(self, players: list[PlainRandomPlayer]) -> int | None:
        deck = list(DECK)
        self.rng.shuffle(deck)
        size = HAND_SIZES[self.space]
        self.hands = [deck[0:2 * size:2], deck[1:2 * size:2]]
        self.pile = deck[2 * size:]
        self.discards = []
        record: dict[str, Any] = {"space": self.space, "deck": deck, "replace": [None, None],
                                  "duels": [], "tricks": []}
        self.rounds.append(record)
        self.attacker = None
        self.replace(players, record)
        attacker = self.duel(players, record)
        if attacker is not None:
            self.tricks(players, record, attacker)
        showdown = [self.hands[0][0], self.hands[1][0]]
        record["showdown"] = showdown
        if showdown[0] == showdown[1]:
            record["winner"] = None
        else:
            record["winner"] = 0 if showdown[0] < showdown[1] else 1
            self.score[record["winner"]] += 1
        return record["winner"]  # type: ignore[no-any-return]

    def discard(self, seat: int, cards: list[int], cap: int) -> None:
        if len(cards) > cap or not holds(self.hands[seat], cards):
            raise PlainRuleError(f"seat {seat} cannot replace {cards}")
        remove(self.hands[seat], cards)
        self.discards.extend(cards)

    def draw(self, seat: int, count: int) -> None:
        self.hands[seat].extend(self.pile[:count])
        del self.pile[:count]

    def replace(self, players: list[PlainRandomPlayer], record: dict[str, Any]) -> None:
        size = len(self.hands[0])
        arrow = ARROWS[self.space]
        if arrow is None:
            chosen = [players[seat].replace(self.observe(seat, "replace", replace_cap=size))
                      for seat in (0, 1)]
            for seat in (0, 1):
                self.discard(seat, chosen[seat], size)
            for seat in (0, 1):
                self.draw(seat, len(chosen[seat]))
                record["replace"][seat] = chosen[seat]
            return
        cap = size
        for seat in (arrow, 1 - arrow):
            cards = players[seat].replace(self.observe(seat, "replace", replace_cap=cap))
            self.discard(seat, cards, cap)
            self.draw(seat, len(cards))
            record["replace"][seat] = cards
            cap = len(cards)

    def duel(self, players: list[PlainRandomPlayer], record: dict[str, Any]) -> int | None:
        while len(self.hands[0]) > 1:
            cards = [players[seat].duel(self.observe(seat, "duel")) for seat in (0, 1)]
            for seat in (0, 1):
                if cards[seat] not in self.hands[seat]:
                    raise PlainRuleError(f"seat {seat} does not hold {cards[seat]}")
                self.hands[seat].remove(cards[seat])
            self.discards.extend(cards)
            record["duels"].append(cards)
            if cards[0] != cards[1]:
                self.attacker = 0 if cards[0] > cards[1] else 1
                return self.attacker
        return None

    def tricks(self, players: list[PlainRandomPlayer], record: dict[str, Any],
               attacker: int) -> None:
        while len(self.hands[0]) > 1:
            defender = 1 - attacker
            attack = players[attacker].attack(self.observe(attacker, "attack"))
            hand = self.hands[attacker]
            if not holds(hand, attack) or not attack or len(attack) >= len(hand) or (
                    len(attack) > 1 and not is_jumbo(attack)):
                raise PlainRuleError(f"seat {attacker} cannot attack with {attack}")
            remove(hand, attack)
            response = players[defender].defend(self.observe(defender, "defend", attack))
            if not response_is_legal(self.hands[defender], attack, response):
                raise PlainRuleError(f"seat {defender} cannot answer {attack} with {response}")
            remove(self.hands[defender], response)
            self.discards.extend(attack + response)
            record["tricks"].append({"attacker": attacker, "attack": attack,
                                     "response": response})
            if all(r >= a for r, a in zip(response, attack, strict=True)):
                attacker = self.attacker = defender

    def move(self, winner: int) -> bool:
        """Move Tacocat toward ``winner``'s goal; True when it enters the goal."""
        step = -1 if winner == 0 else 1
        target = self.space + step
        while 0 <= target < len(HAND_SIZES) and target in self.covered:
            target += step
        self.covered.add(self.space)
        if not 0 <= target < len(HAND_SIZES):
            return True
        self.space = target
        return False


def response_is_legal(hand: list[int], attack: list[int], response: list[int]) -> bool:
    if len(response) != len(attack) or not holds(hand, response):
        return False
    sacrificed = [r for r, a in zip(response, attack, strict=True) if r < a]
    return sorted(sacrificed) == sorted(hand)[:len(sacrificed)]


class PlainRandomPlayer:
    """Chooses the way ``house:random`` does, over the plain observation."""

    def __init__(self, seed: int | str) -> None:
        self.rng = random.Random(seed)

    def replace(self, obs: PlainObservation) -> list[int]:
        count = self.rng.randint(0, obs.replace_cap)
        return self.rng.sample(obs.hand, count)

    def duel(self, obs: PlainObservation) -> int:
        return self.rng.choice(obs.hand)

    def attack(self, obs: PlainObservation) -> list[int]:
        hand = obs.hand
        card = self.rng.choice(hand)
        limit = len(hand) - 1
        if limit < 2 or self.rng.random() < 0.5:
            return [card]
        sets = [[card] * n for n in range(2, min(hand.count(card), limit) + 1)]
        runs = [list(range(start, start + n)) for n in range(3, limit + 1)
                for start in range(card - n + 1, card + 1)
                if all(rank in hand for rank in range(start, start + n))]
        if sets and (not runs or self.rng.random() < 0.5):
            return self.rng.choice(sets)
        if runs:
            return self.rng.choice(runs)
        return [card]

    def defend(self, obs: PlainObservation) -> list[int]:
        hand, attack = obs.hand, obs.attack
        if len(attack) == 1:
            card = self.rng.choice(hand)
            return [card] if card >= attack[0] or card == hand[0] else [hand[0]]
        for _ in range(4):
            response = self.rng.sample(hand, len(attack))
            if response_is_legal(hand, attack, response):
                return response
        return lowest_answer(hand, attack)


def lowest_answer(hand: list[int], attack: list[int]) -> list[int]:
    """Give up the lowest cards: the ``len(attack)`` lowest against the attack from the
    highest card down, so that what is sacrificed is always the hand's lowest."""
    order = sorted(range(len(attack)), key=lambda i: attack[i], reverse=True)
    response = [0] * len(attack)
    for index, card in zip(order, sorted(hand)[:len(attack)], strict=True):
        response[index] = card
    return response


def play_plain_games(games: int, seed: str) -> int:
    """Play ``games`` plain games of random players; the decisions they took."""
    decisions = 0
    for index in range(games):
        game = PlainGame(random.Random(f"{seed}/{index}"))
        game.play([PlainRandomPlayer(f"{seed}/{index}/0"), PlainRandomPlayer(f"{seed}/{index}/1")])
        decisions += game.decisions
    return decisions
