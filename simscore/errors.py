"""Every exception and warning of simscore, contexts and policies (a test keeps it so).

Every exception also subclasses the builtin a caller would naturally catch
(``ValueError``, ``KeyError``, ``OSError``), so ``except ValueError`` keeps working.

Messages are short whatever the input: a value from a file or a caller is quoted through
:func:`excerpt` (at most :data:`EXCERPT_LENGTH` characters and its total length), and a
:class:`FileFormatError` keeps at most :data:`MAX_MESSAGE_LENGTH` characters of its reason.
"""

from __future__ import annotations

import json

__all__ = [
    "excerpt",
    "json_excerpt",
    "json_kind",
    "EXCERPT_LENGTH",
    "MAX_MESSAGE_LENGTH",
    "SimscoreError",
    "ActParseError",
    "ToolCallError",
    "InvalidResponseError",
    "SampleCountError",
    "FileFormatError",
    "ContextMismatchError",
    "InputMismatchError",
    "OutcomeLogError",
    "MetadataColumnError",
    "UnknownMeasureError",
    "MissingDependencyError",
    "PackageClashError",
    "InvalidContextError",
    "CheckpointError",
    "TrainingConfigMismatchError",
    "SimulationError",
    "ReplayError",
    "PolicyCrashedError",
    "TextMeasureError",
    "ModelNotFoundError",
    "UnsupportedModelError",
    "ChatTemplateError",
    "EndpointError",
    "MeasureOptionError",
    "ExperimentError",
    "ConfigError",
    "OutputExistsError",
    "NoContextsError",
    "FolderInUseError",
    "RunStopped",
    "MissingValueWarning",
    "SharedSeedWarning",
    "SkippedContextsWarning",
    "SkippedDialoguesWarning",
    "UnparsedActWarning",
    "ShortenedPromptWarning",
    "APIKeyInReplyWarning",
    "TruncationWarning",
    "CausalEncoderWarning",
    "CacheShardWarning",
]


#: The longest quotation of an input in a message (:func:`excerpt`), in characters.
EXCERPT_LENGTH = 200

#: The longest reason a :class:`FileFormatError` keeps, in characters: a backstop for a message
#: that quotes an input without :func:`excerpt` (its middle is cut, naming the length).
MAX_MESSAGE_LENGTH = 1000


def excerpt(value: object, limit: int = EXCERPT_LENGTH) -> str:
    """``repr(value)`` for a message, cut to ``limit`` characters and naming the length of what was cut.

    Every message that quotes an input (an act, a context id, a cell, a header field) quotes it
    through here, so a 100,000-character value costs a line, not 100 kB of terminal.

    >>> excerpt("request(food)")
    "'request(food)'"
    >>> excerpt("inform(" + "x" * 100_000, limit=20)
    "'inform(xxxxxxxxxxxx... (100,007 characters)"
    >>> excerpt(list(range(100)), limit=12)
    '[0, 1, 2, 3,... (390 characters as written)'
    """
    text = repr(value)
    if len(text) <= limit:
        return text
    size = f"{len(value):,} characters" if isinstance(value, str) else f"{len(text):,} characters as written"
    return f"{text[:limit]}... ({size})"


def json_excerpt(value: object, limit: int = EXCERPT_LENGTH) -> str:
    """A value read from a JSON file, for a message, spelt as JSON spells it (``null``, ``true``,
    ``[1, 2]``, ``{"a": null}``; a string quoted as :func:`excerpt` quotes it), cut as :func:`excerpt` cuts.

    >>> json_excerpt(None), json_excerpt(True), json_excerpt({"a": [None, False]}), json_excerpt("x")
    ('null', 'true', '{"a": [null, false]}', "'x'")
    """
    if isinstance(value, str):
        return excerpt(value, limit)
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return excerpt(value, limit)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters as written)"


