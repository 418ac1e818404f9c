"""Counting n-grams and their clipped matches with numpy, for ``bleu4`` (:mod:`simscore.measures.bleu`).

A private module of the measures' room: :mod:`~simscore.measures.bleu` scores with it and
:mod:`~simscore.measures._sacrebleu`'s self-check compares :func:`ngram_counts` with sacrebleu's
own ``extract_all_word_ngrams``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from simscore.errors import TextMeasureError

__all__ = ["NgramTable", "ngram_table", "ngram_counts", "clipped_matches", "MATCH_BLOCK", "MAX_ORDER"]

#: The largest n-gram order (BLEU-4).
MAX_ORDER = 4


class NgramTable(NamedTuple):
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


#: Pairs per step of the vectorised n-gram matching (about 100 n-grams per prompt).
MATCH_BLOCK = 8192


def ngram_table(tokens: list[np.ndarray]) -> NgramTable:
    """Every text's n-grams of orders 1 to 4 with their counts, counted with numpy for all texts at once.

    ``tokens`` holds each text's tokens as word ids (equal words, equal ids). The counts are
    those of sacrebleu's ``extract_all_word_ngrams`` (every run of n consecutive tokens of one
    text), without a tuple per n-gram: each n-gram of order n gets the id of the pair (its
    first n - 1 tokens' n-gram, its last token), so two n-grams have one id exactly when their
    tokens are equal.

    >>> t = ngram_table([np.array([0, 1, 0, 1]), np.array([1])])
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
    for n in range(2, MAX_ORDER + 1):
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
    totals = np.maximum(lengths[:, None] - np.arange(MAX_ORDER), 0)
    return NgramTable(keys, counts.astype(np.int64), order_of, starts_of, sizes, totals, lengths, vocabulary,
                   np.concatenate(positions)[first])


def ngram_counts(tokens: list[str]) -> dict[tuple[str, ...], int]:
    """One text's n-grams (orders 1-4) and their counts as ``bleu4`` counts them, as tuples of
    tokens: what :mod:`simscore.measures._sacrebleu`'s self-check compares with sacrebleu's.

    >>> ngram_counts(["a", "b", "a"])
    {('a',): 2, ('b',): 1, ('a', 'b'): 1, ('b', 'a'): 1, ('a', 'b', 'a'): 1}
    """
    ids: dict[str, int] = {}
    table = ngram_table([np.array([ids.setdefault(w, len(ids)) for w in tokens], dtype=np.int64)])
    entries = sorted(zip(table.orders.tolist(), table.positions.tolist(), table.counts.tolist()))
    return {tuple(tokens[p : p + o + 1]): c for o, p, c in entries}


def _pair_keys(high: np.ndarray, low: np.ndarray, base: int | None = None) -> np.ndarray:
    """One int64 per pair of non-negative ids, ordered as the pairs are: ``high * base + low``."""
    base = int(low.max(initial=0)) + 1 if base is None else base
    if (int(high.max(initial=0)) + 1) * base >= 2**63:
        raise TextMeasureError(f"bleu4: too many distinct n-grams in one block ({base:,}); score fewer pairs at once")
    return high * base + low


def clipped_matches(grams: NgramTable, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Clipped n-gram matches per pair and order: sum over shared n-grams of min(counts).

    The same integers as sacrebleu's per-pair loop, for all pairs at once: each pair looks the
    n-grams of its shorter side up in the other side's keys (``text * vocabulary + n-gram id``).
    """
    keys, sizes, starts, vocabulary = grams.keys, grams.sizes, grams.starts, grams.vocabulary
    flat_ids = keys % vocabulary
    correct = np.zeros((len(left), 4), dtype=np.int64)
    if not len(keys):
        return correct
    for lo in range(0, len(left), MATCH_BLOCK):
        a, b = left[lo : lo + MATCH_BLOCK], right[lo : lo + MATCH_BLOCK]
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
