"""Compare a stable-baselines3 policy with GP-SARSA and the handcrafted policy (all eight measures).

Three restaurant-search policies answer the 1,296 C_gen contexts deterministically:

* ``maskableppo`` — sb3-contrib's MaskablePPO trained briefly on ``simscore/RestaurantSearch-v0``
  and wrapped by :class:`simscore.integrations.sb3.SB3Policy` (greedy, masks from the beliefs);
* ``gpsarsa`` — the GP-SARSA policy trained on as many simulated dialogues;
* ``handcrafted`` — the rule-based policy;

and every pair is scored with the eight measures of Ultes & Maier (2020): TMR, DMR, CER, CMR
on the master acts, USE cosine/angular similarity, BLEU-4 and BERTScore on the texts (each
policy words its acts as its own NLG instance). A seeded random policy gives the chance level.
Each policy is also evaluated on the same simulated dialogues (task success, turns), so the
table shows how two policies with similar success can behave differently.

Output folder (``--out``): ``comparisons.csv`` (pair, measure, mean, 95% CI, count) and
``performance.csv``.

    python examples/sb3_compare_policies.py        # about a minute on 2 cores (text models included)
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import gymnasium
import pandas as pd
import torch
from sb3_contrib import MaskablePPO

import simscore.integrations.gym  # noqa: F401  (registers simscore/RestaurantSearch-v0)
from contexts import generate_grid
from policies import GPSarsaPolicy, HandcraftedPolicy, RandomPolicy, SummaryPolicyAdapter, run_dialogues
from simscore import compare, run_policy
from simscore.integrations.sb3 import SB3Policy
from simscore.measures import resolve_measures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=4096, help="MaskablePPO training steps")
    parser.add_argument("--dialogues", type=int, default=500, help="GP-SARSA training dialogues")
    parser.add_argument("--measures", default="all")
    parser.add_argument("--eval", type=int, default=200, help="evaluation dialogues per policy")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=Path("examples-output/sb3_compare_policies"))
    args = parser.parse_args()
    torch.set_num_threads(1)
    args.out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()

    model = MaskablePPO("MlpPolicy", gymnasium.make("simscore/RestaurantSearch-v0"), n_steps=1024, batch_size=64,
                        n_epochs=4, seed=args.seed, device="cpu")
    model.learn(args.steps)
    gpsarsa = GPSarsaPolicy(reward="ts", seed=args.seed, training=True)
    run_dialogues(gpsarsa, args.dialogues, seed=args.seed)  # learns from every dialogue
    gpsarsa.training = False
    handcrafted = HandcraftedPolicy()
    # a simscore policy (respond: context -> act and text) for the comparison, and the summary
    # policy it is built on (choose: belief, mask -> action) for the simulated dialogues
    policies = {
        "maskableppo": (SB3Policy(model), SB3Policy(model, text=False)),
        "gpsarsa": (gpsarsa, gpsarsa),
        "handcrafted": (SummaryPolicyAdapter(handcrafted), handcrafted),
    }
    print(f"trained MaskablePPO ({args.steps} steps) and GP-SARSA ({args.dialogues} dialogues) "
          f"in {time.perf_counter() - start:.0f} s")

    performance = []
    for name, (_, summary_policy) in policies.items():
        result = run_dialogues(summary_policy, args.eval, seed=12345)
        performance.append({"policy": name, "success_rate": result.success_rate, "mean_turns": result.mean_turns,
                            "mean_iq": result.mean_iq})
    performance_table = pd.DataFrame(performance).set_index("policy")
    print(f"\nsimulated dialogues ({args.eval} each, the same users for every policy):")
    print(performance_table.round(3).to_string())

    contexts = generate_grid()
    responses = {name: run_policy(policy, contexts, name=name) for name, (policy, _) in policies.items()}
    responses["random"] = run_policy(SummaryPolicyAdapter(RandomPolicy(seed=0)), contexts, name="random")
    measures = resolve_measures(args.measures.split(","))  # built once: text models load once for all pairs
    pairs = [("maskableppo", "gpsarsa"), ("maskableppo", "handcrafted"), ("gpsarsa", "handcrafted"),
             ("maskableppo", "random")]
    rows = []
    scoring = time.perf_counter()
    for a, b in pairs:
        comparison = compare(responses[a], responses[b], measures)
        print(f"\n{a} vs {b} on C_gen ({len(contexts)} contexts):")
        print(comparison.format_summary())
        for measure, row in comparison.summary.iterrows():
            rows.append({"a": a, "b": b, "measure": measure, **row.to_dict()})
    table = pd.DataFrame(rows)
    table.to_csv(args.out / "comparisons.csv", index=False)
    performance_table.to_csv(args.out / "performance.csv")
    wide = table.pivot_table(index="measure", columns=["a", "b"], values="mean", sort=False)
    print("\nmeans (rows: measures; columns: compared pair):")
    print(wide.round(3).to_string())
    print(f"\nscoring {len(pairs)} pairs with {len(measures)} measures took {time.perf_counter() - scoring:.1f} s "
          f"(text models included); total {time.perf_counter() - start:.0f} s; tables in {args.out}")


if __name__ == "__main__":
    main()
