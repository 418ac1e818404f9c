"""Adapters that make other kinds of dialogue policies usable as simscore policies.

Each adapter satisfies :class:`simscore.policy.Policy` (``respond(context) -> Response``)
and has the ``name`` and ``provenance`` attributes :func:`simscore.policy.run_policy`
records with the responses:

* :class:`CallablePolicy` — a plain function of the context returning an action, a text,
  both, or a :class:`~simscore.responses.Response`;
* :class:`LoggedPolicy` — responses logged in a file (simscore's JSON Lines responses
  format, or CSV with columns ``context_id, action, text``: :mod:`simscore.responses_csv`),
  looked up by context id;
* :class:`ConvLabPolicy` — a ConvLab-style policy whose ``predict(state)`` returns
  ``[[intent, domain, slot, value], ...]``; the state dict, in ConvLab-3's or ConvLab-2's
  layout, is built from the context by :func:`~policies.convlab.to_convlab_state`
  (re-exported here), and a stochastic policy is made deterministic by reseeding the global
  generators per context (see :mod:`policies.convlab` for the layouts and for running
  ConvLab policies in their own environment).

A function of the Gymnasium environment's observation (e.g. a trained network) is adapted by
:class:`policies.observation.ObservationPolicy`.

Contexts only need an ``id`` attribute, plus ``belief`` (a
:class:`contexts.belief.BeliefState`) and optionally ``metadata`` for :class:`ConvLabPolicy`,
so :class:`contexts.context.Context` objects and light stand-ins such as
:class:`types.SimpleNamespace` both work.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

from contexts.belief import BeliefState
from policies._provenance import _check_name, _provenance, _qualified_name
from policies.convlab import StateFormat, check_state_format, to_convlab_state
from policies.seeding import context_seed, reseeded
from simscore import responses_csv
from simscore.acts import Act
from simscore.checks import check_int
from simscore.errors import (
    ActParseError,
    ContextMismatchError,
    InvalidContextError,
    InvalidResponseError,
)
from simscore.io import open_input, read_head
from simscore.responses import Response, Responses

__all__ = [
    "CallablePolicy",
    "LoggedPolicy",
    "ConvLabPolicy",
    "to_convlab_state",
    "EMPTY_ACT",
]

#: The action :class:`ConvLabPolicy` returns when the wrapped policy predicts no act (``[]``).
EMPTY_ACT = Act("none")

#: A string "starts like an act" when it begins ``intent(``: identifier intents joined by
#: ``+``, immediately followed by an opening parenthesis. Prose almost never starts so (it has
#: a space before a parenthesis); a broken or cut-off act (``inform(``, ``inform(food=thai``,
#: ``inform(food=thai) Sure!``) does.
_ACT_START = re.compile(r"\s*[A-Za-z0-9_\-]+(?:\+[A-Za-z0-9_\-]+)*\(")
#: How much of a returned string an error message shows.
_SHOWN = 60

_STARTS_LIKE_AN_ACT = "; it starts like an act (intent and '('): return an act that parses, or use kind='text' for prose"

_KINDS = ("auto", "action", "text")
#: Up to this many logged ids are searched for a "did you mean" hint.
_HINT_LIMIT = 20_000


# -- shared helpers ----------------------------------------------------------------------


def _context_label(context: Any) -> str:
    """The context's id for messages (its repr if it has no string id)."""
    context_id = getattr(context, "id", None)
    return repr(context_id) if isinstance(context_id, str) else repr(context)


def _shown(text: str) -> str:
    """``text`` for a message: its repr, cut to :data:`_SHOWN` characters (saying how long it is)."""
    if len(text) <= _SHOWN:
        return repr(text)
    return f"{text[:_SHOWN]!r}... ({len(text):,} characters)"


# -- plain callables ---------------------------------------------------------------------


