"""Answer simscore's ConvLab states with a ConvLab policy — run this in the *ConvLab* environment.

The ``convlab`` package pins ``torch<=1.13`` and cannot share an environment with simscore, so
a ConvLab policy is compared through files (the two-environment workflow):

1. in simscore's environment, export one dialogue state per context::

       simscore contexts collect --convlab dialogues.json --out C_col.jsonl
       simscore contexts export --format convlab2 C_col.jsonl --out states.jsonl

   (``--format convlab2`` for policies that read ``belief_state[domain]["semi"]``, such as
   ConvLab's rule-based MultiWOZ policy; ``convlab3`` for the flat ConvLab-3 layout);

2. in the ConvLab environment, answer every state with this script::

       python convlab_answer_states.py states.jsonl --out rule.jsonl --seed 0 \\
           --policy convlab.policy.rule.multiwoz:RulePolicy
       # ConvLab-2: --policy convlab2.policy.rule.multiwoz:RuleBasedMultiwozBot
       # with an NLG: --nlg convlab.nlg.template.multiwoz:TemplateNLG --nlg-kwargs '{"is_user": false}'

3. back in simscore's environment, compare the answers like any response log::

       simscore compare rule.jsonl other.jsonl

The script imports nothing from simscore: it only needs the standard library, the policy's
package and, if installed, numpy (and torch, if the policy imported it).

What it does per state, in file order: reseed the global generators with the context's seed
(unless ``--seed -1``), call ``init_session()`` if the policy has one, ``predict(state)`` on a
deep copy, and the NLG's ``generate(acts)`` if ``--nlg`` is given. The context's seed is the
first four bytes (big-endian) of SHA-256 of ``"<seed>:<context_id>"``, the same as
``policies.convlab.context_seed``; it seeds ``random``, ``numpy.random`` (if numpy is
installed) and torch's default generator (if the policy imported torch), exactly as
simscore's ``ConvLabPolicy(seed=...)`` does, so both paths give the same answers.

Output, written atomically (a temporary file renamed over ``--out``):

* ``.jsonl`` (or ``.json``, ``.ndjson``): simscore's responses format — a header line
  ``{"format": "simscore-responses", "version": 1, "policy": NAME, "provenance": {...}}`` and
  one line per context ``{"context_id": ..., "action": "<act string>", "text": ... | null,
  "convlab_acts": [[intent, domain, slot, value], ...]}`` (simscore ignores the extra
  ``convlab_acts``; it keeps the raw prediction for inspection);
* ``.csv``: columns ``context_id,action,text`` (an empty text is an empty cell, which simscore
  reads as "no text").

The act string is what simscore's ``Act.from_convlab`` makes of the acts, written by hand:
distinct lower-cased intents joined by ``+``; one item per act with a slot other than
``none``/empty, named ``domain-slot`` in lower case (the bare slot for the domains ``general``,
``none`` and empty); the value double-quoted with ``\\`` and ``"`` escaped, or no value for
``""`` and ``"?"`` (a request); ``none()`` for an empty prediction. For example
``[["Inform", "Restaurant", "Food", "thai"], ["Request", "Restaurant", "Area", "?"]]`` becomes
``inform+request(restaurant-food="thai",restaurant-area)``.

Slots keep their domain (``restaurant-food``), as ``Act.from_convlab`` does by default: two
ConvLab policies compare as they are; against single-domain acts (simscore's simulated world,
PyDial) no slot would match, so read such files with ``Act.from_convlab(...,
qualify_slots=False)`` from the ``convlab_acts`` field instead.

Seeded (``--seed``, default 0), so a run gives the same answers every time. Run time: the
policy's own ``predict`` calls; the script adds a deep copy, a hash and a reseed per state.

Errors (a bad states file, a policy that cannot be loaded, a prediction that is not a list of
``[intent, domain, slot, value]``, acts in ConvLab-2's internal ``(domain, intent, slot,
value)`` order) are printed as ``convlab_answer_states: error: ...`` with exit code 2.
"""

from __future__ import annotations

import argparse
import copy
import csv
import hashlib
import importlib
import io
import json
import os
import random
import sys
import tempfile

STATES_FORMAT = "simscore-convlab-states"
RESPONSES_FORMAT = "simscore-responses"
# The few ConvLab names that show an act in the wrong order (as simscore's Act.from_convlab checks).
DOMAINS = {"attraction", "booking", "general", "hospital", "hotel", "police", "restaurant", "taxi", "train"}
INTENTS = {
    "inform", "request", "recommend", "nooffer", "select", "book", "nobook", "offerbook", "offerbooked",
    "reqmore", "bye", "greet", "thank", "welcome", "hello", "confirm", "confreq", "affirm", "negate", "deny",
    "reqalts", "repeat", "ack", "thankyou", "null", "canthelp", "silence", "restart",
}


