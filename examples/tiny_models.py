"""Tiny randomly initialised language models, written to a folder, for the examples and tests.

``python examples/tiny_models.py FOLDER [--architecture gpt2|llama|t5|bart]`` writes one; the
other examples import :func:`write_tiny_model` from here.

:func:`write_tiny_model` saves a model folder that :class:`~policies.lm.generative.GenerativePolicy`
loads like any other (``config.json``, ``model.safetensors``, tokenizer files) without a
download: a word-level tokenizer over the restaurant domain's words and a two-layer GPT-2,
Llama, T5 or BART with random weights. **Its texts are noise**: it exists to run and test the
whole pipeline (prompts, batching, decoding, provenance, scoring) where no real model is at
hand. A real model is any folder written by ``save_pretrained``.

Examples
--------
>>> import tempfile
>>> from policies.lm.generative import GenerativePolicy
>>> folder = write_tiny_model(tempfile.mkdtemp(), architecture="t5")
>>> sorted(p.name for p in folder.iterdir())[:3]
['config.json', 'generation_config.json', 'model.safetensors']
>>> GenerativePolicy(folder).kind
'encoder-decoder'
"""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path
from typing import Any, Literal

from contexts.domain import AREAS, DISCOURSE_ACTS, FOODS, METHODS, PRICERANGES, REQUESTABLE
from policies.lm.prompts import DEFAULT_ACT_INSTRUCTION, DEFAULT_INSTRUCTION, PromptTemplate
from simscore.checks import check_choice, check_seed
from simscore.errors import MissingDependencyError

__all__ = ["write_tiny_model", "TINY_ARCHITECTURES"]

#: What :func:`write_tiny_model` builds: two causal and two encoder-decoder architectures.
TINY_ARCHITECTURES = ("gpt2", "llama", "t5", "bart")

_SPECIAL = ("<pad>", "<eos>", "<unk>")
_SENTENCES = (
    "Hello, welcome to the Cambridge restaurant system. How may I help you?",
    "What kind of food would you like? Which part of town do you have in mind?",
    "Would you like something in the cheap, moderate, or expensive price range?",
    "Did you say you are looking for a restaurant in the north of town?",
    "There is no restaurant serving that food. Is there anything else I can help you with?",
    "The phone number is 01223 and the address is on the road. Thank you, goodbye.",
    "I want thai food in the centre please. Any price range is fine. Okay, bye.",
)


def _vocabulary() -> list[str]:
    """The tokenizer's words: the default prompts, a few system sentences and the domain's values."""
    template = PromptTemplate()
    text = " ".join(
        (DEFAULT_INSTRUCTION, DEFAULT_ACT_INSTRUCTION, template.history_heading, template.belief_heading,
         template.user_label, template.system_label, "not mentioned nothing last offered", *_SENTENCES,
         *AREAS, *PRICERANGES, *FOODS, *METHODS, *DISCOURSE_ACTS, *REQUESTABLE, "discourse act requested",
         "0 1 2 3 4 5 6 7 8 9 .")
    )
    # the same split as the tokenizer's Whitespace pre-tokenizer: runs of word characters, runs of others
    return sorted(set(re.findall(r"\w+|[^\w\s]+", text.lower())) | set(re.findall(r"\w+|[^\w\s]+", text)))


def write_tiny_model(
    folder: str | os.PathLike[str],
    *,
    architecture: Literal["gpt2", "llama", "t5", "bart"] = "gpt2",
    seed: int = 0,
    chat_template: str | None = None,
) -> Path:
    """Write a tiny randomly initialised model and its tokenizer to ``folder``; returns the folder.

    Parameters
    ----------
    folder : path-like
        Created if missing; files of the same names are replaced.
    architecture : {"gpt2", "llama", "t5", "bart"}
        GPT-2 and Llama are causal models, T5 and BART encoder-decoders; all with two layers
        of width 32.
    seed : int
        Seeds the random weights (the same seed writes the same weights).
    chat_template : str, optional
        A Jinja chat template for the tokenizer (default none: prompts are plain text).

    Returns
    -------
    pathlib.Path

    Notes
    -----
    The tokenizer is word-level (token ids: ``<pad>`` 0, ``<eos>`` 1, ``<unk>`` 2, then the
    words in sorted order); it joins decoded tokens with spaces. The weights are drawn with
    torch's global generator seeded inside :func:`~policies.seeding.reseeded`, which restores
    every global generator's state afterwards.
    """
    try:
        import transformers
        from tokenizers import Tokenizer, models, pre_tokenizers
    except ImportError as exc:
        raise MissingDependencyError(
            "write_tiny_model needs torch, transformers and tokenizers, the text extra: "
            "pip install 'simscore-dialogue[text]'"
        ) from exc
    from policies.lm.generative import quiet_transformers
    from policies.seeding import reseeded

    check_choice("architecture", architecture, TINY_ARCHITECTURES)
    check_seed("seed", seed)
    words = [*_SPECIAL, *_vocabulary()]
    tokenizer = Tokenizer(models.WordLevel({word: i for i, word in enumerate(words)}, unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>"
    )
    if chat_template is not None:
        fast.chat_template = chat_template
    ids: dict[str, Any] = {"pad_token_id": 0, "eos_token_id": 1, "bos_token_id": 1}
    width: dict[str, Any] = {"vocab_size": len(words)}
    start: dict[str, Any] = {"decoder_start_token_id": 0}
    config: Any
    model_class: Any
    if architecture == "gpt2":
        config = transformers.GPT2Config(**width, **ids, n_positions=1024, n_embd=32, n_layer=2, n_head=2)
        model_class = transformers.GPT2LMHeadModel
    elif architecture == "llama":
        config = transformers.LlamaConfig(
            **width, **ids, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
            num_key_value_heads=2, max_position_embeddings=1024,
        )
        model_class = transformers.LlamaForCausalLM
    elif architecture == "t5":
        config = transformers.T5Config(
            **width, **ids, d_model=32, d_ff=64, d_kv=16, num_layers=2, num_heads=2,
            **start,  # T5 starts decoding from its pad token (an extra, not a named argument)
        )
        model_class = transformers.T5ForConditionalGeneration
    else:
        config = transformers.BartConfig(
            **width, **ids, d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=2,
            decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=1024,
            decoder_start_token_id=1, forced_eos_token_id=None,
        )
        model_class = transformers.BartForConditionalGeneration
    with reseeded(seed):
        model = model_class(config)
    target = Path(folder)
    target.mkdir(parents=True, exist_ok=True)
    with quiet_transformers():
        model.save_pretrained(target)
    fast.save_pretrained(target)
    return target


def main(argv: list[str] | None = None) -> int:
    """Write a tiny model into the folder named on the command line and print the folder."""
    parser = argparse.ArgumentParser(description="Write a tiny random language model folder (its texts are noise).")
    parser.add_argument("folder", help="where to write it: a new or empty folder")
    parser.add_argument("--architecture", choices=TINY_ARCHITECTURES, default="gpt2")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    folder = Path(args.folder)
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        parser.error(f"{folder} exists and is not an empty folder; name a new one")
    print(write_tiny_model(args.folder, architecture=args.architecture, seed=args.seed))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
