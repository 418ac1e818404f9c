"""Tests of simscore.app.experiment.maps: where a run's checkpoints plateau."""

from __future__ import annotations

import math

import numpy as np

from simscore import Act, Response, Responses
from simscore.analysis.behaviour_map import behaviour_map
from simscore.app.experiment.maps import plateau
from simscore.stats import Bootstrap

ACTS = ["hello()", "bye()", "request(food)", "request(area)", "inform(food=thai)", "inform(area=north)"]


def _checkpoints(changes: list[float], seed: int = 0, n: int = 80) -> dict[str, Responses]:
    """Checkpoints 100, 200, ...: each the one before with a share ``changes[k]`` of its acts drawn anew."""
    rng = np.random.default_rng(seed)
    acts = [ACTS[int(rng.integers(len(ACTS)))] for _ in range(n)]
    out = {}
    for k, change in enumerate(changes):
        acts = [ACTS[int(rng.integers(len(ACTS)))] if rng.random() < change else a for a in acts]
        out[str(100 * (k + 1))] = Responses({f"c{i}": Response(Act.parse(a)) for i, a in enumerate(acts)})
    return out


def test_the_plateau_starts_where_the_checkpoints_stop_changing() -> None:
    """Three checkpoints of large changes, then four of none: the plateau is 400-700, found in every resample."""
    bmap = behaviour_map(_checkpoints([1.0, 0.8, 0.8, 0.8, 0.0, 0.0, 0.0]), ["tmr"], bootstrap=Bootstrap(100))
    found = plateau(bmap, "tmr")
    assert found == {"checkpoints": 7, "first": 100, "last": 700, "start": 400, "size": 4, "height": 0.0,
                     "support": 1.0}


def test_a_final_checkpoint_that_still_changes_is_a_plateau_of_one() -> None:
    """The last checkpoint is drawn anew: it joins no tail of its neighbours before the root."""
    bmap = behaviour_map(_checkpoints([1.0, 0.0, 0.0, 1.0]), ["tmr"], bootstrap=Bootstrap(50))
    found = plateau(bmap, "tmr")
    assert (found["start"], found["size"], found["height"]) == (400, 1, 0.0) and math.isnan(found["support"])
