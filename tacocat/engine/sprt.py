"""The sequential probability ratio test (SPRT) over duplicate pairs: "is A better than B?".

``tacocat play A B --sprt`` plays duplicate pairs until this test accepts H0 (A is at most
``elo0`` stronger than B) or H1 (A is at least ``elo1`` stronger), with error rates ``alpha``
(accepting H1 when H0 holds) and ``beta`` (accepting H0 when H1 holds).

The pair is the unit. The two games of a duplicate pair share their deals, so they are not
independent; the pair's total for A is, with its five outcomes (the *pentanomial* model)::

    pair score  0     0.25   0.5        0.75   1        (A's points / 2)
    outcome     LL    LD     WL or DD   WD     WW

The test is the generalised SPRT of fishtest and fastchess (logistic Elo): with ``N`` pairs
and the observed frequencies ``p̂ᵢ`` of the outcomes ``aᵢ`` above, the log-likelihood ratio is

    LLR = N · Σᵢ p̂ᵢ · (ln p¹ᵢ − ln p⁰ᵢ)

where ``pʲ`` is the maximum-likelihood distribution on the five outcomes whose mean is the
score ``sⱼ = 1 / (1 + 10^(−eloⱼ/400))`` of hypothesis ``j``: ``pʲᵢ = p̂ᵢ / (1 + θ (aᵢ − sⱼ))``
with ``θ`` the root of ``Σᵢ p̂ᵢ (aᵢ − sⱼ) / (1 + θ (aᵢ − sⱼ)) = 0`` (found here by bisection).
An outcome never seen counts as 0.001 pairs, as in fastchess, so a one-sided start has a
finite LLR. The test stops when ``LLR ≤ ln(β / (1 − α))`` (accept H0) or
``LLR ≥ ln((1 − β) / α)`` (accept H1).

Sources: Michel Van den Bergh, "Comments on Normalized Elo" (proposition 1.1, the
constrained maximum-likelihood distribution), https://www.cantate.be/Fishtest/
normalized_elo_practical.pdf; fishtest's ``server/fishtest/stats/LLRcalc.py``; fastchess's
``src/matchmaking/sprt/sprt.cpp`` (``getLLR_logistic``). For small Elo differences this is
close to the normal approximation ``(s₁ − s₀)(2ŝ − s₀ − s₁) / (2 σ̂² / N)`` (ŝ, σ̂² the mean
and variance of the pair scores), which :func:`llr_normal` gives for comparison.

Standard library only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from statistics import NormalDist
from typing import Final

from .stats import StatsError, elo_of_score

PAIR_SCORES: Final = (0.0, 0.25, 0.5, 0.75, 1.0)
"""A's score of a pair for each pentanomial outcome: LL, LD, WL or DD, WD, WW."""

UNSEEN: Final = 1e-3
"""Pairs an outcome never seen counts for (fastchess's regularisation)."""

_Z95: Final = NormalDist().inv_cdf(0.975)


def score_of_elo(elo: float) -> float:
    """The expected score of a side ``elo`` logistic Elo stronger than its opponent."""
    return 1.0 / (1.0 + math.pow(10.0, -elo / 400.0))