class CallablePolicy:
    """A plain function ``fn(context)`` used as a policy.

    ``fn`` may return

    * a :class:`~simscore.responses.Response` (used as is);
    * an :class:`~simscore.acts.Act` (an action-only response);
    * a ``str`` — an action or a text, as ``kind`` says (below);
    * a tuple ``(action, text)``: ``action`` an ``Act``, a PyDial act string (always parsed
      with :meth:`Act.parse <simscore.acts.Act.parse>`) or None; ``text`` a ``str`` or None;
      not both None.

    Parameters
    ----------
    fn : callable
        ``fn(context)``; it must be deterministic (same context, same response) for the
        comparison to mean anything — the adapter cannot check that.
    kind : {"auto", "action", "text"}, default "auto"
        How a returned ``str`` is read. ``"action"``: a PyDial act string, parsed with
        ``Act.parse``. ``"text"``: the prompt, never parsed. ``"auto"``: a string that starts
        like an act — identifier intents joined by ``+`` with an opening parenthesis right
        after them, e.g. ``request(food)``, ``hello()``, but also a cut-off ``inform(`` or
        ``inform(food=thai) Sure!`` — is parsed as an act, and if it does not parse that is an
        error naming the context and the string (shortened), never a silent fall-back to text
        (a policy meant to return an act and returning a broken one would otherwise be scored
        as a text policy); any other string is a text. Use ``"text"`` for a text policy whose
        prompts could start with ``word(``. ``kind`` does not affect other return types.
    name : str, optional
        Name recorded by :func:`~simscore.policy.run_policy` (default ``fn.__name__``, or the
        class name of a callable object).
    provenance : mapping, optional
        JSON-serialisable facts (checkpoint, seed, ...) added to the adapter's own
        ``{"adapter": "callable", "function": "<module>.<qualname>", "kind": kind}``; given
        keys win.

    Raises
    ------
    InvalidResponseError
        From :meth:`respond`, naming the context id and what was wrong: an unsupported
        return type (named), an act string that does not parse, a tuple of the wrong shape.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from simscore.policy import run_policy
    >>> def ask(context):
    ...     return "request(food)" if context.id == "c1" else "Enjoy your meal!"
    >>> policy = CallablePolicy(ask)
    >>> responses = run_policy(policy, [SimpleNamespace(id="c1"), SimpleNamespace(id="c2")])
    >>> responses["c1"], responses["c2"]
    (Response(action=Act.parse('request(food)'), text=None), Response(action=None, text='Enjoy your meal!'))
    >>> responses.policy, responses.provenance["kind"]
    ('ask', 'auto')
    """

    def __init__(
        self,
        fn: Callable[[Any], Any],
        *,
        kind: Literal["auto", "action", "text"] = "auto",
        name: str | None = None,
        provenance: Mapping[str, Any] | None = None,
    ) -> None:
        if not callable(fn):
            raise TypeError(f"fn must be callable (context -> response), got {type(fn).__name__}")
        if kind not in _KINDS:
            raise ValueError(f"kind must be one of 'auto', 'action', 'text', got {kind!r}")
        _check_name(name)
        self.fn = fn
        self.kind = kind
        self.name: str = name if name is not None else getattr(fn, "__name__", None) or type(fn).__name__
        self.provenance: dict[str, Any] = _provenance(
            {"adapter": "callable", "function": _qualified_name(fn), "kind": kind}, provenance
        )

    def __repr__(self) -> str:
        return f"CallablePolicy(name={self.name!r}, kind={self.kind!r})"

    def respond(self, context: Any) -> Response:
        """Call ``fn(context)`` and convert what it returns into a :class:`Response`."""
        return self._convert(self.fn(context), context)

    def _fail(self, context: Any, message: str) -> InvalidResponseError:
        return InvalidResponseError(f"callable policy {self.name!r}, context {_context_label(context)}: {message}")

    def _parse(self, text: str, context: Any, what: str, hint: str = "") -> Act:
        try:
            return Act.parse(text)
        except ActParseError as exc:
            where = f" at position {exc.position}" if exc.position is not None else ""
            reason = exc.reason if len(exc.reason) <= 2 * _SHOWN else exc.reason[: 2 * _SHOWN] + "..."  # it may quote
            raise self._fail(context, f"{what} {_shown(text)} is not a valid act ({reason}{where}){hint}") from None

    def _convert(self, result: Any, context: Any) -> Response:
        if isinstance(result, Response):
            return result
        if isinstance(result, Act):
            return Response(result)
        if isinstance(result, str):
            if self.kind == "text":
                return Response(text=result)
            if self.kind == "action":
                return Response(self._parse(result, context, "returned string"))
            if _ACT_START.match(result):
                return Response(self._parse(result, context, "returned string", _STARTS_LIKE_AN_ACT))
            return Response(text=result)
        if isinstance(result, tuple):
            return self._convert_pair(result, context)
        hint = " (for ConvLab act lists use ConvLabPolicy)" if isinstance(result, list) else ""
        raise self._fail(
            context,
            f"returned {type(result).__name__}, expected a Response, an Act, a str or an "
            f"(action, text) tuple{hint}",
        )

    def _convert_pair(self, result: tuple[Any, ...], context: Any) -> Response:
        if len(result) != 2:
            raise self._fail(context, f"returned a tuple of {len(result)} elements, expected (action, text)")
        action, text = result
        if isinstance(action, str):
            action = self._parse(action, context, "action")
        elif action is not None and not isinstance(action, Act):
            raise self._fail(
                context, f"the action of the returned tuple is {type(action).__name__}, expected an Act, a str or None"
            )
        if text is not None and not isinstance(text, str):
            raise self._fail(
                context, f"the text of the returned tuple is {type(text).__name__}, expected a str or None"
            )
        if action is None and text is None:
            raise self._fail(context, "returned (None, None): a response needs an action, a text, or both")
        return Response(action, text)


