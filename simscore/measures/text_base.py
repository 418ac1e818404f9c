"""What every text measure shares: the blank and identity rules, and one score per distinct pair.

:class:`TextMeasure` sits on :class:`~simscore.measures.base.PairwiseMeasure` and applies,
before any model or package is called, the rules of ``reference/metrics.md`` ("Text level"):
both texts empty (or whitespace only) score 1.0, exactly one empty scores 0.0, and a text
compared with itself scores 1.0 (the maximum, which the formulas reach up to float
rounding). A missing text (None, e.g. an action-only policy) scores NaN with one
:class:`~simscore.errors.MissingValueWarning` per call.

Each distinct unordered pair is scored once per measure instance and remembered in a bounded
cache (:data:`PAIR_CACHE_ENTRIES` pairs, least recently used forgotten first); a pair's score
is a function of the pair alone (up to the tolerance each measure states for its embeddings),
so the cache changes the time a call takes, not a result.
Scores are clipped to :attr:`~TextMeasure.bounds`, which in practice only removes float
rounding. A measure implements :meth:`TextMeasure._score_texts` (the raw score of distinct
pairs of different, non-blank texts) and :meth:`TextMeasure.signature`.

Examples
--------
>>> import numpy as np
>>> class Overlap(TextMeasure):
...     name = "overlap"
...     def signature(self):
...         return "overlap|words"
...     def _score_texts(self, pairs):
...         return np.array([len(set(a.split()) & set(b.split())) / len(set(a.split()) | set(b.split()))
...                          for a, b in pairs])
>>> Overlap().score_pairs(["a b", "", "a b", "x"], ["b c", " ", "a b", ""])
array([0.33333333, 1.        , 1.        , 0.        ])
"""

from __future__ import annotations

import abc
from collections.abc import Iterable, Mapping
from typing import Any, Literal

import numpy as np

from simscore.errors import InvalidResponseError, TextMeasureError
from simscore.measures._cache import LRUCache
from simscore.measures._encoders import CachingEncoder, SentenceEncoder
from simscore.measures.base import PairwiseMeasure

__all__ = ["TextMeasure", "EncoderMeasure", "PAIR_CACHE_ENTRIES"]

#: Distinct text pairs whose scores one measure instance remembers (about 100 MB of keys at
#: most); the least recently used are forgotten first.
PAIR_CACHE_ENTRIES = 500_000


