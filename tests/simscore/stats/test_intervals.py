"""simscore.stats: bootstrap intervals (against scipy.stats.bootstrap), t and Wilson intervals, Pearson r."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from scipy import stats as sps

from simscore.stats import (
    bootstrap_ci,
    bootstrap_ci_shared,
    pearson_mse,
    t_interval,
    wilson_interval,
)


def _scipy_percentile_ci(values: np.ndarray, n_resamples: int = 4000) -> tuple[float, float]:
    result = sps.bootstrap(
        (values,), np.mean, n_resamples=n_resamples, method="percentile",
        confidence_level=0.95, rng=np.random.default_rng(123),
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def test_bootstrap_is_seeded_and_covers_the_mean():
    values = np.random.default_rng(1).random(200)
    first = bootstrap_ci(values, rng=7)
    assert first == bootstrap_ci(values, rng=7)
    assert first[0] < values.mean() < first[1]
    assert np.isnan(bootstrap_ci(np.array([]))[0])
    with pytest.raises(ValueError, match="confidence"):
        bootstrap_ci(values, confidence=1.5)
    with pytest.raises(ValueError, match="n_resamples"):
        bootstrap_ci(values, n_resamples=0)


@pytest.mark.parametrize(
    "values",
    [
        # few distinct values: the multinomial shortcut
        np.array([0.0] * 700 + [1.0] * 300),
        np.repeat([0.0, 0.25, 0.5, 1.0], [50, 120, 30, 200]),
        # mostly distinct values: plain index resampling
        np.random.default_rng(5).beta(2.0, 5.0, size=300),
    ],
    ids=["binary", "four-values", "continuous"],
)
def test_bootstrap_agrees_with_scipy(values):
    ours = bootstrap_ci(values, n_resamples=4000, rng=0)
    theirs = _scipy_percentile_ci(values)
    # two independent 4,000-resample percentile estimates of the same interval
    se = values.std() / math.sqrt(len(values))
    assert ours[0] == pytest.approx(theirs[0], abs=0.15 * se + 1e-3)
    assert ours[1] == pytest.approx(theirs[1], abs=0.15 * se + 1e-3)


@pytest.mark.parametrize("n_groups", [3, 40, 300], ids=["multinomial", "weights", "distinct"])
def test_shared_bootstrap_agrees_with_scipy_per_column(n_groups):
    rng = np.random.default_rng(n_groups)
    n = 400
    groups = rng.integers(0, n_groups, size=n)
    base = rng.random(n_groups)
    columns = {"x": base[groups], "y": (base**2)[groups]}
    shared = bootstrap_ci_shared(columns, groups, n_resamples=4000, seed=0)
    for name, column in columns.items():
        theirs = _scipy_percentile_ci(column)
        se = column.std() / math.sqrt(n)
        assert shared[name][0] == pytest.approx(theirs[0], abs=0.15 * se + 1e-3)
        assert shared[name][1] == pytest.approx(theirs[1], abs=0.15 * se + 1e-3)


def test_shared_bootstrap_pairs_the_columns_and_skips_nan():
    groups = np.array([0, 1, 2, 3] * 25)
    x = np.array([0.0, 1.0, 0.5, 1.0] * 25)
    shared = bootstrap_ci_shared({"x": x, "same": x.copy(), "nan": np.full(100, np.nan)}, groups, seed=4)
    assert shared["x"] == shared["same"]  # one resample for every column
    assert all(math.isnan(v) for v in shared["nan"])
    assert bootstrap_ci_shared({"x": np.array([])}, np.array([], dtype=int))["x"][0] != 0.0


@pytest.mark.parametrize(
    ("k", "n", "low", "high"),
    [(95, 100, 0.888250, 0.978456), (100, 100, 0.963007, 1.0), (0, 10, 0.0, 0.277533), (5, 10, 0.236593, 0.763407)],
)
def test_wilson_interval_golden(k, n, low, high) -> None:
    lo, hi = wilson_interval(k, n)
    assert lo == pytest.approx(low, abs=1e-6) and hi == pytest.approx(high, abs=1e-6)


@pytest.mark.parametrize("n", [1, 7, 100])
def test_wilson_interval_is_the_textbook_formula(n) -> None:
    z = sps.norm.ppf(0.975)
    for k in range(n + 1):
        p = k / n
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        assert wilson_interval(k, n) == pytest.approx((max(0.0, centre - half), min(1.0, centre + half)), abs=1e-12)
    low, high = wilson_interval(7, 20, confidence=0.9)
    # by hand: z = 1.6449, centre (0.35 + z²/40) / (1 + z²/20) = 0.3679, half width 0.1656
    assert (low, high) == pytest.approx((0.2023, 0.5335), abs=1e-4)


def test_t_interval_golden_and_scipy() -> None:
    mean, low, high = t_interval([4.0, 5.0, 6.0])
    half = 4.302652729749464 * 1.0 / math.sqrt(3)  # t(0.975, 2) · s / √n; t = 0.95 / √(2 · 0.975 · 0.025)
    # scipy's t quantile: within 1.2e-11 (relative) at the floor scipy 1.15.0, 4e-16 in scipy 1.17
    assert mean == 5.0 and low == pytest.approx(5.0 - half, rel=1e-10) and high == pytest.approx(5.0 + half, rel=1e-10)
    assert t_interval([2.0, 2.0, 2.0]) == (2.0, 2.0, 2.0)
    single = t_interval([3.0])
    assert single[0] == 3.0 and math.isnan(single[1]) and math.isnan(single[2])
    assert all(math.isnan(v) for v in t_interval([]))
    values = np.random.default_rng(2).normal(3.0, 2.0, size=25)
    expected = sps.t.interval(0.9, len(values) - 1, loc=values.mean(), scale=sps.sem(values))
    assert t_interval(values, confidence=0.9)[1:] == pytest.approx(expected, rel=1e-12)


def test_pearson_mse_matches_scipy_and_handles_constants() -> None:
    rng = np.random.default_rng(3)
    x, y = rng.random(50), rng.random(50)
    r, mse, n = pearson_mse(x, y)
    assert r == pytest.approx(sps.pearsonr(x, y).statistic, abs=1e-12)
    assert mse == pytest.approx(float(np.mean((x - y) ** 2))) and n == 50
    r, mse, n = pearson_mse(np.ones(5), x[:5])
    assert math.isnan(r) and n == 5
    assert pearson_mse(np.array([np.nan]), np.array([1.0]))[2] == 0


def test_resamples_are_capped_and_checked():
    values = np.array([0.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="n_resamples must be <= 1,000,000, got 1,000,000,000"):
        bootstrap_ci(values, n_resamples=10**9)
    with pytest.raises(TypeError, match="n_resamples must be an int"):
        bootstrap_ci(values, n_resamples=1e3)
    with pytest.raises(ValueError, match="n_resamples must be >= 1, got 0"):
        bootstrap_ci_shared({"x": values}, np.array([0, 1, 1]), n_resamples=0)


@pytest.mark.parametrize("n_groups", [3, 40, 300], ids=["multinomial", "weights", "distinct"])
def test_chunked_draws_give_the_same_intervals(monkeypatch, n_groups):
    import simscore.stats.intervals as stats_module

    rng = np.random.default_rng(n_groups)
    groups = rng.integers(0, n_groups, size=400)
    column = rng.random(n_groups)[groups]
    column[::7] = np.nan
    columns = {"x": column, "y": 1.0 - column}
    whole = bootstrap_ci_shared(columns, groups, n_resamples=2000, seed=3)
    single = bootstrap_ci(column[~np.isnan(column)], n_resamples=2000, rng=3)
    monkeypatch.setattr(stats_module, "_CHUNK_ELEMENTS", 997)  # many small chunks: the same draws
    chunked = bootstrap_ci_shared(columns, groups, n_resamples=2000, seed=3)
    for name in columns:  # (a matrix product split by rows may round the last bit differently)
        assert chunked[name] == pytest.approx(whole[name], abs=1e-12)
    assert bootstrap_ci(column[~np.isnan(column)], n_resamples=2000, rng=3) == pytest.approx(single, abs=1e-12)


def _every_draw_path(seed: int) -> list[tuple[float, float]]:
    """Intervals through each way a seeded bootstrap draws: clusters, groups, context weights, distinct counts,
    context indices."""
    rng = np.random.default_rng(seed)
    many = rng.random(500)
    few = rng.integers(0, 5, size=400)
    column = rng.random(5)[few]
    out = list(bootstrap_ci_shared({"x": column}, few, seed=seed).values())
    out += bootstrap_ci_shared({"x": many, "y": many ** 2}, np.arange(500), seed=seed).values()
    out += bootstrap_ci_shared({"x": many}, np.arange(500), seed=seed, clusters=np.arange(500) // 10).values()
    out += [bootstrap_ci(column, rng=seed), bootstrap_ci(many, rng=seed)]
    return out


def _kept_draws(monkeypatch, max_bytes: int) -> Any:
    """A new cache of seeded draws, at most ``max_bytes``, in place of the process's."""
    import simscore.stats.intervals as stats_module
    from simscore.measures._cache import LRUCache

    cache = LRUCache("t", max_entries=100_000, max_cost=max_bytes, cost=stats_module._nbytes)
    monkeypatch.setattr(stats_module, "_kept_draws", lambda: cache)
    return cache