# -- responses logged in a file -----------------------------------------------------------


class LoggedPolicy:
    """Responses logged earlier (e.g. by a system outside Python), replayed by context id.

    Build it with :meth:`from_file` (JSON Lines or CSV) or from a
    :class:`~simscore.responses.Responses` object.

    Parameters
    ----------
    responses : Responses
        The logged responses, keyed by context id.
    name : str, optional
        Default: ``responses.policy``, or ``"logged"`` if that is empty.
    provenance : mapping, optional
        JSON-serialisable facts added to (and overriding) ``responses.provenance``.
    source : str, optional
        Where the responses came from, used in error messages (default
        ``"<in-memory responses>"``; :meth:`from_file` passes the path).

    Attributes
    ----------
    responses : Responses
    source : str

    Raises
    ------
    simscore.errors.ContextMismatchError
        From :meth:`respond` (a ``KeyError``) for a context whose id is not in the log,
        naming the id, the source and the closest logged id.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from types import SimpleNamespace
    >>> from simscore.policy import run_policy
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "system_b.csv"
    >>> _ = path.write_text("context_id,action,text\\nc1,request(area),Which area?\\n")
    >>> policy = LoggedPolicy.from_file(path)
    >>> run_policy(policy, [SimpleNamespace(id="c1")])["c1"]
    Response(action=Act.parse('request(area)'), text='Which area?')
    >>> policy.respond(SimpleNamespace(id="c01"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    simscore.errors.ContextMismatchError: context 'c01' is not in the response log .../system_b.csv
    (1 responses; closest id: 'c1')
    """

    def __init__(
        self,
        responses: Responses,
        *,
        name: str | None = None,
        provenance: Mapping[str, Any] | None = None,
        source: str | None = None,
    ) -> None:
        if not isinstance(responses, Responses):
            raise TypeError(f"responses must be simscore.Responses, got {type(responses).__name__}")
        _check_name(name)
        self.responses = responses
        self.source = "<in-memory responses>" if source is None else str(source)
        self.name: str = name if name is not None else (responses.policy or "logged")
        self.provenance: dict[str, Any] = _provenance(responses.provenance, provenance)

    @classmethod
    def from_file(
        cls,
        path: str | os.PathLike[str],
        *,
        format: Literal["auto", "jsonl", "csv"] = "auto",  # noqa: A002 - the natural name
        name: str | None = None,
        provenance: Mapping[str, Any] | None = None,
    ) -> LoggedPolicy:
        """Read a response log.

        Parameters
        ----------
        path : path-like
        format : {"auto", "jsonl", "csv"}, default "auto"
            ``"jsonl"``: simscore's responses file
            (:meth:`Responses.read_jsonl <simscore.responses.Responses.read_jsonl>`).
            ``"csv"``: see :func:`simscore.responses_csv.read_responses_csv`. ``"auto"``: by suffix (``.csv``;
            ``.jsonl``, ``.json``, ``.ndjson``), otherwise JSON Lines if the file starts
            with ``{`` and CSV if not.
        name : str, optional
            Default: the policy name in the JSON Lines header, or the file name without
            suffix for CSV.
        provenance : mapping, optional
            Added to the log's own provenance (JSON Lines header) and to
            ``log_file`` (the path as given), ``log_format`` and ``log_sha256`` (the file's
            SHA-256); given keys win.

        Raises
        ------
        FileFormatError
            Naming the file and the line of the first bad record.
        """
        p = Path(path)
        digest = hashlib.sha256()  # of the bytes read: the file is read once, so a pipe works too
        head, stream = read_head(open_input(p, digest=digest), 4096)
        with stream:  # a reader reads to the end of a valid log: the digest is the whole file's
            chosen = responses_csv.response_file_format(p, format, head=head)
            responses = responses_csv.read_responses(p, format=chosen, stream=stream)
        facts = {**responses.provenance, "log_file": str(path), "log_format": chosen,
                 "log_sha256": digest.hexdigest()}
        return cls(
            responses,
            name=name,
            provenance=_provenance(facts, provenance),
            source=str(path),
        )

    def __repr__(self) -> str:
        return f"LoggedPolicy(name={self.name!r}, source={self.source!r}, n={len(self.responses)})"

    def __len__(self) -> int:
        return len(self.responses)

    def missing(self, contexts: Iterable[Any]) -> tuple[str, ...]:
        """Ids of the contexts that are not in the log, in order (check before a long run).

        >>> from types import SimpleNamespace
        >>> policy = LoggedPolicy(Responses({"c1": Response(text="Hi")}))
        >>> policy.missing([SimpleNamespace(id="c1"), SimpleNamespace(id="c7")])
        ('c7',)
        """
        return tuple(c.id for c in contexts if c.id not in self.responses)

    def respond(self, context: Any) -> Response:
        """The logged response for ``context.id``."""
        context_id = getattr(context, "id", None)
        if not isinstance(context_id, str):
            raise InvalidContextError(
                f"logged policy {self.name!r}: a context needs a string 'id' to look up, got {context!r}"
            )
        try:
            return self.responses[context_id]
        except KeyError:
            raise ContextMismatchError(self._missing_message(context_id)) from None

    def _missing_message(self, context_id: str) -> str:
        message = f"context {context_id!r} is not in the response log {self.source} ({len(self.responses)} responses"
        if 0 < len(self.responses) <= _HINT_LIMIT:
            close = difflib.get_close_matches(context_id, self.responses.ids, n=1, cutoff=0.6)
            if close:
                message += f"; closest id: {close[0]!r}"
        return message + ")"


