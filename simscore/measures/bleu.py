"""``bleu4``: symmetric sentence BLEU-4 from sacrebleu, vectorised over the pairs of a call.

Definition (``reference/metrics.md``): sacrebleu sentence BLEU, max n-gram order 4,
``smooth_method="floor"`` (epsilon 0.1), effective order, tokenizer ``13a``, no lowercasing
by default, divided by 100, and symmetric: the mean of BLEU(p | ref p') and BLEU(p' | ref p).

Long texts need no bound: tokenizing, counting n-grams and matching them cost time and
memory linear in a text's length, as in sacrebleu itself.

Examples
--------
>>> Bleu4().score_pairs(["Thank you, goodbye.", ""], ["Thank you, goodbye.", " "])
array([1., 1.])
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from simscore.errors import MissingDependencyError, TextMeasureError
from simscore.measures import _sacrebleu
from simscore.measures._cache import LRUCache
from simscore.measures.base import dist_version
from simscore.measures.options import MeasureOption
from simscore.measures.text_base import TextMeasure

__all__ = ["Bleu4", "NGRAM_CACHE_ENTRIES", "NGRAM_TABLE_ENTRIES"]

#: Distinct sentences whose n-grams one ``Bleu4`` remembers (least recently used forgotten first).
NGRAM_CACHE_ENTRIES = 200_000
#: Distinct n-grams in one ``Bleu4``'s id table before it is emptied with the sentence cache.
NGRAM_TABLE_ENTRIES = 5_000_000


class Bleu4(TextMeasure):
    """``bleu4``: symmetric sentence BLEU-4 from sacrebleu, divided by 100.

    The numbers of ``sacrebleu.metrics.BLEU(smooth_method="floor", smooth_value=0.1,
    max_ngram_order=4, effective_order=True)`` -- the settings of
    ``sacrebleu.sentence_bleu`` with floor smoothing -- in both directions, BLEU(p | ref p')
    and BLEU(p' | ref p); the measure is their mean. sacrebleu's tokenizer and n-gram
    extraction run once per distinct sentence (remembered for at most
    :data:`NGRAM_CACHE_ENTRIES` sentences, least recently used forgotten first); the clipped
    n-gram matches of all the pairs of a call are counted together with numpy, and
    sacrebleu's ``compute_bleu`` is re-done vectorised with the same float operations in the
    same order (``math.log`` and ``math.exp`` included; :mod:`simscore.measures._sacrebleu`,
    checked against sacrebleu itself), so every value equals ``sacrebleu.sentence_bleu``'s
    bit for bit (tests check it) and does not depend on the other pairs of the call.

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
    'bleu4|sacrebleu:...|tok:13a|smooth:floor|order:4|sym:mean|lc:no'
    """

    name = "bleu4"
    bounds = (0.0, 1.0)
    options = {
        "tokenize": MeasureOption("str", "a sacrebleu tokenizer name (default 13a)"),
        "lowercase": MeasureOption("bool", "lowercase both texts before tokenizing (default no)"),
    }

    def __init__(self, *, tokenize: str = "13a", lowercase: bool = False) -> None:
        super().__init__()
        names = _sacrebleu.tokenizer_names()
        if not isinstance(tokenize, str) or tokenize not in names:
            raise TextMeasureError(f"tokenize must be one of {names}, got {tokenize!r}")
        if not isinstance(lowercase, bool):
            raise TextMeasureError(f"lowercase must be a bool, got {lowercase!r}")
        self.tokenize = tokenize
        self.lowercase = lowercase
        # Each distinct sentence's n-grams, as ids of this instance's n-gram table; the table
        # is emptied with the sentence cache when it exceeds NGRAM_TABLE_ENTRIES (ids are only
        # meaningful with the sentences that made them).
        self._ngram_cache: LRUCache[str, _Ngrams] = LRUCache("bleu4 n-grams", max_entries=NGRAM_CACHE_ENTRIES)
        self._ngram_ids: dict[tuple[str, ...], int] = {}
        try:
            self._bleu = _sacrebleu.make_bleu(tokenize=tokenize, lowercase=lowercase)
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
        found = self._ngram_cache.get(text)
        if found is None:
            ids = self._ngram_ids
            counts, length = _sacrebleu.sentence_ngrams(self._bleu, text)
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
            found = _Ngrams(gram_ids[order], values, orders, totals, length)
            self._ngram_cache.put(text, found)
        return found

    def _score_texts(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        ids = self._ngram_ids
        texts = list(dict.fromkeys(text for pair in pairs for text in pair))
        if len(ids) > NGRAM_TABLE_ENTRIES:
            self._ngram_cache.clear()  # n-gram ids are only meaningful with the texts that made them
            ids.clear()
        grams = [self._ngrams(text) for text in texts]
        index = {text: i for i, text in enumerate(texts)}
        left = np.fromiter((index[s] for s, _ in pairs), dtype=np.int64, count=len(pairs))
        right = np.fromiter((index[t] for _, t in pairs), dtype=np.int64, count=len(pairs))
        lengths = np.array([g.length for g in grams], dtype=np.int64)
        totals = np.array([g.totals for g in grams], dtype=np.int64).reshape(-1, 4)
        correct = _clipped_matches(grams, left, right, vocabulary=len(ids))
        # Both directions have the same clipped matches (sum of min(count_h, count_r)).
        forward = _sacrebleu.compute_bleu_many(correct, totals[left], lengths[left], lengths[right])
        backward = _sacrebleu.compute_bleu_many(correct, totals[right], lengths[right], lengths[left])
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
