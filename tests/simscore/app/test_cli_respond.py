"""``simscore respond POLICY CONTEXTS --out FILE`` for every kind of policy, its output contract and errors."""

from __future__ import annotations

import json
import warnings

import pytest

from contexts import ContextSet, GridSpec, generate_grid, import_convlab
from policies import (
    ConvLabPolicy,
    GenerativePolicy,
    HandcraftedPolicy,
    RandomPolicy,
    SummaryPolicyAdapter,
    TemplateNLG,
    TrainingConfig,
    load_checkpoint,
    train,
)
from simscore import Act, Responses, run_policy
from simscore.app.cli import main
from simscore.responses_csv import read_responses_csv
from simscore.samples import SampledResponses, sample_seed
from tests.policies.fake_convlab import RuleBot

POLICY_FILE = '''
from simscore import Response

def ask(context):
    """Act-only: request the food until it is known, then the area."""
    return "request(area)" if context.belief.top("food")[0] != "none" else "request(food)"

class Echo:
    name = "echo"

    def __init__(self, word="hi"):
        self.word = word

    def respond(self, context):
        return Response(text=f"{self.word} {context.id}")

NOT_A_POLICY = 3

def cut_off(context):
    """An act cut off after its intent: an error, never a text."""
    return "inform("

class Needs:
    def __init__(self, path, /, level, *, seed=0):
        self.level = level

    def respond(self, context):
        return Response(text="x")
'''


@pytest.fixture(scope="module")
def grid():
    return generate_grid(GridSpec(levels=(0.0, 1.0)))


@pytest.fixture()
def folder(tmp_path, grid):
    grid.to_jsonl(tmp_path / "C_gen.jsonl")
    (tmp_path / "mypolicies.py").write_text(POLICY_FILE)
    return tmp_path


def respond(*argv: str) -> int:
    return main(["respond", *map(str, argv)])


def _error(capsys) -> str:
    return capsys.readouterr().err


def test_handcrafted_and_random_by_name(folder, grid, capsys):
    assert respond("handcrafted", folder / "C_gen.jsonl", "--out", folder / "hc.jsonl") == 0
    assert "wrote 48 responses of 'handcrafted'" in capsys.readouterr().out
    expected = run_policy(SummaryPolicyAdapter(HandcraftedPolicy()), grid)
    got = Responses.read_jsonl(folder / "hc.jsonl")
    assert dict(got) == dict(expected) and got.provenance == expected.provenance
    assert respond("handcrafted", folder / "C_gen.jsonl", "--out", folder / "named.jsonl", "--name", "rules") == 0
    named = Responses.read_jsonl(folder / "named.jsonl")
    assert named.policy == "rules" and dict(named) == dict(expected)  # the same words under another name
    assert respond("random", folder / "C_gen.jsonl", "--out", folder / "r.jsonl", "--seed", 3, "--quiet") == 0
    assert dict(Responses.read_jsonl(folder / "r.jsonl")) == dict(run_policy(SummaryPolicyAdapter(RandomPolicy(seed=3)), grid))


def test_gpsarsa_run_folder_and_checkpoint(folder, grid, capsys):
    run = folder / "run"
    train(TrainingConfig(reward="ts", seed=1, dialogues=40, every=20, eval_dialogues=5), run)
    assert respond(run, folder / "C_gen.jsonl", "--out", folder / "last.jsonl") == 0
    assert dict(Responses.read_jsonl(folder / "last.jsonl")) == dict(run_policy(load_checkpoint(run), grid))
    assert respond(run, folder / "C_gen.jsonl", "--out", folder / "first.jsonl", "--checkpoint", 20) == 0
    first = Responses.read_jsonl(folder / "first.jsonl")
    assert dict(first) == dict(run_policy(load_checkpoint(run, 20), grid)) and first.provenance["checkpoint"] == 20
    assert respond(run, folder / "C_gen.jsonl", "--out", folder / "x.jsonl", "--checkpoint", 30) == 2
    assert "no checkpoint after 30 dialogues (available: 20, 40)" in _error(capsys)
    assert respond(folder, folder / "C_gen.jsonl", "--out", folder / "x.jsonl") == 2
    assert "a folder, but no GP-SARSA training run (no checkpoints)" in _error(capsys)


