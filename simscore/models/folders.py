"""Local model folders, read safely: the one way simscore, contexts and policies load a model.

Every model simscore loads -- BERTScore's and the ``emb_*`` measures' encoders, a generative
policy's language model, their tokenizers and chat templates -- goes through this module:
:func:`open_model_folder` checks a folder without loading anything, and the
:class:`ModelFolder` it returns loads the configuration, tokenizer and model with
transformers; :class:`~simscore.models.chat_templates.ChatTemplate` renders a tokenizer's chat template. What it
guarantees:

* **Local folders only, never a download.** A path that is not a local folder is an error
  (:class:`~simscore.errors.ModelNotFoundError`); transformers is called with
  ``local_files_only=True`` and the Hugging Face Hub client switched offline
  (:func:`hub_offline`).
* **No code from the folder.** ``trust_remote_code=False`` on every call, so transformers
  never asks its interactive question on stdin; a ``config.json`` or
  ``tokenizer_config.json`` whose ``auto_map`` names classes transformers does not implement
  itself is refused by name before transformers reads it (their code would be the folder's).
* **safetensors only.** A folder whose weights are only pickles (``pytorch_model.bin``,
  ``*.pt``, ``*.ckpt``, ...) is refused by name before torch sees a byte of them; transformers
  is called with ``use_safetensors=True``. The safetensors headers are read and checked
  (bounded size, every tensor's byte range consistent with its shape and dtype).
* **Sizes checked before anything is allocated or parsed.** Every JSON file transformers
  reads is bounded in size (:data:`MAX_CONFIG_BYTES`, :data:`MAX_TOKENIZER_BYTES`) and
  nesting (:data:`MAX_JSON_DEPTH`) and parsed here first, in Python; the sizes that
  ``config.json`` declares are bounded one by one (:data:`SIZE_LIMITS`) and against the weights
  (:data:`ALLOWANCE_ELEMENTS`): a table of ``vocab_size`` or ``max_position_embeddings`` rows,
  or ``num_hidden_layers`` layers, that would hold more numbers than the weights hold is a
  configuration that lies. Tokenizer files are bounded in bytes and their vocabularies in
  entries (:data:`MAX_VOCABULARY`) before the Rust tokenizer parses them.
* **Chat templates in bounded time and memory** (:class:`~simscore.models.chat_templates.ChatTemplate`): rendered in a
  separate process with jinja's immutable sandbox, as transformers renders them, under a
  time limit, a memory limit and an output limit, with no files to open.
* **Named errors** for each refusal (:class:`~simscore.errors.ModelNotFoundError`,
  :class:`~simscore.errors.UnsupportedModelError`, :class:`~simscore.errors.ChatTemplateError`),
  each naming the folder and the problem, and a
  :class:`~simscore.errors.CausalEncoderWarning` when a causal language model is loaded as a
  sentence encoder (:meth:`ModelFolder.warn_if_causal`).

Examples
--------
>>> import tempfile
>>> open_model_folder(tempfile.mkdtemp() + "/nowhere")
Traceback (most recent call last):
...
simscore.errors.ModelNotFoundError: model folder .../nowhere does not exist (models are read from local folders ...)
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import stat
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simscore.errors import (
    CausalEncoderWarning,
    MissingDependencyError,
    ModelNotFoundError,
    UnsupportedModelError,
)
from simscore.models.chat_templates import MAX_CHAT_TEMPLATE_CHARS

__all__ = [
    "ModelFolder",
    "open_model_folder",
    "existing_folder",
    "read_model_json",
    "hub_offline",
    "MAX_CONFIG_BYTES",
    "MAX_TOKENIZER_BYTES",
    "MAX_JSON_DEPTH",
    "MAX_VOCABULARY",
    "SIZE_LIMITS",
    "ALLOWANCE_ELEMENTS",
    "MAX_SAFETENSORS_HEADER",
]

# -- limits -------------------------------------------------------------------------------------

#: Largest JSON file of a model folder other than ``tokenizer.json`` (``config.json``,
#: ``tokenizer_config.json``, ``modules.json``, a safetensors index, ...): 16 MiB. Real ones
#: are kilobytes; the largest we know, Gemma 3's ``tokenizer_config.json`` with its 6,000
#: added tokens listed, is 1.2 MB.
MAX_CONFIG_BYTES = 16 << 20
#: Largest tokenizer file (``tokenizer.json``, ``vocab.json``, ``vocab.txt``, ``merges.txt``,
#: a SentencePiece ``*.model``): 64 MiB, twice the largest in common use (Gemma 3's
#: ``tokenizer.json``, 262,144 tokens, 33 MB). Parsing one costs about ten times its size in
#: memory, so this also bounds the tokenizer's memory.
MAX_TOKENIZER_BYTES = 64 << 20
#: Deepest nesting of a JSON file: 64 levels. Real files nest 8 at most (a sequence of
#: normalizers in ``tokenizer.json``); Python's parser stops near 1,000 and the Rust
#: tokenizer's at 128, each with a traceback.
MAX_JSON_DEPTH = 64
#: Most entries of a vocabulary (a tokenizer's, and ``vocab_size`` in ``config.json``):
#: 2**20 = 1,048,576, four times the largest in use (Gemma 3: 262,144). Merges may number
#: twice as many.
MAX_VOCABULARY = 1 << 20
#: Bounds of the sizes a ``config.json`` declares, by key (also in nested configurations such
#: as ``text_config``), each far above the largest model in use: positions 2**24 (Llama 4
#: Scout declares 10,485,760), widths 2**17 (hidden sizes reach 16,384-25,600, feed-forward
#: widths 73,728), layers 1,024 (the largest models have 126-160), heads and experts 4,096
#: (128 and 512). A value that is not a whole number in range is refused by name.
SIZE_LIMITS: Mapping[str, int] = {
    **dict.fromkeys(("vocab_size", "type_vocab_size"), MAX_VOCABULARY),
    **dict.fromkeys(("max_position_embeddings", "n_positions", "n_ctx", "max_sequence_length", "seq_length",
                     "max_seq_len", "max_source_positions", "max_target_positions"), 1 << 24),
    **dict.fromkeys(("hidden_size", "n_embd", "d_model", "dim", "embedding_size", "intermediate_size", "n_inner",
                     "d_ff", "ffn_dim", "encoder_ffn_dim", "decoder_ffn_dim", "hidden_dim", "d_kv", "head_dim",
                     "moe_intermediate_size", "kv_lora_rank", "q_lora_rank"), 1 << 17),
    **dict.fromkeys(("num_hidden_layers", "n_layer", "n_layers", "num_layers", "encoder_layers", "decoder_layers",
                     "num_decoder_layers"), 1024),
    **dict.fromkeys(("num_attention_heads", "n_head", "n_heads", "num_heads", "num_key_value_heads",
                     "encoder_attention_heads", "decoder_attention_heads", "num_experts", "num_local_experts",
                     "n_routed_experts"), 4096),
}
#: Sizes a model divides by (its width by the heads): these must be at least 1.
_AT_LEAST_ONE = frozenset(("num_attention_heads", "n_head", "n_heads", "num_heads", "num_key_value_heads",
                           "encoder_attention_heads", "decoder_attention_heads"))
#: The model widths the tables of a configuration are measured in.
_WIDTHS = ("hidden_size", "n_embd", "d_model", "dim")
_TABLES = ("vocab_size", "max_position_embeddings", "n_positions", "n_ctx", "max_source_positions",
           "max_target_positions")
_LAYERS = ("num_hidden_layers", "n_layer", "n_layers", "num_layers", "encoder_layers", "decoder_layers")
#: A configuration may declare tables (``vocab_size`` x width, positions x width) and layers
#: (layers x width**2) of at most four times the numbers its weights hold, or of this many
#: numbers (2**24, 64 MB of float32), whichever is larger. A real model's embedding table is
#: part of its weights, and a rotary model's positions x width stays below its weights
#: (Llama 3.1 8B: 0.5 of 8 billion; Qwen2.5-7B-1M: 3.6 of 7.6); ALBERT, sharing one layer
#: among twelve, comes closest (twice its weights).
ALLOWANCE_ELEMENTS = 1 << 24
#: Largest safetensors header, the format's own limit (100,000,000 bytes).
MAX_SAFETENSORS_HEADER = 100_000_000

#: Bits per element of each safetensors dtype.
_DTYPE_BITS = {"BOOL": 8, "U8": 8, "I8": 8, "F8_E5M2": 8, "F8_E4M3": 8, "F8_E8M0": 8, "I16": 16, "U16": 16,
               "F16": 16, "BF16": 16, "I32": 32, "U32": 32, "F32": 32, "I64": 64, "U64": 64, "F64": 64,
               "C64": 64, "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6}
#: Weight files that are pickles (or formats simscore does not read), named when they are all a folder has.
_FOREIGN_WEIGHTS = (".bin", ".pt", ".pth", ".ckpt", ".pkl", ".pickle", ".h5", ".msgpack", ".npz", ".joblib")
#: Files transformers reads as tokenizer vocabularies, and what holds each vocabulary.
_SENTENCEPIECE = ("spiece.model", "sentencepiece.bpe.model", "tokenizer.model", "sentencepiece.model")


# -- reading files within bounds ---------------------------------------------------------------


def _listing(folder: Path) -> str:
    names = sorted(p.name + ("/" if p.is_dir() else "") for p in folder.iterdir())
    shown = ", ".join(names[:12]) + (f" and {len(names) - 12} more" if len(names) > 12 else "")
    return shown or "nothing"


def _regular_size(path: Path, limit: int) -> int:
    """The size of ``path``, a regular file (after links) of at most ``limit`` bytes, or an error naming it."""
    try:
        info = path.stat()
    except OSError as exc:
        raise UnsupportedModelError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if not stat.S_ISREG(info.st_mode):
        raise UnsupportedModelError(f"{path}: not a regular file")
    if info.st_size > limit:
        raise UnsupportedModelError(f"{path}: {info.st_size:,} bytes, more than the {limit:,} a model file may have")
    return info.st_size


def _read_bytes(path: Path, limit: int) -> bytes:
    _regular_size(path, limit)
    with path.open("rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:  # grew since stat
        raise UnsupportedModelError(f"{path}: more than the {limit:,} bytes a model file may have")
    return data


def _depth(value: Any) -> int:
    """Nesting depth of parsed JSON (a scalar is 0), without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in children if isinstance(child, (dict, list)))
    return deepest