# -- ConvLab-style policies ----------------------------------------------------------------


class ConvLabPolicy:
    """A ConvLab-style policy (``predict(state) -> [[intent, domain, slot, value], ...]``).

    For each context the adapter builds the ConvLab state with
    :func:`~policies.convlab.to_convlab_state` in the layout the policy reads
    (``state_format``), calls ``policy.init_session()`` (if the policy has one and ``reset``
    is true) and then ``policy.predict(state)``, and converts the acts with
    :meth:`Act.from_convlab <simscore.acts.Act.from_convlab>` (intents and slots
    lower-cased, slots qualified by domain: ``restaurant-food``). An empty act list becomes
    :data:`EMPTY_ACT` (``none()``), so two policies that both stay silent match. Acts in
    ConvLab-2's internal ``(domain, intent, slot, value)`` order are an error naming the act,
    not a misreading.

    ConvLab's rule-based MultiWOZ policy (ConvLab-2's ``RuleBasedMultiwozBot``, ConvLab-3's
    ``RulePolicy``) needs ``state_format="convlab2"`` and ``seed``: it reads
    ``belief_state[domain]["semi"]`` and draws from the global ``random`` module (against
    itself without a seed it matches in only a few per cent of the contexts). It also needs
    the user's acts, which contexts imported with :func:`contexts.import_convlab` carry.

    Parameters
    ----------
    policy : object
        Anything with ``predict(state)``.
    state_format : {"convlab3", "convlab2"}, default "convlab3"
        The state layout the policy reads (see :mod:`policies.convlab`).
    seed : int, optional
        Make a stochastic policy deterministic: before each context, reseed the global
        generators of ``random``, numpy and (if imported) torch with
        :func:`~policies.seeding.context_seed` ``(seed, context.id)`` and restore their
        states afterwards (:func:`~policies.seeding.reseeded`), around ``init_session``,
        ``predict`` and ``nlg``. The project never touches global random state on its own;
        this is the one exception, on request, because a third-party policy that draws from
        the global generators can be made deterministic no other way — and the caller's
        random streams are left exactly where they were. Each context gets its own stream,
        the same whatever the order contexts are run in (the ConvLab-side script
        ``examples/convlab_answer_states.py`` derives the same seeds). Default: no reseeding.
    domain : str, default "restaurant"
        ConvLab domain of the state's slots.
    nlg : callable, optional
        ``nlg(acts) -> str`` turning the predicted act list into the prompt (for a ConvLab
        NLG object pass its ``generate`` method). Without it responses are action-only.
    slot_names, min_probability
        As in :func:`~policies.convlab.to_convlab_state`.
    reset : bool, default True
        Call ``policy.init_session()`` before every prediction so a stateful policy answers
        each context as the first turn of a fresh session (responses must not depend on
        the order contexts are run in).
    name : str, optional
        Default: the policy's class name.
    provenance : mapping, optional
        JSON-serialisable facts added to the adapter's own (``adapter``, ``policy_class``,
        ``state_format``, ``reseed`` (the ``seed`` argument), ``domain``, ``nlg``,
        ``min_probability``, ``slot_names``); given keys win.

    Raises
    ------
    InvalidResponseError
        From :meth:`respond`, naming the context id: ``predict`` returned something that is
        not a list of ``[intent, domain, slot, value]`` strings (or acts in the wrong order),
        ``nlg`` returned a non-str, or ``predict`` failed with ``KeyError: 'semi'`` /
        ``'book'`` on a ConvLab-3 state (the message says to use ``state_format="convlab2"``).
    InvalidContextError
        With ``seed``, for a context without a string id.

    Examples
    --------
    >>> import random
    >>> from types import SimpleNamespace
    >>> class Shuffler:
    ...     def predict(self, state):
    ...         food = state["belief_state"]["restaurant"]["semi"]["food"]
    ...         if not food:
    ...             return [["Request", "Restaurant", random.choice(["Food", "Area"]), "?"]]
    ...         return [["Inform", "Restaurant", "Food", food]]
    >>> policy = ConvLabPolicy(Shuffler(), state_format="convlab2", seed=0, nlg=lambda acts: f"{len(acts)} act(s)")
    >>> context = SimpleNamespace(id="c1", belief=BeliefState(slots={"food": {"none": 1.0}}), metadata={})
    >>> answers = {policy.respond(context) for _ in range(5)}
    >>> answers
    {Response(action=Act.parse('request(restaurant-food)'), text='1 act(s)')}
    """

    def __init__(
        self,
        policy: Any,
        *,
        state_format: StateFormat = "convlab3",
        seed: int | None = None,
        domain: str = "restaurant",
        nlg: Callable[[list[list[str]]], str] | None = None,
        slot_names: Mapping[str, str] | None = None,
        min_probability: float = 0.0,
        reset: bool = True,
        name: str | None = None,
        provenance: Mapping[str, Any] | None = None,
    ) -> None:
        if not callable(getattr(policy, "predict", None)):
            raise TypeError(f"policy must have a predict(state) method, got {type(policy).__name__}")
        check_state_format(state_format)
        if seed is not None:
            seed = check_int("seed", seed)
        if not isinstance(domain, str) or not domain:
            raise TypeError(f"domain must be a non-empty string, got {domain!r}")
        if nlg is not None and not callable(nlg):
            hint = " (for a ConvLab NLG object pass its generate method)" if hasattr(nlg, "generate") else ""
            raise TypeError(f"nlg must be callable (acts -> str) or None, got {type(nlg).__name__}{hint}")
        _check_name(name)
        # validated by building one state now, not at the first context
        to_convlab_state(BeliefState(), state_format=state_format, domain=domain, slot_names=slot_names,
                         min_probability=min_probability)
        self.policy = policy
        self.state_format: StateFormat = state_format
        self.seed = seed
        self.domain = domain
        self.nlg = nlg
        self.slot_names = None if slot_names is None else dict(slot_names)
        self.min_probability = float(min_probability)
        self.reset = bool(reset)
        self.name: str = name if name is not None else type(policy).__name__
        self.provenance: dict[str, Any] = _provenance(
            {
                "adapter": "convlab",
                "policy_class": _qualified_name(type(policy)),
                "state_format": state_format,
                "reseed": seed,
                "domain": domain,
                "nlg": None if nlg is None else _qualified_name(nlg),
                "min_probability": self.min_probability,
                "slot_names": self.slot_names,
            },
            provenance,
        )

    def __repr__(self) -> str:
        return f"ConvLabPolicy(name={self.name!r}, state_format={self.state_format!r}, domain={self.domain!r})"

    def state(self, context: Any) -> dict[str, Any]:
        """The ConvLab state handed to ``predict`` for ``context`` (see :func:`~policies.convlab.to_convlab_state`)."""
        return to_convlab_state(
            context,
            state_format=self.state_format,
            domain=self.domain,
            slot_names=self.slot_names,
            min_probability=self.min_probability,
        )

    def respond(self, context: Any) -> Response:
        """Predict the ConvLab acts for ``context`` and convert them (and the NLG text)."""
        state = self.state(context)
        label = _context_label(context)
        if self.seed is None:
            acts, text = self._predict(state, label)
        else:
            context_id = getattr(context, "id", None)
            if not isinstance(context_id, str):
                raise InvalidContextError(
                    f"ConvLab policy {self.name!r}: reseeding per context needs a string context 'id', got {context!r}"
                )
            with reseeded(context_seed(self.seed, context_id)):
                acts, text = self._predict(state, label)
        if len(acts) == 0:
            action = EMPTY_ACT
        else:
            try:
                action = Act.from_convlab(list(acts))
            except ActParseError as exc:
                where = "" if exc.position is None else f" (act {exc.position})"
                raise InvalidResponseError(
                    f"ConvLab policy {self.name!r}, context {label}: predict returned an invalid act list "
                    f"{acts!r}: {exc.reason}{where}"
                ) from None
        return Response(action, text)

    def _predict(self, state: dict[str, Any], label: str) -> tuple[list[Any] | tuple[Any, ...], str | None]:
        if self.reset:
            init_session = getattr(self.policy, "init_session", None)
            if callable(init_session):
                init_session()
        try:
            acts = self.policy.predict(state)
        except KeyError as exc:
            if self.state_format == "convlab3" and exc.args and exc.args[0] in ("semi", "book"):
                raise InvalidResponseError(
                    f"ConvLab policy {self.name!r}, context {label}: predict failed with KeyError({exc.args[0]!r}): "
                    "the policy reads ConvLab-2's state layout (belief_state[domain]['semi'] / ['book']), as "
                    "ConvLab's rule-based MultiWOZ policy does; pass state_format='convlab2'"
                ) from exc
            raise
        if not isinstance(acts, (list, tuple)):
            raise InvalidResponseError(
                f"ConvLab policy {self.name!r}, context {label}: predict returned {type(acts).__name__}, "
                "expected a list of [intent, domain, slot, value]"
            )
        text = None
        if self.nlg is not None:
            text = self.nlg(list(acts))
            if not isinstance(text, str):
                raise InvalidResponseError(
                    f"ConvLab policy {self.name!r}, context {label}: nlg returned {type(text).__name__}, expected str"
                )
        return acts, text

