"""C_col: contexts collected from dialogues (dialogue logs or ConvLab-3 data).

Every turn of a logged dialogue is a moment where the system had to decide, so each turn
becomes a context: id ``col/<source-name>/<dialogue_id>/<turn_index>``, the logged belief
state, and metadata ``source="col"``, the dialogue id, the turn index, the dialogue's texts
before the decision (``history``) and ``source_name``. The paper kept repeated belief states
(C_col has repeats); ``deduplicate=True`` keeps only the first context of each distinct
belief state.

ConvLab-3's unified data format is imported by :func:`import_convlab` (see :func:`read_convlab`
for the mapping of its states and dialogue acts onto belief states, the ``user_action`` and
``system_action`` metadata a ConvLab policy reads, and the reporting of dialogues skipped for
another domain); PyDial belief logs by :func:`contexts.pydial.import_pydial`. A turn's own
``metadata`` (see :mod:`contexts.dialogue_log`) is copied into its context's metadata.

Examples
--------
>>> from contexts.belief import BeliefState
>>> from contexts.dialogue_log import Dialogue, DialogueTurn
>>> turns = (
...     DialogueTurn(turn_index=0, belief=BeliefState(), system_act="hello()", system_text="Hello."),
...     DialogueTurn(turn_index=1, user_act="inform(food=thai)", user_text="Thai food.",
...                  belief=BeliefState(slots={"food": {"thai": 1.0}}, method={"byconstraints": 1.0}),
...                  system_act="request(area)", system_text="Where?"),
... )
>>> log = ({"domain": "restaurants", "source": {"name": "sim"}}, [Dialogue("d0", turns)])
>>> cs = collect_contexts([log])
>>> cs.ids
('col/sim/d0/0', 'col/sim/d0/1')
>>> cs["col/sim/d0/1"].metadata["history"]
('Hello.', 'Thai food.')
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from contexts._collect import _collect, _source_name
from contexts._convlab import _convlab_dialogues, _load_convlab_json
from contexts.context import ContextSet
from contexts.dialogue_log import Dialogue, read_dialogue_log
from contexts.domain import Domain, Ontology, default_domain
from simscore.errors import InvalidContextError

__all__ = ["collect_contexts", "import_convlab", "read_convlab"]

LogInput = str | os.PathLike[str] | tuple[Mapping[str, Any], Sequence[Dialogue]]


def _load(log: Any, position: int, ontology: Ontology | None) -> tuple[dict[str, Any], list[Dialogue], Path | None]:
    if isinstance(log, (str, os.PathLike)):
        path = Path(log)
        header, dialogues = read_dialogue_log(path, ontology=ontology)
        return header, dialogues, path
    if isinstance(log, tuple) and len(log) == 2 and isinstance(log[0], Mapping):
        header = dict(log[0])
        dialogues = list(log[1])
        for dialogue in dialogues:
            if not isinstance(dialogue, Dialogue):
                raise InvalidContextError(f"log {position}: expected Dialogue objects, got {type(dialogue).__name__}")
            if ontology is not None:
                for turn in dialogue.turns:
                    turn.belief.validate(ontology)
        return header, dialogues, None
    raise InvalidContextError(
        f"log {position}: expected a path or a (header, dialogues) pair as returned by read_dialogue_log, "
        f"got {type(log).__name__}"
    )


def collect_contexts(
    logs: Iterable[LogInput],
    *,
    dialogues_per_source: int | None = None,
    deduplicate: bool = False,
    name: str = "C_col",
    domain: Domain | None = None,
) -> ContextSet:
    """Collect contexts (C_col) from dialogue logs.

    Parameters
    ----------
    logs : iterable of path or (header, dialogues)
        Dialogue-log files, or pairs as returned by
        :func:`~contexts.dialogue_log.read_dialogue_log`. A log's source name is its
        header's ``source.name``, else the file's stem, else ``log<position>``; logs with
        the same source name count as one source.
    dialogues_per_source : int, optional
        Use only the first N dialogues of each source (default: all).
    deduplicate : bool
        Keep only the first context of each distinct belief state (default False: the
        paper kept repeats).
    name : str
        Name of the returned set.
    domain : Domain, optional
        If given, every log must be of this domain (header ``domain``) and every belief is
        validated against its ontology. Otherwise all logs must name the same domain.

    Returns
    -------
    ContextSet
        In log, dialogue and turn order.

    Raises
    ------
    FileFormatError
        For a bad log file (naming file and line).
    InvalidContextError
        For logs of different domains, a duplicate context id, or a bad argument.
    """
    ontology = None if domain is None else domain.ontology
    loaded = []
    domains: dict[str, str] = {}
    for position, log in enumerate(logs):
        header, dialogues, path = _load(log, position, ontology)
        log_label = str(path) if path is not None else f"log {position}"
        log_domain = header.get("domain")
        if domain is not None and log_domain is not None and log_domain != domain.name:
            raise InvalidContextError(f"{log_label} is of domain {log_domain!r}, expected {domain.name!r}")
        if isinstance(log_domain, str):
            domains[log_label] = log_domain
        loaded.append((_source_name(header, path, position), header, dialogues, path))
    if len(set(domains.values())) > 1:
        listed = ", ".join(f"{label}: {d!r}" for label, d in domains.items())
        raise InvalidContextError(f"the logs are of different domains ({listed})")
    domain_name = domain.name if domain is not None else next(iter(domains.values()), None)
    return _collect(
        loaded,
        dialogues_per_source=dialogues_per_source,
        deduplicate=deduplicate,
        name=name,
        domain_name=domain_name,
        require_user_turn=False,
        built_extra={},
    )


def read_convlab(
    path: str | os.PathLike[str],
    *,
    ontology: Ontology | None = None,
    convlab_domain: str = "restaurant",
    skip_unknown_values: bool = False,
    max_dialogues: int | None = None,
) -> list[Dialogue]:
    """Read a ConvLab-3 unified-format ``dialogues.json`` as :class:`Dialogue` objects.

    Only dialogues whose ``domains`` list (if present) contains ``convlab_domain`` are read.
    Each system turn after one or more user turns becomes a turn with ``turn_index`` = the
    number of user turns so far (the user speaks first in ConvLab data, so the first
    decision is turn 1, as after the system's opening in a simulated dialogue); a system
    opening before any user turn becomes turn 0 (its text is history; it is no context).
    The belief at a turn comes from the last user turn's ``state[convlab_domain]``:

    * slots food, area, pricerange (``price range``), name -> one-hot distributions over the
      ontology (value ``""`` -> none, ``dontcare`` -> dontcare; values lower-cased, of
      ``a|b`` alternatives the first); a value unknown to the ontology is an error naming
      it, or treated as none with ``skip_unknown_values=True``;
    * method one-hot: finished if the user said bye, byname if the name slot is filled,
      byconstraints if another slot is, else none;
    * discourse act one-hot from the user's general intents: bye, thank -> thankyou,
      greet -> hello, else none;
    * requested: 1 for each slot the user requested in that turn (address -> addr; slots
      the ontology cannot request are ignored);
    * history flags from the system's earlier acts in the domain: an act with a ``name``
      value is an offer (``last_offered`` is set, and the venue added to
      ``offered_since_no_venue``, if the name is a venue of the ontology; an offer in the
      previous system turn sets ``last_act_offered``), ``nooffer`` in the previous system turn
      sets ``last_informed_no_venue`` and empties ``offered_since_no_venue``.

    Every turn's :attr:`~contexts.dialogue_log.DialogueTurn.metadata` keeps what a ConvLab
    policy reads besides the belief state, as lists ``[intent, domain, slot, value]`` in the
    unified format (lower-case, the data's slot names, ``""`` for the value of a binary act
    such as a request; what ConvLab-3's ``flatten_acts`` gives), of every domain:

    * ``user_action``: the user's acts since the previous system turn (the turn the system
      answers);
    * ``system_action``: the acts of the previous system turn (``[]`` before the first).

    :func:`policies.convlab.to_convlab_state` puts them into the state (converted to
    ConvLab-2's act format for ``state_format="convlab2"``).

    Dialogues whose ``domains`` list lacks ``convlab_domain`` are skipped with a
    :class:`~simscore.errors.SkippedDialoguesWarning` that counts them and their turns and
    lists the domains they have.

    Raises
    ------
    FileFormatError
        Naming the file and the dialogue / utterance at fault.
    NoContextsError
        If no dialogue is left (every one skipped, naming the domains found, or an empty list).
    """
    p = Path(path)
    ontology = default_domain().ontology if ontology is None else ontology
    return _convlab_dialogues(
        _load_convlab_json(p), p, ontology=ontology, convlab_domain=convlab_domain,
        skip_unknown_values=skip_unknown_values, max_dialogues=max_dialogues,
    )


def import_convlab(
    path: str | os.PathLike[str],
    *,
    domain: Domain | None = None,
    name: str = "C_col",
    source_name: str | None = None,
    dialogues_per_source: int | None = None,
    deduplicate: bool = False,
    skip_unknown_values: bool = False,
    convlab_domain: str = "restaurant",
) -> ContextSet:
    """Collect contexts from a ConvLab-3 unified-format ``dialogues.json``.

    One context per system turn that follows a user turn (see :func:`read_convlab` for the
    mapping and the skipping of other domains' dialogues); ids
    ``col/<source_name>/<dialogue_id>/<turn_index>``. Besides the standard metadata each
    context keeps ``user_action`` and ``system_action`` (see :func:`read_convlab`), so a
    ConvLab policy run on it (:class:`policies.ConvLabPolicy`, or
    ``simscore contexts export``) sees the user's acts and its own previous acts.

    Parameters
    ----------
    path : path-like
        The ``dialogues.json`` file (a JSON list of dialogues).
    domain : Domain, optional
        Whose ontology the states are mapped onto; default the shipped domain.
    name : str
        Name of the returned set.
    source_name : str, optional
        Default: the dialogues' ``dataset`` field, else the file's stem.
    dialogues_per_source, deduplicate
        As in :func:`collect_contexts`.
    skip_unknown_values : bool
        Treat state values unknown to the ontology as none instead of failing.
    convlab_domain : str
        The ConvLab domain whose state is read (default ``restaurant``).

    Warns
    -----
    SkippedDialoguesWarning
        When dialogues without ``convlab_domain`` were skipped (with counts).

    Raises
    ------
    FileFormatError
        For a malformed file (naming the dialogue and utterance).
    NoContextsError
        When no dialogue of ``convlab_domain`` is in the file.
    """
    domain = default_domain() if domain is None else domain
    p = Path(path)
    data = _load_convlab_json(p)
    dialogues = _convlab_dialogues(
        data, p, ontology=domain.ontology, convlab_domain=convlab_domain,
        skip_unknown_values=skip_unknown_values, max_dialogues=dialogues_per_source,
    )
    if source_name is None:
        dataset = data[0].get("dataset") if data and isinstance(data[0], Mapping) else None
        source_name = dataset if isinstance(dataset, str) and dataset else p.stem
    header = {"domain": domain.name, "source": {"name": source_name, "convlab_file": str(p)}}
    return _collect(
        [(source_name, header, dialogues, p)],
        dialogues_per_source=dialogues_per_source,
        deduplicate=deduplicate,
        name=name,
        domain_name=domain.name,
        require_user_turn=True,
        built_extra={"importer": "contexts.import_convlab", "convlab_domain": convlab_domain,
                     "skip_unknown_values": skip_unknown_values},
    )