def test_seeded_draws_are_kept_and_give_the_same_bits(monkeypatch):
    """A seed's resamples are drawn once per process and given again: the intervals are those drawn afresh, bit
    for bit, on every path; the kept draws are read-only; a call on other values with the same units draws
    nothing new."""
    cache = _kept_draws(monkeypatch, 1)  # nothing kept: every draw afresh
    fresh = _every_draw_path(5)
    assert not cache.keys()
    cache = _kept_draws(monkeypatch, 64 * 2**20)
    first = _every_draw_path(5)
    kept = len(cache)
    assert kept == 5 and first == fresh
    assert _every_draw_path(5) == fresh and len(cache) == kept
    assert all(not d.flags.writeable for draws in cache.get_many(cache.keys()) for d in draws)
    other = np.random.default_rng(9).random(500)
    bootstrap_ci_shared({"z": other}, np.arange(500), seed=5)  # the same 500 units: their draws are kept
    assert len(cache) == kept
    assert _every_draw_path(6) != fresh and len(cache) == 2 * kept


def test_kept_draws_stay_within_their_bytes_and_a_generator_is_never_kept(monkeypatch):
    bound = 3 * 1000 * 100 * 8  # three draws of 100 x 1,000
    cache = _kept_draws(monkeypatch, bound)
    values = np.random.default_rng(2).random(100)
    for seed in range(5):
        bootstrap_ci(values, rng=seed)
    assert cache.cost <= bound
    assert [key[2] for key in cache.keys()] == [2, 3, 4]  # the least recently used forgotten
    assert bootstrap_ci(values, rng=0) == bootstrap_ci(values, rng=np.random.default_rng(0))
    generator = np.random.default_rng(0)
    assert bootstrap_ci(values, rng=generator) != bootstrap_ci(values, rng=generator)  # its state moves on
    assert [key[2] for key in cache.keys()] == [3, 4, 0]