def read_model_json(path: str | os.PathLike[str], *, limit: int = MAX_CONFIG_BYTES) -> Any:
    """A JSON file of a model folder, parsed after its size and before its nesting is checked.

    Raises
    ------
    UnsupportedModelError
        Not a regular file, larger than ``limit`` bytes, not UTF-8 JSON, or nested deeper than
        :data:`MAX_JSON_DEPTH`; the message names the file.
    """
    path = Path(path)
    data = _read_bytes(path, limit)
    try:
        value = json.loads(data.decode("utf-8"))
    except RecursionError:
        raise UnsupportedModelError(f"{path}: JSON nested deeper than {MAX_JSON_DEPTH} levels") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise UnsupportedModelError(f"{path}: not a JSON file ({str(exc)[:200]})") from None
    if _depth(value) > MAX_JSON_DEPTH:
        raise UnsupportedModelError(f"{path}: JSON nested deeper than {MAX_JSON_DEPTH} levels")
    return value


def _read_object(path: Path, limit: int = MAX_CONFIG_BYTES) -> dict[str, Any]:
    value = read_model_json(path, limit=limit)
    if not isinstance(value, dict):
        raise UnsupportedModelError(f"{path}: expected a JSON object, got {type(value).__name__}")
    return value


def _count_lines(path: Path, limit: int) -> int:
    return _read_bytes(path, limit).count(b"\n") + 1