def test_python_policies_from_a_file_or_a_module(folder, grid, capsys, monkeypatch):
    contexts = folder / "C_gen.jsonl"
    assert respond(f"{folder / 'mypolicies.py'}:ask", contexts, "--out", folder / "ask.jsonl") == 0
    asked = Responses.read_jsonl(folder / "ask.jsonl")
    assert set(asked.texts()) == {None} and set(map(str, asked.actions())) == {"request(food)", "request(area)"}
    # act-only responses get words with --nlg template, as the policy instance of its name
    assert respond(f"{folder / 'mypolicies.py'}:ask", contexts, "--out", folder / "worded.jsonl", "--nlg", "template") == 0
    worded = Responses.read_jsonl(folder / "worded.jsonl")
    context = grid.contexts[0]
    assert worded[context.id].text == TemplateNLG("ask").realise(worded[context.id].action, context.belief)
    assert worded.provenance["nlg_texts"] == {"nlg": "TemplateNLG('ask')", "count": len(grid)}
    assert respond(f"{folder / 'mypolicies.py'}:ask", contexts, "--out", folder / "w2.jsonl", "--nlg", "template",
                   "--nlg-instance", "shared") == 0
    assert Responses.read_jsonl(folder / "w2.jsonl").provenance["nlg_texts"]["nlg"] == "TemplateNLG('shared')"
    # a class is instantiated (with --policy-kwargs); MODULE:NAME imports from PYTHONPATH
    monkeypatch.syspath_prepend(str(folder))
    assert respond("mypolicies:Echo", contexts, "--out", folder / "echo.jsonl", "--policy-kwargs", '{"word": "yo"}') == 0
    echo = Responses.read_jsonl(folder / "echo.jsonl")
    assert echo.policy == "echo" and echo[context.id].text == f"yo {context.id}"
    for policy, message in [
        ("mypolicies:NOT_A_POLICY", "mypolicies:NOT_A_POLICY is a int, expected a policy (respond)"),
        ("mypolicies:nothing", "mypolicies has no attribute 'nothing'"),
        ("no_such_module_here:x", "cannot import 'no_such_module_here'"),
        ("policies:HandcraftedPolicy", "policies:HandcraftedPolicy is a HandcraftedPolicy, expected a policy"),
        ("mypolicies:2x", "'2x' is not a (dotted) Python name"),
    ]:
        assert respond(policy, contexts, "--out", folder / "x.jsonl") == 2
        assert message in _error(capsys), policy
    assert respond("mypolicies:ask", contexts, "--out", folder / "x.jsonl", "--seed", 1) == 2
    assert "--seed applies to ConvLab-style (predict) policies only" in _error(capsys)
    assert respond("mypolicies:ask", contexts, "--out", folder / "x.jsonl", "--policy-kwargs", "{}") == 2
    assert "--policy-kwargs applies to a class" in _error(capsys)


def test_a_python_policy_returning_a_broken_act_is_an_error(folder, capsys):
    out = folder / "x.jsonl"
    assert respond(f"{folder / 'mypolicies.py'}:cut_off", folder / "C_gen.jsonl", "--out", out) == 2
    assert _error(capsys).splitlines() == [
        "simscore respond: error: callable policy 'cut_off', context 'gen/area=0.0/pricerange=0.0/food=0.0/method=none': "
        "returned string 'inform(' is not a valid act (unbalanced parentheses: missing ')' at position 7); it starts "
        "like an act (intent and '('): return an act that parses, or use kind='text' for prose"]
    assert not out.exists()