def json_kind(value: object) -> str:
    """What a value read from JSON is, in JSON's words: ``an object``, ``an array``, ``a string``,
    ``a number``, ``a boolean``, ``null``.

    >>> json_kind([]), json_kind(None), json_kind(1.5)
    ('an array', 'null', 'a number')
    """
    names = {dict: "an object", list: "an array", tuple: "an array", str: "a string", bool: "a boolean",
             int: "a number", float: "a number"}
    return names.get(type(value), "null" if value is None else f"a {type(value).__name__}")


def _bounded(message: str) -> str:
    """``message``, its middle cut if longer than :data:`MAX_MESSAGE_LENGTH` (naming the length)."""
    if len(message) <= MAX_MESSAGE_LENGTH:
        return message
    head, tail = MAX_MESSAGE_LENGTH * 3 // 4, MAX_MESSAGE_LENGTH // 5
    return f"{message[:head]} ... [{len(message) - head - tail:,} characters left out] ... {message[-tail:]}"


class SimscoreError(Exception):
    """Base class of every error raised by simscore, contexts and policies."""


class ActParseError(SimscoreError, ValueError):
    """A semantic action could not be parsed.

    Attributes
    ----------
    text : object
        The offending input (usually a string).
    position : int or None
        0-based character offset where parsing failed, or None for non-string input.
    reason : str
        What was wrong.
    """

    def __init__(self, text: object, position: int | None, reason: str) -> None:
        self.text = text
        self.position = position
        self.reason = reason
        where = f" at position {position}" if position is not None else ""
        super().__init__(f"cannot parse act {excerpt(text)}: {reason}{where}")


class ToolCallError(ActParseError):
    """A tool call (OpenAI chat completions, Responses API, or a plain ``{"name", "arguments"}``) cannot be an act.

    Its name is missing or not an identifier, its arguments are not JSON, not a JSON object,
    too long, too deep or too many (:mod:`simscore.tool_calls` names the limits). An
    :class:`ActParseError` (and so a ``ValueError``); the message quotes at most
    :data:`EXCERPT_LENGTH` characters of the call.

    Attributes
    ----------
    call : object
        The offending call (or list of calls).
    reason : str
        What was wrong.
    """

    def __init__(self, call: object, reason: str) -> None:
        self.call = call
        self.text = call
        self.position = None
        self.reason = reason
        SimscoreError.__init__(self, f"cannot read tool call {excerpt(call)}: {reason}")


class InvalidResponseError(SimscoreError, ValueError):
    """A response (or a collection of responses) is malformed."""


class SampleCountError(InvalidResponseError):
    """Sampled responses that cannot be compared: different numbers of samples per context on the two
    sides, or too few for a policy's agreement with itself (:mod:`simscore.stats.consistency`)."""


class FileFormatError(SimscoreError, ValueError):
    """A file could not be read: wrong format, version, or a bad line.

    Attributes
    ----------
    path : str
        The file.
    line : int or None
        1-based line number of the bad line, when known.
    reason : str
        What is wrong, without the file and line (at most :data:`MAX_MESSAGE_LENGTH`
        characters: a longer one keeps its start and end).
    """

    def __init__(self, path: object, message: str, line: int | None = None) -> None:
        self.path = str(path)
        self.line = line
        self.reason = message = _bounded(message)
        where = f", line {line}" if line is not None else ""
        super().__init__(f"{self.path}{where}: {message}")


class ContextMismatchError(SimscoreError, KeyError):
    """Two response sets do not cover the same context ids."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class InputMismatchError(SimscoreError, ValueError):
    """Files given with a saved result are not the ones it was made from (e.g. ``simscore view``'s
    responses files and the comparison); the message names the side and what differs."""


class OutcomeLogError(SimscoreError, ValueError):
    """Two outcome logs cannot be paired (``simscore gate``): tasks on one side only, trials on one side only."""


class MetadataColumnError(SimscoreError, ValueError, KeyError):
    """A metadata column asked for (a stratum or cluster column) is not there, or holds no value at all.

    The message names the column and the columns there are. A ``ValueError`` like every other
    bad input, and a ``KeyError`` (what a column look-up raises).
    """

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class UnknownMeasureError(SimscoreError, ValueError, KeyError):
    """A measure name is not in the registry; the message names the closest and every known name.

    A ``ValueError`` like every other bad input, and still a ``KeyError`` (what a registry
    lookup raises), so ``except KeyError`` code keeps working.
    """

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class MissingDependencyError(SimscoreError, ImportError):
    """An optional dependency is not installed; the message names the extra."""


class PackageClashError(SimscoreError, ImportError):
    """``contexts`` or ``policies`` imports another distribution's package (:mod:`simscore.ownership`)."""


