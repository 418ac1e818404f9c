"""The ``simscore gate`` command: a regression gate for continuous integration.

``simscore gate BASELINE CANDIDATE [--out GATE.json]`` exits 0 when the candidate passes, 1 on
a regression, 2 on bad input (refused before anything is replayed), and 3 (:data:`UNDECIDED`) when
the baseline, the candidate or a source's policy crashes while being replayed, or gives no valid
action: the message names the policy and its exception, and nothing is decided or written. It
prints a summary and the regressed contexts (or tasks), and ``--out`` holds everything (JSON,
written atomically). The decision is :func:`simscore.outcomes.gate.gate`'s: the negative flip
rate's one-sided upper 95 % bound at most ``--max-negative-flip-rate`` (default 0.05) and, with
policies, the behaviour change at most ``--max-change-above-floor`` (default 0.10) above the
baseline's own churn. Two modes:

**Policies** (the default). BASELINE and CANDIDATE are summary policies named as ``simscore
respond`` names them: ``handcrafted``, ``random`` (seed 0), a GP-SARSA run folder (its last
checkpoint, greedy; its world, from its ``run.json``, is the replay's), ``MODULE:NAME`` or
``FILE.py:NAME`` (an object with ``choose(belief, mask) -> int``, or a class of one). Every
context is replayed in the simulated world (:class:`policies.sim.replay.BranchPoints`) from its turn
with ``--continuations`` K user continuations (default 4, the replay's own default: four
pairs per context, whose correlation the bootstrap over dialogues accounts for) under common
random numbers, once with the baseline and once with the candidate. The contexts:

* ``--contexts FILE``: collected from simulated dialogues whose users can be rebuilt (the
  experiment's ``contexts/col.jsonl``, ``simscore contexts collect`` on dialogue logs that
  :func:`policies.sim.run_dialogues` wrote); the policy that made each source's dialogues is
  ``--source NAME=POLICY``, else, for an experiment's context set (``<folder>/contexts/``), the run
  of that name (``runs/NAME/``, at the checkpoint the file's header names), else the baseline. Each
  source is replayed as it was collected: a GP-SARSA source samples with the ``sampling_scale`` the
  header records (an experiment's ``[contexts] collect_scale``), its randomness drawn from the
  dialogue's seeds, which its id names; one line on standard error says what was read. A replay
  that does not reach a context's belief is refused, naming the source;
* otherwise the contexts of ``--dialogues N`` (default 20) simulated dialogues of the baseline
  (seed ``--seed``): the situations the policy in service meets.

The behaviour change is the share of pairs where the two take different summary actions at
the context; the floor is the share where the baseline takes another action than itself when
the continuation's seed is ``--seed`` + 1 (its own randomness: nil for a deterministic policy).

**Outcome logs** (``--logs``). BASELINE and CANDIDATE are per-dialogue outcome logs of policies
that live elsewhere (:func:`simscore.outcomes.gate.read_outcome_log`: τ²-bench results, or CSV or JSON Lines with
``task_id``, ``success``, optionally ``reward`` and ``trial``), paired by task and trial; the
trials of one task are resampled together. There are no actions, so only the flips are gated.
The options of policies (:data:`POLICY_ONLY`: ``--contexts``, ``--source``, ``--dialogues``,
``--continuations``, ``--reward``, ``--max-change-above-floor``) are refused with ``--logs``
(exit 2, before any file is read); every other option applies to both modes.

``--continuations`` is at most :data:`MAX_CONTINUATIONS` (1,000), checked when the arguments are
read. The replays and the bootstrap show their progress (:mod:`simscore.progress`: a bar on a
terminal, a log line at least every minute elsewhere; ``--quiet``: none).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import math
import sys
import warnings
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from simscore.app.cli.args import STDOUT, checks_outputs, input_file, output_file, positive_int, resamples, seed
from simscore.errors import ConfigError, InvalidResponseError, PolicyCrashedError, excerpt
from simscore.io import dumps, prepare_output

__all__ = ["add_subcommands", "cmd_gate", "MAX_CONTINUATIONS", "UNDECIDED"]

logger = logging.getLogger("simscore.app.cli")

#: Regressed contexts or tasks listed on stdout at most (all of them are in --out).
SHOWN = 50
#: Simulated dialogues of the baseline whose contexts are replayed when no --contexts is given.
DEFAULT_DIALOGUES = 20
#: The most user continuations per context ``--continuations`` takes (as ``[consequences] continuations``): time
#: and memory grow with the contexts times K (a million took 1.6 GB after 90 s, the replay unfinished).
MAX_CONTINUATIONS = 1_000
#: The exit status when a policy crashed while being replayed: neither a pass nor a regression.
UNDECIDED = 3
#: The options that apply to policies only (option, dest); argparse leaves them None when not given.
POLICY_ONLY = (("--contexts", "contexts"), ("--source", "source"), ("--dialogues", "dialogues"),
               ("--continuations", "continuations"), ("--reward", "reward"),
               ("--max-change-above-floor", "max_change_above_floor"))
#: Their defaults with policies (--dialogues: DEFAULT_DIALOGUES unless --contexts is given; --max-change-above-floor:
#: GateLimits').
POLICY_DEFAULTS = {"continuations": 4, "reward": "ts"}


def _summary_policy(text: str) -> tuple[Any, Any]:
    """(policy, the run folder it came from or None) for a POLICY argument; a summary policy."""
    from simscore.app.policy_specs import PolicySpec, python_object

    spec = PolicySpec.parse(text)
    if spec.kind == "handcrafted":
        from policies import HandcraftedPolicy

        return HandcraftedPolicy(), None
    if spec.kind == "random":
        from policies import RandomPolicy

        return RandomPolicy(seed=0), None
    if spec.kind in ("hf", "openai"):
        what = "a language model" if spec.kind == "hf" else "an endpoint"
        raise ConfigError(f"POLICY {text!r}: {what} answers contexts but does not act in the simulated "
                          "world; gate its outcomes with --logs")
    if spec.kind == "gpsarsa":
        from policies import list_checkpoints, load_checkpoint

        if not list_checkpoints(spec.target):
            raise ConfigError(f"POLICY {text}: a folder, but no GP-SARSA training run (no checkpoints)")
        return load_checkpoint(spec.target), Path(spec.target)
    policy = python_object(spec)
    if not callable(getattr(policy, "choose", None)):
        raise ConfigError(f"POLICY {text!r} has no choose(belief, mask) -> int: only summary policies act in the "
                          "simulated world (gate other policies' outcomes with --logs)")
    return policy, None


def _settings(run_dir: Path | None) -> Any:
    """The simulated world: the run's own (its run.json) for a GP-SARSA run, else the default."""
    from policies.gpsarsa.training import trained_with
    from policies.sim.simulator import SimulationSettings

    config = trained_with(run_dir) if run_dir is not None else None
    return config.simulation() if config is not None else SimulationSettings()


