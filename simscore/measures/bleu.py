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

__all__ = ["Bleu4", "PAIR_BLOCK", "TOKEN_CACHE_ENTRIES", "WORD_TABLE_ENTRIES", "ngram_counts"]

#: Distinct sentences whose tokens (as word ids) one ``Bleu4`` remembers (least recently used forgotten first).
TOKEN_CACHE_ENTRIES = 200_000
#: Distinct words in one ``Bleu4``'s id table before it is emptied with the token cache.
WORD_TABLE_ENTRIES = 5_000_000


class Bleu4(TextMeasure):
    """``bleu4``: symmetric sentence BLEU-4 from sacrebleu, divided by 100.

    The numbers of ``sacrebleu.metrics.BLEU(smooth_method="floor", smooth_value=0.1,
    max_ngram_order=4, effective_order=True)`` -- the settings of
    ``sacrebleu.sentence_bleu`` with floor smoothing -- in both directions, BLEU(p | ref p')
    and BLEU(p' | ref p); the measure is their mean. sacrebleu's tokenizer runs once per
    distinct sentence (its tokens remembered as word ids for at most
    :data:`TOKEN_CACHE_ENTRIES` sentences, least recently used forgotten first); in blocks of
    :data:`PAIR_BLOCK` pairs the n-grams of all the block's sentences are counted together
    with numpy (the counts of sacrebleu's ``extract_all_word_ngrams``, without a Python tuple
    per n-gram), their clipped matches for all its pairs too, and
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
        # Each distinct sentence's tokens as ids of this instance's word table; the table is
        # emptied with the cache when it exceeds WORD_TABLE_ENTRIES (ids mean something only
        # with the sentences that made them).
        self._token_cache: LRUCache[str, np.ndarray] = LRUCache("bleu4 tokens", max_entries=TOKEN_CACHE_ENTRIES)
        self._words: dict[str, int] = {}
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

    def _score_texts(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        out = np.empty(len(pairs), dtype=np.float64)
        for lo in range(0, len(pairs), PAIR_BLOCK):
            out[lo : lo + PAIR_BLOCK] = self._score_block(pairs[lo : lo + PAIR_BLOCK])
        return out

    def _token_ids(self, text: str) -> np.ndarray:
        """The sentence's tokens after sacrebleu's preprocessing, as ids of this instance's word table."""
        found = self._token_cache.get(text)
        if found is None:
            tokens = _sacrebleu.sentence_tokens(self._bleu, text)
            words = self._words
            found = np.fromiter((words.setdefault(w, len(words)) for w in tokens), dtype=np.int64, count=len(tokens))
            self._token_cache.put(text, found)
        return found

    def _score_block(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        texts = list(dict.fromkeys(text for pair in pairs for text in pair))
        index = {text: i for i, text in enumerate(texts)}
        left = np.fromiter((index[s] for s, _ in pairs), dtype=np.int64, count=len(pairs))
        right = np.fromiter((index[t] for _, t in pairs), dtype=np.int64, count=len(pairs))
        if len(self._words) > WORD_TABLE_ENTRIES:
            self._token_cache.clear()
            self._words.clear()
        grams = _ngram_table([self._token_ids(text) for text in texts])
        correct = _clipped_matches(grams, left, right)
        # Both directions have the same clipped matches (sum of min(count_h, count_r)).
        lengths, totals = grams.lengths, grams.totals
        forward = _sacrebleu.compute_bleu_many(correct, totals[left], lengths[left], lengths[right])
        backward = _sacrebleu.compute_bleu_many(correct, totals[right], lengths[right], lengths[left])
        return (forward + backward) / 200.0


class _Ngrams(NamedTuple):
    """The n-grams (orders 1-4) of the distinct texts of a block, as sacrebleu counts them.

    ``keys`` (sorted) is ``text * vocabulary + n-gram id`` for each n-gram a text holds, with
    its ``counts`` and ``orders`` (0-3); ``starts`` and ``sizes`` give each text's slice of
    them; ``totals`` (texts, 4) the n-grams per order and ``lengths`` the tokens per text;
    ``positions`` where one occurrence of each n-gram starts (in all texts' tokens, one text
    after the other).
    """

    keys: np.ndarray
    counts: np.ndarray
    orders: np.ndarray
    starts: np.ndarray
    sizes: np.ndarray
    totals: np.ndarray
    lengths: np.ndarray
    vocabulary: int
    positions: np.ndarray


#: Pairs per block: each block's distinct texts are tokenized and their n-grams counted together.
PAIR_BLOCK = 32_768
#: Pairs per step of the vectorised n-gram matching (about 100 n-grams per prompt).
_MATCH_BLOCK = 8192


def _ngram_table(tokens: list[np.ndarray]) -> _Ngrams:
    """Every text's n-grams of orders 1 to 4 with their counts, counted with numpy for all texts at once.

    ``tokens`` holds each text's tokens as word ids (equal words, equal ids). The counts are
    those of sacrebleu's ``extract_all_word_ngrams`` (every run of n consecutive tokens of one
    text), without a tuple per n-gram: each n-gram of order n gets the id of the pair (its
    first n - 1 tokens' n-gram, its last token), so two n-grams have one id exactly when their
    tokens are equal.

    >>> t = _ngram_table([np.array([0, 1, 0, 1]), np.array([1])])
    >>> t.totals.tolist(), t.lengths.tolist(), t.sizes.tolist()  # "a b" twice: 3 bigrams, 2 distinct
    ([[4, 3, 2, 1], [1, 0, 0, 0]], [4, 1], [7, 1])
    >>> sorted(t.counts[: t.sizes[0]].tolist())
    [1, 1, 1, 1, 2, 2, 2]
    """
    lengths = np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens))
    n_tokens = int(lengths.sum())
    flat = np.concatenate(tokens).astype(np.int64, copy=False) if tokens else np.zeros(0, dtype=np.int64)
    words = int(flat.max(initial=-1)) + 1
    owner = np.repeat(np.arange(len(tokens), dtype=np.int64), lengths)
    left_in_text = np.repeat(lengths, lengths) - (np.arange(n_tokens) - np.repeat(np.cumsum(lengths) - lengths, lengths))
    ids, orders, owners = [flat], [np.zeros(n_tokens, dtype=np.int64)], [owner]
    positions = [np.arange(n_tokens, dtype=np.int64)]
    previous, offset = flat, words  # the n-gram (order n - 1) starting at each position
    for n in range(2, _sacrebleu.MAX_ORDER + 1):
        starts = np.flatnonzero(left_in_text[: len(previous)] >= n)
        if not len(starts):
            break
        distinct, gram = np.unique(_pair_keys(previous[starts], flat[starts + n - 1]), return_inverse=True)
        gram = gram.reshape(-1)
        previous = np.full(n_tokens, -1, dtype=np.int64)
        previous[starts] = gram
        ids.append(gram + offset)
        orders.append(np.full(len(starts), n - 1, dtype=np.int64))
        owners.append(owner[starts])
        positions.append(starts)
        offset += len(distinct)
    vocabulary = max(offset, 1)
    keys, first, counts = np.unique(_pair_keys(np.concatenate(owners), np.concatenate(ids), vocabulary),
                                    return_index=True, return_counts=True)
    sizes = np.bincount(keys // vocabulary, minlength=len(tokens)).astype(np.int64)
    order_of = np.concatenate(orders)[first]
    starts_of = np.zeros(len(tokens), dtype=np.int64)
    np.cumsum(sizes[:-1], out=starts_of[1:])
    totals = np.maximum(lengths[:, None] - np.arange(_sacrebleu.MAX_ORDER), 0)
    return _Ngrams(keys, counts.astype(np.int64), order_of, starts_of, sizes, totals, lengths, vocabulary,
                   np.concatenate(positions)[first])


def ngram_counts(tokens: list[str]) -> dict[tuple[str, ...], int]:
    """One text's n-grams (orders 1-4) and their counts as ``bleu4`` counts them, as tuples of
    tokens: what :mod:`simscore.measures._sacrebleu`'s self-check compares with sacrebleu's.

    >>> ngram_counts(["a", "b", "a"])
    {('a',): 2, ('b',): 1, ('a', 'b'): 1, ('b', 'a'): 1, ('a', 'b', 'a'): 1}
    """
    ids: dict[str, int] = {}
    table = _ngram_table([np.array([ids.setdefault(w, len(ids)) for w in tokens], dtype=np.int64)])
    entries = sorted(zip(table.orders.tolist(), table.positions.tolist(), table.counts.tolist()))
    return {tuple(tokens[p : p + o + 1]): c for o, p, c in entries}


def _pair_keys(high: np.ndarray, low: np.ndarray, base: int | None = None) -> np.ndarray:
    """One int64 per pair of non-negative ids, ordered as the pairs are: ``high * base + low``."""
    base = int(low.max(initial=0)) + 1 if base is None else base
    if (int(high.max(initial=0)) + 1) * base >= 2**63:
        raise TextMeasureError(f"bleu4: too many distinct n-grams in one block ({base:,}); score fewer pairs at once")
    return high * base + low


def _clipped_matches(grams: _Ngrams, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Clipped n-gram matches per pair and order: sum over shared n-grams of min(counts).

    The same integers as sacrebleu's per-pair loop, for all pairs at once: each pair looks the
    n-grams of its shorter side up in the other side's keys (``text * vocabulary + n-gram id``).
    """
    keys, sizes, starts, vocabulary = grams.keys, grams.sizes, grams.starts, grams.vocabulary
    flat_ids = keys % vocabulary
    correct = np.zeros((len(left), 4), dtype=np.int64)
    if not len(keys):
        return correct
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
        matched = np.where(hit, np.minimum(grams.counts[pos], grams.counts[found]), 0)
        correct[lo : lo + len(query)] = np.bincount(
            pair * 4 + grams.orders[pos], weights=matched, minlength=4 * len(query)
        ).reshape(-1, 4).astype(np.int64)
    return correct