# -- the checks ---------------------------------------------------------------------------------


def existing_folder(path: str | os.PathLike[str]) -> Path:
    """``path`` as a :class:`~pathlib.Path` if it is a local folder, else an error naming it.

    Raises
    ------
    ModelNotFoundError
        Nothing is there (the message says that nothing is ever downloaded).
    UnsupportedModelError
        A file, not a folder.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"a model folder must be a path, got {type(path).__name__}")
    folder = Path(path)
    if not folder.exists():
        raise ModelNotFoundError(
            f"model folder {folder} does not exist (models are read from local folders only, never downloaded)"
        )
    if not folder.is_dir():
        raise UnsupportedModelError(f"{folder} is a file; expected a model folder (config.json, weights, tokenizer)")
    return folder


def _refuse_code(path: Path, data: Mapping[str, Any], known: bool) -> None:
    """Refuse a file whose ``auto_map`` would run the folder's code (``known``: transformers implements the type)."""
    auto_map = data.get("auto_map")
    if auto_map and not known:
        classes = ", ".join(f"{key} -> {value}" for key, value in list(dict(auto_map).items())[:3]) \
            if isinstance(auto_map, dict) else repr(auto_map)[:100]
        raise UnsupportedModelError(
            f"{path}: auto_map ({classes[:200]}) names the folder's own code, which simscore never runs "
            "(trust_remote_code stays off); use a model type transformers implements"
        )


