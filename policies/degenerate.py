"""Degenerate reference policies: trivial strategies that show whether a measure can be fooled.

Each class answers a context with a :class:`simscore.responses.Response` (act and text), like
:class:`~policies.sim.simulation.SummaryPolicyAdapter`, so :func:`simscore.policy.run_policy` runs
it on any context set. None of them looks at what a good answer would be:

* :class:`ConstantPolicy` always says the same thing (default ``request(food)``);
* :class:`EchoPolicy` parrots the user: it confirms the belief's top values and, when the
  context carries a dialogue history, repeats its last text;
* :class:`CyclicPolicy` walks through a fixed pattern of acts by turn index (or by a stable
  hash of the context id when there is no turn index);
* :class:`UniformActPolicy` picks uniformly from a fixed set of acts, seeded and keyed by
  the context id, so the choice does not depend on the order contexts are answered in.

All are deterministic: the same inputs and seed give the same response bit for bit, in every
process (digests are BLAKE2b, never Python's salted ``hash()``), and no global random state is
read or changed. Texts come from the template NLG (:class:`~policies.sim.nlg.TemplateNLG`) so text
measures see natural sentences.

Examples
--------
>>> from contexts.belief import BeliefState
>>> from contexts.context import Context
>>> c = Context("c1", BeliefState(slots={"food": {"thai": 0.9}}), {"source": "gen"})
>>> str(ConstantPolicy().respond(c).action), str(EchoPolicy().respond(c).action)
('request(food)', 'confirm(food=thai)')
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from policies.sim.nlg import TemplateNLG
from simscore.acts import Act
from simscore.checks import check_int, check_probability
from simscore.errors import ActParseError
from simscore.responses import Response

__all__ = [
    "ConstantPolicy",
    "EchoPolicy",
    "CyclicPolicy",
    "UniformActPolicy",
    "DEFAULT_CYCLE",
    "DEFAULT_UNIFORM_ACTS",
    "degenerate_policies",
]

#: The default pattern of :class:`CyclicPolicy`.
DEFAULT_CYCLE: tuple[str, ...] = ("request(area)", "request(food)", "request(pricerange)", "reqmore()")
#: The default act set of :class:`UniformActPolicy`: the restaurant domain's acts that need
#: no venue or value (hello, bye, reqmore, repeat, a request per system-requestable slot).
DEFAULT_UNIFORM_ACTS: tuple[str, ...] = (
    "hello()",
    "bye()",
    "reqmore()",
    "repeat()",
    "request(area)",
    "request(food)",
    "request(pricerange)",
)


def _as_act(act: Any, what: str) -> Act:
    """An :class:`Act` from an Act or a PyDial act string (TypeError/ValueError otherwise)."""
    if isinstance(act, Act):
        return act
    if isinstance(act, str):
        try:
            return Act.parse(act)
        except ActParseError as exc:
            raise ValueError(f"{what}: {exc}") from None
    raise TypeError(f"{what} must be a simscore.Act or an act string, got {type(act).__name__}")


def _as_acts(acts: Any, what: str) -> tuple[Act, ...]:
    if isinstance(acts, (str, Act)) or not isinstance(acts, Sequence):
        raise TypeError(f"{what} must be a sequence of acts, got {type(acts).__name__}")
    out = tuple(_as_act(a, f"{what}[{i}]") for i, a in enumerate(acts))
    if not out:
        raise ValueError(f"{what} must not be empty")
    return out


def _context_id(context: Any) -> str:
    context_id = getattr(context, "id", None)
    if not isinstance(context_id, str) or not context_id:
        raise TypeError(f"context must have a non-empty string 'id', got {context!r}")
    return context_id


def _digest(*parts: str) -> int:
    """A stable 64-bit integer from strings (BLAKE2b; the same in every process)."""
    data = "\x1f".join(parts).encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big")


def _belief(context: Any) -> Any:
    return getattr(context, "belief", None)


def _realise(nlg: TemplateNLG, act: Act, context: Any) -> str:
    """The NLG text of ``act`` keyed by the context's belief (or its id when it has none)."""
    belief = _belief(context)
    if belief is not None and hasattr(belief, "key"):
        return nlg.realise(act, belief)
    return nlg.realise(act, context_key=_context_id(context))