class InvalidContextError(SimscoreError, ValueError):
    """A belief state, context or context set is invalid."""


class CheckpointError(SimscoreError, ValueError):
    """A policy checkpoint is corrupt, incomplete or of an unsupported version."""


class TrainingConfigMismatchError(CheckpointError):
    """A run directory holds a run whose configuration differs from the requested one."""


class SimulationError(SimscoreError, RuntimeError):
    """The simulation cannot run with the given domain or configuration."""


class ReplayError(SimscoreError, ValueError):
    """A context cannot be replayed in the simulated world: its set does not record how to rebuild
    its dialogue (no simulated dialogue id, no policy for its source), or the rebuilt dialogue does
    not reach the context's belief state (another policy, world or seed made it)."""


class PolicyCrashedError(SimscoreError, RuntimeError):
    """A policy failed while being replayed: its own code raised, or it gave no valid action. Not
    bad input, and no answer about the policy's behaviour: ``simscore gate`` exits 3 (undecided),
    naming the policy and the exception (:mod:`simscore.app.cli.gate`)."""


class TextMeasureError(SimscoreError, ValueError):
    """A text measure or encoder is configured wrongly, or an encoder returned bad output."""


class ModelNotFoundError(SimscoreError, FileNotFoundError):
    """A local model directory, a file it must contain, or a baseline file does not exist."""


class UnsupportedModelError(SimscoreError, ValueError):
    """A local model folder cannot be loaded safely or does not serve: not a Hugging Face model,
    weights only in pickles, no tokenizer, code of its own, sizes beyond their bounds, or a
    model that does not generate text (:mod:`simscore.models`); the message names the folder or
    file and the problem."""


class ChatTemplateError(SimscoreError, ValueError):
    """A chat template did not render: it does not compile, raised an error, broke a rule of
    jinja's sandbox, or ran past its time, memory or size limit (:class:`simscore.models.chat_templates.ChatTemplate`)."""


class EndpointError(SimscoreError, RuntimeError):
    """An OpenAI-compatible endpoint did not answer a request, refused it, or answered something
    that is not a chat completion (:class:`policies.lm.openai_endpoint.OpenAIEndpointPolicy`); the
    message names the endpoint, the context and the status, never the API key."""


class MeasureOptionError(SimscoreError, ValueError):
    """A measure option is unknown, malformed, or given for a measure that is not selected."""


class ExperimentError(SimscoreError, ValueError):
    """An experiment configuration or output folder is unusable."""


class ConfigError(ExperimentError):
    """A configuration file or mapping has an unknown key or a value of the wrong type or range.

    The message names the file, the table and the key.
    """


class OutputExistsError(SimscoreError, FileExistsError):
    """An output would replace an existing file (or one of the inputs) without being asked to."""


class NoContextsError(SimscoreError, ValueError):
    """An input yields no context at all, e.g. a dataset without a dialogue of the requested domain."""


class FolderInUseError(SimscoreError, RuntimeError):
    """An output folder is being written by another process (its lock file names the process and host)."""


class RunStopped(KeyboardInterrupt):
    """A run stopped by a signal such as SIGTERM.

    A :class:`KeyboardInterrupt`, so everything that cleans up after Ctrl-C cleans up after it
    (workers stopped, partial files discarded, locks released).

    Attributes
    ----------
    signal : int
        The signal's number.
    """

    def __init__(self, signal: int) -> None:
        import signal as signals

        self.signal = signal
        try:
            name = signals.Signals(signal).name
        except ValueError:
            name = f"signal {signal}"
        super().__init__(f"stopped by {name}")


