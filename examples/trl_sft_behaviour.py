"""Watch a language model's behaviour during TRL supervised fine-tuning, and stop when it settles.

A tiny randomly initialised GPT-2 (``examples/tiny_models.py``; its answers
are noise until it learns) is fine-tuned with TRL's ``SFTTrainer`` on a few system turns of the
restaurant domain. simscore's :class:`~simscore.integrations.hf.BehaviourCallback` answers a
fixed set of C_gen contexts with the model being trained every ``--check-freq`` steps (greedy,
batched, in evaluation mode), compares the answers with the previous check's (BLEU-4 with a
bootstrap interval), with a seeded random policy (the chance level) and with the model as
training began (the reference), logs ``behaviour/...`` through the trainer (``log_history``;
TensorBoard or W&B with ``report_to``) and stops training after ``--patience`` stable checks.

The script prints every behaviour entry of the trainer's ``log_history``, where and why
training stopped, and the cost of a check against a training step, and writes the behaviour
curve (``simscore.plots.plot_behaviour``, written atomically) to ``--plot`` (default: a temporary
folder).

    python examples/trl_sft_behaviour.py                      # about 10 s on 2 cores
    python examples/trl_sft_behaviour.py --plot behaviour.png --max-steps 200

Needs the ``text`` and ``trl`` extras: ``pip install "simscore-dialogue[text,trl]"``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import torch
from datasets import Dataset
from tiny_models import write_tiny_model  # examples/tiny_models.py: a tiny random model
from transformers import AutoModelForCausalLM, AutoTokenizer
from trl import SFTConfig, SFTTrainer

from contexts import generate_grid
from simscore.integrations.hf import BehaviourCallback
from simscore.plots import plot_behaviour

TURNS = (
    "Hello , welcome to the Cambridge restaurant system . How may I help you ?",
    "What kind of food would you like ?",
    "Which part of town do you have in mind ?",
)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plot", type=Path, default=None, help="PNG of the behaviour curve (default: a temp folder)")
    parser.add_argument("--contexts", type=int, default=12, help="C_gen contexts answered at each check")
    parser.add_argument("--check-freq", type=int, default=2, help="optimizer steps between checks")
    parser.add_argument("--threshold", type=float, default=0.9, help="BLEU-4 vs the previous check counted stable")
    parser.add_argument("--patience", type=int, default=2, help="stable checks in a row before stopping")
    parser.add_argument("--max-steps", type=int, default=60, help="training steps at most")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)  # a tiny model on shared cores: one thread is fastest

    work = Path(tempfile.mkdtemp(prefix="simscore-trl-"))
    folder = write_tiny_model(work / "model", seed=args.seed)
    model = AutoModelForCausalLM.from_pretrained(folder)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    dataset = Dataset.from_dict({"text": [TURNS[i % len(TURNS)] for i in range(48)]})
    config = SFTConfig(output_dir=str(work / "run"), max_steps=args.max_steps, per_device_train_batch_size=4,
                       learning_rate=5e-3, logging_steps=10, report_to=[], save_strategy="no", use_cpu=True,
                       seed=args.seed, max_length=64, disable_tqdm=True)
    trainer = SFTTrainer(model=model, args=config, train_dataset=dataset, processing_class=tokenizer)
    grid = list(generate_grid())
    contexts = grid[:: max(1, len(grid) // args.contexts)][: args.contexts]
    # A dozen contexts certify little under the anytime-valid rule: the point rule on the mean here
    watch = BehaviourCallback(trainer, contexts, ("bleu4",), check_freq=args.check_freq, threshold=args.threshold,
                              patience=args.patience, rule="point", reference="initial", max_new_tokens=12)
    trainer.add_callback(watch)
    start = time.perf_counter()
    trainer.train()
    seconds = time.perf_counter() - start

    print(f"SFT of a tiny GPT-2 on {len(dataset)} turns; {len(contexts)} C_gen contexts answered every "
          f"{args.check_freq} steps")
    for entry in trainer.state.log_history:
        if "behaviour/bleu4" in entry:
            print(f"step {entry['step']:3d}: bleu4 {entry['behaviour/bleu4']:.3f} "
                  f"[{entry['behaviour/bleu4_ci_low']:.3f}, {entry['behaviour/bleu4_ci_high']:.3f}]  "
                  f"chance {entry['behaviour/bleu4_chance']:.3f}  vs initial {entry['behaviour/bleu4_reference']:.3f}  "
                  f"stable {int(entry['behaviour/stable_checks'])}")
    steps = int(trainer.state.global_step)
    if watch.stopped_at is not None:
        print(f"stopped at step {watch.stopped_at} of {args.max_steps}: BLEU-4 vs the previous check >= "
              f"{args.threshold} for {args.patience} checks in a row")
    else:
        print(f"not stopped: ran all {steps} steps")
    checks = watch.check_seconds()
    check_time = sum(checks.values())
    per_step = (seconds - check_time) / max(steps, 1)
    print(f"cost: {check_time / len(checks):.3f} s per check ({len(checks)} checks) vs {per_step:.3f} s per "
          f"training step ({steps} steps, {seconds:.1f} s in all)")
    target = args.plot if args.plot is not None else work / "behaviour.png"
    plot_behaviour(watch.history(), target, measures=["bleu4"], threshold=args.threshold, stopped_at=watch.stopped_at,
                   title="Tiny GPT-2, TRL SFT: answers vs the previous check", overwrite=True)
    print(f"behaviour curve: {target}")


if __name__ == "__main__":
    main()