def _sources(items: list[str]) -> dict[str, str]:
    sources: dict[str, str] = {}
    for item in items:
        name, sep, spec = item.partition("=")
        if not sep or not name or not spec:
            raise ConfigError(f"--source expects NAME=POLICY, got {excerpt(item, 80)}")
        if name in sources:
            raise ConfigError(f"--source {excerpt(name, 80)} is given twice")
        sources[name] = spec
    return sources


def _json_ready(value: Any) -> Any:
    """NaN as null, numpy scalars as numbers, tuples as lists (for simscore.io.dumps)."""
    if isinstance(value, dict):
        return {str(k): _json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_ready(v) for v in value]
    if hasattr(value, "item") and callable(value.item):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


class _Guarded:
    """A summary policy that names its role when its own code raises (:class:`PolicyCrashedError`).

    Every attribute but the hooks is the policy's own (its ``name``, ``training``, ``nlg_instance``),
    so the replay treats it as the policy; the hooks exist where the policy's do.
    """

    def __init__(self, policy: Any, role: str) -> None:
        self._policy = policy
        self._role = role
        self.choose = self._guarded(policy.choose)
        for hook in ("begin_dialogue", "end_dialogue"):
            method = getattr(policy, hook, None)
            if callable(method):
                setattr(self, hook, self._guarded(method))

    def _guarded(self, method: Any) -> Any:
        def call(*args: Any) -> Any:
            try:
                return method(*args)
            except Exception as exc:  # the policy's own code: any failure of it leaves the gate undecided
                raise PolicyCrashedError(f"{self._role} crashed while being replayed ({type(exc).__name__}: "
                                 f"{excerpt(str(exc), 200)[1:-1]})") from exc
        return call

    @property
    def name(self) -> str:
        """The policy's own name (its ``name``, else its class name), as the replay would call it."""
        return str(getattr(self._policy, "name", None) or type(self._policy).__name__)

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self._policy, attribute)


