"""An experiment of one reward model end to end: every analysis one reward allows, and the report says what it cannot."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd
import pytest

from simscore.app.cli import main
from simscore.app.experiment.config import ExperimentConfig
from simscore.app.experiment.sections import HeldOutConfig
from simscore.app.runner import run_experiment
from tests.simscore.app.experiments import TINY

ONE = dataclasses.replace(
    TINY, name="one", rewards=("ts",), measures=("tmr", "dmr", "cer", "cmr", "bleu4"),
    held_out=HeldOutConfig(dialogues=2, graph_dialogues=4, n_permutations=200),
)
NOT_ASSESSED = "not assessed: one reward model in this run (ts)"


@pytest.fixture(scope="module")
def one_reward(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("one")
    run_experiment(ONE, out, n_jobs=1, progress=False)
    return out


def _section(text: str, heading: str) -> str:
    start = text.index(f"## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start:] if end < 0 else text[start:end]


def test_the_configuration_of_one_reward_model_is_valid():
    assert ExperimentConfig.from_dict({"training": {"rewards": ["ts"]}}).rewards == ("ts",)


@pytest.mark.slow
def test_every_analysis_but_the_reward_models_runs(one_reward):
    out = one_reward
    tables = sorted(p.stem for p in out.glob("*.csv"))
    assert tables == ["behaviour_map", "behaviour_map_clusters", "behaviour_map_groups", "behaviour_map_policies",
                      "chance", "checkpoint_plateau", "consequences", "contexts", "convergence", "correlation",
                      "first_turn", "flow_graph", "flow_strata", "flow_strata_tests", "per_turn", "performance",
                      "policies", "seeds", "sensitivity", "text_at_matching_actions"]
    figures = sorted(p.name for p in (out / "figures").glob("*.png"))
    assert figures == ["behaviour_map.png", "chance.png", "consequences.png", "convergence.png", "convergence_all.png",
                       "correlation.png", "flow_strata.png", "per_turn.png", "performance.png", "seeds.png",
                       "seeds_all.png"]
    # one reward model: the map asks only whether its seeds form a cluster (no "trained runs" beside another's)
    assert set(pd.read_csv(out / "behaviour_map_groups.csv")["group"]) == {"ts seeds"}
    # one reward model: no reward-model pairs among the consequences
    consequences = pd.read_csv(out / "consequences.csv")
    assert list(dict.fromkeys(consequences["comparison"])) == ["convergence", "seeds", "random"]
    assert set(consequences["context_set"]) == {"col-ts"}
    for name in ("convergence", "seeds", "chance"):
        assert set(pd.read_csv(out / f"{name}.csv")["reward"]) == {"ts"}
    assert set(pd.read_csv(out / "per_turn.csv")["group"]) == {"seed pairs (final checkpoint)"}
    assert set(pd.read_csv(out / "flow_strata.csv")["comparison"]) == {"seeds", "chance"}
    assert set(pd.read_csv(out / "sensitivity.csv")["analysis"]) == {"seeds"}
    assert set(pd.read_csv(out / "text_at_matching_actions.csv")["analysis"]) == {"convergence", "seeds"}


@pytest.mark.slow
def test_the_report_and_the_findings_say_what_one_reward_model_allows(one_reward, capsys, figures_off):
    text = (one_reward / "report.md").read_text(encoding="utf-8")
    assert f"| (5) reward models ≈ seeds | — | {NOT_ASSESSED} | — | — | — |" in text
    assert ("- **(5) Not assessed.** Policies trained with different reward models differ about as much as a change "
            "of seed, a little more (Tables 3 and 4). Not assessed: one reward model in this run (ts).") in text
    assert _section(text, "Reward models (paper's Table 3 and Figure 5)") == (
        "## Reward models (paper's Table 3 and Figure 5)\n\nNot assessed: one reward model in this run (ts). Comparing "
        "reward models needs runs of two (`rewards = [\"ts\", \"iq\"]` under `[training]`).\n")
    assert f"- Reward models: {NOT_ASSESSED}." in _section(text, "Seen and unseen conversation flows")
    for heading in ("Absolute performance (paper's Table 1)", "Convergence (paper's Table 2)",
                    "Seeds (paper's Table 4 and Figure 3)", "Per turn (paper's Figure 4)",
                    "Correlation between measures (paper's Figure 6)", "Chance level",
                    "Text measures where the actions match (paper's Table 2)"):
        assert "Not assessed" not in _section(text, heading), heading
    assert "C_col contexts, both reward models" not in text  # one reward model: its own row says it
    assert "| (1) convergence | col/ts |" in text and "| (3) seeds differ | col/ts |" in text
    explained = (one_reward / "explain" / "explain.md").read_text(encoding="utf-8")
    absent = "Not assessed: one reward model in this run (ts)."
    for heading in ("3. Is the seed difference smaller than the reward-model difference?",
                    "4. Where do the reward models differ?", "5. Why?"):
        assert _section(explained, heading).strip() == f"## {heading}\n\n{absent}"
    assert "In short, no paired test (one reward model only)." in text
    # everything in the report derives from the saved tables
    assert main(["report", str(one_reward)]) == 0
    capsys.readouterr()
    assert (one_reward / "report.md").read_text(encoding="utf-8") == text
