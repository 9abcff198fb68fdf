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

Standard library only.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from types import MappingProxyType
from typing import Final

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

_Z95: Final = NormalDist().inv_cdf(0.975)
_MAX_NEWTON_STEPS: Final = 200
# Converged when no rating moves by more than this many nats (≈ 2e-8 Elo).
_STEP_TOLERANCE: Final = 1e-10
# Below this largest step (nats) Newton is in its quadratic regime; backtracking there would
# only fight rounding in the objective.
_LINE_SEARCH_BELOW: Final = 1e-3


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
    # Player -> its column below (players in name order); column -> position in ratings.
    _column: Mapping[str, int] = field(repr=False, compare=False)
    _position: tuple[int, ...] = field(repr=False, compare=False)
    # Columns of the inverse Cholesky factor of the curvature matrix: the covariance of any
    # two players is a dot product of two of them, so no N x N matrix is stored twice.
    _inv_factor_columns: tuple[tuple[float, ...], ...] = field(repr=False, compare=False)

    def __getitem__(self, player: str) -> PlayerRating:
        return self.ratings[self._position[self._column_of(player)]]

    def __contains__(self, player: object) -> bool:
        return player in self._column

    def __len__(self) -> int:
        return len(self.ratings)

    def covariance(self, player_a: str, player_b: str) -> float:
        """Covariance of two fitted ratings, in Elo², relative to the field's mean."""
        a = self._inv_factor_columns[self._column_of(player_a)]
        b = self._inv_factor_columns[self._column_of(player_b)]
        raw = sum(x * y for x, y in zip(a, b, strict=True))
        prior_var = (self.prior_sd / ELO_PER_NAT) ** 2
        # The prior alone pins the field's mean; subtracting its share leaves the covariance
        # of ratings measured from that mean (the likelihood says nothing about the mean).
        return (raw - prior_var / len(self.ratings)) * ELO_PER_NAT**2

    def los(self, player_a: str, player_b: str) -> float:
        """Likelihood that A is stronger than B, from the whole fit (not just their games)."""
        if player_a == player_b:
            return 0.5
        a, b = self[player_a], self[player_b]
        variance = (
            self.covariance(player_a, player_a)
            + self.covariance(player_b, player_b)
            - 2.0 * self.covariance(player_a, player_b)
        )
        return NormalDist().cdf((a.rating - b.rating) / math.sqrt(max(variance, 1e-300)))

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
) -> RatingFit:
    """Maximum a posteriori Bradley–Terry ratings from head-to-head records.

    ``records`` maps ``(a, b)`` to a's record against b (either key order; both orders are
    merged). ``players`` adds players without games, who get the anchor and a wide interval.
    Each rating has a Gaussian prior with standard deviation ``prior_sd`` Elo around the
    field's mean (see :data:`DEFAULT_PRIOR_SD`); it makes the optimum unique and finite and
    pins the mean rating at ``anchor`` exactly.

    Damped Newton iterations on the log-posterior, which is strictly concave: under ten
    steps, each O(pairs + players³) in pure Python. Measured: 100 players and 100k games in
    about 0.25 s including aggregation, 300 players about 2 s, 500 about 7 s; past a few
    hundred players the cubic term dominates. The output depends only on the records, never
    on the order results came in.
    """
    if not (math.isfinite(prior_sd) and prior_sd > 0):
        raise RatingError(f"prior_sd must be a positive number of Elo points, got {prior_sd!r}")
    if not math.isfinite(anchor):
        raise RatingError(f"anchor must be a finite rating, got {anchor!r}")

    merged: dict[tuple[str, str], PairRecord] = {}
    for (player_a, player_b), record in records.items():
        if player_a == player_b:
            raise RatingError(f"record {player_a!r} vs itself: a player cannot play itself")
        key, oriented = (
            ((player_a, player_b), record)
            if player_a < player_b
            else ((player_b, player_a), record.reversed())
        )
        merged[key] = merged[key] + oriented if key in merged else oriented

    names = sorted({p for key in merged for p in key} | set(players))
    if not names:
        raise RatingError("no players to rate: pass at least one result or player")
    index = {name: i for i, name in enumerate(names)}
    # (i, j, points of i, games), i < j, in sorted key order for deterministic sums.
    pairs = [
        (index[a], index[b], record.points, float(record.games))
        for (a, b), record in sorted(merged.items())
        if record.games
    ]
    precision = (ELO_PER_NAT / prior_sd) ** 2

    theta, steps = _newton(len(names), pairs, precision)
    curvature = _curvature(theta, pairs, precision)
    inverse = _invert_lower(_cholesky(curvature))
    n = len(names)
    prior_share = 1.0 / (precision * n)
    # Columns of L⁻¹: (A⁻¹)ᵢⱼ = Σₖ (L⁻¹)ₖᵢ (L⁻¹)ₖⱼ.
    columns = tuple(tuple(inverse[k][i] for k in range(i, n)) for i in range(n))
    columns = tuple((0.0,) * i + column for i, column in enumerate(columns))

    games = [0] * n
    points = [0.0] * n
    for i, j, points_i, count in pairs:
        games[i] += int(count)
        games[j] += int(count)
        points[i] += points_i
        points[j] += count - points_i

    ratings = []
    for i, name in enumerate(names):
        raw = sum(x * x for x in columns[i])
        variance = raw - prior_share
        if variance < 1e-12 * raw:
            variance = 0.0  # rounding residue: a lone player is the field's mean exactly
        margin = _Z95 * math.sqrt(variance) * ELO_PER_NAT
        rating = anchor + theta[i] * ELO_PER_NAT
        ratings.append(
            PlayerRating(name, rating, rating - margin, rating + margin, games[i], points[i])
        )
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
        _inv_factor_columns=columns,
    )