@contextlib.contextmanager
def _acting(role: str) -> Iterator[None]:
    """A policy's invalid action (its own fault, not the input's) leaves the gate undecided, naming ``role``."""
    try:
        yield
    except InvalidResponseError as exc:
        raise PolicyCrashedError(f"{role} gave an invalid action while being replayed: {exc}") from exc


def _recorded_sources(contexts: Any) -> dict[str, Mapping[str, Any]]:
    """Each source's provenance as the context set's header records it (``built.sources``), by name."""
    built = contexts.built if isinstance(contexts.built, Mapping) else {}
    described = built.get("sources")
    recorded: dict[str, Mapping[str, Any]] = {}
    for source in described if isinstance(described, Sequence) and not isinstance(described, str) else ():
        provenance = source.get("provenance") if isinstance(source, Mapping) else None
        if isinstance(source.get("name"), str) and isinstance(provenance, Mapping):
            recorded[source["name"]] = provenance
    return recorded


def _experiment_run(contexts_file: str, name: str) -> Path | None:
    """The run folder of source ``name`` when ``contexts_file`` is an experiment's (``<folder>/contexts/``)."""
    from policies.gpsarsa.training import list_checkpoints
    from simscore.app.experiment.folder import ExperimentFolder, RunId

    path = Path(contexts_file).resolve()
    folder = ExperimentFolder(path.parent.parent)
    run = RunId.parse(name)
    if run is None or path.parent != folder.contexts(name).parent or not folder.experiment_file.is_file():
        return None
    run_dir = folder.run_dir(run)
    return run_dir if run_dir.is_dir() and list_checkpoints(run_dir) else None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _collection(args: argparse.Namespace, contexts: Any, arms: tuple[Any, Any]) -> tuple[dict[str, Any], Path | None,
                                                                                           str | None]:
    """The policy that made each source's dialogues, as the context set's header records their collection.

    A source is ``--source``'s policy, else the experiment's run of its name (the context set
    lies in an experiment's ``contexts/``: the checkpoint the header names), else the baseline
    (a copy of it); a GP-SARSA source samples with the ``sampling_scale`` the header records (an
    experiment's ``[contexts] collect_scale``); the dialogues' seeds are in their ids. Returns the
    policies by source name, the first run folder among them, and a line saying what was read
    (None when the header and the folder gave nothing).
    """
    from policies.gpsarsa.training import load_checkpoint

    given = _sources(args.source or [])
    found = list(dict.fromkeys(n for n in (c.metadata.get("source_name") for c in contexts) if isinstance(n, str)))
    unknown = sorted(set(given) - set(found))
    if unknown:
        known = ", ".join(excerpt(name, 40) for name in sorted(found)[:5]) or "none"
        raise ConfigError(f"--source {excerpt(unknown[0], 80)}: no context of {args.contexts} comes from it "
                          f"(sources: {known})")
    recorded = _recorded_sources(contexts)
    policies: dict[str, Any] = {}
    said: list[str] = []
    world: Path | None = None
    for name in found:
        provenance = recorded.get(name, {})
        made_by = provenance.get("policy_provenance")
        checkpoint = made_by.get("checkpoint") if isinstance(made_by, Mapping) else None
        run_dir = None if name in given else _experiment_run(args.contexts, name)
        if name in given:
            policy, run_dir = _summary_policy(given[name])
            origin = f"--source {given[name]}"
        elif run_dir is not None:
            checkpoint = checkpoint if isinstance(checkpoint, int) and not isinstance(checkpoint, bool) else None
            policy = load_checkpoint(run_dir, checkpoint)
            origin = f"{run_dir}" + (f" checkpoint {checkpoint}" if checkpoint is not None else "")
        else:
            policy, _ = _summary_policy(args.baseline)
            origin = "the baseline"
        world = world or run_dir
        scale = _number(provenance.get("sampling_scale"))
        if scale is not None and hasattr(policy, "sampling_scale") and all(policy is not arm for arm in arms):
            policy.sampling_scale = scale
            origin += f", sampling scale {scale:g}"
        if origin != "the baseline":
            said.append(f"{excerpt(name, 40)} by {origin}")
        policies[name] = _Guarded(policy, f"the policy of source {excerpt(name, 40)} ({origin})")
    line = None
    if said:
        line = (f"gate: the sources replayed as {args.contexts} records their collection (the dialogues' seeds from "
                f"their ids): {'; '.join(said)}")
    return policies, world, line