def _check_sizes(config: Mapping[str, Any], where: str, weight_elements: int | None) -> None:
    """Bound every declared size of a configuration (and its nested ones) by :data:`SIZE_LIMITS`
    and, with the weights known, by what the weights hold (:data:`ALLOWANCE_ELEMENTS`)."""
    stack: list[tuple[str, Mapping[str, Any]]] = [("", config)]
    allowed = None if weight_elements is None else max(4 * weight_elements, ALLOWANCE_ELEMENTS)
    while stack:
        prefix, table = stack.pop()
        for key, value in table.items():
            if isinstance(value, dict):
                stack.append((f"{prefix}{key}.", value))
            elif key in SIZE_LIMITS and value is not None:
                limit, least = SIZE_LIMITS[key], int(key in _AT_LEAST_ONE)
                if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= limit:
                    raise UnsupportedModelError(
                        f"{where}: {prefix}{key} is {str(value)[:40]}; a model size here must be a whole number "
                        f"from {least} to {limit:,}"
                    )
        width = next((table[k] for k in _WIDTHS if isinstance(table.get(k), int) and table[k] > 0), None)
        if allowed is None or width is None:
            continue
        declared = [(k, table[k] * width) for k in _TABLES if isinstance(table.get(k), int)]
        declared += [(k, table[k] * width * width) for k in _LAYERS if isinstance(table.get(k), int)]
        for key, numbers in declared:
            if numbers > allowed:
                raise UnsupportedModelError(
                    f"{where}: {prefix}{key} = {table[key]:,} at width {width:,} declares {numbers:,} numbers; the "
                    f"weights hold {weight_elements:,}: the configuration does not describe these weights"
                )


def _safetensors_elements(path: Path) -> int:
    """The number of elements of every tensor in one safetensors file, its header checked."""
    size = _regular_size(path, 1 << 62)
    with path.open("rb") as handle:
        head = handle.read(8)
        length = int.from_bytes(head, "little") if len(head) == 8 else -1
        if not 2 <= length <= min(MAX_SAFETENSORS_HEADER, size - 8):
            raise UnsupportedModelError(f"{path}: not a safetensors file (header length {length})")
        raw = handle.read(length)
    try:
        header = json.loads(raw.decode("utf-8"))
    except (RecursionError, UnicodeDecodeError, ValueError):
        raise UnsupportedModelError(f"{path}: not a safetensors file (its header is not JSON)") from None
    if not isinstance(header, dict) or _depth(header) > 3:
        raise UnsupportedModelError(f"{path}: not a safetensors file (its header is not a table of tensors)")
    data_bytes, total = size - 8 - length, 0
    for name, tensor in header.items():
        if name == "__metadata__":
            continue
        try:
            bits = _DTYPE_BITS[tensor["dtype"]]
            shape = [int(n) for n in tensor["shape"] if not isinstance(n, bool) and n >= 0]
            begin, end = (int(n) for n in tensor["data_offsets"])
            if len(shape) != len(tensor["shape"]):
                raise ValueError
        except (KeyError, TypeError, ValueError):
            raise UnsupportedModelError(f"{path}: tensor {str(name)[:80]!r} has no valid dtype, shape and offsets") from None
        elements = math.prod(shape)
        if not 0 <= begin <= end <= data_bytes or end - begin != (elements * bits + 7) // 8:
            raise UnsupportedModelError(
                f"{path}: tensor {str(name)[:80]!r} declares {elements:,} elements of {tensor['dtype']} in bytes "
                f"{begin}-{end} of {data_bytes}"
            )
        total += elements
    return total


