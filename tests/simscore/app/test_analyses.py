"""simscore.app.experiment.analyses: the experiment's scoring steps on the synthetic experiment (known answers)."""

from __future__ import annotations

import pandas as pd

from simscore import Act, Response, Responses
from simscore import analysis as an
from simscore.app.experiment.analyses import RunResponses, SetResponses, assemble_tables, score_set
from simscore.app.experiment.folder import RunId
from simscore.measures import resolve_measures
from tests.simscore.synthetic import COL, IDS, PERFORMANCE_RECORDS, TURNS, checkpoints, responses

MEASURES = resolve_measures(["tmr", "dmr"])
SETTINGS = an.Bootstrap(n_resamples=60, confidence=0.5, seed=7)


class _Bar:
    def update(self, n: int = 1) -> None:
        self.n = getattr(self, "n", 0) + n

    def set_postfix_str(self, text: str) -> None:
        pass


def _col() -> SetResponses:
    runs = tuple(RunResponses(RunId(reward, int(run[-1])), checkpoints(COL, reward, run), responses(COL[(reward, run)][3]))
                 for reward, run in COL)
    random = Responses({cid: Response(Act.parse("bye()")) for cid in IDS}, policy="random")
    metadata = pd.DataFrame.from_dict(TURNS, orient="index").rename_axis("context_id")
    return SetResponses("col", metadata, runs, random)


def test_every_analysis_of_a_set_uses_the_one_bootstrap_setting():
    bar = _Bar()
    scores = score_set(_col(), MEASURES, final=3, bootstrap=SETTINGS, bar=bar)
    assert bar.n == 2 * 4 + 2 + 1  # convergence per run and chance per run, seeds per reward, reward models
    assert [r.table["run"].iloc[0] for r in scores.convergence] == ["ts-1", "ts-2", "iq-1", "iq-2"]
    seed_pairs = [c for r in scores.seeds for c in r.select(checkpoint=3)]
    expected = an.per_turn(seed_pairs, group="seed pairs (final checkpoint)", bootstrap=SETTINGS)
    pd.testing.assert_frame_equal(scores.per_turn[0], expected)
    assert not expected.equals(an.per_turn(seed_pairs, group="seed pairs (final checkpoint)"))  # not the defaults
    assert scores.first_turn is not None and set(scores.first_turn["group"]) == {"ts-ts", "iq-iq", "ts-iq"}
    pairs = {k: c for r in scores.seeds for k, c in r.comparisons.items()}
    pairs.update((k, c) for k, c in scores.reward_models.comparisons.items() if k.reward_a != k.reward_b)
    pd.testing.assert_frame_equal(scores.first_turn, an.first_turn(pairs, bootstrap=SETTINGS))
    tables = assemble_tables([scores], MEASURES, pd.DataFrame(PERFORMANCE_RECORDS), SETTINGS)
    assert list(tables) == ["performance", "convergence", "reward_models", "correlation", "chance", "seeds",
                            "per_turn", "first_turn"]
    ts = tables["seeds"].query("reward == 'ts' and checkpoint == 3 and measure == 'tmr'")["mean"]
    assert ts.tolist() == [0.2]  # ts-1 and ts-2 agree on contexts 6-9 of 20 at checkpoint 3


def test_a_generated_set_has_no_turn_tables():
    data = _col()
    gen = SetResponses("gen", data.metadata, data.runs, data.random)
    scores = score_set(gen, MEASURES, final=3, bootstrap=SETTINGS, bar=_Bar())
    assert scores.per_turn == () and scores.first_turn is None
