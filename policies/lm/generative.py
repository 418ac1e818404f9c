"""Local language models as dialogue policies: :class:`GenerativePolicy`.

A Hugging Face model in a local folder (causal, e.g. GPT-2 or Llama, or encoder-decoder, e.g.
T5 or BART) writes the system's turn for every context. The folder is read through
:mod:`simscore.models`, simscore's one model loader: nothing is downloaded, the weights come
only from safetensors files (never a pickle), no code from the folder is run, the sizes its
files declare are checked before anything is allocated, and a chat template renders within
bounds of time and memory (:class:`~simscore.models.chat_templates.ChatTemplate`).

Prompt and acts
---------------
A :class:`~policies.lm.prompts.PromptTemplate` renders each context: its dialogue history (C_col)
or its belief state as text (C_gen), through the tokenizer's chat template where it has one
(see :mod:`policies.lm.prompts`). A prompt longer than the model's context window leaves out the
oldest turns of the history, as many as needed, with a
:class:`~simscore.errors.ShortenedPromptWarning` (a belief prompt that does not fit is an
error).

With ``act_output=True`` the instruction also asks for one act in simscore's act syntax
(``request(food)``, ``inform(name="the golden wok",food=chinese)``), read back by
:func:`~policies.lm.prompts.act_from_output`. A parsed act is the response's action, and the
response has no text (it is an action policy; word its acts with
``run_policy(..., nlg=TemplateNLG(...))``). An output that does not parse keeps its text, has
no action, and is counted: ``provenance["unparsed_acts"]`` and an
:class:`~simscore.errors.UnparsedActWarning`. Nothing is repaired or guessed.

Decoding and determinism
------------------------
:class:`Decoding` holds every setting; the model's own ``generation_config.json`` defaults
(beam search, repetition penalties, sampling) are not applied, only its token ids, so two
models are decoded alike and the provenance says how. Greedy decoding is the default. Seeded
sampling draws the next token as ``argmax(logits / temperature + G)`` after top-k / top-p
filtering, with Gumbel noise ``G`` from a generator of the context's own, seeded with
:func:`~policies.seeding.context_seed` ``(seed, context.id)`` on the CPU (the Gumbel-max
trick: exactly a draw from ``softmax(logits / temperature)``). So a context's draws never
depend on which other contexts share its batch, nor on the device.

Prompts are cut into batches of ``batch_size`` after sorting them by token length (less
padding); causal models are padded on the left, with the attention mask and the position ids
that make a padded prompt attend to the same tokens at the same positions as alone. Padding
and batch size still change the order of some floating-point sums (a batch of one runs
matrix-vector kernels; a padded row's attention reduces over more, masked, positions), so the
logits agree across batch sizes to float rounding, not bit for bit (the tiny test models in
float32, logits up to 0.6: at most 2.4e-7 apart). Greedy outputs therefore agree unless two
candidate tokens are within that rounding of each other; ``batch_size=1`` makes each response
independent of the other contexts bit for bit. Same inputs, settings and machine: the same
responses, every run.

Examples
--------
>>> import tempfile
>>> from contexts import generate_grid
>>> from examples.tiny_models import write_tiny_model
>>> folder = write_tiny_model(tempfile.mkdtemp())          # random weights: the texts are noise
>>> policy = GenerativePolicy(folder, decoding=Decoding(max_new_tokens=5))
>>> context = generate_grid()["gen/area=1.0/pricerange=0.0/food=0.0/method=byconstraints"]
>>> print(policy.prompt(context).splitlines()[2:4])
["The system's belief about the user's goal:", 'area: centre 1.00']
>>> policy.respond(context) == policy.respond(context)
True
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import hashlib
import os
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from policies.lm.prompts import PromptTemplate, act_from_output, dialogue_history
from simscore.checks import check_bool, check_choice, check_int, check_number, check_seed
from simscore.errors import (
    InvalidContextError,
    MissingDependencyError,
    ShortenedPromptWarning,
    UnparsedActWarning,
    UnsupportedModelError,
)
from simscore.models import open_model_folder
from simscore.models.chat_templates import ChatTemplate
from simscore.responses import Response

__all__ = ["GenerativePolicy", "Decoding", "model_folder_sha256", "quiet_transformers"]

_DTYPES = ("float32", "float16", "bfloat16", "float64")


# -- decoding -----------------------------------------------------------------------------------


@contextlib.contextmanager
def quiet_transformers() -> Iterator[None]:
    """Hide transformers' progress bars and warnings for the block; restore both settings after.

    Loading shows progress bars; generating warns that ``input_ids`` "may be padded" whenever a
    finished row is filled with pad tokens after its end (transformers drops an all-ones
    attention mask, then sees the pads): nothing attends to those, and the attention mask of a
    padded prompt is always passed.
    """
    from transformers.utils import logging as hf_logging

    bars = hf_logging.is_progress_bar_enabled()
    verbosity = hf_logging.get_verbosity()
    if bars:
        hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()


@dataclass(frozen=True)
class Decoding:
    """How the next tokens are chosen.

    Parameters
    ----------
    max_new_tokens : int
        Tokens generated per response at most (default 40).
    sample : bool
        False (default): greedy, the most probable token every step. True: seeded sampling.
    temperature : float
        Sampling temperature (> 0; default 1).
    top_k : int or None
        Sample among the ``top_k`` most probable tokens only.
    top_p : float or None
        Sample among the most probable tokens whose probabilities sum to ``top_p`` (0 < p <= 1).
    seed : int
        Base seed of sampling; context ``c`` samples with ``context_seed(seed, c.id)``.

    Examples
    --------
    >>> Decoding(sample=True, top_p=0.9).to_json()["top_p"]
    0.9
    >>> Decoding(temperature=0.5)
    Traceback (most recent call last):
    ...
    ValueError: temperature, top_k and top_p apply to sampling only: pass sample=True
    """

    max_new_tokens: int = 40
    sample: bool = False
    temperature: float = 1.0
    top_k: int | None = None
    top_p: float | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        check_int("max_new_tokens", self.max_new_tokens, minimum=1)
        check_bool("sample", self.sample)
        check_number("temperature", self.temperature, minimum=0.0, exclusive_minimum=True)
        if self.top_k is not None:
            check_int("top_k", self.top_k, minimum=1)
        if self.top_p is not None:
            check_number("top_p", self.top_p, minimum=0.0, exclusive_minimum=True, maximum=1.0)
        check_seed("seed", self.seed)
        if not self.sample and (self.temperature != 1.0 or self.top_k is not None or self.top_p is not None):
            raise ValueError("temperature, top_k and top_p apply to sampling only: pass sample=True")

    def to_json(self) -> dict[str, Any]:
        """Every setting, for the responses' provenance."""
        return dataclasses.asdict(self)