def _limits(args: argparse.Namespace) -> Any:
    """The limits given, GateLimits' defaults for the others (--logs has no behaviour limit to give)."""
    from simscore.outcomes.gate import GateLimits

    given = {"max_negative_flip_rate": args.max_negative_flip_rate, "max_change_above_floor": args.max_change_above_floor}
    return GateLimits(**{name: value for name, value in given.items() if value is not None})


def _gate_policies(args: argparse.Namespace) -> tuple[Any, list[dict[str, Any]], dict[str, Any], str]:
    """Replay, decide; (result, regressed contexts, JSON extras, heading)."""
    from contexts import ContextSet
    from policies.sim import simulated_contexts
    from policies.sim.replay import BranchPoints
    from simscore.checks import MAX_SEED
    from simscore.errors import MissingValueWarning
    from simscore.outcomes.gate import gate
    from simscore.progress import progress
    from simscore.stats import Bootstrap

    limits = _limits(args)
    names = (f"baseline {args.baseline}", f"candidate {args.candidate}")
    plain = (_summary_policy(args.baseline), _summary_policy(args.candidate))
    baseline, candidate = (_Guarded(policy, f"the {name}") for (policy, _), name in zip(plain, names))
    run_dir = plain[0][1]
    shown = not args.quiet
    k = args.continuations
    if args.contexts is not None:
        contexts = ContextSet.read_jsonl(args.contexts)
        sources, world, line = _collection(args, contexts, (plain[0][0], plain[1][0]))
        if line is not None:
            logger.info("%s", line)
        settings = _settings(run_dir if run_dir is not None else world)
        where = f"{len(contexts)} contexts of {args.contexts}"
    else:
        n = args.dialogues or DEFAULT_DIALOGUES
        settings = _settings(run_dir)
        with _acting(f"the {names[0]}"):
            contexts = simulated_contexts({"baseline": baseline}, n, seed=args.seed, settings=settings, progress=shown)
        sources = {"baseline": baseline}
        where = f"{len(contexts)} contexts of {n} simulated dialogues of the baseline"
    floor_seed = args.seed + 1 if args.seed < MAX_SEED else args.seed - 1
    # one step for the three full arms (baseline, candidate, the baseline's floor), one for the swapped action
    with progress(3 * len(contexts) * k, "gate: replaying", unit="continuations", enabled=shown) as bar:
        with _acting("the policy of a source"):
            points = BranchPoints(contexts, sources=sources, settings=settings)
        rows = points.rows(k)
        with _acting(f"the {names[0]}"):
            a = points.play(baseline, rows, seed=args.seed, name=names[0], progress=bar)
        with _acting(f"the {names[1]}"):
            b = points.play(candidate, rows, seed=args.seed, name=names[1], progress=bar)
        with _acting(f"the {names[0]}"):
            floor = points.play(baseline, rows, seed=floor_seed, name=names[0], progress=bar)
    with _acting(f"the {names[1]}"):
        c = points.swap(candidate, rows, a, b, seed=args.seed, name=names[1], progress=shown)
    replays = points.replays(rows, a, b, c, names=names, seed=args.seed, continuations=k)
    reward = "reward_ts" if args.reward == "ts" else "reward_iq"
    bootstrap = Bootstrap(n_resamples=args.resamples, seed=args.seed)
    with progress(2, f"gate: bootstrap ({args.resamples} resamples)", unit="tables", enabled=shown) as bar:
        result = gate(a.success, b.success, clusters=replays.clusters(), baseline_reward=getattr(a, reward),
                      candidate_reward=getattr(b, reward), changed=a.first_action != b.first_action,
                      floor_changed=a.first_action != floor.first_action, limits=limits, bootstrap=bootstrap,
                      unit="dialogues")
        bar.update()
        with warnings.catch_warnings():  # an empty group (the actions never differ) is a null row in --out
            warnings.simplefilter("ignore", MissingValueWarning)
            flips = replays.flips(args.reward, bootstrap=bootstrap).to_records()
        bar.update()
    regressed: dict[str, dict[str, Any]] = {}
    for i in result.negative:
        row = regressed.setdefault(replays.context_ids[i], {
            "context_id": replays.context_ids[i], "source_name": replays.source_names[i],
            "dialogue_id": replays.dialogue_ids[i], "turn_index": int(replays.turn_index[i]), "negative_flips": 0,
            "continuations": k, "baseline_act": a.first_act[i], "candidate_act": b.first_act[i]})
        row["negative_flips"] += 1
    heading = f"{names[0]} -> {names[1]}: {where}, K={k} continuations ({len(replays)} pairs, R_{args.reward.upper()})"
    extras = {"contexts": str(args.contexts) if args.contexts else None, "dialogues": args.dialogues,
              "continuations": k, "reward": args.reward, "floor_seed": floor_seed, "flips": flips}
    return result, list(regressed.values()), extras, heading


