"""Stop stable-baselines3 PPO when its behaviour has converged (simscore's callback).

PPO learns restaurant search in the registered Gymnasium environment
``simscore/RestaurantSearch-v0``. Every ``--check-freq`` steps the behaviour-convergence
callback answers the C_gen context set (1,296 belief states) with the greedy policy, compares
the answers with the previous check's (TMR and DMR, with bootstrap intervals and a random
policy's chance level, all logged to SB3's logger) and stops training once both stayed at or
above ``--threshold`` for ``--patience`` checks in a row. The stopped model is evaluated on
simulated dialogues (task success with a Wilson interval, turns).

With ``--budget N`` a second run with the same seed trains for N steps without stopping (the
callback only logs), is evaluated on the same dialogues, and the script reports the steps
saved against that budget at the task success each run reached. Both runs are identical up
to the stop (checked), so the comparison is fair.

The simulated user is the cooperative one (``UserSimulatorConfig.easy()``) by default, which
PPO learns within about 10,000 steps. Measured (seed 0; 200 evaluation dialogues): the callback
stops at step 12,289 with a success rate of 1.000 [0.981, 1.000] (5.97 turns); the fixed budget
of 40,960 steps also reaches 1.000 (5.21 turns): 70 % of the steps saved at equal success,
slightly longer dialogues.

With PyDial's Environment-1 user (``--user default``) PPO first learns to offer a venue in every
state and stays at a success rate of 0.2-0.5 for thousands of steps while its greedy answers on
C_gen do not change; the callback stops in that plateau (measured: step 14,337, success 0.470
[0.402, 0.539], against 0.870 [0.816, 0.910] after 40,960 steps). A behavioural criterion cannot
tell such a plateau from convergence. On contexts with dialogue history
(``policies.simulated_contexts``, 507 decision points of handcrafted and random dialogues) the
same run does not stop there (TMR 0.98 in the plateau), but it never stops later either: once
PPO succeeds, about 5 % of its answers still change between checks (TMR 0.90-0.96).

Output folder (``--out``): ``history.csv`` (one row per check), ``behaviour.png`` (the curve),
``progress.csv`` (SB3's log), ``summary.json``.

    python examples/sb3_ppo_convergence.py                      # about a minute on 2 cores
    python examples/sb3_ppo_convergence.py --budget 40960       # plus the fixed-budget run
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import gymnasium
import torch
from stable_baselines3 import PPO
from stable_baselines3.common.logger import configure

from policies import SimulationSettings, UserSimulatorConfig, run_dialogues
from simscore.integrations.gym import ENV_ID
from simscore.integrations.sb3 import BehaviourConvergenceCallback, SB3Policy
from simscore.plots import plot_behaviour
from simscore.stats import wilson_interval


def train(args: argparse.Namespace, steps: int, stop: bool, log_dir: Path | None):
    user = UserSimulatorConfig.easy() if args.user == "easy" else None
    env = gymnasium.make(ENV_ID, user_config=user)
    model = PPO("MlpPolicy", env, n_steps=args.n_steps, batch_size=64, n_epochs=4, seed=args.seed, device="cpu")
    model.set_logger(configure(str(log_dir) if log_dir else None, ["csv"] if log_dir else []))
    callback = BehaviourConvergenceCallback(
        measures=args.measures.split(","), check_freq=args.check_freq, threshold=args.threshold,
        patience=args.patience, stop=stop, verbose=1 if stop else 0,
    )
    start = time.perf_counter()
    model.learn(steps, callback=callback)
    return model, callback, time.perf_counter() - start


def evaluate(model, args: argparse.Namespace) -> dict:
    settings = SimulationSettings(user=UserSimulatorConfig.easy()) if args.user == "easy" else None
    result = run_dialogues(SB3Policy(model, text=False), args.eval, seed=args.eval_seed, settings=settings)
    low, high = wilson_interval(int(result.success.sum()), len(result))
    return {"steps": int(model.num_timesteps), "success_rate": result.success_rate, "success_ci": [low, high],
            "mean_turns": result.mean_turns, "mean_reward_ts": result.mean_reward_ts}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--max-steps", type=int, default=20_480, help="upper bound of the stopped run")
    parser.add_argument("--budget", type=int, default=0, help="also train a fixed-budget run of this many steps")
    parser.add_argument("--n-steps", type=int, default=1024, help="PPO rollout length")
    parser.add_argument("--check-freq", type=int, default=2048)
    parser.add_argument("--measures", default="tmr,dmr")
    parser.add_argument("--threshold", type=float, default=0.99)
    parser.add_argument("--patience", type=int, default=3)
    parser.add_argument("--user", choices=("default", "easy"), default="easy",
                        help="PyDial's Environment-1 user or the cooperative one (UserSimulatorConfig.easy)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--eval", type=int, default=200, help="evaluation dialogues")
    parser.add_argument("--eval-seed", type=int, default=12345)
    parser.add_argument("--out", type=Path, default=Path("examples-output/sb3_ppo_convergence"))
    args = parser.parse_args()
    torch.set_num_threads(1)  # small networks: threads cost more than they give
    args.out.mkdir(parents=True, exist_ok=True)

    model, callback, seconds = train(args, args.max_steps, stop=True, log_dir=args.out)
    history = callback.history()
    history.to_csv(args.out / "history.csv", index=False)
    stopped = evaluate(model, args)
    stopped["wall_seconds"] = seconds
    stopped["stopped_by_callback"] = callback.stopped_at is not None
    figure = plot_behaviour(history, args.out / "behaviour.png", overwrite=True, threshold=args.threshold,
                            stopped_at=callback.stopped_at, xlabel="PPO training steps",
                            title=f"PPO on {ENV_ID}: greedy behaviour on C_gen, each check vs the previous")
    how = f"stopped by the callback at step {callback.stopped_at}" if callback.stopped_at else "not converged"
    print(f"\nPPO {how} ({seconds:.0f} s): success {stopped['success_rate']:.3f} "
          f"[{stopped['success_ci'][0]:.3f}, {stopped['success_ci'][1]:.3f}], {stopped['mean_turns']:.2f} turns "
          f"on {args.eval} dialogues; figure {figure}")
    summary = {"config": {k: str(v) for k, v in vars(args).items()}, "stopped": stopped}

    if args.budget:
        full, observer, seconds = train(args, args.budget, stop=False, log_dir=None)
        shared = observer.history().iloc[: len(history)]
        identical = shared[["step", *args.measures.split(",")]].equals(history[["step", *args.measures.split(",")]])
        budget = evaluate(full, args)
        budget["wall_seconds"] = seconds
        saved = budget["steps"] - stopped["steps"]
        summary.update(budget=budget, steps_saved=saved, runs_identical_until_stop=bool(identical))
        observer.history().to_csv(args.out / "history_budget.csv", index=False)
        plot_behaviour(observer.history(), args.out / "behaviour_budget.png", overwrite=True, threshold=args.threshold,
                       stopped_at=callback.stopped_at, xlabel="PPO training steps",
                       title=f"PPO, fixed budget of {args.budget} steps (the line: where the callback stopped)")
        print(f"fixed budget of {budget['steps']} steps ({seconds:.0f} s): success {budget['success_rate']:.3f} "
              f"[{budget['success_ci'][0]:.3f}, {budget['success_ci'][1]:.3f}], {budget['mean_turns']:.2f} turns")
        print(f"steps saved by stopping: {saved} ({saved / budget['steps']:.0%}); "
              f"runs identical up to the stop: {identical}")
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")


if __name__ == "__main__":
    main()