def _weights(folder: Path) -> tuple[tuple[str, ...], int]:
    """The safetensors files transformers loads from ``folder`` and their number of elements."""
    single, index = folder / "model.safetensors", folder / "model.safetensors.index.json"
    if single.exists():
        files = [single]
    elif index.exists():
        weight_map = _read_object(index).get("weight_map")
        if not isinstance(weight_map, dict) or not weight_map:
            raise UnsupportedModelError(f"{index}: expected a weight_map of tensor names to file names")
        names = sorted({str(name) for name in weight_map.values()})
        bad = [name for name in names if Path(name).name != name or not name.endswith(".safetensors")]
        if bad:
            raise UnsupportedModelError(f"{index}: the weight_map names {bad[0][:80]!r}, not a .safetensors file here")
        files = [folder / name for name in names]
        missing = [path.name for path in files if not path.exists()]
        if missing:
            raise UnsupportedModelError(f"{index}: names {missing[0]}, which {folder} does not hold")
    else:
        foreign = sorted(p.name for p in folder.iterdir() if p.suffix in _FOREIGN_WEIGHTS)
        if foreign:
            raise UnsupportedModelError(
                f"{folder} has weights only in {', '.join(foreign[:5])} (pickle or other formats); simscore loads "
                "safetensors only (pickles can run code): load and re-save the model once with save_pretrained "
                "(safetensors by default)"
            )
        raise UnsupportedModelError(
            f"{folder} has no model weights (model.safetensors or model.safetensors.index.json) "
            f"(found: {_listing(folder)})"
        )
    return tuple(p.name for p in files), sum(_safetensors_elements(path) for path in files)


def _check_tokenizer_files(folder: Path) -> tuple[str, ...]:
    """The tokenizer files of ``folder``, each within its bounds, or an error if it has none."""
    names = {p.name for p in folder.iterdir()}
    vocabularies = [name for name in ("tokenizer.json", "vocab.txt", "vocab.json", *_SENTENCEPIECE) if name in names]
    if not vocabularies and not any(name.endswith(".tiktoken") for name in names):
        raise UnsupportedModelError(
            f"{folder} has no tokenizer files (tokenizer.json, vocab.txt, vocab.json with merges.txt, or a "
            f"SentencePiece model) (found: {_listing(folder)})"
        )
    if "tokenizer.json" in names:
        _check_tokenizers_file(folder / "tokenizer.json")
    if "vocab.json" in names:
        vocab = read_model_json(folder / "vocab.json", limit=MAX_TOKENIZER_BYTES)
        if isinstance(vocab, dict) and len(vocab) > MAX_VOCABULARY:
            raise UnsupportedModelError(f"{folder / 'vocab.json'}: {len(vocab):,} entries, more than {MAX_VOCABULARY:,}")
    for name, limit in (("vocab.txt", MAX_VOCABULARY), ("merges.txt", 2 * MAX_VOCABULARY)):
        if name in names and _count_lines(folder / name, MAX_TOKENIZER_BYTES) > limit + 1:
            raise UnsupportedModelError(f"{folder / name}: more than {limit:,} entries")
    for name in names:
        _check_other_tokenizer_file(folder / name)
    return tuple(sorted(vocabularies))


def _check_tokenizers_file(path: Path) -> None:
    """A ``tokenizer.json`` (the tokenizers library's file) within its bounds in bytes, nesting and entries."""
    data = read_model_json(path, limit=MAX_TOKENIZER_BYTES)
    model = data.get("model") if isinstance(data, dict) else None
    if not isinstance(model, dict):
        raise UnsupportedModelError(f"{path}: not a tokenizers file (no model table)")
    counts = {"model.vocab": model.get("vocab"), "model.merges": model.get("merges"),
              "added_tokens": data.get("added_tokens")}
    for key, value in counts.items():
        limit = 2 * MAX_VOCABULARY if key == "model.merges" else MAX_VOCABULARY
        if isinstance(value, (dict, list)) and len(value) > limit:
            raise UnsupportedModelError(f"{path}: {key} has {len(value):,} entries, more than {limit:,}")