def _gate_logs(args: argparse.Namespace) -> tuple[Any, list[dict[str, Any]], dict[str, Any], str]:
    from simscore.outcomes.gate import gate, pair_outcome_logs, read_outcome_log
    from simscore.progress import progress
    from simscore.stats import Bootstrap

    limits = _limits(args)
    paired = pair_outcome_logs(read_outcome_log(args.baseline), read_outcome_log(args.candidate))
    with progress(1, f"gate: bootstrap ({args.resamples} resamples)", unit="tables", enabled=not args.quiet) as bar:
        result = gate(paired.baseline_success, paired.candidate_success, clusters=paired.clusters,
                      baseline_reward=paired.baseline_reward, candidate_reward=paired.candidate_reward, limits=limits,
                      bootstrap=Bootstrap(n_resamples=args.resamples, seed=args.seed), unit="tasks")
        bar.update()
    regressed = [{"task_id": paired.tasks[i], "trial": paired.trials[i],
                  "baseline_reward": None if paired.baseline_reward is None else float(paired.baseline_reward[i]),
                  "candidate_reward": None if paired.candidate_reward is None else float(paired.candidate_reward[i])}
                 for i in result.negative]
    tasks = len(set(paired.tasks))
    heading = f"{args.baseline} -> {args.candidate}: {len(paired)} paired outcomes of {tasks} tasks"
    return result, regressed, {}, heading


def _line(row: dict[str, Any]) -> str:
    if "context_id" in row:
        return (f"  {row['context_id']}  {row['negative_flips']}/{row['continuations']}  baseline "
                f"{row['baseline_act']}  candidate {row['candidate_act']}")
    trial = "" if row["trial"] is None else f" trial {row['trial']}"
    rewards = "" if row["baseline_reward"] is None else f"  reward {row['baseline_reward']:g} -> {row['candidate_reward']:g}"
    return f"  {row['task_id']}{trial}{rewards}"


