"""The ``simscore gate`` command: a regression gate for continuous integration.

``simscore gate BASELINE CANDIDATE [--out GATE.json]`` exits 0 when the candidate passes, 1 on
a regression, 2 on bad input; it prints a summary and the regressed contexts (or tasks), and
``--out`` holds everything (JSON, written atomically). The decision is :func:`simscore.outcomes.gate.gate`'s:
the negative flip rate's one-sided upper 95 % bound at most ``--max-negative-flip-rate``
(default 0.05) and, with policies, the behaviour change at most ``--max-change-above-floor``
(default 0.10) above the baseline's own churn. Two modes:

**Policies** (the default). BASELINE and CANDIDATE are summary policies named as ``simscore
respond`` names them: ``handcrafted``, ``random`` (seed 0), a GP-SARSA run folder (its last
checkpoint, greedy; its world, from its ``run.json``, is the replay's), ``MODULE:NAME`` or
``FILE.py:NAME`` (an object with ``choose(belief, mask) -> int``, or a class of one). Every
context is replayed in the simulated world (:func:`policies.sim.replay.replay`) from its turn
with ``--continuations`` K user continuations (default 4, the replay's own default: four
pairs per context, whose correlation the bootstrap over dialogues accounts for) under common
random numbers, once with the baseline and once with the candidate. The contexts:

* ``--contexts FILE``: collected from simulated dialogues whose users can be rebuilt (the
  experiment's ``contexts/col.jsonl``, ``simscore contexts collect`` on dialogue logs that
  :func:`policies.sim.run_dialogues` wrote); the policy that made each source's dialogues is
  ``--source NAME=POLICY``, the baseline where not given (a replay that does not reach a
  context's belief is refused, naming the source);
* otherwise the contexts of ``--dialogues N`` (default 20) simulated dialogues of the baseline
  (seed ``--seed``): the situations the policy in service meets.

The behaviour change is the share of pairs where the two take different summary actions at
the context; the floor is the share where the baseline takes another action than itself when
the continuation's seed is ``--seed`` + 1 (its own randomness: nil for a deterministic policy).

**Outcome logs** (``--logs``). BASELINE and CANDIDATE are per-dialogue outcome logs of policies
that live elsewhere (:func:`simscore.outcomes.gate.read_outcome_log`: τ²-bench results, or CSV or JSON Lines with
``task_id``, ``success``, optionally ``reward`` and ``trial``), paired by task and trial; the
trials of one task are resampled together. There are no actions, so only the flips are gated.
"""

from __future__ import annotations

import argparse
import math
import sys
import warnings
from pathlib import Path
from typing import Any

from simscore.app.cli.args import STDOUT, checks_outputs, input_file, output_file, positive_int, resamples, seed
from simscore.errors import ConfigError, excerpt
from simscore.io import dumps, prepare_output

__all__ = ["add_subcommands", "cmd_gate"]

#: Regressed contexts or tasks listed on stdout at most (all of them are in --out).
SHOWN = 50
#: Simulated dialogues of the baseline whose contexts are replayed when no --contexts is given.
DEFAULT_DIALOGUES = 20


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