def _check_other_tokenizer_file(path: Path) -> None:
    """A tokenizer folder's other files within their bounds (SentencePiece and tiktoken models, chat
    templates, the JSON settings such as ``tokenizer_config.json`` and ``special_tokens_map.json``)."""
    name = path.name
    if name in _SENTENCEPIECE or name.endswith(".tiktoken"):
        _regular_size(path, MAX_TOKENIZER_BYTES)
    elif name.endswith(".jinja"):
        _regular_size(path, MAX_CHAT_TEMPLATE_CHARS * 4)
    elif name.endswith(".json") and name not in ("tokenizer.json", "vocab.json", "config.json"):
        read_model_json(path)


def open_model_folder(path: str | os.PathLike[str], *, weights: bool = True, tokenizer: bool = True) -> ModelFolder:
    """Check a local model folder, loading nothing (no transformers, no torch).

    Parameters
    ----------
    path : path-like
        The folder, as written by ``save_pretrained``.
    weights : bool
        Require safetensors weights (and check the configuration's sizes against them).
    tokenizer : bool
        Require tokenizer files.

    Returns
    -------
    ModelFolder

    Raises
    ------
    ModelNotFoundError
        Nothing is at ``path``.
    UnsupportedModelError
        A file, a folder without ``config.json``, weights only in pickles, no weights, no
        tokenizer files, a file beyond its bounds, an ``auto_map`` without a model type, a
        declared size beyond its bound or beyond the weights. The message names the folder or
        file and the problem.
    """
    folder = existing_folder(path)
    config_file = folder / "config.json"
    if not config_file.exists():
        raise UnsupportedModelError(
            f"{folder} is not a Hugging Face model folder: it has no config.json (found: {_listing(folder)})"
        )
    config = _read_object(config_file)
    _refuse_code(config_file, config, known=isinstance(config.get("model_type"), str))
    _check_sizes(config, str(config_file), None)
    weight_files, elements = _weights(folder) if weights else ((), None)
    if elements is not None:
        _check_sizes(config, str(config_file), elements)
    tokenizer_files = _check_tokenizer_files(folder) if tokenizer else ()
    tokenizer_config_file = folder / "tokenizer_config.json"
    tokenizer_config = _read_object(tokenizer_config_file) if tokenizer_config_file.exists() else {}
    return ModelFolder(folder, config, weight_files, elements, tokenizer_files, tokenizer_config)


@contextlib.contextmanager
def hub_offline() -> Iterator[None]:
    """Forbid Hugging Face Hub downloads while a model loads; restore the settings after."""
    import huggingface_hub.constants as hub_constants
    from transformers.utils import logging as hf_logging

    saved_flag = hub_constants.HF_HUB_OFFLINE
    saved_env = os.environ.get("HF_HUB_OFFLINE")
    bars = hf_logging.is_progress_bar_enabled()
    hub_constants.HF_HUB_OFFLINE = True
    os.environ["HF_HUB_OFFLINE"] = "1"
    if bars:
        hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hub_constants.HF_HUB_OFFLINE = saved_flag
        if saved_env is None:
            os.environ.pop("HF_HUB_OFFLINE", None)
        else:
            os.environ["HF_HUB_OFFLINE"] = saved_env
        if bars:
            hf_logging.enable_progress_bar()


def _transformers() -> Any:
    try:
        import transformers
    except ImportError as exc:
        raise MissingDependencyError(
            "loading a model needs torch and transformers, the text extra: pip install 'simscore-dialogue[text]'"
        ) from exc
    return transformers


_FIXED = {"local_files_only": True, "trust_remote_code": False}


