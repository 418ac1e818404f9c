"""Where and why two policies differ, and whether they can be told apart at all.

Everything here takes DataFrames indexed by context id (the per-context scores of
:class:`~simscore.comparison.Comparison`, and context features or groups such as those of
:func:`contexts.features.context_features` / :func:`contexts.features.context_groups`), so
the core stays independent of how contexts are represented.

* :func:`disagreement_by` — mean disagreement per group of contexts (turn, user method, ...).
* :func:`separating_contexts` — the contexts on which runs agree within a group (e.g. the
  TS-trained runs) but not across groups (TS vs IQ).
* :func:`disagreement_probe` — a depth-limited decision tree predicting from context
  features whether two policies disagree, with held-out accuracy beside the majority
  baseline and permutation importances.
* :func:`two_sample_test` — a classifier two-sample test: given the context, can a model
  tell policy A's response from B's? Cross-validated accuracy grouped by context, a
  permutation p-value and the most distinguishing contexts.

Disagreement of a measure is ``1 - score`` for similarities (``higher_is_better``; every
registered measure, CER included, since simscore scores CER as a similarity) and the score
itself otherwise. Seeds go in explicitly; global random state is never used.
scikit-learn is needed by the last two functions only and imported when they are called.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from simscore.acts import Act
from simscore.analysis.per_context import ScoresArg, pool
from simscore.errors import ContextMismatchError, MissingDependencyError
from simscore.measures import get_measure
from simscore.responses import Response

__all__ = [
    "disagreement",
    "disagrees",
    "disagreement_by",
    "separating_contexts",
    "ProbeResult",
    "disagreement_probe",
    "TwoSampleResult",
    "two_sample_test",
    "response_features",
]


def _ids_text(ids: Any, limit: int = 5) -> str:
    ids = list(ids)
    shown = ", ".join(map(repr, ids[:limit]))
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def _check_ids(have: pd.Index, need: pd.Index, have_name: str, need_name: str) -> None:
    """Raise ContextMismatchError naming the ids of ``need`` that ``have`` lacks."""
    missing = need.unique().difference(have, sort=False)
    if len(missing):
        raise ContextMismatchError(f"{have_name} has no row for {len(missing)} context id(s) of {need_name}: "
                                   f"{_ids_text(missing)}")


def disagreement(scores: pd.Series | np.ndarray, measure: str) -> pd.Series | np.ndarray:
    """Per-context disagreement of ``measure``: ``1 - score`` if higher is better, else the score itself.

    Every registered measure is a similarity (``higher_is_better``), CER included: simscore
    implements it as the paper's similarity δ·(CẼ + CẼ')/2, so its disagreement is ``1 - cer``.
    The score itself is used for a measure whose ``higher_is_better`` is False.

    Raises
    ------
    UnknownMeasureError
        If ``measure`` is not a registered measure name.

    >>> disagreement(np.array([1.0, 0.25]), "tmr"), disagreement(np.array([0.0, 0.5]), "cer")
    (array([0.  , 0.75]), array([1. , 0.5]))
    """
    return 1.0 - scores if get_measure(measure).higher_is_better else scores


def disagrees(scores: pd.Series, measure: str = "tmr") -> pd.Series:
    """Whether the two policies disagree on each context: disagreement > 0 (``tmr < 1``), NaN dropped.

    >>> disagrees(pd.Series([1.0, 0.0, np.nan], index=["a", "b", "c"])).to_dict()
    {'a': False, 'b': True}
    """
    out = disagreement(scores.dropna(), measure) > 0.0
    return out.astype(bool)


def _score_column(scores: ScoresArg, measure: str) -> pd.DataFrame:
    get_measure(measure)  # unknown name -> UnknownMeasureError
    frame, _ = pool(scores, [measure])
    return frame


def disagreement_by(scores: ScoresArg, groups: pd.DataFrame, measure: str = "tmr") -> pd.DataFrame:
    """Mean disagreement, count and share of scored pairs per group value, for every grouping column.

    Parameters
    ----------
    scores : DataFrame, Comparison or iterable of Comparison
        Per-context scores (index ``context_id``, possibly repeated when several
        comparisons are stacked; see :func:`~simscore.analysis.per_context.pooled_scores`)
        with a column ``measure``.
    groups : DataFrame
        Index ``context_id`` (unique); one categorical column per way of grouping, e.g.
        :func:`contexts.features.context_groups`. Must cover every id of ``scores``.
    measure : str
        Disagreement is ``1 - score`` for similarities, the score itself otherwise (see :func:`disagreement`).

    Returns
    -------
    DataFrame
        Columns ``grouping`` (the column of ``groups``), ``group`` (its value, as str),
        ``disagreement`` (mean over the group's scored pairs), ``count`` (scored pairs, NaN
        scores left out), ``share`` (count / all scored pairs), ``contexts`` (distinct
        context ids). Groupings in ``groups``' column order; values in categorical order
        (else sorted); empty groups left out.

    Raises
    ------
    UnknownMeasureError
        ``measure`` is not a measure.
    ValueError
        ``scores`` has no column ``measure``, or ``groups`` has repeated ids or no columns.
    ContextMismatchError
        A context id of ``scores`` has no row in ``groups`` (the message names it).

    Examples
    --------
    >>> scores = pd.DataFrame({"tmr": [1.0, 0.0, 0.0]}, index=pd.Index(["a", "b", "c"], name="context_id"))
    >>> groups = pd.DataFrame({"turn": ["0", "1", "1"]}, index=["a", "b", "c"])
    >>> disagreement_by(scores, groups).to_dict("records")[1]
    {'grouping': 'turn', 'group': '1', 'disagreement': 1.0, 'count': 2, 'share': 0.6666666666666666, 'contexts': 2}
    """
    frame = _score_column(scores, measure)
    if not isinstance(groups, pd.DataFrame) or groups.shape[1] == 0:
        raise ValueError("groups must be a DataFrame with at least one grouping column")
    if groups.index.has_duplicates:
        raise ValueError(f"groups: context ids appear twice: {_ids_text(groups.index[groups.index.duplicated()])}")
    _check_ids(groups.index, frame.index, "groups", "scores")
    values = pd.Series(np.asarray(disagreement(frame[measure].to_numpy(dtype=float), measure)), index=frame.index)
    scored = values.notna().to_numpy()
    values = values[scored]
    total = len(values)
    rows = []
    for column in groups.columns:
        keys = groups[column].reindex(values.index)
        if not isinstance(keys.dtype, pd.CategoricalDtype):
            keys = keys.astype("category")
        # keys.array keeps the categorical order (to_numpy would sort the groups alphabetically)
        table = pd.DataFrame({"group": keys.array, "d": values.to_numpy(), "id": values.index.to_numpy()})
        for value, part in table.groupby("group", observed=True, sort=True):
            rows.append({
                "grouping": str(column),
                "group": str(value),
                "disagreement": float(part["d"].mean()),
                "count": len(part),
                "share": len(part) / total,
                "contexts": int(part["id"].nunique()),
            })
    columns = ["grouping", "group", "disagreement", "count", "share", "contexts"]
    out = pd.DataFrame(rows, columns=columns)
    return out.astype({"count": "int64", "contexts": "int64"})


def _per_context_agreement(scores: ScoresArg, measure: str, name: str) -> pd.DataFrame:
    frame = _score_column(scores, measure)
    agreement = 1.0 - np.asarray(disagreement(frame[measure].to_numpy(dtype=float), measure))
    series = pd.Series(agreement, index=frame.index).dropna()
    if series.empty:
        raise ValueError(f"{name}: no scored context for {measure!r}")
    grouped = series.groupby(level=0, sort=False)
    return pd.DataFrame({f"{name}_mean": grouped.mean(), f"{name}_count": grouped.size()})


def separating_contexts(
    within_scores: ScoresArg, across_scores: ScoresArg, *, measure: str = "tmr", top: int | None = None
) -> pd.DataFrame:
    """The contexts on which policies agree within groups but not across them.

    Take runs in two groups (e.g. three TS-trained and three IQ-trained runs).
    ``within_scores`` are the per-context scores of the comparisons whose two runs are in the
    same group (TS vs TS and IQ vs IQ pairs); ``across_scores`` those of the comparisons
    pairing a run of one group with a run of the other (TS vs IQ). For each context ``c``,
    with agreement ``g = score`` for similarities (every registered measure) and
    ``g = 1 - score`` for a measure where lower is better::

        within_mean(c) = mean of g(c) over the within-group comparisons
        across_mean(c) = mean of g(c) over the across-group comparisons
        separation(c)  = within_mean(c) - across_mean(c)

    NaN scores are left out of the means. ``separation`` is in [-1, 1] for measures in
    [0, 1]: 1 when every within-group pair agrees and no across-group pair does (the context
    separates the groups perfectly), 0 when the groups are indistinguishable there, negative
    when runs agree more across groups than within them.

    Parameters
    ----------
    within_scores, across_scores : DataFrame, Comparison or iterable of Comparison
        Per-context scores with a column ``measure``, index ``context_id`` (repeated over
        comparisons). Both must cover the same context ids.
    measure : str
    top : int, optional
        Keep only the first ``top`` rows.

    Returns
    -------
    DataFrame
        Index ``context_id``; columns ``within_mean``, ``within_count``, ``across_mean``,
        ``across_count``, ``separation``; sorted by ``separation`` descending, then by
        context id.

    Raises
    ------
    ContextMismatchError
        A context has scores on one side only (the message names it).
    ValueError
        No scored context, or a missing score column.

    Examples
    --------
    >>> idx = pd.Index(["a", "b", "a", "b"], name="context_id")
    >>> within = pd.DataFrame({"tmr": [1.0, 1.0, 1.0, 0.0]}, index=idx)
    >>> across = pd.DataFrame({"tmr": [0.0, 1.0, 0.0, 1.0]}, index=idx)
    >>> separating_contexts(within, across)["separation"].to_dict()
    {'a': 1.0, 'b': -0.5}
    """
    within = _per_context_agreement(within_scores, measure, "within")
    across = _per_context_agreement(across_scores, measure, "across")
    _check_ids(across.index, within.index, "across_scores", "within_scores")
    _check_ids(within.index, across.index, "within_scores", "across_scores")
    out = within.join(across)
    out["separation"] = out["within_mean"] - out["across_mean"]
    out.index.name = "context_id"
    out = out.assign(_id=out.index.astype(str)).sort_values(["separation", "_id"], ascending=[False, True])
    out = out.drop(columns="_id")
    return out if top is None else out.head(top)


# -- classifiers -----------------------------------------------------------------------------


def _sklearn() -> Any:
    try:
        import sklearn
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingDependencyError("this analysis needs scikit-learn: pip install scikit-learn") from exc
    return sklearn


def _design(features: pd.DataFrame) -> pd.DataFrame:
    """Features as a float matrix: bools to 0/1, text/categorical columns one-hot (``col=value``), NaN -> -1.

    A text column with a different value in every row (an identifier such as the grid cell of
    C_gen contexts) is left out: it cannot generalise to held-out contexts.
    """
    if not isinstance(features, pd.DataFrame):
        raise TypeError(f"features must be a DataFrame indexed by context id, got {type(features).__name__}")
    if features.index.has_duplicates:
        repeated = features.index[features.index.duplicated()]
        raise ValueError(f"features: context ids appear twice: {_ids_text(repeated)}")
    parts = []
    for column in features.columns:
        values = features[column]
        if pd.api.types.is_bool_dtype(values) or pd.api.types.is_numeric_dtype(values):
            parts.append(values.astype(float).rename(str(column)))
        else:
            text = values.astype(object).where(values.notna(), None).map(lambda v: "n/a" if v is None else str(v))
            if len(text) > 1 and text.nunique() == len(text):
                continue
            for level in sorted(set(text)):
                parts.append((text == level).astype(float).rename(f"{column}={level}"))
    if not parts:
        raise ValueError("features: no columns")
    return pd.concat(parts, axis=1).fillna(-1.0)


@dataclass(frozen=True)
class ProbeResult:
    """What :func:`disagreement_probe` found.

    Attributes
    ----------
    accuracy : float
        Held-out accuracy of the tree.
    baseline : float
        Held-out accuracy of always predicting the training set's majority class.
    n_train, n_test : int
    disagreement_rate : float
        Share of contexts where the policies disagree (all contexts).
    importances : DataFrame
        Index ``feature``; ``importance`` (mean drop of held-out accuracy when the feature is
        permuted) and ``std``; ranked, largest first (ties by name).
    rules : str
        The fitted tree as text (:func:`sklearn.tree.export_text`).
    model : object
        The fitted ``DecisionTreeClassifier``.
    """

    accuracy: float
    baseline: float
    n_train: int
    n_test: int
    disagreement_rate: float
    importances: pd.DataFrame
    rules: str
    model: Any


def disagreement_probe(
    features: pd.DataFrame,
    disagreement: pd.Series,
    seed: int,
    *,
    max_depth: int = 3,
    test_size: float = 0.3,
    n_repeats: int = 20,
) -> ProbeResult:
    """Predict from context features whether two policies disagree, with a shallow decision tree.

    Why a tree of depth <= 3 rather than logistic regression: policies act on thresholds of
    the belief (confirm below some top-value probability, offer once every slot is above
    one) and on combinations of them (byname *and* no offer yet); a shallow tree finds such
    thresholds and interactions on unscaled features and reads as at most eight if-then
    rules, while a logistic model needs scaling, is linear in the log-odds and so misses an
    interaction unless it is engineered in.

    Parameters
    ----------
    features : DataFrame
        Index ``context_id``; e.g. :func:`contexts.features.context_features`. Bool columns
        become 0/1, text and categorical columns one-hot ``column=value`` (a text column
        with a different value in every row, like ``grid_cell`` on C_gen, is left out), NaN -1.
    disagreement : Series
        Index ``context_id``; truthy where the policies disagree, e.g.
        ``disagrees(comparison.scores["tmr"])`` (TMR < 1). Every id must be in ``features``.
    seed : int
        Seeds the stratified train/test split, the tree and the permutations.
    max_depth : int
        1 to 3.
    test_size : float
        Share of contexts held out (stratified by the label).
    n_repeats : int
        Permutations per feature for the importances.

    Returns
    -------
    ProbeResult

    Raises
    ------
    ContextMismatchError
        An id of ``disagreement`` has no row in ``features``.
    ValueError
        Only one class (the policies always or never disagree), or too few contexts for a
        stratified split (each class needs 2 contexts and a place in both parts); a bad
        ``max_depth`` or ``test_size``.
    """
    _sklearn()
    from sklearn.inspection import permutation_importance
    from sklearn.model_selection import train_test_split
    from sklearn.tree import DecisionTreeClassifier, export_text

    if not (isinstance(max_depth, int) and 1 <= max_depth <= 3):
        raise ValueError(f"max_depth must be 1, 2 or 3 (a shallow, readable tree), got {max_depth!r}")
    if not 0.0 < test_size < 1.0:
        raise ValueError(f"test_size must be in (0, 1), got {test_size!r}")
    if not isinstance(disagreement, pd.Series):
        raise TypeError(f"disagreement must be a Series indexed by context id, got {type(disagreement).__name__}")
    design = _design(features)
    _check_ids(design.index, disagreement.index, "features", "disagreement")
    if disagreement.index.has_duplicates:
        raise ValueError("disagreement: context ids appear twice (pass one comparison's scores)")
    y = disagreement.astype(bool).to_numpy()
    x = design.loc[disagreement.index]
    counts = np.bincount(y.astype(int), minlength=2)
    if counts.min() == 0:
        raise ValueError(f"disagreement has one class only ({'disagree' if counts[1] else 'agree'} on all "
                         f"{len(y)} contexts): nothing to predict")
    n_test = int(np.ceil(test_size * len(y)))
    if counts.min() < 2 or n_test < 2 or len(y) - n_test < 2:
        raise ValueError(f"too few contexts for a stratified split: {counts[0]} agree, {counts[1]} disagree "
                         f"(each class needs at least 2, and both parts at least 2 contexts)")
    x_train, x_test, y_train, y_test = train_test_split(x, y, test_size=test_size, stratify=y, random_state=seed)
    model = DecisionTreeClassifier(max_depth=max_depth, random_state=seed).fit(x_train, y_train)
    accuracy = float(model.score(x_test, y_test))
    majority = bool(y_train.mean() > 0.5)
    baseline = float(np.mean(y_test == majority))
    imp = permutation_importance(model, x_test, y_test, n_repeats=n_repeats, random_state=seed)
    importances = pd.DataFrame(
        {"importance": imp.importances_mean, "std": imp.importances_std}, index=pd.Index(x.columns, name="feature")
    )
    importances = importances.assign(_name=importances.index).sort_values(
        ["importance", "_name"], ascending=[False, True]
    ).drop(columns="_name")
    rules = export_text(model, feature_names=[str(c) for c in x.columns], class_names=["agree", "disagree"])
    return ProbeResult(accuracy, baseline, len(y_train), len(y_test), float(y.mean()), importances, rules, model)


# -- two-sample test -------------------------------------------------------------------------


def _action(value: Any, where: str) -> Act | None:
    if isinstance(value, Response):
        return value.action
    if value is None or isinstance(value, Act):
        return value
    if isinstance(value, str):
        return Act.parse(value)
    raise TypeError(f"{where}: expected a Response, an Act, an act string or None, got {type(value).__name__}")


def response_features(responses: Mapping[str, Any], ids: Any) -> pd.DataFrame:
    """Features of the actions of ``responses`` at ``ids``: intents and slots one-hot, item counts.

    Columns: ``intent=<i>`` (1 for each intent of the action, ``(none)`` for a missing
    action), ``slot=<s>`` (number of items on slot ``s``), ``n_items``, ``n_negated``
    (``!=`` items). Column sets of several calls differ; align them with ``reindex``.

    >>> response_features({"c": "inform(name=x,food=thai)"}, ["c"]).loc["c"].to_dict()
    {'intent=inform': 1.0, 'slot=food': 1.0, 'slot=name': 1.0, 'n_items': 2.0, 'n_negated': 0.0}
    """
    rows = []
    for context_id in ids:
        act = _action(responses[context_id], f"response for {context_id!r}")
        row: dict[str, float] = {}
        if act is None:
            row["intent=(none)"] = 1.0
            items: tuple[Any, ...] = ()
        else:
            row.update((f"intent={i}", 1.0) for i in act.intents)
            items = act.items
        for item in sorted(items, key=lambda item: item.slot):
            row[f"slot={item.slot}"] = row.get(f"slot={item.slot}", 0.0) + 1.0
        row["n_items"] = float(len(items))
        row["n_negated"] = float(sum(item.op == "!=" for item in items))
        rows.append(row)
    frame = pd.DataFrame(rows, index=pd.Index(list(ids), name="context_id", dtype=object)).fillna(0.0)
    special = ["n_items", "n_negated"]
    return frame[sorted(c for c in frame.columns if c not in special) + special]


@dataclass(frozen=True)
class TwoSampleResult:
    """What :func:`two_sample_test` found.

    Attributes
    ----------
    accuracy : float
        Mean cross-validated accuracy of telling A's responses from B's (0.5 = chance).
    p_value : float
        Permutation p-value ``(1 + #{permuted accuracy >= accuracy}) / (1 + n_permutations)``.
    permuted : ndarray
        Accuracies under the null (A/B labels swapped at random within each context, or
        each cluster).
    n_contexts, n_splits : int
    contexts : DataFrame
        Index ``context_id``; ``confidence`` (mean held-out probability the classifier gave
        the true label to the context's two responses), ``action_a``, ``action_b``; most
        distinguishing first (ties by id).
    n_units : int
        Units of the folds and the permutations: the contexts, or their clusters.
    """

    accuracy: float
    p_value: float
    permuted: np.ndarray
    n_contexts: int
    n_splits: int
    contexts: pd.DataFrame
    n_units: int


class _FoldAccuracy:
    """Mean cross-validated accuracy of one decision tree under many labellings of the same rows.

    The number :func:`sklearn.model_selection.cross_val_score` (``scoring="accuracy"``) and
    :func:`~sklearn.model_selection.permutation_test_score` give, computed without their work
    per call: each fold is a fresh fit of the same tree (its parameters, its ``random_state``)
    on the fold's rows, its score the share of the test rows predicted right, the accuracy the
    mean over the folds. The rows are converted to the tree's float32 once, as each fit would
    convert them, and the folds are drawn once (:class:`~sklearn.model_selection.GroupKFold`'s
    depend on the groups alone, not on the labels), so a call is the fits and predictions
    themselves: the same trees, hence the same numbers bit for bit, several times faster.
    """

    def __init__(self, model: Any, x: np.ndarray, groups: np.ndarray, cv: Any) -> None:
        from sklearn.tree import DecisionTreeClassifier

        self._tree = DecisionTreeClassifier
        self._params = model.get_params()
        self._x = np.ascontiguousarray(x, dtype=np.float32)
        self._folds = [(train, test) for train, test in cv.split(x, groups=groups)]

    def __call__(self, labels: np.ndarray) -> float:
        scores = []
        for train, test in self._folds:
            tree = self._tree(**self._params).fit(self._x[train], labels[train], check_input=False)
            scores.append(float(np.mean(tree.predict(self._x[test], check_input=False) == labels[test])))
        return float(np.mean(scores))


def _permutation_test(accuracy: _FoldAccuracy, y: np.ndarray, permuted_labels: Iterator[np.ndarray],
                      n_permutations: int, n_jobs: int | None) -> tuple[float, np.ndarray, float]:
    """The observed accuracy, the accuracies of the permuted labels (on ``n_jobs`` threads) and the p-value
    ``(1 + #{permuted >= observed}) / (1 + n_permutations)``."""
    import joblib

    observed = accuracy(y)
    # Threads, not processes: the tree's fitting releases the GIL, and threads spare the
    # start-up and copying of worker processes (measured on 2 cores: 1.3x faster, processes slower).
    with joblib.parallel_config(backend="threading"):
        permuted = np.array(joblib.Parallel(n_jobs=n_jobs)(joblib.delayed(accuracy)(labels)
                                                           for labels in permuted_labels))
    return observed, permuted, float((np.sum(permuted >= observed) + 1.0) / (n_permutations + 1.0))


def _within_groups(y: np.ndarray, groups: np.ndarray, n_permutations: int, seed: int) -> Iterator[np.ndarray]:
    """``n_permutations`` copies of ``y``, each shuffled within every group, drawn as
    :func:`~sklearn.model_selection.permutation_test_score` draws them with ``groups`` and
    ``random_state=seed`` (one ``RandomState``; per permutation, each group in sorted order)."""
    rng = np.random.RandomState(seed)
    positions = [np.flatnonzero(groups == group) for group in np.unique(groups)]
    for _ in range(n_permutations):
        indices = np.arange(len(groups))
        for where in positions:  # the groups are disjoint: indices[where] is still where
            indices[where] = rng.permutation(where)
        yield y[indices]


def _by_cluster(units: np.ndarray, n_permutations: int, seed: int) -> Iterator[np.ndarray]:
    """The labels of :func:`two_sample_test`'s rows with a seeded coin per cluster: 1 swaps the A and B
    labels of all its contexts."""
    flips = np.random.default_rng(seed).integers(0, 2, size=(n_permutations, int(units.max()) + 1)).astype(bool)
    for flip in flips:
        swapped = flip[units].astype(np.int64)  # 1: this context's A row is labelled B, and its B row A
        yield np.concatenate([swapped, 1 - swapped])


def two_sample_test(
    features: pd.DataFrame,
    responses_a: Mapping[str, Any],
    responses_b: Mapping[str, Any],
    seed: int,
    n_permutations: int = 200,
    *,
    n_splits: int = 5,
    max_depth: int | None = 6,
    n_jobs: int | None = None,
    clusters: np.ndarray | None = None,
) -> TwoSampleResult:
    """Classifier two-sample test: given the context, can a model tell A's responses from B's?

    Each context gives two rows, ``(context features, features of A's action)`` labelled A
    and ``(context features, features of B's action)`` labelled B (:func:`response_features`).
    A decision tree (``max_depth``, seeded) is scored by ``n_splits``-fold cross-validation
    with :class:`~sklearn.model_selection.GroupKFold` by context id, so a context's two rows
    are never split between training and test. Under the null hypothesis that the policies
    respond alike, A/B labels are exchangeable within each context; the p-value comes from
    :func:`~sklearn.model_selection.permutation_test_score` with ``groups``, which shuffles
    the labels within each context. Identical policies give two identical rows per context,
    so accuracy exactly 0.5 and a large p; policies that always answer differently give
    accuracy near 1 and ``p = 1 / (n_permutations + 1)``.

    With ``clusters`` (contexts of one dialogue are not independent) the unit is a cluster:
    the folds keep a cluster's rows together (:class:`~sklearn.model_selection.GroupKFold` by
    cluster), and a permutation swaps the A/B labels of all contexts of a cluster at once (a
    seeded coin per cluster; the p-value as :func:`~sklearn.model_selection.permutation_test_score`
    gives it). With one context per cluster this is the test above, drawn differently.

    Parameters
    ----------
    features : DataFrame
        Context features, index ``context_id`` (e.g. :func:`contexts.features.context_features`).
    responses_a, responses_b : Mapping of context id to Response, Act, act string or None
        E.g. :class:`~simscore.responses.Responses`. Both must have exactly the ids of ``features``.
    seed : int
        Seeds the tree and the permutations.
    n_permutations : int
        At least 1.
    n_splits : int
        Folds (at least 2, at most the number of contexts).
    max_depth : int or None
        Depth of the tree (None: unlimited).
    n_jobs : int, optional
        Threads for the permutations (joblib; None: one). The permuted labels are drawn up
        front, so the numbers do not depend on ``n_jobs``.
    clusters : ndarray, shape (n_contexts,), optional
        A code per row of ``features`` naming its cluster (e.g. its dialogue:
        :func:`simscore.stats.clusters.cluster_codes`); None: every context is a unit.

    Returns
    -------
    TwoSampleResult

    Raises
    ------
    ContextMismatchError
        The responses' ids differ from the features' (the message names them).
    ValueError
        Fewer contexts (or clusters) than folds, ``n_splits < 2`` or ``n_permutations < 1``.
    """
    _sklearn()
    from sklearn.model_selection import GroupKFold, cross_val_predict
    from sklearn.tree import DecisionTreeClassifier

    if not (isinstance(n_splits, int) and n_splits >= 2):
        raise ValueError(f"n_splits must be an int >= 2, got {n_splits!r}")
    if not (isinstance(n_permutations, int) and n_permutations >= 1):
        raise ValueError(f"n_permutations must be an int >= 1, got {n_permutations!r}")
    design = _design(features)
    for name, responses in (("responses_a", responses_a), ("responses_b", responses_b)):
        keys = pd.Index(list(responses.keys()), dtype=object)
        _check_ids(keys, design.index, name, "features")
        _check_ids(design.index, keys, "features", name)
    ids = list(design.index)
    if len(ids) < n_splits:
        raise ValueError(
            f"too few contexts for {n_splits}-fold cross-validation: {len(ids)} (need at least {n_splits})"
        )
    feats_a = response_features(responses_a, ids)
    feats_b = response_features(responses_b, ids)
    columns = sorted(set(feats_a.columns) | set(feats_b.columns))
    rows_a = pd.concat([design, feats_a.reindex(columns=columns, fill_value=0.0)], axis=1)
    rows_b = pd.concat([design, feats_b.reindex(columns=columns, fill_value=0.0)], axis=1)
    x = np.vstack([rows_a.to_numpy(dtype=float), rows_b.to_numpy(dtype=float)])
    y = np.repeat([0, 1], len(ids))
    model = DecisionTreeClassifier(max_depth=max_depth, random_state=seed)
    cv = GroupKFold(n_splits=n_splits)
    if clusters is None:
        groups = np.tile(np.arange(len(ids)), 2)
        accuracy, permuted, p_value = _permutation_test(_FoldAccuracy(model, x, groups, cv), y,
                                                        _within_groups(y, groups, n_permutations, seed),
                                                        n_permutations, n_jobs)
    else:
        units = np.asarray(clusters)
        if units.shape != (len(ids),):
            raise ValueError(f"clusters must have one code per context, shape ({len(ids)},), got {units.shape}")
        units = np.unique(units, return_inverse=True)[1].reshape(-1)
        if units.max() + 1 < n_splits:
            raise ValueError(f"too few clusters for {n_splits}-fold cross-validation: {units.max() + 1} "
                             f"(need at least {n_splits})")
        groups = np.tile(units, 2)
        accuracy, permuted, p_value = _permutation_test(_FoldAccuracy(model, x, groups, cv), y,
                                                        _by_cluster(units, n_permutations, seed),
                                                        n_permutations, n_jobs)
    proba = cross_val_predict(model, x, y, groups=groups, cv=cv, method="predict_proba")
    true_p = proba[np.arange(len(y)), y]
    confidence = (true_p[: len(ids)] + true_p[len(ids):]) / 2.0

    def label(responses: Mapping[str, Any], context_id: str) -> str:
        act = _action(responses[context_id], context_id)
        return "(none)" if act is None else str(act)

    contexts = pd.DataFrame(
        {
            "confidence": confidence,
            "action_a": [label(responses_a, i) for i in ids],
            "action_b": [label(responses_b, i) for i in ids],
        },
        index=pd.Index(ids, name="context_id", dtype=object),
    )
    contexts = contexts.assign(_id=contexts.index.astype(str)).sort_values(
        ["confidence", "_id"], ascending=[False, True]
    ).drop(columns="_id")
    n_units = len(ids) if clusters is None else int(groups.max()) + 1
    return TwoSampleResult(float(accuracy), float(p_value), np.asarray(permuted), len(ids), n_splits, contexts, n_units)
