"""Tests of policies.gpsarsa: the online sparse GP-SARSA learner.

The main oracle is an independent batch computation: the ALD dictionary rebuilt with
``np.linalg.solve`` and Engel's batch GPTD posterior
``α̃ = H̃ᵀ(H̃K̃H̃ᵀ + Σ)⁻¹r``, ``C̃ = H̃ᵀ(H̃K̃H̃ᵀ + Σ)⁻¹H̃`` built from explicit ``H`` and ``Σ``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from policies.gpsarsa._checks import inverse_ldl
from policies.gpsarsa.learner import GPSarsa
from policies.gpsarsa.values import GPSarsaConfig, QEstimate

# ----------------------------------------------------------------------------- helpers


def returns_to_go(rewards: np.ndarray, gamma: float) -> np.ndarray:
    out = np.zeros(len(rewards))
    acc = 0.0
    for t in range(len(rewards) - 1, -1, -1):
        acc = rewards[t] + gamma * acc
        out[t] = acc
    return out


def ald_oracle(points, n_actions: int, nu: float):
    """Independent ALD: returns dictionary features, actions, A (one row per point) and K̃."""
    feats: list[np.ndarray] = []
    acts: list[int] = []
    rows: list[dict[int, float]] = []
    members: dict[int, list[int]] = {a: [] for a in range(n_actions)}
    n_approximated = 0
    for b, a in points:
        idx = members[int(a)]
        kxx = float(b @ b)
        if idx:
            f = np.array([feats[i] for i in idx])
            k = f @ b
            coef = np.linalg.solve(f @ f.T, k)
            delta = kxx - k @ coef
        else:
            coef, delta = np.zeros(0), kxx
        if delta > nu:
            feats.append(np.array(b))
            acts.append(int(a))
            idx.append(len(feats) - 1)
            rows.append({len(feats) - 1: 1.0})
        else:
            n_approximated += delta > 1e-12
            rows.append(dict(zip(idx, coef)))
    m = len(feats)
    a_mat = np.zeros((len(points), m))
    for i, row in enumerate(rows):
        for j, value in row.items():
            a_mat[i, j] = value
    f = np.array(feats).reshape(m, -1)
    act_arr = np.array(acts, dtype=np.int64)
    gram = (f @ f.T) * (act_arr[:, None] == act_arr[None, :])
    return f, act_arr, a_mat, gram, n_approximated


def batch_gptd(lengths, a_mat, gram, rewards, gamma, sigma):
    """Engel's batch sparse MC-GPTD posterior with explicit H (terminal rows) and Σ = σ²HHᵀ."""
    n = sum(lengths)
    h = np.zeros((n, n))
    start = 0
    for length in lengths:
        for t in range(length):
            h[start + t, start + t] = 1.0
            if t + 1 < length:
                h[start + t, start + t + 1] = -gamma
        start += length
    h_tilde = h @ a_mat
    q = h_tilde @ gram @ h_tilde.T + sigma**2 * (h @ h.T)
    alpha = h_tilde.T @ np.linalg.solve(q, rewards)
    cov = h_tilde.T @ np.linalg.solve(q, h_tilde)
    return alpha, cov


def near_low_rank_episodes(rng, n_episodes, *, dim=6, rank=4, n_actions=3, max_len=6):
    """Features near a rank-``rank`` subspace: most points are ALD-approximated, some join."""
    basis = rng.random((rank, dim))
    episodes = []
    for _ in range(n_episodes):
        length = int(rng.integers(1, max_len + 1))
        noise = rng.choice([1e-3, 0.1], size=(length, 1), p=[0.8, 0.2])
        x = rng.random((length, rank)) @ basis / rank + noise * rng.random((length, dim))
        episodes.append((x, rng.integers(0, n_actions, length), rng.normal(size=length)))
    return episodes


def belief_like(rng, n, dim=305, rank=12, noise=1e-3):
    """Non-negative features in [0, 1] close to a low-dimensional family (like beliefs)."""
    basis = rng.random((rank, dim))
    z = rng.dirichlet(np.full(rank, 0.3), size=n)
    return np.clip(z @ basis + noise * rng.random((n, dim)), 0.0, 1.0)


def chain_episode(quit_at: int, n_states: int, bonus):
    """Chain MDP: action 0 advances (−1; +20 at the end), action 1 quits (−1 + bonus[s])."""
    states = list(range(min(quit_at, n_states - 1) + 1))
    actions = [0] * len(states)
    rewards = [-1.0] * len(states)
    if quit_at < n_states:
        actions[-1] = 1
        rewards[-1] += bonus[quit_at]
    else:
        rewards[-1] += 20.0
    return np.eye(n_states)[states], np.array(actions), np.array(rewards)


def trained(seed: int = 0, n_episodes: int = 30, *, dim: int = 5, n_actions: int = 4):
    rng = np.random.default_rng(seed)
    learner = GPSarsa(GPSarsaConfig(feature_dim=dim, n_actions=n_actions, sigma=1.0))
    for x, a, r in near_low_rank_episodes(rng, n_episodes, dim=dim, rank=3, n_actions=n_actions):
        learner.learn_episode(x, a, r)
    return learner


# ----------------------------------------------------------------------------- config


