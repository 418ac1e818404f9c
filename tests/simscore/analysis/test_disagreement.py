"""Where and why two policies differ (simscore.analysis.disagreement)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from simscore.acts import Act
from simscore.analysis.disagreement import (
    disagreement,
    disagreement_by,
    disagreement_probe,
    disagrees,
    response_features,
    separating_contexts,
    two_sample_test,
)
from simscore.errors import ContextMismatchError, UnknownMeasureError
from simscore.responses import Response, Responses

pytest.importorskip("sklearn")


def _scores(values: dict[str, list[float]], ids: list[str]) -> pd.DataFrame:
    return pd.DataFrame(values, index=pd.Index(ids, name="context_id"))


# -- disagreement_by ---------------------------------------------------------------------------


def test_disagreement_by_golden_numbers():
    # two comparisons stacked: ids repeat
    scores = _scores({"tmr": [1.0, 0.0, 0.0, 1.0, 1.0, np.nan]}, ["a", "b", "c", "a", "b", "c"])
    groups = pd.DataFrame(
        {"turn": pd.Categorical(["1", "0", "1"], categories=["1", "0", "9"], ordered=True), "method": ["y", "x", "y"]},
        index=["a", "b", "c"],
    )
    table = disagreement_by(scores, groups)
    assert list(table.columns) == ["grouping", "group", "disagreement", "count", "share", "contexts"]
    rows = {(r.grouping, r.group): (r.disagreement, r.count, r.share, r.contexts) for r in table.itertuples()}
    # 5 scored pairs (the NaN is left out); turn 0 = b: scores 0, 1 -> disagreement 0.5
    assert rows[("turn", "0")] == (0.5, 2, 0.4, 1)
    # turn 1 = a, c: scores 1, 0, 1 -> disagreement 1/3
    assert rows[("turn", "1")] == (pytest.approx(1 / 3), 3, 0.6, 2)
    # method x = b: scores 0, 1; method y = a, c: scores 1, 0, 1
    assert rows[("method", "x")] == (0.5, 2, 0.4, 1)
    assert rows[("method", "y")] == (pytest.approx(1 / 3), 3, 0.6, 2)
    assert table["grouping"].tolist() == ["turn", "turn", "method", "method"]
    # categorical order kept (not alphabetical), empty category 9 left out; else sorted
    assert table["group"].tolist() == ["1", "0", "x", "y"]
    for _, part in table.groupby("grouping"):
        assert part["share"].sum() == pytest.approx(1.0)


def test_disagreement_by_uses_the_measure_direction():
    scores = _scores({"cmr": [0.25, 0.75]}, ["a", "b"])
    table = disagreement_by(scores, pd.DataFrame({"g": ["k", "k"]}, index=["a", "b"]), measure="cmr")
    assert table.loc[0, "disagreement"] == 0.5
    assert disagreement(np.array([0.2]), "cer")[0] == pytest.approx(0.8)  # CER is scored as a similarity


def test_disagreement_by_errors():
    scores = _scores({"tmr": [1.0, 0.0]}, ["a", "zz"])
    groups = pd.DataFrame({"g": ["k"]}, index=["a"])
    with pytest.raises(ContextMismatchError, match="groups has no row for 1 context id.*'zz'"):
        disagreement_by(scores, groups)
    with pytest.raises(UnknownMeasureError, match="unknown measure 'tmrr'"):
        disagreement_by(scores, groups, measure="tmrr")
    with pytest.raises(ValueError, match="no score column for 'dmr'"):
        disagreement_by(scores, groups, measure="dmr")
    with pytest.raises(ValueError, match="at least one grouping column"):
        disagreement_by(scores, pd.DataFrame(index=["a", "zz"]))
    with pytest.raises(ValueError, match="context ids appear twice: 'a'"):
        disagreement_by(scores, pd.DataFrame({"g": [1, 2, 3]}, index=["a", "a", "zz"]))


# -- separating_contexts -----------------------------------------------------------------------


def test_separating_contexts_golden_numbers():
    ids = ["a", "b", "c"] * 2
    within = _scores({"tmr": [1.0, 1.0, 0.0, 1.0, 0.0, 0.0]}, ids)
    across = _scores({"tmr": [0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 1.0]}, ["a", "b", "c"] * 3)
    out = separating_contexts(within, across)
    assert list(out.columns) == ["within_mean", "within_count", "across_mean", "across_count", "separation"]
    assert out.index.tolist() == ["a", "b", "c"]
    assert out.loc["a"].tolist() == [1.0, 2, 0.0, 3, 1.0]  # separates perfectly
    assert out.loc["b", "separation"] == pytest.approx(0.5 - 2 / 3)
    assert out.loc["c", "separation"] == -1.0
    assert separating_contexts(within, across, top=1).index.tolist() == ["a"]


def test_separating_contexts_ties_by_id_and_mismatch():
    within = _scores({"tmr": [1.0, 1.0]}, ["b", "a"])
    across = _scores({"tmr": [0.0, 0.0]}, ["a", "b"])
    assert separating_contexts(within, across).index.tolist() == ["a", "b"]
    with pytest.raises(ContextMismatchError, match="across_scores has no row for 1 context id.*'b'"):
        separating_contexts(within, _scores({"tmr": [0.0]}, ["a"]))
    with pytest.raises(ContextMismatchError, match="within_scores has no row for 1 context id.*'q'"):
        separating_contexts(within, _scores({"tmr": [0.0, 0.0, 1.0]}, ["a", "b", "q"]))
    with pytest.raises(ValueError, match="within: no scored context for 'tmr'"):
        separating_contexts(_scores({"tmr": [np.nan]}, ["a"]), across)


# -- disagreement_probe ------------------------------------------------------------------------


def _probe_data(n: int = 40) -> tuple[pd.DataFrame, pd.Series]:
    ids = [f"c{i:02d}" for i in range(n)]
    x = (np.arange(n) % 4) / 3  # 0, 1/3, 2/3, 1, 0, ...
    noise = (np.arange(n) * 7 % 5) / 5
    features = pd.DataFrame({"area_top_p": x, "noise": noise, "source": ["col"] * n}, index=ids)
    # disagree exactly where area_top_p is 1 (10 of 40 contexts)
    label = pd.Series(x == 1.0, index=ids)
    return features, label


def test_probe_finds_the_threshold():
    features, label = _probe_data()
    result = disagreement_probe(features, label, seed=0)
    assert (result.n_train, result.n_test) == (28, 12)
    assert result.disagreement_rate == 0.25
    assert result.accuracy == 1.0
    assert result.baseline == 0.75  # stratified: 9 of the 12 held-out contexts agree
    assert result.importances.index[0] == "area_top_p"
    assert result.importances.loc["area_top_p", "importance"] > 0.2
    assert result.importances.loc["noise", "importance"] == 0.0
    assert "area_top_p" in result.rules and result.model.get_depth() <= 3
    # text columns are one-hot; an identifier-like column (a value per row) is left out
    assert "source=col" in result.importances.index


def test_probe_leaves_out_identifier_like_text_columns():
    features, label = _probe_data()
    features["grid_cell"] = [f"cell{i}" for i in range(len(features))]
    result = disagreement_probe(features, label, seed=0)
    assert not any(name.startswith("grid_cell") for name in result.importances.index)
    assert result.accuracy == 1.0


def test_probe_is_deterministic_and_leaves_global_rng_alone():
    features, label = _probe_data()
    label = label ^ pd.Series(np.arange(40) % 6 == 0, index=label.index)  # some noise
    state = np.random.get_state()
    a = disagreement_probe(features, label, seed=3)
    b = disagreement_probe(features, label, seed=3)
    after = np.random.get_state()
    assert state[0] == after[0] and np.array_equal(state[1], after[1]) and state[2:] == after[2:]
    assert a.accuracy == b.accuracy and a.baseline == b.baseline and a.rules == b.rules
    pd.testing.assert_frame_equal(a.importances, b.importances)


def test_probe_errors():
    features, label = _probe_data()
    with pytest.raises(ContextMismatchError, match="features has no row for 1 context id.*'zz'"):
        disagreement_probe(features, pd.concat([label, pd.Series([True], index=["zz"])]), seed=0)
    with pytest.raises(ValueError, match="one class only \\(agree on all 40 contexts\\)"):
        disagreement_probe(features, label & False, seed=0)
    few = label.copy()
    few[:] = False
    few.iloc[0] = True
    with pytest.raises(ValueError, match="too few contexts for a stratified split: 39 agree, 1 disagree"):
        disagreement_probe(features, few, seed=0)
    with pytest.raises(ValueError, match="max_depth must be 1, 2 or 3"):
        disagreement_probe(features, label, seed=0, max_depth=5)


def test_disagrees_from_scores():
    assert disagrees(pd.Series([1.0, 0.0, np.nan, 1.0], index=list("abcd"))).tolist() == [False, True, False]


# -- two_sample_test ---------------------------------------------------------------------------


def _contexts(n: int) -> pd.DataFrame:
    ids = [f"c{i:02d}" for i in range(n)]
    return pd.DataFrame({"area_top_p": (np.arange(n) % 5) / 4, "turn_index": np.arange(n) % 3}, index=ids)


def test_identical_policies_are_not_distinguishable():
    features = _contexts(20)
    acts = {i: "request(area)" if features.loc[i, "area_top_p"] < 0.5 else 'confirm(area="north")' for i in features.index}
    result = two_sample_test(features, acts, dict(acts), seed=0, n_permutations=19, n_splits=4)
    # two identical rows per context: the tree can only guess, held-out accuracy is exactly one half
    assert result.accuracy == 0.5
    assert result.p_value == 1.0  # every permutation is just as good
    assert result.n_contexts == 20 and len(result.permuted) == 19
    assert (result.contexts["confidence"] == 0.5).all()


def test_different_policies_are_distinguishable():
    features = _contexts(20)
    a = Responses({i: Response(Act.parse("request(area)")) for i in features.index}, policy="a")
    b = {i: Act.parse("hello()") for i in features.index}
    result = two_sample_test(features, a, b, seed=0, n_permutations=19, n_splits=4)
    assert result.accuracy == 1.0
    assert result.p_value == pytest.approx(1 / 20)  # the smallest p with 19 permutations
    assert result.contexts["action_a"].iloc[0] == "request(area)" and result.contexts["action_b"].iloc[0] == "hello()"


def test_two_sample_ranks_the_differing_contexts_first_and_is_deterministic():
    features = _contexts(30)
    a = {i: "request(area)" for i in features.index}
    b = {i: ("hello()" if features.loc[i, "area_top_p"] == 1.0 else "request(area)") for i in features.index}
    state = np.random.get_state()
    first = two_sample_test(features, a, b, seed=1, n_permutations=9, n_splits=3)
    second = two_sample_test(features, a, b, seed=1, n_permutations=9, n_splits=3)
    assert np.array_equal(np.random.get_state()[1], state[1])
    assert first.accuracy == second.accuracy and first.p_value == second.p_value
    assert np.array_equal(first.permuted, second.permuted)
    pd.testing.assert_frame_equal(first.contexts, second.contexts)
    differing = {i for i in features.index if a[i] != b[i]}
    assert set(first.contexts.index[: len(differing)]) == differing
    assert (first.contexts.loc[sorted(differing), "confidence"] == 1.0).all()
    # only the 6 differing contexts of 30 can be told apart: accuracy (6 + 24/2) / 30 = 0.6
    assert first.accuracy == pytest.approx(0.6)


def test_two_sample_errors():
    features = _contexts(4)
    acts = {i: "hello()" for i in features.index}
    with pytest.raises(ValueError, match="too few contexts for 5-fold cross-validation: 4 \\(need at least 5\\)"):
        two_sample_test(features, acts, acts, seed=0, n_permutations=5)
    with pytest.raises(ContextMismatchError, match="responses_b has no row for 1 context id.*'c03'"):
        two_sample_test(features, acts, {i: "hello()" for i in list(features.index)[:3]}, seed=0, n_splits=2)
    with pytest.raises(ContextMismatchError, match="features has no row for 1 context id.*'extra'"):
        two_sample_test(features, {**acts, "extra": "hello()"}, acts, seed=0, n_splits=2)
    with pytest.raises(ValueError, match="n_permutations must be an int >= 1"):
        two_sample_test(features, acts, acts, seed=0, n_permutations=0, n_splits=2)
    with pytest.raises(TypeError, match="expected a Response, an Act, an act string or None, got int"):
        two_sample_test(features, {i: 3 for i in features.index}, acts, seed=0, n_splits=2)


def test_response_features():
    f = response_features({"x": 'inform(name="a",food!=thai,food=indian)', "y": None}, ["x", "y"])
    assert f.loc["x"].to_dict() == {
        "intent=(none)": 0.0, "intent=inform": 1.0, "slot=food": 2.0, "slot=name": 1.0, "n_items": 3.0,
        "n_negated": 1.0,
    }
    assert f.loc["y", "intent=(none)"] == 1.0 and f.loc["y", "n_items"] == 0.0


def test_two_sample_numbers_do_not_depend_on_n_jobs():
    features = _contexts(12)
    a = {i: "request(area)" for i in features.index}
    b = {i: ("hello()" if features.loc[i, "turn_index"] == 0 else "request(area)") for i in features.index}
    one = two_sample_test(features, a, b, seed=5, n_permutations=8, n_splits=3)
    two = two_sample_test(features, a, b, seed=5, n_permutations=8, n_splits=3, n_jobs=2)
    assert one.p_value == two.p_value and np.array_equal(one.permuted, two.permuted)


def test_two_sample_with_clusters_keeps_a_cluster_together():
    features = _contexts(30)
    a = {i: "request(area)" for i in features.index}
    b = {i: ("hello()" if features.loc[i, "area_top_p"] == 1.0 else "request(area)") for i in features.index}
    dialogues = np.arange(30) // 3  # 10 clusters of 3 contexts
    clustered = two_sample_test(features, a, b, seed=1, n_permutations=9, n_splits=3, clusters=dialogues)
    # 6 of 30 contexts can be told apart: 0.6 over all rows; the mean over folds of 24, 18 and 18 rows
    assert clustered.accuracy == pytest.approx(0.6, abs=0.005) and clustered.n_units == 10
    assert two_sample_test(features, a, b, seed=1, n_permutations=9, n_splits=3).n_units == 30
    # a permutation swaps A and B in all three contexts of a dialogue at once: the permuted label rows
    # are reproducible, and the numbers do not depend on the threads
    again = two_sample_test(features, a, b, seed=1, n_permutations=9, n_splits=3, clusters=dialogues, n_jobs=2)
    assert np.array_equal(clustered.permuted, again.permuted) and clustered.p_value == again.p_value
    assert clustered.p_value == (np.sum(clustered.permuted >= clustered.accuracy) + 1) / 10
    # identical policies: every row pair is the same, accuracy 1/2 and no permutation does worse
    same = two_sample_test(features, a, a, seed=1, n_permutations=9, n_splits=3, clusters=dialogues)
    assert same.accuracy == 0.5 and same.p_value == 1.0
    with pytest.raises(ValueError, match=r"^too few clusters for 5-fold cross-validation: 4 \(need at least 5\)$"):
        two_sample_test(features, a, b, seed=0, n_permutations=5, clusters=np.arange(30) % 4)
    with pytest.raises(ValueError, match=r"clusters must have one code per context, shape \(30,\), got \(3,\)"):
        two_sample_test(features, a, b, seed=0, n_permutations=5, clusters=np.arange(3))


@pytest.mark.parametrize("depth", [None, 6, 2])
def test_two_sample_numbers_are_sklearn_s_own(depth):
    """The accuracies and p-value equal, bit for bit, those of sklearn's permutation_test_score (contexts
    as units: labels shuffled within each context) and cross_val_score (clusters: a coin per cluster)."""
    import joblib
    from sklearn.base import clone
    from sklearn.model_selection import GroupKFold, cross_val_score, permutation_test_score
    from sklearn.tree import DecisionTreeClassifier

    from simscore.analysis.disagreement import _design

    rng = np.random.default_rng(depth or 0)
    features = _contexts(60)
    a = {i: str(rng.choice(["request(area)", "hello()", 'confirm(area="north")'])) for i in features.index}
    b = {i: (a[i] if rng.random() < 0.5 else "request(food)") for i in features.index}
    # the rows as two_sample_test builds them: context features, then the union of the action features
    actions = [response_features(r, list(features.index)) for r in (a, b)]
    columns = sorted(set(actions[0].columns) | set(actions[1].columns))
    x = np.vstack([pd.concat([_design(features), f.reindex(columns=columns, fill_value=0.0)], axis=1).to_numpy(dtype=float)
                   for f in actions])
    y = np.repeat([0, 1], 60)
    model = DecisionTreeClassifier(max_depth=depth, random_state=3)
    with joblib.parallel_config(backend="threading"):
        accuracy, permuted, p_value = permutation_test_score(
            model, x, y, groups=np.tile(np.arange(60), 2), cv=GroupKFold(5), n_permutations=15, random_state=3,
            scoring="accuracy")
    ours = two_sample_test(features, a, b, seed=3, n_permutations=15, max_depth=depth)
    assert (ours.accuracy, ours.p_value) == (accuracy, p_value) and np.array_equal(ours.permuted, permuted)
    units = np.arange(60) // 4
    flips = np.random.default_rng(3).integers(0, 2, size=(15, 15)).astype(bool)

    def sklearn_accuracy(flip):
        swapped = flip[units].astype(np.int64)
        labels = np.concatenate([swapped, 1 - swapped])
        return cross_val_score(clone(model), x, labels, groups=np.tile(units, 2), cv=GroupKFold(5),
                               scoring="accuracy").mean()

    clustered = two_sample_test(features, a, b, seed=3, n_permutations=15, max_depth=depth, clusters=units)
    assert clustered.accuracy == sklearn_accuracy(np.zeros(15, dtype=bool))
    assert np.array_equal(clustered.permuted, [sklearn_accuracy(flip) for flip in flips])
