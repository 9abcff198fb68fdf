"""Summary statistics of a match between two bots, as ``tacocat play`` reports them.

A match is played in duplicate pairs: the games of a pair share their shuffles with the seats
swapped, so the luck of the deal largely cancels within a pair and the two games are not
independent. The pair is therefore the independent unit: the score's interval comes from
the spread of pair means, not of single games.

Standard library only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Final

from ._errors import EngineError

ELO_CLIP: Final = 800.0
"""Elo differences are clipped to ±800 (a score of about 0.99 or 0.01).

A score of exactly 1 or 0, or an interval reaching either, has an infinite Elo difference;
the clip keeps the numbers printable, and :attr:`MatchStats.elo_clipped` flags it.
"""

_Z95: Final = NormalDist().inv_cdf(0.975)
_SCORES: Final = (0.0, 0.5, 1.0)


class StatsError(EngineError, ValueError):
    """Scores cannot be summarised; the message names the offending value."""


@dataclass(frozen=True)
class MatchStats:
    """Bot A's results in a match, with 95% intervals for its score and Elo difference."""

    games: int
    wins: int
    losses: int
    ties: int
    pairs: int
    """Complete duplicate pairs."""
    unpaired: int
    """Trailing games that do not fill a pair (0 when the match ended on a pair)."""
    score: float
    """A's mean score per game: (wins + ties / 2) / games."""
    score_low: float
    score_high: float
    elo: float
    """Elo difference A − B implied by ``score``, clipped to ±:data:`ELO_CLIP`."""
    elo_low: float
    elo_high: float
    elo_clipped: bool
    """Whether ``elo``, ``elo_low`` or ``elo_high`` sits at the clip (the true value is
    beyond it, possibly infinite)."""
    excludes_half: bool
    """Whether the score interval excludes 0.5: the match shows which bot is stronger."""

    def summary(self) -> str:
        """One line for a terminal, e.g. ``57 W / 38 L / 5 T in 100 games (50 pairs): ...``."""
        pairs = f"{self.pairs} pairs" + (f" + {self.unpaired}" if self.unpaired else "")
        verdict = "A is stronger" if self.score_low > 0.5 else "B is stronger"
        if not self.excludes_half:
            verdict = "no significant difference"
        clip = f" (Elo clipped at ±{ELO_CLIP:.0f})" if self.elo_clipped else ""
        return (
            f"{self.wins} W / {self.losses} L / {self.ties} T in {self.games} games ({pairs}): "
            f"score {self.score:.3f} [{self.score_low:.3f}, {self.score_high:.3f}], "
            f"Elo {self.elo:+.0f} [{self.elo_low:+.0f}, {self.elo_high:+.0f}]{clip}; {verdict}"
        )


def match_stats(scores: Sequence[float], pair_size: int = 2) -> MatchStats:
    """Summarise bot A's per-game scores (1 win, 0.5 tie, 0 loss), in the order played.

    Consecutive runs of ``pair_size`` games form the independent units; a trailing partial
    run (an odd last game) is a unit too, weighted by its share of a full one.

    The interval is the normal approximation ``score ± 1.96 · SE``, clipped to [0, 1], with
    ``SE² = s² / n`` over the ``n`` units. The spread ``s²`` of unit means is estimated with
    two pseudo-units added, one all-won and one all-lost (in the spirit of Agresti–Coull), so
    a short unanimous match does not get a zero-width interval: one pair won of one gives
    [0, 1], and four of four is the shortest unanimous run that excludes 0.5 (an exact sign
    test would want six, so below about ten pairs read the interval as rough). After a few
    dozen pairs the pseudo-units no longer matter. The Elo interval is the score interval
    transformed.
    """
    if isinstance(pair_size, bool) or not isinstance(pair_size, int) or pair_size < 1:
        raise StatsError(f"pair_size must be a whole number >= 1, got {pair_size!r}")
    for number, score in enumerate(scores):
        if score not in _SCORES:
            raise StatsError(
                f"score #{number} is {score!r}; each game's score must be 1 (A won), "
                "0.5 (tie) or 0 (A lost)"
            )
    games = len(scores)
    if games == 0:
        raise StatsError("no games to summarise: play at least one game")

    wins = sum(1 for s in scores if s == 1.0)
    losses = sum(1 for s in scores if s == 0.0)
    ties = games - wins - losses
    score = (wins + 0.5 * ties) / games

    # (weight, mean) per unit; weight is the unit's share of a full pair.
    units = [
        (len(chunk) / pair_size, math.fsum(chunk) / len(chunk))
        for chunk in (scores[i : i + pair_size] for i in range(0, games, pair_size))
    ]
    padded = [*units, (1.0, 0.0), (1.0, 1.0)]
    padded_weight = math.fsum(w for w, _ in padded)
    padded_mean = math.fsum(w * m for w, m in padded) / padded_weight
    spread = math.fsum(w * (m - padded_mean) ** 2 for w, m in padded) / (len(padded) - 1)
    error = math.sqrt(spread / math.fsum(w for w, _ in units))

    score_low = max(0.0, score - _Z95 * error)
    score_high = min(1.0, score + _Z95 * error)
    (elo, clip_mid), (elo_low, clip_low), (elo_high, clip_high) = (
        elo_of_score(score),
        elo_of_score(score_low),
        elo_of_score(score_high),
    )
    return MatchStats(
        games=games,
        wins=wins,
        losses=losses,
        ties=ties,
        pairs=games // pair_size,
        unpaired=games % pair_size,
        score=score,
        score_low=score_low,
        score_high=score_high,
        elo=elo,
        elo_low=elo_low,
        elo_high=elo_high,
        elo_clipped=clip_mid or clip_low or clip_high,
        excludes_half=score_low > 0.5 or score_high < 0.5,
    )


def elo_of_score(score: float) -> tuple[float, bool]:
    """The Elo difference for an expected score, clipped to ±ELO_CLIP, and whether it was."""
    if score <= 0.0:
        return -ELO_CLIP, True
    if score >= 1.0:
        return ELO_CLIP, True
    elo = 400.0 * math.log10(score / (1.0 - score))
    if abs(elo) > ELO_CLIP:
        return math.copysign(ELO_CLIP, elo), True
    return elo, False