def test_config_defaults_match_the_paper():
    config = GPSarsaConfig(feature_dim=305)
    assert (config.n_actions, config.gamma, config.sigma, config.nu, config.scale) == (
        16, 1.0, 5.0, 0.001, 3.0,
    )
    assert config.to_dict() == {
        "feature_dim": 305, "n_actions": 16, "gamma": 1.0, "sigma": 5.0, "nu": 0.001, "scale": 3.0,
    }


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"feature_dim": 0}, ValueError, "feature_dim must be >= 1, got 0"),
        ({"feature_dim": True}, TypeError, "feature_dim must be an int"),
        ({"feature_dim": 2.0}, TypeError, "feature_dim must be an int"),
        ({"n_actions": 0}, ValueError, "n_actions must be >= 1"),
        ({"gamma": 1.5}, ValueError, "gamma must be <= 1, got 1.5"),
        ({"gamma": -0.5}, ValueError, "gamma must be >= 0, got -0.5"),
        ({"gamma": float("nan")}, ValueError, "gamma must be a finite number, got nan"),
        ({"sigma": 0.0}, ValueError, "sigma must be > 0, got 0.0"),
        ({"sigma": float("inf")}, ValueError, "sigma must be a finite number, got inf"),
        ({"nu": 0}, ValueError, "nu must be > 0"),
        ({"scale": "3"}, TypeError, "scale must be a number, got str '3'"),
    ],
)
def test_config_rejects_bad_values(kwargs, error, message):
    with pytest.raises(error, match=message):
        GPSarsaConfig(**{"feature_dim": 3, **kwargs})


def test_config_is_frozen_keyword_only_and_round_trips():
    config = GPSarsaConfig(feature_dim=4, n_actions=2, gamma=0.9, sigma=0.5, nu=1e-4, scale=0.0)
    assert GPSarsaConfig.from_dict(config.to_dict()) == config
    with pytest.raises(AttributeError):
        config.sigma = 1.0  # type: ignore[misc]
    with pytest.raises(TypeError):
        GPSarsaConfig(4)  # type: ignore[misc]
    with pytest.raises(ValueError, match=r"unknown config field\(s\) \['sigmaa'\]"):
        GPSarsaConfig.from_dict({"feature_dim": 4, "sigmaa": 1.0})
    with pytest.raises(TypeError, match="config must be a GPSarsaConfig"):
        GPSarsa({"feature_dim": 4})  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- golden values


def test_golden_two_turn_episode_with_an_approximated_point():
    # x0 = ([1], a0) joins; x1 = ([2], a0) is 2·x0, δ = 0, so A = [[1], [2]], K̃ = [[1]].
    # γ = 0.5: y = (1 + 0.5·2, 2) = (2, 2). With σ = 1 this is Bayesian linear regression
    # Q = w·b, w ~ N(0, 1): E[w] = (1·2 + 2·2)/(1 + 4 + 1) = 1, Var[w] = 1/6 = 1 − C̃.
    learner = GPSarsa(GPSarsaConfig(feature_dim=1, n_actions=2, gamma=0.5, sigma=1.0))
    learner.learn_episode([[1.0], [2.0]], [0, 0], [1.0, 2.0])
    arrays = learner.arrays()
    assert learner.dictionary_size == 1
    np.testing.assert_allclose(arrays["alpha"], [1.0], rtol=1e-14)
    np.testing.assert_allclose(arrays["covariance"], [[5.0 / 6.0]], rtol=1e-14)
    mean, std = learner.q_values([1.0])
    np.testing.assert_allclose(mean, [1.0, 0.0], rtol=1e-14)
    np.testing.assert_allclose(std**2, [1.0 / 6.0, 1.0], rtol=1e-13)
    mean, std = learner.q_values([2.0])
    np.testing.assert_allclose(mean, [2.0, 0.0], rtol=1e-14)
    np.testing.assert_allclose(std**2, [2.0 / 3.0, 4.0], rtol=1e-13)


def test_golden_terminal_transition_uses_no_successor():
    # Two actions, one-hot: A = K̃ = I, y = (9, 10): α̃ = y/(1 + σ²), C̃ = I/(1 + σ²).
    learner = GPSarsa(GPSarsaConfig(feature_dim=1, n_actions=2, sigma=2.0))
    learner.learn_episode([[1.0], [1.0]], [0, 1], [-1.0, 10.0])
    np.testing.assert_allclose(learner.arrays()["alpha"], [9.0 / 5.0, 10.0 / 5.0], rtol=1e-14)
    np.testing.assert_allclose(learner.arrays()["covariance"], np.eye(2) / 5.0, atol=1e-15)


# ----------------------------------------------------------------------------- batch oracle


@pytest.mark.parametrize("gamma", [1.0, 0.9, 0.0])
def test_recursion_matches_batch_gptd(gamma):
    rng = np.random.default_rng(11)
    config = GPSarsaConfig(feature_dim=6, n_actions=3, gamma=gamma, sigma=0.5, nu=1e-3)
    learner = GPSarsa(config)
    episodes = near_low_rank_episodes(rng, 40)
    for x, a, r in episodes:
        learner.learn_episode(x, a, r)
    points = [(b, a) for x, acts, _ in episodes for b, a in zip(x, acts)]
    feats, acts, a_mat, gram, n_approx = ald_oracle(points, 3, config.nu)
    assert n_approx > 20  # the test exercises ALD-approximated points (0 < δ <= ν)
    arrays = learner.arrays()
    np.testing.assert_array_equal(arrays["features"], feats)
    np.testing.assert_array_equal(arrays["actions"], acts)
    rewards = np.concatenate([r for _, _, r in episodes])
    alpha, cov = batch_gptd([len(r) for _, _, r in episodes], a_mat, gram, rewards, gamma, 0.5)
    np.testing.assert_allclose(arrays["alpha"], alpha, rtol=0, atol=1e-10 * np.abs(alpha).max())
    np.testing.assert_allclose(arrays["covariance"], cov, rtol=0, atol=1e-10 * np.abs(cov).max())
    # posterior at fresh beliefs, every action
    for b in rng.random((5, 6)):
        kvecs = (feats @ b) * (acts[None, :] == np.arange(3)[:, None])  # (n_actions, m)
        mean, std = learner.q_values(b)
        np.testing.assert_allclose(mean, kvecs @ alpha, rtol=1e-9, atol=1e-12)
        var = b @ b - np.einsum("am,mn,an->a", kvecs, cov, kvecs)
        np.testing.assert_allclose(std**2, np.maximum(var, 0), rtol=1e-8, atol=1e-12)


