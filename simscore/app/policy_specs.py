"""What names a policy and how it is built: the ``POLICY`` of ``simscore respond`` and ``simscore gate``.

:meth:`PolicySpec.parse` reads the text, in this order: ``handcrafted`` and ``random`` (the
rule-based and the seeded random policy); ``hf:DIR``, a local Hugging Face model
(:class:`policies.GenerativePolicy`, nothing downloaded); ``openai:URL``, an OpenAI-compatible
chat-completions endpoint (:class:`policies.lm.openai_endpoint.OpenAIEndpointPolicy`); a
directory, a GP-SARSA training run; ``MODULE:NAME`` or ``FILE.py:NAME``, a Python object
(:func:`python_object`: the module imported, or the file loaded from its path; ``NAME`` an
attribute, dotted for nested ones; nothing evaluated). :func:`load_policy` builds the policy
with :class:`PolicyOptions`, the options of the command line by their names; an option that
does not apply to the kind of policy is a :class:`~simscore.errors.ConfigError`
(:func:`check_policy_options`), never silently ignored. A Python object is the policy if it has
``respond(context)``, a ConvLab-style policy (:class:`policies.ConvLabPolicy`) if it has
``predict(state)``, else a function of the context (:class:`policies.CallablePolicy`); a class
is first instantiated with ``policy_kwargs``. The options of each kind, with their defaults,
are those of :mod:`simscore.app.cli.respond`.

Examples
--------
>>> spec = PolicySpec.parse("random")
>>> policy = load_policy(spec, PolicyOptions(seed=3))
>>> type(policy).__name__, draws_from_seed(spec, PolicyOptions(seed=3))
('SummaryPolicyAdapter', True)
>>> load_policy(PolicySpec.parse("handcrafted"), PolicyOptions(max_new_tokens=8))
Traceback (most recent call last):
...
simscore.errors.ConfigError: --max-new-tokens applies to hf:DIR policies only
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib
import importlib.util
import inspect
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from simscore.errors import ConfigError, FileFormatError
from simscore.io import parse_json

__all__ = ["PolicySpec", "PolicyOptions", "check_policy_options", "load_policy", "python_object", "draws_from_seed",
           "reseeded_policy"]

#: Options of ``hf:DIR`` policies only (:class:`PolicyOptions` field -> command-line option).
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
class PolicyOptions:
    """The options a policy is built with (:func:`load_policy`), each named after its command-line
    option (``max_new_tokens`` is ``--max-new-tokens``); None or False: not given, the default of
    the kind of policy applies.

    ``seed`` serves ``random``, ``hf:DIR`` with ``sample``, ``openai:URL`` and ConvLab-style
    policies; ``checkpoint`` a GP-SARSA run; ``name`` names an ``hf:DIR`` or ``openai:URL``
    policy; ``quiet`` turns off the progress bar (:attr:`progress`). The ``hf:DIR`` options:
    ``max_new_tokens``, ``batch_size``, ``device``, ``dtype``, ``sample``, ``temperature``,
    ``top_k``, ``top_p``, ``acts``, ``source``, ``instruction``, ``no_chat_template``; of
    ``openai:URL``: ``model`` (required), ``api_key_env``, ``concurrency``, ``timeout``,
    ``retries``, and ``temperature``, ``max_new_tokens``, ``source``, ``instruction``; of Python
    policies: ``policy_kwargs`` (a JSON object), ``state_format`` and ``convlab_domain``.

    Examples
    --------
    >>> PolicyOptions(seed=1, quiet=True).progress
    False
    """

    # every kind of policy that takes them
    seed: int | None = None
    checkpoint: int | None = None
    name: str | None = None
    quiet: bool = False
    # hf:DIR (and, where _SHARED_OPTIONS names them, openai:URL)
    max_new_tokens: int | None = None
    batch_size: int | None = None
    device: str | None = None
    dtype: str | None = None
    sample: bool = False
    temperature: float | None = None
    top_k: int | None = None
    top_p: float | None = None
    acts: bool = False
    source: Literal["auto", "history", "belief"] | None = None
    instruction: str | None = None
    no_chat_template: bool = False
    # openai:URL
    model: str | None = None
    api_key_env: str | None = None
    concurrency: int | None = None
    timeout: float | None = None
    retries: int | None = None
    # MODULE:NAME and FILE.py:NAME
    policy_kwargs: str | None = None
    state_format: Literal["convlab3", "convlab2"] | None = None
    convlab_domain: str | None = None

    @property
    def progress(self) -> bool:
        """Whether a progress bar shows: not ``quiet``, and standard error is a terminal."""
        return not self.quiet and sys.stderr.isatty()


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
        """Read ``POLICY`` (the forms, in the order they are tried: the module docstring)."""
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


def _python_policy(spec: PolicySpec, options: PolicyOptions) -> Any:
    from policies import CallablePolicy, ConvLabPolicy

    obj = python_object(spec, options.policy_kwargs)
    convlab = not callable(getattr(obj, "respond", None)) and callable(getattr(obj, "predict", None))
    if not convlab:
        given = [option for dest, option in (("seed", "--seed"), *_CONVLAB_OPTIONS.items()) if getattr(options, dest) is not None]
        if given:
            raise ConfigError(
                f"{', '.join(given)} appl{'ies' if len(given) == 1 else 'y'} to ConvLab-style (predict) policies only; "
                f"{spec.target}:{spec.attribute} is not one (give a Python policy its settings with --policy-kwargs)"
            )
    if callable(getattr(obj, "respond", None)):
        return obj
    if convlab:
        return ConvLabPolicy(obj, state_format=options.state_format or "convlab3", seed=options.seed,
                             domain=options.convlab_domain or "restaurant")
    if callable(obj):
        return CallablePolicy(obj)
    raise ConfigError(
        f"POLICY: {spec.target}:{spec.attribute} is a {type(obj).__name__}, expected a policy (respond), a "
        "ConvLab-style policy (predict), a class of either, or a function of the context"
    )


def _generative_policy(spec: PolicySpec, options: PolicyOptions) -> Any:
    from policies import Decoding, GenerativePolicy, PromptTemplate

    sampling: dict[str, Any] = {"temperature": options.temperature, "top_k": options.top_k, "top_p": options.top_p}
    decoding = Decoding(
        max_new_tokens=40 if options.max_new_tokens is None else options.max_new_tokens,
        sample=bool(options.sample),
        seed=0 if options.seed is None else options.seed,
        **{key: value for key, value in sampling.items() if value is not None},
    )
    fields: dict[str, Any] = {"source": options.source or "auto"}
    if options.instruction is not None:
        fields["instruction"] = options.instruction
    if options.no_chat_template:
        fields["use_chat_template"] = False
    return GenerativePolicy(
        spec.target,
        template=PromptTemplate(**fields),
        decoding=decoding,
        act_output=bool(options.acts),
        batch_size=8 if options.batch_size is None else options.batch_size,
        device="cpu" if options.device is None else options.device,
        dtype=options.dtype or "float32",
        name=options.name,
        progress=options.progress,
    )


def _openai_policy(spec: PolicySpec, options: PolicyOptions) -> Any:
    from policies import PromptTemplate
    from policies.lm.openai_endpoint import OpenAIEndpointPolicy

    fields: dict[str, Any] = {"source": options.source or "auto"}
    if options.instruction is not None:
        fields["instruction"] = options.instruction
    given: dict[str, Any] = {"temperature": options.temperature, "seed": options.seed, "max_tokens": options.max_new_tokens,
             "concurrency": options.concurrency, "timeout": options.timeout, "retries": options.retries}
    assert options.model is not None  # check_policy_options refuses openai:URL without it
    try:
        return OpenAIEndpointPolicy(
            spec.target, model=options.model, api_key_env=options.api_key_env or "OPENAI_API_KEY",
            require_key=options.api_key_env is not None, template=PromptTemplate(**fields), name=options.name,
            **{key: value for key, value in given.items() if value is not None},
        )
    except ValueError as exc:
        raise ConfigError(f"POLICY openai:URL: {exc}") from None


def _gpsarsa_policy(spec: PolicySpec, options: PolicyOptions) -> Any:
    from policies import list_checkpoints, load_checkpoint

    folder = Path(spec.target)
    if not list_checkpoints(folder):
        hint = f"; it looks like a Hugging Face model folder: use hf:{spec.target}" if (folder / "config.json").is_file() else ""
        raise ConfigError(f"POLICY {spec.target}: a folder, but no GP-SARSA training run (no checkpoints){hint}")
    return load_checkpoint(folder, options.checkpoint)


def check_policy_options(spec: PolicySpec, options: PolicyOptions) -> None:
    """Raise a :class:`~simscore.errors.ConfigError` for an option that does not apply to this kind of
    policy (it is never silently ignored), or for ``openai:URL`` without ``model``."""
    groups = [(_GENERATIVE_OPTIONS, "hf", "hf:DIR policies"), (_OPENAI_OPTIONS, "openai", "openai:URL policies")]
    groups += [(_PYTHON_OPTIONS, "python", "MODULE:Class policies"), (_CONVLAB_OPTIONS, "python", "ConvLab-style policies")]
    for table, kind, what in groups:
        for dest, option in table.items():
            shared = spec.kind == "openai" and dest in _SHARED_OPTIONS
            if getattr(options, dest) not in (None, False) and spec.kind != kind and not shared:
                raise ConfigError(f"{option} applies to {what} only")
    if spec.kind == "openai" and not options.model:
        raise ConfigError("POLICY openai:URL needs --model NAME (the model the server is asked for)")
    if options.checkpoint is not None and spec.kind != "gpsarsa":
        raise ConfigError("--checkpoint applies to GP-SARSA run folders only")
    if options.seed is not None and spec.kind in ("handcrafted", "gpsarsa"):
        raise ConfigError(f"--seed does not apply to a {spec.kind} policy (it is deterministic)")
    if spec.kind == "hf" and not options.sample and options.seed is not None:
        raise ConfigError("--seed applies to hf:DIR policies with --sample only (greedy decoding draws nothing)")


def load_policy(spec: PolicySpec, options: PolicyOptions | None = None) -> Any:
    """The policy ``spec`` names, built with ``options`` (default: none given; see the module docstring)."""
    options = PolicyOptions() if options is None else options
    check_policy_options(spec, options)
    if spec.kind in ("handcrafted", "random"):
        from policies import HandcraftedPolicy, RandomPolicy, SummaryPolicyAdapter

        inner = HandcraftedPolicy() if spec.kind == "handcrafted" else RandomPolicy(seed=options.seed or 0)
        return SummaryPolicyAdapter(inner)  # --name renames the responses, not the template NLG's wording
    if spec.kind == "hf":
        return _generative_policy(spec, options)
    if spec.kind == "gpsarsa":
        return _gpsarsa_policy(spec, options)
    if spec.kind == "openai":
        return _openai_policy(spec, options)
    return _python_policy(spec, options)


def draws_from_seed(spec: PolicySpec, options: PolicyOptions) -> bool:
    """Whether the policy draws its responses from a seed (else it is deterministic: one response per context)."""
    if spec.kind in ("random", "openai"):
        return True
    if spec.kind == "hf":
        return bool(options.sample)
    return spec.kind == "python" and options.seed is not None  # a ConvLab-style policy reseeded per context


def reseeded_policy(spec: PolicySpec, options: PolicyOptions, policy: Any, seed: int) -> Any:
    """``policy`` (:func:`load_policy` of ``spec`` and ``options``) drawing with base seed ``seed``
    instead of ``options.seed`` (a loaded model is kept, not loaded again)."""
    if seed == (options.seed or 0):
        return policy
    if spec.kind == "hf":
        return policy.with_seed(seed)
    return load_policy(spec, dataclasses.replace(options, seed=seed))
