"""The one place that relies on sacrebleu beyond its sentence-level API.

:class:`~simscore.measures.bleu.Bleu4` gives the numbers of ``sacrebleu.sentence_bleu`` but
computes them for many pairs at once: each distinct sentence is tokenized and its n-grams
counted once, and the BLEU formula runs vectorised over all pairs of a call. That needs three
pieces of sacrebleu, all named here:

- ``BLEU._preprocess_segment(text)`` (private): lowercasing if configured, then the
  tokenizer -- exactly what ``BLEU.sentence_score`` applies to a hypothesis or reference;
- ``sacrebleu.metrics.helpers.extract_all_word_ngrams(line, 1, 4)``: the n-gram counts, which
  ``bleu4`` computes itself, vectorised, from the whitespace-split tokens
  (:func:`sentence_tokens`) -- the self-check compares the two;
- the arithmetic of ``BLEU.compute_bleu`` (public, but per sentence): repeated here,
  vectorised, with the same float operations in the same order (``math.log`` and
  ``math.exp`` included) in :func:`compute_bleu_many`, so every value is the same float.

:func:`self_check` verifies all three against sacrebleu itself -- the pieces exist, the
statistics they give reproduce ``BLEU.sentence_score``, and :func:`compute_bleu_many` equals
``BLEU.compute_bleu`` bit for bit on a grid of statistics -- and fails loudly, naming
sacrebleu's version, if an upstream release changes any of it (a test runs it).
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import numpy as np

from simscore.errors import MissingDependencyError
from simscore.measures._ngrams import ngram_counts
from simscore.measures.base import dist_version

__all__ = ["make_bleu", "sentence_tokens", "sentence_ngrams", "compute_bleu_many", "self_check", "TESTED_VERSION"]

#: The sacrebleu version this adapter was written against.
TESTED_VERSION = "2.6.0"
#: BLEU-4 with floor smoothing (epsilon 0.1) and effective order: what ``bleu4`` computes.
MAX_ORDER = 4
SMOOTH_VALUE = 0.1


def _changed(what: str) -> MissingDependencyError:
    return MissingDependencyError(
        f"sacrebleu {dist_version('sacrebleu')}: {what}. simscore's bleu4 relies on it "
        f"(simscore.measures._sacrebleu, written for sacrebleu {TESTED_VERSION}); install "
        "'sacrebleu>=2.3,<3' at a version that passes simscore's tests, or report it to simscore"
    )


def make_bleu(*, tokenize: str, lowercase: bool) -> Any:
    """``sacrebleu.metrics.BLEU`` as ``bleu4`` uses it (floor smoothing 0.1, order 4, effective order)."""
    from sacrebleu.metrics.bleu import BLEU

    return BLEU(
        lowercase=lowercase,
        tokenize=tokenize,
        smooth_method="floor",
        smooth_value=SMOOTH_VALUE,
        max_ngram_order=MAX_ORDER,
        effective_order=True,
    )


def tokenizer_names() -> list[str]:
    """The tokenizer names sacrebleu's BLEU accepts."""
    from sacrebleu.metrics.bleu import BLEU

    return sorted(BLEU.TOKENIZERS)


def sentence_tokens(bleu: Any, text: str) -> list[str]:
    """The tokens of ``text`` as ``bleu`` sees them: its preprocessing, split on whitespace
    (what ``extract_all_word_ngrams`` splits)."""
    return bleu._preprocess_segment(text).split()


def sentence_ngrams(bleu: Any, text: str) -> tuple[Counter[tuple[str, ...]], int]:
    """The n-gram counts (orders 1-4) and token count of ``text`` as ``bleu`` sees it."""
    from sacrebleu.metrics.helpers import extract_all_word_ngrams

    counts, length = extract_all_word_ngrams(bleu._preprocess_segment(text), 1, MAX_ORDER)
    return counts, int(length)


