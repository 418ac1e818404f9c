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
    (default ``OPENAI_API_KEY``, optional; never written anywhere); ``--temperature`` (default
    0), ``--seed`` (default 0), ``--max-new-tokens``; ``--concurrency``, ``--timeout``,
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
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import importlib.util
import inspect
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simscore.app.cli.args import checks_outputs, convlab_domain, input_file, output_file, positive_int, seed
from simscore.errors import ConfigError, FileFormatError, UnparsedActWarning
from simscore.io import parse_json, prepare_output

__all__ = ["add_subcommands", "cmd_respond", "load_policy", "python_object", "PolicySpec"]

#: Options of ``hf:DIR`` policies only (argparse destination -> option).
_GENERATIVE_OPTIONS = {
    "max_new_tokens": "--max-new-tokens", "batch_size": "--batch-size", "device": "--device", "dtype": "--dtype",
    "temperature": "--temperature", "top_k": "--top-k", "top_p": "--top-p", "acts": "--acts", "source": "--source",
    "instruction": "--instruction", "no_chat_template": "--no-chat-template", "sample": "--sample",
}
_PYTHON_OPTIONS = {"policy_kwargs": "--policy-kwargs"}
#: Options of ``openai:URL`` policies only; those of _GENERATIVE_OPTIONS they share are in _SHARED_OPTIONS.
_OPENAI_OPTIONS = {"model": "--model", "api_key_env": "--api-key-env", "concurrency": "--concurrency",
                   "timeout": "--timeout", "retries": "--retries"}
_SHARED_OPTIONS = ("max_new_tokens", "temperature", "source", "instruction")
_CONVLAB_OPTIONS = {"state_format": "--state-format", "convlab_domain": "--convlab-domain"}


@dataclass(frozen=True)
class PolicySpec:
    """A parsed ``POLICY`` argument: its kind and what names it (a folder, a file, a module).

    Examples
    --------
    >>> PolicySpec.parse("hf:models/gpt2")
    PolicySpec(kind='hf', target='models/gpt2', attribute=None)
    >>> PolicySpec.parse("mypolicies:Policy.build")
    PolicySpec(kind='python', target='mypolicies', attribute='Policy.build')
    >>> PolicySpec.parse("no-such-thing")
    Traceback (most recent call last):
    ...
    simscore.errors.ConfigError: POLICY 'no-such-thing' is none of: handcrafted, random, hf:DIR, openai:URL, a GP-SARSA \
run folder, MODULE:NAME, FILE.py:NAME
    """

    kind: str
    target: str
    attribute: str | None = None

    @classmethod
    def parse(cls, text: str) -> PolicySpec:
        """Read ``POLICY`` (see the module docstring for the forms, in the order they are tried)."""
        if text in ("handcrafted", "random"):
            return cls(text, text)
        if text.startswith("hf:"):
            if not text[3:]:
                raise ConfigError("POLICY hf:DIR needs the model folder after 'hf:'")
            return cls("hf", text[3:])
        if text.startswith("openai:"):
            if not text[7:]:
                raise ConfigError("POLICY openai:URL needs the endpoint's URL after 'openai:'")
            return cls("openai", text[7:])
        if Path(text).is_dir():
            return cls("gpsarsa", text)
        module, sep, attribute = text.rpartition(":")
        if sep and module and attribute:
            parts = attribute.split(".")
            if not all(part.isidentifier() for part in parts):
                raise ConfigError(f"POLICY {text!r}: {attribute!r} is not a (dotted) Python name")
            return cls("python", module, attribute)
        raise ConfigError(
            f"POLICY {text!r} is none of: handcrafted, random, hf:DIR, openai:URL, a GP-SARSA run folder, "
            "MODULE:NAME, FILE.py:NAME"
        )

    @property
    def input_files(self) -> list[str]:
        """Files the policy is read from (the output must not be one of them)."""
        return [self.target] if self.kind == "python" and self.target.endswith(".py") else []


