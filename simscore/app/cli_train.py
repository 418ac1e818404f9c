"""The ``simscore train`` command: train a GP-SARSA policy in the simulated restaurant domain.

``simscore train --reward ts|iq --seed S --dialogues 40000 --every 1000 --eval 100 --out DIR``
writes a checkpoint every ``--every`` dialogues and after the last, evaluates the greedy
policy on ``--eval`` fixed-seed simulated dialogues after each checkpoint and appends a row to
``DIR/evaluation.csv`` (see :mod:`policies.training`). Running the same command again on the
same directory resumes from the last complete checkpoint (a larger ``--dialogues`` extends
the run); another configuration is an error. The ``policies`` package is imported only when
the command runs.
"""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["add_subcommands", "cmd_train"]


def _int_at_least(minimum: int) -> Any:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected an integer >= {minimum}, got {text!r}")
        return value

    return parse


def cmd_train(args: argparse.Namespace) -> int:
    """``simscore train``: train (or resume) one run and print its evaluation table."""
    from policies.training import EVAL_SEED, TrainingConfig, train

    config = TrainingConfig(
        reward=args.reward,
        seed=args.seed,
        dialogues=args.dialogues,
        every=args.every,
        eval_dialogues=args.eval,
        eval_seed=EVAL_SEED if args.eval_seed is None else args.eval_seed,
        gamma=args.gamma,
        sigma=args.sigma,
        nu=args.nu,
        scale=args.scale,
        max_turns=args.max_turns,
    )
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
        print(f"last checkpoint: {last.stem} ({last.dialogues} dialogues); table: {result.run_dir / 'evaluation.csv'}")
    return 0


def add_subcommands(subparsers: Any) -> None:
    """Add the ``train`` command to an argparse sub-parser set.

    Examples
    --------
    >>> import argparse
    >>> parser = argparse.ArgumentParser()
    >>> add_subcommands(parser.add_subparsers())
    >>> args = parser.parse_args(["train", "--reward", "iq", "--seed", "2", "--out", "run"])
    >>> args.func is cmd_train, args.reward, args.seed, args.dialogues, args.every, args.eval
    (True, 'iq', 2, 40000, 1000, 100)
    """
    parser = subparsers.add_parser(
        "train",
        help="train a GP-SARSA policy against the simulated user (checkpoints + evaluations)",
        description=__doc__.split("\n\n")[1].replace("\n", " ") if __doc__ else None,
    )
    parser.add_argument("--reward", required=True, choices=("ts", "iq"),
                        help="reward model: task success (ts) or interaction quality (iq)")
    parser.add_argument("--seed", required=True, type=_int_at_least(0), help="training seed")
    parser.add_argument("--dialogues", type=_int_at_least(1), default=40000,
                        help="training dialogues in total (default 40000)")
    parser.add_argument("--every", type=_int_at_least(1), default=1000,
                        help="checkpoint and evaluate every N dialogues (default 1000)")
    parser.add_argument("--eval", type=_int_at_least(1), default=100, metavar="N",
                        help="evaluation dialogues per checkpoint (default 100)")
    parser.add_argument("--out", "-o", required=True, help="run directory (resumed if it holds the same run)")
    parser.add_argument("--eval-seed", type=_int_at_least(0), default=None,
                        help="seed of the evaluation dialogues (default: policies.training.EVAL_SEED)")
    parser.add_argument("--sigma", type=float, default=5.0, help="GP noise standard deviation (default 5)")
    parser.add_argument("--nu", type=float, default=0.001, help="ALD dictionary threshold (default 0.001)")
    parser.add_argument("--gamma", type=float, default=1.0, help="discount factor (default 1)")
    parser.add_argument("--scale", type=float, default=3.0, help="exploration scale while training (default 3)")
    parser.add_argument("--max-turns", type=_int_at_least(2), default=25, help="turn limit (default 25)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(func=cmd_train)