# -- the model folder ---------------------------------------------------------------------------


def model_folder_sha256(folder: str | os.PathLike[str]) -> str:
    """A content hash of a model folder: SHA-256 over every file's relative path and bytes.

    Files in sorted order of their relative (POSIX) paths, recursively; names starting with
    ``.`` (``.git``, caches) are left out. Renaming or moving the folder keeps the hash;
    changing any byte of any file changes it.

    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "config.json").write_text("{}")
    >>> len(model_folder_sha256(folder)), model_folder_sha256(folder) == model_folder_sha256(str(folder))
    (64, True)
    """
    root = Path(folder)
    digest = hashlib.sha256()
    files = sorted(
        (p.relative_to(root).as_posix(), p)
        for p in root.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts)
    )
    for relative, path in files:
        digest.update(relative.encode("utf-8") + b"\0")
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        digest.update(b"\0")
    return digest.hexdigest()


def _class_names(mapping: Mapping[str, Any]) -> set[str]:
    names: set[str] = set()
    for value in mapping.values():
        names.update([value] if isinstance(value, str) else value)
    return names


def _generation_kind(config: Any, folder: Path | str) -> tuple[Literal["causal", "encoder-decoder"], str]:
    """Whether the folder (or model object, named) holds a causal or an encoder-decoder generator, and its
    architecture."""
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES,
    )

    causal = _class_names(MODEL_FOR_CAUSAL_LM_MAPPING_NAMES)
    seq2seq = _class_names(MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES)
    architectures = list(getattr(config, "architectures", None) or [])
    for architecture in architectures:
        if architecture in seq2seq:
            return "encoder-decoder", architecture
        if architecture in causal:
            return "causal", architecture
    model_type = getattr(config, "model_type", "?")
    if not architectures:  # a hand-written config: go by its model type (missing weights are caught on loading)
        if getattr(config, "is_encoder_decoder", False) and model_type in MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES:
            return "encoder-decoder", str(MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES[model_type])
        if not getattr(config, "is_encoder_decoder", False) and model_type in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
            return "causal", str(MODEL_FOR_CAUSAL_LM_MAPPING_NAMES[model_type])
    found = ", ".join(architectures) or "no architecture"
    raise UnsupportedModelError(
        f"{folder} holds {found} (model type {model_type!r}), which does not generate text; expected a causal "
        "language model (e.g. GPT2LMHeadModel, LlamaForCausalLM) or an encoder-decoder (e.g. "
        "T5ForConditionalGeneration, BartForConditionalGeneration)"
    )


