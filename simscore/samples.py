"""Sampled responses: K responses per context of one policy, in one file (:class:`SampledResponses`).

A policy that samples (a language model decoding with a temperature, an endpoint, the seeded
random policy) answers a context differently from one draw to the next. Comparing two such
policies with one response each mixes their difference with their own randomness, so simscore
keeps K draws per context (``simscore respond POLICY CONTEXTS --samples K --seed S``) and
:func:`simscore.compare` scores them against each other (:mod:`simscore.stats.consistency`).

The file
--------
A sampled responses file is simscore's responses file (JSON Lines, format
``simscore-responses``) at **version 2**: the header carries ``"samples": K`` and every record a
0-based sample index, ``{"context_id": "c1", "sample": 0, "action": ..., "text": ...}``, one
record per context and sample (any order; every context has every sample index exactly once).
A file of one sample per context is written as today (version 1, no sample index: byte for
byte what :meth:`Responses.to_jsonl <simscore.responses.Responses.to_jsonl>` writes), and
:meth:`SampledResponses.read_jsonl` reads both versions.

Seeds
-----
Sample ``k`` of a run seeded with ``S`` is drawn with the base seed :func:`sample_seed`
``(S, k)``, and each context then with its own seed derived from that one and its id (the
policies' ``context_seed``): every draw is fixed by (seed, sample, context), whatever the order,
the batch or the concurrency in which the contexts are answered. Sample 0 uses ``S`` itself, so
the first sample of a K-sample run is the one response of a single run with the same seed.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import IO, Any

from simscore.checks import check_int, check_seed
from simscore.errors import FileFormatError, InvalidResponseError, excerpt, json_excerpt
from simscore.io import prepare_output, read_jsonl, write_jsonl
from simscore.responses import FORMAT_NAME, FORMAT_VERSION, ActCache, ByContext, Response, Responses, read_record

__all__ = ["SampledResponses", "SAMPLED_FORMAT_VERSION", "sample_seed", "run_samples", "shared_seed", "MAX_SAMPLES"]

#: The version of a responses file with several samples per context (one sample: version 1).
SAMPLED_FORMAT_VERSION = 2
#: The most samples per context a file or a run may hold.
MAX_SAMPLES = 10_000


def sample_seed(seed: int, sample: int) -> int:
    """The base seed of sample ``sample`` (0-based) of a run seeded with ``seed``.

    ``seed`` itself for sample 0 (so the first of K samples is the response of a single run with
    that seed); for ``k >= 1`` the first eight bytes (big-endian) of the SHA-256 of
    ``f"{seed}:sample:{k}"``, halved to stay below 2**63: a stream of its own for every sample,
    the same however often and in whatever order the samples are drawn.

    >>> sample_seed(7, 0)
    7
    >>> sample_seed(7, 1) == sample_seed(7, 1) != sample_seed(7, 2)
    True
    >>> sample_seed(7, -1)
    Traceback (most recent call last):
    ...
    ValueError: sample must be >= 0, got -1
    """
    seed = check_seed("seed", seed, error=ValueError)
    sample = check_int("sample", sample, minimum=0, error=ValueError)
    if sample == 0:
        return seed
    digest = hashlib.sha256(f"{seed}:sample:{sample}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def run_samples(
    policy_for_seed: Callable[[int], Any],
    contexts: Iterable[Any],
    *,
    samples: int,
    seed: int = 0,
    name: str | None = None,
    progress: bool | None = None,
    nlg: Any = None,
) -> SampledResponses:
    """Draw ``samples`` responses per context from a policy that samples, reproducibly from ``seed``.

    Sample ``k`` is the responses of ``policy_for_seed(sample_seed(seed, k))`` over ``contexts``
    (:func:`simscore.run_policy`, with ``name``, ``progress`` and ``nlg``); the policy derives each
    context's draws from that seed and the context's id, as simscore's sampling policies do, so
    the result does not depend on order, batches or concurrency. The provenance is sample 0's,
    with ``"samples": {"count", "seed", "drawn": true, "seeds"}``. What ``simscore respond
    --samples K`` runs.

    Parameters
    ----------
    policy_for_seed : callable int -> Policy
        The policy drawing with a base seed, e.g. ``lambda s: RandomPolicy(seed=s)`` or a loaded
        model's ``GenerativePolicy.with_seed``.
    contexts : iterable
        Objects with an ``id`` (a ``ContextSet``); iterated once per sample.
    samples : int
        K, 1 to :data:`MAX_SAMPLES`.
    seed : int
        The run's seed.

    Examples
    --------
    >>> import random
    >>> from types import SimpleNamespace
    >>> class Coin:  # draws from its own seed and the context's id
    ...     def __init__(self, seed):
    ...         self.seed = seed
    ...     def respond(self, context):
    ...         return Response(text=random.Random(f"{self.seed}:{context.id}").choice(["heads", "tails"]))
    >>> drawn = run_samples(Coin, [SimpleNamespace(id="c1")], samples=4, seed=0, name="coin")
    >>> drawn.n_samples, [r.text for r in drawn["c1"]] == [r.text for r in run_samples(
    ...     Coin, [SimpleNamespace(id="c1")], samples=4, seed=0)["c1"]]
    (4, True)
    """
    from simscore.policy import run_policy

    samples = check_int("samples", samples, minimum=1, maximum=MAX_SAMPLES, error=ValueError)
    seed = check_seed("seed", seed, error=ValueError)
    items = list(contexts) if not isinstance(contexts, Sequence) else contexts
    runs = [run_policy(policy_for_seed(sample_seed(seed, k)), items, name=name, progress=progress, nlg=nlg)
            for k in range(samples)]
    record = {"count": samples, "seed": seed, "drawn": True, "seeds": "simscore.samples.sample_seed(seed, k)"}
    return SampledResponses.from_samples(runs, provenance={**runs[0].provenance, "samples": record})


def shared_seed(a: SampledResponses, b: SampledResponses) -> int | None:
    """The seed both were drawn with, as their provenance records it (:func:`run_samples`), or None.

    Two policies drawn with one seed use the same random numbers for their k-th samples of a
    context (sample_seed(seed, k), then the context's seed): where the policies are alike (a
    model at two temperatures, two checkpoints) those samples are alike too, and the agreement
    between them is inflated. Draw each policy with a seed of its own.

    >>> r = Responses({"c1": Response(text="x")})
    >>> record = {"samples": {"count": 2, "seed": 0, "drawn": True}}
    >>> drawn = SampledResponses.from_samples([r, r], provenance=record)
    >>> shared_seed(drawn, drawn), shared_seed(drawn, SampledResponses.from_samples([r, r]))
    (0, None)
    """
    records = [side.provenance.get("samples") for side in (a, b)]
    if not all(isinstance(record, Mapping) and record.get("drawn") is True for record in records):
        return None
    seeds = [record.get("seed") for record in records if isinstance(record, Mapping)]
    return seeds[0] if isinstance(seeds[0], int) and seeds[0] == seeds[1] else None


class SampledResponses(ByContext[tuple[Response, ...]]):
    """K responses per context of one policy over one context set, keyed by context id, in order.

    Parameters
    ----------
    samples : mapping or iterable of (context_id, sequence of Response)
        Per context its K responses, sample 0 first; every context must have the same K >= 1.
    policy : str
        A name for the policy.
    provenance : mapping
        JSON-serialisable facts about where the responses came from (the seed, the policy's own).

    Raises
    ------
    InvalidResponseError
        A context id that is not a non-empty string or appears twice, a sample that is not a
        :class:`~simscore.responses.Response`, no samples for a context, contexts with different
        numbers of samples (naming one of each), more than :data:`MAX_SAMPLES`.

    Examples
    --------
    >>> from simscore import Act
    >>> s = SampledResponses({"c1": [Response(Act.parse("hello()")), Response(Act.parse("bye()"))]}, policy="p")
    >>> s.n_samples, s.ids, s.sample(1)["c1"].action
    (2, ('c1',), Act.parse('bye()'))
    >>> SampledResponses({"c1": [Response(text="a")], "c2": [Response(text="a"), Response(text="b")]})
    Traceback (most recent call last):
    ...
    simscore.errors.InvalidResponseError: every context needs the same number of samples: 'c1' has 1, 'c2' has 2
    """

    def __init__(
        self,
        samples: Mapping[str, Sequence[Response]] | Iterable[tuple[str, Sequence[Response]]],
        *,
        policy: str = "",
        provenance: Mapping[str, Any] | None = None,
    ) -> None:
        pairs = samples.items() if isinstance(samples, Mapping) else samples
        data: dict[str, tuple[Response, ...]] = {}
        first: tuple[str, int] | None = None
        for context_id, drawn in pairs:
            if not isinstance(context_id, str) or not context_id:
                raise InvalidResponseError(f"context id must be a non-empty string, got {context_id!r}")
            if context_id in data:
                raise InvalidResponseError(f"context id {context_id!r} appears more than once")
            drawn = _checked(context_id, drawn)
            if first is None:
                first = (context_id, len(drawn))
            elif len(drawn) != first[1]:
                raise InvalidResponseError(
                    f"every context needs the same number of samples: {first[0]!r} has {first[1]}, "
                    f"{context_id!r} has {len(drawn)}"
                )
            data[context_id] = drawn
        self.n_samples: int = 0 if first is None else first[1]
        super().__init__(data, policy=policy, provenance=provenance)

    @classmethod
    def from_samples(
        cls, samples: Sequence[Responses], *, policy: str | None = None, provenance: Mapping[str, Any] | None = None
    ) -> SampledResponses:
        """K :class:`~simscore.responses.Responses` of one policy over the same contexts (sample 0 first) as one.

        ``policy`` and ``provenance`` default to the first sample's.

        Raises
        ------
        InvalidResponseError
            No samples, or samples over different context ids (naming the sample and an id).

        >>> r = Responses({"c1": Response(text="hi")}, policy="p")
        >>> SampledResponses.from_samples([r, r]).n_samples
        2
        """
        samples = list(samples)
        if not samples:
            raise InvalidResponseError("from_samples needs at least one Responses")
        for k, responses in enumerate(samples):
            if not isinstance(responses, Responses):
                raise InvalidResponseError(f"sample {k} must be simscore.Responses, got {type(responses).__name__}")
        ids = samples[0].ids
        for k, responses in enumerate(samples[1:], start=1):
            if set(responses.ids) != set(ids) or len(responses) != len(ids):
                other = next((i for i in ids if i not in responses), None) or next(i for i in responses.ids if i not in ids)
                raise InvalidResponseError(
                    f"sample {k} covers other contexts than sample 0 (context {other!r} is in one of them only)"
                )
        data = {cid: tuple(responses[cid] for responses in samples) for cid in ids}
        return cls(data, policy=samples[0].policy if policy is None else policy,
                   provenance=samples[0].provenance if provenance is None else provenance)

    @classmethod
    def single(cls, responses: Responses) -> SampledResponses:
        """One response per context as a :class:`SampledResponses` of one sample (same policy and provenance)."""
        return cls.from_samples([responses])

    def __repr__(self) -> str:
        return f"SampledResponses(policy={self.policy!r}, n={len(self)}, samples={self.n_samples})"

    def sample(self, k: int) -> Responses:
        """Sample ``k`` (0-based) as ordinary :class:`~simscore.responses.Responses` (same policy and provenance)."""
        k = check_int("k", k, minimum=0, maximum=max(self.n_samples - 1, 0), error=ValueError)
        return Responses(((cid, drawn[k]) for cid, drawn in self._data.items()), policy=self.policy,
                         provenance=self.provenance)

    def to_jsonl(self, path: str | os.PathLike[str], *, overwrite: bool = False) -> None:
        """Write the file, atomically: version 2 with sample indices for K > 1, else exactly version 1.

        An existing file is replaced only with ``overwrite=True``
        (:class:`~simscore.errors.OutputExistsError` otherwise).
        """
        if self.n_samples <= 1:
            self.sample(0).to_jsonl(path, overwrite=overwrite)
            return
        prepare_output(path, overwrite=overwrite)
        header = {"format": FORMAT_NAME, "version": SAMPLED_FORMAT_VERSION, "policy": self.policy,
                  "provenance": self.provenance, "samples": self.n_samples}
        records = (
            {"context_id": cid, "sample": k, **response.to_json()}
            for cid, drawn in self._data.items()
            for k, response in enumerate(drawn)
        )
        write_jsonl(path, header, records)

    @classmethod
    def read_jsonl(cls, path: str | os.PathLike[str], *, stream: IO[bytes] | None = None) -> SampledResponses:
        """Read a responses file: version 2 (K samples per context) or version 1 (one, as K = 1).

        The file is read once from its start (a pipe works), as :meth:`Responses.read_jsonl
        <simscore.responses.Responses.read_jsonl>` reads it.

        Raises
        ------
        FileFormatError
            Naming the file and line: a bad header (``samples`` not an integer in 1 ..
            :data:`MAX_SAMPLES`), a record without a valid ``sample`` index, a sample index
            given twice for one context, a context missing some of its K samples (naming the
            context and the missing indices), a bad action or text.

        Examples
        --------
        >>> import tempfile, pathlib
        >>> from simscore import Act
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "s.jsonl"
        >>> SampledResponses({"c1": [Response(Act.parse("hello()")), Response(text="Hi")]}, policy="p").to_jsonl(path)
        >>> print(path.read_text().splitlines()[2])
        {"context_id":"c1","sample":1,"action":null,"text":"Hi"}
        >>> SampledResponses.read_jsonl(path)["c1"][1].text
        'Hi'
        """
        header, records = read_jsonl(path, format_name=FORMAT_NAME, versions=(FORMAT_VERSION, SAMPLED_FORMAT_VERSION),
                                     stream=stream)
        try:
            sampled = header["version"] == SAMPLED_FORMAT_VERSION
            k_total = header.get("samples") if sampled else 1
            if type(k_total) is not int or not 1 <= k_total <= MAX_SAMPLES:
                raise FileFormatError(path, f"header field 'samples' must be an integer in 1..{MAX_SAMPLES}, got "
                                      f"{json_excerpt(k_total, 40)}", line=1)
            provenance = header.get("provenance", {})
            if not isinstance(provenance, dict):
                raise FileFormatError(path, "header field 'provenance' must be an object", line=1)
            policy = header.get("policy")
            if policy is not None and not isinstance(policy, str):
                raise FileFormatError(path, "header field 'policy' must be a string or null", line=1)
            drawn: dict[str, list[Response | None]] = {}
            parse = ActCache()
            for number, record in records:
                context_id, response = read_record(path, number, record, parse)
                k = record.get("sample") if sampled else 0
                if type(k) is not int or not 0 <= k < k_total:
                    raise FileFormatError(path, f"'sample' must be an integer in 0..{k_total - 1} (the header says "
                                          f"{k_total} samples), got {json_excerpt(k, 40)}", line=number)
                slots = drawn.setdefault(context_id, [None] * k_total)
                if slots[k] is not None:
                    what = f"sample {k} of context" if sampled else "context id"
                    raise FileFormatError(path, f"{what} {excerpt(context_id)} appears more than once", line=number)
                slots[k] = response
        finally:
            records.close()
        complete: dict[str, list[Response]] = {}
        for context_id, slots in drawn.items():
            missing = [k for k, response in enumerate(slots) if response is None]
            if missing:
                shown = ", ".join(map(str, missing[:10])) + (" ..." if len(missing) > 10 else "")
                raise FileFormatError(path, f"context {excerpt(context_id)} lacks sample(s) {shown} of the "
                                      f"{k_total} the header announces")
            complete[context_id] = [r for r in slots if r is not None]
        return cls(complete, policy=policy or "", provenance=provenance)


def _checked(context_id: str, drawn: Any) -> tuple[Response, ...]:
    """One context's samples as a tuple of 1 to :data:`MAX_SAMPLES` responses, or the error naming what is wrong."""
    if isinstance(drawn, Response) or not isinstance(drawn, Sequence):
        raise InvalidResponseError(
            f"samples for context {context_id!r} must be a sequence of Response, got {type(drawn).__name__}"
        )
    drawn = tuple(drawn)
    for k, response in enumerate(drawn):
        if not isinstance(response, Response):
            raise InvalidResponseError(
                f"sample {k} for context {context_id!r} must be a Response, got {type(response).__name__}"
            )
    if not drawn:
        raise InvalidResponseError(f"context {context_id!r} has no samples (at least 1 is needed)")
    if len(drawn) > MAX_SAMPLES:
        raise InvalidResponseError(f"context {context_id!r} has {len(drawn)} samples, more than {MAX_SAMPLES}")
    return drawn