def test_batch_gptd_equals_regression_on_monte_carlo_returns():
    # The module docstring's claim: with terminal episodes, α̃ = Aᵀ(AK̃Aᵀ + σ²I)⁻¹y.
    rng = np.random.default_rng(3)
    episodes = near_low_rank_episodes(rng, 15)
    points = [(b, a) for x, acts, _ in episodes for b, a in zip(x, acts)]
    _, _, a_mat, gram, _ = ald_oracle(points, 3, 1e-3)
    rewards = np.concatenate([r for _, _, r in episodes])
    y = np.concatenate([returns_to_go(r, 0.8) for _, _, r in episodes])
    alpha, cov = batch_gptd([len(r) for _, _, r in episodes], a_mat, gram, rewards, 0.8, 0.7)
    m_inv = np.linalg.inv(a_mat @ gram @ a_mat.T + 0.49 * np.eye(len(y)))
    np.testing.assert_allclose(alpha, a_mat.T @ m_inv @ y, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(cov, a_mat.T @ m_inv @ a_mat, rtol=1e-9, atol=1e-9)


# ----------------------------------------------------------------------------- behaviour


def test_posterior_variance_of_a_visited_point_shrinks():
    learner = GPSarsa(GPSarsaConfig(feature_dim=3, n_actions=4, sigma=1.0))
    b = np.array([0.2, 0.5, 0.3])
    prior = learner.q_values(b).std
    np.testing.assert_allclose(prior, np.full(4, math.sqrt(b @ b)), rtol=1e-15)
    stds = [prior[2]]
    for _ in range(5):
        learner.learn_episode([b, [1.0, 0.0, 0.0]], [2, 1], [-1.0, 5.0])
        std = learner.q_values(b).std
        stds.append(std[2])
        assert std[0] == prior[0] and std[3] == prior[3]  # unvisited actions keep the prior
    assert all(later < earlier for earlier, later in zip(stds, stds[1:]))


def test_one_hot_chain_posterior_is_the_shrunk_average_return():
    # One-hot states and a delta action kernel: K̃ = I and A picks one dictionary point per
    # visit, so α̃_p = Σ y / (n_p + σ²) and Var = σ² / (n_p + σ²) exactly (GP regression
    # with prior variance 1). Cycling through the 5 paths (quit at 0..3, or never) makes the
    # empirical mean of the returns equal Q^π of the uniform-over-paths behaviour, so
    # |Q̂ − Q^π| = |Q^π| σ²/(n_p + σ²) — that is the tolerance (plus rounding).
    n_states, sigma, bonus = 4, 0.3, [0.0, 2.0, 4.0, 6.0]
    learner = GPSarsa(GPSarsaConfig(feature_dim=n_states, n_actions=2, sigma=sigma))
    observed: dict[tuple[int, int], list[float]] = {}
    for episode in range(5 * 40):
        x, acts, r = chain_episode(episode % 5, n_states, bonus)
        learner.learn_episode(x, acts, r)
        for state, action, y in zip(x.argmax(axis=1), acts, returns_to_go(r, 1.0)):
            observed.setdefault((int(state), int(action)), []).append(y)
    assert learner.dictionary_size == len(observed) <= n_states * 2
    q_pi = {
        (s, 1): -1.0 + bonus[s] for s in range(n_states)
    } | {
        (s, 0): float(np.mean([
            (-(q - s + 1) + bonus[q]) if q < n_states else (-(n_states - s) + 20.0)
            for q in range(s + 1, n_states + 1)
        ]))
        for s in range(n_states)
    }
    for (state, action), ys in observed.items():
        n = len(ys)
        mean, std = learner.q_values(np.eye(n_states)[state])
        assert mean[action] == pytest.approx(sum(ys) / (n + sigma**2), rel=1e-12, abs=1e-12)
        assert std[action] ** 2 == pytest.approx(sigma**2 / (n + sigma**2), rel=1e-9)
        tolerance = abs(q_pi[state, action]) * sigma**2 / (n + sigma**2) + 1e-9
        assert abs(mean[action] - q_pi[state, action]) <= tolerance


def test_learning_on_its_own_finds_the_optimal_chain_policy():
    # Chain: advancing is optimal everywhere, V*(s) = 20 − (n_states − s). The learner explores
    # with scale 3 (Thompson-like: a visited pair's std is ≈ σ/√n, so exploration stops once
    # every action has been tried; the prior is not optimistic, so quitting at state 3
    # (Q = 5) is repeated a few times before advancing (unvisited: N(0, 9)) is tried).
    # GP-SARSA is on-policy: Q̂(s, advance) is the shrunk average of all returns seen after
    # (s, advance) (previous test), so |Q̂ − V*| <= mean|y − V*| + |V*|σ²/(n + σ²). The first
    # term is the total cost of the finitely many exploratory episodes divided by n: it decays
    # like 1/n, and after 2,000 episodes it must be below 0.2.
    n_states, sigma, bonus = 4, 0.1, [0.0, 2.0, 4.0, 6.0]
    learner = GPSarsa(GPSarsaConfig(feature_dim=n_states, n_actions=2, sigma=sigma, scale=3.0))
    rng = np.random.default_rng(2024)
    after_advance: dict[int, list[float]] = {s: [] for s in range(n_states)}
    exploratory = []
    for episode in range(2000):
        states, actions, rewards = [], [], []
        state = 0
        while True:
            action = learner.select_action(np.eye(n_states)[state], rng=rng)
            states.append(state)
            actions.append(action)
            if action == 1:
                rewards.append(-1.0 + bonus[state])
                break
            if state == n_states - 1:
                rewards.append(19.0)
                break
            rewards.append(-1.0)
            state += 1
        if 1 in actions:
            exploratory.append(episode)
        learner.learn_episode(np.eye(n_states)[states], actions, rewards)
        for s, a, y in zip(states, actions, returns_to_go(np.array(rewards), 1.0)):
            if a == 0:
                after_advance[s].append(y)
    assert 0 < len(exploratory) and max(exploratory) < 100  # exploration stopped early
    for state in range(n_states):
        b = np.eye(n_states)[state]
        assert learner.select_action(b, scale=0) == 0
        v_star = 20.0 - (n_states - state)
        ys = np.array(after_advance[state])
        exploration_cost = float(np.mean(np.abs(ys - v_star)))
        assert exploration_cost < 0.2
        bound = exploration_cost + v_star * sigma**2 / (len(ys) + sigma**2) + 1e-9
        assert abs(learner.q_values(b).mean[0] - v_star) <= bound


def test_ald_admits_only_linearly_independent_points():
    rng = np.random.default_rng(5)
    basis = rng.random((3, 8))  # every belief lies in a 3-dimensional subspace
    learner = GPSarsa(GPSarsaConfig(feature_dim=8, n_actions=2, nu=1e-6))
    for _ in range(100):
        x = rng.random((4, 3)) @ basis
        learner.learn_episode(x, rng.integers(0, 2, 4), -np.ones(4))
    assert learner.dictionary_sizes().tolist() == [3, 3]
    arrays = learner.arrays()
    for action in range(2):
        feats = arrays["features"][arrays["actions"] == action]
        assert np.linalg.matrix_rank(feats) == 3
    before = learner.arrays()
    learner.learn_episode(before["features"], before["actions"], np.zeros(6))  # seen points
    assert learner.dictionary_size == 6


def test_ald_threshold_is_strict_on_the_residual():
    # b' = b + ε u with u ⟂ b has residual δ = ε² |u|² against the dictionary {b}.
    nu = 1e-3
    learner = GPSarsa(GPSarsaConfig(feature_dim=2, n_actions=1, nu=nu))
    learner.learn_episode([[1.0, 0.0]], [0], [0.0])
    learner.learn_episode([[1.0, math.sqrt(0.5 * nu)]], [0], [0.0])  # δ = ν/2: rejected
    assert learner.dictionary_size == 1
    learner.learn_episode([[1.0, math.sqrt(2.0 * nu)]], [0], [0.0])  # δ = 2ν: admitted
    assert learner.dictionary_size == 2
    zero = GPSarsa(GPSarsaConfig(feature_dim=2, n_actions=1))
    zero.learn_episode([[0.0, 0.0]], [0], [1.0])  # k(x, x) = 0 never joins
    assert zero.dictionary_size == 0


def test_masked_actions_are_never_selected():
    learner = trained(n_actions=6)
    rng = np.random.default_rng(9)
    for _ in range(300):
        mask = rng.random(6) < 0.4
        mask[rng.integers(0, 6)] = True
        b = rng.random(5)
        for scale in (3.0, 0.0):
            assert mask[learner.select_action(b, mask, rng=rng, scale=scale)]
    # the only available action wins even against much higher Q values
    best = int(np.argmax(learner.q_values(np.ones(5)).mean))
    only = (best + 1) % 6
    mask = np.arange(6) == only
    assert learner.select_action(np.ones(5), mask, rng=rng) == only
    assert learner.select_action(np.ones(5), mask.astype(int), scale=0) == only


def test_greedy_ties_go_to_the_lowest_available_action():
    learner = GPSarsa(GPSarsaConfig(feature_dim=2, n_actions=6, sigma=1.0))
    b = np.array([0.5, 0.5])
    assert learner.select_action(b, scale=0) == 0  # all means 0
    assert learner.select_action(b, [False, False, True, True, True, True], scale=0) == 2
    learner.learn_episode([b], [2], [5.0])
    learner.learn_episode([b], [5], [5.0])
    mean = learner.q_values(b).mean
    assert mean[2] == mean[5] > 0.0
    assert learner.select_action(b, scale=0) == 2
    assert learner.select_action(b, [True, True, False, True, True, True], scale=0) == 5
    assert learner.select_action(b, [True, True, False, True, True, True], scale=-1.0) == 5


def test_sampling_uses_the_generator_and_scale():
    learner = trained(n_actions=4)
    b = np.full(5, 0.5)
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator when scale > 0"):
        learner.select_action(b)
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        learner.select_action(b, rng=np.random.RandomState(0))  # type: ignore[arg-type]
    mean, std = learner.q_values(b)
    z = np.random.default_rng(4).standard_normal(4)
    expected = int(np.argmax(mean + 3.0 * std * z))
    assert learner.select_action(b, rng=np.random.default_rng(4)) == expected
    expected = int(np.argmax(mean + 0.5 * std * z))
    assert learner.select_action(b, rng=np.random.default_rng(4), scale=0.5) == expected
    # exactly n_actions draws per sampled selection, whatever the mask
    rng = np.random.default_rng(1)
    learner.select_action(b, [True, False, False, False], rng=rng)
    reference = np.random.default_rng(1)
    reference.standard_normal(4)
    assert rng.standard_normal() == reference.standard_normal()


def test_q_values_shape_and_mask():
    learner = trained(n_actions=4)
    estimate = learner.q_values(np.full(5, 0.2), mask=[True, False, True, False])
    assert isinstance(estimate, QEstimate)
    assert estimate.mean.shape == estimate.std.shape == (4,)
    assert np.isnan(estimate.mean[[1, 3]]).all() and np.isnan(estimate.std[[1, 3]]).all()
    full = learner.q_values(np.full(5, 0.2))
    assert np.array_equal(full.mean[[0, 2]], estimate.mean[[0, 2]])
    assert np.isfinite(full.mean).all() and (full.std >= 0).all()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda g: g.q_values(np.zeros(4)), r"features must have shape \(5,\), got \(4,\)"),
        (lambda g: g.q_values([0.0, 1.0, np.nan, 0.0, 0.0]), "features must be finite"),
        (lambda g: g.q_values(np.zeros(5), mask=[True] * 3), r"mask must have shape \(4,\)"),
        (lambda g: g.q_values(np.zeros(5), mask=[0, 2, 1, 1]), "mask must be booleans"),
        (lambda g: g.select_action(np.zeros(5), [False] * 4, scale=0), "mask excludes every"),
        (lambda g: g.learn_episode(np.zeros((0, 5)), [], []), r"must have shape \(T, 5\)"),
        (lambda g: g.learn_episode(np.zeros(5), [0], [0.0]), r"must have shape \(T, 5\)"),
        (lambda g: g.learn_episode(np.zeros((2, 5)), [0], [0, 0]), r"actions must have shape"),
        (lambda g: g.learn_episode(np.zeros((1, 5)), [0.0], [0.0]), "actions must be integers"),
        (lambda g: g.learn_episode(np.zeros((1, 5)), [4], [0.0]), r"must be in \[0, 3\], got 4"),
        (lambda g: g.learn_episode(np.zeros((1, 5)), [0], [np.inf]), "rewards must be finite"),
        (lambda g: g.learn_episode(np.zeros((1, 5)), [0], [0, 1]), r"rewards must have shape"),
    ],
)
def test_bad_input_is_rejected_with_a_clear_message(call, message):
    learner = GPSarsa(GPSarsaConfig(feature_dim=5, n_actions=4))
    with pytest.raises(ValueError, match=message):
        call(learner)
    assert learner.dictionary_size == 0 and learner.n_episodes == 0