@dataclass(frozen=True)
class _Loaded:
    model: Any
    tokenizer: Any
    kind: Literal["causal", "encoder-decoder"]
    architecture: str
    model_type: str
    max_positions: int | None


def _load(folder: Path, device: Any, dtype: Any) -> _Loaded:
    """Tokenizer and model of ``folder`` (through :mod:`simscore.models`), on ``device`` in ``dtype``, in
    evaluation mode."""
    from transformers import AutoModelForCausalLM, AutoModelForSeq2SeqLM

    checked = open_model_folder(folder, tokenizer=False)
    config = checked.load_config()
    kind, architecture = _generation_kind(config, folder)
    tokenizer = checked.load_tokenizer()  # its files checked here, after the model's kind
    auto = AutoModelForSeq2SeqLM if kind == "encoder-decoder" else AutoModelForCausalLM
    with quiet_transformers():
        model, info = checked.load_model(auto, output_loading_info=True)
    missing = sorted(info.get("missing_keys") or ())
    if missing:
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        raise UnsupportedModelError(
            f"{folder}: the weights lack {len(missing)} tensor(s) of {architecture} ({shown}); they would be random "
            "(e.g. a base model saved without its language-model head)"
        )
    model.to(device=device, dtype=dtype)
    return _Loaded(model, tokenizer, kind, architecture, str(getattr(config, "model_type", "")),
                   _max_positions(config))


def _max_positions(config: Any) -> int | None:
    """The model's context window in tokens, where its configuration says."""
    return next(
        (getattr(config, key) for key in ("max_position_embeddings", "n_positions", "n_ctx")
         if isinstance(getattr(config, key, None), int)),
        None,
    )


def _token_ids(value: Any) -> list[int]:
    if value is None:
        return []
    return [int(v) for v in value] if isinstance(value, (list, tuple)) else [int(value)]


class _GumbelNoise:
    """Adds Gumbel noise drawn from each row's own generator (a logits processor of ``generate``).

    ``argmax(scores + G)`` with standard Gumbel ``G`` is a draw from ``softmax(scores)``; each
    row's noise is the next draw of its context's generator, on the CPU, so it is the same
    whatever the batch and device.
    """

    def __init__(self, seeds: Sequence[int]) -> None:
        import torch

        self.generators = [torch.Generator().manual_seed(seed) for seed in seeds]

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch

        width = scores.shape[-1]
        uniform = torch.stack([torch.rand(width, generator=g, dtype=torch.float64) for g in self.generators])
        noise = -torch.log(-torch.log(uniform))  # u = 0 gives -inf: that token is never drawn
        return scores + noise.to(device=scores.device, dtype=scores.dtype)


# -- the policy ---------------------------------------------------------------------------------