@dataclass
class Pentanomial:
    """Counts of the five outcomes of A's duplicate pairs (see :data:`PAIR_SCORES`)."""

    counts: list[int] = field(default_factory=lambda: [0, 0, 0, 0, 0])

    def add_pair(self, first: float, second: float) -> None:
        """Count a pair from A's two game scores (each 0, 0.5 or 1)."""
        total = first + second
        if first not in (0.0, 0.5, 1.0) or second not in (0.0, 0.5, 1.0):
            raise StatsError(f"a game's score is 0, 0.5 or 1, got {first!r} and {second!r}")
        self.counts[round(total * 2)] += 1

    @classmethod
    def of_scores(cls, scores: Sequence[float]) -> Pentanomial:
        """Counts of the complete pairs in A's per-game scores (in schedule order)."""
        penta = cls()
        for i in range(0, len(scores) - 1, 2):
            penta.add_pair(scores[i], scores[i + 1])
        return penta

    @property
    def pairs(self) -> int:
        return sum(self.counts)

    def score(self) -> float:
        """A's mean score over the pairs (0.5 when there are none)."""
        if not self.pairs:
            return 0.5
        return math.fsum(c * a for c, a in zip(self.counts, PAIR_SCORES, strict=True)) / self.pairs

    def score_interval(self) -> tuple[float, float]:
        """The 95% interval of A's score, ``ŝ ± 1.96 σ̂ / √N`` over pairs, within [0, 1].

        σ̂ is estimated with one all-lost and one all-won pseudo-pair added, as
        :func:`~tacocat.engine.stats.match_stats` does, so that a unanimous start does not
        claim a zero-width interval.
        """
        n = self.pairs
        if n < 2:
            return 0.0, 1.0
        mean = self.score()
        padded = [*zip(self.counts, PAIR_SCORES, strict=True), (1, 0.0), (1, 1.0)]
        padded_mean = math.fsum(c * a for c, a in padded) / (n + 2)
        variance = math.fsum(c * (a - padded_mean) ** 2 for c, a in padded) / (n + 1)
        half = _Z95 * math.sqrt(variance / n)
        return max(0.0, mean - half), min(1.0, mean + half)

    def elo(self) -> tuple[float, float]:
        """A's Elo difference and the half-width of its 95% interval (clipped at the ends)."""
        low, high = self.score_interval()
        elo_low, elo_high = elo_of_score(low)[0], elo_of_score(high)[0]
        return elo_of_score(self.score())[0], (elo_high - elo_low) / 2


def llr(counts: Sequence[float], scores: Sequence[float], s0: float, s1: float) -> float:
    """The generalised log-likelihood ratio of mean ``s1`` against ``s0`` (formula above).

    ``counts[i]`` units were seen with score ``scores[i]``; outcomes with no count drop out.
    Both ``s0`` and ``s1`` must lie strictly between the lowest and highest score seen.
    """
    seen = [(c, a) for c, a in zip(counts, scores, strict=True) if c > 0]
    total = math.fsum(c for c, _ in seen)
    if not seen or not min(a for _, a in seen) < min(s0, s1) <= max(s0, s1) < max(
            a for _, a in seen):
        raise StatsError(f"the scores seen do not straddle {s0} and {s1}; regularise the "
                         "counts first (Pentanomial counts do so in sprt_llr)")
    freqs = [(c / total, a) for c, a in seen]
    theta0, theta1 = _theta(freqs, s0), _theta(freqs, s1)
    # p^j_i / p̂_i = 1 / (1 + θ_j (a_i − s_j)), so the ratio of the two needs no p̂.
    return total * math.fsum(
        p * math.log((1.0 + theta0 * (a - s0)) / (1.0 + theta1 * (a - s1))) for p, a in freqs)


def _theta(freqs: Sequence[tuple[float, float]], s: float) -> float:
    """The root θ of ``f(θ) = Σᵢ p̂ᵢ dᵢ / (1 + θ dᵢ)``, ``dᵢ = aᵢ − s``: Newton's method from
    θ = 0, kept inside the bracket where every ``1 + θ dᵢ`` is positive (f falls there from
    +∞ to −∞), bisecting when a step would leave it."""
    deviations = [(p, a - s) for p, a in freqs]
    low = -1.0 / max(d for _, d in deviations)
    high = -1.0 / min(d for _, d in deviations)
    theta = 0.0
    for _ in range(100):
        value = slope = 0.0
        for p, d in deviations:
            term = d / (1.0 + theta * d)
            value += p * term
            slope -= p * term * term
        if value > 0:
            low = theta
        else:
            high = theta
        step = theta - value / slope if slope else (low + high) / 2
        if not low < step < high:
            step = (low + high) / 2
        if abs(step - theta) <= 1e-15 * max(1.0, abs(theta)):
            return step
        theta = step
    return theta


def llr_normal(counts: Sequence[float], scores: Sequence[float], s0: float, s1: float) -> float:
    """The normal approximation of :func:`llr`: ``(s₁ − s₀)(2ŝ − s₀ − s₁) / (2 σ̂² / N)``."""
    total = math.fsum(counts)
    mean = math.fsum(c * a for c, a in zip(counts, scores, strict=True)) / total
    variance = math.fsum(c * (a - mean) ** 2 for c, a in zip(counts, scores, strict=True)) / total
    return (s1 - s0) * (2 * mean - s0 - s1) / (2 * variance / total)


