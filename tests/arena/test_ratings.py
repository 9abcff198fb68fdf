"""Live Elo, the batch Bradley–Terry fit and likelihood of superiority."""

from __future__ import annotations

import math
import random
import time
from statistics import NormalDist

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tacocat.arena.errors import ArenaError, RatingError
from tacocat.arena.ratings import (
    DEFAULT_PRIOR_SD,
    ELO_PER_NAT,
    K_PER_GAME,
    PairRecord,
    RatingFit,
    Result,
    elo_update,
    expected_score,
    fit_arrays,
    fit_ratings,
    fit_records,
    likelihood_of_superiority,
    tally_results,
)

from .reference_fit import ReferenceFit

ratings_st = st.floats(min_value=-5000, max_value=5000, allow_nan=False)
scores_st = st.sampled_from([0.0, 0.5, 1.0])


def simulate(
    strengths: dict[str, float], games: int, seed: int, tie_share: float = 0.2
) -> list[Result]:
    """Games between random pairs whose expected score follows the Elo model exactly."""
    rng = random.Random(seed)
    names = sorted(strengths)
    results: list[Result] = []
    for _ in range(games):
        a, b = rng.sample(names, 2)
        p = expected_score(strengths[a], strengths[b])
        tie = tie_share * min(p, 1.0 - p)  # symmetric ties keep the expected score at p
        u = rng.random()
        score = 1.0 if u < p - tie / 2 else 0.5 if u < p + tie / 2 else 0.0
        results.append((a, b, score))
    return results


def centred(strengths: dict[str, float], anchor: float = 1500.0) -> dict[str, float]:
    mean = sum(strengths.values()) / len(strengths)
    return {name: anchor + value - mean for name, value in strengths.items()}


# -- live Elo ----------------------------------------------------------------------------------


def test_k_is_sixteen_per_game() -> None:
    assert K_PER_GAME == 16.0
    assert elo_update(1500, 1500, 1.0) == (1508.0, 1492.0)


def test_expected_score_known_values() -> None:
    assert expected_score(1500, 1500) == 0.5
    assert expected_score(1900, 1500) == pytest.approx(10 / 11)
    assert expected_score(1500, 1900) == pytest.approx(1 / 11)
    assert expected_score(1e6, 0) == 1.0  # no overflow far apart


@given(ratings_st, ratings_st)
def test_expected_score_is_symmetric(a: float, b: float) -> None:
    assert expected_score(a, b) + expected_score(b, a) == pytest.approx(1.0)
    assert 0.0 <= expected_score(a, b) <= 1.0


@given(ratings_st, ratings_st, scores_st, st.floats(min_value=0.1, max_value=64))
def test_elo_update_is_zero_sum(a: float, b: float, score: float, k: float) -> None:
    new_a, new_b = elo_update(a, b, score, k)
    assert new_a + new_b == pytest.approx(a + b, abs=1e-9)
    assert abs(new_a - a) <= k * (1 + 1e-9) + 1e-9  # rounding of new_a - a
    # The mirrored game moves the ratings the same way.
    mirror_b, mirror_a = elo_update(b, a, 1.0 - score, k)
    assert (mirror_a, mirror_b) == pytest.approx((new_a, new_b))


def test_elo_update_direction() -> None:
    assert elo_update(1500, 1500, 0.5) == (1500.0, 1500.0)
    winner, loser = elo_update(1400, 1600, 1.0)
    assert winner > 1400 and loser < 1600
    favourite, underdog = elo_update(1600, 1400, 0.5)
    assert favourite < 1600 and underdog > 1400


@pytest.mark.parametrize(
    ("score", "k", "named"),
    [
        (1.5, 16.0, "score_a.*1.5"),
        (-0.1, 16.0, "score_a.*-0.1"),
        (1.0, 0.0, "K-factor.*0.0"),
        (1.0, math.inf, "K-factor.*inf"),
    ],
)
def test_elo_update_rejects_bad_input(score: float, k: float, named: str) -> None:
    with pytest.raises(RatingError, match=named):
        elo_update(1500, 1500, score, k)


