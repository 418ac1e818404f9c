"""simscore.app.policy_specs: a POLICY text read, its options checked, the policy built (beneath both commands)."""

from __future__ import annotations

import argparse
import dataclasses

import pytest

from contexts import GridSpec, generate_grid
from policies import CallablePolicy, HandcraftedPolicy, RandomPolicy, SummaryPolicyAdapter
from simscore import run_policy
from simscore.app.cli import respond as cli_respond
from simscore.app.policy_specs import (
    PolicyOptions,
    PolicySpec,
    check_policy_options,
    draws_from_seed,
    load_policy,
    python_object,
    reseeded_policy,
)
from simscore.errors import ConfigError


@pytest.fixture(scope="module")
def grid():
    return generate_grid(GridSpec(levels=(0.0, 1.0)))


def _respond_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    cli_respond.add_subcommands(parser.add_subparsers())
    return parser.parse_args(["respond", *argv, "C.jsonl", "--out", "r.jsonl"])


def test_every_option_is_an_option_of_simscore_respond():
    # the command builds PolicyOptions from its arguments by name: each field is one of its destinations,
    # and with no option given each is at its default (not given)
    args = _respond_args("handcrafted")
    fields = [field.name for field in dataclasses.fields(PolicyOptions)]
    assert set(fields) <= set(vars(args))
    assert PolicyOptions(**{name: getattr(args, name) for name in fields}) == PolicyOptions()
    given = _respond_args("hf:m", "--max-new-tokens", "3", "--sample", "--seed", "2", "--no-chat-template")
    options = PolicyOptions(**{name: getattr(given, name) for name in fields})
    assert (options.max_new_tokens, options.sample, options.seed, options.no_chat_template) == (3, True, 2, True)
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.seed = 3  # type: ignore[misc]


def test_the_named_policies_are_built_with_their_options(grid):
    assert type(load_policy(PolicySpec.parse("handcrafted"))) is SummaryPolicyAdapter
    random = load_policy(PolicySpec.parse("random"), PolicyOptions(seed=3))
    expected = run_policy(SummaryPolicyAdapter(RandomPolicy(seed=3)), grid)
    assert dict(run_policy(random, grid)) == dict(expected)
    assert dict(run_policy(load_policy(PolicySpec.parse("handcrafted")), grid)) == dict(
        run_policy(SummaryPolicyAdapter(HandcraftedPolicy()), grid))


@pytest.mark.parametrize(
    ("policy", "options", "message"),
    [
        ("handcrafted", PolicyOptions(max_new_tokens=8), "--max-new-tokens applies to hf:DIR policies only"),
        ("handcrafted", PolicyOptions(seed=1), "--seed does not apply to a handcrafted policy"),
        ("random", PolicyOptions(checkpoint=2), "--checkpoint applies to GP-SARSA run folders only"),
        ("random", PolicyOptions(model="m"), "--model applies to openai:URL policies only"),
        ("hf:m", PolicyOptions(seed=1), "--seed applies to hf:DIR policies with --sample only"),
        ("hf:m", PolicyOptions(policy_kwargs="{}"), "--policy-kwargs applies to MODULE:Class policies only"),
        ("openai:http://127.0.0.1:1/v1", PolicyOptions(), "POLICY openai:URL needs --model NAME"),
        ("openai:http://127.0.0.1:1/v1", PolicyOptions(model="m", batch_size=2), "--batch-size applies to hf:DIR"),
        ("x:y", PolicyOptions(top_k=3), "--top-k applies to hf:DIR policies only"),
    ],
)
def test_an_option_that_does_not_apply_is_an_error(policy, options, message):
    spec = PolicySpec.parse(policy)
    with pytest.raises(ConfigError, match=message):
        check_policy_options(spec, options)
    with pytest.raises(ConfigError, match=message):  # load_policy checks first, before anything is loaded
        load_policy(spec, options)


def test_openai_shares_the_options_it_has_in_common_with_hf():
    spec = PolicySpec.parse("openai:http://127.0.0.1:1/v1")
    check_policy_options(spec, PolicyOptions(model="m", temperature=0.5, max_new_tokens=4, source="belief",
                                             instruction="Hi.", seed=2))


def test_python_objects_and_their_policies(tmp_path):
    (tmp_path / "mine.py").write_text(
        "def ask(context):\n    return 'request(food)'\n\n"
        "class Echo:\n    def __init__(self, word='hi'):\n        self.word = word\n\n"
        "    def respond(self, context):\n        return self.word\n",
        encoding="utf-8")
    ask = PolicySpec.parse(f"{tmp_path / 'mine.py'}:ask")
    assert ask.input_files == [str(tmp_path / "mine.py")]
    assert python_object(ask).__name__ == "ask"
    assert isinstance(load_policy(ask), CallablePolicy)
    echo = PolicySpec.parse(f"{tmp_path / 'mine.py'}:Echo")
    assert python_object(echo, '{"word": "yo"}').word == "yo"
    assert load_policy(echo, PolicyOptions(policy_kwargs='{"word": "yo"}')).word == "yo"
    with pytest.raises(ConfigError, match="has no keyword argument 'wrod'; did you mean 'word'"):
        python_object(echo, '{"wrod": "yo"}')
    with pytest.raises(ConfigError, match="--seed applies to ConvLab-style"):
        load_policy(ask, PolicyOptions(seed=1))


def test_which_policies_draw_and_how_they_are_reseeded(grid):
    random, hf = PolicySpec.parse("random"), PolicySpec.parse("hf:m")
    assert draws_from_seed(random, PolicyOptions())
    assert draws_from_seed(PolicySpec.parse("openai:http://x/v1"), PolicyOptions(model="m"))
    assert draws_from_seed(hf, PolicyOptions(sample=True)) and not draws_from_seed(hf, PolicyOptions())
    assert not draws_from_seed(PolicySpec.parse("handcrafted"), PolicyOptions())
    assert not draws_from_seed(PolicySpec.parse("x:y"), PolicyOptions())
    assert draws_from_seed(PolicySpec.parse("x:y"), PolicyOptions(seed=0))  # a ConvLab-style policy reseeded
    options = PolicyOptions(seed=1)
    policy = load_policy(random, options)
    assert reseeded_policy(random, options, policy, 1) is policy  # its own seed: the very policy
    other = reseeded_policy(random, options, policy, 7)
    assert dict(run_policy(other, grid)) == dict(run_policy(load_policy(random, PolicyOptions(seed=7)), grid))


def test_progress_shows_on_a_terminal_unless_quiet(monkeypatch):
    monkeypatch.setattr("sys.stderr.isatty", lambda: False)
    assert PolicyOptions().progress is False
    monkeypatch.setattr("sys.stderr.isatty", lambda: True)
    assert PolicyOptions().progress is True
    assert PolicyOptions(quiet=True).progress is False