@pytest.mark.parametrize(
    ("name", "kwargs", "message"),
    [
        ("Echo", '{"wrod": "yo"}', " has no keyword argument 'wrod'; did you mean 'word'? "
                                   "(it accepts: word)"),
        ("Echo", '{"word": "yo", "colour": 1}', " has no keyword argument 'colour' (it accepts: word)"),
        ("Needs", '{"seed": 1}', ": missing a required argument: 'path' (it accepts: level, seed)"),
        ("Needs", '{"path": "p", "level": 1}', " has no keyword argument 'path' "
                                               "(it accepts: level, seed)"),
    ],
)
def test_unknown_policy_kwargs_are_named_with_the_accepted_ones(folder, capsys, name, kwargs, message):
    policy = f"{folder / 'mypolicies.py'}:{name}"
    assert respond(policy, folder / "C_gen.jsonl", "--out", folder / "x.jsonl", "--policy-kwargs", kwargs) == 2
    assert _error(capsys).splitlines() == [f"simscore respond: error: --policy-kwargs: {policy}{message}"]


def test_an_unknown_convlab_domain_is_refused(folder, capsys):
    with pytest.raises(SystemExit) as info:
        respond("tests.policies.fake_convlab:RuleBot", folder / "C_gen.jsonl", "--out", folder / "x.jsonl",
                "--convlab-domain", "restaurnat")
    assert info.value.code == 2
    assert _error(capsys).splitlines()[-1] == (
        "simscore respond: error: argument --convlab-domain: unknown ConvLab domain 'restaurnat'; did you mean "
        "'restaurant'? (known: attraction, hospital, hotel, police, restaurant, taxi, train)")
    assert not (folder / "x.jsonl").exists()


