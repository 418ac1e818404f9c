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

import numpy as np

from simscore.errors import MissingDependencyError, TextMeasureError
from simscore.measures import _sacrebleu
from simscore.measures._cache import LRUCache
from simscore.measures._ngrams import clipped_matches, ngram_counts, ngram_table
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
        grams = ngram_table([self._token_ids(text) for text in texts])
        correct = clipped_matches(grams, left, right)
        # Both directions have the same clipped matches (sum of min(count_h, count_r)).
        lengths, totals = grams.lengths, grams.totals
        forward = _sacrebleu.compute_bleu_many(correct, totals[left], lengths[left], lengths[right])
        backward = _sacrebleu.compute_bleu_many(correct, totals[right], lengths[right], lengths[left])
        return (forward + backward) / 200.0


#: Pairs per block: each block's distinct texts are tokenized and their n-grams counted together.
PAIR_BLOCK = 32_768