def _options_of_the_mode(args: argparse.Namespace) -> None:
    """Refuse an option the mode does not use (before any work), then fill in the defaults of those it does.

    Every option but these applies to both modes; none applies to ``--logs`` alone.
    """
    policy_only = [(option, getattr(args, dest)) for option, dest in POLICY_ONLY]
    if args.logs:
        given = [option for option, value in policy_only if value is not None]
        if given:
            raise ConfigError(f"{', '.join(given)} appl{'ies' if len(given) == 1 else 'y'} to policies, not to --logs "
                              "(outcome logs have no contexts to replay and no actions)")
        return
    if args.dialogues is not None and args.contexts is not None:
        raise ConfigError("--dialogues collects contexts from the baseline's dialogues; --contexts gives them: one")
    if args.source and args.contexts is None:
        raise ConfigError("--source names the policies that made a --contexts file's dialogues")
    for dest, default in POLICY_DEFAULTS.items():
        if getattr(args, dest) is None:
            setattr(args, dest, default)


@checks_outputs
def cmd_gate(args: argparse.Namespace) -> int:
    """``simscore gate``: 0 when the candidate passes, 1 on a regression, 3 when a policy crashed (bad input raises: 2)."""
    _options_of_the_mode(args)
    try:
        return _decide(args)
    except PolicyCrashedError as exc:
        from simscore.io.untrusted import terminal_text

        print(f"simscore gate: undecided: {terminal_text(str(exc))}: the gate could not be decided (exit "
              f"{UNDECIDED})", file=sys.stderr)
        return UNDECIDED


def _decide(args: argparse.Namespace) -> int:
    from simscore._version import __version__
    from simscore.app.policy_specs import PolicySpec
    from simscore.io import atomic_open

    if args.logs:
        inputs = [args.baseline, args.candidate]
    else:
        inputs = [p for text in (args.baseline, args.candidate) for p in PolicySpec.parse(text).input_files]
    if args.out is not None and args.out != STDOUT:
        prepare_output(args.out, inputs=[*inputs, *([args.contexts] if args.contexts else [])], overwrite=args.force)
    result, regressed, extras, heading = (_gate_logs if args.logs else _gate_policies)(args)
    what = "tasks" if args.logs else "contexts (negative flips of the K continuations; the acts at the context)"
    lines = [heading, result.format()]
    if regressed:
        lines.append(f"regressed {what}: {len(regressed)}")
        lines += [_line(row) for row in regressed[:SHOWN]]
        if len(regressed) > SHOWN:
            lines.append(f"  ... and {len(regressed) - SHOWN} more{' (all in --out)' if args.out else ''}")
    to_stdout = args.out == STDOUT  # the JSON alone on standard output, the summary on standard error
    print("\n".join(lines), file=sys.stderr if to_stdout else sys.stdout)
    if args.out is not None:
        record = {"simscore": __version__, "command": "gate", "mode": "logs" if args.logs else "policies",
                  "baseline": args.baseline, "candidate": args.candidate, "seed": args.seed, **extras,
                  "result": result.to_dict(), "regressed": regressed}
        if to_stdout:
            sys.stdout.write(dumps(_json_ready(record)) + "\n")
        else:
            with atomic_open(args.out, "w") as handle:
                handle.write(dumps(_json_ready(record)) + "\n")
            print(f"wrote {args.out}")
    return 0 if result.passed else 1


def _continuations(text: str) -> int:
    """argparse type of ``--continuations``: 1 to :data:`MAX_CONTINUATIONS`.

    >>> _continuations("1000001")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected at most 1,000 continuations per context (MAX_CONTINUATIONS), got '1000001'
    """
    value = positive_int(text)
    if value > MAX_CONTINUATIONS:
        raise argparse.ArgumentTypeError(f"expected at most {MAX_CONTINUATIONS:,} continuations per context "
                                         f"(MAX_CONTINUATIONS), got {text!r}")
    return value


