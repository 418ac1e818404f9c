"""Where and why do two policies differ, and can they be told apart at all?

Reads two policies' responses and the contexts they answered, compares them with the action
measures, and prints: disagreement per group of contexts (turn, user method, discourse act,
slots known), a depth-3 decision tree predicting from the belief where the policies
disagree (with the majority baseline and permutation importances), and a classifier
two-sample test (can a model tell A's response from B's given the context?).

    python examples/why_they_differ.py [responses_a.jsonl responses_b.jsonl contexts.jsonl] [--seed 0]
    python examples/why_they_differ.py --permutations 20    # a quick run (the test command's)

Defaults: the hand-written example files next to this script (a TS-trained and an
IQ-trained policy on 24 collected contexts). The example set is tiny, so the probe and the
test have little data; on C_gen or a larger C_col the numbers mean more. Seeded (``--seed``,
default 0: the bootstrap, the probe's split and the test's permutations); about 25 s on the project's 2-core
machine, most of it importing scikit-learn and the test's 200 permutations.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from contexts import ContextSet
from contexts.domain import default_domain
from contexts.features import context_features, context_groups
from simscore import Responses, compare
from simscore.analysis.disagreement import disagreement_by, disagreement_probe, disagrees, two_sample_test
from simscore.stats import Bootstrap

HERE = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="*", help="responses_a.jsonl responses_b.jsonl contexts.jsonl")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--permutations", type=int, default=200)
    args = parser.parse_args()
    if args.files and len(args.files) != 3:
        parser.error("give all three files or none")
    paths = args.files or [HERE / "responses_a.jsonl", HERE / "responses_b.jsonl", HERE / "contexts.jsonl"]
    a, b = Responses.read_jsonl(paths[0]), Responses.read_jsonl(paths[1])
    contexts = ContextSet.read_jsonl(paths[2], ontology=default_domain().ontology)

    comparison = compare(a, b, metadata=contexts, bootstrap=Bootstrap(seed=args.seed))
    print(f"{a.policy} vs {b.policy} on {len(contexts)} contexts of {contexts.name}\n")
    print(comparison.format_summary(), "\n")

    features, groups = context_features(contexts), context_groups(contexts)
    groups = groups.drop(columns=["grid_cell", "source"])  # one value each for collected contexts
    with pd.option_context("display.width", 120, "display.max_rows", 100, "display.precision", 3):
        for measure in ("tmr", "dmr"):
            print(f"Disagreement by group ({measure}: 1 - score)")
            print(disagreement_by(comparison.scores, groups, measure).to_string(index=False), "\n")

        label = disagrees(comparison.scores["tmr"])
        probe = disagreement_probe(features, label, seed=args.seed)
        print(f"Where do they disagree? depth-{probe.model.get_depth()} tree on the belief features")
        print(f"  disagreement rate {probe.disagreement_rate:.3f}; held-out accuracy {probe.accuracy:.3f} "
              f"vs majority baseline {probe.baseline:.3f} ({probe.n_train} train / {probe.n_test} test contexts)")
        print("  permutation importances (held out):")
        print(probe.importances.head(6).to_string(), "\n")
        print(probe.rules)

        test = two_sample_test(features, a, b, seed=args.seed, n_permutations=args.permutations, n_splits=4)
        print(f"Two-sample test: can a classifier tell {a.policy} from {b.policy} given the context?")
        print(f"  cross-validated accuracy {test.accuracy:.3f} (chance 0.5), permutation p = {test.p_value:.4f} "
              f"({args.permutations} permutations, {test.n_splits} folds grouped by context)")
        print("  most distinguishing contexts:")
        print(test.contexts.head(8).to_string())


if __name__ == "__main__":
    main()
