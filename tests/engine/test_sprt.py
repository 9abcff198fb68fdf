"""The SPRT over duplicate pairs: LLRs against hand-computed values, and its error rates."""

from __future__ import annotations

import math
import random

import pytest

from tacocat.engine.sprt import (
    PAIR_SCORES,
    Pentanomial,
    Sprt,
    Verdict,
    llr,
    llr_normal,
    score_of_elo,
)
from tacocat.engine.stats import StatsError


def test_two_outcomes_give_walds_bernoulli_llr() -> None:
    # With only wins and losses the constrained ML distribution is Bernoulli(s), so the
    # LLR is Wald's: n1 ln(s1/s0) + n0 ln((1-s1)/(1-s0)). By hand: 60 ln 1.2 + 40 ln 0.8.
    assert llr([40, 60], [0.0, 1.0], 0.5, 0.6) == pytest.approx(
        60 * math.log(1.2) + 40 * math.log(0.8), rel=1e-12)
    assert 60 * math.log(1.2) + 40 * math.log(0.8) == pytest.approx(2.01355, abs=1e-5)


def test_pairs_split_ld_wd_by_hand() -> None:
    # 30 LD pairs (0.25) and 50 WD pairs (0.75): a two-point distribution, whose mean-s
    # ML distribution puts q = (s - 0.25) / 0.5 on 0.75.
    s0, s1 = score_of_elo(0), score_of_elo(20)
    q0, q1 = 0.5, (s1 - 0.25) / 0.5
    by_hand = 50 * math.log(q1 / q0) + 30 * math.log((1 - q1) / (1 - q0))
    assert llr([0, 30, 0, 50, 0], PAIR_SCORES, s0, s1) == pytest.approx(by_hand, rel=1e-12)


def test_llr_is_zero_at_the_observed_mean_and_kl_positive_away() -> None:
    counts = [10, 30, 50, 35, 12]
    mean = Pentanomial(counts).score()
    assert llr(counts, PAIR_SCORES, mean, mean) == pytest.approx(0.0, abs=1e-12)
    # s1 at the observed mean: the LLR is N times a Kullback-Leibler divergence, positive.
    assert llr(counts, PAIR_SCORES, 0.5, mean) > 0
    assert llr(counts, PAIR_SCORES, mean, 0.5) < 0


def test_close_to_the_normal_approximation_for_small_elo() -> None:
    counts = [100, 300, 500, 350, 120]
    s0, s1 = score_of_elo(0), score_of_elo(5)
    exact = llr(counts, PAIR_SCORES, s0, s1)
    assert exact == pytest.approx(llr_normal(counts, PAIR_SCORES, s0, s1), rel=0.01)
    # The same numbers by hand: mean 0.51642, pair variance 0.04876, N = 1370.
    mean = (300 * 0.25 + 500 * 0.5 + 350 * 0.75 + 120) / 1370
    var = (100 * mean**2 + 300 * (0.25 - mean)**2 + 500 * (0.5 - mean)**2
           + 350 * (0.75 - mean)**2 + 120 * (1 - mean)**2) / 1370
    assert exact == pytest.approx((s1 - s0) * (2 * mean - s0 - s1) / (2 * var / 1370), rel=0.01)


def test_unseen_outcomes_are_regularised() -> None:
    sprt = Sprt(0, 5)
    assert sprt.llr(Pentanomial()) == 0.0
    one_sided = sprt.llr(Pentanomial([0, 0, 0, 0, 20]))
    assert math.isfinite(one_sided) and one_sided > 0
    with pytest.raises(StatsError, match="straddle"):
        llr([0, 0, 0, 0, 20], PAIR_SCORES, 0.5, 0.51)