def test_expected_score_rejects_nan() -> None:
    with pytest.raises(RatingError, match="nan"):
        expected_score(math.nan, 1500)


# -- tallies and LOS ---------------------------------------------------------------------------


def test_tally_orients_pairs_and_counts_ties() -> None:
    tally = tally_results([("b", "a", 1.0), ("a", "b", 1.0), ("a", "b", 0.5), ("b", "a", 0.0)])
    assert tally == {("a", "b"): PairRecord(wins=2, losses=1, ties=1)}
    record = tally["a", "b"]
    assert (record.games, record.points) == (4, 2.5)


@pytest.mark.parametrize("score", [0.7, 2.0, -1.0, math.nan])
def test_tally_rejects_scores_other_than_win_tie_loss(score: float) -> None:
    with pytest.raises(RatingError, match=rf"result #1 \('x' vs 'y'\).*got {score!r}"):
        tally_results([("x", "y", 1.0), ("x", "y", score)])


def test_tally_rejects_self_play() -> None:
    with pytest.raises(RatingError, match="'x' cannot play itself"):
        tally_results([("x", "x", 1.0)])


def test_rating_errors_are_arena_and_value_errors() -> None:
    assert issubclass(RatingError, ArenaError)
    assert issubclass(RatingError, ValueError)


def test_pair_record_rejects_negative_counts() -> None:
    with pytest.raises(RatingError, match=r"losses.*-1"):
        PairRecord(wins=1, losses=-1)


def test_los_known_values() -> None:
    assert likelihood_of_superiority(0, 0) == 0.5
    assert likelihood_of_superiority(7, 7) == 0.5
    assert likelihood_of_superiority(10, 0) == pytest.approx(NormalDist().cdf(10 / math.sqrt(10)))
    assert likelihood_of_superiority(60, 40) == pytest.approx(NormalDist().cdf(2.0))


@given(st.integers(0, 10_000), st.integers(0, 10_000))
def test_los_is_symmetric(wins: int, losses: int) -> None:
    total = likelihood_of_superiority(wins, losses) + likelihood_of_superiority(losses, wins)
    assert total == pytest.approx(1.0)


def test_los_rejects_negative_counts() -> None:
    with pytest.raises(RatingError, match="-3"):
        likelihood_of_superiority(-3, 4)


# -- batch fit ---------------------------------------------------------------------------------


def test_two_players_match_the_closed_form() -> None:
    results: list[Result] = [("a", "b", 1.0)] * 750 + [("a", "b", 0.0)] * 250
    fit = fit_ratings(results)
    gap = fit["a"].rating - fit["b"].rating
    assert gap == pytest.approx(400 * math.log10(3), abs=1.0)  # the prior costs < 1 Elo here
    # Var(gap) = 1 / (n p (1 - p)) in nats²; each player is gap/2 from the mean.
    sd_each = ELO_PER_NAT / math.sqrt(1000 * 0.75 * 0.25) / 2
    assert fit["a"].margin == pytest.approx(1.959964 * sd_each, rel=0.02)
    assert fit["a"].games == 1000 and fit["a"].points == 750


def test_recovers_known_strengths() -> None:
    truth = centred({f"bot{i:02d}": 60.0 * i for i in range(12)})
    fit = fit_ratings(simulate(truth, 30_000, seed=7))
    errors = [fit[name].rating - truth[name] for name in truth]
    assert max(abs(e) for e in errors) < 40
    # Errors should be the size the intervals claim: nearly all intervals cover the truth.
    covered = sum(fit[n].low <= truth[n] <= fit[n].high for n in truth)
    assert covered >= 10
    # And the order is right where the gap is 60 Elo.
    assert [r.player for r in fit.ratings] == sorted(truth, reverse=True)


