"""Self-consistency as the ceiling: do two sampled policies differ more than each differs from itself?

A policy that samples does not agree with itself: two draws for one context may differ. Its
agreement with itself is the most another policy can be expected to agree with it, so
:func:`self_consistency` scores K samples per context of policies A and B
(:class:`~simscore.samples.SampledResponses`, what ``simscore respond --samples K`` writes) and
reports per measure:

Definitions (context ``c``; A's samples ``a_1..a_K``, B's ``b_1..b_K``; ``m`` the measure)
-------------------------------------------------------------------------------------------
* **within A** ``W_A(c)``: the mean of ``m(a_i, a_j)`` over the ``K(K-1)/2`` pairs ``i < j`` of
  A's own samples; likewise **within B**. The **ceiling** ``(W_A(c) + W_B(c)) / 2``.
* **between** ``B(c)``: the mean of ``m(a_i, b_j)`` over all ``K²`` cross pairs (also the
  per-context score of :func:`~simscore.comparison.compare` on sampled responses).
* Each is averaged over the contexts (a pair scored NaN, e.g. a missing text, is left out of its
  context's mean; a context without any scored pair is left out of that average).
* **normalised** ``mean_c B(c) / mean_c ceiling(c)`` over the contexts where all three are
  defined: 1 when A and B agree with each other as much as each agrees with itself. For a
  measure where higher is better it is below 1 when they differ more; for one where lower is
  better (``cer``, an error rate) above 1. NaN where the ceiling's mean is 0 (two policies
  that never deviate from themselves under an error measure: read the gap instead).
* **gap** ``mean_c [ceiling(c) - B(c)]`` (``B(c) - ceiling(c)`` for a measure where lower is
  better): how much further apart A and B are than each from itself; 0 when they are alike,
  positive when they differ. The test's statistic.

The permutation test
--------------------
Null hypothesis: in every context A's and B's samples are draws from one distribution, so
which K of the 2K samples carry the label A is arbitrary. Each permutation relabels, in every
context independently, a uniformly random K of the 2K pooled samples as A and the rest as B,
and recomputes the gap (its mean over the contexts). The p-value is one-sided,
``(1 + #{permuted gap >= observed gap}) / (n_permutations + 1)``: small when A and B differ more
than each differs from itself. It uses the contexts where every pair of the 2K samples is scored
(a measure is taken as symmetric, as all of simscore's are: each unordered pair is scored once).
Relabelling within a context keeps each context's and each dialogue's own level, so no
clustering is needed for the test; the intervals resample dialogues on collected contexts.

**Draw the two policies with seeds of their own.** The test assumes A's and B's samples are
independent draws. Two policies run with the same seed use the same random numbers for their
k-th samples of a context (:func:`simscore.samples.sample_seed`): a language model at two
temperatures then picks the same tokens wherever the noise outweighs the difference, and the
between-agreement is inflated. :func:`simscore.compare` warns
(:class:`~simscore.errors.SharedSeedWarning`) when the provenance of both says so.

Intervals and chance
--------------------
Percentile bootstrap intervals (:class:`~simscore.stats.Bootstrap` settings) of within A,
within B, between, normalised and gap come from one shared set of resamples of the units —
contexts, or the dialogues of collected contexts (:mod:`simscore.stats.clusters`, as
:func:`~simscore.comparison.compare` resamples them) — so they are paired. With ``chance`` (a
random policy's responses, one or more samples, e.g. ``simscore respond random``) the **chance
level** per measure is the mean over contexts of the mean over all pairs of a chance sample and
a sample of A or B: what agreement without any shared behaviour looks like, as
:func:`simscore.analysis.chance_level` defines it for single responses.

Diversity
---------
Per policy: the mean number of **distinct actions** per context among its K samples and the
mean **act entropy** (Shannon, bits, of the empirical distribution of its K actions per
context; 0 for a policy that always says the same, ``log2 K`` at most); likewise for texts.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from simscore.checks import check_int
from simscore.errors import SampleCountError
from simscore.measures import resolve_measures
from simscore.measures.base import Measure, PairwiseMeasure, unique_pairs, warn_missing
from simscore.samples import SampledResponses
from simscore.stats import Bootstrap, format_interval

__all__ = ["Consistency", "self_consistency", "TABLE_COLUMNS", "MAX_PERMUTATIONS"]

#: The columns of :attr:`Consistency.table`, in order.
TABLE_COLUMNS = (
    "within_a", "within_a_low", "within_a_high", "within_b", "within_b_low", "within_b_high",
    "between", "between_low", "between_high", "normalised", "normalised_low", "normalised_high",
    "gap", "gap_low", "gap_high", "p_value", "chance", "contexts", "tested",
)
#: The most permutations of the test.
MAX_PERMUTATIONS = 1_000_000
#: Elements of one chunk of resample weights or permutation labels.
_CHUNK = 2_000_000
_PARTS = ("within_a", "within_b", "between")


@dataclass(frozen=True)
class Consistency:
    """Each policy's agreement with itself, their agreement with each other, and the test.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per measure (index ``measure``), columns :data:`TABLE_COLUMNS`: the means over
        contexts ``within_a``, ``within_b``, ``between``, ``normalised``, ``gap`` each with
        ``_low`` / ``_high`` interval bounds, the test's ``p_value``, the ``chance`` level (NaN
        without chance responses), ``contexts`` (with a defined between) and ``tested``
        (contexts the test used).
    per_context : pandas.DataFrame
        One row per context (index ``context_id``): ``<measure>_within_a``, ``_within_b``,
        ``_between``, ``_gap`` per measure.
    diversity : pandas.DataFrame
        One row per side (index ``side``: ``a``, ``b``): ``policy``, ``distinct_actions``,
        ``act_entropy``, ``distinct_texts``, ``text_entropy`` (means over contexts; NaN
        where the policy has no actions or texts).
    samples : int
        K, the samples per context of each side.
    a, b : str
        Policy names.
    info : dict
        ``seed``, ``n_resamples``, ``confidence``, ``n_permutations``, ``unit``, ``units``,
        ``statistic`` (the test's statistic in words), ``higher_is_better`` per measure.

    Examples
    --------
    >>> from simscore import Act, Response
    >>> from simscore.samples import SampledResponses
    >>> def sampled(rows):
    ...     return SampledResponses({c: [Response(Act.parse(s)) for s in acts] for c, acts in rows.items()})
    >>> a = sampled({"c1": ["hello()", "hello()", "bye()"], "c2": ["bye()", "bye()", "bye()"]})
    >>> b = sampled({"c1": ["bye()", "bye()", "bye()"], "c2": ["bye()", "bye()", "bye()"]})
    >>> t = self_consistency(a, b, ["tmr"], n_permutations=200).table
    >>> t.loc["tmr", ["within_a", "within_b", "between"]].round(4).tolist()
    [0.6667, 1.0, 0.6667]
    """

    table: pd.DataFrame
    per_context: pd.DataFrame
    diversity: pd.DataFrame
    samples: int
    a: str = ""
    b: str = ""
    info: dict[str, Any] = field(default_factory=dict)

    def format(self) -> str:
        """A readable table: per measure within A, within B, between, normalised, gap, p-value, chance."""
        confidence = self.info.get("confidence", 0.95)
        lines = [
            f"self-consistency ({self.samples} samples per context): A = {self.a or 'a'}, B = {self.b or 'b'}",
            f"{'measure':<9} {'within A':>8} {'within B':>8} {'between':>8} {'normalised':>10}  "
            f"{f'{confidence:.0%} CI':<18} {'gap':>8} {'p':>8} {'chance':>7}",
        ]
        for name, row in self.table.iterrows():
            chance = "" if np.isnan(row["chance"]) else f"{row['chance']:.4f}"
            lines.append(
                f"{name:<9} {row['within_a']:>8.4f} {row['within_b']:>8.4f} {row['between']:>8.4f} "
                f"{row['normalised']:>10.4f}  {format_interval(row['normalised_low'], row['normalised_high']):<18} "
                f"{row['gap']:>8.4f} {row['p_value']:>8.4g} {chance:>7}"
            )
        for side, row in self.diversity.iterrows():
            parts = [f"{row[col]:.2f} {label}" for col, label in (
                ("distinct_actions", "distinct actions"), ("act_entropy", "bits act entropy"),
                ("distinct_texts", "distinct texts"), ("text_entropy", "bits text entropy"))
                if not np.isnan(row[col])]
            lines.append(f"{str(side).upper()} per context: {', '.join(parts) or 'nothing to count'}")
        lines.append(f"normalised = between / mean(within A, within B); gap = how much further apart A and B are "
                     f"than each from itself; p: one-sided permutation test of gap > 0 "
                     f"({self.info.get('n_permutations')} relabellings within contexts); intervals resample "
                     f"{self.info.get('units')} {self.info.get('unit')}")
        return "\n".join(lines)

    def to_json_dict(self) -> dict[str, Any]:
        """Plain JSON types (NaN becomes null): ``samples``, ``a``, ``b``, ``info``, ``table`` (measure →
        columns) and ``diversity`` (side → columns); the per-context values are left out."""
        return {
            "samples": self.samples,
            "a": self.a,
            "b": self.b,
            "info": self.info,
            "table": {str(name): {col: _json_number(self.table.at[name, col]) for col in TABLE_COLUMNS}
                      for name in self.table.index},
            "diversity": {str(side): {col: _json_number(value) for col, value in row.items()}
                          for side, row in self.diversity.iterrows()},
        }


def _json_number(value: Any) -> Any:
    if isinstance(value, (float, np.floating)):
        return None if math.isnan(value) else float(value)
    if isinstance(value, np.integer):
        return int(value)
    return value


def _pair_scores(measure: Measure, left: list[Any], right: list[Any]) -> np.ndarray:
    """``measure`` on every ``(left[i], right[i])``, each distinct pair scored once; NaN where a side is None."""
    if not left:
        return np.zeros(0)
    if isinstance(measure, PairwiseMeasure):
        values, pair_a, pair_b, inverse = unique_pairs(left, right)
        return measure.score_distinct(values, pair_a, pair_b)[inverse]
    return np.asarray(measure.score_pairs(left, right), dtype=np.float64)


def _pooled_pairs(k: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices ``i < j`` of every unordered pair of the 2K pooled samples (A's first, then B's)."""
    upper = np.triu_indices(2 * k, 1)
    return upper[0], upper[1]


def _entropy_and_distinct(values: Sequence[Any]) -> tuple[float, float]:
    """Shannon entropy (bits) and the number of distinct values among one context's samples (None left out)."""
    present = [v for v in values if v is not None]
    if not present:
        return float("nan"), float("nan")
    counts = np.array(list(pd.Series(present, dtype=object).value_counts()), dtype=np.float64)
    shares = counts / counts.sum()
    return float(-(shares * np.log2(shares)).sum() + 0.0), float(len(counts))


def _diversity(side: SampledResponses, ids: Sequence[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"policy": side.policy}
    for level, label in (("action", "actions"), ("text", "texts")):
        stats = np.array([_entropy_and_distinct([getattr(r, level) for r in side[c]]) for c in ids]).reshape(-1, 2)
        present = ~np.isnan(stats[:, 0])
        entropy = float(stats[present, 0].mean()) if present.any() else float("nan")
        distinct = float(stats[present, 1].mean()) if present.any() else float("nan")
        out[f"distinct_{label}"] = distinct
        out[f"{'act' if level == 'action' else 'text'}_entropy"] = entropy
    return out


def _nanmean_rows(matrix: np.ndarray) -> np.ndarray:
    """Row means of ``matrix`` without its NaN; NaN for a row without any value."""
    valid = ~np.isnan(matrix)
    counts = valid.sum(axis=1)
    sums = np.where(valid, matrix, 0.0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


def _resampled_means(columns: np.ndarray, units: np.ndarray, n_resamples: int,
                     rng: np.random.Generator) -> np.ndarray:
    """Means of each column (NaN left out) over ``n_resamples`` resamples of the units: shape (R, m).

    Each resample draws the ``U`` units with replacement (a multinomial draw of how often each
    occurs); every column is resampled with the same draws, so the means are paired.
    """
    n_units = int(units.max()) + 1
    valid = ~np.isnan(columns)
    sums = np.zeros((n_units, columns.shape[1]))
    np.add.at(sums, units, np.where(valid, columns, 0.0))
    counts = np.zeros((n_units, columns.shape[1]))
    np.add.at(counts, units, valid.astype(np.float64))
    out = np.empty((n_resamples, columns.shape[1]))
    step = max(1, _CHUNK // n_units)
    for start in range(0, n_resamples, step):
        size = min(step, n_resamples - start)
        weights = rng.multinomial(n_units, np.full(n_units, 1.0 / n_units), size=size).astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[start:start + size] = (weights @ sums) / (weights @ counts)
    return out


def _permutation_p(matrices: np.ndarray, k: int, sign: float, observed: float, n_permutations: int,
                   rng: np.random.Generator) -> float:
    """One-sided p-value of the gap under random relabelling within contexts (module docstring).

    ``matrices``: shape (C, 2K, 2K), each context's symmetric pair scores with a zero diagonal.
    The gap of a labelling is linear in the within-group sum ``W = W_A + W_B`` of each context:
    ``gap_c = sign * (W_c (1/(K(K-1)) + 1/K²) - P_c / K²)`` with ``P_c`` the sum over all pairs.
    """
    n_contexts = matrices.shape[0]
    per_context_total = matrices.sum(axis=(1, 2)) / 2.0
    slope = 1.0 / (k * (k - 1)) + 1.0 / (k * k)
    tolerance = 1e-9 * max(1.0, abs(observed))
    above = 0
    step = max(1, _CHUNK // (n_contexts * 2 * k))
    for start in range(0, n_permutations, step):
        size = min(step, n_permutations - start)
        labels = (rng.random((size, n_contexts, 2 * k)).argsort(axis=2) < k).astype(np.float64)
        other = 1.0 - labels
        within = (np.einsum("rci,cij,rcj->rc", labels, matrices, labels)
                  + np.einsum("rci,cij,rcj->rc", other, matrices, other)) / 2.0
        gaps = sign * (within * slope - per_context_total / (k * k))
        above += int(np.count_nonzero(gaps.mean(axis=1) >= observed - tolerance))
    return (1 + above) / (n_permutations + 1)


def self_consistency(
    a: SampledResponses,
    b: SampledResponses,
    measures: str | Measure | Iterable[str | Measure],
    *,
    units: np.ndarray | None = None,
    unit: str = "contexts",
    chance: SampledResponses | None = None,
    bootstrap: Bootstrap | None = None,
    n_permutations: int = 10_000,
) -> Consistency:
    """Within-policy and between-policy agreement of two sampled policies, with intervals and a test.

    The definitions are in the module docstring. :func:`simscore.compare` calls this for sampled
    responses (with the metadata's dialogues as ``units``): use that, unless the units are known.

    Parameters
    ----------
    a, b : SampledResponses
        The same contexts (in any order; ``a``'s order is kept) and the same K >= 2 samples each.
    measures : names or Measure objects
    units : ndarray of int, shape (n_contexts,), optional
        The resampling unit of each context in ``a``'s order (e.g. its dialogue,
        :func:`simscore.stats.clusters.cluster_codes`); default: every context a unit.
    unit : str
        What a unit is called (``contexts``, ``dialogues``, ``clusters``), for :attr:`Consistency.info`.
    chance : SampledResponses, optional
        A random policy's responses over the same contexts (any number of samples): the chance level.
    bootstrap : Bootstrap, optional
        Resamples, coverage and seed of the intervals (default ``Bootstrap()``; 0 resamples: no
        intervals); the seed also seeds the permutations.
    n_permutations : int
        Relabellings of the test, 1 to :data:`MAX_PERMUTATIONS` (default 10,000).

    Returns
    -------
    Consistency

    Raises
    ------
    SampleCountError
        The sides have different numbers of samples (naming both), or fewer than 2.
    ContextMismatchError
        ``a``, ``b`` (or ``chance``) cover different contexts.
    """
    from simscore.errors import ContextMismatchError

    for name, side in (("a", a), ("b", b), ("chance", chance)):
        if side is not None and not isinstance(side, SampledResponses):
            raise TypeError(f"{name} must be simscore.samples.SampledResponses, got {type(side).__name__}")
    if a.n_samples != b.n_samples:
        raise SampleCountError(
            f"a and b must have the same number of samples per context: {a.policy or 'a'!r} has {a.n_samples}, "
            f"{b.policy or 'b'!r} has {b.n_samples}"
        )
    k = a.n_samples
    if k < 2:
        raise SampleCountError(f"a policy's agreement with itself needs at least 2 samples per context, got {k}")
    settings = Bootstrap.resolve(bootstrap, "self_consistency")
    n_permutations = check_int("n_permutations", n_permutations, minimum=1, maximum=MAX_PERMUTATIONS, error=ValueError)
    ids = list(a.ids)
    for name, side in (("b", b), ("chance", chance)):
        if side is not None and (len(side) != len(ids) or any(i not in side for i in ids)):
            only = [i for i in ids if i not in side][:5] or [i for i in side.ids if i not in a][:5]
            raise ContextMismatchError(f"a and {name} cover different contexts (e.g. {', '.join(map(repr, only))})")
    if units is None:
        units = np.arange(len(ids))
    units = np.unique(np.asarray(units), return_inverse=True)[1].reshape(-1)
    if len(units) != len(ids):
        raise ValueError(f"units must have one code per context ({len(ids)}), got {len(units)}")
    resolved = resolve_measures(measures)
    first, second = _pooled_pairs(k)
    rows: dict[str, dict[str, Any]] = {}
    per_context: dict[str, np.ndarray] = {}
    for measure in resolved:
        pooled = [[getattr(r, measure.level) for r in (*a[c], *b[c])] for c in ids]
        left = [row[i] for row in pooled for i in first]
        right = [row[j] for row in pooled for j in second]
        scores = _pair_scores(measure, left, right).reshape(len(ids), len(first))
        warn_missing(measure.name, int(np.isnan(scores).sum()), measure.level)
        row, columns = _measure_row(scores, k, 1.0 if measure.higher_is_better else -1.0, units, settings,
                                    n_permutations)
        per_context.update({f"{measure.name}_{part}": values for part, values in columns.items()})
        row["chance"] = float("nan") if chance is None else _chance(measure, chance, a, b, ids)
        rows[measure.name] = row
    table = pd.DataFrame.from_dict(rows, orient="index").reindex(columns=list(TABLE_COLUMNS))
    table = table.astype({"contexts": "int64", "tested": "int64"})
    table.index.name = "measure"
    diversity = pd.DataFrame.from_dict({"a": _diversity(a, ids), "b": _diversity(b, ids)}, orient="index")
    diversity.index.name = "side"
    info = {
        **settings.to_dict(), "n_permutations": n_permutations, "unit": unit, "units": int(units.max(initial=-1)) + 1,
        "statistic": "gap: mean over contexts of (mean(within A, within B) - between), sign-flipped for measures "
                     "where lower is better; one-sided, relabelling K of the 2K samples as A within each context",
        "higher_is_better": {m.name: bool(m.higher_is_better) for m in resolved},
    }
    frame = pd.DataFrame(per_context, index=pd.Index(ids, name="context_id"))
    return Consistency(table=table, per_context=frame, diversity=diversity, samples=k, a=a.policy, b=b.policy,
                       info=info)


def _measure_row(scores: np.ndarray, k: int, sign: float, units: np.ndarray, settings: Bootstrap,
                 n_permutations: int) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """One measure's row of the table and its per-context columns, from the scores of every pooled pair.

    ``scores``: shape (C, K(2K-1)), the pairs in the order of :func:`_pooled_pairs`; ``sign`` is
    1 for a measure where higher is better, -1 otherwise. Every measure draws the same resamples
    (a generator seeded with the bootstrap's seed) and the same relabellings (seeded with
    ``[seed, 1]``): its numbers do not depend on the other measures asked for, and the intervals
    are paired across measures.
    """
    first, second = _pooled_pairs(k)
    masks = ((first < k) & (second < k), first >= k, (first < k) & (second >= k))
    parts = {part: _nanmean_rows(scores[:, mask]) for part, mask in zip(_PARTS, masks)}
    ceiling = (parts["within_a"] + parts["within_b"]) / 2.0
    gap = sign * (ceiling - parts["between"])
    complete = ~np.isnan(gap)
    row: dict[str, Any] = {part: _mean(values) for part, values in parts.items()}
    row["normalised"] = _ratio(parts["between"][complete].sum(), ceiling[complete].sum())
    row["gap"] = _mean(gap[complete])
    columns = np.column_stack([parts["within_a"], parts["within_b"], parts["between"],
                               np.where(complete, parts["between"], np.nan), np.where(complete, ceiling, np.nan), gap])
    row.update(_intervals(columns, units, settings, np.random.default_rng(settings.seed)))
    tested = ~np.isnan(scores).any(axis=1)
    row["p_value"] = float("nan")
    if tested.any():
        matrices = np.zeros((int(tested.sum()), 2 * k, 2 * k))
        matrices[:, first, second] = scores[tested]
        matrices[:, second, first] = scores[tested]
        row["p_value"] = _permutation_p(matrices, k, sign, float(gap[tested].mean()), n_permutations,
                                        np.random.default_rng([settings.seed, 1]))
    row["contexts"] = int((~np.isnan(parts["between"])).sum())
    row["tested"] = int(tested.sum())
    return row, {**parts, "gap": gap}


def _mean(values: np.ndarray) -> float:
    present = values[~np.isnan(values)]
    return float(present.mean()) if len(present) else float("nan")


def _ratio(numerator: Any, denominator: Any) -> float:
    with np.errstate(invalid="ignore", divide="ignore"):
        return float(np.float64(numerator) / np.float64(denominator)) if denominator != 0 else float("nan")


def _intervals(columns: np.ndarray, units: np.ndarray, settings: Bootstrap,
               rng: np.random.Generator) -> dict[str, float]:
    """Interval bounds of within A, within B, between, normalised and gap from one set of resamples.

    ``columns``: within A, within B, between, then between and ceiling on the complete contexts, gap.
    """
    names = ("within_a", "within_b", "between", "normalised", "gap")
    nan = {f"{name}_{end}": float("nan") for name in names for end in ("low", "high")}
    n_units = int(units.max(initial=-1)) + 1
    if settings.n_resamples == 0 or n_units < 2:
        return nan
    means = _resampled_means(columns, units, settings.n_resamples, rng)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(means[:, 4] != 0, means[:, 3] / means[:, 4], np.nan)
    tail = (1.0 - settings.confidence) / 2.0 * 100.0
    out = {}
    for name, values in zip(names, (means[:, 0], means[:, 1], means[:, 2], ratio, means[:, 5])):
        present = values[~np.isnan(values)]
        low, high = np.percentile(present, [tail, 100.0 - tail]) if len(present) else (np.nan, np.nan)
        out[f"{name}_low"], out[f"{name}_high"] = float(low), float(high)
    return out


def _chance(measure: Measure, chance: SampledResponses, a: SampledResponses, b: SampledResponses,
            ids: Sequence[str]) -> float:
    """Mean over contexts of the mean of ``measure`` over every pair (chance sample, sample of A or B)."""
    level = measure.level
    left, right = [], []
    for c in ids:
        for r in chance[c]:
            for s in (*a[c], *b[c]):
                left.append(getattr(r, level))
                right.append(getattr(s, level))
    scores = _pair_scores(measure, left, right)
    matrix = scores.reshape(len(ids), -1)
    return _mean(_nanmean_rows(matrix))

