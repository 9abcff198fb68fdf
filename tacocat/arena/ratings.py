"""Ratings on the Elo scale: a live update after every game, and a batch maximum-likelihood fit.

The model behind both is Bradley–Terry with Elo's logistic scale: a player rated ``d`` points
above another is expected to score ``1 / (1 + 10 ** (-d / 400))`` against it (400 points is
odds of 10 to 1). A tie counts as half a win for each side.

- :func:`elo_update` moves two ratings after one game: cheap, incremental, what the worker
  applies when it records a match. It depends on the order games arrive in and never settles
  completely, so it is the live estimate.
- :func:`fit_ratings` fits every rating at once from all results (maximum a posteriori with a
  weak Gaussian prior) and gives each a 95% interval: order-free and deterministic, the
  number to publish on a leaderboard.
- :func:`likelihood_of_superiority` says how sure a head-to-head record makes us that one
  player is stronger; :meth:`RatingFit.los` does the same from the whole fit.

The fit is numpy (the arena's ``server`` extra; the engine and SDK never import this module):
dense Newton steps whose cost is one ``N x N`` Cholesky solve each, warm-started from the
previous fit, so refitting a 1,000-bot ladder after a result takes a fraction of a second.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from types import MappingProxyType
from typing import Any, Final

# One BLAS thread unless the operator says otherwise: the matrices are small (N <= a few
# thousand), a machine runs several workers, and OpenBLAS's spinning threads then fight
# each other and Redis (measured: a 200 x 200 solve took 22 ms instead of 0.6 ms).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np

from .errors import RatingError

K_PER_GAME: Final = 16.0
"""Elo K-factor per game.

Why 16: bots play thousands of games, not the few dozen a year that FIDE's K = 10..40 are
tuned for. Updated after every game against a well-rated field, a rating that is right
jitters around its true value with a standard deviation of about ``sqrt(200 K / ln 10)``:
37 Elo for K = 16 (53 for K = 32, 26 for K = 8), and a wrong rating closes its gap with a
time constant of ``1600 / (K ln 10)`` games: 43 for K = 16, about one match. So K = 16
keeps the live leaderboard's noise below the gaps that matter and still carries a new bot
version to its level within a couple of matches; the batch fit gives the precise number.
"""

ELO_PER_NAT: Final = 400.0 / math.log(10.0)
"""Elo points per unit of natural log-odds (≈ 173.7): the fit works in log-odds."""

DEFAULT_ANCHOR: Final = 1500.0
"""The mean rating of the players in a fit."""

DEFAULT_PRIOR_SD: Final = 400.0
"""Standard deviation, in Elo, of the Gaussian prior on each player's rating around the mean.

