"""simscore.integrations.sb3: SB3Policy and the behaviour-convergence callback on PPO, A2C, DQN, MaskablePPO."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from simscore.errors import MissingDependencyError

ROOT = Path(__file__).resolve().parents[3]


def test_missing_sb3_names_the_extra():
    code = (
        "import sys\n"
        "sys.modules['stable_baselines3'] = None\n"
        "import simscore.integrations.sb3 as m\n"
        "try:\n"
        "    m.BehaviourConvergenceCallback\n"
        "except ImportError as e:\n"
        "    print(type(e).__name__, '|', e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert out.startswith("MissingDependencyError |") and 'pip install "simscore-dialogue[sb3]"' in out


def test_require_sb3_error_type():
    from simscore.integrations.sb3 import require_sb3

    with pytest.raises(MissingDependencyError, match=r"needs no-such-package.*simscore-dialogue\[sb3\]"):
        require_sb3("no_such_package")


sb3 = pytest.importorskip("stable_baselines3")
sb3_contrib = pytest.importorskip("sb3_contrib")
gymnasium = pytest.importorskip("gymnasium")

from contexts import generate_grid  # noqa: E402
from contexts.generate import GridSpec  # noqa: E402
from simscore import run_policy  # noqa: E402
from simscore.integrations.gym import ENV_ID  # noqa: E402
from simscore.integrations.sb3 import BehaviourConvergenceCallback, SB3Policy  # noqa: E402
from simscore.stats import Bootstrap  # noqa: E402

SMALL = generate_grid(GridSpec(levels=(0.0, 1.0)))  # 2**3 * 6 = 48 contexts
ALGORITHMS = {
    "PPO": lambda env: sb3.PPO("MlpPolicy", env, n_steps=64, batch_size=32, n_epochs=1, seed=0),
    "A2C": lambda env: sb3.A2C("MlpPolicy", env, n_steps=16, seed=0),
    "DQN": lambda env: sb3.DQN("MlpPolicy", env, learning_starts=100, train_freq=16, buffer_size=1000, seed=0),
    "MaskablePPO": lambda env: sb3_contrib.MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=32, n_epochs=1, seed=0),
}


@pytest.fixture(scope="module", params=list(ALGORITHMS))
def model(request):
    return ALGORITHMS[request.param](gymnasium.make(ENV_ID))


class CountingPredict:
    def __init__(self, model):
        self.model, self.calls = model, []
        self._predict = model.predict

    def __call__(self, observation, **kwargs):
        self.calls.append((np.shape(observation), kwargs))
        return self._predict(observation, **kwargs)


def test_sb3_policy_answers_a_context_set_in_one_predict(model, monkeypatch):
    counter = CountingPredict(model)
    monkeypatch.setattr(model, "predict", counter)
    policy = SB3Policy(model)
    masked = type(model).__name__ == "MaskablePPO"
    assert policy.use_masks is masked and policy.name == type(model).__name__.lower()
    responses = run_policy(policy, SMALL)
    assert len(counter.calls) == 1 and counter.calls[0][0] == (48, 302)
    assert counter.calls[0][1]["deterministic"] is True and ("action_masks" in counter.calls[0][1]) is masked
    one = SMALL[SMALL.ids[5]]
    assert policy.respond(one) == responses[one.id]  # the batch and the single path agree
    assert all(r.action is not None and r.text for r in responses.values())
    assert responses.provenance["algorithm"] == type(model).__name__ and "num_timesteps" in responses.provenance
    if masked:  # masks from the contexts' beliefs: no masked action is ever chosen
        actions = policy.actions(SMALL)
        assert all(policy.space.mask(c.belief)[a] for c, a in zip(SMALL, actions))


def test_sb3_policy_evaluates_in_dialogues(model):
    from policies import run_dialogues

    result = run_dialogues(SB3Policy(model, text=False), 2, seed=0)
    assert len(result) == 2


def test_sb3_policy_rejects_other_models():
    cartpole = sb3.PPO("MlpPolicy", gymnasium.make("CartPole-v1"), n_steps=64)
    with pytest.raises(ValueError, match="observation space has shape \\(4,\\), expected \\(302,\\)"):
        SB3Policy(cartpole)
    ppo = ALGORITHMS["PPO"](gymnasium.make(ENV_ID))
    with pytest.raises(ValueError, match="takes no action_masks"):
        SB3Policy(ppo, use_masks=True)
    with pytest.raises(TypeError, match="predict"):
        SB3Policy(object())


def _learn(name, steps, tmp_path=None, **kwargs):
    model = ALGORITHMS[name](gymnasium.make(ENV_ID))
    if tmp_path is not None:
        from stable_baselines3.common.logger import configure

        model.set_logger(configure(str(tmp_path), ["csv"]))
    callback = BehaviourConvergenceCallback(SMALL, **{"bootstrap": Bootstrap(n_resamples=100)} | kwargs)
    model.learn(steps, callback=callback)
    return model, callback


def test_callback_stops_after_patience_stable_checks_and_logs(tmp_path):
    model, callback = _learn("PPO", 2000, tmp_path, check_freq=64, threshold=0.0, patience=2, require_change=False)
    assert callback.converged and callback.stopped_at == model.num_timesteps == 129  # snapshots at 1, 65, 129
    history = callback.history()
    assert history["step"].tolist() == [65, 129] and history["stable"].all()
    assert {"tmr", "tmr_ci_low", "tmr_ci_high", "tmr_chance", "dmr", "check_seconds"} <= set(history.columns)
    log = pd.read_csv(tmp_path / "progress.csv")
    assert {"behaviour/tmr", "behaviour/tmr_ci_low", "behaviour/tmr_chance", "behaviour/stable_checks",
            "behaviour/check_seconds"} <= set(log.columns)
    assert log["behaviour/tmr"].dropna().tolist() == history["tmr"].tolist()


@pytest.mark.parametrize("name", ["A2C", "DQN", "MaskablePPO"])
def test_callback_stops_every_algorithm(name):
    model, callback = _learn(name, 3000, check_freq=64, threshold=0.0, patience=2, require_change=False)
    assert callback.stopped_at == model.num_timesteps < 3000


def test_callback_checks_only_after_model_updates():
    _, callback = _learn("DQN", 400, check_freq=16, stop=False)
    assert callback.history()["step"].min() > 100  # nothing changes before learning_starts
    _, callback = _learn("PPO", 320, check_freq=16, stop=False)
    assert callback.history()["step"].tolist() == [65, 129, 193, 257]  # once per rollout of 64 steps


def test_callback_without_stop_or_chance_runs_to_the_end():
    model, callback = _learn("PPO", 200, check_freq=64, threshold=0.0, patience=1, stop=False, chance_seed=None,
                             require_change=False)
    assert model.num_timesteps >= 200 and callback.stopped_at is None and callback.converged
    assert not any(c.endswith("_chance") for c in callback.history().columns)


def test_callback_defaults_to_c_gen():
    model = ALGORITHMS["PPO"](gymnasium.make(ENV_ID))
    callback = BehaviourConvergenceCallback(check_freq=64, bootstrap=Bootstrap(n_resamples=100))
    model.learn(130, callback=callback)
    assert len(callback.monitor.contexts) == 1296 and len(callback.history()) == 2


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"check_freq": 0}, ValueError, "check_freq must be >= 1, got 0"),
        ({"chance_seed": "x"}, ValueError, "chance_seed must be an int, got str 'x'"),
        ({"measures": ["tmrr"]}, KeyError, "did you mean 'tmr'"),
        ({"threshold": 2.0}, ValueError, "threshold"),
    ],
)
def test_callback_bad_arguments_fail_before_training(kwargs, error, message):
    with pytest.raises(error, match=message):
        BehaviourConvergenceCallback(SMALL, **kwargs)


@pytest.mark.parametrize(
    ("contexts", "kwargs", "error", "message"),
    [
        ([], {}, ValueError, "contexts: the callback needs at least one context, got an empty list"),
        ("SAME", {}, ValueError, "contexts[1]: the id '{id}' appears twice (a snapshot keeps one response per context id)"),
        ([object()], {}, TypeError, "contexts[0] must be a context (an object with a string 'id', e.g. contexts.Context)"),
        (None, {"domain": "restaurant"}, TypeError, "domain must be a contexts.Domain or None, got str 'restaurant'"),
        (None, {"name": ""}, TypeError, "name must be a non-empty string or None, got ''"),
        (None, {"nlg_instance": 3}, TypeError, "nlg_instance must be a non-empty string or None, got 3"),
        (None, {"verbose": "loud"}, ValueError, "verbose must be an int, got str 'loud'"),
        (None, {"bootstrap": {"n_resamples": 100}}, TypeError,
         "BehaviourMonitor(): bootstrap must be a simscore.stats.Bootstrap, got dict"),
    ],
)
def test_callback_refuses_at_construction_what_learn_would_fail_on(contexts, kwargs, error, message):
    if contexts == "SAME":
        first = SMALL.contexts[0]
        contexts, message = [first, first], message.format(id=first.id)
    with pytest.raises(error) as info:
        BehaviourConvergenceCallback(contexts, **kwargs)
    assert str(info.value).startswith(message)


def test_maskable_ppo_finds_the_masks_through_make_vec_env():
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
    from stable_baselines3.common.env_util import make_vec_env

    with pytest.warns(UserWarning, match="render_mode='rgb_array'"):  # make_vec_env asks every env for it
        vec = make_vec_env(f"simscore.integrations.gym:{ENV_ID}", n_envs=2, seed=0)
    assert is_masking_supported(vec)
    vec.reset()
    masks = get_action_masks(vec)
    assert masks.shape == (2, 16) and masks.dtype == bool and masks[:, :3].all()
