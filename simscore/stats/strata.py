"""Similarity per stratum of contexts, and tests of the difference between strata.

A stratum is a group of contexts that share a label in their metadata: ``flow`` = seen or
unseen (see :mod:`contexts.flows`), a complex-pattern tag, a turn index. :func:`stratify`
takes the per-context scores of a :class:`~simscore.comparison.Comparison` (made with the
contexts' metadata) and reports, for every measure,

* per stratum: the mean, the count, and a percentile bootstrap interval of the mean;
* per pair of strata: the difference of the means with a bootstrap interval, and the
  two-sided p-value of a permutation test of "the label does not matter".

**Units.** Contexts of one dialogue are not independent. With clusters — by default those the
comparison was made with, the dialogues of collected contexts (:mod:`simscore.stats.clusters`), or
the columns ``cluster`` names (e.g. ``"dialogue_id"``) — the unit is a cell of one cluster and
one stratum (all contexts of a dialogue with the same label), and both the bootstrap and the
permutation move whole units; without (generated contexts, ``cluster=None``) every context
is a unit. A stratum's mean is always the mean over its contexts (a
ratio of sums over units), so the point estimates do not depend on the units.

**The permutation test** (:func:`permutation_test_strata`) shuffles the stratum labels of
the units of two strata: under "no difference" every split of the units into groups of the
observed sizes is equally likely. The statistic is the difference of the two means; the
p-value is two-sided as in :func:`scipy.stats.permutation_test` (twice the smaller one-sided
p-value, at most 1). Units enter only through their (sum, count) row, so a split is
determined by how many units of each distinct row fall into the first group (a multivariate
hypergeometric draw): the test is *exact* — every split weighted by its probability —
whenever there are at most :data:`EXACT_LIMIT` such compositions (always for a 0/1 measure
such as TMR), and otherwise Monte Carlo with ``n_permutations`` random splits, with scipy's
``(k + 1) / (n + 1)`` p-values. Either way it costs the same for a million contexts as for a
thousand when they have few distinct scores.

**The intervals** resample the units of each stratum with replacement, each stratum on its
own (the strata are disjoint samples); the interval of a difference pairs the two strata's
resamples. A stratum of one unit has no interval (NaN, with a
:class:`~simscore.errors.MissingValueWarning`), nor have its differences. The permutation
test and the bootstrap are seeded.

Examples
--------
>>> import pandas as pd
>>> scores = pd.DataFrame({"tmr": [1.0, 1.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0],
...                        "flow": ["seen"] * 4 + ["unseen"] * 4})
>>> result = stratify(scores, "flow", measures=["tmr"], seed=1)
>>> float(result.table.loc[("tmr", "seen"), "mean"]), float(result.table.loc[("tmr", "unseen"), "mean"])
(0.75, 0.25)
>>> test = result.test("tmr")
>>> float(test.difference), round(float(test.p_value), 4), bool(test.exact)
(0.5, 0.4857, True)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from simscore.checks import check_int
from simscore.io.untrusted import terminal_text
from simscore.stats import MAX_RESAMPLES, format_interval, warn_undefined_intervals
from simscore.stats.clusters import AUTO, Clusters, check_column, cluster_codes, resolve_clusters, unit_name

__all__ = [
    "EXACT_LIMIT",
    "MAX_STRATA",
    "StrataTest",
    "StratifiedComparison",
    "permutation_test_strata",
    "stratify",
    "format_p_value",
]

#: The exact test enumerates the compositions of the first group when there are at most
#: this many (each costs a few operations; 200,000 take well under a second).
EXACT_LIMIT = 200_000
#: At most this many strata (every pair is tested: 66 tests for 12 strata).
MAX_STRATA = 12
#: Elements of one chunk of Monte Carlo draws (draws x distinct rows).
_CHUNK_ELEMENTS = 4_000_000


class StrataTest(NamedTuple):
    """The difference of one measure's mean between two strata (``a − b``).

    Attributes
    ----------
    difference : float
        Mean over the contexts of stratum ``a`` minus the mean over those of ``b``.
    ci_low, ci_high : float
        Percentile bootstrap interval of the difference.
    p_value : float
        Two-sided permutation-test p-value (NaN when a stratum has no scored context).
    exact : bool
        Whether ``p_value`` is exact (every split enumerated) or Monte Carlo.
    n_permutations : int
        Random splits drawn (0 for an exact test).
    n_a, n_b : int
        Units (contexts, or cluster cells) of each stratum that have a score.
    """

    difference: float
    ci_low: float
    ci_high: float
    p_value: float
    exact: bool
    n_permutations: int
    n_a: int
    n_b: int


def format_p_value(p_value: float, *, exact: bool, n_permutations: int) -> str:
    """A p-value written to the precision its test allows.

    An exact p-value keeps three significant digits; a Monte Carlo one is written with as
    many decimals as ``n_permutations`` resolves, and at its floor (no random split as
    extreme as the observed one) as an upper bound ``p ≤ …``.

    >>> format_p_value(0.0123456, exact=True, n_permutations=0)
    'p = 0.0123 (exact)'
    >>> format_p_value(2 / 10_001, exact=False, n_permutations=10_000)
    'p ≤ 0.0002 (10,000 permutations)'
    >>> format_p_value(0.31, exact=False, n_permutations=999)
    'p = 0.310 (999 permutations)'
    """
    if math.isnan(p_value):
        return "p = n/a"
    if exact:
        return f"p = {p_value:.3g} (exact)"
    decimals = max(1, math.floor(math.log10(n_permutations + 1)))
    floor = 2.0 / (n_permutations + 1)
    if p_value <= floor * (1 + 1e-9):
        shown = math.ceil(floor * 10**decimals) / 10**decimals
        return f"p ≤ {shown:.{decimals}f} ({n_permutations:,} permutations)"
    return f"p = {p_value:.{decimals}f} ({n_permutations:,} permutations)"


# ----------------------------------------------------------------------------- units


def _units(values: np.ndarray, labels: np.ndarray, clusters: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(label code, sum, count) per unit of one measure; contexts without a score left out.

    ``labels`` are integer codes; a unit is a context, or a (cluster, label) cell.
    """
    keep = ~np.isnan(values)
    values, labels = values[keep], labels[keep]
    if clusters is None:
        return labels, values, np.ones(len(values))
    _, cells = np.unique(np.column_stack([clusters[keep], labels]), axis=0, return_inverse=True)
    cells = cells.reshape(-1)
    n_cells = int(cells.max()) + 1 if len(cells) else 0
    sums = np.bincount(cells, weights=values, minlength=n_cells)
    counts = np.bincount(cells, minlength=n_cells).astype(np.float64)
    cell_labels = np.zeros(n_cells, dtype=np.int64)
    cell_labels[cells] = labels
    return cell_labels, sums, counts