Weak: its curvature equals about three quarters of one even game's Fisher information
(``ln(10)^-2 ≈ 0.19`` against ``1/4`` per game), so after a few dozen games it moves a
rating by a fraction of a point. It exists for the cases where the likelihood alone has no
finite maximum – a player who won (or lost) every game, or groups that never met – and keeps
those ratings finite with honestly wide intervals.
"""

Z95: Final = NormalDist().inv_cdf(0.975)
"""Half-width of a 95% interval in standard deviations (1.96)."""
_MAX_NEWTON_STEPS: Final = 200
# Converged when no rating moves by more than this many nats (≈ 2e-8 Elo).
_STEP_TOLERANCE: Final = 1e-10
# Below this largest step (nats) Newton is in its quadratic regime; backtracking there would
# only fight rounding in the objective.
_LINE_SEARCH_BELOW: Final = 1e-3
# A warm start farther than this (nats, ≈ 3,500 Elo) from the field's mean is not trusted:
# it is a corrupt snapshot, not a previous fit (a fit never strays that far under the prior).
_WARM_START_LIMIT: Final = 20.0


# -- live Elo ----------------------------------------------------------------------------------


def expected_score(rating_a: float, rating_b: float) -> float:
    """The score A is expected to make against B: ``1 / (1 + 10 ** ((rb - ra) / 400))``."""
    _check_finite("rating_a", rating_a)
    _check_finite("rating_b", rating_b)
    return _logistic((rating_a - rating_b) / ELO_PER_NAT)


def elo_update(
    rating_a: float, rating_b: float, score_a: float, k: float = K_PER_GAME
) -> tuple[float, float]:
    """New ``(rating_a, rating_b)`` after one game in which A scored ``score_a`` (1, 0.5, 0).

    Zero-sum: A gains exactly what B loses, ``k * (score_a - expected_score(ra, rb))``.
    ``k`` is per game; see :data:`K_PER_GAME` for the choice of 16.
    """
    if not 0.0 <= score_a <= 1.0:
        raise RatingError(f"score_a must lie in [0, 1] (1 win, 0.5 tie, 0 loss), got {score_a!r}")
    if not (math.isfinite(k) and k > 0):
        raise RatingError(f"the K-factor must be a positive number, got {k!r}")
    delta = k * (score_a - expected_score(rating_a, rating_b))
    return rating_a + delta, rating_b - delta


# -- head-to-head records ------------------------------------------------------------------------


@dataclass(frozen=True)
class PairRecord:
    """The games between two players, from the first-named player's side."""

    wins: int = 0
    losses: int = 0
    ties: int = 0

    def __post_init__(self) -> None:
        for name in ("wins", "losses", "ties"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise RatingError(f"PairRecord.{name} must be a count >= 0, got {value!r}")

    @property
    def games(self) -> int:
        return self.wins + self.losses + self.ties

    @property
    def points(self) -> float:
        """Wins plus half the ties."""
        return self.wins + 0.5 * self.ties

    def reversed(self) -> PairRecord:
        """The same games from the other player's side."""
        return PairRecord(self.losses, self.wins, self.ties)

    def __add__(self, other: PairRecord) -> PairRecord:
        return PairRecord(
            self.wins + other.wins, self.losses + other.losses, self.ties + other.ties
        )


Result = tuple[str, str, float]
"""One game: ``(player_a, player_b, score_a)`` with ``score_a`` 1 (A won), 0.5 (tie) or 0."""


def tally_results(results: Iterable[Result]) -> dict[tuple[str, str], PairRecord]:
    """Aggregate games into one :class:`PairRecord` per pair, keyed ``(a, b)`` with ``a < b``.

    The fit only needs these counts, so a ladder can store them instead of every game.
    """
    counts: dict[tuple[str, str], list[int]] = {}
    for number, (player_a, player_b, score_a) in enumerate(results):
        if player_a == player_b:
            raise RatingError(
                f"result #{number}: player {player_a!r} cannot play itself; drop the result"
            )
        if score_a == 0.5:
            outcome = 2
        elif score_a in (0, 1):
            # Index 0 counts wins of the first-named (smaller) player, 1 its losses.
            outcome = 0 if (score_a == 1) == (player_a < player_b) else 1
        else:
            raise RatingError(
                f"result #{number} ({player_a!r} vs {player_b!r}): score_a must be 1, 0.5 or "
                f"0, got {score_a!r}"
            )
        key = (player_a, player_b) if player_a < player_b else (player_b, player_a)
        tally = counts.get(key)
        if tally is None:
            tally = counts[key] = [0, 0, 0]
        tally[outcome] += 1
    return {key: PairRecord(*counts[key]) for key in sorted(counts)}


def likelihood_of_superiority(wins: float, losses: float) -> float:
    """How likely it is that a player with this head-to-head record is the stronger one.

    The normal approximation ``Φ((W − L) / √(W + L))``: ties carry no information about
    which side is stronger and are left out. 0.5 when there are no decisive games.
    """
    if not (wins >= 0 and losses >= 0 and math.isfinite(wins + losses)):
        raise RatingError(f"wins and losses must be counts >= 0, got {wins!r} and {losses!r}")
    decisive = wins + losses
    if decisive == 0:
        return 0.5
    return 0.5 * (1.0 + math.erf((wins - losses) / math.sqrt(2.0 * decisive)))


# -- batch fit ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlayerRating:
    """One player's fitted rating with its 95% interval (relative to the field's mean)."""

    player: str
    rating: float
    low: float
    high: float
    games: int
    points: float
    """Wins plus half the ties, over all this player's games."""

    @property
    def margin(self) -> float:
        """Half the width of the 95% interval."""
        return (self.high - self.low) / 2.0


@dataclass(frozen=True)
class RatingFit:
    """Fitted ratings, best first (ties in rating broken by name).

    Intervals come from the inverse of the Fisher information plus the prior's precision at
    the fit, for ratings measured relative to the field's mean (which is pinned at
    ``anchor``). Ties are scored as half a win; treating them as such overstates the
    variance a little, so intervals err wide when ties are common.
    """

    ratings: tuple[PlayerRating, ...]
    anchor: float
    prior_sd: float
    newton_steps: int
    # Player -> its row/column below (players in name order); column -> position in ratings.
    _column: Mapping[str, int] = field(repr=False, compare=False)
    _position: tuple[int, ...] = field(repr=False, compare=False)
    # Covariance of the ratings relative to the field's mean, in Elo² (an N x N array).
    _covariance: Any = field(repr=False, compare=False)

    def __getitem__(self, player: str) -> PlayerRating:
        return self.ratings[self._position[self._column_of(player)]]

    def __contains__(self, player: object) -> bool:
        return player in self._column

    def __len__(self) -> int:
        return len(self.ratings)

    def covariance(self, player_a: str, player_b: str) -> float:
        """Covariance of two fitted ratings, in Elo², relative to the field's mean."""
        return float(self._covariance[self._column_of(player_a), self._column_of(player_b)])

    def los(self, player_a: str, player_b: str) -> float:
        """Likelihood that A is stronger than B, from the whole fit (not just their games)."""
        return self.los_many([(player_a, player_b)])[0]

    def los_many(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """:meth:`los` of many pairs at once (a crosstable's worth in milliseconds)."""
        if not pairs:
            return []
        a = np.array([self._column_of(x) for x, _ in pairs], dtype=np.intp)
        b = np.array([self._column_of(y) for _, y in pairs], dtype=np.intp)
        return self.los_columns(a, b)

    def los_columns(self, a: Any, b: Any) -> list[float]:
        """:meth:`los_many` of players given by their columns (their places in name order)."""
        cov = self._covariance
        variance = np.maximum(cov[a, a] + cov[b, b] - 2.0 * cov[a, b], 1e-300)
        rating = np.array([r.rating for r in self.ratings])[np.array(self._position)]
        z = (rating[a] - rating[b]) / np.sqrt(variance)
        # Φ(z) through erfc keeps tails exact; a player against itself is a coin toss.
        root = math.sqrt(2.0)
        same = (np.asarray(a) == np.asarray(b)).tolist()
        return [0.5 if s else 0.5 * math.erfc(-v / root)
                for v, s in zip(z.tolist(), same, strict=True)]

    def _column_of(self, player: str) -> int:
        try:
            return self._column[player]
        except KeyError:
            raise RatingError(
                f"player {player!r} is not in this fit; pass it in players= to rate it"
            ) from None


def fit_ratings(
    results: Iterable[Result],
    *,
    players: Iterable[str] = (),
    prior_sd: float = DEFAULT_PRIOR_SD,
    anchor: float = DEFAULT_ANCHOR,
) -> RatingFit:
    """Fit every player's rating to all ``results`` at once; see :func:`fit_records`."""
    return fit_records(tally_results(results), players=players, prior_sd=prior_sd, anchor=anchor)


def fit_records(
    records: Mapping[tuple[str, str], PairRecord],
    *,
    players: Iterable[str] = (),
    prior_sd: float = DEFAULT_PRIOR_SD,
    anchor: float = DEFAULT_ANCHOR,
    start: Mapping[str, float] | None = None,
) -> RatingFit:
    """Maximum a posteriori Bradley–Terry ratings from head-to-head records.

    ``records`` maps ``(a, b)`` to a's record against b (either key order; both orders are
    merged). ``players`` adds players without games, who get the anchor and a wide interval.
    Each rating has a Gaussian prior with standard deviation ``prior_sd`` Elo around the
    field's mean (see :data:`DEFAULT_PRIOR_SD`); it makes the optimum unique and finite and
    pins the mean rating at ``anchor`` exactly.

    ``start`` (player -> rating, e.g. the previous fit's) is where Newton starts; players
    it lacks start at the anchor. It changes the number of steps, not the answer (beyond
    ~1e-8 Elo of rounding): after one more result, a warm start needs two or three steps.

    Damped Newton iterations on the log-posterior, which is strictly concave; each step is
    O(pairs) to build the curvature matrix plus one dense ``N x N`` Cholesky solve, and the
    intervals need one inverse. Measured (one core): 200 players with every pair met in
    about 0.03 s, 1,000 players in about 0.4 s. The output depends only on the records,
    never on the order results came in.
    """
    names = sorted({p for key in records for p in key} | set(players))
    if not names:
        raise RatingError("no players to rate: pass at least one result or player")
    index = {name: i for i, name in enumerate(names)}
    return _fit(names, _merge(records, index), prior_sd, anchor, start)


def fit_arrays(
    names: Sequence[str], i: Any, j: Any, wins: Any, losses: Any, ties: Any,
    *, prior_sd: float = DEFAULT_PRIOR_SD, anchor: float = DEFAULT_ANCHOR,
    start: Mapping[str, float] | None = None,
) -> RatingFit:
    """:func:`fit_records` of records already held as arrays: ``names`` sorted and
    distinct, row ``r`` is ``names[i[r]]``'s record against ``names[j[r]]`` with
    ``i[r] < j[r]``, rows sorted by ``(i, j)`` and distinct. The same answer, bit for bit,
    without the per-record Python loop (what a 1,000-version refit spent its time on)."""
    if not names:
        raise RatingError("no players to rate: pass at least one result or player")
    games = (np.asarray(wins) + np.asarray(losses) + np.asarray(ties)).astype(float)
    points = np.asarray(wins) + 0.5 * np.asarray(ties)
    met = games > 0
    pairs = _Pairs(np.asarray(i, dtype=np.intp)[met], np.asarray(j, dtype=np.intp)[met],
                   points[met].astype(float), games[met])
    return _fit(list(names), pairs, prior_sd, anchor, start)


def _fit(names: list[str], pairs: _Pairs, prior_sd: float, anchor: float,
         start: Mapping[str, float] | None) -> RatingFit:
    if not (math.isfinite(prior_sd) and prior_sd > 0):
        raise RatingError(f"prior_sd must be a positive number of Elo points, got {prior_sd!r}")
    if not math.isfinite(anchor):
        raise RatingError(f"anchor must be a finite rating, got {anchor!r}")
    n = len(names)
    index = {name: k for k, name in enumerate(names)}
    precision = (ELO_PER_NAT / prior_sd) ** 2

    theta, steps = _newton(n, pairs, precision, _warm_start(names, start, anchor))
    covariance = np.linalg.inv(_curvature(theta, pairs, precision))
    # The prior alone pins the field's mean; subtracting its share leaves the covariance of
    # ratings measured from that mean (the likelihood says nothing about the mean).
    covariance -= 1.0 / (precision * n)
    raw_variance = np.diagonal(covariance) + 1.0 / (precision * n)
    variance = np.diagonal(covariance).copy()
    # Rounding residue: a lone player is the field's mean exactly.
    variance[variance < 1e-12 * raw_variance] = 0.0
    margins = Z95 * np.sqrt(variance) * ELO_PER_NAT
    covariance *= ELO_PER_NAT**2

    games = np.bincount(pairs.i, pairs.games, n) + np.bincount(pairs.j, pairs.games, n)
    points = np.bincount(pairs.i, pairs.points, n) + np.bincount(
        pairs.j, pairs.games - pairs.points, n)
    ratings = []
    for i, name in enumerate(names):
        rating = anchor + float(theta[i]) * ELO_PER_NAT
        margin = float(margins[i])
        ratings.append(PlayerRating(name, rating, rating - margin, rating + margin,
                                    int(games[i]), float(points[i])))
    order = sorted(range(n), key=lambda i: (-ratings[i].rating, ratings[i].player))
    position = [0] * n
    for rank, i in enumerate(order):
        position[i] = rank
    return RatingFit(
        ratings=tuple(ratings[i] for i in order),
        anchor=anchor,
        prior_sd=prior_sd,
        newton_steps=steps,
        _column=MappingProxyType(index),
        _position=tuple(position),
        _covariance=covariance,
    )


# -- numerics ----------------------------------------------------------------------------------


def _merge(records: Mapping[tuple[str, str], PairRecord], index: Mapping[str, int]) -> _Pairs:
    """Records as arrays, both orientations of a pair merged, in (i, j) order: sums over
    pairs then run in one order whatever order the records came in (bit-for-bit results)."""
    size = len(records)
    first = np.empty(size, dtype=np.intp)
    second = np.empty(size, dtype=np.intp)
    points = np.empty(size)
    games = np.empty(size)
    for row, ((player_a, player_b), record) in enumerate(records.items()):
        if player_a == player_b:
            raise RatingError(f"record {player_a!r} vs itself: a player cannot play itself")
        total = record.wins + record.losses + record.ties
        won = record.wins + 0.5 * record.ties
        a, b = index[player_a], index[player_b]
        if a < b:
            first[row], second[row], points[row] = a, b, won
        else:
            first[row], second[row], points[row] = b, a, total - won
        games[row] = total
    keys, slot = np.unique(first * len(index) + second, return_inverse=True)
    merged_games = np.bincount(slot, games, len(keys))
    merged_points = np.bincount(slot, points, len(keys))
    met = merged_games > 0
    keys = keys[met]
    return _Pairs(keys // len(index), keys % len(index), merged_points[met], merged_games[met])



@dataclass(frozen=True)
class _Pairs:
    """The pairs that met, as arrays: players ``i < j``, points of ``i``, games."""

    i: Any
    j: Any
    points: Any
    games: Any


def _warm_start(names: Sequence[str], start: Mapping[str, float] | None, anchor: float) -> Any:
    theta = np.zeros(len(names))
    if start:
        for column, name in enumerate(names):
            value = start.get(name)
            if value is not None and math.isfinite(value):
                theta[column] = (value - anchor) / ELO_PER_NAT
        theta -= theta.mean()
        if np.abs(theta).max() > _WARM_START_LIMIT:
            theta[:] = 0.0
    return theta


def _newton(n: int, pairs: _Pairs, precision: float, theta: Any) -> tuple[Any, int]:
    """Maximise the log-posterior over log-odds strengths θ; returns θ (mean 0) and steps."""
    for step_number in range(1, _MAX_NEWTON_STEPS + 1):
        gradient = _gradient(theta, pairs, precision)
        step = np.linalg.solve(_curvature(theta, pairs, precision), gradient)
        largest = float(np.abs(step).max())
        scale = 1.0
        if largest > _LINE_SEARCH_BELOW:
            # Backtrack until the Armijo condition holds; the objective is concave, so the
            # Newton direction is an ascent direction and a small enough step always works.
            start = _log_posterior(theta, pairs, precision)
            slope = float(gradient @ step)
            while scale > 1e-12:
                trial = theta + scale * step
                if _log_posterior(trial, pairs, precision) >= start + 1e-4 * scale * slope:
                    break
                scale /= 2.0
        theta = theta + scale * step
        if largest * scale < _STEP_TOLERANCE:
            # At the optimum the prior makes the mean exactly 0; remove rounding residue.
            return theta - math.fsum(theta) / n, step_number
    raise RatingError(
        f"the rating fit did not converge in {_MAX_NEWTON_STEPS} Newton steps; this is a bug, "
        "please report it with the results"
    )


def _gradient(theta: Any, pairs: _Pairs, precision: float) -> Any:
    surplus = pairs.points - pairs.games * _logistic_array(theta[pairs.i] - theta[pairs.j])
    n = len(theta)
    return (-precision * theta + np.bincount(pairs.i, surplus, n)
            - np.bincount(pairs.j, surplus, n))


def _curvature(theta: Any, pairs: _Pairs, precision: float) -> Any:
    """Negative Hessian of the log-posterior: Fisher information plus the prior's precision."""
    n = len(theta)
    p = _logistic_array(theta[pairs.i] - theta[pairs.j])
    weight = pairs.games * p * (1.0 - p)
    matrix = np.zeros((n, n))
    # Pairs are distinct, so plain fancy assignment adds each weight once.
    matrix[pairs.i, pairs.j] = -weight
    matrix[pairs.j, pairs.i] = -weight
    diagonal = precision + np.bincount(pairs.i, weight, n) + np.bincount(pairs.j, weight, n)
    matrix[np.diag_indices(n)] = diagonal
    return matrix


def _log_posterior(theta: Any, pairs: _Pairs, precision: float) -> float:
    d = theta[pairs.i] - theta[pairs.j]
    likelihood = (pairs.points * _log_logistic(d)
                  + (pairs.games - pairs.points) * _log_logistic(-d))
    return -0.5 * precision * math.fsum(theta * theta) + math.fsum(likelihood)


def _logistic(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def _logistic_array(x: Any) -> Any:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def _log_logistic(x: Any) -> Any:
    """log(1 / (1 + e^-x)) without overflow."""
    return -np.logaddexp(0.0, -x)


def _check_finite(name: str, value: float) -> None:
    if not math.isfinite(value):
        raise RatingError(f"{name} must be a finite rating, got {value!r}")