class AnswerError(Exception):
    """Something the user has to fix; printed without a traceback."""


def context_seed(seed: int, context_id: str) -> int:
    """The seed of one context (the same function as simscore's policies.convlab.context_seed)."""
    return int.from_bytes(hashlib.sha256(f"{seed}:{context_id}".encode()).digest()[:4], "big")


def reseed(seed: int) -> None:
    """Seed random, numpy (if installed) and torch (if the policy imported it)."""
    random.seed(seed)
    try:
        import numpy
    except ImportError:
        pass
    else:
        numpy.random.seed(seed)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.default_generator.manual_seed(seed)
        if torch.cuda.is_initialized():
            torch.cuda.manual_seed_all(seed)


def load(spec: str, kwargs: dict, what: str) -> object:
    """Build ``Class(**kwargs)`` from ``module.path:Class``."""
    module_name, sep, name = spec.partition(":")
    if not sep or not module_name or not name:
        raise AnswerError(f"{what} must be given as module.path:Class, got {spec!r}")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise AnswerError(
            f"cannot import {module_name!r} for the {what} ({exc}); run this script in ConvLab's environment"
        ) from None
    factory = getattr(module, name, None)
    if not callable(factory):
        raise AnswerError(f"{module_name!r} has no class {name!r} (the {what})")
    return factory(**kwargs)


def read_states(path: str) -> tuple[dict, list[tuple[str, dict]]]:
    """The header and ``(context_id, state)`` pairs of a states file written by simscore."""
    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except OSError as exc:
        raise AnswerError(f"{path}: cannot read ({exc.strerror})") from None
    records = []
    for number, line in enumerate(lines, start=1):
        if line.strip():
            try:
                records.append((number, json.loads(line)))
            except ValueError as exc:
                raise AnswerError(f"{path}, line {number}: invalid JSON ({exc})") from None
    if not records:
        raise AnswerError(f"{path}: empty file, expected a states file from 'simscore contexts export'")
    header = records[0][1]
    if not isinstance(header, dict) or header.get("format") != STATES_FORMAT or header.get("version") != 1:
        raise AnswerError(
            f"{path}, line 1: not a states file (format {STATES_FORMAT!r}, version 1) from 'simscore contexts export'"
        )
    states = []
    for number, record in records[1:]:
        if not (isinstance(record, dict) and isinstance(record.get("context_id"), str)
                and isinstance(record.get("state"), dict)):
            raise AnswerError(f"{path}, line {number}: expected {{\"context_id\": ..., \"state\": {{...}}}}")
        states.append((record["context_id"], record["state"]))
    if header.get("count") not in (None, len(states)):
        raise AnswerError(f"{path}: the header says {header['count']} states, the file has {len(states)} (truncated?)")
    return header, states


def act_string(acts: list) -> str:
    """simscore's act string of a ConvLab prediction (see the module docstring)."""
    intents: list[str] = []
    items: list[str] = []
    for position, act in enumerate(acts):
        if not isinstance(act, (list, tuple)) or len(act) != 4 or not all(isinstance(part, str) for part in act):
            raise AnswerError(f"act {position} must be a list of 4 strings [intent, domain, slot, value], got {act!r}")
        intent, domain, slot, value = (part.strip() for part in act)
        if intent.lower() in DOMAINS or domain.lower() in INTENTS or intent.lower().partition("-")[0] in DOMAINS:
            raise AnswerError(
                f"act {list(act)!r} is not in [intent, domain, slot, value] order (ConvLab-2 uses "
                "(domain, intent, slot, value) internally); expected e.g. ['Inform', 'Restaurant', 'Food', 'thai']"
            )
        intents.append(intent.lower())
        slot, domain = slot.lower(), domain.lower()
        if slot in ("", "none"):
            continue
        name = slot if domain in ("", "none", "general") else f"{domain}-{slot}"
        if value in ("", "?"):
            items.append(name)
        else:
            items.append(f'{name}="' + value.replace("\\", "\\\\").replace('"', '\\"') + '"')
    if not intents:
        return "none()"
    return "+".join(dict.fromkeys(intents)) + "(" + ",".join(items) + ")"