# -- numerics ----------------------------------------------------------------------------------

Pair = tuple[int, int, float, float]


def _newton(n: int, pairs: Sequence[Pair], precision: float) -> tuple[list[float], int]:
    """Maximise the log-posterior over log-odds strengths θ; returns θ (mean 0) and steps."""
    theta = [0.0] * n
    for step_number in range(1, _MAX_NEWTON_STEPS + 1):
        gradient = _gradient(theta, pairs, precision)
        step = _solve(_cholesky(_curvature(theta, pairs, precision)), gradient)
        largest = max(abs(s) for s in step)
        scale = 1.0
        if largest > _LINE_SEARCH_BELOW:
            # Backtrack until the Armijo condition holds; the objective is concave, so the
            # Newton direction is an ascent direction and a small enough step always works.
            start = _log_posterior(theta, pairs, precision)
            slope = sum(g * s for g, s in zip(gradient, step, strict=True))
            while scale > 1e-12:
                trial = [t + scale * s for t, s in zip(theta, step, strict=True)]
                if _log_posterior(trial, pairs, precision) >= start + 1e-4 * scale * slope:
                    break
                scale /= 2.0
        theta = [t + scale * s for t, s in zip(theta, step, strict=True)]
        if largest * scale < _STEP_TOLERANCE:
            # At the optimum the prior makes the mean exactly 0; remove rounding residue.
            mean = math.fsum(theta) / n
            return [t - mean for t in theta], step_number
    raise RatingError(
        f"the rating fit did not converge in {_MAX_NEWTON_STEPS} Newton steps; this is a bug, "
        "please report it with the results"
    )


def _gradient(theta: Sequence[float], pairs: Sequence[Pair], precision: float) -> list[float]:
    gradient = [-precision * t for t in theta]
    for i, j, points_i, games in pairs:
        surplus = points_i - games * _logistic(theta[i] - theta[j])
        gradient[i] += surplus
        gradient[j] -= surplus
    return gradient


def _curvature(
    theta: Sequence[float], pairs: Sequence[Pair], precision: float
) -> list[list[float]]:
    """Negative Hessian of the log-posterior: Fisher information plus the prior's precision."""
    n = len(theta)
    matrix = [[0.0] * n for _ in range(n)]
    for i in range(n):
        matrix[i][i] = precision
    for i, j, _, games in pairs:
        p = _logistic(theta[i] - theta[j])
        weight = games * p * (1.0 - p)
        matrix[i][i] += weight
        matrix[j][j] += weight
        matrix[i][j] -= weight
        matrix[j][i] -= weight
    return matrix


def _log_posterior(theta: Sequence[float], pairs: Sequence[Pair], precision: float) -> float:
    total = -0.5 * precision * math.fsum(t * t for t in theta)
    for i, j, points_i, games in pairs:
        d = theta[i] - theta[j]
        total += points_i * _log_logistic(d) + (games - points_i) * _log_logistic(-d)
    return total


def _cholesky(matrix: Sequence[Sequence[float]]) -> list[list[float]]:
    """Lower factor L with L Lᵀ = matrix, for a symmetric positive definite matrix."""
    n = len(matrix)
    lower: list[list[float]] = [[] for _ in range(n)]
    for j in range(n):
        row_j = lower[j]
        diagonal = matrix[j][j] - sum(x * x for x in row_j)
        if diagonal <= 0.0:
            raise RatingError(
                "the rating fit's curvature matrix is not positive definite; this is a bug, "
                "please report it with the results"
            )
        root = math.sqrt(diagonal)
        row_j.append(root)
        for i in range(j + 1, n):
            row_i = lower[i]
            # row_i holds its first j entries so far, so zip stops at k < j as it should.
            dot = sum(x * y for x, y in zip(row_i, row_j, strict=False))
            row_i.append((matrix[i][j] - dot) / root)
    return lower


def _solve(lower: Sequence[Sequence[float]], rhs: Sequence[float]) -> list[float]:
    """x with L Lᵀ x = rhs."""
    n = len(lower)
    y: list[float] = []
    for i in range(n):
        # y holds i entries, so zip stops short of the diagonal, as forward substitution needs.
        dot = sum(a * b for a, b in zip(lower[i], y, strict=False))
        y.append((rhs[i] - dot) / lower[i][i])
    x = [0.0] * n
    for i in reversed(range(n)):
        tail = sum(lower[k][i] * x[k] for k in range(i + 1, n))
        x[i] = (y[i] - tail) / lower[i][i]
    return x


def _invert_lower(lower: Sequence[Sequence[float]]) -> list[list[float]]:
    """L⁻¹ (lower triangular) by forward substitution, row by row."""
    n = len(lower)
    inverse: list[list[float]] = []
    for i in range(n):
        row = [0.0] * (i + 1)
        row_l = lower[i]
        for j in range(i):
            row[j] = -sum(row_l[k] * inverse[k][j] for k in range(j, i)) / row_l[i]
        row[i] = 1.0 / row_l[i]
        inverse.append(row)
    return inverse


def _logistic(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def _log_logistic(x: float) -> float:
    """log(1 / (1 + e^-x)) without overflow."""
    if x >= 0:
        return -math.log1p(math.exp(-x))
    return x - math.log1p(math.exp(x))


def _check_finite(name: str, value: float) -> None:
    if not math.isfinite(value):
        raise RatingError(f"{name} must be a finite rating, got {value!r}")