def _share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a share in [0, 1], got {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a share in [0, 1], got {text!r}")
    return value


def add_subcommands(subparsers: Any) -> None:
    """Add the ``gate`` command to an argparse sub-parser set.

    Examples
    --------
    >>> import argparse
    >>> parser = argparse.ArgumentParser()
    >>> add_subcommands(parser.add_subparsers())
    >>> args = parser.parse_args(["gate", "handcrafted", "random", "--continuations", "2"])
    >>> args.func is cmd_gate, args.continuations, args.max_negative_flip_rate, args.logs, args.reward
    (True, 2, 0.05, False, None)

    The policy-only options default to None, so that ``--logs`` can refuse them when given;
    :func:`cmd_gate` fills in :data:`POLICY_DEFAULTS`.
    """
    p = subparsers.add_parser(
        "gate", help="CI gate: does the candidate lose what the baseline won? (exit 0 pass, 1 regression, 2 bad "
        "input, 3 undecided)",
        description="Exit 0 when CANDIDATE passes against BASELINE, 1 on a regression, 2 on bad input. Policies "
        "(handcrafted | random | GP-SARSA run folder | MODULE:NAME | FILE.py:NAME) are replayed in the simulated "
        "world from collected contexts; with --logs, two per-dialogue outcome logs are paired by task (and trial).",
        epilog="exit status: 0 the candidate passes; 1 a regression; 2 bad input (nothing was replayed or decided); "
        "3 undecided: the baseline, the candidate or a source's policy crashed (or gave an invalid action) while "
        "being replayed, named with its exception. --contexts, --source, --dialogues, --continuations, --reward "
        "and --max-change-above-floor apply to policies only.",
    )
    p.add_argument("baseline", metavar="BASELINE", help="the policy in service (or its outcome log with --logs)")
    p.add_argument("candidate", metavar="CANDIDATE", help="the policy to gate (or its outcome log with --logs)")
    p.add_argument("--logs", action="store_true", help="BASELINE and CANDIDATE are outcome logs (CSV or JSON Lines: "
                   "task_id, success[, reward, trial]; or tau2-bench results files)")
    p.add_argument("--contexts", metavar="FILE", type=input_file,
                   help="contexts collected from simulated dialogues to replay (default: those of --dialogues "
                   "dialogues of the baseline)")
    p.add_argument("--source", action="append", metavar="NAME=POLICY",
                   help="with --contexts: the policy that made source NAME's dialogues (default: the baseline)")
    p.add_argument("--dialogues", type=positive_int, metavar="N",
                   help=f"replay the contexts of N simulated dialogues of the baseline (default {DEFAULT_DIALOGUES})")
    p.add_argument("--continuations", "-k", type=_continuations, metavar="K",
                   help=f"user continuations per context (default 4, at most {MAX_CONTINUATIONS:,})")
    p.add_argument("--reward", choices=("ts", "iq"), help="the reward shown: R_TS (default) or R_IQ")
    p.add_argument("--max-negative-flip-rate", type=_share, default=0.05, metavar="X",
                   help="fail when the negative flip rate's one-sided upper 95%% bound exceeds X (default 0.05)")
    p.add_argument("--max-change-above-floor", type=_share, metavar="X",
                   help="policies: fail when the behaviour change exceeds the baseline's own churn by more than X "
                   "(default 0.10; 1 turns it off)")
    p.add_argument("--seed", type=seed, default=0, help="continuations, collection and bootstrap seed (default 0)")
    p.add_argument("--resamples", type=resamples, default=1000, help="bootstrap resamples (default 1000)")
    p.add_argument("--out", "-o", type=output_file,
                   help="write everything as JSON to this file (-: standard output, the summary then on standard error)")
    p.add_argument("--force", action="store_true", help="replace the --out file if it exists (never an input)")
    p.add_argument("--quiet", action="store_true", help="no progress (a bar on a terminal, a log line a minute "
                   "elsewhere) and no note of what was read")
    p.set_defaults(func=cmd_gate)
