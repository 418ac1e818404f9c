"""The GP-SARSA belief feature vector: layout, values, database flags."""

from __future__ import annotations

import numpy as np
import pytest

from contexts.belief import BeliefState
from contexts.domain import DISCOURSE_ACTS, METHODS, REQUESTABLE, default_domain
from policies.sim.features import belief_features, feature_names, feature_size

DOMAIN = default_domain()
NAMES = feature_names(DOMAIN)


def block(x: np.ndarray, prefix: str) -> list[float]:
    return [float(v) for v, name in zip(x, NAMES) if name.startswith(prefix)]


def test_size_and_names():
    n_food = len(DOMAIN.ontology.informable["food"])
    n_name = len(DOMAIN.ontology.informable["name"])
    # PyDial: 2 history flags and 25 database flags, each as the pair [x, 1 - x]
    expected = 7 + 6 + 2 * 9 + (1 + 5 + 1) + (1 + 3 + 1) + (1 + n_food + 1) + (1 + n_name + 1) + 2 * (2 + 25)
    assert feature_size(DOMAIN) == expected == len(NAMES) == 302
    assert len(set(NAMES)) == len(NAMES)


def test_layout_values():
    b = BeliefState(
        slots={"area": {"north": 0.2, "south": 0.5, "dontcare": 0.1}, "food": {"thai": 1.0}},
        method={"byconstraints": 0.7, "byname": 0.3},
        discourse_act={"thankyou": 1.0},
        requested={"phone": 0.25},
        last_offered="the amber spoon",
        offer_happened=True,
        last_informed_no_venue=False,
        last_act_offered=True,
    )
    x = belief_features(b, DOMAIN)
    assert x.dtype == np.float64 and x.shape == (302,)
    assert x[:7].tolist() == [float(d == "thankyou") for d in DISCOURSE_ACTS]
    assert x[7:13].tolist() == pytest.approx([{"byconstraints": 0.7, "byname": 0.3}.get(m, 0.0) for m in METHODS])
    assert block(x, "requested[phone]") == [0.25] and block(x, "not_requested[phone]") == [0.75]
    assert block(x, "requested[addr]") == [0.0] and block(x, "not_requested[addr]") == [1.0]
    # P(none) then every other value sorted descending (names dropped)
    assert block(x, "area:") == pytest.approx([0.2, 0.5, 0.2, 0.1, 0.0, 0.0, 0.0])
    assert block(x, "pricerange:") == [1.0, 0.0, 0.0, 0.0, 0.0]
    assert block(x, "food:")[:3] == [0.0, 1.0, 0.0]
    # PyDial's offerHappened (the last act offered) and hist_lastActionInformNone (a venue was
    # offered since the last "no venue"), each as [x, 1 - x]
    assert block(x, "history:") == [1.0, 0.0] and block(x, "not_history:") == [0.0, 1.0]
    since = BeliefState(slots=b.slots, offered_since_no_venue=("the amber spoon",))
    assert block(belief_features(since, DOMAIN), "history:") == [0.0, 1.0]
    # the sticky offer_happened and last_informed_no_venue are not features (PyDial's are not either)
    other = BeliefState(slots=b.slots, method=b.method, discourse_act=b.discourse_act, requested=b.requested,
                        last_offered="the amber spoon", last_act_offered=True)
    assert (belief_features(other, DOMAIN) == x).all()
    assert len(REQUESTABLE) * 2 == len(block(x, "requested[")) + len(block(x, "not_requested["))