def test_fit_is_symmetric_in_how_a_game_is_written() -> None:
    results = simulate({"a": 0.0, "b": 100.0, "c": 250.0}, 600, seed=3)
    flipped = [(b, a, 1.0 - s) for a, b, s in results]
    assert fit_ratings(flipped).ratings == fit_ratings(results).ratings


def test_equal_records_give_equal_ratings() -> None:
    results: list[Result] = [("a", "c", 1.0), ("c", "a", 0.5), ("b", "c", 1.0), ("c", "b", 0.5)]
    fit = fit_ratings(results)
    assert fit["a"].rating == pytest.approx(fit["b"].rating, abs=1e-9)
    assert fit["a"].margin == pytest.approx(fit["b"].margin)


def test_order_of_results_does_not_matter() -> None:
    results = simulate({f"p{i}": 40.0 * i for i in range(8)}, 2_000, seed=11)
    shuffled = results[:]
    random.Random(5).shuffle(shuffled)
    assert fit_ratings(shuffled) == fit_ratings(results)
    assert fit_ratings(results) == fit_ratings(results)  # deterministic


def test_intervals_shrink_with_more_games() -> None:
    truth = {f"p{i}": 80.0 * i for i in range(6)}
    few = fit_ratings(simulate(truth, 500, seed=1))
    many = fit_ratings(simulate(truth, 8_000, seed=1))
    for name in truth:
        assert many[name].margin < few[name].margin / 3  # 16x the games: about 1/4 the width


def test_player_with_all_wins_stays_finite() -> None:
    results = simulate({"a": 0.0, "b": 50.0, "c": 100.0}, 300, seed=2)
    results += [("ace", opponent, 1.0) for opponent in "abc" for _ in range(100)]
    fit = fit_ratings(results)
    ace = fit["ace"]
    assert math.isfinite(ace.rating) and math.isfinite(ace.low) and math.isfinite(ace.high)
    assert fit.ratings[0].player == "ace"
    assert ace.low > max(fit[p].rating for p in "abc")
    # Nothing bounds it from above but the prior, so its interval is the widest.
    assert ace.margin > max(fit[p].margin for p in "abc")


def test_player_with_all_losses_stays_finite() -> None:
    fit = fit_ratings([("a", "b", 0.0)] * 50)
    assert math.isfinite(fit["a"].rating) and fit["a"].rating < 1500 < fit["b"].rating


def test_mean_is_anchored() -> None:
    results = simulate({"a": 0.0, "b": 300.0, "c": 900.0, "d": 1000.0}, 1_000, seed=4)
    results.append(("d", "e", 1.0))  # a barely-connected player still counts in the mean
    fit = fit_ratings(results)
    assert sum(r.rating for r in fit.ratings) / len(fit) == pytest.approx(1500.0, abs=1e-9)
    moved = fit_ratings(results, anchor=1000.0)
    for rating in fit.ratings:
        assert moved[rating.player].rating == pytest.approx(rating.rating - 500.0, abs=1e-9)
        assert moved[rating.player].margin == pytest.approx(rating.margin)


def test_covariances_are_relative_to_the_mean() -> None:
    fit = fit_ratings(simulate({f"p{i}": 50.0 * i for i in range(5)}, 1_000, seed=9))
    names = [r.player for r in fit.ratings]
    for a in names:
        # The mean is pinned, so each rating's covariance with the mean is zero.
        assert sum(fit.covariance(a, b) for b in names) == pytest.approx(0.0, abs=1e-6)
        assert fit[a].margin == pytest.approx(1.959964 * math.sqrt(fit.covariance(a, a)))


def test_los_from_the_fit() -> None:
    fit = fit_ratings(simulate({"weak": 0.0, "mid": 30.0, "strong": 400.0}, 3_000, seed=6))
    assert fit.los("strong", "weak") > 0.999
    assert fit.los("strong", "weak") + fit.los("weak", "strong") == pytest.approx(1.0)
    assert fit.los("mid", "mid") == 0.5


