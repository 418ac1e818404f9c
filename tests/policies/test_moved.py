"""The old import paths of policies keep working, with a DeprecationWarning naming the new place."""

from __future__ import annotations

import importlib
import subprocess
import sys
import warnings

import pytest

import policies
from policies._moved import MOVED_MODULES
from tests.test_layering import ROOT

#: The public names of the flat policies package before the rooms (its __all__ then).
OLD_ALL = (
    "ConstantPolicy EchoPolicy CyclicPolicy UniformActPolicy degenerate_policies SUMMARY_ACTIONS MAX_TURNS "
    "SummaryPolicy SummaryActions action_mask master_action belief_features feature_names feature_size "
    "FocusTracker AgendaUser UserGoal UserSimulatorConfig SimulationError TemplateNLG InteractionStats RewardModel "
    "REWARD_MODELS reward_model DomainCache domain_cache SimulationSettings RuleBasedIQ task_success "
    "task_success_reward iq_reward HandcraftedPolicy RandomPolicy DialogueSimulator DialogueOutcome DialogueTrace "
    "SimulationResult run_dialogues simulated_contexts SummaryPolicyAdapter RestaurantSearchEnv GPSarsa "
    "GPSarsaConfig GPSarsaDiagnostics QEstimate GPSarsaPolicy TrainingConfig TrainingResult EvaluationRecord train "
    "evaluate_policy load_checkpoint list_checkpoints CallablePolicy LoggedPolicy ConvLabPolicy ObservationPolicy "
    "observation_for action_mask_for to_convlab_state convlab_acts context_seed reseeded write_convlab_states "
    "read_convlab_states read_responses read_responses_csv write_responses_csv EMPTY_ACT CSV_COLUMNS"
).split()
MOVED_TO_SIMSCORE = {"read_responses", "read_responses_csv", "write_responses_csv", "CSV_COLUMNS"}


def _forget(module: str) -> None:
    sys.modules.pop(module, None)
    parent, _, child = module.rpartition(".")
    vars(sys.modules[parent]).pop(child, None)


def test_every_old_public_name_is_still_importable_from_policies():
    assert len(OLD_ALL) == 70
    # every old name is still there (new ones may have joined), except the four that moved to simscore
    assert set(OLD_ALL) - MOVED_TO_SIMSCORE <= set(policies.__all__)
    assert not MOVED_TO_SIMSCORE & set(policies.__all__)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        for name in policies.__all__:
            assert getattr(policies, name) is not None


@pytest.mark.parametrize("name", sorted(MOVED_TO_SIMSCORE))
def test_names_moved_to_simscore_warn_and_are_the_same_object(name):
    import simscore.responses_csv

    with pytest.warns(DeprecationWarning, match=rf"policies\.{name} is deprecated: it moved to simscore\.responses_csv"):
        old = getattr(policies, name)
    assert old is getattr(simscore.responses_csv, name)


@pytest.mark.parametrize("old", sorted(MOVED_MODULES))
def test_old_module_paths_warn_and_give_the_same_objects(old):
    _forget(old)
    new_places = MOVED_MODULES[old]
    with pytest.warns(DeprecationWarning, match=rf"{old} is deprecated: it moved to {new_places[0]}") as caught:
        module = importlib.import_module(old)
    assert caught[0].filename == __file__  # attributed to the importing code, not to importlib
    assert module.__all__
    for name in module.__all__:
        new = next(importlib.import_module(m) for m in new_places if hasattr(importlib.import_module(m), name))
        assert getattr(module, name) is getattr(new, name), name
    with pytest.raises(AttributeError, match=f"module '{old}' .* has no attribute 'nothing'"):
        module.nothing  # noqa: B018


def test_old_from_imports_work():
    _forget("policies.training")
    with pytest.warns(DeprecationWarning, match="policies.gpsarsa.training"):
        from policies.training import TrainingConfig, train
    from policies.gpsarsa.training import TrainingConfig as new_config
    from policies.gpsarsa.training import train as new_train

    assert TrainingConfig is new_config and train is new_train


@pytest.mark.parametrize(
    ("name", "new"),
    [
        ("ObservationPolicy", "policies.observation"),
        ("observation_for", "policies.sim.observation"),
        ("action_mask_for", "policies.sim.observation"),
        ("read_responses", "simscore.responses_csv"),
        ("write_responses_csv", "simscore.responses_csv"),
        ("CSV_COLUMNS", "simscore.responses_csv"),
    ],
)
def test_names_that_left_policies_adapters(name, new):
    import policies.adapters

    with pytest.warns(DeprecationWarning, match=f"policies.adapters.{name} is deprecated: it moved to {new}"):
        old = getattr(policies.adapters, name)
    assert old is getattr(importlib.import_module(new), name)
    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
        policies.adapters.nothing  # noqa: B018


def test_the_package_itself_uses_no_deprecated_path():
    code = "import policies, contexts, simscore, policies.sim, policies.gpsarsa; from policies import *"
    out = subprocess.run([sys.executable, "-W", "error::DeprecationWarning", "-c", code], capture_output=True, text=True,
                         cwd=ROOT)
    assert out.returncode == 0, out.stderr
