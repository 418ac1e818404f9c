"""Two "checkpoints" of a generative policy beside a GP-SARSA pair, scored with the text measures.

A local language model answers C_col (its contexts show the dialogue so far) and C_gen (its
contexts show a belief state as text) three ways: greedy with the default prompt (A), greedy
with a second, terser prompt (B), and sampled with seed 0 and the default prompt (C). A vs B
compares two prompts, A vs C two decoding settings. Beside them, a GP-SARSA policy after 1,000
and after 2,000 training dialogues (whose acts are worded by the template NLG). Each pair is
scored with the four text measures on both context sets; the table goes to stdout and to
OUT/comparisons.csv, every responses file to OUT/.

    python examples/generative_policies.py [--model DIR] [--out DIR] [--device cpu]

--model takes any local Hugging Face causal or encoder-decoder model folder (nothing is
downloaded). Without it the script writes a tiny *randomly initialised* GPT-2
(examples/tiny_models.py) and uses that: **its texts are noise**, so its numbers only show
that the pipeline runs; with a real model they compare the prompts and decodings. The same with
the command line, for C_gen (MODEL a model folder):

    simscore contexts gen --levels 0,0.5,1 --out C_gen.jsonl
    simscore respond hf:MODEL C_gen.jsonl --out lm-A.jsonl
    simscore respond hf:MODEL C_gen.jsonl --instruction "Reply to the user." --out lm-B.jsonl
    simscore respond hf:MODEL C_gen.jsonl --sample --seed 0 --out lm-C.jsonl
    simscore compare lm-A.jsonl lm-B.jsonl --measures text
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import pandas as pd
from tiny_models import write_tiny_model  # examples/tiny_models.py: a tiny random model

from contexts import GridSpec, generate_grid
from policies import (
    Decoding,
    GenerativePolicy,
    HandcraftedPolicy,
    PromptTemplate,
    RandomPolicy,
    TrainingConfig,
    load_checkpoint,
    simulated_contexts,
    train,
)
from simscore import compare, run_policy
from simscore.measures import TEXT_MEASURES
from simscore.stats import Bootstrap

TERSE = "Reply to the user."
NOISE = ("NOTE: no --model given, so the generative policy is a tiny RANDOMLY INITIALISED GPT-2: its texts are "
         "noise, and so are its scores. Pass --model DIR for a real model.")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", help="a local Hugging Face model folder (default: a tiny random GPT-2)")
    parser.add_argument("--out", help="output folder (default: a new temporary folder)")
    parser.add_argument("--device", default="cpu", help="cpu (default), cuda, ...")
    parser.add_argument("--max-new-tokens", type=int, default=24)
    parser.add_argument("--dialogues", type=int, default=10, help="simulated dialogues per policy for C_col")
    args = parser.parse_args()
    out = Path(args.out or tempfile.mkdtemp(prefix="generative-policies-"))
    out.mkdir(parents=True, exist_ok=True)

    model = args.model
    if model is None:
        model = write_tiny_model(out / "tiny-gpt2")
        print(NOISE)
    sets = {
        "C_col": simulated_contexts({"handcrafted": HandcraftedPolicy(), "random": RandomPolicy(seed=1)},
                                    args.dialogues, seed=0),
        "C_gen": generate_grid(GridSpec(levels=(0.0, 0.5, 1.0))),
    }
    print(", ".join(f"{name}: {len(contexts)} contexts" for name, contexts in sets.items()))

    common = {"device": args.device, "batch_size": 16}
    greedy = Decoding(max_new_tokens=args.max_new_tokens)
    policies = {
        "lm-A": GenerativePolicy(model, decoding=greedy, name="lm-A", **common),
        "lm-B": GenerativePolicy(model, template=PromptTemplate(instruction=TERSE), decoding=greedy, name="lm-B",
                                 **common),
        "lm-C": GenerativePolicy(model, decoding=Decoding(max_new_tokens=args.max_new_tokens, sample=True, seed=0),
                                 name="lm-C", **common),
    }
    run = out / "gpsarsa-ts-1"
    train(TrainingConfig(reward="ts", seed=1, dialogues=2000, every=1000, eval_dialogues=20), run, progress=False)
    policies["gp-1000"] = load_checkpoint(run, 1000)
    policies["gp-2000"] = load_checkpoint(run, 2000)

    pairs = [("lm-A", "lm-B", "two prompts"), ("lm-A", "lm-C", "greedy vs sampled"),
             ("gp-1000", "gp-2000", "GP-SARSA checkpoints")]
    rows = []
    for set_name, contexts in sets.items():
        responses = {}
        for name, policy in policies.items():
            started = time.perf_counter()
            responses[name] = run_policy(policy, contexts)
            seconds = time.perf_counter() - started
            responses[name].to_jsonl(out / f"{name}-{set_name}.jsonl", overwrite=True)
            if name.startswith("lm-"):
                print(f"{name} on {set_name}: {len(contexts) / seconds:,.0f} responses/s "
                      f"(e.g. {responses[name][contexts.ids[0]].text!r})")
        for a, b, what in pairs:
            comparison = compare(responses[a], responses[b], measures=TEXT_MEASURES, bootstrap=Bootstrap(n_resamples=200))
            rows.append({"contexts": set_name, "pair": f"{a} vs {b}", "what": what,
                         **{m: comparison.mean(m) for m in TEXT_MEASURES}})
    table = pd.DataFrame(rows)
    table.to_csv(out / "comparisons.csv", index=False)
    with pd.option_context("display.width", 140, "display.precision", 3):
        print(table.to_string(index=False))
    if args.model is None:
        print(NOISE)
    print(f"responses and comparisons.csv in {out}")


if __name__ == "__main__":
    main()