# ----------------------------------------------------------------------------- agreement


def test_cohen_kappa_matches_scikit_learn():
    from sklearn.metrics import cohen_kappa_score

    from simscore.stats import cohen_kappa

    rng = np.random.default_rng(0)
    labels = ["request(area)", "request(food)", "inform(name=x)", "bye()"]
    for _ in range(20):
        a = [labels[i] for i in rng.integers(0, 4, size=50)]
        b = [x if rng.random() < 0.6 else labels[int(rng.integers(4))] for x in a]
        assert cohen_kappa(a, b) == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)
    assert math.isnan(cohen_kappa([], [])) and math.isnan(cohen_kappa(["a"], ["a"]))
    with pytest.raises(ValueError, match="same length"):
        cohen_kappa(["a"], ["a", "b"])


def test_gwet_ac1_by_hand_and_robust_to_skew():
    from simscore.stats import cohen_kappa, gwet_ac1

    # Gwet (2008), table 1 style: 2 raters, 2 categories, counts (a,a)=118, (a,b)=5, (b,a)=2, (b,b)=0
    a = ["+"] * 123 + ["-"] * 2
    b = ["+"] * 118 + ["-"] * 5 + ["+"] * 2
    # p_o = 118/125; π_+ = (123 + 120) / 250; p_e = 2 π_+ (1 - π_+)
    pi = 243 / 250
    expected = (118 / 125 - 2 * pi * (1 - pi)) / (1 - 2 * pi * (1 - pi))
    assert gwet_ac1(a, b) == pytest.approx(expected, abs=1e-12)
    assert gwet_ac1(a, b) > 0.9 > 0.0 > cohen_kappa(a, b)  # κ's paradox under skew; AC1 stays high
    assert gwet_ac1(["x", "y"], ["x", "y"]) == 1.0