def answer(policy: object, nlg: object, states: list, seed: int | None, state_format: str) -> list[dict]:
    out = []
    for context_id, state in states:
        if seed is not None:
            reseed(context_seed(seed, context_id))
        init_session = getattr(policy, "init_session", None)
        if callable(init_session):
            init_session()
        try:
            acts = policy.predict(copy.deepcopy(state))
        except KeyError as exc:
            if state_format == "convlab3" and exc.args and exc.args[0] in ("semi", "book"):
                raise AnswerError(
                    f"context {context_id!r}: predict failed with KeyError({exc.args[0]!r}): the policy reads "
                    "ConvLab-2's state layout; export the states with 'simscore contexts export --format convlab2'"
                ) from None
            raise
        if not isinstance(acts, (list, tuple)):
            raise AnswerError(f"context {context_id!r}: predict returned {type(acts).__name__}, expected a list of acts")
        acts = [list(act) if isinstance(act, (list, tuple)) else act for act in acts]
        try:
            action = act_string(acts)
        except AnswerError as exc:
            raise AnswerError(f"context {context_id!r}: {exc}") from None
        text = None
        if nlg is not None:
            text = nlg.generate(acts)
            if not isinstance(text, str):
                raise AnswerError(f"context {context_id!r}: the NLG returned {type(text).__name__}, expected str")
        out.append({"context_id": context_id, "action": action, "text": text, "convlab_acts": acts})
    return out


def write_atomically(path: str, content: str) -> None:
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(path)}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(content)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def render(path: str, answers: list[dict], name: str, provenance: dict) -> str:
    if path.lower().endswith(".csv"):
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(["context_id", "action", "text"])
        writer.writerows([a["context_id"], a["action"], a["text"] or ""] for a in answers)
        return buffer.getvalue()
    header = {"format": RESPONSES_FORMAT, "version": 1, "policy": name, "provenance": provenance}
    dump = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    return "".join(dump(line) + "\n" for line in [header, *answers])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="convlab_answer_states",
        description="Answer simscore's ConvLab states file with a ConvLab policy (run in ConvLab's environment).",
    )
    parser.add_argument("states", help="states file from 'simscore contexts export'")
    parser.add_argument("--out", required=True, help="answers: .jsonl (simscore's responses format) or .csv")
    parser.add_argument("--policy", required=True, metavar="MODULE:CLASS",
                        help="the policy class, e.g. convlab.policy.rule.multiwoz:RulePolicy")
    parser.add_argument("--policy-kwargs", default="{}", metavar="JSON", help="keyword arguments of the policy class")
    parser.add_argument("--nlg", metavar="MODULE:CLASS", help="an NLG class with generate(acts) -> str (optional)")
    parser.add_argument("--nlg-kwargs", default="{}", metavar="JSON", help="keyword arguments of the NLG class")
    parser.add_argument("--seed", type=int, default=0,
                        help="run seed for reseeding the global generators per context (default 0; -1: no reseeding)")
    parser.add_argument("--name", help="policy name in the responses header (default: the class name)")
    args = parser.parse_args(argv)
    try:
        kwargs = {}
        for option in ("policy_kwargs", "nlg_kwargs"):
            try:
                kwargs[option] = json.loads(getattr(args, option))
            except ValueError as exc:
                raise AnswerError(f"--{option.replace('_', '-')} is not JSON ({exc})") from None
            if not isinstance(kwargs[option], dict):
                raise AnswerError(f"--{option.replace('_', '-')} must be a JSON object")
        if args.seed < -1:
            raise AnswerError(f"--seed must be >= 0, or -1 for no reseeding, got {args.seed}")
        header, states = read_states(args.states)
        policy = load(args.policy, kwargs["policy_kwargs"], "policy")
        if not callable(getattr(policy, "predict", None)):
            raise AnswerError(f"{args.policy} has no predict(state) method")
        nlg = None if args.nlg is None else load(args.nlg, kwargs["nlg_kwargs"], "NLG")
        seed = None if args.seed == -1 else args.seed
        answers = answer(policy, nlg, states, seed, header.get("state_format", ""))
        provenance = {
            "adapter": "convlab-script",
            "policy_class": args.policy,
            "policy_kwargs": kwargs["policy_kwargs"],
            "nlg": args.nlg,
            "state_format": header.get("state_format"),
            "domain": header.get("domain"),
            "reseed": seed,
            "states_file": args.states,
            "contexts": header.get("contexts"),
        }
        name = args.name or args.policy.rpartition(":")[2]
        write_atomically(args.out, render(args.out, answers, name, provenance))
    except AnswerError as exc:
        print(f"convlab_answer_states: error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {len(answers)} answers of {name} to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
