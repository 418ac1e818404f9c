"""Every interval and correlation simscore reports, in one place.

* :class:`Bootstrap` — the settings of every bootstrap (resamples, coverage, seed) as one
  value, validated once and passed down unchanged;
* :func:`bootstrap_ci` — percentile bootstrap interval of one mean, resampling contexts;
* :func:`bootstrap_ci_shared` — intervals of several means (one per measure) from one shared
  set of resamples of contexts or of clusters of contexts (e.g. dialogues), so the intervals
  are paired across measures, and each independent of which other measures are asked for;
* :func:`warn_undefined_intervals`, :func:`format_interval` — the warning and the text of an
  interval that one unit leaves undefined (below);
* :func:`t_interval` — mean and Student-t interval of the mean (quantile from scipy);
* :func:`wilson_interval` — Wilson score interval of a binomial proportion (from scipy);
* :func:`pearson_mse` — Pearson r and mean squared difference of two score columns;
  :func:`rank_correlations` — Spearman ρ and Kendall τ beside it;
* :func:`cohen_kappa`, :func:`gwet_ac1` — chance-corrected agreement of categorical labels
  (e.g. the acts two policies chose: raw agreement is TMR);
* :func:`paired_test` — two score columns on the same contexts: paired permutation test and
  bootstrap interval of the mean difference.

Scale: a comparison of a million contexts has few distinct score values (policies repeat
themselves), so both bootstraps draw *how often each distinct value (or row of values)
occurs* — one multinomial draw per resample, the same distribution as resampling contexts —
whenever that is cheaper than drawing context indices. The tests check the intervals
against :func:`scipy.stats.bootstrap`. How the resamples fall depends on the units and the
seed only, never on the values, so a process keeps a seed's recent draws (64 MB at most) and
gives them again, read-only: an experiment's intervals of every checkpoint on one context set
draw their resamples once, with the same bits as drawing them afresh.

**One unit says nothing about its spread.** A bootstrap interval from one context, or from one
cluster of contexts, is undefined: NaN (never a zero-width interval), and the commands and
tables that report one warn with a :class:`~simscore.errors.MissingValueWarning`
(:func:`warn_undefined_intervals`).

All randomness comes from a seed or a :class:`numpy.random.Generator` passed in.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from simscore.checks import check_int, check_number, check_seed
from simscore.io.config import resolve_settings

if TYPE_CHECKING:
    from simscore.measures._cache import LRUCache

__all__ = [
    "MAX_RESAMPLES",
    "Bootstrap",
    "bootstrap_ci",
    "bootstrap_ci_shared",
    "warn_undefined_intervals",
    "format_interval",
    "t_interval",
    "wilson_interval",
    "pearson_mse",
    "rank_correlations",
    "cohen_kappa",
    "gwet_ac1",
    "PairedTest",
    "paired_test",
]

#: The largest number of bootstrap resamples accepted: every resample keeps one mean per
#: measure (8 MB per measure at the cap); the draws themselves are made in chunks, so memory
#: does not otherwise grow with ``n_resamples``.
MAX_RESAMPLES = 1_000_000
#: Above this many resample weights (resamples x contexts) each mean is bootstrapped on its
#: own with the distinct-value shortcut of :func:`bootstrap_ci` instead of shared weights.
_SHARED_BOOTSTRAP_LIMIT = 4_000_000
#: Elements of one chunk of resample weights (resamples x rows): about 32 MB of float64.
_CHUNK_ELEMENTS = 4_000_000
#: Above this many distinct score rows a multinomial draw over rows costs more than drawing
#: context indices (about 70 ns per binomial against 8 ns per index).
_MAX_MULTINOMIAL_ROWS = 5_000
#: Bytes of seeded resample draws a process keeps for reuse (:func:`_seeded_draws`): several times
#: the paper run's largest, 1,296 contexts x 1,000 resamples (10 MB).
_DRAWS_BYTES = 64 * 2**20


@dataclass(frozen=True)
class Bootstrap:
    """The settings of a seeded percentile bootstrap, validated once and passed down unchanged.

    Every analysis of :mod:`simscore.analysis`, the figures and the experiment take one
    ``bootstrap=`` value instead of three keyword arguments.

    Attributes
    ----------
    n_resamples : int, default 1000
        Resamples, 0 to :data:`MAX_RESAMPLES` (0: :func:`simscore.comparison.compare` skips its
        intervals; the means over pairs need at least 1).
    confidence : float, default 0.95
        Coverage of each interval, in (0, 1).
    seed : int, default 0
        Seed of the resampling (same inputs, same interval), 0 to 2**63 - 1.

    Examples
    --------
    >>> Bootstrap()
    Bootstrap(n_resamples=1000, confidence=0.95, seed=0)
    >>> Bootstrap.from_mapping({"n_resamples": 200}).to_dict()
    {'n_resamples': 200, 'confidence': 0.95, 'seed': 0}
    >>> Bootstrap(confidence=1.0)
    Traceback (most recent call last):
    ...
    ValueError: confidence must be in (0, 1), got 1.0
    """

    n_resamples: int = 1000
    confidence: float = 0.95
    seed: int = 0

    def __post_init__(self) -> None:
        n_resamples = check_int("n_resamples", self.n_resamples, minimum=0, maximum=MAX_RESAMPLES)
        confidence = check_number("confidence", self.confidence)
        if not 0.0 < confidence < 1.0:
            raise ValueError(f"confidence must be in (0, 1), got {self.confidence!r}")
        seed = check_seed("seed", self.seed)
        object.__setattr__(self, "n_resamples", n_resamples)  # plain int and float, also from numpy numbers
        object.__setattr__(self, "confidence", confidence)
        object.__setattr__(self, "seed", seed)

    def to_dict(self) -> dict[str, Any]:
        """``{"n_resamples", "confidence", "seed"}``, as saved with tables."""
        return {"n_resamples": self.n_resamples, "confidence": self.confidence, "seed": self.seed}

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], *, source: str = "bootstrap") -> Bootstrap:
        """From saved plain data; missing settings take their defaults, unknown names are errors."""
        if not isinstance(data, Mapping):
            raise ValueError(f"{source}: expected an object with n_resamples, confidence, seed, got {data!r:.80}")
        unknown = sorted(set(data) - {"n_resamples", "confidence", "seed"})
        if unknown:
            raise ValueError(f"{source}: unknown bootstrap setting(s) {', '.join(map(repr, unknown))}")
        try:
            return cls(**data)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{source}: {exc}") from None

    @classmethod
    def resolve(cls, bootstrap: Bootstrap | None, where: str) -> Bootstrap:
        """``bootstrap=`` of the function ``where``: ``Bootstrap()`` for None (:func:`simscore.io.config.resolve_settings`)."""
        return resolve_settings(cls, bootstrap, where=where, parameter="bootstrap")


def _check_bootstrap(n_resamples: int, confidence: float) -> float:
    """Validate the bootstrap settings; returns the lower percentile (in %)."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    check_int("n_resamples", n_resamples, minimum=1, maximum=MAX_RESAMPLES)
    return (1.0 - confidence) / 2.0 * 100.0


