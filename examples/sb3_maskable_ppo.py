"""MaskablePPO (sb3-contrib) on the registered environment, stopped by behaviour convergence.

``gymnasium.make("simscore/RestaurantSearch-v0", enforce_masks=True)`` gives the
restaurant-search environment with its ``action_masks()`` (PyDial's Environment-1 masks), so
MaskablePPO needs no ``ActionMasker`` wrapper; ``enforce_masks=True`` makes a masked action an
error, which proves the agent never takes one. The behaviour-convergence callback answers C_gen
with the greedy policy, passing each context's mask to ``predict``, and stops training once
the dialogue-act match rate (DMR) against the previous check stayed at or above the
threshold for ``--patience`` checks.

Why DMR and not TMR here: on C_gen, MaskablePPO's greedy choice between asking for the area
and asking for the food is a near-tie that flips from update to update while task success
stays flat (TMR alternates between 1.0 and about 0.06 across checks; DMR stays at 1.0), so a
TMR criterion would never stop. ``--measures tmr,dmr`` shows it.

Output folder (``--out``): ``history.csv``, ``behaviour.png``, ``progress.csv``, ``summary.json``;
with ``--budget N`` also a fixed-budget run with the same seed for comparison.

Measured (seed 0; 200 evaluation dialogues; the world of simscore 0.2 with PyDial's belief
features): the greedy behaviour on C_gen settles for two checks (6,145 and 8,193 steps), changes
at 10,241 (DMR 0.18 against the previous check) and settles again from 18,433; the callback
stops at step 22,529 with a success rate of 0.970 [0.936, 0.986]; the fixed budget of 40,960
steps ends at 0.995 [0.972, 0.999]. The two runs are identical up to the stop; stopping saves
45 % of the steps, not at equal success.

    python examples/sb3_maskable_ppo.py                    # about a minute on 2 cores
    python examples/sb3_maskable_ppo.py --budget 40960
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import gymnasium
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.logger import configure

import simscore.integrations.gym  # noqa: F401  (registers simscore/RestaurantSearch-v0)
from policies import run_dialogues
from simscore.integrations.sb3 import BehaviourConvergenceCallback, SB3Policy
from simscore.plots import plot_behaviour
from simscore.stats import wilson_interval


def train(args: argparse.Namespace, steps: int, stop: bool, log_dir: Path | None):
    env = gymnasium.make("simscore/RestaurantSearch-v0", enforce_masks=True)
    model = MaskablePPO("MlpPolicy", env, n_steps=args.n_steps, batch_size=64, n_epochs=4, seed=args.seed,
                        device="cpu")
    model.set_logger(configure(str(log_dir) if log_dir else None, ["csv"] if log_dir else []))
    callback = BehaviourConvergenceCallback(
        measures=args.measures.split(","), check_freq=args.check_freq, threshold=args.threshold,
        patience=args.patience, stop=stop, verbose=1 if stop else 0,
    )
    start = time.perf_counter()
    model.learn(steps, callback=callback)
    return model, callback, time.perf_counter() - start


def evaluate(model, args: argparse.Namespace) -> dict:
    policy = SB3Policy(model, text=False)  # greedy, with the masks of every belief
    result = run_dialogues(policy, args.eval, seed=args.eval_seed)
    low, high = wilson_interval(int(result.success.sum()), len(result))
    return {"steps": int(model.num_timesteps), "success_rate": result.success_rate, "success_ci": [low, high],
            "mean_turns": result.mean_turns, "mean_reward_ts": result.mean_reward_ts}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--max-steps", type=int, default=40_960, help="upper bound of the stopped run")
    parser.add_argument("--budget", type=int, default=0, help="also train a fixed-budget run of this many steps")
    parser.add_argument("--n-steps", type=int, default=1024, help="rollout length")
    parser.add_argument("--check-freq", type=int, default=2048)
    parser.add_argument("--measures", default="dmr")
    parser.add_argument("--threshold", type=float, default=0.99)
    parser.add_argument("--patience", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--eval", type=int, default=200, help="evaluation dialogues")
    parser.add_argument("--eval-seed", type=int, default=12345)
    parser.add_argument("--out", type=Path, default=Path("examples-output/sb3_maskable_ppo"))
    args = parser.parse_args()
    torch.set_num_threads(1)
    args.out.mkdir(parents=True, exist_ok=True)

    model, callback, seconds = train(args, args.max_steps, stop=True, log_dir=args.out)
    history = callback.history()
    history.to_csv(args.out / "history.csv", index=False)
    stopped = evaluate(model, args)
    stopped["wall_seconds"] = seconds
    stopped["stopped_by_callback"] = callback.stopped_at is not None
    figure = plot_behaviour(history, args.out / "behaviour.png", overwrite=True, threshold=args.threshold,
                            stopped_at=callback.stopped_at, xlabel="MaskablePPO training steps",
                            title="MaskablePPO (masked): greedy behaviour on C_gen, each check vs the previous")
    how = f"stopped by the callback at step {callback.stopped_at}" if callback.stopped_at else "not converged"
    print(f"\nMaskablePPO {how} ({seconds:.0f} s): success {stopped['success_rate']:.3f} "
          f"[{stopped['success_ci'][0]:.3f}, {stopped['success_ci'][1]:.3f}], {stopped['mean_turns']:.2f} turns "
          f"on {args.eval} dialogues; figure {figure}")
    summary = {"config": {k: str(v) for k, v in vars(args).items()}, "stopped": stopped}

    if args.budget:
        full, observer, seconds = train(args, args.budget, stop=False, log_dir=None)
        measures = ["step", *args.measures.split(",")]
        identical = observer.history().iloc[: len(history)][measures].equals(history[measures])
        budget = evaluate(full, args)
        budget["wall_seconds"] = seconds
        saved = budget["steps"] - stopped["steps"]
        summary.update(budget=budget, steps_saved=saved, runs_identical_until_stop=bool(identical))
        observer.history().to_csv(args.out / "history_budget.csv", index=False)
        plot_behaviour(observer.history(), args.out / "behaviour_budget.png", overwrite=True, threshold=args.threshold,
                       stopped_at=callback.stopped_at, xlabel="MaskablePPO training steps",
                       title=f"MaskablePPO, fixed budget of {args.budget} steps (the line: where the callback stopped)")
        print(f"fixed budget of {budget['steps']} steps ({seconds:.0f} s): success {budget['success_rate']:.3f} "
              f"[{budget['success_ci'][0]:.3f}, {budget['success_ci'][1]:.3f}], {budget['mean_turns']:.2f} turns")
        print(f"steps saved by stopping: {saved} ({saved / budget['steps']:.0%}); "
              f"runs identical up to the stop: {identical}")
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")


if __name__ == "__main__":
    main()