def test_convlab_policies_through_the_bridge(folder, convlab_dialogues, capsys):
    (folder / "dialogues.json").write_text(json.dumps(convlab_dialogues), encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        contexts = import_convlab(folder / "dialogues.json")
    contexts.to_jsonl(folder / "C_col.jsonl")
    assert respond("tests.policies.fake_convlab:RuleBot", folder / "C_col.jsonl", "--out", folder / "rule.jsonl",
                   "--state-format", "convlab2", "--seed", 0) == 0
    expected = run_policy(ConvLabPolicy(RuleBot(), state_format="convlab2", seed=0), ContextSet.read_jsonl(folder / "C_col.jsonl"))
    got = Responses.read_jsonl(folder / "rule.jsonl")
    assert dict(got) == dict(expected) and got.provenance["reseed"] == 0
    # ConvLab itself is not installed beside simscore: the message points to the two-environment route
    assert respond("convlab.policy.rule.multiwoz:RulePolicy", folder / "C_col.jsonl", "--out", folder / "x.jsonl") == 2
    message = _error(capsys)
    assert "cannot import 'convlab.policy.rule.multiwoz'" in message
    assert "simscore contexts export" in message and "examples/convlab_answer_states.py" in message


@pytest.mark.extra("text")
def test_generative_models_from_their_folder(folder, grid, capsys):
    from examples.tiny_models import write_tiny_model
    from policies import Decoding

    model = write_tiny_model(folder / "tiny")
    contexts = folder / "C_gen.jsonl"
    assert respond(f"hf:{model}", contexts, "--out", folder / "g.jsonl", "--max-new-tokens", 3, "--batch-size", 16) == 0
    expected = run_policy(GenerativePolicy(model, decoding=Decoding(max_new_tokens=3)), grid)
    got = Responses.read_jsonl(folder / "g.jsonl")
    assert dict(got) == dict(expected) and got.provenance["batch_size"] == 16
    assert got.provenance["model_sha256"] == expected.provenance["model_sha256"]
    assert respond(f"hf:{model}", contexts, "--out", folder / "s.jsonl", "--max-new-tokens", 3, "--sample", "--seed", 4,
                   "--top-p", 0.9, "--instruction", "Say something.", "--source", "belief") == 0
    sampled = Responses.read_jsonl(folder / "s.jsonl").provenance
    assert sampled["decoding"]["seed"] == 4 and sampled["decoding"]["top_p"] == 0.9
    assert sampled["template"]["instruction"] == "Say something." and sampled["template"]["source"] == "belief"
    assert respond(f"hf:{model}", contexts, "--out", folder / "a.jsonl", "--max-new-tokens", 2, "--acts") == 0
    assert "simscore respond: warning: tiny: 48 of 48 responses did not parse as an act" in _error(capsys)
    assert Responses.read_jsonl(folder / "a.jsonl").provenance["unparsed_acts"] == 48
    # --samples K: reproducible from the seed (sample k seeded with sample_seed(seed, k)); greedy: copies
    four = grid.select(grid.ids[:4])
    four.to_jsonl(folder / "four.jsonl")
    assert respond(f"hf:{model}", folder / "four.jsonl", "--sample", "--seed", 5, "--samples", 3, "--out",
                   folder / "k.jsonl", "--max-new-tokens", 3) == 0
    drawn = SampledResponses.read_jsonl(folder / "k.jsonl")
    policy = GenerativePolicy(model, decoding=Decoding(max_new_tokens=3, sample=True, seed=5))
    for k in range(3):
        assert dict(drawn.sample(k)) == dict(run_policy(policy.with_seed(sample_seed(5, k)), four))
    assert len({response.text for samples in drawn.values() for response in samples}) > len(drawn)  # they differ
    assert respond(f"hf:{model}", folder / "four.jsonl", "--samples", 2, "--out", folder / "greedy.jsonl",
                   "--max-new-tokens", 3) == 0
    assert "hf policy 'tiny' is deterministic: its 2 samples are copies of its one response" in _error(capsys)
    for extra, message in [
        (["--seed", "1"], "--seed applies to hf:DIR policies with --sample only"),
        (["--top-k", "5"], "temperature, top_k and top_p apply to sampling only"),
        (["--checkpoint", "3"], "--checkpoint applies to GP-SARSA run folders only"),
        (["--state-format", "convlab2"], "--state-format applies to ConvLab-style policies only"),
    ]:
        assert respond(f"hf:{model}", contexts, "--out", folder / "x.jsonl", *extra) == 2
        assert message in _error(capsys), extra
    assert respond("hf:", contexts, "--out", folder / "x.jsonl") == 2
    assert "needs the model folder" in _error(capsys)
    assert respond(f"hf:{folder / 'nowhere'}", contexts, "--out", folder / "x.jsonl") == 2
    assert "model folder" in _error(capsys)
    assert respond(model, contexts, "--out", folder / "x.jsonl") == 2
    assert f"it looks like a Hugging Face model folder: use hf:{model}" in _error(capsys)
    assert respond("handcrafted", contexts, "--out", folder / "x.jsonl", "--max-new-tokens", 3) == 2
    assert "--max-new-tokens applies to hf:DIR policies only" in _error(capsys)


def test_the_output_is_checked_before_any_work(folder, capsys):
    contexts = folder / "C_gen.jsonl"
    (folder / "taken.jsonl").write_text("keep")
    # the existing output is refused before the (missing) model is looked at
    assert respond(f"hf:{folder / 'nowhere'}", contexts, "--out", folder / "taken.jsonl") == 2
    assert "taken.jsonl exists; use --force" in _error(capsys)
    assert (folder / "taken.jsonl").read_text() == "keep"
    assert respond("handcrafted", contexts, "--out", contexts, "--force") == 2
    assert "is also an input: refusing to write over it" in _error(capsys)
    policy_file = folder / "mypolicies.py"
    assert respond(f"{policy_file}:ask", contexts, "--out", policy_file, "--force") == 2
    assert "is also an input" in _error(capsys) and "def ask" in policy_file.read_text()
    assert respond("handcrafted", contexts, "--out", folder / "taken.jsonl", "--force") == 0
    assert len(Responses.read_jsonl(folder / "taken.jsonl")) == 48
    assert respond("handcrafted", contexts, "--out", folder / "hc.csv") == 0
    assert read_responses_csv(folder / "hc.csv")[generate_grid().ids[0]].action == Act.parse("request(area)")
    assert respond("handcrafted", contexts, "--out", folder / "hc.csv") == 2  # a CSV output as well
    assert "hc.csv exists; use --force" in _error(capsys)
    assert respond("handcrafted", contexts, "--out", folder / "hc.csv", "--force") == 0
    assert respond("nonsense", contexts, "--out", folder / "y.jsonl") == 2
    assert "POLICY 'nonsense' is none of" in _error(capsys)