def _chunks(total: int, width: int) -> list[tuple[int, int]]:
    """``[start, stop)`` ranges over ``total`` resamples, each with at most ``_CHUNK_ELEMENTS`` weights."""
    step = max(1, _CHUNK_ELEMENTS // max(1, width))
    return [(start, min(start + step, total)) for start in range(0, total, step)]


def _nbytes(draws: tuple[np.ndarray, ...]) -> int:
    return sum(d.nbytes for d in draws)


@functools.cache
def _kept_draws() -> LRUCache[tuple[Any, ...], tuple[np.ndarray, ...]]:
    """The process's seeded draws kept for reuse (made on first use: the measures' LRU cache, bounded by bytes)."""
    from simscore.measures._cache import LRUCache

    return LRUCache("seeded bootstrap draws", max_entries=100_000, max_cost=_DRAWS_BYTES, cost=_nbytes)


def _seeded_draws(rng: Any, key: tuple[Any, ...], chunks: list[tuple[int, int]],
                  draw: Callable[[np.random.Generator, int], np.ndarray]) -> tuple[np.ndarray, ...]:
    """``draw(generator, stop - start)`` for each chunk in turn, from ``rng`` (a seed: a fresh generator).

    A seed's draws depend only on the seed, the chunks and what ``key`` names -- the kind of draw and every
    parameter ``draw`` uses -- never on the values resampled, so they are kept (read-only) and given again: the
    intervals of every checkpoint of every run on one context set draw their resamples once. The same bits as
    drawing them again; a generator passed in is drawn from every time (its state moves on).
    """
    def drawn() -> tuple[np.ndarray, ...]:
        generator = np.random.default_rng(rng)
        return tuple(draw(generator, stop - start) for start, stop in chunks)

    if not isinstance(rng, (int, np.integer)) or isinstance(rng, bool):  # a generator, None, a seed sequence
        return drawn()
    kept, full = _kept_draws(), (*key, int(rng), tuple(chunks))
    found = kept.get(full)
    if found is None:
        found = drawn()
        for d in found:
            d.flags.writeable = False
        kept.put(full, found)
    return found


def _percentile_interval(means: np.ndarray, tail: float) -> tuple[float, float]:
    low, high = np.percentile(means, [tail, 100.0 - tail])
    return (float(low), float(high))


def bootstrap_ci(
    values: np.ndarray,
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    rng: np.random.Generator | int | None = 0,
    clusters: np.ndarray | None = None,
) -> tuple[float, float]:
    """Percentile bootstrap confidence interval of the mean, resampling contexts.

    Parameters
    ----------
    values : ndarray, shape (n,)
        Per-context scores without NaN.
    n_resamples : int
        Bootstrap resamples.
    confidence : float
        Coverage of the interval, in (0, 1).
    rng : Generator or int
        Source of randomness (an int is a seed; with ``clusters`` it must be one).
    clusters : ndarray of int, shape (n,), optional
        A code per context naming its cluster (e.g. its dialogue): the bootstrap then
        resamples clusters (:func:`bootstrap_ci_shared`).

    Returns
    -------
    (low, high) : tuple of float
        NaN for an empty input and for one unit (one value, or one cluster): one value says
        nothing about its spread.

    Examples
    --------
    >>> bootstrap_ci(np.array([1.0, 1.0, 1.0]))
    (1.0, 1.0)
    >>> bootstrap_ci(np.array([1.0]))
    (nan, nan)
    >>> low, high = bootstrap_ci(np.array([0.0, 1.0] * 50), rng=3)
    >>> 0.35 < low < 0.5 < high < 0.65
    True
    >>> bootstrap_ci(np.array([0.0, 1.0] * 50), rng=3, clusters=np.repeat(np.arange(10), 10))
    (0.5, 0.5)
    """
    tail = _check_bootstrap(n_resamples, confidence)
    values = np.asarray(values, dtype=np.float64)
    n = len(values)
    if n <= 1:
        return (float("nan"), float("nan"))
    if clusters is not None:
        if isinstance(rng, np.random.Generator) or rng is None:
            raise TypeError("bootstrap_ci: with clusters, rng must be an int seed")
        return bootstrap_ci_shared({"x": values}, np.arange(n), n_resamples=n_resamples, confidence=confidence,
                                   seed=int(rng), clusters=clusters)["x"]
    distinct, counts = np.unique(values, return_counts=True)
    if len(distinct) == 1:
        return (float(distinct[0]), float(distinct[0]))
    means = np.empty(n_resamples)
    if len(distinct) * 8 <= n:
        # Resampling n contexts with replacement = drawing how often each distinct value occurs.
        chunks = _chunks(n_resamples, len(distinct))
        draws = _seeded_draws(rng, ("counts", n, counts.tobytes()), chunks,
                              lambda generator, size: generator.multinomial(n, counts / n, size=size))
        for (start, stop), drawn in zip(chunks, draws, strict=True):
            means[start:stop] = drawn @ distinct / n
    else:
        chunks = _chunks(n_resamples, n)
        draws = _seeded_draws(rng, ("indices", n), chunks,
                              lambda generator, size: generator.integers(0, n, size=(size, n)))
        for (start, stop), idx in zip(chunks, draws, strict=True):
            means[start:stop] = values[idx].mean(axis=1)
    return _percentile_interval(means, tail)


def bootstrap_ci_shared(
    columns: Mapping[str, np.ndarray],
    groups: np.ndarray,
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    clusters: np.ndarray | None = None,
) -> dict[str, tuple[float, float]]:
    """Bootstrap intervals of several means from one shared set of resamples.

    The units — the contexts, or the clusters of contexts that are not independent (e.g. the
    contexts collected from one dialogue) — are resampled once and the resample is reused
    for every column, so the intervals are paired across columns (measures). How the units
    are drawn depends only on ``groups``, ``clusters`` and ``seed``, never on the values: a
    column's interval is the same whichever other columns are asked for.

    * Without ``clusters``, a context enters only through its row of values, so resampling
      contexts is the same as drawing how often each group of contexts occurs (one
      multinomial draw over the groups, probability ``size / n``); when groups are mostly
      single contexts, explicit resample weights over the contexts are drawn instead.
    * With ``clusters``, each resample draws the ``U`` clusters with replacement (each with
      probability ``1 / U``) and a column's mean is the ratio of the resampled sums and
      counts of its values (the mean over the contexts the resample holds).

    Parameters
    ----------
    columns : mapping name → ndarray, shape (n,)
        Per-context values of each column (NaN allowed: left out of that column's means).
    groups : ndarray of int, shape (n,)
        A code per context such that contexts with the same code have the same row of values
        in *every* column a caller could ask for (e.g. the factorisation of the compared
        responses, not of the scores).
    n_resamples, confidence, seed
        Bootstrap settings.
    clusters : ndarray of int, shape (n,), optional
        A code per context naming its cluster (the resampling unit).

    Returns
    -------
    dict
        Column name → ``(low, high)``; NaN for a column whose values fall in fewer than two
        units (contexts, or clusters with ``clusters``).

    Examples
    --------
    >>> cols = {"tmr": np.array([1.0, 0.0] * 20), "dmr": np.array([1.0, 1.0] * 20)}
    >>> ci = bootstrap_ci_shared(cols, np.array([0, 1] * 20), seed=1)
    >>> ci["dmr"], 0.3 < ci["tmr"][0] < 0.5 < ci["tmr"][1] < 0.7
    ((1.0, 1.0), True)
    >>> ci["tmr"] == bootstrap_ci_shared({"tmr": cols["tmr"]}, np.array([0, 1] * 20), seed=1)["tmr"]
    True
    >>> dialogues = np.repeat(np.arange(4), 10)  # 4 dialogues of 10 contexts: wider than 40 contexts
    >>> low, high = bootstrap_ci_shared(cols, np.array([0, 1] * 20), seed=1, clusters=dialogues)["tmr"]
    >>> (low, high) == (0.5, 0.5)  # every dialogue has half its contexts matching
    True
    """
    tail = _check_bootstrap(n_resamples, confidence)
    n = len(next(iter(columns.values()))) if columns else 0
    if n == 0:
        return {name: (float("nan"), float("nan")) for name in columns}
    names = list(columns)
    matrix = np.column_stack(list(columns.values()))
    valid = ~np.isnan(matrix)
    unit_of = None if clusters is None else np.unique(np.asarray(clusters), return_inverse=True)[1].reshape(-1)
    constant = {}
    for j, name in enumerate(names):
        present = matrix[valid[:, j], j]
        n_present = len(present) if unit_of is None else int(np.count_nonzero(np.bincount(unit_of[valid[:, j]])))
        if n_present <= 1:  # no unit, or one: no spread to resample
            constant[name] = (float("nan"), float("nan"))
        elif present.min() == present.max():
            constant[name] = (float(present[0]), float(present[0]))
    # per unit: the sum and the count of each column's values (NaN left out); draw(generator, size) gives how
    # often each unit is in each of ``size`` resamples, and depends only on what ``key`` names
    draw: Callable[[np.random.Generator, int], np.ndarray]
    if unit_of is not None:
        units = unit_of
        n_units = int(units.max()) + 1
        sums = np.zeros((n_units, len(names)))
        np.add.at(sums, units, np.where(valid, matrix, 0.0))
        counts = np.zeros((n_units, len(names)))
        np.add.at(counts, units, valid.astype(np.float64))
        equal = np.full(n_units, 1.0 / n_units)
        key: tuple[Any, ...] = ("units", n_units)

        def draw(generator: np.random.Generator, size: int) -> np.ndarray:
            return generator.multinomial(n_units, equal, size=size).astype(np.float64)

    else:
        _, first, sizes = np.unique(groups, return_index=True, return_counts=True)
        # cost per resample: a binomial draw per group, or an index draw per context
        if len(first) <= min(n // 4, _MAX_MULTINOMIAL_ROWS):
            sums, counts = np.where(valid, matrix, 0.0)[first], valid[first].astype(np.float64)
            key = ("groups", n, sizes.tobytes())

            def draw(generator: np.random.Generator, size: int) -> np.ndarray:
                return generator.multinomial(n, sizes / n, size=size).astype(np.float64)

        elif n * n_resamples <= _SHARED_BOOTSTRAP_LIMIT:
            sums, counts = np.where(valid, matrix, 0.0), valid.astype(np.float64)
            key = ("contexts", n)

            def draw(generator: np.random.Generator, size: int) -> np.ndarray:
                picks = generator.integers(0, n, size=(size, n))
                picks += np.arange(size)[:, None] * n
                return np.bincount(picks.ravel(), minlength=size * n).reshape(size, n).astype(np.float64)

        else:
            return {
                name: constant.get(name) or bootstrap_ci(
                    col[~np.isnan(col)], n_resamples=n_resamples, confidence=confidence, rng=seed)
                for name, col in columns.items()
            }
    means = {name: np.empty(n_resamples) for name in names if name not in constant}
    chunks = _chunks(n_resamples, sums.shape[0])
    # one resample for every column: the intervals are paired
    for (start, stop), weights in zip(chunks, _seeded_draws(seed, key, chunks, draw), strict=True):
        totals = weights @ counts
        resampled = weights @ sums
        with np.errstate(invalid="ignore", divide="ignore"):
            for j, name in enumerate(names):
                if name not in constant:
                    means[name][start:stop] = resampled[:, j] / totals[:, j]
    out: dict[str, tuple[float, float]] = {}
    for name in names:
        if name in constant:
            out[name] = constant[name]
        else:
            column_means = means[name]
            out[name] = _percentile_interval(column_means[~np.isnan(column_means)], tail)
    return out


def format_interval(low: float, high: float, *, digits: int = 4, signed: bool = False) -> str:
    """``[low, high]`` to ``digits`` decimals, or ``undefined`` where a bound is NaN (one unit, no resamples).

    >>> format_interval(0.25, 0.5), format_interval(float("nan"), float("nan"))
    ('[0.2500, 0.5000]', 'undefined')
    """
    if np.isnan(low) or np.isnan(high):
        return "undefined"
    sign = "+" if signed else ""
    return f"[{low:{sign}.{digits}f}, {high:{sign}.{digits}f}]"


def warn_undefined_intervals(names: Sequence[str], unit: str, *, confidence: float = 0.95, stacklevel: int = 2) -> None:
    """One :class:`~simscore.errors.MissingValueWarning` for intervals that rest on a single unit.

    ``names`` says which (measures, table rows), ``unit`` what one unit is (``context``,
    ``dialogue``, ``item``); nothing when ``names`` is empty.

    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_undefined_intervals(["tmr", "dmr"], "context")
    >>> print(caught[0].message)
    tmr, dmr: a 95% interval from one context is undefined (NaN): one value says nothing about its spread
    """
    if not names:
        return
    import warnings

    from simscore.errors import MissingValueWarning

    shown = ", ".join(map(str, names[:8])) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
    warnings.warn(
        f"{shown}: a {confidence:.0%} interval from one {unit} is undefined (NaN): one value says nothing about "
        "its spread",
        MissingValueWarning,
        stacklevel=stacklevel + 1,
    )


def t_interval(values: Sequence[float] | np.ndarray, *, confidence: float = 0.95) -> tuple[float, float, float]:
    """Mean and Student-t confidence interval of the mean: ``(mean, low, high)``.

    ``mean ± t_{(1+confidence)/2, n-1} · s / √n`` with the sample standard deviation ``s``
    (ddof 1) and the quantile from :mod:`scipy.special`; NaN bounds for fewer than two values.

    >>> [round(v, 4) for v in t_interval([4.0, 5.0, 6.0])]  # t(0.975, 2) = 4.3027, s/√n = 0.5774
    [5.0, 2.5159, 7.4841]
    >>> t_interval([3.0])
    (3.0, nan, nan)
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    x = np.asarray(values, dtype=np.float64)
    n = x.size
    if n == 0:
        return math.nan, math.nan, math.nan
    mean = float(x.mean())
    if n == 1:
        return mean, math.nan, math.nan
    from scipy.special import stdtrit

    half = float(stdtrit(n - 1, 0.5 + confidence / 2.0)) * float(x.std(ddof=1)) / math.sqrt(n)
    return mean, mean - half, mean + half


def wilson_interval(successes: int, n: int, *, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion (:meth:`scipy.stats.binomtest` ``.proportion_ci``).

    >>> [round(v, 4) for v in wilson_interval(95, 100)]
    [0.8882, 0.9785]
    >>> wilson_interval(0, 0)
    (nan, nan)
    """
    if n <= 0:
        return math.nan, math.nan
    from scipy.stats import binomtest

    ci = binomtest(int(successes), int(n)).proportion_ci(confidence_level=confidence, method="wilson")
    return float(ci.low), float(ci.high)


def pearson_mse(x: np.ndarray, y: np.ndarray) -> tuple[float, float, int]:
    """Pearson r, mean squared difference and count of the pairs where neither value is NaN.

    r is NaN when either column is (numerically) constant or fewer than two pairs are left.

    >>> r, mse, n = pearson_mse(np.array([0.0, 1.0, 2.0, np.nan]), np.array([0.0, 2.0, 4.0, 1.0]))
    >>> round(r, 6), round(mse, 4), n
    (1.0, 1.6667, 3)
    """
    keep = ~(np.isnan(x) | np.isnan(y))
    x, y = x[keep], y[keep]
    n = len(x)
    if n == 0:
        return float("nan"), float("nan"), 0
    mse = float(np.mean((x - y) ** 2))
    dx, dy = x - x.mean(), y - y.mean()
    sxx, syy = float(dx @ dx), float(dy @ dy)
    # a (numerically) constant column has no correlation
    if n < 2 or sxx <= 1e-24 * n or syy <= 1e-24 * n:
        return float("nan"), mse, n
    r = float(dx @ dy) / math.sqrt(sxx * syy)
    return max(-1.0, min(1.0, r)), mse, n


# ----------------------------------------------------------------------------- agreement


def _category_shares(a: Sequence[Any], b: Sequence[Any]) -> tuple[np.ndarray, np.ndarray, float, int]:
    """Shares of each category on both sides, the observed agreement and the number of pairs."""
    if len(a) != len(b):
        raise ValueError(f"a and b must have the same length, got {len(a)} and {len(b)}")
    n = len(a)
    if n == 0:
        return np.zeros(0), np.zeros(0), float("nan"), 0
    codes, _ = _factorise(list(a) + list(b))
    ca, cb = codes[:n], codes[n:]
    k = int(codes.max()) + 1
    share_a = np.bincount(ca, minlength=k) / n
    share_b = np.bincount(cb, minlength=k) / n
    return share_a, share_b, float(np.mean(ca == cb)), n


def _factorise(values: list[Any]) -> tuple[np.ndarray, list[Any]]:
    index: dict[Any, int] = {}
    codes = np.fromiter((index.setdefault(v, len(index)) for v in values), dtype=np.int64, count=len(values))
    return codes, list(index)


def cohen_kappa(a: Sequence[Any], b: Sequence[Any]) -> float:
    """Cohen's κ between two raters' categorical labels (hashable items), chance-corrected agreement.

    ``κ = (p_o - p_e) / (1 - p_e)`` with the observed agreement ``p_o`` and the agreement
    expected by chance from each side's own label distribution, ``p_e = Σ_k p_a(k) p_b(k)``.
    A policy that nearly always says the same thing agrees often by chance; κ discounts that.
    NaN when ``p_e = 1`` (both sides constant and equal: agreement cannot be told from chance)
    or there are no pairs.

    >>> round(cohen_kappa(["a", "a", "b", "b"], ["a", "b", "b", "b"]), 4)  # p_o .75, p_e .5
    0.5
    >>> cohen_kappa(["x"] * 3, ["x"] * 3)
    nan
    """
    share_a, share_b, observed, n = _category_shares(a, b)
    if n == 0:
        return float("nan")
    expected = float(share_a @ share_b)
    if expected >= 1.0 - 1e-12:
        return float("nan")
    return (observed - expected) / (1.0 - expected)


def gwet_ac1(a: Sequence[Any], b: Sequence[Any]) -> float:
    """Gwet's AC1 between two raters' categorical labels: chance-corrected, robust to skewed labels.

    ``AC1 = (p_o - p_e) / (1 - p_e)`` with ``p_e = Σ_k π_k (1 - π_k) / (K - 1)``,
    ``π_k = (p_a(k) + p_b(k)) / 2`` and ``K`` the number of categories either side used.
    Unlike κ it stays informative when one category dominates (Gwet 2008). With a single
    category ``p_e = 0`` and AC1 is the observed agreement.

    >>> round(gwet_ac1(["a", "a", "b", "b"], ["a", "b", "b", "b"]), 4)  # π = (3/8, 5/8): p_e = 15/32
    0.5294
    >>> gwet_ac1(["x"] * 3, ["x"] * 3)
    1.0
    """
    share_a, share_b, observed, n = _category_shares(a, b)
    if n == 0:
        return float("nan")
    k = len(share_a)
    if k < 2:
        return observed
    pi = (share_a + share_b) / 2.0
    expected = float(pi @ (1.0 - pi)) / (k - 1)
    return (observed - expected) / (1.0 - expected)


# ----------------------------------------------------------------------------- paired tests


class PairedTest(NamedTuple):
    """A paired comparison of two per-context score columns (``x - y``).

    Attributes
    ----------
    mean_difference : float
        Mean of ``x - y`` over the contexts both define.
    ci_low, ci_high : float
        Percentile bootstrap interval of the mean difference (contexts resampled in pairs).
    p_value : float
        Two-sided p-value of "no difference" from a paired permutation test (the sign of each
        unit's difference flipped at random, Monte Carlo with ``n_permutations``).
    n : int
        Pairs used (NaN in either column dropped).
    units : int
        Units the bootstrap and the test moved: the pairs, or the clusters they fall in.
    """

    mean_difference: float
    ci_low: float
    ci_high: float
    p_value: float
    n: int
    units: int


def paired_test(
    x: np.ndarray,
    y: np.ndarray,
    *,
    n_permutations: int = 10_000,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    clusters: np.ndarray | None = None,
) -> PairedTest:
    """Is ``x`` different from ``y`` on the same contexts? Paired permutation test and bootstrap.

    Typical use: ``x`` the per-context TMR of A vs B, ``y`` of A vs C on the same contexts —
    "is A closer to B than to C?" — or the same measure in two comparisons of one context set.
    The permutation test is :func:`scipy.stats.permutation_test` with ``permutation_type=
    "samples"`` (sign flips of the paired differences); the interval is :func:`bootstrap_ci`
    of the differences. Both are seeded.

    With ``clusters`` (a code per context naming its cluster, e.g. its dialogue:
    :func:`simscore.stats.clusters.cluster_codes`) both move whole clusters: the bootstrap resamples
    clusters, and the test flips the sign of a cluster's summed difference as one (the mean
    difference over the contexts is that sum over all clusters divided by the fixed number of
    pairs, so the test of the cluster sums is the test of the mean).

    Examples
    --------
    >>> x = np.array([1.0, 1.0, 1.0, 0.0] * 25)
    >>> y = np.array([1.0, 0.0, 0.0, 0.0] * 25)
    >>> t = paired_test(x, y, seed=1)
    >>> round(t.mean_difference, 2), t.ci_low > 0, t.p_value < 0.001, t.n, t.units
    (0.5, True, True, 100, 100)
    >>> t = paired_test(x, y, seed=1, clusters=np.repeat(np.arange(4), 25))  # 4 dialogues of 25 contexts
    >>> round(t.mean_difference, 2), round(t.p_value, 3), t.units  # 2**4 sign patterns: at best 2/16
    (0.5, 0.125, 4)
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"x and y must be 1-d arrays of the same length, got shapes {x.shape} and {y.shape}")
    n_permutations = check_int("n_permutations", n_permutations, minimum=1, maximum=MAX_RESAMPLES, error=ValueError)
    keep = ~(np.isnan(x) | np.isnan(y))
    diff = x[keep] - y[keep]
    n = int(diff.size)
    if n == 0:
        return PairedTest(float("nan"), float("nan"), float("nan"), float("nan"), 0, 0)
    units = None
    left, right = x[keep], y[keep]
    if clusters is not None:
        clusters = np.asarray(clusters)
        if clusters.shape != x.shape:
            raise ValueError(f"clusters must have one code per pair, shape {x.shape}, got {clusters.shape}")
        units = np.unique(clusters[keep], return_inverse=True)[1].reshape(-1)
        left, right = np.bincount(units, weights=left), np.bincount(units, weights=right)  # sums per cluster
    low, high = bootstrap_ci(diff, n_resamples=n_resamples, confidence=confidence, rng=seed, clusters=units)
    n_units = len(left)
    if not diff.any() or n_units < 2:
        p_value = 1.0  # no difference, or one unit: both signs are equally likely
    else:
        from scipy.stats import permutation_test

        def statistic(a: np.ndarray, b: np.ndarray, axis: int) -> np.ndarray:
            return np.mean(a - b, axis=axis)

        result = permutation_test(
            (left, right), statistic, permutation_type="samples", vectorized=True,
            n_resamples=int(n_permutations), alternative="two-sided", rng=np.random.default_rng(seed),
        )
        p_value = float(result.pvalue)
    return PairedTest(float(diff.mean()), low, high, p_value, n, n_units)


# ----------------------------------------------------------------------------- rank correlation


def rank_correlations(x: np.ndarray, y: np.ndarray) -> tuple[float, float, int]:
    """Spearman ρ and Kendall τ-b of the pairs where neither value is NaN (scipy), and their count.

    NaN where a column is constant or fewer than two pairs are left.

    >>> rho, tau, n = rank_correlations(np.array([1.0, 2.0, 3.0, np.nan]), np.array([1.0, 4.0, 9.0, 0.0]))
    >>> rho, tau, n
    (1.0, 1.0, 3)
    """
    keep = ~(np.isnan(x) | np.isnan(y))
    x, y = x[keep], y[keep]
    n = int(len(x))
    if n < 2 or np.ptp(x) == 0.0 or np.ptp(y) == 0.0:
        return float("nan"), float("nan"), n
    from scipy.stats import kendalltau, spearmanr

    rho = float(spearmanr(x, y).statistic)
    tau = float(kendalltau(x, y).statistic)
    return rho, tau, n
