"""The ConvLab two-environment workflow end to end, with ``examples/convlab_answer_states.py``.

simscore's side (collect from ConvLab-3 unified data, export the states) runs in this process;
the ConvLab side runs the example script in a subprocess where simscore, contexts and policies
cannot be imported, with a fake ``convlab`` policy and NLG (:mod:`tests.policies.fake_convlab`);
the answers are read back and compared with the same policy run in-process by ``ConvLabPolicy``.
"""

from __future__ import annotations

import ast
import json
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

from contexts import ContextSet
from policies import ConvLabPolicy, LoggedPolicy
from simscore import Act, Responses, compare
from simscore.app.cli import main
from simscore.policy import run_policy
from simscore.responses_csv import read_responses
from tests.policies.fake_convlab import RuleBot, TemplateNLG

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "examples" / "convlab_answer_states.py"
#: Runs the script as __main__ with the project's packages made unimportable.
BLOCKED = (
    "import runpy, sys\n"
    "for name in ('simscore', 'contexts', 'policies'):\n"
    "    sys.modules[name] = None\n"
    "sys.argv = sys.argv[1:]\n"
    "runpy.run_path(sys.argv[0], run_name='__main__')\n"
)


def _convlab_side(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", BLOCKED, str(SCRIPT), *argv],
        capture_output=True, text=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        timeout=120,
    )


@pytest.fixture()
def states(tmp_path, convlab_dialogues, capsys):
    """simscore's side: C_col from ConvLab-3 unified data, exported as ConvLab-2 states."""
    data = tmp_path / "dialogues.json"
    data.write_text(json.dumps(convlab_dialogues), encoding="utf-8")
    contexts = tmp_path / "C_col.jsonl"
    assert main(["contexts", "collect", "--convlab", str(data), "--out", str(contexts)]) == 0
    states = tmp_path / "states.jsonl"
    assert main(["contexts", "export", "--format", "convlab2", str(contexts), "--out", str(states)]) == 0
    capsys.readouterr()
    return contexts, states


def test_the_script_imports_nothing_of_simscore():
    tree = ast.parse(SCRIPT.read_text(encoding="utf-8"))
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    assert not imported & {"simscore", "contexts", "policies", "tests"}
    assert imported <= set(sys.stdlib_module_names) | {"numpy"}


def test_two_environment_round_trip(tmp_path, states, capsys):
    contexts_file, states_file = states
    answers = tmp_path / "rule.jsonl"

    def script_argv(out, seed="3"):
        return [str(states_file), "--out", str(out), "--seed", seed, "--name", "rule",
                "--policy", "tests.policies.fake_convlab:RuleBot", "--nlg", "tests.policies.fake_convlab:TemplateNLG",
                "--nlg-kwargs", '{"is_user": false}']

    argv = script_argv(answers)
    done = _convlab_side(*argv)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"wrote 5 answers of rule to {answers}\n"
    # deterministic: the same file again
    first = answers.read_text(encoding="utf-8")
    assert _convlab_side(*argv).returncode == 0
    assert answers.read_text(encoding="utf-8") == first
    # read back as simscore responses, with the script's provenance
    logged = LoggedPolicy.from_file(answers)
    assert logged.name == "rule" and len(logged) == 5
    assert logged.provenance["state_format"] == "convlab2" and logged.provenance["reseed"] == 3
    assert logged.provenance["contexts"]["content_hash"] == ContextSet.read_jsonl(contexts_file).content_hash
    header, *lines = (json.loads(line) for line in first.splitlines())
    assert header == {
        "format": "simscore-responses", "version": 1, "policy": "rule",
        "provenance": {
            "adapter": "convlab-script", "policy_class": "tests.policies.fake_convlab:RuleBot", "policy_kwargs": {},
            "nlg": "tests.policies.fake_convlab:TemplateNLG", "state_format": "convlab2", "domain": "restaurant",
            "reseed": 3, "states_file": str(states_file), "contexts": logged.provenance["contexts"],
        },
    }
    assert [line["context_id"] for line in lines] == list(ContextSet.read_jsonl(contexts_file).ids)
    # the same policy, seed and NLG run in-process give exactly the same responses
    contexts = ContextSet.read_jsonl(contexts_file)
    in_process = run_policy(
        ConvLabPolicy(RuleBot(), state_format="convlab2", seed=3, nlg=TemplateNLG().generate, name="rule"), contexts
    )
    assert dict(logged.responses) == dict(in_process)
    assert dict(run_policy(logged, contexts)) == dict(in_process)
    for line in lines:  # the raw prediction is kept next to the act string
        assert Act.parse(line["action"]) == Act.from_convlab(line["convlab_acts"])
    # and the command line compares the two files, one of them CSV
    in_process_file = tmp_path / "in_process.jsonl"
    in_process.to_jsonl(in_process_file)
    csv_answers = tmp_path / "rule.csv"
    assert _convlab_side(*script_argv(csv_answers)).returncode == 0
    assert dict(read_responses(csv_answers)) == dict(in_process)
    assert main(["compare", str(csv_answers), str(in_process_file), "--measures", "tmr,dmr,bleu4", "--score-only"]) == 0
    assert capsys.readouterr().out == "1.0\n1.0\n1.0\n"
    # another seed answers differently (the bot draws from random), and is compared as such
    other = tmp_path / "other.jsonl"
    assert _convlab_side(*script_argv(other, seed="4")).returncode == 0
    assert compare(Responses.read_jsonl(other), in_process, ["tmr"]).mean("tmr") < 1.0