class MissingValueWarning(UserWarning):
    """A value is missing or undefined (NaN): a score (e.g. an action measure on a text-only
    response), an interval from a single unit, a cluster id, a record a check needs."""


class SharedSeedWarning(UserWarning):
    """Two sampled policies were drawn with the same seed: their k-th samples share random numbers
    (e.g. the same Gumbel noise), which makes them look more alike than independent draws would
    (:mod:`simscore.stats.consistency`)."""


class SkippedContextsWarning(UserWarning):
    """Contexts were left out on request (``skip_invalid=True``) because they do not fit the domain."""


class TruncationWarning(UserWarning):
    """A text measure cut texts longer than its documented limit (the measure's signature
    names the limit; the message says how many texts were cut and to what)."""


class CausalEncoderWarning(UserWarning):
    """A causal language model folder is used as a sentence encoder (``emb_cos``, ``emb_ang``,
    ``bertscore``): its token embeddings see only the tokens before them."""


class CacheShardWarning(UserWarning):
    """A shard of an embedding cache folder failed a check and was set aside
    (:mod:`simscore.measures.disk_cache`): not a regular file, torn or altered, made under another
    signature, holding other arrays than it records, or sizes it cannot hold. The message names
    the shard and why; its texts are embedded again, so no number changes."""


class SkippedDialoguesWarning(UserWarning):
    """Dialogues of an input were left out (e.g. dialogues without the requested domain).

    The message says how many dialogues and turns were skipped and why; the counts are also
    attributes.

    Attributes
    ----------
    source : str
        The input (usually a file path).
    skipped_dialogues, skipped_turns : int
        How many dialogues, and how many turns in them, were left out.
    kept_dialogues : int
        How many dialogues were used.
    reason : str
        Why they were left out.
    """

    def __init__(
        self, source: object, *, skipped_dialogues: int, skipped_turns: int, kept_dialogues: int, reason: str
    ) -> None:
        self.source = str(source)
        self.skipped_dialogues = skipped_dialogues
        self.skipped_turns = skipped_turns
        self.kept_dialogues = kept_dialogues
        self.reason = reason
        super().__init__(
            f"{self.source}: skipped {skipped_dialogues} of {skipped_dialogues + kept_dialogues} dialogues "
            f"({skipped_turns} turns): {reason}"
        )


class UnparsedActWarning(UserWarning):
    """Responses of a policy asked to answer with acts did not parse as acts (they keep only their text)."""


class ShortenedPromptWarning(UserWarning):
    """Prompts were shortened (their oldest dialogue turns left out) to fit a language model's context window."""


class APIKeyInReplyWarning(UserWarning):
    """Replies of an OpenAI-compatible endpoint held the API key they were sent (a model or a server
    echoing the request): their responses hold ``[API key]`` in its place
    (:class:`policies.lm.openai_endpoint.OpenAIEndpointPolicy`). The message names the variable
    and the counts, never the key.

    Attributes
    ----------
    replies : int
        How many replies held the key.
    of : int
        How many replies there were.
    variable : str
        The environment variable the key came from.

    >>> str(APIKeyInReplyWarning.combined([APIKeyInReplyWarning(1, 4, "KEY"), APIKeyInReplyWarning(2, 4, "KEY")]))
    '3 of 8 replies held the API key (from KEY); their responses hold [API key] in its place'
    """

    def __init__(self, replies: int, of: int, variable: str) -> None:
        self.replies, self.of, self.variable = replies, of, variable
        super().__init__(f"{replies} of {of} replies held the API key (from {variable}); their responses hold "
                         "[API key] in its place")

    @classmethod
    def combined(cls, warnings: list[APIKeyInReplyWarning]) -> APIKeyInReplyWarning:
        """One warning for several runs (the samples of one command)."""
        return cls(sum(w.replies for w in warnings), sum(w.of for w in warnings), warnings[0].variable)