def test_database_flags():
    # accepted: food=thai (1.0), pricerange=cheap (0.9); area=north (0.1) is below 1/4.9
    b = BeliefState(slots={"food": {"thai": 1.0}, "pricerange": {"cheap": 0.9}, "area": {"north": 0.1}})
    x = belief_features(b, DOMAIN)
    assert DOMAIN.count({"food": "thai"}) == 3 and DOMAIN.count({"food": "thai", "pricerange": "cheap"}) == 2
    # k=1: thai -> 3 venues (2-4), prices differ -> discriminable
    assert block(x, "db:k1:") == [0.0, 0.0, 1.0, 0.0, 1.0]
    # k=2: thai+cheap -> 2 venues, both in the centre -> not discriminable
    assert block(x, "db:k2:") == [0.0, 0.0, 1.0, 0.0, 0.0]
    # fewer than k accepted: PyDial's sorted(...)[:k] takes both, so the k=2 block repeats
    assert block(x, "db:k3:") == block(x, "db:k4:") == block(x, "db:k5:") == block(x, "db:k2:")
    assert [1.0 - v for v in block(x, "db:k3:")] == block(x, "not_db:k3:")
    b = BeliefState(slots={"area": {"north": 1.0}, "food": {"indian": 0.9}, "pricerange": {"cheap": 0.8}})
    x = belief_features(b, DOMAIN)
    assert block(x, "db:k1:") == [0.0, 0.0, 0.0, 1.0, 1.0]  # north: 11+ venues, differ
    assert block(x, "db:k2:") == [0.0, 1.0, 0.0, 0.0, 0.0]  # north indian: 1 venue
    assert block(x, "db:k3:") == [1.0, 0.0, 0.0, 0.0, 0.0]  # + cheap: none


def test_all_values_in_unit_interval_and_initial_belief():
    x = belief_features(BeliefState.initial(DOMAIN.ontology), DOMAIN)
    assert ((x >= 0) & (x <= 1)).all()
    assert x[:7].tolist() == [float(d == "none") for d in DISCOURSE_ACTS]
    # no offer, nothing offered since "no venue"; no accepted value: every block is "all
    # venues (more than 4), discriminable"
    assert x[-54:-50].tolist() == [0.0, 1.0, 0.0, 1.0]
    assert x[-50:].tolist() == [0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0] * 5


def test_memoised_database_flags_equal_fresh_ones():
    # The flags are memoised by the accepted (slot, value) pairs in order; compare with a
    # fresh computation on the beliefs of simulated dialogues (many share accepted values).
    from policies.handcrafted import RandomPolicy
    from policies.sim.domain_cache import domain_cache
    from policies.sim.features import BeliefFeatures, database_flags
    from policies.sim.simulation import run_dialogues

    space = domain_cache(DOMAIN).space
    beliefs: list[BeliefState] = []

    class Recorder(RandomPolicy):
        def choose(self, belief, mask):
            beliefs.append(belief)
            return super().choose(belief, mask)

    run_dialogues(Recorder(seed=3), 30, seed=3)
    accepted = {tuple((s, v) for s, v, _ in space.summarise(b).accepted) for b in beliefs}
    assert len(beliefs) > 3 * len(accepted) and max(map(len, accepted)) >= 2
    extractor = BeliefFeatures(DOMAIN, space=space)  # remembers the flags by accepted values
    for b in beliefs:
        assert extractor(b)[-50::2].tolist() == database_flags(space, space.summarise(b))


def test_memoised_features_and_masks_equal_fresh_ones():
    # The vector after the requested slots is memoised by (slots, history flags) and the
    # summary by slots; along simulated dialogues (whose beliefs share slots mappings) both
    # must give what a computation with empty memos gives.
    from policies.handcrafted import RandomPolicy
    from policies.sim.domain_cache import domain_cache
    from policies.sim.features import BeliefFeatures
    from policies.sim.simulation import run_dialogues
    from policies.sim.summary import SummaryActions

    extractor = BeliefFeatures(DOMAIN, space=domain_cache(DOMAIN).space)  # as a GP-SARSA policy owns one
    beliefs: list[BeliefState] = []
    seen: list[tuple[np.ndarray, np.ndarray]] = []

    class Recorder(RandomPolicy):
        def choose(self, belief, mask):
            beliefs.append(belief)
            seen.append((extractor(belief), mask))
            return super().choose(belief, mask)

    run_dialogues(Recorder(seed=4), 40, seed=4)
    assert len({id(b.slots) for b in beliefs}) < len(beliefs) // 2
    for belief, (x, mask) in zip(beliefs, seen):
        # belief_features and a new SummaryActions remember nothing yet
        assert belief_features(belief, DOMAIN).tobytes() == x.tobytes()
        assert SummaryActions(DOMAIN).mask(belief).tolist() == mask.tolist()