@dataclass(frozen=True)
class ModelFolder:
    """A checked local model folder (:func:`open_model_folder`); its ``load_*`` methods call transformers.

    Every load passes ``local_files_only=True`` and ``trust_remote_code=False`` (models also
    ``use_safetensors=True``) with the Hub client offline, after refusing an ``auto_map`` for a
    model or tokenizer class transformers does not implement; what transformers raises
    becomes an :class:`~simscore.errors.UnsupportedModelError` naming the folder.

    Attributes
    ----------
    path : pathlib.Path
    config : mapping
        ``config.json``, parsed and checked.
    weight_files : tuple of str
        The safetensors files transformers loads (empty when weights were not required).
    weight_elements : int or None
        How many numbers they hold.
    tokenizer_files : tuple of str
        The vocabulary files found.
    tokenizer_config : mapping
        ``tokenizer_config.json`` (empty if none).
    """

    path: Path
    config: Mapping[str, Any] = field(repr=False)
    weight_files: tuple[str, ...] = ()
    weight_elements: int | None = None
    tokenizer_files: tuple[str, ...] = ()
    tokenizer_config: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @property
    def model_type(self) -> str | None:
        """``config.json``'s ``model_type`` (None if it names none)."""
        value = self.config.get("model_type")
        return value if isinstance(value, str) else None

    def _refuse_unknown_code(self) -> None:
        from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES

        _refuse_code(self.path / "config.json", self.config, known=self.model_type in CONFIG_MAPPING_NAMES)
        if self.tokenizer_config.get("auto_map"):
            from transformers.models.auto.tokenization_auto import tokenizer_class_from_name

            name = self.tokenizer_config.get("tokenizer_class")
            known = isinstance(name, str) and tokenizer_class_from_name(name) is not None
            _refuse_code(self.path / "tokenizer_config.json", self.tokenizer_config, known=known)

    def _call(self, what: str, load: Any, fixed: Mapping[str, Any], options: Mapping[str, Any]) -> Any:
        clash = sorted(set(options) & set(fixed))
        if clash:
            raise TypeError(f"{', '.join(clash)} cannot be set: the model loader fixes it")
        self._refuse_unknown_code()
        try:
            with hub_offline():
                return load(str(self.path), **fixed, **options)
        except (OSError, ValueError, KeyError, TypeError, RuntimeError, AttributeError, ArithmeticError) as exc:
            reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
            raise UnsupportedModelError(f"{self.path}: {what}: {reason}") from None

    def load_config(self, **options: Any) -> Any:
        """The transformers configuration (``AutoConfig.from_pretrained``)."""
        transformers = _transformers()
        return self._call("config.json cannot be read as a transformers model", transformers.AutoConfig.from_pretrained,
                          _FIXED, options)

    def load_tokenizer(self, **options: Any) -> Any:
        """The tokenizer (``AutoTokenizer.from_pretrained`` with ``options``, e.g. ``use_fast=True``)."""
        if not self.tokenizer_files:
            _check_tokenizer_files(self.path)
        transformers = _transformers()
        return self._call("no tokenizer could be loaded", transformers.AutoTokenizer.from_pretrained, _FIXED, options)

    def load_model(self, model_class: Any, **options: Any) -> Any:
        """The model as ``model_class`` (a transformers class such as ``AutoModel``), in evaluation mode.

        ``options`` go to ``from_pretrained`` (e.g. ``output_loading_info=True``, which returns
        ``(model, info)``).
        """
        if not self.weight_files:
            raise UnsupportedModelError(f"{self.path}: the folder was opened without weights")
        loaded = self._call("the weights cannot be loaded", model_class.from_pretrained,
                            {**_FIXED, "use_safetensors": True}, options)
        (loaded[0] if isinstance(loaded, tuple) else loaded).eval()
        return loaded

    def is_causal(self) -> bool:
        """Whether the folder holds a model whose attention is causal: a decoder-only language
        model (its type has a causal language-model head and no masked one: GPT-2, Llama,
        Qwen, ...) or one configured as a decoder (``is_decoder``)."""
        from transformers.models.auto.modeling_auto import (
            MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
            MODEL_FOR_MASKED_LM_MAPPING_NAMES,
        )

        if self.config.get("is_decoder") is True:
            return True
        kind = self.model_type
        return (not self.config.get("is_encoder_decoder") and kind in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
                and kind not in MODEL_FOR_MASKED_LM_MAPPING_NAMES)

    def warn_if_causal(self, user: str) -> None:
        """Warn (:class:`~simscore.errors.CausalEncoderWarning`) if ``user``, a sentence encoder,
        is given a causal language model (:meth:`is_causal`)."""
        if self.is_causal():
            warnings.warn(
                f"{user}: {self.path} holds a causal language model ({self.model_type}), used here as a sentence "
                "encoder: each token's embedding sees only the tokens before it, so its sentence embeddings are "
                "not what an encoder's are; use an encoder (BERT, RoBERTa, a sentence-transformers model)",
                CausalEncoderWarning,
                stacklevel=3,
            )