def compute_bleu_many(
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

    Parameters
    ----------
    correct, total : ndarray of int, shape (n, 4)
        Clipped matches and hypothesis n-grams per order.
    sys_len, ref_len : ndarray of int, shape (n,)
        Hypothesis and reference token counts.

    Examples
    --------
    >>> compute_bleu_many(np.array([[3, 2, 1, 0]]), np.array([[3, 2, 1, 0]]), np.array([3]), np.array([6]))
    array([36.78794412])
    """
    score = np.zeros(len(correct), dtype=np.float64)
    live = np.flatnonzero(correct.any(axis=1))
    if not len(live):
        return score
    c = correct[live].astype(np.float64)
    t = total[live].astype(np.float64)
    eff = np.cumprod(total[live] > 0, axis=1).sum(axis=1)  # orders before the first empty one
    used = np.arange(MAX_ORDER) < eff[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(c > 0, 100.0 * c / t, 100.0 * SMOOTH_VALUE / t)
    logs = np.zeros_like(precision)
    logs[used] = _apply(math.log, precision[used])
    # sacrebleu adds the log precisions with Python's sum(), which Python 3.12 made compensated
    # (Neumaier): the same built-in on the same lists gives the same bits on every Python
    log_sum = np.fromiter(
        (sum(row[:k]) for row, k in zip(logs.tolist(), eff.tolist(), strict=True)), dtype=np.float64, count=len(live)
    )
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


_PROBES = (
    ("the cat sat", "the cat sat on the mat"),
    ("Thank you, goodbye.", "thank you, goodbye."),
    ("What kind of food would you like?", "What type of food would you like? "),
    ("hello", "goodbye"),
    ("a", "a a a a"),
)


def self_check() -> None:
    """Verify the three pieces of sacrebleu :mod:`simscore.measures.bleu` relies on.

    Raises
    ------
    MissingDependencyError
        Naming sacrebleu's version and what changed.
    """
    try:
        from sacrebleu.metrics.bleu import BLEU
        from sacrebleu.metrics.helpers import extract_all_word_ngrams  # noqa: F401 - presence
    except ImportError as exc:
        raise _changed(f"an import failed ({exc})") from None
    if not callable(vars(BLEU).get("_preprocess_segment")):  # BLEU's own, not the base class's stub
        raise _changed("BLEU._preprocess_segment is gone")
    try:
        _check_probes(BLEU)
    except MissingDependencyError:
        raise
    except Exception as exc:  # noqa: BLE001 - any failure of the pieces is the news to report
        raise _changed(f"the tokenizer or n-gram pieces failed: {type(exc).__name__}: {exc}") from exc


def _check_probes(BLEU: Any) -> None:  # noqa: N803 - the class
    for lowercase in (False, True):
        bleu = make_bleu(tokenize="13a", lowercase=lowercase)
        for hyp, ref in _PROBES:
            (h, h_len), (r, r_len) = sentence_ngrams(bleu, hyp), sentence_ngrams(bleu, ref)
            correct, total = [0] * MAX_ORDER, [0] * MAX_ORDER
            for gram, count in h.items():
                total[len(gram) - 1] += count
                correct[len(gram) - 1] += min(count, r.get(gram, 0))
            _check_counts(bleu, (hyp, ref), (h, r))
            ours = compute_bleu_many(np.array([correct]), np.array([total]), np.array([h_len]), np.array([r_len]))
            theirs = bleu.sentence_score(hyp, [ref]).score
            if float(ours[0]) != theirs:
                raise _changed(
                    f"BLEU of {hyp!r} against {ref!r} (lowercase={lowercase}) from the tokenizer and "
                    f"n-gram pieces is {float(ours[0])!r}, sentence_score gives {theirs!r}"
                )
    # compute_bleu's arithmetic on statistics a sentence pair can have, bit for bit
    rng = np.random.default_rng(0)
    sys_len, ref_len = rng.integers(0, 12, 400), rng.integers(0, 12, 400)
    total = np.maximum(sys_len[:, None] - np.arange(MAX_ORDER), 0)
    correct = np.minimum(total, rng.integers(0, 8, (400, MAX_ORDER)))
    ours = compute_bleu_many(correct, total, sys_len, ref_len)
    for k in range(len(ours)):
        theirs = BLEU.compute_bleu(
            correct[k].tolist(), total[k].tolist(), int(sys_len[k]), int(ref_len[k]),
            "floor", SMOOTH_VALUE, True, MAX_ORDER,
        ).score
        if float(ours[k]) != theirs:
            raise _changed(
                f"BLEU.compute_bleu({correct[k].tolist()}, {total[k].tolist()}, {sys_len[k]}, {ref_len[k]}) "
                f"gives {theirs!r}, simscore's vectorised copy {float(ours[k])!r}"
            )


def _check_counts(bleu: Any, texts: tuple[str, str], expected: tuple[Counter[tuple[str, ...]], ...]) -> None:
    """``bleu4``'s own n-gram counting gives sacrebleu's counts on ``texts``."""
    for text, counts in zip(texts, expected, strict=True):
        ours, theirs = ngram_counts(sentence_tokens(bleu, text)), dict(counts)
        if ours != theirs:
            gram = next(g for g in (*ours, *theirs) if ours.get(g, 0) != theirs.get(g, 0))
            raise _changed(f"the n-gram {' '.join(gram)!r} of {text!r} is counted {ours.get(gram, 0)} time(s) by "
                           f"bleu4 and {theirs.get(gram, 0)} by extract_all_word_ngrams")