def test_records_in_either_orientation_are_merged() -> None:
    one = fit_records({("a", "b"): PairRecord(6, 3, 1)})
    other = fit_records({("b", "a"): PairRecord(2, 4, 1), ("a", "b"): PairRecord(2, 1, 0)})
    assert one.ratings == other.ratings


def test_players_without_games_get_the_anchor_and_the_prior_width() -> None:
    fit = fit_ratings([("a", "b", 1.0)] * 10, players=["newcomer"])
    newcomer = fit["newcomer"]
    assert newcomer.rating == pytest.approx(1500.0, abs=1e-6)
    assert newcomer.games == 0
    expected = 1.959964 * DEFAULT_PRIOR_SD * math.sqrt(1 - 1 / 3)
    assert newcomer.margin == pytest.approx(expected, rel=1e-4)


def test_groups_that_never_met_stay_finite() -> None:
    fit = fit_ratings([("a", "b", 1.0)] * 20 + [("c", "d", 1.0)] * 20)
    assert fit["a"].rating == pytest.approx(fit["c"].rating)
    assert all(math.isfinite(r.margin) for r in fit.ratings)


def test_fit_rejects_bad_parameters_and_unknown_players() -> None:
    with pytest.raises(RatingError, match=r"prior_sd.*-1"):
        fit_ratings([("a", "b", 1.0)], prior_sd=-1.0)
    with pytest.raises(RatingError, match="no players"):
        fit_ratings([])
    fit = fit_ratings([("a", "b", 1.0)])
    with pytest.raises(RatingError, match="'zed' is not in this fit"):
        fit["zed"]
    assert "a" in fit and "zed" not in fit


@given(
    st.lists(
        st.tuples(st.sampled_from("abcde"), st.sampled_from("abcde"), scores_st).filter(
            lambda r: r[0] != r[1]
        ),
        min_size=1,
        max_size=60,
    )
)
def test_any_results_give_a_finite_anchored_fit(results: list[Result]) -> None:
    fit = fit_ratings(results)
    assert isinstance(fit, RatingFit)
    assert all(math.isfinite(r.low) and r.low <= r.rating <= r.high for r in fit.ratings)
    assert sum(r.rating for r in fit.ratings) / len(fit) == pytest.approx(1500.0, abs=1e-6)


def test_hundred_players_hundred_thousand_games_is_quick() -> None:
    rng = random.Random(0)
    truth = {f"bot{i:03d}": rng.gauss(0, 200) for i in range(100)}
    results = simulate(truth, 100_000, seed=1)
    start = time.perf_counter()
    fit = fit_ratings(results)
    elapsed = time.perf_counter() - start
    assert len(fit) == 100
    assert elapsed < 5.0, f"fit took {elapsed:.2f}s"  # about 0.25 s on a laptop-class CPU


# -- agreement with the pure-Python fit the numpy one replaced ---------------------------------


def random_records(seed: int) -> tuple[dict[tuple[str, str], PairRecord], dict[str, float]]:
    """A random ladder: 2..30 players, some pairs never met, some lopsided, some tied."""
    rng = random.Random(seed)
    players = [f"v{i:02d}" for i in range(rng.randint(2, 30))]
    truth = {p: rng.gauss(0, rng.choice([50, 300, 900])) for p in players}
    density = rng.choice([0.1, 0.5, 1.0])
    records = {}
    for i, a in enumerate(players):
        for b in players[i + 1:]:
            if rng.random() > density:
                continue
            games = rng.choice([1, 2, 10, 200])
            p = expected_score(truth[a], truth[b])
            wins = sum(rng.random() < p for _ in range(games))
            ties = rng.randint(0, games - wins) if rng.random() < 0.3 else 0
            record = PairRecord(wins, games - wins - ties, ties)
            records[(a, b) if rng.random() < 0.5 else (b, a)] = record
    records.setdefault((players[0], players[1]), PairRecord(1, 0, 0))
    return records, {p: 1500.0 + t for p, t in truth.items()}


