"""A behaviour map of many policies: who behaves like whom, on the contexts they share, with intervals.

:func:`behaviour_map` takes N policies' responses to the same contexts and, per measure, gives

* the N x N **similarity matrix** (the mean over contexts of every pair's per-context score),
  its percentile-bootstrap **intervals** over the statistical unit (contexts, or clusters such
  as dialogues or tasks) -- one draw of units shared by all pairs, so every resampled matrix is
  a matrix of one resample and the structure below can be resampled whole;
* each pair's **chance level**: A's response to one context against B's to another (a fixed,
  seeded derangement of the contexts, the same for every pair; the earlier policy's context
  against the later one's other context), and the **chance-corrected**
  value ``(s - chance) / (1 - chance)`` for a similarity in [0, 1] (NaN where the chance level
  is 1);
* a **hierarchical clustering** (scipy, average linkage on ``1 - s``, or on ``s`` for a measure
  where lower is better) whose merges carry their **bootstrap support**: the share of resampled
  matrices whose own clustering holds a cluster of exactly the same policies;
* a 2-D **map**: classical multidimensional scaling of the same distances (signs fixed, so the
  same input gives the same picture);
* for each policy its **nearest neighbour** and the second nearest, with a paired bootstrap
  test of "nearer than the second nearest" (the share of resamples in which it is not).

Every distinct pair of responses is scored once for the whole map (per level, over all
policies' responses together; the text measures embed each distinct text once and remember
their pairs), so the map of N policies costs far less than its N(N-1)/2 comparisons.

>>> from simscore import Act, Response, Responses
>>> def policy(acts):
...     return Responses({f"c{i}": Response(Act.parse(a)) for i, a in enumerate(acts)})
>>> m = behaviour_map({"p": policy(["hello()", "bye()", "bye()"]), "q": policy(["hello()", "bye()", "hello()"]),
...                    "r": policy(["bye()", "hello()", "hello()"])}, ["tmr"], bootstrap=Bootstrap(200))
>>> m.similarity["tmr"].round(3)
            p      q      r
policy
p       1.000  0.667  0.000
q       0.667  1.000  0.333
r       0.000  0.333  1.000
>>> m.neighbours["tmr"][["nearest", "similarity", "second"]]
       nearest  similarity second
policy
p            q    0.666667      r
q            p    0.666667      r
r            q    0.333333      p

Sampled responses
-----------------
A policy may come with K responses per context (:class:`~simscore.samples.SampledResponses`,
``simscore respond --samples K``); plain :class:`~simscore.responses.Responses` are one sample,
and the policies' K may differ. Then, at each context:

* a pair's score is the mean over the ``K_a x K_b`` cross pairs of their samples (NaN pairs left
  out; NaN where none is scored): the per-context score :func:`~simscore.comparison.compare`
  gives, so each entry is still compare's mean for the pair, the same float;
* a sampled policy's diagonal is its agreement with itself, the mean over its ``K(K-1)/2``
  distinct pairs of samples (``within`` of :mod:`simscore.stats.consistency`): how far its own
  draws agree, the ceiling of what another policy can reach (a policy of one sample keeps the
  measure's value for identical responses). The distances of the clustering ignore the diagonal;
* the chance level pairs the earlier policy's samples at a context with the later one's at the
  other context, the mean over their cross pairs.

The pairs are gathered in blocks of two policies and some contexts (about :data:`_BLOCK` pairs),
so memory grows with the distinct pairs and the N x N x contexts scores, not with K².

>>> from simscore.samples import SampledResponses
>>> def sampled(rows):
...     return SampledResponses({c: [Response(Act.parse(a)) for a in acts] for c, acts in rows.items()})
>>> s = behaviour_map({"p": sampled({"c0": ["hello()", "bye()"], "c1": ["bye()", "bye()"]}),
...                    "q": sampled({"c0": ["hello()", "hello()"], "c1": ["bye()", "hello()"]}),
...                    "r": policy(["hello()", "hello()"])}, ["tmr"], bootstrap=Bootstrap(20))
>>> s.similarity["tmr"]  # p's two samples agree at c1 only (diagonal 0.5); q's with r's: 2/2, then 1/2
           p     q     r
policy
p       0.50  0.50  0.25
q       0.50  0.50  0.75
r       0.25  0.75  1.00
>>> s.samples
{'p': 2, 'q': 2, 'r': 1}
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from simscore.checks import check_int
from simscore.errors import ContextMismatchError, InvalidResponseError, SharedSeedWarning
from simscore.measures import Measure, PairwiseMeasure, resolve_measures
from simscore.measures.base import unique_pairs
from simscore.responses import Responses
from simscore.samples import SampledResponses, shared_seed
from simscore.stats import Bootstrap

__all__ = ["BehaviourMap", "behaviour_map", "MAX_POLICIES", "LONG_TABLES", "long_tables", "from_long_tables"]

#: The most policies one map holds (N(N-1) ordered pairs per context are scored).
MAX_POLICIES = 50
#: About how many pairs of values one block of the map holds (a block: two policies' samples on some contexts).
_BLOCK = 1 << 22
#: Up to this many possible pairs of values (distinct values squared), the distinct pairs are marked in a table.
_TABLE = 1 << 24


@dataclass(frozen=True)
class BehaviourMap:
    """What :func:`behaviour_map` found (per measure, keyed by the measure's name).

    Attributes
    ----------
    policies : tuple of str
        The policies' names, in the order given.
    measures : tuple of str
    contexts : int
        The contexts all policies share (the map's contexts).
    unit, units : str, int
        The bootstrap's unit (``"contexts"`` or the cluster column) and how many there are.
    similarity, ci_low, ci_high, chance, corrected : dict of DataFrame
        N x N matrices (policies as index and columns). The diagonal: a policy of one sample per
        context against itself is the measure's own value for identical responses (1 for a
        similarity); a sampled one's is its agreement with itself, the mean over its distinct
        pairs of samples (within, :mod:`simscore.stats.consistency`). The chance's diagonal is NaN.
    linkage : dict of ndarray
        scipy's linkage matrix ((N - 1) x 4) of the clustering.
    clusters : dict of DataFrame
        One row per merge: ``merge`` (1 ..), ``members`` (the policies, " + "-joined, in the
        given order), ``size``, ``height`` (the average distance at which it forms) and
        ``support`` (share of bootstrap resamples whose clustering has the same cluster).
    order : dict of list
        The policies in the dendrogram's leaf order (for the heatmap).
    coords : dict of DataFrame
        The 2-D map: columns ``x``, ``y``.
    neighbours : dict of DataFrame
        Per policy: ``nearest``, ``similarity``, ``second``, ``second_similarity``,
        ``difference`` and ``p`` (share of resamples where the nearest is not nearer).
    bootstrap : Bootstrap
    groups : dict of DataFrame
        Per named group of policies given to :func:`behaviour_map` (e.g. the seeds of one reward
        model): ``group``, ``members``, ``clustered`` (1 where the clustering of the whole data
        has a cluster of exactly these policies, else 0) and ``support`` (the share of resamples
        whose clustering has it); no rows without groups.
    samples : dict of str to int
        Each policy's samples per context (1: plain responses). Empty for a map that
        :func:`from_long_tables` read back (the long tables do not record it).
    """

    policies: tuple[str, ...]
    measures: tuple[str, ...]
    contexts: int
    unit: str
    units: int
    similarity: dict[str, pd.DataFrame]
    ci_low: dict[str, pd.DataFrame]
    ci_high: dict[str, pd.DataFrame]
    chance: dict[str, pd.DataFrame]
    corrected: dict[str, pd.DataFrame]
    linkage: dict[str, np.ndarray]
    clusters: dict[str, pd.DataFrame]
    order: dict[str, list[str]]
    coords: dict[str, pd.DataFrame]
    neighbours: dict[str, pd.DataFrame]
    bootstrap: Bootstrap
    groups: dict[str, pd.DataFrame] = field(default_factory=dict)
    samples: dict[str, int] = field(default_factory=dict)

    def pairs_table(self) -> pd.DataFrame:
        """Every ordered pair of different policies per measure, long form: ``measure, a, b, mean,
        ci_low, ci_high, chance, corrected``."""
        rows = []
        for m in self.measures:
            for a in self.policies:
                for b in self.policies:
                    if a != b:
                        rows.append({"measure": m, "a": a, "b": b, "mean": self.similarity[m].at[a, b],
                                     "ci_low": self.ci_low[m].at[a, b], "ci_high": self.ci_high[m].at[a, b],
                                     "chance": self.chance[m].at[a, b], "corrected": self.corrected[m].at[a, b]})
        return pd.DataFrame(rows, columns=["measure", "a", "b", "mean", "ci_low", "ci_high", "chance", "corrected"])

    def clusters_table(self) -> pd.DataFrame:
        """Every measure's merges, long form (``measure`` first)."""
        return pd.concat([self.clusters[m].assign(measure=m) for m in self.measures], ignore_index=True)[
            ["measure", "merge", "members", "size", "height", "support"]]

    def neighbours_table(self) -> pd.DataFrame:
        """Every measure's nearest neighbours, long form (``measure, policy, ...``)."""
        return pd.concat([self.neighbours[m].reset_index().assign(measure=m) for m in self.measures],
                         ignore_index=True)[["measure", "policy", "nearest", "similarity", "second",
                                             "second_similarity", "difference", "p"]]


#: The long tables of :meth:`BehaviourMap.long_tables` (an experiment's tables), by name.
LONG_TABLES = ("behaviour_map", "behaviour_map_clusters", "behaviour_map_policies", "behaviour_map_groups")


def long_tables(bmap: BehaviourMap, **labels: Any) -> dict[str, pd.DataFrame]:
    """The whole map as four long tables (every column a value, ``labels`` first, e.g. the context
    set), from which :func:`from_long_tables` gives the map back:

    * ``behaviour_map``: every ordered pair per measure, the diagonal included (``a``, ``b``,
      ``mean``, ``ci_low``, ``ci_high``, ``chance``, ``corrected``);
    * ``behaviour_map_clusters``: every merge with scipy's linkage row (``left``, ``right``:
      a policy's position, or N + the merge it joins, minus 1; ``height``, ``size``), its
      ``members`` and ``support``;
    * ``behaviour_map_policies``: per policy its ``position``, its ``leaf`` (place in the
      dendrogram's order), the map's ``x``, ``y``, its neighbours and the map's ``contexts``,
      ``unit`` and ``units``;
    * ``behaviour_map_groups``: :attr:`BehaviourMap.groups`.
    """
    pairs, clusters, policies, groups = [], [], [], []
    for m in bmap.measures:
        for a in bmap.policies:
            for b in bmap.policies:
                pairs.append({**labels, "measure": m, "a": a, "b": b, "mean": bmap.similarity[m].at[a, b],
                              "ci_low": bmap.ci_low[m].at[a, b], "ci_high": bmap.ci_high[m].at[a, b],
                              "chance": bmap.chance[m].at[a, b], "corrected": bmap.corrected[m].at[a, b]})
        tree = bmap.linkage[m]
        for k, row in bmap.clusters[m].iterrows():
            clusters.append({**labels, "measure": m, "merge": int(row["merge"]), "left": int(tree[k, 0]),
                             "right": int(tree[k, 1]), "members": row["members"], "size": int(row["size"]),
                             "height": float(row["height"]), "support": float(row["support"])})
        leaf = {name: k for k, name in enumerate(bmap.order[m])}
        for k, name in enumerate(bmap.policies):
            near = bmap.neighbours[m].loc[name]
            policies.append({**labels, "measure": m, "policy": name, "position": k, "leaf": leaf[name],
                             "x": float(bmap.coords[m].at[name, "x"]), "y": float(bmap.coords[m].at[name, "y"]),
                             **{c: near[c] for c in ("nearest", "similarity", "second", "second_similarity",
                                                     "difference", "p")},
                             "contexts": bmap.contexts, "unit": bmap.unit, "units": bmap.units})
        for _, row in bmap.groups.get(m, pd.DataFrame()).iterrows():
            groups.append({**labels, "measure": m, **row.to_dict()})
    first = [*labels, "measure"]
    columns = {"behaviour_map": [*first, "a", "b", "mean", "ci_low", "ci_high", "chance", "corrected"],
               "behaviour_map_clusters": [*first, "merge", "left", "right", "members", "size", "height", "support"],
               "behaviour_map_policies": [*first, "policy", "position", "leaf", "x", "y", "nearest", "similarity",
                                          "second", "second_similarity", "difference", "p", "contexts", "unit",
                                          "units"],
               "behaviour_map_groups": [*first, "group", "members", "clustered", "support"]}
    made = dict(zip(LONG_TABLES, (pairs, clusters, policies, groups), strict=True))
    return {name: pd.DataFrame(made[name], columns=columns[name]) for name in LONG_TABLES}


def from_long_tables(tables: Mapping[str, pd.DataFrame], bootstrap: Bootstrap | None = None,
                     **labels: Any) -> BehaviourMap:
    """The map :func:`long_tables` wrote (the rows whose columns equal ``labels``), e.g. to draw it again.

    Raises
    ------
    ValueError
        No map in ``tables`` has these labels.
    """
    def rows(name: str) -> pd.DataFrame:
        frame = tables[name]
        for column, value in labels.items():
            frame = frame[frame[column].astype(str) == str(value)]
        return frame

    policies = rows("behaviour_map_policies")
    if policies.empty:
        raise ValueError(f"no behaviour map with {labels} in the tables")
    pairs, clusters, groups = rows("behaviour_map"), rows("behaviour_map_clusters"), rows("behaviour_map_groups")
    measures = tuple(dict.fromkeys(policies["measure"].astype(str)))
    first = policies[policies["measure"] == measures[0]].sort_values("position")
    names = [str(n) for n in first["policy"]]
    out: dict[str, dict[str, Any]] = {key: {} for key in (
        "similarity", "ci_low", "ci_high", "chance", "corrected", "linkage", "clusters", "order", "coords",
        "neighbours", "groups")}
    index = pd.Index(names, name="policy")
    for m in measures:
        square = pairs[pairs["measure"] == m]
        for key in ("similarity", "ci_low", "ci_high", "chance", "corrected"):
            column = "mean" if key == "similarity" else key
            out[key][m] = (square.pivot(index="a", columns="b", values=column).reindex(index=names, columns=names)
                           .astype(np.float64).rename_axis(index="policy", columns=None))
        merges = clusters[clusters["measure"] == m].sort_values("merge")
        out["linkage"][m] = merges[["left", "right", "height", "size"]].to_numpy(dtype=np.float64)
        out["clusters"][m] = merges[["merge", "members", "size", "height", "support"]].reset_index(drop=True)
        own = policies[policies["measure"] == m].sort_values("position").set_index("policy")
        out["order"][m] = [str(n) for n in own.sort_values("leaf").index]
        out["coords"][m] = own[["x", "y"]].set_axis(index)
        out["neighbours"][m] = own[["nearest", "similarity", "second", "second_similarity", "difference", "p"]]
        out["groups"][m] = groups[groups["measure"] == m][["group", "members", "clustered", "support"]] \
            .reset_index(drop=True) if not groups.empty else pd.DataFrame()
    return BehaviourMap(policies=tuple(names), measures=measures, contexts=int(first["contexts"].iloc[0]),
                        unit=str(first["unit"].iloc[0]), units=int(first["units"].iloc[0]),
                        bootstrap=Bootstrap() if bootstrap is None else bootstrap, **out)


def behaviour_map(
    responses: Mapping[str, Responses | SampledResponses],
    measures: str | Sequence[str | Measure] = ("tmr", "dmr", "cer", "cmr"),
    *,
    clusters: Sequence[Any] | None = None,
    unit: str = "contexts",
    bootstrap: Bootstrap | None = None,
    groups: Mapping[str, Sequence[str]] | None = None,
) -> BehaviourMap:
    """The behaviour map of N >= 3 policies on the contexts they all answered (see the module).

    Parameters
    ----------
    responses : mapping of name to Responses or SampledResponses
        Each policy's responses, plain (one per context) or sampled (K per context,
        :class:`~simscore.samples.SampledResponses`; the policies' K may differ, plain and sampled
        may be mixed); the map is over the context ids all of them hold (in the first policy's
        order), at least 2.
    measures : names or Measure instances
        As :func:`~simscore.comparison.compare` takes them.
    clusters : sequence, optional
        The bootstrap's unit of each shared context, in the first policy's order of the shared
        ids (e.g. the dialogue or task of each turn); ``unit`` names it.
    bootstrap : Bootstrap, default Bootstrap()
        Resamples (at least 1: the support and the neighbour test need them), confidence, seed.
    groups : mapping of name to policy names, optional
        Groups of 2 or more policies asked about whether or not the clustering finds them (e.g.
        "the seeds of reward model ts"): :attr:`BehaviourMap.groups` gives each one's support.

    Raises
    ------
    InvalidResponseError
        Fewer than 3 or more than :data:`MAX_POLICIES` policies, a value that is neither Responses
        nor SampledResponses, or a group naming a policy the map lacks (or fewer than 2).
    ContextMismatchError
        Fewer than 2 contexts shared by all policies, or ``clusters`` of another length.

    Warns
    -----
    SharedSeedWarning
        Sampled policies drawn with one seed (as their provenance says): their agreement is inflated.
    """
    settings = Bootstrap() if bootstrap is None else bootstrap
    if not isinstance(settings, Bootstrap):
        raise TypeError(f"bootstrap must be a simscore.stats.Bootstrap, got {type(settings).__name__}")
    check_int("bootstrap.n_resamples", settings.n_resamples, minimum=1, error=ValueError)
    names, sides = _sides(responses)
    asked = _groups(groups, names)
    ids = [i for i in sides[0].ids if all(i in side for side in sides[1:])]
    if len(ids) < 2:
        raise ContextMismatchError(f"the {len(sides)} policies share {len(ids)} context id(s); a map needs at least 2")
    codes, n_units = _unit_codes(clusters, len(ids))
    resolved = resolve_measures(measures)
    _warn_shared_seeds(names, sides)
    rng = np.random.default_rng(settings.seed)
    draws = _draw_counts(rng, n_units, settings.n_resamples)  # (B, units): how often each unit is drawn
    shift = _derangement(rng, len(ids))
    out: dict[str, dict[str, Any]] = {key: {} for key in (
        "similarity", "ci_low", "ci_high", "chance", "corrected", "linkage", "clusters", "order", "coords",
        "neighbours", "groups")}
    tail = 100.0 * (1.0 - settings.confidence) / 2.0
    for measure in resolved:
        scores, chance_scores = _pair_scores(measure, sides, ids, shift)  # (N, N, contexts)
        mean, boot = _means(scores, codes, n_units, draws)  # (N, N), (B, N, N)
        chance = _means(chance_scores, codes, n_units, draws[:0])[0]
        higher = getattr(measure, "higher_is_better", True)
        low, high = _percentiles(boot, [tail, 100.0 - tail])
        frame = _square(names)
        out["similarity"][measure.name] = frame(mean)
        out["ci_low"][measure.name] = frame(low)
        out["ci_high"][measure.name] = frame(high)
        out["chance"][measure.name] = frame(chance)
        with np.errstate(divide="ignore", invalid="ignore"):
            corrected = (mean - chance) / (1.0 - chance) if higher else np.full_like(mean, np.nan)
        out["corrected"][measure.name] = frame(np.where(np.isfinite(corrected), corrected, np.nan))
        distance = _distance(mean, higher)
        linkage, order = _cluster(distance)
        out["linkage"][measure.name] = linkage
        out["order"][measure.name] = [names[k] for k in order]
        resampled = [set(_members(_tree(_distance(b, higher)), len(names))) for b in boot]
        out["clusters"][measure.name] = _support(linkage, resampled, names)
        out["groups"][measure.name] = _group_support(asked, linkage, resampled, names)
        out["coords"][measure.name] = pd.DataFrame(_classical_mds(distance), index=pd.Index(names, name="policy"),
                                                   columns=["x", "y"])
        out["neighbours"][measure.name] = _neighbours(mean, boot, names, higher)
    return BehaviourMap(policies=tuple(names), measures=tuple(m.name for m in resolved), contexts=len(ids),
                        unit=unit if clusters is not None else "contexts", units=n_units, bootstrap=settings,
                        samples={name: _samples(side) for name, side in zip(names, sides, strict=True)}, **out)


def _sides(responses: Mapping[str, Responses | SampledResponses]) -> tuple[list[str],
                                                                          list[Responses | SampledResponses]]:
    if not isinstance(responses, Mapping):
        raise InvalidResponseError(f"responses must be a mapping of policy name to Responses or SampledResponses, "
                                   f"got {type(responses).__name__}")
    names = [str(name) for name in responses]
    if not 3 <= len(names) <= MAX_POLICIES:
        raise InvalidResponseError(f"a behaviour map takes 3 to {MAX_POLICIES} policies, got {len(names)} "
                                   "(two: simscore compare)")
    if len(set(names)) != len(names):
        raise InvalidResponseError("two policies have one name: give each its own")
    sides: list[Responses | SampledResponses] = []
    for name, side in responses.items():
        if not isinstance(side, (Responses, SampledResponses)):
            raise InvalidResponseError(f"policy {name!r}: expected simscore.Responses or "
                                       f"simscore.samples.SampledResponses, got {type(side).__name__}")
        sides.append(side)
    return names, sides


def _samples(side: Responses | SampledResponses) -> int:
    """Samples per context: 1 for plain responses (a sampled policy holds the same number at every context)."""
    return side.n_samples if isinstance(side, SampledResponses) else 1


def _warn_shared_seeds(names: list[str], sides: list[Responses | SampledResponses]) -> None:
    """Warn once for the pairs of sampled policies drawn with one seed (their k-th samples share random numbers)."""
    drawn = [(name, side) for name, side in zip(names, sides, strict=True)
             if isinstance(side, SampledResponses) and side.n_samples > 1]
    shared = [(a, b, seed) for (a, side_a), (b, side_b) in itertools.combinations(drawn, 2)
              if (seed := shared_seed(side_a, side_b)) is not None]
    if shared:
        shown = ", ".join(f"{a!r} and {b!r} (seed {seed})" for a, b, seed in shared[:5])
        more = f" and {len(shared) - 5} more pair(s)" if len(shared) > 5 else ""
        warnings.warn(f"{shown}{more} were drawn with one seed: their k-th samples share random numbers, which "
                      "makes them look more alike than independent draws; draw each with a seed of its own "
                      "(simscore respond --seed)", SharedSeedWarning, stacklevel=3)


def _unit_codes(clusters: Sequence[Any] | None, n_contexts: int) -> tuple[np.ndarray, int]:
    if clusters is None:
        return np.arange(n_contexts, dtype=np.int64), n_contexts
    labels = list(clusters)
    if len(labels) != n_contexts:
        raise ContextMismatchError(f"clusters holds {len(labels)} labels for {n_contexts} shared contexts")
    codes, distinct = pd.factorize(pd.Series(labels, dtype=object), sort=False)
    return codes.astype(np.int64), len(distinct)


def _draw_counts(rng: np.random.Generator, n_units: int, n_resamples: int) -> np.ndarray:
    """How often each unit is drawn in each resample (units drawn with replacement)."""
    drawn = rng.integers(0, n_units, size=(n_resamples, n_units))
    counts = np.zeros((n_resamples, n_units), dtype=np.float64)
    np.add.at(counts, (np.repeat(np.arange(n_resamples), n_units), drawn.reshape(-1)), 1.0)
    return counts


def _derangement(rng: np.random.Generator, n: int) -> np.ndarray:
    """A permutation of ``range(n)`` without a fixed point (n >= 2): a random rotation of a random order."""
    order = rng.permutation(n)
    step = int(rng.integers(1, n))
    shifted = np.empty(n, dtype=np.int64)
    shifted[order] = order[(np.arange(n) + step) % n]
    return shifted


def _codes(measure: Measure, sides: list[Responses | SampledResponses],
           ids: list[str]) -> tuple[list[Any], list[np.ndarray]]:
    """The distinct values of the measure's level over all policies' responses, and each policy's responses as
    indices into them: shape (contexts, samples), one sample for plain :class:`Responses`."""
    pick = Responses.actions if measure.level == "action" else Responses.texts
    columns = [pick(side, ids) if isinstance(side, Responses)
               else [getattr(r, measure.level) for c in ids for r in side[c]] for side in sides]
    flat = [value for column in columns for value in column]
    values, codes, _, inverse = unique_pairs(flat, flat)
    code = codes[inverse]  # each response as an index into values
    ends = np.cumsum([len(column) for column in columns])[:-1]
    return values, [part.reshape(len(ids), -1) for part in np.split(code, ends)]


@dataclass(frozen=True)
class _Block:
    """The pairs of values one piece of the map needs, as keys ``a * n_values + b``: ``keys[r]`` are the pairs of
    context ``rows[r]``, a-sample major (the order :func:`~simscore.comparison.compare` takes them in)."""

    kind: str  # "cross": i's samples against j's; "chance": at j's other context; "within": i's own pairs p < q
    i: int
    j: int
    rows: slice
    keys: np.ndarray  # (len(rows), pairs per context)


def _blocks(code: list[np.ndarray], n_values: int, shift: np.ndarray, symmetric: bool) -> Iterator[_Block]:
    """Every block of pairs the map scores, contexts chunked so that a block holds about :data:`_BLOCK` keys.

    Ordered pairs of policies (a symmetric measure: each unordered pair once, the earlier policy first), each
    pair's chance (the earlier policy's context against the later one's ``shift``), and each sampled policy's
    pairs of its own distinct samples."""
    n, c = len(code), len(code[0])
    for i, j in itertools.permutations(range(n), 2):
        if i < j or not symmetric:
            yield from _chunks("cross", i, j, code[i], code[j], n_values)
    for i, j in itertools.combinations(range(n), 2):
        yield from _chunks("chance", i, j, code[i], code[j][shift], n_values)
    for i, own in enumerate(code):
        if own.shape[1] > 1:
            first, second = np.triu_indices(own.shape[1], 1)
            step = max(1, _BLOCK // len(first))
            for start in range(0, c, step):
                part = own[start:start + step]
                yield _Block("within", i, i, slice(start, start + step), part[:, first] * n_values + part[:, second])


def _chunks(kind: str, i: int, j: int, left: np.ndarray, right: np.ndarray, n_values: int) -> Iterator[_Block]:
    """The cross pairs of ``left``'s and ``right``'s samples per context (a-sample major), in chunks of contexts."""
    width = left.shape[1] * right.shape[1]
    step = max(1, _BLOCK // width)
    for start in range(0, len(left), step):
        keys = left[start:start + step, :, None] * n_values + right[start:start + step, None, :]
        yield _Block(kind, i, j, slice(start, start + step), keys.reshape(len(keys), width))


class _DistinctPairs:
    """The distinct pairs of values the map needs, gathered block by block, then scored once and looked up.

    Keys are ``a * n_values + b``. With few values a flag per possible key marks them (no sorting);
    with many, the sorted distinct keys are merged as blocks come. Both give the same sorted keys.
    """

    def __init__(self, n_values: int) -> None:
        self.n_values = n_values
        self.marked: np.ndarray | None = np.zeros(n_values * n_values, dtype=bool) \
            if n_values * n_values <= _TABLE else None
        self.keys = np.zeros(0, dtype=np.int64)
        self.pending: list[np.ndarray] = []
        self.table: np.ndarray | None = None  # with few values: the score of every possible key
        self.scores = np.zeros(0)

    def add(self, keys: np.ndarray) -> None:
        if self.marked is not None:
            self.marked[keys.reshape(-1)] = True
            return
        self.pending.append(np.unique(keys))
        if sum(len(part) for part in self.pending) > _BLOCK:
            self._merge()

    def _merge(self) -> None:
        self.keys = np.unique(np.concatenate([self.keys, *self.pending]))
        self.pending = []

    def score(self, measure: Measure, values: list[Any]) -> None:
        """Score every distinct pair once (a measure without the pairwise interface: its own ``score_pairs``)."""
        if self.marked is not None:
            self.keys = np.flatnonzero(self.marked)
        else:
            self._merge()
        left, right = self.keys // self.n_values, self.keys % self.n_values
        if isinstance(measure, PairwiseMeasure):
            self.scores = measure.score_distinct(values, left, right)
        else:
            self.scores = np.asarray(measure.score_pairs([values[k] for k in left.tolist()],
                                                         [values[k] for k in right.tolist()]), dtype=np.float64)
        if self.marked is not None:
            self.table = np.full(len(self.marked), np.nan)
            self.table[self.keys] = self.scores

    def scores_of(self, keys: np.ndarray) -> np.ndarray:
        if self.table is not None:
            return self.table[keys]
        return self.scores[np.searchsorted(self.keys, keys)]


def _row_means(scores: np.ndarray) -> np.ndarray:
    """Each row's mean without its NaN (NaN for a row without any), summed as compare sums a context's pairs.

    compare's per-context pairs lie column by column in memory (Fortran order, from indexing its pooled
    pairs), which numpy sums left to right; the same layout here gives the same floats."""
    if scores.shape[1] == 1:
        return scores[:, 0]
    valid = ~np.isnan(scores)
    counts = valid.sum(axis=1)
    sums = np.asfortranarray(np.where(valid, scores, 0.0)).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


def _pair_scores(measure: Measure, sides: list[Responses | SampledResponses], ids: list[str],
                 shift: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every ordered pair's per-context scores and chance scores, shape (N, N, contexts): the mean over the cross
    pairs of the two policies' samples; the diagonal a sampled policy's mean over its own distinct pairs.

    Every distinct pair of values is scored once for the whole map; a symmetric measure scores each unordered
    pair of policies once (the later policy's row is the same pairs summed in its own order, as compare sums them).
    """
    values, code = _codes(measure, sides, ids)
    symmetric = bool(getattr(measure, "symmetric", False))
    found = _DistinctPairs(len(values))
    for block in _blocks(code, len(values), shift, symmetric):
        found.add(block.keys)
    found.score(measure, values)
    n, c = len(sides), len(ids)
    out = np.full((n, n, c), np.nan)
    chance = np.full((n, n, c), np.nan)
    for block in _blocks(code, len(values), shift, symmetric):
        scored = found.scores_of(block.keys)
        target = chance if block.kind == "chance" else out
        target[block.i, block.j, block.rows] = _row_means(scored)
        if block.kind == "chance":
            chance[block.j, block.i, block.rows] = target[block.i, block.j, block.rows]
        elif block.kind == "cross" and symmetric:
            k_i, k_j = code[block.i].shape[1], code[block.j].shape[1]
            turned = scored.reshape(-1, k_i, k_j).transpose(0, 2, 1).reshape(-1, k_j * k_i)
            out[block.j, block.i, block.rows] = _row_means(turned)
    single = [k for k in range(n) if code[k].shape[1] == 1]
    if single:  # a policy of one sample against itself: identical responses
        same = measure.score_distinct(values, np.arange(len(values)), np.arange(len(values))) \
            if isinstance(measure, PairwiseMeasure) else None
        for k in single:
            out[k, k] = same[code[k][:, 0]] if same is not None else 1.0
    return out, chance


def _means(scores: np.ndarray, codes: np.ndarray, n_units: int, draws: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The mean over contexts of every pair, and its value in each resample of units (NaN left out)."""
    valid = ~np.isnan(scores)
    n = scores.shape[0]
    sums = np.zeros((n_units, n, n))
    counts = np.zeros((n_units, n, n))
    np.add.at(sums, codes, np.where(valid, scores, 0.0).transpose(2, 0, 1))
    np.add.at(counts, codes, valid.astype(np.float64).transpose(2, 0, 1))
    mean = np.full((n, n), np.nan)
    for i in range(n):
        for j in range(n):  # as compare() takes it: the mean of the defined scores, the same float
            defined = scores[i, j][valid[i, j]]
            if len(defined):
                mean[i, j] = defined.mean()
    with np.errstate(invalid="ignore", divide="ignore"):
        boot = np.einsum("bu,uij->bij", draws, sums) / np.einsum("bu,uij->bij", draws, counts)
    return mean, boot


def _percentiles(boot: np.ndarray, q: list[float]) -> np.ndarray:
    """``np.nanpercentile(boot, q, axis=0)``, the same floats: the pairs no resample leaves undefined at numpy's
    vectorised speed (its NaN-aware percentile takes each pair on its own), the others as nanpercentile does."""
    undefined = np.isnan(boot).any(axis=0)
    out = np.percentile(boot, q, axis=0)
    if undefined.any():
        out[:, undefined] = np.nanpercentile(boot[:, undefined], q, axis=0)
    return out


def _square(names: list[str]) -> Any:
    index = pd.Index(names, name="policy")
    return lambda values: pd.DataFrame(np.asarray(values, dtype=np.float64), index=index, columns=list(names))


def _distance(similarity: np.ndarray, higher_is_better: bool) -> np.ndarray:
    """Symmetric distances with a zero diagonal: ``1 - s`` (``s`` where lower is better), the two orders averaged."""
    d = 1.0 - similarity if higher_is_better else similarity.copy()
    d = (d + d.T) / 2.0
    d = np.where(np.isfinite(d), np.maximum(d, 0.0), 1.0)
    np.fill_diagonal(d, 0.0)
    return d


def _tree(distance: np.ndarray) -> np.ndarray:
    """scipy's average-linkage matrix of a symmetric distance matrix."""
    from scipy.cluster.hierarchy import linkage
    from scipy.spatial.distance import squareform

    return linkage(squareform(distance, checks=False), method="average")


def _cluster(distance: np.ndarray) -> tuple[np.ndarray, list[int]]:
    from scipy.cluster.hierarchy import leaves_list

    tree = _tree(distance)
    return tree, [int(k) for k in leaves_list(tree)]


def _members(tree: np.ndarray, n: int) -> list[frozenset[int]]:
    """The policies of each merge of a linkage matrix, in merge order."""
    groups: list[frozenset[int]] = [frozenset([k]) for k in range(n)]
    for left, right, *_ in tree.tolist():
        groups.append(groups[int(left)] | groups[int(right)])
    return groups[n:]


def _support(tree: np.ndarray, resampled: list[set[frozenset[int]]], names: list[str]) -> pd.DataFrame:
    """Each merge of ``tree`` with the share of resampled clusterings (their clusters) that have it."""
    n = len(names)
    merges = _members(tree, n)
    found = np.zeros(len(merges))
    for again in resampled:
        found += [group in again for group in merges]
    rows = [{"merge": k + 1, "members": " + ".join(names[i] for i in sorted(group)), "size": len(group),
             "height": float(tree[k, 2]), "support": found[k] / max(len(resampled), 1)}
            for k, group in enumerate(merges)]
    return pd.DataFrame(rows, columns=["merge", "members", "size", "height", "support"])


def _groups(groups: Mapping[str, Sequence[str]] | None, names: list[str]) -> dict[str, frozenset[int]]:
    """The named groups as sets of policy positions, checked."""
    if groups is None:
        return {}
    if not isinstance(groups, Mapping):
        raise InvalidResponseError(f"groups must map a name to policy names, got {type(groups).__name__}")
    position = {name: k for k, name in enumerate(names)}
    out = {}
    for group, members in groups.items():
        listed = [members] if isinstance(members, str) else list(members)
        unknown = [m for m in listed if m not in position]
        if unknown:
            raise InvalidResponseError(f"group {group!r}: no policy named {', '.join(map(repr, unknown))} in the map "
                                       f"(it has {', '.join(names)})")
        if len(set(listed)) < 2:
            raise InvalidResponseError(f"group {group!r}: needs 2 or more distinct policies, got {listed}")
        out[str(group)] = frozenset(position[m] for m in listed)
    return out


def _group_support(asked: Mapping[str, frozenset[int]], tree: np.ndarray, resampled: list[set[frozenset[int]]],
                   names: list[str]) -> pd.DataFrame:
    """Whether the clustering of the whole data has each asked group, and the share of resamples that do."""
    found = set(_members(tree, len(names)))
    rows = [{"group": group, "members": " + ".join(names[i] for i in sorted(members)),
             "clustered": int(members in found),
             "support": sum(members in again for again in resampled) / max(len(resampled), 1)}
            for group, members in asked.items()]
    return pd.DataFrame(rows, columns=["group", "members", "clustered", "support"])


def _classical_mds(distance: np.ndarray) -> np.ndarray:
    """Classical (Torgerson) scaling to 2-D: the two leading eigenvectors of the double-centred
    squared distances, each scaled by the root of its eigenvalue and signed so that its largest
    coordinate is positive."""
    n = len(distance)
    centre = np.eye(n) - np.full((n, n), 1.0 / n)
    gram = -0.5 * centre @ (distance**2) @ centre
    values, vectors = np.linalg.eigh((gram + gram.T) / 2.0)
    top = np.argsort(values)[::-1][:2]
    coords = vectors[:, top] * np.sqrt(np.maximum(values[top], 0.0))
    for k in range(coords.shape[1]):
        if coords[np.argmax(np.abs(coords[:, k])), k] < 0:
            coords[:, k] = -coords[:, k]
    if coords.shape[1] < 2:
        coords = np.pad(coords, ((0, 0), (0, 2 - coords.shape[1])))
    return coords


def _neighbours(mean: np.ndarray, boot: np.ndarray, names: list[str], higher: bool) -> pd.DataFrame:
    rows = []
    for k, name in enumerate(names):
        row = np.where(np.arange(len(names)) == k, np.nan, mean[k])
        ranked = [int(j) for j in np.argsort(-row if higher else row, kind="stable") if j != k and np.isfinite(row[j])]
        if len(ranked) < 2:
            rows.append({"policy": name, "nearest": None, "similarity": math.nan, "second": None,
                         "second_similarity": math.nan, "difference": math.nan, "p": math.nan})
            continue
        first, second = ranked[0], ranked[1]
        gap = boot[:, k, first] - boot[:, k, second]
        if not higher:
            gap = -gap
        finite = gap[np.isfinite(gap)]
        rows.append({"policy": name, "nearest": names[first], "similarity": float(mean[k, first]),
                     "second": names[second], "second_similarity": float(mean[k, second]),
                     "difference": float(mean[k, first] - mean[k, second]),
                     "p": float((finite <= 0).mean()) if len(finite) else math.nan})
    return pd.DataFrame(rows).set_index("policy")