class Verdict(Enum):
    """Where a sequential test stands."""

    CONTINUE = "continue"
    H0 = "H0"
    """Accepted: A is not ``elo1`` stronger (at most ``elo0``)."""
    H1 = "H1"
    """Accepted: A is at least ``elo1`` stronger."""


@dataclass(frozen=True)
class Sprt:
    """A sequential test of H0: Elo = ``elo0`` against H1: Elo = ``elo1`` (A minus B)."""

    elo0: float = 0.0
    elo1: float = 5.0
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self) -> None:
        if not self.elo0 < self.elo1:
            raise StatsError(f"elo0 must be below elo1, got elo0={self.elo0}, elo1={self.elo1}")
        for name, value in (("alpha", self.alpha), ("beta", self.beta)):
            if not 0.0 < value < 0.5:
                raise StatsError(f"{name} is an error rate above 0 and below 0.5, got {value}")

    @property
    def lower(self) -> float:
        """At or below this LLR the test accepts H0: ``ln(β / (1 − α))``."""
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper(self) -> float:
        """At or above this LLR the test accepts H1: ``ln((1 − β) / α)``."""
        return math.log((1.0 - self.beta) / self.alpha)

    def llr(self, penta: Pentanomial) -> float:
        """The LLR of the pairs so far (0 before the first pair)."""
        if not penta.pairs:
            return 0.0
        counts = [c if c else UNSEEN for c in penta.counts]
        return llr(counts, PAIR_SCORES, score_of_elo(self.elo0), score_of_elo(self.elo1))

    def verdict(self, llr_value: float) -> Verdict:
        if llr_value >= self.upper:
            return Verdict.H1
        if llr_value <= self.lower:
            return Verdict.H0
        return Verdict.CONTINUE

    def line(self, penta: Pentanomial, games: int) -> str:
        """The live report: games, A's score, Elo ± 95%, LLR with its bounds, pentanomial."""
        llr_value = self.llr(penta)
        elo, half = penta.elo()
        return (f"games {games} ({penta.pairs} pairs), score {penta.score():.3f}, "
                f"Elo {elo:+.1f} ± {half:.1f}, LLR {llr_value:+.2f} "
                f"({self.lower:+.2f}, {self.upper:+.2f}) [{self.elo0:g}, {self.elo1:g}], "
                f"pairs LL..WW {penta.counts}")


def verdict_words(sprt: Sprt, penta: Pentanomial, line: str) -> str:
    """The final words of an SPRT run (``line``: its last :meth:`Sprt.line`)."""
    llr = sprt.llr(penta)
    verdict = sprt.verdict(llr)
    if verdict is Verdict.H1:
        words = (f"H1 accepted: A is stronger than B (the games favour {sprt.elo1:+g} Elo "
                 f"over {sprt.elo0:+g}: LLR {llr:+.2f} >= {sprt.upper:+.2f}; "
                 f"false-positive rate {sprt.alpha:g})")
    elif verdict is Verdict.H0:
        words = (f"H0 accepted: A is not stronger than B (the games favour {sprt.elo0:+g} "
                 f"Elo over {sprt.elo1:+g}: LLR {llr:+.2f} <= {sprt.lower:+.2f}; "
                 f"false-negative rate {sprt.beta:g})")
    else:
        words = (f"no verdict: --games ran out with LLR {llr:+.2f} inside "
                 f"({sprt.lower:+.2f}, {sprt.upper:+.2f}); play more games")
    return f"SPRT {words}\n  {line}"


def stop_words(state: str, reason: str, sprt: Sprt, penta: Pentanomial, games: int) -> str:
    """Where a test on the arena stands (``state``: ``waiting``, ``running``, ``H0``,
    ``H1``, ``exhausted``, ``cancelled``, ``failed``), in the words of the local run."""
    line = sprt.line(penta, games)
    if state in (Verdict.H0.value, Verdict.H1.value, "exhausted"):
        return verdict_words(sprt, penta, line)
    if state == "cancelled":
        return f"cancelled ({reason}): no verdict\n  {line}"
    if state == "failed":
        return f"failed: {reason}"
    return f"{state}: no verdict yet\n  {line}"