def _module(target: str) -> Any:
    """The module ``target`` names: a ``.py`` file loaded from its path, or an importable module."""
    if target.endswith(".py"):
        path = Path(target)
        if not path.is_file():
            raise ConfigError(f"POLICY: the file {target} does not exist")
        spec = importlib.util.spec_from_file_location(f"simscore_respond_{path.stem}", path)
        if spec is None or spec.loader is None:
            raise ConfigError(f"POLICY: cannot load {target} as a Python module")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    try:
        return importlib.import_module(target)
    except ImportError as exc:
        if target.split(".")[0] in ("convlab", "convlab2"):
            raise ConfigError(
                f"POLICY: cannot import {target!r} ({exc}). ConvLab cannot be installed beside simscore: export the "
                "states with `simscore contexts export` and answer them in ConvLab's environment with "
                "examples/convlab_answer_states.py (docs/guide/policies.md: ConvLab policies in their own environment)"
            ) from None
        raise ConfigError(
            f"POLICY: cannot import {target!r} ({exc}); install it or put its folder on PYTHONPATH "
            "(e.g. PYTHONPATH=. simscore respond ...), or name the file: FILE.py:NAME"
        ) from None


def _check_keywords(cls: type, kwargs: dict[str, Any], label: str) -> None:
    """``cls(**kwargs)`` would bind: else a :class:`ConfigError` naming the keyword and those the class accepts.

    A class whose signature cannot be read, or that takes ``**kwargs``, is left to say it itself.
    """
    try:
        signature = inspect.signature(cls)
    except (TypeError, ValueError):
        return
    parameters = signature.parameters.values()
    if any(p.kind is p.VAR_KEYWORD for p in parameters):
        return
    accepted = [p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    known = f"(it accepts: {', '.join(accepted)})" if accepted else "(it accepts none)"
    for key in kwargs:
        if key not in accepted:
            close = difflib.get_close_matches(key, accepted, n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            shown = repr(key) if len(key) <= 40 else f"{key[:40]!r}..."
            raise ConfigError(f"--policy-kwargs: {label} has no keyword argument {shown}{hint} {known}")
    try:
        signature.bind(**kwargs)
    except TypeError as exc:  # a required argument left out
        raise ConfigError(f"--policy-kwargs: {label}: {exc} {known}") from None


def python_object(spec: PolicySpec, policy_kwargs: str | None = None) -> Any:
    """What a ``MODULE:NAME`` or ``FILE.py:NAME`` spec names; a class instantiated with ``policy_kwargs`` (JSON)."""
    obj = _module(spec.target)
    for part in (spec.attribute or "").split("."):
        if not hasattr(obj, part):
            raise ConfigError(f"POLICY: {spec.target} has no attribute {spec.attribute!r}")
        obj = getattr(obj, part)
    if isinstance(obj, type):
        try:  # strict and bounded like every JSON simscore reads (no NaN, no 100,000 nested brackets)
            kwargs = parse_json(policy_kwargs, "--policy-kwargs") if policy_kwargs else {}
        except FileFormatError as exc:
            raise ConfigError(f"--policy-kwargs is not valid JSON ({exc.reason})") from None
        if not isinstance(kwargs, dict):
            raise ConfigError(f"--policy-kwargs must be a JSON object, got {policy_kwargs!r}")
        _check_keywords(obj, kwargs, f"{spec.target}:{spec.attribute}")
        obj = obj(**kwargs)
    elif policy_kwargs:
        raise ConfigError(f"--policy-kwargs applies to a class; {spec.attribute!r} is a {type(obj).__name__}")
    return obj


def _python_policy(spec: PolicySpec, args: argparse.Namespace) -> Any:
    from policies import CallablePolicy, ConvLabPolicy

    obj = python_object(spec, args.policy_kwargs)
    convlab = not callable(getattr(obj, "respond", None)) and callable(getattr(obj, "predict", None))
    if not convlab:
        given = [option for dest, option in (("seed", "--seed"), *_CONVLAB_OPTIONS.items()) if getattr(args, dest) is not None]
        if given:
            raise ConfigError(
                f"{', '.join(given)} appl{'ies' if len(given) == 1 else 'y'} to ConvLab-style (predict) policies only; "
                f"{spec.target}:{spec.attribute} is not one (give a Python policy its settings with --policy-kwargs)"
            )
    if callable(getattr(obj, "respond", None)):
        return obj
    if convlab:
        return ConvLabPolicy(obj, state_format=args.state_format or "convlab3", seed=args.seed,
                             domain=args.convlab_domain or "restaurant")
    if callable(obj):
        return CallablePolicy(obj)
    raise ConfigError(
        f"POLICY: {spec.target}:{spec.attribute} is a {type(obj).__name__}, expected a policy (respond), a "
        "ConvLab-style policy (predict), a class of either, or a function of the context"
    )


def _generative_policy(spec: PolicySpec, args: argparse.Namespace) -> Any:
    from policies import Decoding, GenerativePolicy, PromptTemplate

    sampling = {"temperature": args.temperature, "top_k": args.top_k, "top_p": args.top_p}
    decoding = Decoding(
        max_new_tokens=40 if args.max_new_tokens is None else args.max_new_tokens,
        sample=bool(args.sample),
        seed=0 if args.seed is None else args.seed,
        **{key: value for key, value in sampling.items() if value is not None},
    )
    fields: dict[str, Any] = {"source": args.source or "auto"}
    if args.instruction is not None:
        fields["instruction"] = args.instruction
    if args.no_chat_template:
        fields["use_chat_template"] = False
    return GenerativePolicy(
        spec.target,
        template=PromptTemplate(**fields),
        decoding=decoding,
        act_output=bool(args.acts),
        batch_size=8 if args.batch_size is None else args.batch_size,
        device=args.device or "cpu",
        dtype=args.dtype or "float32",
        name=args.name,
        progress=_progress(args),
    )


def _openai_policy(spec: PolicySpec, args: argparse.Namespace) -> Any:
    from policies import PromptTemplate
    from policies.lm.openai_endpoint import OpenAIEndpointPolicy

    fields: dict[str, Any] = {"source": args.source or "auto"}
    if args.instruction is not None:
        fields["instruction"] = args.instruction
    given = {"temperature": args.temperature, "seed": args.seed, "max_tokens": args.max_new_tokens,
             "concurrency": args.concurrency, "timeout": args.timeout, "retries": args.retries}
    try:
        return OpenAIEndpointPolicy(
            spec.target, model=args.model, api_key_env=args.api_key_env or "OPENAI_API_KEY",
            require_key=args.api_key_env is not None, template=PromptTemplate(**fields), name=args.name,
            **{key: value for key, value in given.items() if value is not None},
        )
    except ValueError as exc:
        raise ConfigError(f"POLICY openai:URL: {exc}") from None


def _gpsarsa_policy(spec: PolicySpec, args: argparse.Namespace) -> Any:
    from policies import list_checkpoints, load_checkpoint

    folder = Path(spec.target)
    if not list_checkpoints(folder):
        hint = f"; it looks like a Hugging Face model folder: use hf:{spec.target}" if (folder / "config.json").is_file() else ""
        raise ConfigError(f"POLICY {spec.target}: a folder, but no GP-SARSA training run (no checkpoints){hint}")
    return load_checkpoint(folder, args.checkpoint)


def _check_options(spec: PolicySpec, args: argparse.Namespace) -> None:
    """Options that do not apply to this kind of policy are errors, not silently ignored."""
    groups = [(_GENERATIVE_OPTIONS, "hf", "hf:DIR policies"), (_OPENAI_OPTIONS, "openai", "openai:URL policies")]
    groups += [(_PYTHON_OPTIONS, "python", "MODULE:Class policies"), (_CONVLAB_OPTIONS, "python", "ConvLab-style policies")]
    for options, kind, what in groups:
        for dest, option in options.items():
            shared = spec.kind == "openai" and dest in _SHARED_OPTIONS
            if getattr(args, dest) not in (None, False) and spec.kind != kind and not shared:
                raise ConfigError(f"{option} applies to {what} only")
    if spec.kind == "openai" and not args.model:
        raise ConfigError("POLICY openai:URL needs --model NAME (the model the server is asked for)")
    if args.checkpoint is not None and spec.kind != "gpsarsa":
        raise ConfigError("--checkpoint applies to GP-SARSA run folders only")
    if args.seed is not None and spec.kind in ("handcrafted", "gpsarsa"):
        raise ConfigError(f"--seed does not apply to a {spec.kind} policy (it is deterministic)")
    if spec.kind == "hf" and not args.sample and args.seed is not None:
        raise ConfigError("--seed applies to hf:DIR policies with --sample only (greedy decoding draws nothing)")
    if args.nlg_instance is not None and args.nlg is None:
        raise ConfigError("--nlg-instance applies with --nlg template only")
    if (args.samples or 1) > 1 and str(args.out).lower().endswith(".csv"):
        raise ConfigError("--samples K > 1 writes JSON Lines (a sample index per record); a CSV log holds one "
                          "response per context: give --out FILE.jsonl")


def load_policy(spec: PolicySpec, args: argparse.Namespace) -> Any:
    """The policy ``spec`` names, built with the command's options (see the module docstring)."""
    _check_options(spec, args)
    if spec.kind in ("handcrafted", "random"):
        from policies import HandcraftedPolicy, RandomPolicy, SummaryPolicyAdapter

        inner = HandcraftedPolicy() if spec.kind == "handcrafted" else RandomPolicy(seed=args.seed or 0)
        return SummaryPolicyAdapter(inner)  # --name renames the responses, not the template NLG's wording
    if spec.kind == "hf":
        return _generative_policy(spec, args)
    if spec.kind == "gpsarsa":
        return _gpsarsa_policy(spec, args)
    if spec.kind == "openai":
        return _openai_policy(spec, args)
    return _python_policy(spec, args)


def _progress(args: argparse.Namespace) -> bool:
    return not args.quiet and sys.stderr.isatty()


@checks_outputs
def cmd_respond(args: argparse.Namespace) -> int:
    """``simscore respond``: answer a context set with a policy and write the responses."""
    from contexts import ContextSet
    from policies import TemplateNLG
    from simscore.policy import run_policy
    from simscore.responses_csv import write_responses_csv
    from simscore.samples import SampledResponses, run_samples

    spec = PolicySpec.parse(args.policy)
    _check_options(spec, args)  # bad flags fail before anything is read
    # the policy's own files (a model folder, a module) are inputs too, known once its spec is read
    prepare_output(args.out, inputs=[args.contexts, *spec.input_files], overwrite=args.force)
    context_set = ContextSet.read_jsonl(args.contexts)
    policy = load_policy(spec, args)
    name = args.name or getattr(policy, "name", None) or type(policy).__name__
    nlg = TemplateNLG(args.nlg_instance if args.nlg_instance is not None else str(name)) if args.nlg else None
    samples = args.samples or 1
    draws = _draws(spec, args)
    if samples > 1 and not draws:
        print(f"simscore respond: note: {spec.kind} policy {str(name)!r} is deterministic: its {samples} samples "
              "are copies of its one response", file=sys.stderr)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UnparsedActWarning)
        if samples > 1 and draws:
            sampled = run_samples(lambda s: _reseeded(spec, args, policy, s), context_set, samples=samples,
                                  seed=args.seed or 0, name=name, progress=_progress(args), nlg=nlg)
        else:
            responses = run_policy(policy, context_set, name=name, progress=_progress(args), nlg=nlg)
            record = {"count": samples, "seed": None, "drawn": False, "seeds": "none: copies of one response"}
            sampled = SampledResponses.from_samples([responses] * samples,
                                                    provenance={**responses.provenance, "samples": record})
    for warning in caught:
        if issubclass(warning.category, UserWarning) and warning.category.__module__ == "simscore.errors":
            print(f"simscore respond: warning: {warning.message}", file=sys.stderr)
        else:
            warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
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


def _draws(spec: PolicySpec, args: argparse.Namespace) -> bool:
    """Whether the policy draws its responses from a seed (else it is deterministic: one response per context)."""
    if spec.kind in ("random", "openai"):
        return True
    if spec.kind == "hf":
        return bool(args.sample)
    return spec.kind == "python" and args.seed is not None  # a ConvLab-style policy reseeded per context


def _reseeded(spec: PolicySpec, args: argparse.Namespace, policy: Any, seed: int) -> Any:
    """The policy drawing with base seed ``seed`` (a loaded model is kept, not loaded again)."""
    if seed == (args.seed or 0):
        return policy
    if spec.kind == "hf":
        return policy.with_seed(seed)
    return load_policy(spec, argparse.Namespace(**{**vars(args), "seed": seed}))


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
    p.add_argument("--samples", type=positive_int, metavar="K", help="draw K responses per context into one file "
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
    g.add_argument("--timeout", type=float, metavar="SECONDS", help="wait for the connection and each read (default 120)")
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