@pytest.mark.parametrize("seed", range(25))
def test_fit_agrees_with_the_pure_python_fit(seed: int) -> None:
    records, _ = random_records(seed)
    extra = ["newcomer"] if seed % 5 == 0 else []
    fit = fit_records(records, players=extra)
    reference = ReferenceFit(records, extra)
    assert sorted(r.player for r in fit.ratings) == reference.names
    for name in reference.names:
        assert fit[name].rating == pytest.approx(reference.rating[name], abs=1e-6)
        assert fit[name].margin == pytest.approx(reference.margin[name], abs=1e-6)
    for a in reference.names[:5]:
        for b in reference.names[-5:]:
            assert fit.covariance(a, b) == pytest.approx(reference.covariance(a, b), abs=1e-6)


@pytest.mark.parametrize("seed", range(10))
def test_the_fit_from_arrays_is_the_fit_from_records(seed: int) -> None:
    """What a refit runs (:func:`fit_arrays`, on the pair counts as arrays) gives the
    records' fit bit for bit, so it agrees with the pure-Python fit as that one does."""
    records, truth = random_records(seed)
    names = sorted({p for pair in records for p in pair})
    index = {name: k for k, name in enumerate(names)}
    merged: dict[tuple[int, int], PairRecord] = {}
    for (a, b), record in records.items():  # a pair may come in both orientations
        key, oriented = ((index[a], index[b]), record) if a < b else (
            (index[b], index[a]), record.reversed())
        merged[key] = merged.get(key, PairRecord(0, 0, 0)) + oriented
    rows = [(a, b, merged[a, b]) for a, b in sorted(merged)]
    i, j = np.array([r[0] for r in rows]), np.array([r[1] for r in rows])
    wins, losses, ties = (np.array([getattr(r[2], name) for r in rows])
                          for name in ("wins", "losses", "ties"))
    start = truth if seed % 2 else None
    from_arrays = fit_arrays(names, i, j, wins, losses, ties, start=start)
    from_records = fit_records(records, start=start)
    assert from_arrays.ratings == from_records.ratings
    reference = ReferenceFit(records, [])
    for name in names:
        assert from_arrays[name].rating == pytest.approx(reference.rating[name], abs=1e-6)
    pairs = [(names[a], names[b]) for a, b in zip(i.tolist(), j.tolist(), strict=True)]
    assert from_arrays.los_columns(i, j) == from_records.los_many(pairs)


@pytest.mark.parametrize("seed", range(25, 40))
def test_a_warm_started_refit_agrees_with_a_cold_fit(seed: int) -> None:
    records, truth = random_records(seed)
    cold = fit_records(records)
    # A refit after one more result starts from the previous fit's ratings; a start far off
    # (the truth, or nonsense) must change the steps taken, never the answer.
    previous = {r.player: r.rating for r in cold.ratings}
    for start in (previous, truth, {name: 1e6 for name in truth}):
        warm = fit_records(records, start=start)
        for rating in cold.ratings:
            assert warm[rating.player].rating == pytest.approx(rating.rating, abs=1e-6)
            assert warm[rating.player].margin == pytest.approx(rating.margin, abs=1e-6)
    assert fit_records(records, start=previous).newton_steps <= 2


def test_los_many_matches_los_pair_by_pair() -> None:
    fit = fit_ratings(simulate({f"p{i}": 70.0 * i for i in range(6)}, 1_500, seed=12))
    names = [r.player for r in fit.ratings]
    pairs = [(a, b) for a in names for b in names]
    for (a, b), value in zip(pairs, fit.los_many(pairs), strict=True):
        assert value == fit.los(a, b)
        reference = 0.5 if a == b else NormalDist().cdf(
            (fit[a].rating - fit[b].rating)
            / math.sqrt(fit.covariance(a, a) + fit.covariance(b, b) - 2 * fit.covariance(a, b)))
        assert value == pytest.approx(reference, abs=1e-12)
