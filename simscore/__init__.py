"""simscore: how similar is the behaviour of two dialogue policies?

Run two policies deterministically on one fixed set of dialogue contexts and score every
pair of responses with the eight measures of Ultes & Maier (SIGDIAL 2020): total match,
dialogue-act match, concept error and concept match rates on the actions; USE cosine and
angular similarity, BLEU-4 and BERTScore on the texts.

>>> from simscore import Act, Response, Responses, compare
>>> a = Responses({"c1": Response(Act.parse("request(food)"), "What food would you like?")})
>>> b = Responses({"c1": Response(Act.parse("request(area)"), "Which area?")})
>>> compare(a, b, measures=["tmr", "dmr"]).summary["mean"].tolist()
[0.0, 1.0]

Plain lists of act strings or texts: :func:`score` (``score(predictions, references)``).

>>> from simscore import score
>>> score(["request(food)", "hello()"], ["request(area)", "hello()"]).means
{'tmr': 0.5, 'dmr': 1.0, 'cer': 0.75, 'cmr': 0.6}
>>> print(score(["request(food)", "hello()"], ["request(area)", "hello()"], measures="tmr"))
measure      mean  95% CI             unit       n
tmr        0.5000  [0.0000, 1.0000]   items      2

Integrations with RL libraries (stable-baselines3, Gymnasium) live in
:mod:`simscore.integrations` and are not imported here. ``import simscore`` itself loads
nothing but the version: each name below loads its module when it is first used (pandas, for
one, comes with :func:`compare`), so a command or a program pays only for what it uses.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from simscore._version import __version__

if TYPE_CHECKING:
    from simscore.acts import NONE_VALUE, Act, Item
    from simscore.comparison import Comparison, compare
    from simscore.measures import ALL_MEASURES, DEFAULT_MEASURES, MEASURES, Measure, get_measure, resolve_measures
    from simscore.monitor import BehaviourMonitor, similarity
    from simscore.policy import BatchPolicy, Policy, Realiser, run_policy
    from simscore.responses import Response, Responses
    from simscore.samples import SampledResponses
    from simscore.scoring import MeasureScore, ScoreResult, score
    from simscore.stats import bootstrap_ci

#: Each name of the face -> the module that defines it, imported on first use (PEP 562).
_LAZY: dict[str, str] = {
    "NONE_VALUE": "simscore.acts",
    "Act": "simscore.acts",
    "Item": "simscore.acts",
    "Comparison": "simscore.comparison",
    "compare": "simscore.comparison",
    "ALL_MEASURES": "simscore.measures",
    "DEFAULT_MEASURES": "simscore.measures",
    "MEASURES": "simscore.measures",
    "Measure": "simscore.measures",
    "get_measure": "simscore.measures",
    "resolve_measures": "simscore.measures",
    "BehaviourMonitor": "simscore.monitor",
    "similarity": "simscore.monitor",
    "BatchPolicy": "simscore.policy",
    "Policy": "simscore.policy",
    "Realiser": "simscore.policy",
    "run_policy": "simscore.policy",
    "Response": "simscore.responses",
    "Responses": "simscore.responses",
    "SampledResponses": "simscore.samples",
    "MeasureScore": "simscore.scoring",
    "ScoreResult": "simscore.scoring",
    "score": "simscore.scoring",
    "bootstrap_ci": "simscore.stats",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'simscore' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # found directly from now on
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "__version__",
    "Act",
    "Item",
    "NONE_VALUE",
    "Response",
    "Responses",
    "SampledResponses",
    "compare",
    "Comparison",
    "score",
    "ScoreResult",
    "MeasureScore",
    "DEFAULT_MEASURES",
    "ALL_MEASURES",
    "resolve_measures",
    "bootstrap_ci",
    "MEASURES",
    "Measure",
    "get_measure",
    "Policy",
    "BatchPolicy",
    "Realiser",
    "run_policy",
    "similarity",
    "BehaviourMonitor",
]