class ConstantPolicy:
    """Always the same act and the same text, whatever the context.

    Parameters
    ----------
    act : Act or str
        The act (default ``request(food)``).
    text : str, optional
        The text; default: the template NLG's wording of ``act`` (one fixed sentence).
    name : str
        Policy name for reports.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> p = ConstantPolicy()
    >>> p.respond(SimpleNamespace(id="x")) == p.respond(SimpleNamespace(id="y")), p.text.endswith("?")
    (True, True)
    >>> ConstantPolicy("hello()", text="Hi.").respond(SimpleNamespace(id="y"))
    Response(action=Act.parse('hello()'), text='Hi.')
    """

    def __init__(self, act: Act | str = "request(food)", *, text: str | None = None, name: str = "constant") -> None:
        self.act = _as_act(act, "act")
        if text is not None and not isinstance(text, str):
            raise TypeError(f"text must be a str or None, got {type(text).__name__}")
        self.name = str(name)
        self.text = TemplateNLG(self.name).realise(self.act, context_key="constant") if text is None else text
        self._response = Response(self.act, self.text)
        self.provenance = {"policy": "constant", "act": str(self.act), "text": self.text}

    def __repr__(self) -> str:
        return f"ConstantPolicy({str(self.act)!r})"

    def respond(self, context: Any) -> Response:
        """The constant response (``context`` is only checked for an id)."""
        _context_id(context)
        return self._response


class EchoPolicy:
    """Parrot the user: confirm what the belief holds, repeat the last thing said.

    The act is ``confirm(slot=value, ...)`` of every informable slot whose top value (other
    than ``none``) has a probability of at least ``min_prob`` (a generated context has no
    history, so the belief's top values stand for what the user said); ``repeat()`` when no
    slot has one. The text is the last entry of the context's ``history`` metadata (in
    collected contexts the user's utterance of that turn, see :mod:`contexts.collect`) when
    ``echo_text`` and the history is not empty, else the NLG wording of the act.

    Parameters
    ----------
    min_prob : float
        Smallest top-value probability that is echoed (default: any value above 0).
    echo_text : bool
        Repeat the history's last text when there is one (default True).
    name : str
        Policy name for reports and the NLG instance.

    Examples
    --------
    >>> from contexts.belief import BeliefState
    >>> from contexts.context import Context
    >>> b = BeliefState(slots={"area": {"north": 0.6}, "food": {"thai": 0.2}})
    >>> str(EchoPolicy().respond(Context("c", b, {"source": "gen"})).action)
    'confirm(area=north,food=thai)'
    >>> str(EchoPolicy(min_prob=0.5).respond(Context("c", b, {"source": "gen"})).action)
    'confirm(area=north)'
    >>> EchoPolicy().respond(Context("c", b, {"source": "col", "history": ("Hi.", "Thai food.")})).text
    'Thai food.'
    """

    def __init__(self, *, min_prob: float = 0.0, echo_text: bool = True, name: str = "echo") -> None:
        self.min_prob = check_probability("min_prob", min_prob, error=ValueError)
        self.echo_text = bool(echo_text)
        self.name = str(name)
        self.nlg = TemplateNLG(self.name)
        self.provenance = {"policy": "echo", "min_prob": self.min_prob, "echo_text": self.echo_text}

    def __repr__(self) -> str:
        return f"EchoPolicy(min_prob={self.min_prob}, echo_text={self.echo_text})"

    def act(self, context: Any) -> Act:
        """The echoed act: ``confirm`` of the belief's top values, or ``repeat()``."""
        belief = _belief(context)
        if belief is None or not hasattr(belief, "top"):
            raise TypeError(f"context {_context_id(context)!r} has no BeliefState 'belief'")
        items = []
        for slot in belief.slots:
            value, p = belief.top(slot)
            if value != "none" and p > 0.0 and p >= self.min_prob:
                items.append((slot, value))
        return Act("confirm", items) if items else Act("repeat")

    def respond(self, context: Any) -> Response:
        """Confirm the belief's top values; echo the history's last text when there is one."""
        act = self.act(context)
        metadata = getattr(context, "metadata", None) or {}
        history = metadata.get("history") or ()
        if self.echo_text and history and isinstance(history[-1], str) and history[-1].strip():
            return Response(act, history[-1])
        return Response(act, _realise(self.nlg, act, context))


