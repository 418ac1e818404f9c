"""The ``simscore respond`` command: run any policy on a context set and write its responses file.

``simscore respond POLICY CONTEXTS --out RESPONSES [--force] [--quiet] [--name NAME]
[--samples K] [--nlg template [--nlg-instance NAME]]`` answers every context of the context-set file
``CONTEXTS`` with ``POLICY`` and writes simscore's JSON Lines responses file (CSV for an
``--out`` ending in ``.csv``, without the provenance). ``POLICY`` is read in this order:

``handcrafted``, ``random``
    The rule-based policy and the seeded random policy (chance level; ``--seed``, default 0),
    worded by the template NLG. (A folder of one of these names is ``./handcrafted``.)
``hf:DIR``
    A local Hugging Face model (:class:`policies.GenerativePolicy`; nothing is downloaded):
    ``--max-new-tokens``, ``--batch-size``, ``--device``, ``--dtype``; ``--sample`` with
    ``--seed``, ``--temperature``, ``--top-k``, ``--top-p`` (default greedy); ``--acts`` asks
    for acts in simscore's act syntax; ``--source auto|history|belief``, ``--instruction``
    and ``--no-chat-template`` shape the prompt.
``openai:URL``
    An OpenAI-compatible chat-completions endpoint (vLLM, llama.cpp's server, Ollama,
    ``transformers serve``, a hosted API; :class:`policies.lm.openai_endpoint.OpenAIEndpointPolicy`):
    ``--model NAME`` (required); the API key from the environment variable ``--api-key-env``
    (default ``OPENAI_API_KEY``, optional; never written anywhere: a reply that echoes it has
    ``[API key]`` in its place, with one warning saying how many did); ``--temperature``
    (default 0), ``--seed`` (default 0), ``--max-new-tokens``; ``--concurrency``, ``--timeout``
    (seconds each try of a request may take, from connecting to the reply's last byte),
    ``--retries``; ``--source`` and ``--instruction`` shape prompts of contexts that are not
    from transcripts (those are sent as their messages, with their tools).
a directory
    A GP-SARSA training run written by ``simscore train``: its last checkpoint, or with
    ``--checkpoint N`` the one after N training dialogues.
``MODULE:NAME`` or ``FILE.py:NAME``
    A Python policy. ``MODULE`` is imported with :func:`importlib.import_module` (installed,
    or on ``PYTHONPATH``: the current directory is not searched unless it is there, e.g.
    ``PYTHONPATH=. simscore respond mypolicies:policy ...``); ``FILE.py`` is loaded from that
    file (its folder is not added to the import path). ``NAME`` is an attribute of the module,
    dotted for nested ones (``module:Class.factory``); nothing is evaluated. What it names:

    * a class is first instantiated, with ``--policy-kwargs JSON`` (default none); then
    * an object with ``respond(context)`` is the policy;
    * an object with ``predict(state)`` is a ConvLab-style policy, run through
      :class:`policies.ConvLabPolicy` (``--state-format convlab3|convlab2``,
      ``--convlab-domain``, and ``--seed`` to reseed the global generators per context);
    * any other callable is ``fn(context)`` returning a Response, an Act, an act string or a
      text, or ``(action, text)`` (:class:`policies.CallablePolicy`).

**ConvLab.** The ``convlab`` package cannot be installed beside simscore (it pins
``torch<=1.13``). In an environment that has both, ``simscore respond
convlab.policy.rule.multiwoz:RulePolicy C_col.jsonl --state-format convlab2 --seed 0 --out
rule.jsonl`` runs it directly; otherwise export the states with ``simscore contexts export``
and answer them in ConvLab's environment with ``examples/convlab_answer_states.py`` (the same
seeds, so the same answers); importing a ``convlab`` module that is not there says so.

**Samples.** ``--samples K`` (default 1) draws K responses per context and writes them in one
file with a sample index (responses format version 2, :mod:`simscore.samples`; JSON Lines only).
Sample ``k`` is drawn with the base seed :func:`simscore.samples.sample_seed` ``(S, k)`` of
``--seed S`` (sample 0 with ``S`` itself), and each context with its own seed derived from that
and its id, so the file is the same whatever the order, batch size or concurrency, and the
same ``--seed`` gives the same file. Policies that draw: ``random``, ``hf:DIR`` with
``--sample``, ``openai:URL`` (each sample sent its own seeds; at temperature 0 the samples
differ only where the server is not deterministic), ConvLab-style policies with ``--seed``.
Every other policy is deterministic by simscore's policy protocol (``handcrafted``, GP-SARSA,
``hf:DIR`` greedy, a Python policy): it answers once and its K samples are K copies of that
response (a note on stderr says so), so that its agreement with itself is 1 and it can be
compared with a sampled policy of the same K (``simscore compare``). ``--samples 1`` writes
the file of a run without it, byte for byte.

**Words for act-only policies.** A policy that returns only acts gets its texts from the
template NLG with ``--nlg template`` (:func:`simscore.run_policy`'s ``nlg``), as the policy
instance ``--nlg-instance`` (default: the policy's name), so the text measures apply.

The output location is checked before any work (never onto an input; an existing file only
with ``--force``); a progress bar shows on a terminal unless ``--quiet``.

This module parses the arguments and writes the output; ``POLICY`` is read and the policy built
with its options by :mod:`simscore.app.policy_specs` (:class:`~simscore.app.policy_specs.PolicySpec`,
:class:`~simscore.app.policy_specs.PolicyOptions`, :func:`~simscore.app.policy_specs.load_policy`).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import warnings
from typing import Any

from simscore.app.cli.args import (
    checks_outputs,
    convlab_domain,
    input_file,
    output_file,
    positive_int,
    sample_count,
    seed,
)
from simscore.app.policy_specs import (
    PolicyOptions,
    PolicySpec,
    check_policy_options,
    draws_from_seed,
    load_policy,
    reseeded_policy,
)
from simscore.errors import APIKeyInReplyWarning, ConfigError, UnparsedActWarning
from simscore.io import prepare_output

__all__ = ["add_subcommands", "cmd_respond"]


def _policy_options(args: argparse.Namespace) -> PolicyOptions:
    """The policy's options from the command's arguments (their destinations are the fields' names)."""
    return PolicyOptions(**{field.name: getattr(args, field.name) for field in dataclasses.fields(PolicyOptions)})


def _check_options(spec: PolicySpec, options: PolicyOptions, args: argparse.Namespace) -> None:
    """The policy's options (:func:`~simscore.app.policy_specs.check_policy_options`), then the command's own."""
    check_policy_options(spec, options)
    if args.nlg_instance is not None and args.nlg is None:
        raise ConfigError("--nlg-instance applies with --nlg template only")
    if (args.samples or 1) > 1 and str(args.out).lower().endswith(".csv"):
        raise ConfigError("--samples K > 1 writes JSON Lines (a sample index per record); a CSV log holds one "
                          "response per context: give --out FILE.jsonl")


def _show_warnings(caught: list[warnings.WarningMessage]) -> None:
    """simscore's warnings of the run on standard error, those of the API key in replies as one for all samples."""
    held = [warning.message for warning in caught if isinstance(warning.message, APIKeyInReplyWarning)]
    for warning in caught:
        if isinstance(warning.message, APIKeyInReplyWarning):
            continue
        if issubclass(warning.category, UserWarning) and warning.category.__module__ == "simscore.errors":
            print(f"simscore respond: warning: {warning.message}", file=sys.stderr)
        else:
            warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    if held:
        print(f"simscore respond: warning: {APIKeyInReplyWarning.combined(held)}", file=sys.stderr)


@checks_outputs
def cmd_respond(args: argparse.Namespace) -> int:
    """``simscore respond``: answer a context set with a policy and write the responses."""
    from contexts import ContextSet
    from policies import TemplateNLG
    from simscore.policy import run_policy
    from simscore.responses_csv import write_responses_csv
    from simscore.samples import SampledResponses, run_samples

    spec = PolicySpec.parse(args.policy)
    options = _policy_options(args)
    _check_options(spec, options, args)  # bad flags fail before anything is read
    # the policy's own files (a model folder, a module) are inputs too, known once its spec is read
    prepare_output(args.out, inputs=[args.contexts, *spec.input_files], overwrite=args.force)
    context_set = ContextSet.read_jsonl(args.contexts)
    policy = load_policy(spec, options)
    name = args.name or getattr(policy, "name", None) or type(policy).__name__
    nlg = TemplateNLG(args.nlg_instance if args.nlg_instance is not None else str(name)) if args.nlg else None
    samples = args.samples or 1
    draws = draws_from_seed(spec, options)
    if samples > 1 and not draws:
        print(f"simscore respond: note: {spec.kind} policy {str(name)!r} is deterministic: its {samples} samples "
              "are copies of its one response", file=sys.stderr)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UnparsedActWarning)
        warnings.simplefilter("always", APIKeyInReplyWarning)
        if samples > 1 and draws:
            sampled = run_samples(lambda s: reseeded_policy(spec, options, policy, s), context_set, samples=samples,
                                  seed=args.seed or 0, name=name, progress=options.progress, nlg=nlg)
        else:
            responses = run_policy(policy, context_set, name=name, progress=options.progress, nlg=nlg)
            record = {"count": samples, "seed": None, "drawn": False, "seeds": "none: copies of one response"}
            sampled = SampledResponses.from_samples([responses] * samples,
                                                    provenance={**responses.provenance, "samples": record})
    _show_warnings(caught)
    if samples > 1:
        sampled.to_jsonl(args.out, overwrite=args.force)
    elif str(args.out).lower().endswith(".csv"):
        write_responses_csv(args.out, responses, overwrite=args.force)
    else:
        responses.to_jsonl(args.out, overwrite=args.force)
    actions = sum(r.action is not None for drawn in sampled.values() for r in drawn)
    texts = sum(r.text is not None for drawn in sampled.values() for r in drawn)
    what = f"{len(sampled)} responses" if samples == 1 else f"{samples} x {len(sampled)} responses"
    print(f"wrote {what} of {sampled.policy!r} to {args.out} ({actions} with an action, {texts} with a text)")
    return 0


