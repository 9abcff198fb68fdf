"""Match summary statistics for ``tacocat play``."""

from __future__ import annotations

import dataclasses
import math
import random
import statistics

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tacocat.engine import EngineError
from tacocat.engine.stats import ELO_CLIP, MatchStats, StatsError, match_stats

scores_st = st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=1, max_size=200)


def test_counts_and_score() -> None:
    stats = match_stats([1, 0, 1, 0.5, 1, 1])
    assert (stats.games, stats.wins, stats.losses, stats.ties) == (6, 4, 1, 1)
    assert (stats.pairs, stats.unpaired) == (3, 0)
    assert stats.score == pytest.approx(4.5 / 6)


def test_odd_trailing_game_counts_in_the_score() -> None:
    stats = match_stats([1, 0, 1, 1, 1])
    assert (stats.games, stats.pairs, stats.unpaired) == (5, 2, 1)
    assert stats.score == pytest.approx(4 / 5)
    assert stats.score_low <= stats.score <= stats.score_high


def test_single_game_gives_the_whole_range() -> None:
    stats = match_stats([1])
    assert (stats.pairs, stats.unpaired) == (0, 1)
    assert (stats.score_low, stats.score_high) == (0.0, 1.0)
    assert not stats.excludes_half


def test_large_sample_interval_is_the_normal_approximation_on_pair_means() -> None:
    rng = random.Random(3)
    scores = [rng.choice([1.0, 1.0, 0.5, 0.0]) for _ in range(2_000)]
    stats = match_stats(scores)
    pair_means = [(scores[i] + scores[i + 1]) / 2 for i in range(0, len(scores), 2)]
    half_width = 1.959964 * statistics.stdev(pair_means) / math.sqrt(len(pair_means))
    assert stats.score_high - stats.score == pytest.approx(half_width, rel=0.01)
    assert stats.score - stats.score_low == pytest.approx(half_width, rel=0.01)


def test_the_pair_is_the_unit() -> None:
    # The same 100 wins and 100 losses. Split within every pair, the deal's luck cancelled
    # and the bots are evidently even; won or lost whole pairs at a time, the match says less.
    split = match_stats([1.0, 0.0] * 100)
    whole = match_stats([1.0, 1.0, 0.0, 0.0] * 50)
    assert split.score == whole.score == 0.5
    split_width = split.score_high - split.score_low
    whole_width = whole.score_high - whole.score_low
    assert split_width < whole_width / 5
    # With pair_size=1 the games are taken as independent: in between.
    independent = match_stats([1.0, 0.0] * 100, pair_size=1)
    assert split_width < independent.score_high - independent.score_low < whole_width + 1e-9


@pytest.mark.parametrize(("pairs_won", "excludes"), [(1, False), (3, False), (4, True)])
def test_unanimous_short_matches_are_not_overconfident(pairs_won: int, excludes: bool) -> None:
    stats = match_stats([1.0] * (2 * pairs_won))
    assert stats.score == 1.0
    assert stats.score_high == 1.0
    assert stats.score_low < 1.0
    assert stats.excludes_half is excludes  # not after 2 games of luck: 4 pairs at least


def test_elo_transform() -> None:
    stats = match_stats([1, 1, 1, 0] * 100)
    assert stats.score == 0.75
    assert stats.elo == pytest.approx(400 * math.log10(3))
    assert stats.elo_low < stats.elo < stats.elo_high
    assert not stats.elo_clipped
    assert stats.excludes_half


def test_even_match() -> None:
    stats = match_stats([0.5] * 40)
    assert stats.score == 0.5 and stats.elo == 0.0
    assert stats.score - stats.score_low == pytest.approx(stats.score_high - stats.score)
    assert not stats.excludes_half


def test_infinite_elo_is_clipped_and_flagged() -> None:
    stats = match_stats([1.0] * 40)
    assert (stats.elo, stats.elo_high) == (ELO_CLIP, ELO_CLIP)
    assert stats.elo_clipped
    assert "clipped" in stats.summary()
    lost = match_stats([0.0] * 40)
    assert (lost.elo, lost.elo_low) == (-ELO_CLIP, -ELO_CLIP)
    assert lost.excludes_half and lost.score_high < 0.5


@given(scores_st, st.integers(1, 4))
def test_invariants(scores: list[float], pair_size: int) -> None:
    stats = match_stats(scores, pair_size)
    assert 0.0 <= stats.score_low <= stats.score <= stats.score_high <= 1.0
    assert -ELO_CLIP <= stats.elo_low <= stats.elo <= stats.elo_high <= ELO_CLIP
    assert stats.wins + stats.losses + stats.ties == stats.games == len(scores)
    assert stats.pairs * pair_size + stats.unpaired == stats.games
    assert stats.excludes_half == (stats.score_low > 0.5 or stats.score_high < 0.5)


@given(scores_st)
def test_swapping_the_bots_mirrors_everything(scores: list[float]) -> None:
    a = match_stats(scores)
    b = match_stats([1.0 - s for s in scores])
    assert (b.wins, b.losses, b.ties) == (a.losses, a.wins, a.ties)
    assert b.score == pytest.approx(1 - a.score)
    assert (b.score_low, b.score_high) == pytest.approx((1 - a.score_high, 1 - a.score_low))
    assert (b.elo, b.elo_low, b.elo_high) == pytest.approx((-a.elo, -a.elo_high, -a.elo_low))
    assert b.excludes_half == a.excludes_half


def test_summary_line() -> None:
    line = match_stats([1, 0, 1, 0.5, 1]).summary()
    assert line.startswith("3 W / 1 L / 1 T in 5 games (2 pairs + 1): score 0.700 [")


def test_stats_are_frozen() -> None:
    stats = match_stats([1.0, 0.0])
    assert isinstance(stats, MatchStats)
    with pytest.raises(dataclasses.FrozenInstanceError):
        stats.wins = 3  # type: ignore[misc]


@pytest.mark.parametrize("bad", [0.7, 2, -1, math.nan])
def test_rejects_scores_other_than_win_tie_loss(bad: float) -> None:
    with pytest.raises(StatsError, match=rf"score #2 is {bad!r}"):
        match_stats([1.0, 0.0, bad])


def test_rejects_empty_and_bad_pair_size() -> None:
    with pytest.raises(StatsError, match="no games"):
        match_stats([])
    with pytest.raises(StatsError, match=r"pair_size.*0"):
        match_stats([1.0], pair_size=0)


def test_errors_belong_to_the_engine() -> None:
    assert issubclass(StatsError, EngineError)
    assert issubclass(StatsError, ValueError)