def test_the_convlab_side_explains_its_errors(tmp_path, states):
    contexts_file, states_file = states
    flat = tmp_path / "flat.jsonl"
    assert main(["contexts", "export", "--format", "convlab3", str(contexts_file), "--out", str(flat)]) == 0
    out = tmp_path / "answers.jsonl"
    done = _convlab_side(str(flat), "--out", str(out), "--policy", "tests.policies.fake_convlab:RuleBot")
    assert done.returncode == 2
    assert done.stderr.startswith("convlab_answer_states: error: context 'col/camrest/camrest-test-0/1': predict failed")
    assert "KeyError('semi')" in done.stderr and "--format convlab2" in done.stderr
    assert not out.exists()
    for argv, message in (
        (["--policy", "convlab.policy.rule.multiwoz:RulePolicy"], "cannot import 'convlab.policy.rule.multiwoz'"),
        (["--policy", "tests.policies.fake_convlab"], "must be given as module.path:Class"),
        (["--policy", "tests.policies.fake_convlab:Nothing"], "has no class 'Nothing'"),
        (["--policy", "tests.policies.fake_convlab:RuleBot", "--policy-kwargs", "[1]"], "must be a JSON object"),
    ):
        done = _convlab_side(str(states_file), "--out", str(out), *argv)
        assert done.returncode == 2 and message in done.stderr, done.stderr
    done = _convlab_side(str(contexts_file), "--out", str(out), "--policy", "tests.policies.fake_convlab:RuleBot")
    assert done.returncode == 2 and "line 1: not a states file" in done.stderr


@pytest.mark.parametrize(
    "acts",
    [
        [],
        [["Inform", "Restaurant", "Food", "thai"], ["Request", "Restaurant", "Area", "?"]],
        [["bye", "general", "none", "none"], ["welcome", "general", "none", ""]],
        [["Inform", "Restaurant", "Name", "christ's college"], ["Inform", "Restaurant", "Addr", 'the "old" mill (b), x=y']],
        [["Inform", "Restaurant", "Name", " spaced "], ["Inform", "Restaurant", "Name", "back\\slash"]],
        [["inform", "restaurant", "price range", "cheap"], ["inform", "restaurant", "price range", "cheap"]],
        [["Recommend", "Hotel", "Stars", "4"], ["Inform", "Hotel", "Choice", ""], ["NoOffer", "Hotel", "none", "none"]],
    ],
)
def test_the_hand_written_act_string_is_simscores(acts):
    script = runpy.run_path(str(SCRIPT))
    expected = Act.from_convlab(acts) if acts else Act("none")
    assert Act.parse(script["act_string"](acts)) == expected
    assert Act.parse(script["act_string"](acts), strict=True) == expected


def test_the_hand_written_seed_is_simscores():
    from policies.seeding import context_seed

    script = runpy.run_path(str(SCRIPT))
    for seed, context_id in ((0, "c1"), (3, "col/camrest/camrest-test-0/1"), (12345, "gen/area=0.4/…")):
        assert script["context_seed"](seed, context_id) == context_seed(seed, context_id)