def add_subcommands(subparsers: Any) -> None:
    """Add the ``respond`` command to an argparse sub-parser set.

    Examples
    --------
    >>> import argparse
    >>> parser = argparse.ArgumentParser()
    >>> add_subcommands(parser.add_subparsers())
    >>> args = parser.parse_args(["respond", "hf:models/gpt2", "C_gen.jsonl", "--out", "r.jsonl", "--sample"])
    >>> args.func is cmd_respond, args.policy, args.sample, args.seed
    (True, 'hf:models/gpt2', True, None)
    """
    p = subparsers.add_parser(
        "respond", help="answer a context set with any policy and write its responses file",
        description="POLICY: handcrafted | random | hf:DIR | openai:URL | GP-SARSA run folder | MODULE:NAME | FILE.py:NAME "
        "(see simscore.app.cli.respond).",
    )
    p.add_argument("policy", metavar="POLICY", help="handcrafted, random, hf:DIR, openai:URL, a GP-SARSA run folder, "
                   "MODULE:NAME or FILE.py:NAME")
    p.add_argument("contexts", metavar="CONTEXTS", type=input_file, help="context-set file (JSON Lines)")
    p.add_argument("--out", "-o", required=True, type=output_file,
                   help="responses file (JSON Lines; .csv for CSV without provenance)")
    p.add_argument("--force", action="store_true", help="replace the output file if it exists (never an input)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--name", help="policy name recorded in the responses (default: the policy's own)")
    p.add_argument("--seed", type=seed, help="random: its seed; hf: with --sample the sampling seed; ConvLab-style: "
                   "reseed the global generators per context")
    p.add_argument("--samples", type=sample_count, metavar="K", help="draw K responses per context into one file "
                   "(a sample index per record; sample k seeded with simscore.samples.sample_seed(--seed, k)); a "
                   "deterministic policy's K samples are copies of its one response (default 1)")
    p.add_argument("--nlg", choices=("template",), help="word act-only responses with the template NLG")
    p.add_argument("--nlg-instance", metavar="NAME", help="the template NLG's policy instance (default: the policy's name)")
    p.add_argument("--checkpoint", type=positive_int, metavar="N", help="GP-SARSA: the checkpoint after N training dialogues")
    g = p.add_argument_group("hf:DIR (local Hugging Face models)")
    g.add_argument("--max-new-tokens", type=positive_int, metavar="N", help="tokens per response at most (default 40)")
    g.add_argument("--batch-size", type=positive_int, metavar="N", help="prompts generated together (default 8)")
    g.add_argument("--device", help="cpu (default), cuda, cuda:1, mps, ...")
    g.add_argument("--dtype", choices=("float32", "float16", "bfloat16", "float64"), help="default float32")
    g.add_argument("--sample", action="store_true", help="seeded sampling instead of greedy decoding")
    g.add_argument("--temperature", type=float, help="sampling temperature (with --sample)")
    g.add_argument("--top-k", type=positive_int, help="sample among the k most probable tokens (with --sample)")
    g.add_argument("--top-p", type=float, help="nucleus sampling threshold (with --sample)")
    g.add_argument("--acts", action="store_true", help="ask for one act in simscore's act syntax and parse it")
    g.add_argument("--source", choices=("auto", "history", "belief"),
                   help="what the prompt shows: the dialogue history, the belief, or auto (history where there is one)")
    g.add_argument("--instruction", help="the instruction starting the prompt (the chat template's system message)")
    g.add_argument("--no-chat-template", action="store_true", help="plain-text prompts even if the model has a chat template")
    g = p.add_argument_group("openai:URL (OpenAI-compatible endpoints; also --temperature, --seed, --max-new-tokens, "
                             "--source, --instruction)")
    g.add_argument("--model", help="the model the server is asked for (required)")
    g.add_argument("--api-key-env", metavar="VAR", help="the environment variable holding the API key (default "
                   "OPENAI_API_KEY if set; named here, it must be set)")
    g.add_argument("--concurrency", type=positive_int, metavar="N", help="requests in flight at most (default 4)")
    g.add_argument("--timeout", type=float, metavar="SECONDS", help="seconds each try of a request may take, "
                   "from connecting to the reply's last byte (default 120, at most 86400)")
    g.add_argument("--retries", type=int, metavar="N", help="tries after the first for a connection error, a timeout, "
                   "429 or 5xx, with exponential backoff (default 4)")
    g = p.add_argument_group("Python policies (MODULE:NAME, FILE.py:NAME)")
    g.add_argument("--policy-kwargs", metavar="JSON", help="keyword arguments when NAME is a class")
    g.add_argument("--state-format", choices=("convlab3", "convlab2"),
                   help="ConvLab-style (predict) policies: the state layout they read (default convlab3)")
    g.add_argument("--convlab-domain", metavar="DOMAIN", type=convlab_domain,
                   help="ConvLab-style policies: the domain, one of attraction, hospital, hotel, police, restaurant "
                   "(default), taxi, train")
    p.set_defaults(func=cmd_respond)