class TextMeasure(PairwiseMeasure):
    """Shared text rules on top of :class:`PairwiseMeasure`: blank and identical texts, and
    one computation per distinct unordered pair (module docstring)."""

    level: Literal["action", "text"] = "text"
    higher_is_better = True
    symmetric = True
    _missing_what = "text"

    def __init__(self) -> None:
        self._pair_cache: LRUCache[tuple[str, str], float] = LRUCache(
            f"{self.name} pair scores", max_entries=PAIR_CACHE_ENTRIES
        )

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
        responses. Blank texts and None are skipped. BLEU does not depend on the batch; the
        USE and BERTScore embeddings depend on their batch-mates only through the rounding of
        the matrix products (below 1e-6, see their classes), so preparing changes a score by
        no more than that.

        Returns
        -------
        int
            The number of distinct non-blank texts prepared, by the model or read from the
            measure's cache folder (0 where the measure has nothing to prepare, e.g. BLEU-4 or
            a USE measure with a custom encoder).
        """
        distinct = sorted({text for text in texts if isinstance(text, str) and text.strip()})
        return self._prepare(distinct) if distinct else 0

    def _prepare(self, texts: list[str]) -> int:
        return 0  # nothing to do ahead of scoring by default

    def load(self) -> None:
        """Load the measure's model now rather than on the first scoring (thread-safe; a
        no-op for a measure without a model, or with a custom encoder)."""

    def clear_pair_cache(self) -> None:
        """Forget the pair scores this measure remembers (thread-safe); what it keeps per text
        (embeddings, n-grams) stays.

        The next scoring of a pair computes its score again from what is kept per text: the same
        number (a pair's score is a function of the pair alone), in the time a pair costs once its
        texts are known -- the cost ``benchmarks/bench_measures.py`` times per pair.

        Examples
        --------
        >>> from simscore.measures.bleu import Bleu4
        >>> bleu = Bleu4()
        >>> first = bleu.score_pairs(["the cat sat"], ["the cat sat on the mat"])
        >>> bleu.clear_pair_cache()
        >>> bool((bleu.score_pairs(["the cat sat"], ["the cat sat on the mat"]) == first).all())
        True
        """
        self._pair_cache.clear()

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
        """Clipped scores of distinct ordered pairs, remembered across calls (bounded)."""
        found = self._pair_cache.get_many(keys)
        out = np.empty(len(keys), dtype=np.float64)
        missing = []
        for k, value in enumerate(found):
            if value is None:
                missing.append(k)
            else:
                out[k] = value
        if missing:
            new_keys = [keys[k] for k in missing]
            raw = np.clip(np.asarray(self._score_texts(new_keys), dtype=np.float64), *self.bounds)
            out[missing] = raw
            self._pair_cache.update(zip(new_keys, raw.tolist()))
        return out


#: Pairs whose embeddings :meth:`EncoderMeasure._cosines` gathers at once: a block of 1,024 pairs
#: of 512-dimensional rows (8 MB) stays in cache, where gathering 200,000 pairs at once (1.6 GB)
#: took 28 times as long; each row's sum is the same either way, bit for bit.
COSINE_BLOCK = 1024


class EncoderMeasure(TextMeasure):
    """A text measure on sentence embeddings: the cosine of the two L2-normalised embeddings,
    clipped to [-1, 1] (``similarity = "cosine"``), or the angular similarity
    1 - arccos(cosine) / pi (``"angular"``).

    ``encoder`` is any :class:`~simscore.measures._encoders.SentenceEncoder`; ``None`` takes
    the subclass's shared default (:meth:`_default_encoder`), so the cosine and angular
    measures of one family embed each sentence once. The signature is
    ``<name>|<encoder signature part>``.
    """

    similarity: Literal["cosine", "angular"] = "cosine"

    def __init__(self, encoder: SentenceEncoder | None = None) -> None:
        super().__init__()
        if encoder is not None and not isinstance(encoder, SentenceEncoder):
            raise TextMeasureError(
                "encoder must provide encode(texts) and signature_part(), "
                f"got {type(encoder).__name__}"
            )
        self._encoder = encoder

    @staticmethod
    def _default_encoder() -> SentenceEncoder:
        raise TextMeasureError("this measure has no default encoder: pass encoder=")

    @staticmethod
    def _encoder_from_options(**options: Any) -> SentenceEncoder:
        raise TextMeasureError("this measure builds no encoder from options: pass encoder=")

    @classmethod
    def from_options(cls, options: Mapping[str, Any], shared: dict[Any, Any]) -> EncoderMeasure:
        """The measure on :meth:`_encoder_from_options` of the options; the cosine and angular
        measures of a family configured alike in one call share that encoder (each sentence
        embedded once)."""
        key = (cls._encoder_from_options, tuple(sorted((name, str(value)) for name, value in options.items())))
        encoder = shared.get(key)
        if encoder is None:
            encoder = shared[key] = cls._encoder_from_options(**options)
        return cls(encoder=encoder)

    @property
    def encoder(self) -> SentenceEncoder:
        """The encoder in use; with ``encoder=None``, the family's shared default."""
        return self._encoder if self._encoder is not None else self._default_encoder()

    def signature(self) -> str:
        """``<name>|<encoder signature part>``."""
        return f"{self.name}|{self.encoder.signature_part()}"

    def load(self) -> None:
        if isinstance(self.encoder, CachingEncoder):
            self.encoder.load()

    def _prepare(self, texts: list[str]) -> int:
        if not isinstance(self.encoder, CachingEncoder):
            return 0  # a custom encoder may not cache: embedding ahead would be work twice
        self.encoder.encode(texts)
        return len(texts)

    def _score_texts(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        cosines = self._cosines(pairs)
        return cosines if self.similarity == "cosine" else 1.0 - np.arccos(cosines) / np.pi

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
        left = np.fromiter((index[s] for s, _ in pairs), dtype=np.int64, count=len(pairs))
        right = np.fromiter((index[t] for _, t in pairs), dtype=np.int64, count=len(pairs))
        out = np.empty(len(pairs), dtype=np.float64)
        for start in range(0, len(pairs), COSINE_BLOCK):  # rows gathered a block at a time: in cache
            block = slice(start, start + COSINE_BLOCK)
            out[block] = np.sum(emb[left[block]] * emb[right[block]], axis=1)  # each row's sum as unblocked
        return np.clip(out, -1.0, 1.0)