class CyclicPolicy:
    """A fixed pattern of acts, one per turn: ``pattern[turn_index % len(pattern)]``.

    Contexts without a turn index (generated ones) use a stable hash of the context id
    instead, so every context still gets one fixed element of the pattern.

    Parameters
    ----------
    pattern : sequence of Act or str
        The acts in order (default :data:`DEFAULT_CYCLE`).
    by : {"auto", "turn", "hash"}
        ``"turn"``: the turn index (an error for a context without one); ``"hash"``: the
        context id's hash; ``"auto"`` (default): the turn index when there is one.
    name : str
        Policy name for reports and the NLG instance.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> p = CyclicPolicy(["hello()", "bye()"], by="turn")
    >>> [str(p.respond(SimpleNamespace(id=f"c{t}", metadata={"turn_index": t})).action) for t in range(3)]
    ['hello()', 'bye()', 'hello()']
    """

    def __init__(self, pattern: Sequence[Act | str] = DEFAULT_CYCLE, *, by: str = "auto", name: str = "cyclic") -> None:
        self.pattern = _as_acts(pattern, "pattern")
        if by not in ("auto", "turn", "hash"):
            raise ValueError(f"by must be 'auto', 'turn' or 'hash', got {by!r}")
        self.by = by
        self.name = str(name)
        self.nlg = TemplateNLG(self.name)
        self.provenance = {"policy": "cyclic", "pattern": [str(a) for a in self.pattern], "by": by}

    def __repr__(self) -> str:
        return f"CyclicPolicy({[str(a) for a in self.pattern]!r}, by={self.by!r})"

    @property
    def period(self) -> int:
        """The length of the pattern."""
        return len(self.pattern)

    def index(self, context: Any) -> int:
        """The position in the pattern for ``context``."""
        context_id = _context_id(context)
        metadata = getattr(context, "metadata", None) or {}
        turn = metadata.get("turn_index")
        if self.by == "hash" or (self.by == "auto" and turn is None):
            return _digest("cyclic", context_id) % self.period
        try:
            turn = check_int(f"context {context_id!r}: turn_index", turn, minimum=0, error=ValueError)
        except ValueError as exc:
            raise ValueError(f"{exc}; use by='hash'") from None
        return turn % self.period

    def respond(self, context: Any) -> Response:
        """The pattern's act at this context's position, worded by the NLG."""
        act = self.pattern[self.index(context)]
        return Response(act, _realise(self.nlg, act, context))


class UniformActPolicy:
    """Uniformly random acts from a fixed set: a chance-level reference.

    The draw for a context is a function of the seed and the context id only
    (``numpy.random.default_rng([seed, digest(id)])``), so it does not depend on which
    contexts were answered before, nor on their order; the global random state is never used.

    Parameters
    ----------
    acts : sequence of Act or str
        The valid acts to choose from (default :data:`DEFAULT_UNIFORM_ACTS`; duplicates are
        an error, as they would weight an act twice).
    seed : int or numpy.random.Generator
        A non-negative int, or a Generator from which one integer is drawn once, here.
    name : str
        Policy name for reports and the NLG instance.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> c = SimpleNamespace(id="c1")
    >>> UniformActPolicy(seed=1).respond(c) == UniformActPolicy(seed=1).respond(c)
    True
    >>> str(UniformActPolicy(["bye()"]).respond(c).action)
    'bye()'
    """

    def __init__(
        self,
        acts: Sequence[Act | str] = DEFAULT_UNIFORM_ACTS,
        *,
        seed: int | np.random.Generator = 0,
        name: str = "uniform",
    ) -> None:
        self.acts = _as_acts(acts, "acts")
        if len(set(self.acts)) != len(self.acts):
            raise ValueError(f"acts contains an act twice: {', '.join(map(str, self.acts))}")
        if isinstance(seed, np.random.Generator):
            seed = int(seed.integers(2**63))
        self.seed = check_int("seed", seed, minimum=0, error=ValueError)
        self.name = str(name)
        self.nlg = TemplateNLG(self.name)
        self.provenance = {"policy": "uniform", "seed": self.seed, "acts": [str(a) for a in self.acts]}

    def __repr__(self) -> str:
        return f"UniformActPolicy(n_acts={len(self.acts)}, seed={self.seed})"

    def respond(self, context: Any) -> Response:
        """A uniformly drawn act for this context (same context id and seed, same act)."""
        rng = np.random.default_rng([self.seed, _digest("uniform", _context_id(context))])
        act = self.acts[int(rng.integers(len(self.acts)))]
        return Response(act, _realise(self.nlg, act, context))


def degenerate_policies(seed: int = 0) -> dict[str, Any]:
    """The four degenerate policies with their defaults, by name (the ``simscore diagnose`` set).

    >>> list(degenerate_policies())
    ['constant', 'echo', 'cyclic', 'uniform']
    """
    return {
        "constant": ConstantPolicy(),
        "echo": EchoPolicy(),
        "cyclic": CyclicPolicy(),
        "uniform": UniformActPolicy(seed=seed),
    }
