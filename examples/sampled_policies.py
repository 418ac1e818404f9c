"""Do two sampled policies differ more than each differs from itself? Self-consistency as the ceiling.

Two examples on the 24 collected example contexts (``examples/contexts.jsonl``), K samples per
context each, reproducible from the seeds (:func:`simscore.samples.run_samples`: sample k drawn
with ``sample_seed(seed, k)``, as ``simscore respond --samples K --seed S`` does):

(a) a tiny randomly initialised GPT-2 (built here, nothing downloaded: its texts are noise)
    decoded greedily (deterministic: its K samples are copies) and sampled at temperatures 0.7
    (seed 1) and 1.5 (seed 2: each sampled policy with a seed of its own), compared on BLEU-4
    in pairs;
(b) the seeded random policy with seeds 1 and 2 (the same policy: the test should find no
    difference), on the four action measures.

For each pair: within A, within B (each policy's mean agreement with its own samples), between
(the mean over cross pairs), normalised = between / mean(within A, within B) with its interval
(resampling the example's dialogues), the gap and the one-sided permutation test's p-value.

    python examples/sampled_policies.py [--samples 5] [--permutations 2000] [--seed 0]

About 10 s on the project's 2-core machine (building and running the tiny model on one thread).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import torch
from tiny_models import write_tiny_model  # examples/tiny_models.py: a tiny random model

from contexts import ContextSet
from policies import Decoding, GenerativePolicy, RandomPolicy, SummaryPolicyAdapter
from simscore import compare, run_policy
from simscore.samples import SampledResponses, run_samples
from simscore.stats import Bootstrap

HERE = Path(__file__).resolve().parent


def report(a: SampledResponses, b: SampledResponses, measures: str | list[str], contexts: ContextSet,
           args: argparse.Namespace) -> None:
    comparison = compare(a, b, measures, metadata=contexts, clusters="dialogue_id", n_permutations=args.permutations,
                         bootstrap=Bootstrap(seed=args.seed), progress=False)
    assert comparison.consistency is not None
    table = comparison.consistency.table
    print(f"{a.policy} vs {b.policy}")
    for measure, row in table.iterrows():
        print(f"  {measure:<6} within A {row['within_a']:.4f}  within B {row['within_b']:.4f}  "
              f"between {row['between']:.4f}  normalised {row['normalised']:.4f} "
              f"[{row['normalised_low']:.4f}, {row['normalised_high']:.4f}]  gap {row['gap']:+.4f}  "
              f"p = {row['p_value']:.4g}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=5, help="K, samples per context (default 5)")
    parser.add_argument("--permutations", type=int, default=2000, help="relabellings of the test (default 2000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the intervals and the test (default 0)")
    args = parser.parse_args()
    torch.set_num_threads(1)  # a tiny model: more threads wait on each other (GenerativePolicy's Notes)
    contexts = ContextSet.read_jsonl(HERE / "contexts.jsonl")
    k = args.samples
    print(f"{len(contexts)} contexts of {contexts.name}, {k} samples each, {args.permutations} permutations; "
          "intervals resample its dialogues\n")

    with tempfile.TemporaryDirectory() as folder:
        model = write_tiny_model(Path(folder) / "tiny-gpt2")
        greedy = GenerativePolicy(model, decoding=Decoding(max_new_tokens=8), name="greedy")
        once = run_policy(greedy, contexts)
        policies = {"greedy": SampledResponses.from_samples([once] * k)}  # deterministic: K copies of one answer
        # each sampled policy with a seed of its own: with one seed their k-th samples would share their noise
        for seed, temperature in ((1, 0.7), (2, 1.5)):
            sampled = GenerativePolicy(model, decoding=Decoding(max_new_tokens=8, sample=True, temperature=temperature))
            policies[f"T={temperature}"] = run_samples(sampled.with_seed, contexts, samples=k, seed=seed,
                                                       name=f"sampled T={temperature}")
    print("(a) a tiny GPT-2, greedy and sampled (bleu4)")
    for a, b in (("greedy", "T=0.7"), ("greedy", "T=1.5"), ("T=0.7", "T=1.5")):
        report(policies[a], policies[b], ["bleu4"], contexts, args)

    print("\n(b) the random policy, seeds 1 and 2 (action measures)")
    random_samples = [
        run_samples(lambda s: SummaryPolicyAdapter(RandomPolicy(seed=s)), contexts, samples=k, seed=seed,
                    name=f"random seed {seed}")
        for seed in (1, 2)
    ]
    report(random_samples[0], random_samples[1], "action", contexts, args)


if __name__ == "__main__":
    main()
