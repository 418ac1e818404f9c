"""The chance level of a comparison: how alike two policies' responses are when unrelated.

Two policies that both answer most contexts the same way (an agent that replies in words at
most turns, a restaurant system that mostly requests the area) agree often whatever they are
shown. :func:`shuffled_chance` says how often: it scores policy A's response to one context
against policy B's response to *another* context, over every such ordered pair (or a seeded
sample of them), with the same measures as the comparison. Each side keeps its own mix of
actions; only their link to the context is broken -- the measure's counterpart of the
expected agreement ``p_e`` of Cohen's κ. A comparison well above its chance level agrees
because the two policies decide alike, not because each says the same thing everywhere.

On collected contexts two contexts of one dialogue (one task) share what was said (the same
reservation, the same user): the pairs are then taken from different units of the
comparison's bootstrap (its clusters: dialogues, or tasks with ``--cluster task_id``), so that
B's response comes from another dialogue. The paper's chance level -- a seeded random policy
against a trained one (:func:`simscore.analysis.chance_level`) -- needs a random policy over
the action space; tool-calling agents have none, and this level needs none.

Examples
--------
>>> from simscore.comparison import compare
>>> from simscore.responses import Response, Responses
>>> from simscore.acts import Act
>>> def responses(acts, policy):
...     return Responses([(f"c{k}", Response(Act.parse(act))) for k, act in enumerate(acts)], policy=policy)
>>> a = responses(["reply()", "reply()", "get_user(id=u1)"], "A")
>>> b = responses(["reply()", "get_user(id=u2)", "get_user(id=u1)"], "B")
>>> from simscore.stats import Bootstrap
>>> comparison = compare(a, b, ["tmr", "dmr"], bootstrap=Bootstrap(n_resamples=0))
>>> comparison.mean("tmr"), comparison.mean("dmr")
(0.6666666666666666, 0.6666666666666666)
>>> chance = shuffled_chance(comparison, a, b, ["tmr", "dmr"])  # 6 pairs; TMR: reply-reply; DMR: also get_user-get_user
>>> chance.means, chance.pairs
({'tmr': 0.16666666666666666, 'dmr': 0.3333333333333333}, 6)
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from simscore.checks import check_int, check_seed
from simscore.measures import DEFAULT_MEASURES, resolve_measures
from simscore.responses import Response, Responses
from simscore.stats import Bootstrap
from simscore.stats.clusters import cluster_codes

if TYPE_CHECKING:
    from simscore.comparison import Comparison
    from simscore.measures.base import Measure

__all__ = ["ChanceLevel", "shuffled_chance", "MAX_PAIRS"]

#: The most ordered pairs scored; beyond, a seeded sample of this many (without replacement).
MAX_PAIRS = 100_000


@dataclass(frozen=True)
class ChanceLevel:
    """What :func:`shuffled_chance` gives.

    Attributes
    ----------
    means : dict of str to float
        Per measure, the mean score of A's response to one context against B's to another
        (NaN when no pair is defined).
    pairs : int
        The ordered pairs scored.
    possible : int
        The ordered pairs there are (``pairs`` is smaller when they were sampled).
    apart : tuple of str
        The metadata columns whose values differ between a pair's two contexts (the
        comparison's clusters); empty: any two different contexts.
    """

    means: dict[str, float]
    pairs: int
    possible: int
    apart: tuple[str, ...]

    def format(self) -> str:
        """One line per measure, headed by how the pairs were drawn."""
        unit = f"another {', '.join(self.apart)}" if self.apart else "another context"
        if not self.pairs:
            within = f"all the contexts share one {', '.join(self.apart)}" if self.apart else "there is one context"
            return f"chance level: undefined, no pair to score ({within}; it needs two contexts that differ)"
        drawn = f"{self.pairs:,} pairs" if self.pairs == self.possible else f"{self.pairs:,} of {self.possible:,} pairs, sampled"
        lines = [f"chance level: A's response vs B's response to {unit} ({drawn})"]
        lines += [f"{name:<9} {value:.4f}" if not math.isnan(value) else f"{name:<9} undefined (on no pair)"
                  for name, value in self.means.items()]
        return "\n".join(lines)


def shuffled_chance(
    comparison: Comparison,
    a: Responses,
    b: Responses,
    measures: str | Measure | Iterable[str | Measure] = DEFAULT_MEASURES,
    *,
    max_pairs: int = MAX_PAIRS,
    seed: int = 0,
) -> ChanceLevel:
    """The comparison's chance level: A's response to context i against B's to context j ≠ i.

    Parameters
    ----------
    comparison : Comparison
        The comparison of ``a`` and ``b`` (its contexts, and its clusters: the pairs' two
        contexts lie in different clusters when it has any).
    a, b : Responses
        The responses compared (they cover the comparison's contexts).
    measures : names or Measure objects
        The comparison's measures, configured as there (e.g. ``TotalMatchRate(calls="unordered")``).
    max_pairs : int
        Score at most this many ordered pairs: a seeded sample of them beyond.
    seed : int
        The sample's seed (used only when there are more than ``max_pairs`` pairs).

    Returns
    -------
    ChanceLevel

    Raises
    ------
    ContextMismatchError
        ``a`` or ``b`` lacks a compared context.
    """
    from simscore.comparison import compare

    max_pairs = check_int("max_pairs", max_pairs, minimum=1)
    rng = np.random.default_rng(check_seed("seed", seed))
    ids = [str(i) for i in comparison.scores.index]
    apart = comparison.info.clusters
    codes = cluster_codes(comparison.scores, apart)
    if codes is None:
        codes = np.arange(len(ids))
    first, second = np.nonzero(codes[:, None] != codes[None, :])
    possible = len(first)
    if possible > max_pairs:
        keep = np.sort(rng.choice(possible, size=max_pairs, replace=False))
        first, second = first[keep], second[keep]
    left: list[tuple[str, Response]] = []
    right: list[tuple[str, Response]] = []
    for k, (i, j) in enumerate(zip(first.tolist(), second.tolist())):
        left.append((f"p{k}", a[ids[i]]))
        right.append((f"p{k}", b[ids[j]]))
    resolved = resolve_measures(measures)
    if not left:
        return ChanceLevel({m.name: float("nan") for m in resolved}, 0, 0, apart)
    pairs = compare(Responses(left, policy=a.policy), Responses(right, policy=b.policy), resolved,
                    bootstrap=Bootstrap(n_resamples=0), progress=False, clusters=None)
    return ChanceLevel({m.name: pairs.mean(m.name) for m in resolved}, len(left), possible, apart)