def test_paired_test_finds_real_differences_only():
    from simscore.stats import paired_test

    rng = np.random.default_rng(2)
    base = (rng.random(300) < 0.6).astype(float)
    same = paired_test(base, base.copy(), seed=0)
    assert same.mean_difference == 0.0 and same.p_value == 1.0 and same.ci_low == same.ci_high == 0.0
    noisy = np.where(rng.random(300) < 0.1, 1.0 - base, base)  # 10 % flipped both ways
    null = paired_test(base, noisy, seed=0)
    assert null.p_value > 0.05 and null.ci_low < 0 < null.ci_high
    better = np.where(rng.random(300) < 0.3, 1.0, base)
    real = paired_test(better, base, seed=0)
    assert real.p_value < 0.001 and real.ci_low > 0 and real.n == 300
    assert paired_test(better, base, seed=0) == real  # seeded
    with_nan = paired_test(np.array([1.0, np.nan, 0.0]), np.array([0.0, 1.0, np.nan]), seed=0)
    assert with_nan.n == 1 and with_nan.mean_difference == 1.0
    with pytest.raises(ValueError, match="same length"):
        paired_test(np.zeros(3), np.zeros(4))


def test_rank_correlations_match_scipy():
    from simscore.stats import rank_correlations

    rng = np.random.default_rng(4)
    x, y = rng.random(80), rng.random(80)
    rho, tau, n = rank_correlations(x, y)
    assert rho == pytest.approx(sps.spearmanr(x, y).statistic) and tau == pytest.approx(sps.kendalltau(x, y).statistic)
    assert n == 80 and all(math.isnan(v) for v in rank_correlations(np.ones(3), x[:3])[:2])


@pytest.mark.parametrize("n_clusters", [8, 60])
def test_cluster_bootstrap_agrees_with_scipy_on_equal_clusters(n_clusters):
    # With clusters of equal size and no NaN, the mean over the resampled contexts is the mean
    # of the resampled cluster means: the percentile interval of scipy's bootstrap of them.
    rng = np.random.default_rng(n_clusters)
    size = 6
    clusters = np.repeat(np.arange(n_clusters), size)
    effect = rng.normal(0.0, 1.0, n_clusters)[clusters]  # contexts of a dialogue alike
    values = effect + rng.normal(0.0, 0.3, len(clusters))
    ours = bootstrap_ci_shared({"x": values}, np.arange(len(values)), n_resamples=4000, seed=1, clusters=clusters)["x"]
    cluster_means = values.reshape(n_clusters, size).mean(axis=1)
    theirs = _scipy_percentile_ci(cluster_means)
    se = cluster_means.std() / math.sqrt(n_clusters)
    assert ours[0] == pytest.approx(theirs[0], abs=0.15 * se + 1e-3)
    assert ours[1] == pytest.approx(theirs[1], abs=0.15 * se + 1e-3)
    # resampling contexts as if they were independent understates the uncertainty here
    naive = bootstrap_ci_shared({"x": values}, np.arange(len(values)), n_resamples=4000, seed=1)["x"]
    assert naive[1] - naive[0] < 0.6 * (ours[1] - ours[0])