def test_bounds_and_verdicts() -> None:
    sprt = Sprt(elo0=0, elo1=5, alpha=0.05, beta=0.05)
    assert sprt.upper == pytest.approx(math.log(0.95 / 0.05))  # 2.944
    assert sprt.lower == pytest.approx(-2.944, abs=1e-3)
    assert sprt.verdict(3.0) is Verdict.H1
    assert sprt.verdict(-3.0) is Verdict.H0
    assert sprt.verdict(0.1) is Verdict.CONTINUE
    line = sprt.line(Pentanomial([10, 30, 50, 35, 12]), 274)
    assert "games 274 (137 pairs)" in line and "LLR +0.18 (-2.94, +2.94) [0, 5]" in line


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"elo0": 5, "elo1": 0}, "elo0 must be below elo1"),
    ({"alpha": 0}, "alpha is an error rate"),
    ({"beta": 0.7}, "beta is an error rate"),
])
def test_bad_parameters_say_what_is_wrong(kwargs: dict[str, float], message: str) -> None:
    with pytest.raises(StatsError, match=message):
        Sprt(**kwargs)


def test_pentanomial_of_scores_counts_complete_pairs() -> None:
    penta = Pentanomial.of_scores([1, 1, 1, 0, 0.5, 0.5, 0, 0.5, 1, 0.5, 0, 0, 1])
    assert penta.counts == [1, 1, 2, 1, 1]
    with pytest.raises(StatsError, match=r"0, 0\.5 or 1"):
        penta.add_pair(0.3, 1)


def _pair_sampler(elo: float, draws: float = 0.2) -> list[float]:
    """Cumulative pentanomial probabilities for two independent games with score s(elo)."""
    s = score_of_elo(elo)
    win = s - draws / 2
    game = [1 - draws - win, draws, win]  # L, D, W
    penta = [0.0] * 5
    for i, p in enumerate(game):
        for j, q in enumerate(game):
            penta[i + j] += p * q
    return [math.fsum(penta[: k + 1]) for k in range(5)]


def _run(sprt: Sprt, cumulative: list[float], rng: random.Random, cap: int = 5000) -> Verdict:
    penta = Pentanomial()
    for _ in range(cap):
        u = rng.random()
        penta.counts[next(k for k, c in enumerate(cumulative) if u < c or k == 4)] += 1
        verdict = sprt.verdict(sprt.llr(penta))
        if verdict is not Verdict.CONTINUE:
            return verdict
    return Verdict.CONTINUE


def test_simulated_error_rates_stay_within_alpha_and_beta() -> None:
    # Pairs simulated at exactly elo0 must accept H1 at most alpha of the time, and at
    # exactly elo1 accept H0 at most beta of the time (3 standard errors of slack for the
    # finite number of runs; the seed makes the test deterministic).
    sprt = Sprt(elo0=0, elo1=80, alpha=0.1, beta=0.1)
    rng = random.Random(20261202)
    runs = 300
    slack = 3 * math.sqrt(0.1 * 0.9 / runs)
    at_h0 = [_run(sprt, _pair_sampler(0), rng) for _ in range(runs)]
    at_h1 = [_run(sprt, _pair_sampler(80), rng) for _ in range(runs)]
    assert Verdict.CONTINUE not in at_h0 + at_h1
    false_h1 = at_h0.count(Verdict.H1) / runs
    false_h0 = at_h1.count(Verdict.H0) / runs
    assert false_h1 <= sprt.alpha + slack, false_h1
    assert false_h0 <= sprt.beta + slack, false_h0
    # And the test has power: it gets most runs right.
    assert at_h0.count(Verdict.H0) / runs >= 0.8
    assert at_h1.count(Verdict.H1) / runs >= 0.8


def test_score_interval_over_pairs() -> None:
    # Many pairs: the pseudo-pairs hardly matter, the interval is ŝ ± 1.96 σ̂/√N by hand.
    penta = Pentanomial([1000, 3000, 5000, 3500, 1200])
    n, mean = 13700, penta.score()
    var = sum(c * (a - mean) ** 2 for c, a in zip(penta.counts, PAIR_SCORES, strict=True)) / n
    low, high = penta.score_interval()
    assert low == pytest.approx(mean - 1.96 * math.sqrt(var / n), rel=1e-3)
    assert high == pytest.approx(mean + 1.96 * math.sqrt(var / n), rel=1e-3)
    # A unanimous start is not a zero-width interval.
    elo, half = Pentanomial([0, 0, 0, 0, 32]).elo()
    assert elo == 800 and half > 100
