"""The policy protocol and running a policy over a context set.

Any object with ``respond(context) -> Response`` is a policy; it must be deterministic
(same context, same response). :func:`run_policy` runs one over a context set and returns
:class:`~simscore.responses.Responses` with provenance. Context objects only need an ``id``
attribute here, so simscore stays independent of the ``contexts`` package.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol, runtime_checkable

from simscore.errors import InvalidResponseError
from simscore.responses import Response, Responses

__all__ = ["Policy", "run_policy"]


@runtime_checkable
class Policy(Protocol):
    """Anything that answers a context deterministically with a :class:`Response`."""

    def respond(self, context: Any) -> Response:
        """The response to one context."""
        ...


def run_policy(
    policy: Policy,
    contexts: Iterable[Any],
    *,
    name: str | None = None,
    provenance: Mapping[str, Any] | None = None,
    progress: bool | None = None,
) -> Responses:
    """Run ``policy`` on every context and collect the responses by context id.

    Parameters
    ----------
    policy : Policy
        Any object with ``respond(context) -> Response``.
    contexts : iterable
        Objects with an ``id`` attribute (e.g. a ``contexts.ContextSet``).
    name : str, optional
        Policy name recorded in the result (default: ``policy.name`` or the class name).
    provenance : mapping, optional
        JSON-serialisable facts recorded with the responses (default: ``policy.provenance``
        if the policy has one).
    progress : bool or None
        Show a progress bar; None shows one for more than 5,000 contexts on a terminal.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> class Echo:
    ...     def respond(self, context):
    ...         return Response(text=f"context {context.id}")
    >>> run_policy(Echo(), [SimpleNamespace(id="c1")])["c1"].text
    'context c1'
    """
    if not callable(getattr(policy, "respond", None)):
        raise TypeError(
            f"policy must have a respond(context) method, got {type(policy).__name__}"
        )
    items = contexts if hasattr(contexts, "__len__") else list(contexts)
    total = len(items)  # type: ignore[arg-type]
    # tqdm's disable=None means "only on a terminal".
    disable = (None if total > 5000 else True) if progress is None else not progress
    from tqdm.auto import tqdm

    label = name or getattr(policy, "name", None) or type(policy).__name__
    out: dict[str, Response] = {}
    for context in tqdm(items, total=total, desc=f"responding ({label})", disable=disable, leave=False):
        response = policy.respond(context)
        if not isinstance(response, Response):
            raise InvalidResponseError(
                f"policy {label!r} returned {type(response).__name__} for context "
                f"{getattr(context, 'id', context)!r}, expected simscore.Response"
            )
        out[context.id] = response
    if provenance is None:
        provenance = getattr(policy, "provenance", None) or {}
    return Responses(out, policy=str(label), provenance=provenance)