class GenerativePolicy:
    """A local Hugging Face language model as a simscore policy (see the module docstring).

    Parameters
    ----------
    model_dir : path-like
        The model folder (``config.json``, ``*.safetensors``, tokenizer files), as written by
        ``save_pretrained``. A causal language model or an encoder-decoder.
    template : PromptTemplate, optional
        How contexts become prompts (default ``PromptTemplate()``).
    decoding : Decoding, optional
        How tokens are chosen (default greedy, 40 new tokens at most).
    act_output : bool
        Ask for an act in simscore's act syntax and parse it (see the module docstring).
    batch_size : int
        Prompts generated together (default 8); ``1`` makes responses independent of the
        other contexts bit for bit.
    device : str
        ``"cpu"`` (default), ``"cuda"``, ``"cuda:1"``, ``"mps"``, ...
    dtype : {"float32", "float16", "bfloat16", "float64"}
        The model's floating-point type (default float32).
    name : str, optional
        Policy name (default: the model folder's name).
    provenance : mapping, optional
        JSON-serialisable facts added to the adapter's own; given keys win.
    progress : bool
        Show a progress bar over the batches.

    Attributes
    ----------
    name : str
    kind : {"causal", "encoder-decoder"}
    model_sha256 : str or None
        :func:`model_folder_sha256` of the folder, computed once when loading (None for a model
        object given to :meth:`from_model`).
    live : bool
        Whether the model is an object given to :meth:`from_model` (answered under
        ``torch.no_grad``, followed to whatever device it is on) rather than read from a folder.
    last_run : dict
        Counts of the latest :meth:`respond_batch` call: ``responses``, ``unparsed_acts``,
        ``shortened_prompts`` (also in :attr:`provenance`).

    Raises
    ------
    ModelNotFoundError
        The folder does not exist.
    UnsupportedModelError
        The folder cannot be loaded safely (:func:`simscore.models.open_model_folder`: no
        ``config.json``, weights only in pickles or none, no tokenizer, code of its own, sizes
        beyond their bounds) or holds a model that does not generate text (an encoder such as
        BERT), or weights that do not fit the configuration; the message names the folder and
        what it holds.
    MissingDependencyError
        torch or transformers is not installed (the ``text`` extra).

    Notes
    -----
    On a CPU shared with other work, torch's intra-op threads wait on each other: with the
    tiny test GPT-2 on two busy cores, ``torch.set_num_threads(1)`` (or ``OMP_NUM_THREADS=1``
    for ``simscore respond``) answered 264 contexts/s at batch size 8 against 31 with two
    threads. The thread count changes speed, not which tokens are chosen (up to the float
    rounding above).

    Examples
    --------
    With a model folder (tests build a tiny random one)::

        policy = GenerativePolicy("models/my-finetuned-gpt2", decoding=Decoding(max_new_tokens=30))
        responses = run_policy(policy, contexts)          # batched, greedy
        responses.provenance["model_sha256"]
    """

    def __init__(
        self,
        model_dir: str | os.PathLike[str],
        *,
        template: PromptTemplate | None = None,
        decoding: Decoding | None = None,
        act_output: bool = False,
        batch_size: int = 8,
        device: str = "cpu",
        dtype: str = "float32",
        name: str | None = None,
        provenance: Mapping[str, Any] | None = None,
        progress: bool = False,
    ) -> None:
        self._require()
        import torch

        if not isinstance(model_dir, (str, os.PathLike)):
            raise TypeError(f"model_dir must be a path to a local model folder, got {type(model_dir).__name__}")
        check_choice("dtype", dtype, _DTYPES)
        if not isinstance(device, str) or not device.strip():
            raise ValueError(f"device must be a torch device such as 'cpu', 'cuda', 'cuda:1' or 'mps', got {device!r}")
        try:
            torch_device = torch.device(device.strip())
        except RuntimeError:  # torch's own message lists every device type it knows
            raise ValueError(f"device must be a torch device such as 'cpu', 'cuda', 'cuda:1' or 'mps', got "
                             f"{device!r}") from None
        if torch_device.type == "cuda" and not torch.cuda.is_available():
            raise ValueError(f"device {device!r} is not available (torch.cuda.is_available() is False)")
        try:  # mps, xpu, ...: a device of a kind this torch was not built for, refused before the model loads
            torch.empty(0, device=torch_device)
        except (RuntimeError, AssertionError) as exc:
            reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
            raise ValueError(f"device {device!r} is not available: {reason}") from None
        folder = Path(model_dir)
        self._check_options(template, decoding, act_output, batch_size, name, progress)
        loaded = _load(folder, torch_device, getattr(torch, dtype))
        self._bind(loaded, template, decoding, act_output, batch_size, name, provenance, progress,
                   source=folder, sha256=model_folder_sha256(folder), device=torch_device)
        # the folder's own model: only the token ids of its generation defaults are kept (Decoding says the rest)
        self.model.generation_config = self.generation_config

    @classmethod
    def from_model(
        cls,
        model: Any,
        tokenizer: Any,
        *,
        template: PromptTemplate | None = None,
        decoding: Decoding | None = None,
        act_output: bool = False,
        batch_size: int = 8,
        name: str = "model",
        provenance: Mapping[str, Any] | None = None,
        progress: bool = False,
    ) -> GenerativePolicy:
        """A policy answering with a model object already in memory (e.g. one being trained).

        The model is used as it is, where it is: on its device, in its dtype, never copied, moved
        or reloaded, and its ``generation_config`` is left alone (the policy passes its own).
        Each :meth:`respond_batch` switches it to evaluation mode under ``torch.no_grad`` and
        gives every submodule its training flag back afterwards, so a training loop can call it
        between steps (:mod:`simscore.integrations.hf`). Greedy decoding draws no random numbers
        (no dropout in evaluation mode), so the global random generators are untouched.

        Parameters
        ----------
        model : transformers.PreTrainedModel
            A causal language model or an encoder-decoder (a PEFT model wrapping one works too).
        tokenizer : transformers.PreTrainedTokenizerBase
            Its tokenizer (its chat template, if any, renders the prompts).
        template, decoding, act_output, batch_size, provenance, progress
            As for :class:`GenerativePolicy`.
        name : str
            Policy name (default ``"model"``).

        Returns
        -------
        GenerativePolicy
            With ``model_dir`` and ``model_sha256`` None: an object in memory has no folder to hash.

        Examples
        --------
        >>> import tempfile
        >>> from contexts import generate_grid
        >>> from examples.tiny_models import write_tiny_model
        >>> loaded = GenerativePolicy(write_tiny_model(tempfile.mkdtemp()), decoding=Decoding(max_new_tokens=4))
        >>> same = GenerativePolicy.from_model(loaded.model.train(), loaded.tokenizer, decoding=Decoding(max_new_tokens=4))
        >>> contexts = list(generate_grid())[:3]
        >>> same.respond_batch(contexts) == loaded.respond_batch(contexts), loaded.model.training
        (True, True)
        """
        cls._require()
        policy = cls.__new__(cls)
        policy._check_options(template, decoding, act_output, batch_size, name, progress)
        config = getattr(model, "config", None)
        if config is None or not callable(getattr(model, "generate", None)):
            raise TypeError(f"model must be a transformers model with a config and generate(), got {type(model).__name__}")
        if not callable(getattr(tokenizer, "batch_decode", None)):
            raise TypeError(f"tokenizer must be a transformers tokenizer, got {type(tokenizer).__name__}")
        kind, architecture = _generation_kind(config, type(model).__name__)
        loaded = _Loaded(model, tokenizer, kind, architecture, str(getattr(config, "model_type", "")),
                         _max_positions(config))
        policy._bind(loaded, template, decoding, act_output, batch_size, name, provenance, progress,
                     source=None, sha256=None, device=None)
        return policy

    @staticmethod
    def _require() -> None:
        try:
            import torch  # noqa: F401
            import transformers  # noqa: F401
        except ImportError as exc:
            raise MissingDependencyError(
                "GenerativePolicy needs torch and transformers, the text extra: pip install 'simscore-dialogue[text]'"
            ) from exc

    @staticmethod
    def _check_options(template: Any, decoding: Any, act_output: Any, batch_size: Any, name: Any,
                       progress: Any) -> None:
        if template is not None and not isinstance(template, PromptTemplate):
            raise TypeError(f"template must be a PromptTemplate, got {type(template).__name__}")
        if decoding is not None and not isinstance(decoding, Decoding):
            raise TypeError(f"decoding must be a Decoding, got {type(decoding).__name__}")
        check_bool("act_output", act_output)
        check_int("batch_size", batch_size, minimum=1, error=ValueError)
        if name is not None and (not isinstance(name, str) or not name):
            raise TypeError(f"name must be a non-empty string or None, got {name!r}")
        check_bool("progress", progress)

    def _bind(self, loaded: _Loaded, template: PromptTemplate | None, decoding: Decoding | None, act_output: bool,
              batch_size: int, name: str | None, provenance: Mapping[str, Any] | None, progress: bool, *,
              source: Path | None, sha256: str | None, device: Any) -> None:
        """Every attribute, from a loaded (or live) model and the checked options."""
        import transformers

        self.template = PromptTemplate() if template is None else template
        self.decoding = Decoding() if decoding is None else decoding
        self.act_output = act_output
        self.batch_size = batch_size
        self.progress = progress
        #: the folder read, or None for a model object given to :meth:`from_model`
        self.model_dir: Path | None = source
        self.live = source is None
        self._device = device  # the folder's model stays where it was put; a live one is followed
        self.model, self.tokenizer = loaded.model, loaded.tokenizer
        parameter = next(iter(self.model.parameters()), None)
        self.dtype = str(parameter.dtype).removeprefix("torch.") if parameter is not None else "float32"
        self.kind, self.architecture, self.model_type = loaded.kind, loaded.architecture, loaded.model_type
        self.model_sha256 = sha256
        self.name: str = name if name is not None else (source.resolve().name if source is not None else "model")
        #: the tokenizer's chat template, rendered within bounds (None without one)
        self.chat_template = ChatTemplate.of(self.tokenizer, source=str(source) if source is not None else self.name)
        self.chat = self.template.chat(self.chat_template)
        ids = getattr(self.model, "generation_config", None) or transformers.GenerationConfig()
        self.eos_token_ids = (
            _token_ids(ids.eos_token_id) or _token_ids(getattr(self.model.config, "eos_token_id", None))
            or _token_ids(self.tokenizer.eos_token_id)
        )
        pad = self.tokenizer.pad_token_id
        self.pad_token_id: int = int(pad) if pad is not None else (self.eos_token_ids[0] if self.eos_token_ids else 0)
        self.generation_config = transformers.GenerationConfig(
            max_new_tokens=self.decoding.max_new_tokens,
            do_sample=False,
            num_beams=1,
            eos_token_id=self.eos_token_ids or None,
            pad_token_id=self.pad_token_id,
            bos_token_id=ids.bos_token_id,
            decoder_start_token_id=ids.decoder_start_token_id,
        )
        positions = loaded.max_positions
        self.max_prompt_tokens = (
            None if positions is None else positions - (self.decoding.max_new_tokens if self.kind == "causal" else 0)
        )
        if self.max_prompt_tokens is not None and self.max_prompt_tokens < 1:
            raise ValueError(
                f"max_new_tokens={self.decoding.max_new_tokens} leaves no room for a prompt in the model's "
                f"{positions} positions"
            )
        self._extra = dict(provenance or {})
        self.last_run: dict[str, int] = {"responses": 0, "unparsed_acts": 0, "shortened_prompts": 0}
        self.provenance  # noqa: B018 - checks that the given provenance is JSON-serialisable, now

    @property
    def device(self) -> Any:
        """Where the model runs: the device asked for, or a live model's device now (a model being trained
        may have been moved since the policy was made)."""
        import torch

        if self._device is not None:
            return self._device
        parameter = next(iter(self.model.parameters()), None)
        return parameter.device if parameter is not None else torch.device("cpu")

    def __repr__(self) -> str:
        where = str(self.model_dir) if self.model_dir is not None else f"<{type(self.model).__name__} in memory>"
        return f"GenerativePolicy({where!r}, kind={self.kind!r}, name={self.name!r})"

    def with_seed(self, seed: int) -> GenerativePolicy:
        """This policy sampling with base seed ``seed``: the same loaded model, settings and name.

        For drawing several samples per context (``simscore respond --samples K``) without
        loading the model K times. The copy shares the model and tokenizer (neither changes
        while generating) and has its own :attr:`last_run`. Greedy decoding draws nothing: a
        policy without ``sample=True`` is an error.

        Raises
        ------
        ValueError
            The policy decodes greedily, or ``seed`` is not a seed.
        """
        if not self.decoding.sample:
            raise ValueError(f"{self.name}: greedy decoding draws nothing, a seed changes no response (pass "
                             "Decoding(sample=True))")
        other = copy.copy(self)
        other.decoding = dataclasses.replace(self.decoding, seed=check_seed("seed", seed, error=ValueError))
        other.last_run = {"responses": 0, "unparsed_acts": 0, "shortened_prompts": 0}
        return other

    @property
    def provenance(self) -> dict[str, Any]:
        """The model, its hash, the prompt template, the decoding settings and the latest run's counts."""
        import torch
        import transformers

        from simscore.io import dumps

        chat_template = self.chat_template.template if self.chat and self.chat_template is not None else None
        facts: dict[str, Any] = {
            "adapter": "generative",
            "model": self.model_dir.resolve().name if self.model_dir is not None else self.name,
            "model_dir": str(self.model_dir) if self.model_dir is not None else None,
            "model_sha256": self.model_sha256,
            "model_type": self.model_type,
            "architecture": self.architecture,
            "kind": self.kind,
            "template": self.template.to_json(),
            "chat_template_sha256": (
                hashlib.sha256(str(chat_template).encode("utf-8")).hexdigest() if chat_template else None
            ),
            "decoding": self.decoding.to_json(),
            "act_output": self.act_output,
            "batch_size": self.batch_size,
            "device": str(self.device),
            "dtype": self.dtype,
            "versions": {"torch": torch.__version__, "transformers": transformers.__version__},
            **self.last_run,
        }
        facts.update(self._extra)
        try:
            dumps(facts)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"provenance must be JSON-serialisable: {exc}") from None
        return facts

    # -- prompts --------------------------------------------------------------------------------

    def _encode(self, context: Any) -> tuple[list[int], int, str]:
        """The prompt's token ids, shortened to fit the model if needed, the turns left out, and its text."""
        skip = 0
        while True:
            text = self.template.render(context, self.chat_template, act_output=self.act_output, skip_turns=skip)
            # a chat template writes the special tokens itself
            ids = self.tokenizer(text, add_special_tokens=not self.chat)["input_ids"]
            if self.max_prompt_tokens is None or len(ids) <= self.max_prompt_tokens:
                return list(ids), skip, text
            shown = len(dialogue_history(context)) - skip if self.template.source_of(context) == "history" else 0
            if shown <= 1:
                raise InvalidContextError(
                    f"context {getattr(context, 'id', context)!r}: the prompt has {len(ids)} tokens even with "
                    f"{'only the last turn' if shown else 'the belief'}; the model takes {self.max_prompt_tokens} "
                    f"(its positions less max_new_tokens)"
                )
            skip += 1

    def prompt(self, context: Any) -> str:
        """The prompt the model reads for ``context`` (chat template applied; shortened if needed)."""
        return self._encode(context)[2]

    # -- generating -----------------------------------------------------------------------------

    @staticmethod
    def _context_id(context: Any) -> str:
        context_id = getattr(context, "id", None)
        if not isinstance(context_id, str):
            raise InvalidContextError(f"sampling draws per context id: a context needs a string 'id', got {context!r}")
        return context_id

    def _generate(self, batch: list[list[int]], seeds: list[int]) -> list[str]:
        """Generated texts (special tokens removed, stripped) for one batch of prompts."""
        import torch
        from transformers import LogitsProcessorList, TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper

        width = max(map(len, batch))
        input_ids = torch.full((len(batch), width), self.pad_token_id, dtype=torch.long)
        attention = torch.zeros((len(batch), width), dtype=torch.long)
        for row, ids in enumerate(batch):
            # causal models continue the prompt's last token: pad on the left; encoders on the right
            where = slice(width - len(ids), width) if self.kind == "causal" else slice(0, len(ids))
            input_ids[row, where] = torch.tensor(ids, dtype=torch.long)
            attention[row, where] = 1
        processors = LogitsProcessorList()
        if self.decoding.sample:
            if self.decoding.temperature != 1.0:
                processors.append(TemperatureLogitsWarper(self.decoding.temperature))
            if self.decoding.top_k is not None:
                processors.append(TopKLogitsWarper(self.decoding.top_k))
            if self.decoding.top_p is not None:
                processors.append(TopPLogitsWarper(self.decoding.top_p))
            processors.append(_GumbelNoise(seeds))  # then greedy decoding takes the argmax: a draw
        # a live model goes on training: tensors made under inference_mode must not reach its autograd
        no_grad = torch.no_grad() if self.live else torch.inference_mode()
        with no_grad, quiet_transformers():
            output = self.model.generate(
                input_ids=input_ids.to(self.device),
                attention_mask=attention.to(self.device),
                generation_config=self.generation_config,
                logits_processor=processors,
            )
        new = output[:, width:] if self.kind == "causal" else output[:, 1:]  # after the prompt / the start token
        return [str(text).strip() for text in self.tokenizer.batch_decode(new.cpu(), skip_special_tokens=True)]

    def _response(self, text: str) -> tuple[Response, bool]:
        """The response for a generated text, and whether it was an act that did not parse."""
        if not self.act_output:
            return Response(text=text), False
        act = act_from_output(text)
        return (Response(text=text), True) if act is None else (Response(act), False)

    def respond(self, context: Any) -> Response:
        """The model's response to one context (a batch of one)."""
        return self.respond_batch([context])[0]

    def respond_batch(self, contexts: Sequence[Any]) -> list[Response]:
        """The responses to ``contexts``, in order, generated ``batch_size`` prompts at a time."""
        from policies.seeding import context_seed

        items = list(contexts)
        encoded = [self._encode(context) for context in items]
        seeds = [context_seed(self.decoding.seed, self._context_id(c)) for c in items] if self.decoding.sample else []
        order = sorted(range(len(items)), key=lambda i: len(encoded[i][0]))
        texts: list[str] = [""] * len(items)
        from simscore.progress import track

        starts = range(0, len(order), self.batch_size)
        bar = track(starts, f"generating ({self.name})", unit="batches", leave=False, enabled=self.progress)
        modules = list(self.model.modules())
        modes = [module.training for module in modules]
        self.model.eval()
        try:
            for start in bar:
                chosen = order[start : start + self.batch_size]
                generated = self._generate([encoded[i][0] for i in chosen], [seeds[i] for i in chosen] if seeds else [])
                for i, text in zip(chosen, generated):
                    texts[i] = text
        finally:  # every submodule's own flag back (a frozen part may stay in evaluation mode while training)
            for module, mode in zip(modules, modes):
                module.training = mode
        responses, unparsed = [], []
        for text in texts:
            response, failed = self._response(text)
            responses.append(response)
            if failed:
                unparsed.append(text)
        shortened = sum(1 for _, skip, _ in encoded if skip)
        self.last_run = {"responses": len(items), "unparsed_acts": len(unparsed), "shortened_prompts": shortened}
        if unparsed:
            warnings.warn(
                f"{self.name}: {len(unparsed)} of {len(items)} responses did not parse as an act (first: "
                f"{unparsed[0][:80]!r}); they keep their text and have no action",
                UnparsedActWarning,
                stacklevel=2,
            )
        if shortened:
            warnings.warn(
                f"{self.name}: {shortened} of {len(items)} prompts were too long for the model "
                f"({self.max_prompt_tokens} tokens); their oldest dialogue turns were left out",
                ShortenedPromptWarning,
                stacklevel=2,
            )
        return responses