# ----------------------------------------------------------------------------- fast paths


def dense_posterior(learner: GPSarsa, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The posterior of every action from the checkpoint arrays, by dense products."""
    arrays = learner.arrays()
    feats, acts = arrays["features"], arrays["actions"]
    kvecs = (feats @ b) * (acts[None, :] == np.arange(learner.config.n_actions)[:, None])
    mean = kvecs @ arrays["alpha"]
    var = b @ b - np.einsum("am,mn,an->a", kvecs, arrays["covariance"], kvecs)
    return mean, np.maximum(var, 0.0)


def sparse_beliefs(rng, n, dim, n_nonzero):
    """Beliefs like the restaurant domain's: most entries exactly zero."""
    x = np.zeros((n, dim))
    for row in x:
        row[rng.choice(dim, n_nonzero, replace=False)] = rng.random(n_nonzero)
    return x


def test_sparse_blockwise_posterior_equals_the_dense_computation():
    # q_values forms F b over the non-zero features only and each action's variance from its
    # own packed block of C̃; the dense products over the whole dictionary must agree.
    # Action 5 never acts (an empty block), action 0 acts most (the widest block).
    rng = np.random.default_rng(21)
    dim, n_actions = 150, 6
    learner = GPSarsa(GPSarsaConfig(feature_dim=dim, n_actions=n_actions, sigma=2.0))
    beliefs = sparse_beliefs(rng, 300, dim, 6)
    for _ in range(50):
        length = int(rng.integers(1, 9))
        acts = rng.choice(5, size=length, p=[0.4, 0.2, 0.2, 0.1, 0.1])
        learner.learn_episode(beliefs[rng.integers(0, 300, length)], acts, rng.normal(5.0, 3.0, length))
    sizes = learner.dictionary_sizes()
    assert sizes[5] == 0 and sizes[0] == sizes.max() > 2 * sizes[1:5].min() > 0
    probes = np.vstack([sparse_beliefs(rng, 30, dim, 6), beliefs[:10], np.zeros((1, dim)), np.eye(dim)[:3],
                        rng.random((3, dim))])
    for b in probes:
        mean, std = learner.q_values(b)
        want_mean, want_var = dense_posterior(learner, b)
        scale = max(1.0, float(np.abs(want_mean).max()))
        np.testing.assert_allclose(mean, want_mean, rtol=0, atol=1e-12 * scale)
        np.testing.assert_allclose(std**2, want_var, rtol=0, atol=1e-12 * max(1.0, b @ b))
        assert mean[5] == 0.0 and std[5] ** 2 == pytest.approx(b @ b, rel=1e-15)


def test_select_fast_path_equals_the_public_method():
    learner = trained(n_actions=6)
    rng = np.random.default_rng(4)
    for _ in range(100):
        b = rng.random(5) * (rng.random(5) < 0.6)
        mask = rng.random(6) < 0.5
        mask[rng.integers(0, 6)] = True
        for scale in (3.0, 1.0, 0.0):
            seed = int(rng.integers(1 << 30))
            public = learner.select_action(b, mask, rng=np.random.default_rng(seed), scale=scale)
            fast = learner.act(b, mask, np.random.default_rng(seed), scale).action
            assert fast == public and mask[fast]
        assert learner.act(b, None, None, 0.0).action == learner.select_action(b, scale=0)


def test_cached_kernels_are_the_computed_ones():
    # Kernels are cached by the belief's bytes until the dictionary changes: a learner that
    # meets the same beliefs again must act and learn exactly like one with an empty cache.
    rng = np.random.default_rng(6)
    beliefs = sparse_beliefs(rng, 12, 30, 5)  # few beliefs, met again and again
    learners = [GPSarsa(GPSarsaConfig(feature_dim=30, n_actions=4)) for _ in range(2)]
    for _ in range(60):
        length = int(rng.integers(1, 6))
        x = beliefs[rng.integers(0, 12, length)]
        seed = int(rng.integers(1 << 30))
        chosen = []
        for learner in learners:
            if learner is learners[1] and learner._layout is not None:
                learner._layout.kernels.clear()
            generator = np.random.default_rng(seed)
            chosen.append([learner.select_action(b, rng=generator) for b in x])
            learner.learn_episode(x, chosen[-1], -np.ones(length))
        assert chosen[0] == chosen[1]
    assert len(learners[0]._layout.kernels) <= 12 and learners[0].dictionary_size > 12
    for name, array in learners[0].arrays().items():
        assert np.array_equal(array, learners[1].arrays()[name]), name


def engel_episode_update(alpha, cov, gram, a_rows, rewards, gamma, sigma):
    """Engel's posterior update by one episode with explicit ``H`` and ``Σ = σ²HHᵀ``.

    ``ΔK = K̃H̃ᵀ``, ``S = H̃K̃H̃ᵀ − ΔKᵀC̃ΔK + Σ``, ``α̃ += (H̃ᵀ − C̃ΔK)S⁻¹(r − ΔKᵀα̃)`` and
    ``C̃ += (H̃ᵀ − C̃ΔK)S⁻¹(H̃ − ΔKᵀC̃)`` (α̃ and C̃ zero-padded to the grown dictionary).
    """
    turns = len(rewards)
    h = np.eye(turns) - gamma * np.eye(turns, k=1)
    h_tilde = h @ a_rows
    delta_k = gram @ h_tilde.T
    s = h_tilde @ delta_k - delta_k.T @ cov @ delta_k + sigma**2 * h @ h.T
    p = h_tilde.T - cov @ delta_k
    return alpha + p @ np.linalg.solve(s, rewards - delta_k.T @ alpha), cov + p @ np.linalg.solve(s, p.T)


@pytest.mark.parametrize("gamma", [1.0, 0.9, 0.0])
def test_episode_update_equals_engels_form_with_explicit_h(gamma):
    # learn_episode updates by GP regression on the episode's Monte-Carlo returns with the
    # noise σ²I (module docstring); Engel's form uses the rewards, H and Σ = σ²HHᵀ. Episode
    # by episode, from the learner's own state, they must agree to rounding. Well-conditioned
    # features (ALD on general points in 6 dimensions): the oracle's A equals the learner's.
    rng = np.random.default_rng(8)
    sigma = 0.7
    learner = GPSarsa(GPSarsaConfig(feature_dim=6, n_actions=3, gamma=gamma, sigma=sigma))
    points = []
    worst = 0.0
    for _ in range(40):
        length = int(rng.integers(1, 7))
        x, acts, r = rng.random((length, 6)), rng.integers(0, 3, length), rng.normal(size=length)
        before = learner.arrays()
        learner.learn_episode(x, acts, r)
        after = learner.arrays()
        points += list(zip(x, acts))
        feats, o_acts, a_mat, gram, _ = ald_oracle(points, 3, learner.config.nu)
        np.testing.assert_array_equal(after["features"], feats)
        m, m0 = len(feats), len(before["alpha"])
        alpha0, cov0 = np.zeros(m), np.zeros((m, m))
        alpha0[:m0], cov0[:m0, :m0] = before["alpha"], before["covariance"]
        alpha, cov = engel_episode_update(alpha0, cov0, gram, a_mat[-length:], r, gamma, sigma)
        for got, want in ((after["alpha"], alpha), (after["covariance"], cov)):
            error = float(np.abs(got - want).max()) / max(1.0, float(np.abs(want).max()))
            worst = max(worst, error)
    assert learner.dictionary_sizes().tolist() == [6, 6, 6]  # later points are approximated
    # The oracle's own np.linalg.solve on Gram matrices with cond ~1e4 limits the agreement:
    # the per-transition recursion this update replaced reached the same ~5e-12.
    assert worst < 2e-11


def test_inverse_ldl_factor():
    rng = np.random.default_rng(2)
    for n in (1, 2, 7, 26):
        a = rng.standard_normal((n, 40))
        gram = a @ a.T + 0.5 * np.eye(n)
        factor, pivots = inverse_ldl(gram)
        assert np.array_equal(np.triu(factor, 1), np.zeros((n, n))) and (np.diag(factor) == 1.0).all()
        np.testing.assert_allclose(factor @ gram @ factor.T, np.diag(pivots), rtol=0, atol=1e-12 * n)
        lower = np.linalg.cholesky(gram)
        np.testing.assert_allclose(pivots, np.diag(lower) ** 2, rtol=1e-12)
    with pytest.raises(FloatingPointError, match="lost positive definiteness at turn 1"):
        inverse_ldl(np.array([[1.0, 2.0], [2.0, 1.0]]))


# ----------------------------------------------------------------------------- determinism


def run_training(seed: int, n_episodes: int = 40) -> GPSarsa:
    """A seeded synthetic training loop: beliefs from one generator, actions sampled."""
    env = np.random.default_rng(seed)
    rng = np.random.default_rng(seed + 1)
    learner = GPSarsa(GPSarsaConfig(feature_dim=30, n_actions=16))
    beliefs = belief_like(env, 200, dim=30, rank=6)
    for _ in range(n_episodes):
        length = int(env.integers(1, 8))
        x = beliefs[env.integers(0, 200, length)]
        masks = env.random((length, 16)) < 0.7
        masks[:, 0] = True
        actions = [learner.select_action(b, mask, rng=rng) for b, mask in zip(x, masks)]
        rewards = -np.ones(length)
        rewards[-1] += 20.0 * (actions[-1] == 3)
        learner.learn_episode(x, actions, rewards)
    return learner


def test_same_seed_gives_bit_identical_arrays():
    first, second = run_training(7), run_training(7)
    for name, array in first.arrays().items():
        assert np.array_equal(array, second.arrays()[name]), name
    assert first.dictionary_size > 30
    other = run_training(8)
    assert not np.array_equal(first.arrays()["alpha"][:10], other.arrays()["alpha"][:10])


def test_posterior_is_the_plain_sequential_arithmetic_bit_for_bit():
    """The compiled posterior adds its terms in the order written, without fused multiply-adds:
    Python's own float arithmetic in that order gives the same bits (so any machine does)."""
    learner = run_training(9, n_episodes=30)
    layout = learner._build_layout()
    cov, alpha, features_t = learner._cov.tolist(), learner._alpha.tolist(), layout.features_t.tolist()
    beliefs = belief_like(np.random.default_rng(3), 5, dim=30, rank=6)
    for b in beliefs:
        mean, var = learner._posterior(b)
        values = learner._kernel(b).values.tolist()
        expected = [0.0] * len(values)
        norm2 = 0.0
        for d, v in enumerate(b.tolist()):
            if v != 0.0:
                row = features_t[d]
                for i in range(len(expected)):
                    expected[i] += v * row[i]
                norm2 += v * v
        assert values == expected
        for a, (s, n) in enumerate(zip(layout.starts.tolist(), layout.sizes.tolist())):
            k = values[s : s + n]
            product = [0.0] * n
            for j in range(n):
                for i in range(n):
                    product[i] += k[j] * cov[s + j][s + i]
            mu = quad = 0.0
            for i in range(n):
                mu += alpha[s + i] * k[i]
            for i in range(n):
                quad += k[i] * product[i]
            assert mean[a] == mu and var[a] == max(norm2 - quad, 0.0)
    assert learner.dictionary_size > 30


def test_packed_blocks_follow_learning_exactly():
    """Learning writes its C̃ changes through to the packed same-action blocks evaluation reads."""
    from policies.gpsarsa import _gpkernels

    learner = run_training(5, n_episodes=30)
    env = np.random.default_rng(11)
    beliefs = belief_like(env, 200, dim=30, rank=6)
    grown = unchanged = 0
    for _ in range(60):
        learner.q_values(beliefs[0])  # evaluation packs the blocks if they are stale
        size = learner.dictionary_size
        length = int(env.integers(1, 8))
        learner.learn_episode(beliefs[env.integers(0, 200, length)], env.integers(0, 16, length), -np.ones(length))
        if learner.dictionary_size == size:
            unchanged += 1
            layout = learner._layout
            fresh = np.empty_like(learner._packed)
            _gpkernels.pack_blocks(learner._cov, layout.starts, layout.sizes, layout.offsets, fresh)
            assert np.array_equal(learner._packed, fresh)
        else:
            grown += 1
            assert learner._packed is None  # rebuilt for the grown dictionary on the next decision
    assert grown and unchanged > 10


def test_results_do_not_depend_on_the_blas_thread_count():
    threadpool_limits = pytest.importorskip("threadpoolctl").threadpool_limits
    with threadpool_limits(limits=1, user_api="blas"):
        single = run_training(3)
    with threadpool_limits(limits=2, user_api="blas"):
        double = run_training(3)
    for name, array in single.arrays().items():
        assert np.array_equal(array, double.arrays()[name]), name


# ----------------------------------------------------------------------------- long run


@pytest.mark.slow
def test_long_run_stays_numerically_stable_and_matches_the_batch_posterior():
    # 3,000 five-turn episodes (15,000 transitions) of belief-like 305-dimensional features
    # close to a 12-dimensional family: the per-action Gram matrices are ill-conditioned
    # (cond ~ 5e7), the hard case for an incrementally maintained inverse.
    rng = np.random.default_rng(0)
    d, n_actions = 305, 16
    config = GPSarsaConfig(feature_dim=d, n_actions=n_actions)
    learner = GPSarsa(config)
    basis = rng.random((12, d))
    points, ys, residuals = [], [], []
    for episode in range(3000):
        z = rng.dirichlet(np.full(12, 0.3), size=5)
        x = np.clip(z @ basis + 1e-3 * rng.random((5, d)), 0.0, 1.0)
        actions = rng.integers(0, n_actions, 5)
        rewards = -np.ones(5)
        rewards[-1] += 20.0 * (rng.random() < 0.8)
        learner.learn_episode(x, actions, rewards)
        points += list(zip(x, actions))
        ys.append(returns_to_go(rewards, 1.0))
        if episode % 1000 == 999:
            residuals.append(learner.diagnostics())
    for diag in residuals:
        assert diag.covariance_asymmetry == 0.0
        assert diag.inverse_residual < 1e-7
        assert diag.factor_residual < 1e-7
        assert diag.min_dictionary_variance > -1e-9
    # ‖K̃⁻¹K̃ − I‖ is as small as the conditioning allows: within n·cond·eps per block and
    # within 10x of an inverse freshly computed from a Cholesky factorisation of K̃.
    arrays = learner.arrays()
    feats, acts, packed = arrays["features"], arrays["actions"], arrays["inverse_cholesky"]
    offset = 0
    for action in range(n_actions):
        block = feats[acts == action]
        n = len(block)
        inv_chol = packed[offset : offset + n * n].reshape(n, n)
        offset += n * n
        gram = block @ block.T
        ours = np.abs(inv_chol.T @ inv_chol @ gram - np.eye(n)).max()
        lower = np.linalg.cholesky(gram)
        fresh_inv = np.linalg.solve(lower.T, np.linalg.solve(lower, np.eye(n)))
        fresh = np.abs(fresh_inv @ gram - np.eye(n)).max()
        assert ours <= n * np.linalg.cond(gram) * np.finfo(float).eps
        assert ours <= 10 * fresh + 1e-12
    # α̃ and C̃ after 15,000 recursive updates agree with the closed form
    # α̃ = (AᵀA K̃ + σ²I)⁻¹ Aᵀ y,  C̃ = (AᵀA K̃ + σ²I)⁻¹ AᵀA  (push-through of the batch form).
    o_feats, o_acts, a_mat, gram, _ = ald_oracle(points, n_actions, config.nu)
    np.testing.assert_array_equal(feats, o_feats)
    np.testing.assert_array_equal(acts, o_acts)
    ata = a_mat.T @ a_mat
    system = ata @ gram + config.sigma**2 * np.eye(len(gram))
    alpha = np.linalg.solve(system, a_mat.T @ np.concatenate(ys))
    cov = np.linalg.solve(system, ata)
    np.testing.assert_allclose(arrays["alpha"], alpha, rtol=0, atol=1e-6 * np.abs(alpha).max())
    np.testing.assert_allclose(arrays["covariance"], cov, rtol=0, atol=1e-6 * np.abs(cov).max())
    q_ours, q_batch = a_mat @ gram @ arrays["alpha"], a_mat @ gram @ alpha
    np.testing.assert_allclose(q_ours, q_batch, rtol=0, atol=1e-7 * np.abs(q_batch).max())


def test_act_and_learn_with_evaluations_equal_the_checked_methods():
    # act() returns the evaluation a decision computed; learn() with them (current, or stale
    # because another episode grew the dictionary since) gives exactly what learn_episode gives.
    from policies.gpsarsa.values import Episode

    rng = np.random.default_rng(11)
    beliefs = sparse_beliefs(rng, 20, 12, 4)
    fast, slow = (GPSarsa(GPSarsaConfig(feature_dim=12, n_actions=3)) for _ in range(2))
    for episode in range(25):
        length = int(rng.integers(1, 7))
        x = beliefs[rng.integers(0, 20, length)]
        decisions = [fast.act(b, None, np.random.default_rng(episode), None) for b in x]
        actions = [d.action for d in decisions]
        assert actions == [slow.select_action(b, rng=np.random.default_rng(episode)) for b in x]
        rewards = rng.normal(size=length)
        if episode % 5 == 4:  # another episode first: the evaluations go stale
            other = beliefs[rng.integers(0, 20, 3)], [0, 1, 2], rng.normal(size=3)
            fast.learn(Episode(*other))
            slow.learn_episode(*other)
        fast.learn(Episode(x, actions, rewards, tuple(d.evaluation for d in decisions)))
        slow.learn_episode(x, actions, rewards)
        for name, value in fast.arrays().items():
            assert value.tobytes() == slow.arrays()[name].tobytes(), name


def test_act_checks_what_it_cannot_trust():
    from policies.gpsarsa.values import Episode

    learner = GPSarsa(GPSarsaConfig(feature_dim=2, n_actions=3))
    with pytest.raises(ValueError, match=r"features must have shape \(2,\)"):
        learner.act(np.zeros(3), None, None, 0.0)
    with pytest.raises(ValueError, match="mask excludes every action"):
        learner.act(np.zeros(2), np.zeros(3, dtype=bool), None, 0.0)
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator when scale > 0"):
        learner.act(np.zeros(2), None, None)
    assert learner.act([1.0, 0.0], [0, 1, 1], None, 0.0).action == 1  # array-likes go through the checks
    with pytest.raises(ValueError, match="evaluations must be given for all 2 turns or none, got 1"):
        learner.learn(Episode(np.eye(2), [0, 1], [1.0, 2.0], (learner.act(np.ones(2), None, None, 0).evaluation,)))