def test_an_interval_depends_on_the_groups_not_on_the_other_columns():
    rng = np.random.default_rng(3)
    groups = rng.integers(0, 30, 300)
    x = (groups % 2).astype(float)
    other = rng.random(30)[groups]
    alone = bootstrap_ci_shared({"x": x}, groups, seed=2)["x"]
    assert bootstrap_ci_shared({"x": x, "other": other}, groups, seed=2)["x"] == alone
    dialogues = groups % 7
    alone = bootstrap_ci_shared({"x": x}, groups, seed=2, clusters=dialogues)["x"]
    assert bootstrap_ci_shared({"x": x, "other": other}, groups, seed=2, clusters=dialogues)["x"] == alone
    assert bootstrap_ci(x, rng=2, clusters=dialogues) == alone
    with pytest.raises(TypeError, match="rng must be an int seed"):
        bootstrap_ci(x, rng=np.random.default_rng(2), clusters=dialogues)


def test_paired_test_with_one_context_per_cluster_is_the_paired_test():
    from simscore.stats import paired_test

    rng = np.random.default_rng(5)
    x, y = rng.random(40), rng.random(40)
    x[3] = np.nan
    plain = paired_test(x, y, seed=2, n_permutations=999)
    alone = paired_test(x, y, seed=2, n_permutations=999, clusters=np.arange(40))
    # the same sign flips (one per context, in the same order): the same p; the interval is the same
    # resampling of the 39 differences, drawn by the cluster bootstrap instead
    assert (alone.p_value, alone.n, alone.units, alone.mean_difference) == (
        plain.p_value, plain.n, plain.units, plain.mean_difference)
    assert alone.ci_low == pytest.approx(plain.ci_low, abs=0.02) and alone.ci_high == pytest.approx(plain.ci_high, abs=0.02)
    assert (plain.n, plain.units) == (39, 39)
    # five dialogues of eight: the units are the dialogues
    dialogues = paired_test(x, y, seed=2, n_permutations=999, clusters=np.arange(40) // 8)
    assert (dialogues.n, dialogues.units, dialogues.mean_difference) == (39, 5, plain.mean_difference)
    with pytest.raises(ValueError, match=r"clusters must have one code per pair, shape \(40,\), got \(39,\)"):
        paired_test(x, y, clusters=np.arange(39))


def test_one_unit_gives_an_undefined_interval():
    # one value, or any number of values from one cluster: NaN, never a zero-width interval
    assert all(np.isnan(bootstrap_ci(np.array([0.7]))))
    one_dialogue = np.zeros(10, dtype=int)
    values = np.array([0.0, 1.0] * 5)
    assert all(np.isnan(bootstrap_ci(values, rng=0, clusters=one_dialogue)))
    # a column scored only inside one of three dialogues is undefined; the others are not
    dialogues = np.repeat(np.arange(3), 4)
    partly = np.where(dialogues == 1, 1.0, np.nan)
    ci = bootstrap_ci_shared({"partly": partly, "all": np.tile([0.0, 1.0], 6)}, np.arange(12), seed=0,
                             clusters=dialogues)
    assert all(np.isnan(ci["partly"])) and ci["all"] == (0.5, 0.5)
    # two values from two units: defined (here constant)
    assert bootstrap_ci_shared({"x": np.array([1.0, 1.0])}, np.array([0, 0]), seed=0)["x"] == (1.0, 1.0)
