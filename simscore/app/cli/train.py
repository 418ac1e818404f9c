"""The ``simscore train`` command: train a GP-SARSA policy in the simulated restaurant domain.

``simscore train --reward ts|iq --seed S --dialogues 40000 --every 1000 --eval 700 --out DIR``
writes a checkpoint every ``--every`` dialogues and after the last, evaluates the policy
(sampling with ``--eval-scale``, as PyDial) on ``--eval`` simulated dialogues after each
checkpoint, with fresh users drawn from the seed and the checkpoint, and appends a row to
``DIR/evaluation.csv`` (see :mod:`policies.gpsarsa.training`). Running the same command again on the
same directory resumes from the last complete checkpoint (a larger ``--dialogues`` extends
the run); another configuration is an error. The ``policies`` package is imported only when
the command runs.
"""

from __future__ import annotations

import argparse
from typing import Any

from simscore.app.cli.args import checks_outputs, output_folder, seed
from simscore.errors import ConfigError

__all__ = ["add_subcommands", "cmd_train"]


#: What ``simscore train --help`` says (plain text: argparse prints it as it is).
DESCRIPTION = (
    "Train one GP-SARSA run (a reward model and a seed) against the simulated user of the restaurant domain. "
    "A checkpoint is written every --every dialogues and after the last; after each, the greedy policy is "
    "evaluated on --eval simulated dialogues with fixed seeds and a row is appended to DIR/evaluation.csv. "
    "The same command on the same folder resumes from the last complete checkpoint (a larger --dialogues "
    "extends the run); other settings are an error. An option not given keeps TrainingConfig's default."
)

#: Command-line option -> TrainingConfig field; an option not given keeps the field's default.
_FIELDS = {
    "reward": "reward", "seed": "seed", "dialogues": "dialogues", "every": "every", "eval": "eval_dialogues",
    "eval_seed": "eval_seed", "gamma": "gamma", "sigma": "sigma", "nu": "nu", "scale": "scale",
    "eval_scale": "eval_scale", "reward_assignment": "reward_assignment", "max_turns": "max_turns",
}


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None


@checks_outputs
def cmd_train(args: argparse.Namespace) -> int:
    """``simscore train``: train (or resume) one run and print its evaluation table."""
    from policies.gpsarsa.training import EVALUATION_FILE, TrainingConfig, train

    given = {field: getattr(args, option) for option, field in _FIELDS.items() if getattr(args, option) is not None}
    try:
        config = TrainingConfig(**given)  # the defaults are TrainingConfig's own; it checks every value
    except (TypeError, ValueError) as exc:
        raise ConfigError(str(exc)) from None  # the CLI prefixes "simscore train: error:"
    result = train(config, args.out, progress=not args.quiet)
    if result.resumed_from:
        print(f"resumed {args.out} from {result.resumed_from} dialogues")
    print(
        f"{'dialogues':>9} {'success':>7} {'95% CI':>13} {'avg IQ':>6} {'length':>6} {'reward':>7} "
        f"{'dict':>5} {'train s':>8}"
    )
    for r in result.evaluation:
        print(
            f"{r.dialogues:>9} {r.success_rate:>7.3f} [{r.success_low:.3f},{r.success_high:.3f}] "
            f"{r.avg_iq:>6.2f} {r.avg_length:>6.2f} {r.avg_reward:>7.2f} {r.dictionary_size:>5} {r.train_seconds:>8.1f}"
        )
    last = result.checkpoints[-1] if result.checkpoints else None
    if last is not None:
        print(f"last checkpoint: {last.stem} ({last.dialogues} dialogues); table: {result.run_dir / EVALUATION_FILE}")
    return 0


def add_subcommands(subparsers: Any) -> None:
    """Add the ``train`` command to an argparse sub-parser set.

    Examples
    --------
    >>> import argparse
    >>> parser = argparse.ArgumentParser()
    >>> add_subcommands(parser.add_subparsers())
    >>> args = parser.parse_args(["train", "--reward", "iq", "--seed", "2", "--out", "run"])
    >>> args.func is cmd_train, args.reward, args.seed, args.dialogues  # None: TrainingConfig's default
    (True, 'iq', 2, None)
    """
    parser = subparsers.add_parser(
        "train",
        help="train a GP-SARSA policy against the simulated user (checkpoints + evaluations)",
        description=DESCRIPTION,
    )
    parser.add_argument("--reward", required=True, choices=("ts", "iq"),
                        help="reward model: ts = task success, iq = interaction quality")
    parser.add_argument("--seed", required=True, type=seed, help="training seed")
    parser.add_argument("--out", "-o", required=True, type=output_folder,
                        help="run directory (resumed if it holds the same run)")
    # defaults (None here) are TrainingConfig's, so the CLI, the TOML and the API share one set
    parser.add_argument("--dialogues", type=_integer, help="training dialogues in total (default 40000)")
    parser.add_argument("--every", type=_integer, help="checkpoint every N dialogues (default 1000)")
    parser.add_argument("--eval", type=_integer, metavar="N", help="evaluation dialogues per checkpoint (default 700)")
    parser.add_argument("--eval-seed", type=seed, help="key of the evaluation users' stream (fresh per checkpoint)")
    parser.add_argument("--sigma", type=float, help="GP noise standard deviation (default 5)")
    parser.add_argument("--nu", type=float, help="ALD dictionary threshold (default 0.001)")
    parser.add_argument("--gamma", type=float, help="discount factor (default 1)")
    parser.add_argument("--scale", type=float, help="exploration scale while training (default 3)")
    parser.add_argument("--eval-scale", type=float, help="exploration scale while evaluating (default 1, as PyDial)")
    parser.add_argument("--reward-assignment", choices=("terminal", "per_turn"),
                        help="terminal: the whole reward at the end, as PyDial (default); per_turn: -1 a turn")
    parser.add_argument("--max-turns", type=_integer, help="system decisions per dialogue at most (default 25)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(func=cmd_train)
