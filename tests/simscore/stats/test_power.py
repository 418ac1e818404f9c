"""simscore.stats.power: contexts needed for a paired TMR difference, against the hand calculation and a simulated McNemar test.

(statsmodels, whose power functions would be the other oracle, is not among the environment's packages.)
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from simscore.errors import MissingValueWarning
from simscore.stats.power import contexts_needed, design_effect, detectable_difference, tmr_power

Z_975, Z_80 = 1.959963984540054, 0.8416212335729143  # Φ⁻¹(0.975), Φ⁻¹(0.8)


@pytest.mark.parametrize(
    ("difference", "agreement", "kwargs", "psi", "deff"),
    [
        (0.1, 0.6, {}, 0.6 * 0.5 + 0.5 * 0.4, 1.0),  # ψ = 0.5: 390.08 -> 391
        (0.05, 0.6, {"discordance": 0.2}, 0.2, 1.0),  # 625.55 -> 626
        (0.1, 0.6, {"icc": 0.05, "cluster_size": 7}, 0.5, 1.3),  # 390.08 x 1.3 = 507.1 -> 508
        (-0.1, 0.6, {}, 0.6 * 0.3 + 0.7 * 0.4, 1.0),  # the other comparison agrees more: ψ = 0.46
        (0.2, 0.9, {}, 0.9 * 0.3 + 0.7 * 0.1, 1.0),
    ],
)
def test_contexts_needed_is_connors_formula(difference, agreement, kwargs, psi, deff):
    by_hand = (Z_975 * math.sqrt(psi) + Z_80 * math.sqrt(psi - difference**2)) ** 2 / difference**2 * deff
    n = contexts_needed(difference, agreement, **kwargs)
    assert n == math.ceil(by_hand)
    assert tmr_power(n, difference, agreement, **kwargs) >= 0.8 > tmr_power(n - 1, difference, agreement, **kwargs)


def test_golden_values():
    assert [contexts_needed(0.1, 0.6), contexts_needed(0.05, 0.6, discordance=0.2),
            contexts_needed(0.1, 0.6, icc=0.05, cluster_size=7), contexts_needed(0.1, 0.6, power=0.9, alpha=0.01)] == [
        391, 626, 508, 740]  # the last: (2.575829 √0.5 + 1.281552 √0.49)² / 0.01 = 739.01
    assert design_effect(0.05, 7) == pytest.approx(1.3) and design_effect() == 1.0


def test_the_power_is_that_of_a_simulated_mcnemar_test():
    # 391 contexts, TMRs 0.6 and 0.5 with independent match indicators: P(only the first matches) = 0.3,
    # P(only the second) = 0.2; the asymptotic McNemar test rejects in about 80 % of the samples
    rng = np.random.default_rng(11)
    cells = rng.multinomial(391, [0.3, 0.2, 0.5], size=20_000)
    b, c = cells[:, 0], cells[:, 1]
    rejected = (b - c) ** 2 / np.maximum(b + c, 1) > Z_975**2
    assert np.mean(rejected) == pytest.approx(tmr_power(391, 0.1, 0.6), abs=0.015)


def test_detectable_difference_inverts_the_power():
    assert detectable_difference(391, 0.6) == pytest.approx(0.0999, abs=1e-4)
    d = detectable_difference(1296, 0.6, icc=0.1, cluster_size=11)
    assert tmr_power(1296, d, 0.6, icc=0.1, cluster_size=11) == pytest.approx(0.8, abs=1e-9)
    assert d > detectable_difference(1296, 0.6)  # clustering costs power
    fixed = detectable_difference(500, 0.6, discordance=0.3)
    assert tmr_power(500, fixed, 0.6, discordance=0.3) == pytest.approx(0.8, abs=1e-9)


def test_too_few_contexts_detect_nothing():
    with pytest.warns(MissingValueWarning, match="5 contexts detect no TMR difference below agreement 0.6"):
        assert math.isnan(detectable_difference(5, 0.6))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: contexts_needed(0.0, 0.6), "difference must be non-zero with agreement - difference in [0, 1], got "
                                            "difference 0.0 for agreement 0.6"),
        (lambda: contexts_needed(0.7, 0.6), "difference must be non-zero with agreement - difference in [0, 1]"),
        (lambda: contexts_needed(0.1, 1.2), "agreement must be <= 1.0, got 1.2"),
        (lambda: contexts_needed(0.1, 0.6, discordance=0.05), "discordance must be at least |difference| = 0.1"),
        (lambda: contexts_needed(0.1, 0.6, power=1.0), "power must be in (0, 1), got 1.0"),
        (lambda: contexts_needed(0.1, 0.6, alpha=0.0), "alpha must be in (0, 1), got 0.0"),
        (lambda: contexts_needed(0.1, 0.6, icc=1.5), "icc must be <= 1.0, got 1.5"),
        (lambda: contexts_needed(0.1, 0.6, cluster_size=0.5), "cluster_size must be >= 1.0, got 0.5"),
        (lambda: tmr_power(0, 0.1, 0.6), "n_contexts must be >= 1.0, got 0"),
        (lambda: detectable_difference(2.5, 0.6), "n_contexts must be an int, got float 2.5"),
    ],
)
def test_bad_input_is_named(call, message):
    with pytest.raises(ValueError) as info:
        call()
    assert str(info.value).startswith(message)
