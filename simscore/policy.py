"""The policy protocol and running a policy over a context set.

Any object with ``respond(context) -> Response`` is a policy; it must be deterministic
(same context, same response). :func:`run_policy` runs one over a context set and returns
:class:`~simscore.responses.Responses` with provenance. Context objects only need an ``id``
attribute here, so simscore stays independent of the ``contexts`` package.

A policy that answers many contexts faster at once (a neural network predicting on a batch
of observations) may also have ``respond_batch(contexts) -> sequence of Response``
(:class:`BatchPolicy`); :func:`run_policy` then calls it once instead of ``respond`` per
context. Both must give the same responses.

A policy that returns only acts has no text, and the text measures score it NaN. Its acts get
words from any :class:`Realiser` (``realise(act, belief) -> str``; the template NLG
``policies.TemplateNLG`` is one) through one argument:
``run_policy(policy, contexts, nlg=TemplateNLG("my-policy"))`` (``simscore respond ... --nlg
template`` on the command line). simscore itself imports no NLG: it only calls ``realise``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from simscore.acts import Act
from simscore.errors import ActParseError, InvalidResponseError
from simscore.responses import Response, Responses

__all__ = ["Policy", "BatchPolicy", "Realiser", "run_policy", "check_contexts"]


@runtime_checkable
class Policy(Protocol):
    """Anything that answers a context deterministically with a :class:`Response`."""

    def respond(self, context: Any) -> Response:
        """The response to one context."""
        ...


@runtime_checkable
class BatchPolicy(Policy, Protocol):
    """A policy that can also answer a whole list of contexts in one call.

    ``respond_batch(contexts)`` returns one :class:`Response` per context, in order, equal to
    what ``respond`` returns for each (:func:`run_policy` prefers it).
    """

    def respond_batch(self, contexts: Sequence[Any]) -> Sequence[Response]:
        """The responses to ``contexts``, in order."""
        ...


@runtime_checkable
class Realiser(Protocol):
    """Words an act: ``realise(act, belief) -> str`` (``policies.TemplateNLG`` is one).

    ``belief`` is the context's ``belief`` attribute (None for a context without one); a
    realiser may use it to vary the wording by context, and must be deterministic.
    """

    def realise(self, act: Act, belief: Any = None) -> str:
        """The text for ``act`` said in the context whose belief is ``belief``."""
        ...


def run_policy(
    policy: Policy,
    contexts: Iterable[Any],
    *,
    name: str | None = None,
    provenance: Mapping[str, Any] | None = None,
    progress: bool | None = None,
    nlg: Realiser | None = None,
) -> Responses:
    """Run ``policy`` on every context and collect the responses by context id.

    Parameters
    ----------
    policy : Policy
        Any object with ``respond(context) -> Response``; if it also has
        ``respond_batch(contexts)`` (:class:`BatchPolicy`), that is called once instead.
    contexts : iterable
        Objects with an ``id`` attribute (e.g. a ``contexts.ContextSet``).
    name : str, optional
        Policy name recorded in the result (default: ``policy.name`` or the class name).
    provenance : mapping, optional
        JSON-serialisable facts recorded with the responses (default: ``policy.provenance``
        if the policy has one).
    progress : bool or None
        Show a progress bar; None shows one for more than 5,000 contexts on a terminal.
    nlg : Realiser, optional
        Gives words to responses that have an action but no text (an act-only policy):
        their text becomes ``nlg.realise(action, context.belief)``; responses that have a text
        keep it. The provenance then records ``"nlg_texts": {"nlg": repr(nlg), "count": n}``
        (``n`` responses worded). Without it an act-only policy's texts stay None and the
        text measures score it NaN.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> class Echo:
    ...     def respond(self, context):
    ...         return Response(text=f"context {context.id}")
    >>> run_policy(Echo(), [SimpleNamespace(id="c1")])["c1"].text
    'context c1'

    An act-only policy gets its words from ``nlg`` (here a toy realiser; ``policies.TemplateNLG``
    in practice):

    >>> from simscore.acts import Act
    >>> class Ask:
    ...     def respond(self, context):
    ...         return Response(Act.parse("request(food)"))
    >>> class Words:
    ...     def realise(self, act, belief=None):
    ...         return f"I'd like to know: {act.items[0].slot}?"
    >>> worded = run_policy(Ask(), [SimpleNamespace(id="c1")], nlg=Words())
    >>> worded["c1"].text, worded.provenance["nlg_texts"]["count"]
    ("I'd like to know: food?", 1)
    """
    if not callable(getattr(policy, "respond", None)):
        raise TypeError(
            f"policy must have a respond(context) method, got {type(policy).__name__}"
        )
    if nlg is not None and not callable(getattr(nlg, "realise", None)):
        raise TypeError(f"nlg must have a realise(act, belief) method (e.g. policies.TemplateNLG), got {type(nlg).__name__}")
    if name is not None and not isinstance(name, str):
        raise TypeError(f"name must be a str, got {type(name).__name__} {name!r}")
    contexts = check_contexts(contexts)
    label = name or getattr(policy, "name", None) or type(policy).__name__
    batch = getattr(policy, "respond_batch", None)
    pairs: Iterable[tuple[Any, Any]]
    if callable(batch):
        listed = list(contexts)
        responses = list(batch(listed))
        if len(responses) != len(listed):
            raise InvalidResponseError(
                f"policy {label!r}: respond_batch returned {len(responses)} responses for {len(listed)} contexts"
            )
        pairs = zip(listed, responses)
    else:
        items = contexts if hasattr(contexts, "__len__") else list(contexts)
        total = len(items)  # type: ignore[arg-type]
        from simscore.progress import track

        shown = total > 5000 if progress is None else bool(progress)
        iterator = track(items, f"responding ({label})", total=total, unit="contexts", enabled=shown, leave=False)
        pairs = ((context, policy.respond(context)) for context in iterator)
    out: dict[str, Response] = {}
    contexts_by_id: dict[str, Any] = {}
    for context, response in pairs:
        if not isinstance(response, Response):
            raise InvalidResponseError(_not_a_response(label, context, response))
        out[context.id] = response
        if nlg is not None:
            contexts_by_id[context.id] = context
    if provenance is None:
        provenance = getattr(policy, "provenance", None) or {}
    if nlg is not None:
        provenance = {**provenance, "nlg_texts": {"nlg": repr(nlg), "count": _word(out, contexts_by_id, nlg, label)}}
    return Responses(out, policy=str(label), provenance=provenance)


def check_contexts(contexts: Any) -> Sequence[Any] | Iterable[Any]:
    """``contexts`` if it is an iterable of objects with a string ``id``, else a TypeError naming it.

    A list or a ContextSet is checked whole before a policy is asked anything; another
    iterable is read once into a list for that. :func:`run_policy` and the convergence monitor
    (:mod:`simscore.monitor`) check their contexts with it.

    >>> check_contexts("c1")
    Traceback (most recent call last):
    ...
    TypeError: contexts must be a ContextSet or an iterable of contexts (objects with an 'id'), got str 'c1'
    """
    if isinstance(contexts, (str, bytes)) or not isinstance(contexts, Iterable):
        raise TypeError(
            f"contexts must be a ContextSet or an iterable of contexts (objects with an 'id'), "
            f"got {type(contexts).__name__} {contexts!r:.60}"
        )
    items = contexts if isinstance(contexts, Sequence) or hasattr(contexts, "__len__") else list(contexts)
    for position, context in enumerate(items):
        if not isinstance(getattr(context, "id", None), str):
            raise TypeError(
                f"contexts[{position}] must be a context (an object with a string 'id', e.g. contexts.Context), "
                f"got {type(context).__name__} {context!r:.60}"
            )
    return items


def _not_a_response(label: str, context: Any, response: Any) -> str:
    message = (
        f"policy {label!r} returned {type(response).__name__} for context {getattr(context, 'id', context)!r}, "
        "expected simscore.Response"
    )
    if isinstance(response, str):
        try:
            Act.parse(response)
        except ActParseError as exc:
            return (f"{message}: {response!r:.80} is neither a Response nor a valid act ({exc.reason}); return "
                    "Response(text=...) for a prompt or Response(Act.parse(...)) for an act")
        return f"{message}: wrap the act as Response(Act.parse({response!r:.60}))"
    return message


def _word(responses: dict[str, Response], contexts: dict[str, Any], nlg: Realiser, label: str) -> int:
    """Give each response with an action but no text ``nlg``'s words (in place); how many were worded."""
    count = 0
    for context_id, response in responses.items():
        if response.action is None or response.text is not None:
            continue
        text = nlg.realise(response.action, getattr(contexts[context_id], "belief", None))
        if not isinstance(text, str):
            raise InvalidResponseError(
                f"policy {label!r}, context {context_id!r}: nlg.realise returned {type(text).__name__}, expected str"
            )
        responses[context_id] = Response(response.action, text)
        count += 1
    return count