def _gate_policies(args: argparse.Namespace) -> tuple[Any, list[dict[str, Any]], dict[str, Any], str]:
    """Replay, decide; (result, regressed contexts, JSON extras, heading)."""
    from contexts import ContextSet
    from policies.sim import replay, simulated_contexts
    from simscore.checks import MAX_SEED
    from simscore.errors import MissingValueWarning
    from simscore.outcomes.gate import GateLimits, gate
    from simscore.stats import Bootstrap

    if args.dialogues is not None and args.contexts is not None:
        raise ConfigError("--dialogues collects contexts from the baseline's dialogues; --contexts gives them: one")
    if args.source and args.contexts is None:
        raise ConfigError("--source names the policies that made a --contexts file's dialogues")
    limits = GateLimits(args.max_negative_flip_rate, args.max_change_above_floor)
    baseline, run_dir = _summary_policy(args.baseline)
    candidate, _ = _summary_policy(args.candidate)
    settings = _settings(run_dir)
    names = (f"baseline {args.baseline}", f"candidate {args.candidate}")
    if args.contexts is not None:
        contexts = ContextSet.read_jsonl(args.contexts)
        given = {name: _summary_policy(spec)[0] for name, spec in _sources(args.source or []).items()}
        found = {c.metadata.get("source_name") for c in contexts}
        unknown = sorted(set(given) - found)
        if unknown:
            known = ", ".join(excerpt(name, 40) for name in sorted(n for n in found if isinstance(n, str))[:5]) or "none"
            raise ConfigError(f"--source {excerpt(unknown[0], 80)}: no context of {args.contexts} comes from it "
                              f"(sources: {known})")
        sources = {str(name): given.get(str(name), baseline) for name in found if isinstance(name, str)}
        where = f"{len(contexts)} contexts of {args.contexts}"
    else:
        n = args.dialogues or DEFAULT_DIALOGUES
        contexts = simulated_contexts({"baseline": baseline}, n, seed=args.seed, settings=settings)
        sources = {"baseline": baseline}
        where = f"{len(contexts)} contexts of {n} simulated dialogues of the baseline"
    progress = not args.quiet and sys.stderr.isatty()
    common = {"sources": sources, "continuations": args.continuations, "settings": settings, "progress": progress}
    replays = replay(contexts, baseline, candidate, seed=args.seed, names=names, **common)
    floor_seed = args.seed + 1 if args.seed < MAX_SEED else args.seed - 1
    itself = replay(contexts, baseline, baseline, seed=floor_seed, names=(names[0], names[0]), **common)
    reward = "reward_ts" if args.reward == "ts" else "reward_iq"
    bootstrap = Bootstrap(n_resamples=args.resamples, seed=args.seed)
    result = gate(replays.a.success, replays.b.success, clusters=replays.clusters(),
                  baseline_reward=getattr(replays.a, reward), candidate_reward=getattr(replays.b, reward),
                  changed=replays.a.first_action != replays.b.first_action,
                  floor_changed=replays.a.first_action != itself.a.first_action, limits=limits, bootstrap=bootstrap,
                  unit="dialogues")
    regressed: dict[str, dict[str, Any]] = {}
    for i in result.negative:
        row = regressed.setdefault(replays.context_ids[i], {
            "context_id": replays.context_ids[i], "source_name": replays.source_names[i],
            "dialogue_id": replays.dialogue_ids[i], "turn_index": int(replays.turn_index[i]), "negative_flips": 0,
            "continuations": replays.continuations, "baseline_act": replays.a.first_act[i],
            "candidate_act": replays.b.first_act[i]})
        row["negative_flips"] += 1
    with warnings.catch_warnings():  # an empty group (the actions never differ) is a null row in --out
        warnings.simplefilter("ignore", MissingValueWarning)
        flips = replays.flips(args.reward, bootstrap=bootstrap).to_records()
    heading = (f"{names[0]} -> {names[1]}: {where}, K={args.continuations} continuations "
               f"({len(replays)} pairs, R_{args.reward.upper()})")
    extras = {"contexts": str(args.contexts) if args.contexts else None, "dialogues": args.dialogues,
              "continuations": args.continuations, "reward": args.reward, "floor_seed": floor_seed, "flips": flips}
    return result, list(regressed.values()), extras, heading


def _gate_logs(args: argparse.Namespace) -> tuple[Any, list[dict[str, Any]], dict[str, Any], str]:
    from simscore.outcomes.gate import GateLimits, gate, pair_outcome_logs, read_outcome_log
    from simscore.stats import Bootstrap

    given = [name for name, value in (("--contexts", args.contexts), ("--source", args.source),
                                      ("--dialogues", args.dialogues)) if value]
    if given:
        raise ConfigError(f"{', '.join(given)} appl{'ies' if len(given) == 1 else 'y'} to policies, not to --logs")
    limits = GateLimits(args.max_negative_flip_rate, args.max_change_above_floor)
    paired = pair_outcome_logs(read_outcome_log(args.baseline), read_outcome_log(args.candidate))
    result = gate(paired.baseline_success, paired.candidate_success, clusters=paired.clusters,
                  baseline_reward=paired.baseline_reward, candidate_reward=paired.candidate_reward, limits=limits,
                  bootstrap=Bootstrap(n_resamples=args.resamples, seed=args.seed), unit="tasks")
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


@checks_outputs
def cmd_gate(args: argparse.Namespace) -> int:
    """``simscore gate``: 0 when the candidate passes, 1 on a regression (bad input raises: 2)."""
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
    >>> args.func is cmd_gate, args.continuations, args.max_negative_flip_rate, args.logs
    (True, 2, 0.05, False)
    """
    p = subparsers.add_parser(
        "gate", help="CI gate: does the candidate lose what the baseline won? (exit 0 pass, 1 regression, 2 bad input)",
        description="Exit 0 when CANDIDATE passes against BASELINE, 1 on a regression, 2 on bad input. Policies "
        "(handcrafted | random | GP-SARSA run folder | MODULE:NAME | FILE.py:NAME) are replayed in the simulated "
        "world from collected contexts; with --logs, two per-dialogue outcome logs are paired by task (and trial).",
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
    p.add_argument("--continuations", "-k", type=positive_int, default=4, metavar="K",
                   help="user continuations per context (default 4)")
    p.add_argument("--reward", choices=("ts", "iq"), default="ts", help="the reward shown: R_TS (default) or R_IQ")
    p.add_argument("--max-negative-flip-rate", type=_share, default=0.05, metavar="X",
                   help="fail when the negative flip rate's one-sided upper 95%% bound exceeds X (default 0.05)")
    p.add_argument("--max-change-above-floor", type=_share, default=0.10, metavar="X",
                   help="policies: fail when the behaviour change exceeds the baseline's own churn by more than X "
                   "(default 0.10; 1 turns it off)")
    p.add_argument("--seed", type=seed, default=0, help="continuations, collection and bootstrap seed (default 0)")
    p.add_argument("--resamples", type=resamples, default=1000, help="bootstrap resamples (default 1000)")
    p.add_argument("--out", "-o", type=output_file,
                   help="write everything as JSON to this file (-: standard output, the summary then on standard error)")
    p.add_argument("--force", action="store_true", help="replace the --out file if it exists (never an input)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_gate)