def _types(sums: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct (sum, count) rows and how many units have each."""
    rows, multiplicity = np.unique(np.column_stack([sums, counts]), axis=0, return_counts=True)
    return rows[:, 0], rows[:, 1], multiplicity


# ----------------------------------------------------------------------------- permutation test


def _composition_count(capacities: np.ndarray, total: int, limit: int) -> int:
    """How many vectors ``0 <= k <= capacities`` sum to ``total`` (capped at ``limit + 1``)."""
    ways = np.zeros(total + 1, dtype=np.int64)
    ways[0] = 1
    for capacity in capacities:
        # new[j] = sum of ways[j - capacity .. j]: a sliding window over the cumulative sums
        cumulative = np.concatenate([[0], np.cumsum(ways)])
        upper = np.arange(1, total + 2)
        lower = np.maximum(0, upper - int(capacity) - 1)
        ways = np.minimum(cumulative[upper] - cumulative[lower], limit + 1)
    return int(ways[total])


def _compositions(capacities: np.ndarray, total: int) -> np.ndarray:
    """Every vector ``0 <= k <= capacities`` with ``sum(k) == total``, one per row."""
    rows = np.zeros((1, 0), dtype=np.int64)
    sums = np.zeros(1, dtype=np.int64)
    rest = np.concatenate([np.cumsum(capacities[::-1])[::-1][1:], [0]])
    for capacity, after in zip(capacities, rest):
        low = np.maximum(0, total - sums - after)
        high = np.minimum(capacity, total - sums)
        repeats = high - low + 1
        index = np.repeat(np.arange(len(rows)), repeats)
        offsets = np.arange(int(repeats.sum())) - np.repeat(np.cumsum(repeats) - repeats, repeats)
        k = low[index] + offsets
        rows = np.column_stack([rows[index], k])
        sums = sums[index] + k
    return rows


def _two_sided(null: np.ndarray, observed: float, weights: np.ndarray | None, n_draws: int) -> float:
    """scipy's two-sided p-value: twice the smaller tail (ties within 100 eps count as extreme)."""
    gamma = abs(observed) * 100 * np.finfo(np.float64).eps
    greater = null >= observed - gamma
    less = null <= observed + gamma
    if weights is not None:  # exact: tail probabilities
        p_greater, p_less = float(weights[greater].sum()), float(weights[less].sum())
    else:  # Monte Carlo: the observed split counts as one of the draws
        p_greater = (int(greater.sum()) + 1) / (n_draws + 1)
        p_less = (int(less.sum()) + 1) / (n_draws + 1)
    return min(1.0, 2.0 * min(p_greater, p_less))


def permutation_test_strata(
    sums_a: np.ndarray,
    counts_a: np.ndarray,
    sums_b: np.ndarray,
    counts_b: np.ndarray,
    *,
    n_permutations: int = 10_000,
    rng: np.random.Generator | int | None = 0,
) -> tuple[float, float, bool, int]:
    """Two-sided permutation test of the difference of two groups' means.

    Each unit has a sum of scores and a count of scored contexts (1 and the score itself
    when units are contexts); a group's mean is its total sum over its total count. Under
    the null hypothesis the units' group labels are exchangeable.

    Parameters
    ----------
    sums_a, counts_a, sums_b, counts_b : ndarray, shape (n_a,) and (n_b,)
        The units of each group (counts > 0).
    n_permutations : int
        Random splits when the exact test would enumerate more than :data:`EXACT_LIMIT`
        compositions.
    rng : Generator or int
        Source of randomness of the Monte Carlo test.

    Returns
    -------
    (difference, p_value, exact, n_permutations) : tuple
        ``n_permutations`` is 0 for an exact test.

    Examples
    --------
    Four of five against one of five (a 0/1 measure): exactly scipy's p-value.

    >>> ones = np.ones(5)
    >>> d, p, exact, _ = permutation_test_strata(np.array([1., 1, 1, 1, 0]), ones, np.array([1., 0, 0, 0, 0]), ones)
    >>> round(d, 6), round(p, 6), exact
    (0.6, 0.206349, True)
    """
    n_permutations = check_int("n_permutations", n_permutations, minimum=1, maximum=MAX_RESAMPLES, error=ValueError)
    sums = np.concatenate([np.asarray(sums_a, dtype=np.float64), np.asarray(sums_b, dtype=np.float64)])
    counts = np.concatenate([np.asarray(counts_a, dtype=np.float64), np.asarray(counts_b, dtype=np.float64)])
    n_a = len(sums_a)
    if n_a == 0 or len(sums_b) == 0:
        return float("nan"), float("nan"), True, 0
    total_sum, total_count = float(sums.sum()), float(counts.sum())
    count_a = float(counts[:n_a].sum())
    observed = float(sums[:n_a].sum()) / count_a - (total_sum - float(sums[:n_a].sum())) / (total_count - count_a)
    type_sums, type_counts, multiplicity = _types(sums, counts)

    def statistic(k: np.ndarray) -> np.ndarray:
        s_a, c_a = k @ type_sums, k @ type_counts
        return s_a / c_a - (total_sum - s_a) / (total_count - c_a)

    if _composition_count(multiplicity, n_a, EXACT_LIMIT) <= EXACT_LIMIT:
        from scipy.special import gammaln

        k = _compositions(multiplicity, n_a)
        log_choose = gammaln(multiplicity + 1) - gammaln(k + 1) - gammaln(multiplicity - k + 1)
        log_total = gammaln(len(sums) + 1) - gammaln(n_a + 1) - gammaln(len(sums) - n_a + 1)
        weights = np.exp(log_choose.sum(axis=1) - log_total)
        return observed, _two_sided(statistic(k.astype(np.float64)), observed, weights, 0), True, 0
    generator = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    null = np.empty(n_permutations)
    step = max(1, _CHUNK_ELEMENTS // len(multiplicity))
    for start in range(0, n_permutations, step):
        stop = min(start + step, n_permutations)
        k = generator.multivariate_hypergeometric(multiplicity, n_a, size=stop - start, method="marginals")
        null[start:stop] = statistic(k.astype(np.float64))
    return observed, _two_sided(null, observed, None, n_permutations), False, n_permutations


# ----------------------------------------------------------------------------- bootstrap


def _bootstrap_means(sums: np.ndarray, counts: np.ndarray, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Means of ``n_resamples`` resamples of the units (with replacement), shape (n_resamples,)."""
    n = len(sums)
    type_sums, type_counts, multiplicity = _types(sums, counts)
    means = np.empty(n_resamples)
    if len(multiplicity) == 1:
        means[:] = type_sums[0] / type_counts[0]
        return means
    if len(multiplicity) * 8 <= n:  # how often each distinct unit is drawn: one multinomial per resample
        step = max(1, _CHUNK_ELEMENTS // len(multiplicity))
        for start in range(0, n_resamples, step):
            stop = min(start + step, n_resamples)
            draws = rng.multinomial(n, multiplicity / n, size=stop - start).astype(np.float64)
            means[start:stop] = (draws @ type_sums) / (draws @ type_counts)
    else:
        step = max(1, _CHUNK_ELEMENTS // n)
        for start in range(0, n_resamples, step):
            stop = min(start + step, n_resamples)
            index = rng.integers(0, n, size=(stop - start, n))
            means[start:stop] = sums[index].sum(axis=1) / counts[index].sum(axis=1)
    return means


def _interval(means: np.ndarray, confidence: float) -> tuple[float, float]:
    tail = (1.0 - confidence) / 2.0 * 100.0
    low, high = np.percentile(means, [tail, 100.0 - tail])
    return float(low), float(high)


# ----------------------------------------------------------------------------- the result


_TABLE_COLUMNS = ["mean", "count", "missing", "units", "ci_low", "ci_high"]
_TEST_COLUMNS = ["difference", "ci_low", "ci_high", "p_value", "exact", "n_permutations", "n_a", "n_b"]


@dataclass(frozen=True)
class StratifiedComparison:
    """Every measure per stratum, and the differences between strata (see the module docstring).

    Attributes
    ----------
    by : str
        The metadata column that defines the strata.
    strata : tuple of str
        The stratum labels (as text), sorted.
    table : pandas.DataFrame
        Index (``measure``, ``stratum``); columns ``mean``, ``count`` (scored contexts),
        ``missing`` (contexts without a score), ``units``, ``ci_low``, ``ci_high``.
    tests : pandas.DataFrame
        Index (``measure``, ``a``, ``b``), one row per measure and pair of strata ``a < b``;
        columns as :class:`StrataTest`.
    info : dict
        ``by``, ``cluster``, ``unlabelled`` (contexts without a label, left out), ``seed``,
        ``n_resamples``, ``n_permutations``, ``confidence``.
    """

    by: str
    strata: tuple[str, ...]
    table: pd.DataFrame
    tests: pd.DataFrame
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def measures(self) -> tuple[str, ...]:
        """Measure names, in order."""
        return tuple(dict.fromkeys(self.table.index.get_level_values("measure")))

    def test(self, measure: str, a: str | None = None, b: str | None = None) -> StrataTest:
        """The test of one measure between strata ``a`` and ``b`` (default: the only pair)."""
        rows = self.tests.xs(measure, level="measure")
        if a is None and b is None:
            if len(rows) != 1:
                raise ValueError(f"{len(self.strata)} strata: name the pair (a=..., b=...)")
            row = rows.iloc[0]
        else:
            key = (str(a), str(b)) if (str(a), str(b)) in rows.index else (str(b), str(a))
            if key not in rows.index:
                raise KeyError(f"no test between strata {a!r} and {b!r} (strata: {', '.join(self.strata)})")
            row = rows.loc[key]
            if key != (str(a), str(b)):  # the caller asked for b − a
                row = row.copy()
                row["difference"], row["ci_low"], row["ci_high"] = -row["difference"], -row["ci_high"], -row["ci_low"]
                row["n_a"], row["n_b"] = row["n_b"], row["n_a"]
        return StrataTest(**{column: row[column] for column in _TEST_COLUMNS})

    def sentence(self, measure: str, a: str | None = None, b: str | None = None) -> str:
        """One line a reader can quote, e.g. ``tmr: 0.810 on flow=seen (n=812) vs 0.520 on …``."""
        if a is None and b is None:
            a, b = self.tests.xs(measure, level="measure").index[0]
        test = self.test(measure, a, b)
        confidence = self.info.get("confidence", 0.95)
        rows = self.table.xs(measure, level="measure")
        parts = [
            f"{rows.loc[str(s), 'mean']:.3f} on {self.by}={s} (n={int(rows.loc[str(s), 'count'])})" for s in (a, b)
        ]
        p = format_p_value(float(test.p_value), exact=bool(test.exact), n_permutations=int(test.n_permutations))
        interval = format_interval(test.ci_low, test.ci_high, digits=3, signed=True)
        return (
            f"{measure}: {parts[0]} vs {parts[1]}; difference {test.difference:+.3f} "
            f"[{confidence:.0%} CI {interval.strip('[]')}], {p}"
        )

    def format(self) -> str:
        """A readable fixed-width report: the per-stratum table, then the tests."""
        confidence = self.info.get("confidence", 0.95)
        ci_head = f"{confidence:.0%} CI"
        strata = {s: terminal_text(str(s)) for s in self.strata}  # labels come from a file's metadata
        width = max([7] + [len(s) for s in strata.values()])
        columns = self.info.get("cluster") or ()
        unit = (f"{unit_name(columns)[:-1]} cells of one stratum (by {', '.join(columns)})" if columns
                else "contexts")
        lines = [f"by {self.by} ({self.info.get('unlabelled', 0)} contexts without a label left out; units: {unit})"]
        lines.append(f"{'measure':<9} {'stratum':<{width}} {'mean':>7}  {ci_head:<16} {'n':>6}")
        for (measure, stratum), row in self.table.iterrows():
            ci = format_interval(row["ci_low"], row["ci_high"])
            lines.append(f"{measure:<9} {strata[stratum]:<{width}} {row['mean']:>7.4f}  {ci:<16} {int(row['count']):>6}")
        lines.append("")
        lines.append(f"differences a − b, {ci_head} (bootstrap) and two-sided permutation test")
        lines.append(f"{'measure':<9} {'a':<{width}} {'b':<{width}} {'a − b':>8}  {ci_head:<18} p")
        for (measure, a, b), row in self.tests.iterrows():
            ci = format_interval(row["ci_low"], row["ci_high"], signed=True)
            p = format_p_value(float(row["p_value"]), exact=bool(row["exact"]), n_permutations=int(row["n_permutations"]))
            lines.append(f"{measure:<9} {strata[a]:<{width}} {strata[b]:<{width}} {row['difference']:>+8.4f}  {ci:<18} {p}")
        return "\n".join(lines)

    def to_json_dict(self) -> dict[str, Any]:
        """Everything as plain JSON types (NaN becomes null)."""

        def plain(value: Any) -> Any:
            if isinstance(value, (bool, np.bool_)):
                return bool(value)
            if isinstance(value, (int, np.integer)):
                return int(value)
            value = float(value)
            return None if math.isnan(value) else value

        return {
            "by": self.by,
            "strata": list(self.strata),
            "info": self.info,
            "table": [
                {"measure": m, "stratum": s, **{c: plain(row[c]) for c in _TABLE_COLUMNS}}
                for (m, s), row in self.table.iterrows()
            ],
            "tests": [
                {"measure": m, "a": a, "b": b, **{c: plain(row[c]) for c in _TEST_COLUMNS}}
                for (m, a, b), row in self.tests.iterrows()
            ],
        }


def _label_codes(column: pd.Series) -> tuple[np.ndarray, list[str], int]:
    """Integer codes of the labels as text (-1: no label), the sorted labels, the unlabelled count."""
    missing = column.isna().to_numpy()
    text = column.map(lambda v: v if isinstance(v, str) else str(v))
    names = sorted(set(text[~missing]))
    lookup = {name: i for i, name in enumerate(names)}
    codes = np.array([-1 if gone else lookup[v] for v, gone in zip(text, missing)], dtype=np.int64)
    return codes, names, int(missing.sum())



def _measure_columns(frame: pd.DataFrame, measures: Sequence[str] | None, comparison_measures: Sequence[str] | None,
                     *, skip: set[str]) -> list[str]:
    """The measures to stratify: those given, else the comparison's, else every float column of
    ``frame`` but ``skip`` and the turn counts; each must be a column of ``frame``."""
    if measures is None:
        if comparison_measures is not None:
            measures = list(comparison_measures)
        else:
            skip = skip | {"turn_index", "history_length"}
            measures = [c for c in frame.columns if c not in skip and pd.api.types.is_float_dtype(frame[c])]
    measures = list(measures)
    missing = [m for m in measures if m not in frame.columns]
    if missing:
        raise KeyError(f"measure(s) {', '.join(map(repr, missing))} are not columns of the scores")
    return measures


def stratify(
    scores: Any,
    by: str,
    *,
    measures: Sequence[str] | None = None,
    cluster: Clusters = AUTO,
    n_resamples: int = 1000,
    n_permutations: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
) -> StratifiedComparison:
    """Every measure per stratum of ``by``, with intervals and tests between strata.

    Parameters
    ----------
    scores : Comparison or pandas.DataFrame
        A comparison made with the contexts' metadata (``compare(a, b, metadata=contexts)``),
        or its per-context ``scores`` frame: one float column per measure plus the ``by``
        (and ``cluster``) columns.
    by : str
        The metadata column whose values are the strata (missing values: left out and
        counted). At most :data:`MAX_STRATA` distinct values.
    measures : sequence of str, optional
        Default: every measure of the comparison (a DataFrame: every float column other
        than ``by``, ``cluster`` and ``turn_index``).
    cluster : "auto", str, sequence of str or None, default "auto"
        Column(s) whose values together group contexts into units (e.g. ``dialogue_id``), see
        the module docstring. ``"auto"``: the clusters the comparison was made with
        (``compare(..., clusters=...)``, by default the dialogues of collected contexts); for a
        DataFrame, the dialogues when its columns name them
        (:func:`~simscore.stats.clusters.dialogue_clusters`). None: every context is a unit.
    n_resamples, confidence : int, float
        Bootstrap settings of the intervals (``n_resamples=0``: no intervals, NaN).
    n_permutations : int
        Random splits of a Monte Carlo permutation test (exact tests need none).
    seed : int
        Seeds the bootstrap and the Monte Carlo tests.

    Returns
    -------
    StratifiedComparison

    Raises
    ------
    MetadataColumnError
        ``by`` or a ``cluster`` column is not a column (naming the columns there are), or a
        ``cluster`` column has no value at all (a ``KeyError`` and a ``ValueError``).
    KeyError
        A measure is not a column.
    ValueError
        Fewer than two or more than :data:`MAX_STRATA` strata, or bad settings.
    """
    comparison_measures = getattr(scores, "measures", None)
    frame = getattr(scores, "scores", scores)
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"scores must be a Comparison or a DataFrame, got {type(scores).__name__}")
    if cluster == AUTO and comparison_measures is not None:
        info = getattr(scores, "info", None)
        cluster_columns = tuple(getattr(info, "clusters", ()))
    else:
        cluster_columns = resolve_clusters(cluster, frame)
    for name, column in (("by", by), *(("cluster", c) for c in cluster_columns)):
        check_column(frame, column, role=name, where="the comparison's scores",
                     hint="; compare with the contexts' metadata (compare(..., metadata=contexts), or --contexts)")
    measures = _measure_columns(frame, measures, comparison_measures, skip={by, *cluster_columns})
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    n_resamples = check_int("n_resamples", n_resamples, minimum=0, maximum=MAX_RESAMPLES, error=ValueError)
    n_permutations = check_int("n_permutations", n_permutations, minimum=1, maximum=MAX_RESAMPLES, error=ValueError)
    codes, names, unlabelled = _label_codes(frame[by])
    if not 2 <= len(names) <= MAX_STRATA:
        raise ValueError(
            f"by={by!r} has {len(names)} distinct value(s) ({', '.join(names[:5])}); "
            f"stratifying needs 2 to {MAX_STRATA}"
        )
    labelled = codes >= 0
    clusters = cluster_codes(frame, cluster_columns, check=True)
    if clusters is not None:
        clusters = clusters[labelled]
    boot_rng = np.random.default_rng(seed)
    test_rng = np.random.default_rng([seed, 1])
    table_rows, test_rows = {}, {}
    alone: list[str] = []
    for measure in measures:
        values = frame[measure].to_numpy(dtype=np.float64)[labelled]
        unit_labels, sums, counts = _units(values, codes[labelled], clusters)
        resampled: dict[int, np.ndarray] = {}
        for code, name in enumerate(names):
            mine = unit_labels == code
            in_stratum = int((codes == code).sum())
            count = int(counts[mine].sum())
            low = high = mean = float("nan")
            if count:
                mean = float(sums[mine].sum()) / count
            if count and n_resamples and int(mine.sum()) == 1:
                alone.append(f"{measure} at {by}={name}")  # one unit: no spread to resample
            elif count and n_resamples:
                resampled[code] = _bootstrap_means(sums[mine], counts[mine], n_resamples, boot_rng)
                low, high = _interval(resampled[code], confidence)
            table_rows[(measure, name)] = [mean, count, in_stratum - count, int(mine.sum()), low, high]
        for i, a in enumerate(names):
            for j in range(i + 1, len(names)):
                in_a, in_b = unit_labels == i, unit_labels == j
                difference, p_value, exact, drawn = permutation_test_strata(
                    sums[in_a], counts[in_a], sums[in_b], counts[in_b], n_permutations=n_permutations, rng=test_rng
                )
                if i in resampled and j in resampled:
                    low, high = _interval(resampled[i] - resampled[j], confidence)
                else:
                    low = high = float("nan")
                test_rows[(measure, a, names[j])] = [
                    difference, low, high, p_value, exact, drawn, int(in_a.sum()), int(in_b.sum())
                ]
    warn_undefined_intervals(alone, "dialogue cell" if clusters is not None else "context", confidence=confidence)
    table = pd.DataFrame.from_dict(table_rows, orient="index", columns=_TABLE_COLUMNS)
    table.index = pd.MultiIndex.from_tuples(list(table_rows), names=["measure", "stratum"])
    tests = pd.DataFrame.from_dict(test_rows, orient="index", columns=_TEST_COLUMNS)
    tests.index = pd.MultiIndex.from_tuples(list(test_rows), names=["measure", "a", "b"])
    info = {
        "by": by, "cluster": list(cluster_columns) or None, "unlabelled": unlabelled, "seed": seed, "n_resamples": n_resamples,
        "n_permutations": n_permutations, "confidence": confidence,
    }
    return StratifiedComparison(by=by, strata=tuple(names), table=table, tests=tests, info=info)
