"""The batch fit as it was before numpy: pure-Python dense Newton, the oracle for the new one.

Kept in the tests only, so that every change to :func:`tacocat.arena.ratings.fit_records`
is checked against an independent implementation of the same model (to 1e-6 Elo).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from tacocat.arena.ratings import ELO_PER_NAT, Z95, PairRecord, _logistic

_MAX_NEWTON_STEPS = 200
_STEP_TOLERANCE = 1e-10
_LINE_SEARCH_BELOW = 1e-3


class ReferenceFit:
    """Ratings (Elo), 95% margins and covariances (Elo², relative to the mean) by name."""

    def __init__(self, records: Mapping[tuple[str, str], PairRecord], players: Sequence[str] = (),
                 prior_sd: float = 400.0, anchor: float = 1500.0) -> None:
        merged: dict[tuple[str, str], PairRecord] = {}
        for (a, b), record in records.items():
            key, oriented = ((a, b), record) if a < b else ((b, a), record.reversed())
            merged[key] = merged[key] + oriented if key in merged else oriented
        self.names = sorted({p for key in merged for p in key} | set(players))
        index = {name: i for i, name in enumerate(self.names)}
        pairs = [(index[a], index[b], r.points, float(r.games))
                 for (a, b), r in sorted(merged.items()) if r.games]
        precision = (ELO_PER_NAT / prior_sd) ** 2
        n = len(self.names)
        theta, _ = _newton(n, pairs, precision)
        inverse = _invert_lower(_cholesky(_curvature(theta, pairs, precision)))
        share = 1.0 / (precision * n)
        self._cov = [[(sum(inverse[k][i] * inverse[k][j] for k in range(max(i, j), n)) - share)
                      * ELO_PER_NAT**2 for j in range(n)] for i in range(n)]
        self._index = index
        self.rating = {name: anchor + theta[i] * ELO_PER_NAT for name, i in index.items()}
        self.margin = {name: Z95 * math.sqrt(max(self._cov[i][i], 0.0))
                       for name, i in index.items()}

    def covariance(self, a: str, b: str) -> float:
        return self._cov[self._index[a]][self._index[b]]


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
    raise ArithmeticError(
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
            raise ArithmeticError(
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


def _log_logistic(x: float) -> float:
    """log(1 / (1 + e^-x)) without overflow."""
    if x >= 0:
        return -math.log1p(math.exp(-x))
    return x - math.log1p(math.exp(x))


def _log_logistic(x: float) -> float:
    if x >= 0:
        return -math.log1p(math.exp(-x))
    return x - math.log1p(math.exp(x))
