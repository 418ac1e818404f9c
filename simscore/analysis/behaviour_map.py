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
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from simscore.checks import check_int
from simscore.errors import ContextMismatchError, InvalidResponseError
from simscore.measures import Measure, PairwiseMeasure, resolve_measures
from simscore.measures.base import unique_pairs
from simscore.responses import Responses
from simscore.stats import Bootstrap

__all__ = ["BehaviourMap", "behaviour_map", "MAX_POLICIES", "LONG_TABLES", "long_tables", "from_long_tables"]

#: The most policies one map holds (N(N-1) ordered pairs per context are scored).
MAX_POLICIES = 50


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
        N x N matrices (policies as index and columns); the diagonal is 1 (a policy against
        itself: the measure's own value for identical responses).
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
    responses: Mapping[str, Responses],
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
    responses : mapping of name to Responses
        Each policy's responses; the map is over the context ids all of them hold (in the first
        policy's order), at least 2.
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
        Fewer than 3 or more than :data:`MAX_POLICIES` policies, a value that is not Responses, or
        a group naming a policy the map lacks (or fewer than 2).
    ContextMismatchError
        Fewer than 2 contexts shared by all policies, or ``clusters`` of another length.
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
        low, high = np.nanpercentile(boot, [tail, 100.0 - tail], axis=0)
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
                        unit=unit if clusters is not None else "contexts", units=n_units, bootstrap=settings, **out)


def _sides(responses: Mapping[str, Responses]) -> tuple[list[str], list[Responses]]:
    if not isinstance(responses, Mapping):
        raise InvalidResponseError(f"responses must be a mapping of policy name to Responses, got "
                                   f"{type(responses).__name__}")
    names = [str(name) for name in responses]
    if not 3 <= len(names) <= MAX_POLICIES:
        raise InvalidResponseError(f"a behaviour map takes 3 to {MAX_POLICIES} policies, got {len(names)} "
                                   "(two: simscore compare)")
    if len(set(names)) != len(names):
        raise InvalidResponseError("two policies have one name: give each its own")
    sides = []
    for name, side in responses.items():
        if not isinstance(side, Responses):
            raise InvalidResponseError(f"policy {name!r}: expected simscore.Responses, got {type(side).__name__}")
        sides.append(side)
    return names, sides


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


def _pair_scores(measure: Measure, sides: list[Responses], ids: list[str],
                 shift: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every ordered pair's per-context scores and chance scores (the earlier policy's context k against
    the later one's shift[k]); a symmetric measure scores each unordered pair once."""
    pick = Responses.actions if measure.level == "action" else Responses.texts
    columns = [pick(side, ids) for side in sides]
    n, c = len(sides), len(ids)
    flat = [value for column in columns for value in column]
    values, codes, _, inverse = unique_pairs(flat, flat)
    code = codes[inverse].reshape(n, c)  # each policy's response at each context as an index into values
    first, second = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    symmetric = bool(getattr(measure, "symmetric", False))
    upper = first < second
    scored_pairs = upper if symmetric else first != second  # a symmetric measure: each unordered pair once
    a = np.concatenate([code[first[scored_pairs]], code[first[upper]]]).reshape(-1)
    b = np.concatenate([code[second[scored_pairs]], code[second[upper]][:, shift]]).reshape(-1)
    pairs, where = np.unique(a * len(values) + b, return_inverse=True)
    if isinstance(measure, PairwiseMeasure):
        distinct = measure.score_distinct(values, pairs // len(values), pairs % len(values))
    else:  # a measure without the pairwise interface: its own score_pairs on the distinct pairs
        distinct = np.asarray(measure.score_pairs([values[k] for k in (pairs // len(values)).tolist()],
                                                  [values[k] for k in (pairs % len(values)).tolist()]), dtype=np.float64)
    scored = distinct[where.reshape(-1)].reshape(-1, c)
    k = int(scored_pairs.sum())
    out = np.full((n, n, c), np.nan)
    chance = np.full((n, n, c), np.nan)
    out[scored_pairs] = scored[:k]
    if symmetric:
        out.transpose(1, 0, 2)[upper] = scored[:k]
    chance[upper] = scored[k:]  # the earlier policy's context against the later one's other context
    chance.transpose(1, 0, 2)[upper] = scored[k:]
    same = measure.score_distinct(values, np.arange(len(values)), np.arange(len(values))) \
        if isinstance(measure, PairwiseMeasure) else None
    for k in range(n):  # a policy against itself: identical responses
        out[k, k] = same[code[k]] if same is not None else 1.0
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
